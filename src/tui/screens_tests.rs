//! Whole-screen snapshots: the state is driven through the reducer, then drawn into a
//! `TestBackend` at a fixed time. Snapshots live in `src/tui/snapshots/`.

use std::time::{Duration, Instant};

use crossterm::event::KeyCode;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;

use crate::engine::context::Thresholds;
use crate::engine::protocol::{
    Event, ExitReason, HandoffId, HandoffPhase, Origin, TurnId, TurnKind,
};
use crate::engine::types::Usage;

use super::msg::Msg;
use super::render::theme::Theme;
use super::state::AppState;
use super::test_support::{ev, frozen, key, state, type_text};
use super::update::update;
use super::view::{ViewCache, view};

pub(super) fn draw(s: &AppState, w: u16, h: u16, now: Instant) -> Terminal<TestBackend> {
    draw_with(s, &mut ViewCache::new(), w, h, now)
}

pub(super) fn draw_with(
    s: &AppState,
    cache: &mut ViewCache,
    w: u16,
    h: u16,
    now: Instant,
) -> Terminal<TestBackend> {
    let theme = Theme::builtin("dark").expect("built-in theme");
    let mut t = Terminal::new(TestBackend::new(w, h)).expect("test terminal");
    t.draw(|f| view(f, s, cache, &theme, now)).expect("draw");
    t
}

