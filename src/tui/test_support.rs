//! What the TUI's unit tests share: a state built as the app builds it, messages for keys and
//! engine events, the ops among effects, a session with one exchange, a frozen handoff.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::engine::context::{Thresholds, WindowSource};
use crate::engine::protocol::{
    Event, ExitReason, HandoffId, HandoffPhase, Op, Origin, TurnId, TurnKind,
};

use super::msg::{Effect, Msg};
use super::render::cell::Cell;
use super::render::editor_view::TextAreaStyles;
use super::render::theme::Theme;
use super::state::{AppState, Settings, StateParams};
use super::status_line::Labels;
use super::update::update;

pub(super) fn state_with(review: Option<u64>) -> AppState {
    AppState::new(params(review))
}

/// What [`state_with`] builds its state from.
pub(super) fn params(review: Option<u64>) -> StateParams {
    StateParams {
        labels: Labels {
            model: "claude-haiku-4-5".into(),
            provider: "anthropic".into(),
            demo: false,
            window_source: crate::engine::provider::known_windows::family("claude-haiku-4-5")
                .map_or(WindowSource::ModelName, WindowSource::ModelTable),
            effort: None,
        },
        settings: Settings {
            review: review.map(Duration::from_secs),
            editor_cmd: Some("vi".into()),
            notify: true,
            history_file: None,
            extensions: Default::default(),
            config_report: "model: claude-haiku-4-5".into(),
            mouse_capture: false,
        },
        thresholds: Thresholds::new(200_000, 50_000),
        banner: None,
        styles: TextAreaStyles::from_theme(&Theme::builtin("dark").expect("built-in theme")),
        history: Vec::new(),
        run_id: Some("run-now".into()),
    }
}

pub(super) fn state() -> AppState {
    state_with(Some(15))
}

pub(super) fn key(code: KeyCode) -> Msg {
    Msg::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

pub(super) fn ctrl(c: char) -> Msg {
    Msg::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL))
}

pub(super) fn ev(e: Event) -> Msg {
    Msg::Engine(e)
}

pub(super) fn ops(fx: &[Effect]) -> Vec<Op> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::SendOp(op) => Some(op.clone()),
            _ => None,
        })
        .collect()
}

/// The engine ends turn `n` (completed).
pub(super) fn end_turn(s: &mut AppState, n: u64, now: Instant) -> Vec<Effect> {
    update(
        s,
        ev(Event::TurnEnd {
            turn: TurnId(n),
            kind: TurnKind::Message,
            origin: Origin::User,
            reason: ExitReason::Completed,
        }),
        now,
    )
}

pub(super) fn type_text(s: &mut AppState, text: &str, now: Instant) {
    for c in text.chars() {
        update(s, key(KeyCode::Char(c)), now);
    }
}

pub(super) fn last_cell(s: &AppState) -> Cell {
    let cells = s.chat.cells();
    cells.get(cells.len() - 1).cloned().expect("a cell")
}

pub(super) const DOC: &str =
    "# Handoff · step demo · generation 1\n## Doing\nFixing the parser.\n## Next\nRun the tests.\n";

pub(super) fn frozen(path: &str) -> Msg {
    ev(Event::Handoff(HandoffPhase::Frozen {
        handoff: HandoffId(1),
        awaits_review: true,
        path: Some(PathBuf::from(path)),
        degraded: false,
        degraded_reason: None,
        markdown: DOC.into(),
        background: false,
    }))
}

/// A session with one exchange, so `/handoff` is allowed. The events come in the engine's order:
/// the first message opens the session, then the echo, then the reply.
pub(super) fn with_exchange(s: &mut AppState, t0: Instant) {
    type_text(s, "fix it", t0);
    update(s, key(KeyCode::Enter), t0);
    update(
        s,
        ev(Event::SessionStarted {
            session_id: "s1".into(),
            parent_session: None,
            generation: 1,
            model: "m".into(),
            provider: "anthropic".into(),
            thresholds: Thresholds::new(200_000, 50_000),
            demo: false,
        }),
        t0,
    );
    update(
        s,
        ev(Event::UserMessage {
            turn: Some(TurnId(1)),
            origin: Origin::User,
            text: "fix it".into(),
        }),
        t0,
    );
    update(
        s,
        ev(Event::AssistantDone {
            turn: None,
            text: "done".into(),
            interrupted: false,
        }),
        t0,
    );
    update(
        s,
        ev(Event::TurnEnd {
            turn: TurnId(1),
            kind: TurnKind::Message,
            origin: Origin::User,
            reason: ExitReason::Completed,
        }),
        t0,
    );
}