/// A short session: a question, a tool call with output, an answer, usage near the warn line.
pub(super) fn session(s: &mut AppState, t0: Instant) {
    update(
        s,
        ev(Event::SessionStarted {
            session_id: "s1".into(),
            parent_session: None,
            generation: 1,
            model: "claude-haiku-4-5".into(),
            provider: "anthropic".into(),
            thresholds: Thresholds::new(200_000, 50_000),
            demo: false,
        }),
        t0,
    );
    // Typed a while ago: the user is not typing when a handoff opens.
    let typed = t0 - Duration::from_secs(10);
    type_text(s, "Why does the macOS build fail?", typed);
    update(s, key(KeyCode::Enter), typed);
    update(
        s,
        ev(Event::ToolCall {
            turn: None,
            id: "t1".into(),
            name: "bash".into(),
            input: json!({"command": "make"}),
            summary: "bash: make".into(),
            changes_files: true,
        }),
        t0,
    );
    update(
        s,
        ev(Event::ToolResult {
            turn: None,
            id: "t1".into(),
            name: "bash".into(),
            output: "cc -c main.c\nmain.c:3: error: expected expression".into(),
            is_error: true,
            spilled: None,
            diff: None,
            exit: None,
            sandbox: None,
        }),
        t0,
    );
    update(
        s,
        ev(Event::TextDelta {
            turn: None,
            text: "The `sigemptyset` macro expands into a syntax error on macOS.".into(),
        }),
        t0,
    );
    update(
        s,
        ev(Event::AssistantDone {
            turn: None,
            text: String::new(),
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
    update(
        s,
        ev(Event::Usage {
            turn: None,
            context: 131_200,
            thresholds: Thresholds::new(200_000, 50_000),
            estimated: false,
            usage: Usage::default(),
            cost_usd: 0.12,
            session_cost_usd: 0.12,
            masked_tokens: 0,
        }),
        t0,
    );
}

#[test]
fn editor_with_countdown_beside_the_chat() {
    let t0 = Instant::now();
    let mut s = state();
    session(&mut s, t0);
    update(&mut s, frozen("/w/.flower/notes/handoff-demo.md"), t0);
    let now = t0 + Duration::from_millis(3_200);
    update(&mut s, Msg::Tick, now);
    insta::assert_snapshot!(draw(&s, 120, 24, now).backend());
}

#[test]
fn editor_below_the_chat_when_narrow_and_paused() {
    let t0 = Instant::now();
    let mut s = state();
    session(&mut s, t0);
    update(&mut s, frozen("/w/.flower/notes/handoff-demo.md"), t0);
    let now = t0 + Duration::from_secs(4);
    // The cursor starts at the end of the first section's text.
    update(&mut s, key(KeyCode::End), now);
    type_text(&mut s, " Carefully.", now);
    insta::assert_snapshot!(draw(&s, 80, 28, now).backend());
}

#[test]
fn approval_prompt() {
    let t0 = Instant::now();
    let mut s = state();
    session(&mut s, t0);
    update(
        &mut s,
        ev(Event::ApprovalRequest {
            id: "t2".into(),
            name: "bash".into(),
            summary: "bash: rm -rf build && make CFLAGS=-D_DARWIN_C_SOURCE".into(),
            outside_workspace: false,
            command: None,
            diff: None,
            always: None,
            unsandboxed: None,
        }),
        t0,
    );
    // Above the input, which keeps the focus; its keys answer from 400 ms on.
    insta::assert_snapshot!(draw(&s, 80, 20, t0 + Duration::from_millis(500)).backend());
}

#[test]
fn spinner_line_while_a_handoff_is_written() {
    let t0 = Instant::now();
    let mut s = state();
    session(&mut s, t0);
    update(
        &mut s,
        ev(Event::Handoff(HandoffPhase::Writing {
            handoff: HandoffId(1),
            manual: true,
            focus: None,
            background: false,
        })),
        t0,
    );
    insta::assert_snapshot!(draw(&s, 80, 16, t0 + Duration::from_secs(7)).backend());
}

#[test]
fn slash_popup_while_typing_a_command() {
    let t0 = Instant::now();
    let mut s = state();
    type_text(&mut s, "/h", t0);
    insta::assert_snapshot!(draw(&s, 80, 14, t0).backend());
}

#[test]
fn banner_at_start_and_a_20x5_terminal() {
    let t0 = Instant::now();
    let mut s = state();
    s.chat
        .notice("Demo model: set ANTHROPIC_API_KEY or OPENAI_API_KEY for a real one");
    insta::assert_snapshot!("start_80x10", draw(&s, 80, 10, t0).backend());
    session(&mut s, t0);
    insta::assert_snapshot!("tiny_20x5", draw(&s, 20, 5, t0).backend());
}

#[test]
fn tiny_terminals_do_not_panic() {
    let t0 = Instant::now();
    let mut s = state();
    session(&mut s, t0);
    update(&mut s, frozen("/w/.flower/notes/handoff-demo.md"), t0);
    update(
        &mut s,
        ev(Event::Handoff(HandoffPhase::Writing {
            handoff: HandoffId(1),
            manual: false,
            focus: None,
            background: false,
        })),
        t0,
    );
    for (w, h) in [
        (1, 1),
        (2, 1),
        (1, 3),
        (9, 2),
        (10, 3),
        (12, 4),
        (200, 3),
        (3, 200),
    ] {
        draw(&s, w, h, t0);
    }
    let t = draw(&s, 1, 1, t0);
    insta::assert_snapshot!("one_by_one", t.backend());
}

#[test]
fn input_grows_and_the_conflict_prompt_shows() {
    let t0 = Instant::now();
    let mut s = state();
    update(&mut s, frozen("/w/.flower/notes/handoff-demo.md"), t0);
    update(&mut s, key(KeyCode::Esc), t0);
    update(&mut s, super::test_support::ctrl('o'), t0);
    type_text(&mut s, "mine", t0);
    update(
        &mut s,
        Msg::FileChanged {
            path: "/w/.flower/notes/handoff-demo.md".into(),
            content: Ok("# Changed elsewhere\n".into()),
        },
        t0,
    );
    update(&mut s, super::test_support::ctrl('o'), t0);
    for line in ["first line", "second line", "third line"] {
        type_text(&mut s, line, t0);
        update(
            &mut s,
            Msg::Key(crossterm::event::KeyEvent::new(
                KeyCode::Enter,
                crossterm::event::KeyModifiers::ALT,
            )),
            t0,
        );
    }
    insta::assert_snapshot!(draw(&s, 70, 24, t0).backend());
}

#[test]
fn the_review_state_shows_at_common_widths() {
    let t0 = Instant::now();
    let mut s = state();
    session(&mut s, t0);
    update(&mut s, frozen("/w/.flower/notes/handoff-demo.md"), t0);
    let now = t0 + Duration::from_millis(3_200);
    update(&mut s, Msg::Tick, now);
    let screen = |t: &Terminal<TestBackend>| format!("{}", t.backend());
    for (w, h) in [(80, 24), (100, 24), (120, 24)] {
        let t = draw(&s, w, h, now);
        assert!(
            screen(&t).contains("successor in 12s"),
            "{w} columns:\n{}",
            screen(&t)
        );
        if w != 120 {
            // 120 is `editor_with_countdown_beside_the_chat`.
            insta::assert_snapshot!(format!("editor_countdown_{w}x{h}"), t.backend());
        }
    }
    update(&mut s, key(KeyCode::Char('x')), now);
    let t = draw(&s, 100, 24, now);
    assert!(screen(&t).contains("paused"), "{}", screen(&t));
    insta::assert_snapshot!("editor_paused_100x24", t.backend());
}

#[test]
fn the_mouse_focuses_and_scrolls_the_pane_under_it() {
    use super::msg::{ChatScroll, Effect, Pane};
    use super::state::Focus;
    use crossterm::event::{KeyModifiers, MouseButton, MouseEvent, MouseEventKind};

    let t0 = Instant::now();
    let mut s = state();
    session(&mut s, t0);
    update(&mut s, frozen("/w/.flower/notes/handoff-demo.md"), t0);
    let mut cache = ViewCache::new();
    draw_with(&s, &mut cache, 120, 24, t0);
    let mouse = |cache: &ViewCache, kind, column, row| Msg::Mouse {
        event: MouseEvent {
            kind,
            column,
            row,
            modifiers: KeyModifiers::NONE,
        },
        pane: cache.pane_at(column, row),
        cell: cache.cell_at(column, row),
    };
    let (input, editor, chat) = (
        cache.layout.input,
        cache.layout.editor.expect("the editor is open"),
        cache.layout.chat,
    );
    assert_eq!(
        cache.pane_at(editor.x + 1, editor.y + 1),
        Some(Pane::Editor)
    );
    assert_eq!(cache.pane_at(chat.x + 1, chat.y + 1), Some(Pane::Chat));
    let click = MouseEventKind::Down(MouseButton::Left);

    assert_eq!(s.focus, Focus::Editor);
    update(&mut s, mouse(&cache, click, input.x + 2, input.y + 1), t0);
    assert_eq!(s.focus, Focus::Input, "a click in the input focuses it");
    update(&mut s, mouse(&cache, click, editor.x + 2, editor.y + 2), t0);
    assert_eq!(s.focus, Focus::Editor, "a click in the editor focuses it");
    let fx = update(&mut s, mouse(&cache, click, chat.x + 1, chat.y + 1), t0);
    assert!(fx.is_empty(), "a click in the chat changes nothing");
    assert_eq!(s.focus, Focus::Editor);

    // The wheel over the chat scrolls the chat view; over the editor, the editor.
    let fx = update(
        &mut s,
        mouse(&cache, MouseEventKind::ScrollUp, chat.x + 1, chat.y + 1),
        t0,
    );
    assert!(
        fx.contains(&Effect::ScrollChat(ChatScroll::Up(3))),
        "{fx:?}"
    );
    let fx = update(
        &mut s,
        mouse(
            &cache,
            MouseEventKind::ScrollDown,
            editor.x + 2,
            editor.y + 2,
        ),
        t0,
    );
    assert!(
        !fx.iter().any(|e| matches!(e, Effect::ScrollChat(_))),
        "{fx:?}"
    );
    // PageUp is a page of the chat pane as last drawn.
    let fx = update(&mut s, key(KeyCode::PageUp), t0);
    assert!(fx.contains(&Effect::ScrollChat(ChatScroll::PageUp)));
    cache.scroll_chat(ChatScroll::PageUp);
    assert!(!cache.chat.following());
}
