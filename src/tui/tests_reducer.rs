//! Reducer tests: messages in, state and effects out, time passed in.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseEvent, MouseEventKind};
use serde_json::json;

use crate::engine::context::Thresholds;
use crate::engine::protocol::{Approval, Event, ExitReason, HandoffPhase, Op};
use crate::engine::types::Usage;

use super::editor::{Prompt, Review};
use super::render::cell::Cell;
use super::render::gauge::GaugeMode;
use super::state::{AppState, Focus, Labels, Running, Settings, StateParams};
use super::update::{Effect, Msg, cost_report, next_frame_in, popup_items, update};

pub(super) fn state_with(review: Option<u64>) -> AppState {
    AppState::new(StateParams {
        labels: Labels {
            model: "claude-haiku-4-5".into(),
            provider: "anthropic".into(),
            demo: false,
        },
        settings: Settings {
            review: review.map(Duration::from_secs),
            editor_cmd: Some("vi".into()),
        },
        thresholds: Thresholds::new(200_000, 50_000),
        banner: None,
    })
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

fn ops(fx: &[Effect]) -> Vec<Op> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::SendOp(op) => Some(op.clone()),
            _ => None,
        })
        .collect()
}

pub(super) fn type_text(s: &mut AppState, text: &str, now: Instant) {
    for c in text.chars() {
        update(s, key(KeyCode::Char(c)), now);
    }
}

fn last_cell(s: &AppState) -> Cell {
    s.chat.get(s.chat.len() - 1).cloned().expect("a cell")
}

pub(super) const DOC: &str =
    "# Handoff · step demo · generation 1\n## Doing\nFixing the parser.\n## Next\nRun the tests.\n";

pub(super) fn frozen(path: &str) -> Msg {
    ev(Event::Handoff(HandoffPhase::Frozen {
        path: Some(PathBuf::from(path)),
        degraded: false,
        markdown: DOC.into(),
    }))
}

/// A session with one exchange, so `/handoff` is allowed.
fn with_exchange(s: &mut AppState, t0: Instant) {
    type_text(s, "fix it", t0);
    update(s, key(KeyCode::Enter), t0);
    update(
        s,
        ev(Event::AssistantDone {
            text: "done".into(),
            interrupted: false,
        }),
        t0,
    );
    update(
        s,
        ev(Event::TurnEnd {
            reason: ExitReason::Completed,
        }),
        t0,
    );
}

#[test]
fn idle_streaming_idle() {
    let t0 = Instant::now();
    let mut s = state();
    type_text(&mut s, "hello", t0);
    let fx = update(&mut s, key(KeyCode::Enter), t0);
    assert_eq!(
        ops(&fx),
        [Op::UserTurn {
            text: "hello".into()
        }]
    );
    assert_eq!(s.running, Running::Streaming { since: t0 });
    assert!(s.input.is_empty());
    // The engine's echo of our own message does not duplicate the cell.
    update(
        &mut s,
        ev(Event::UserMessage {
            text: "hello".into(),
        }),
        t0,
    );
    update(&mut s, ev(Event::TextDelta { text: "Hi ".into() }), t0);
    update(
        &mut s,
        ev(Event::TextDelta {
            text: "there".into(),
        }),
        t0,
    );
    assert_eq!(
        last_cell(&s),
        Cell::Assistant {
            markdown: "Hi there".into(),
            streaming: true,
            interrupted: false
        }
    );
    update(
        &mut s,
        ev(Event::AssistantDone {
            text: "Hi there".into(),
            interrupted: false,
        }),
        t0,
    );
    update(
        &mut s,
        ev(Event::TurnEnd {
            reason: ExitReason::Completed,
        }),
        t0,
    );
    assert_eq!(s.running, Running::Idle);
    let cells: Vec<_> = s.chat.iter().cloned().collect();
    assert_eq!(
        cells,
        [
            Cell::User {
                text: "hello".into()
            },
            Cell::Assistant {
                markdown: "Hi there".into(),
                streaming: false,
                interrupted: false
            },
        ]
    );
    assert_eq!(s.session_messages, 2);
}

#[test]
fn esc_aborts_only_what_runs() {
    let t0 = Instant::now();
    let mut s = state();
    assert!(
        ops(&update(&mut s, key(KeyCode::Esc), t0)).is_empty(),
        "idle: nothing to abort"
    );
    type_text(&mut s, "go", t0);
    update(&mut s, key(KeyCode::Enter), t0);
    assert_eq!(ops(&update(&mut s, key(KeyCode::Esc), t0)), [Op::Abort]);
    update(
        &mut s,
        ev(Event::TextDelta {
            text: "partial".into(),
        }),
        t0,
    );
    update(
        &mut s,
        ev(Event::AssistantDone {
            text: "partial".into(),
            interrupted: true,
        }),
        t0,
    );
    update(
        &mut s,
        ev(Event::TurnEnd {
            reason: ExitReason::Interrupted,
        }),
        t0,
    );
    assert_eq!(s.running, Running::Idle);
    assert_eq!(
        last_cell(&s),
        Cell::Assistant {
            markdown: "partial".into(),
            streaming: false,
            interrupted: true
        },
        "the partial text is kept, marked interrupted, with no extra notice"
    );
}

#[test]
fn esc_while_writing_a_handoff_cancels_it() {
    let t0 = Instant::now();
    let mut s = state();
    update(
        &mut s,
        ev(Event::Handoff(HandoffPhase::Writing {
            manual: true,
            focus: None,
        })),
        t0,
    );
    assert_eq!(
        s.running,
        Running::WritingHandoff {
            since: t0,
            manual: true
        }
    );
    assert_eq!(s.gauge.mode, GaugeMode::Writing);
    let (label, _, hint) = s.spinner().expect("spinner shows");
    assert_eq!(
        (label.as_str(), hint),
        ("writing handoff…", "esc to cancel")
    );
    // The writing turn's text goes to the document, not the chat.
    let before = s.chat.len();
    update(
        &mut s,
        ev(Event::TextDelta {
            text: "## Doing".into(),
        }),
        t0,
    );
    assert_eq!(s.chat.len(), before);
    assert_eq!(ops(&update(&mut s, key(KeyCode::Esc), t0)), [Op::Abort]);
    update(&mut s, ev(Event::Handoff(HandoffPhase::Cancelled)), t0);
    assert_eq!(s.running, Running::Idle);
    assert_eq!(s.gauge.mode, GaugeMode::Normal);
    assert_eq!(
        last_cell(&s),
        Cell::Notice {
            message: "Handoff cancelled".into()
        }
    );
    update(
        &mut s,
        ev(Event::Handoff(HandoffPhase::Failed {
            message: "no text".into(),
        })),
        t0,
    );
    assert_eq!(
        last_cell(&s),
        Cell::Error {
            message: "Handoff failed: no text".into()
        }
    );
}

#[test]
fn frozen_opens_the_editor_with_focus_and_a_watch() {
    let t0 = Instant::now();
    let mut s = state();
    update(
        &mut s,
        ev(Event::Handoff(HandoffPhase::Writing {
            manual: false,
            focus: None,
        })),
        t0,
    );
    let fx = update(&mut s, frozen("/w/.flower/notes/handoff-demo.md"), t0);
    assert!(fx.contains(&Effect::WatchFile(
        "/w/.flower/notes/handoff-demo.md".into()
    )));
    assert!(ops(&fx).is_empty(), "the review window holds the successor");
    assert_eq!(s.focus, Focus::Editor);
    assert_eq!(s.running, Running::Idle);
    let ed = s.editor.as_ref().expect("editor open");
    assert_eq!(ed.text(), DOC);
    assert_eq!(ed.countdown(t0), Some(15));
    assert_eq!(
        s.latest_handoff,
        Some("/w/.flower/notes/handoff-demo.md".into())
    );
}

#[test]
fn review_off_or_no_workbench_continues_at_once() {
    let t0 = Instant::now();
    let mut s = state_with(None);
    let fx = update(&mut s, frozen("/n/h.md"), t0);
    assert_eq!(ops(&fx), [Op::ReviewDone]);
    assert!(s.editor.is_none());
    let mut s = state();
    let fx = update(
        &mut s,
        ev(Event::Handoff(HandoffPhase::Frozen {
            path: None,
            degraded: true,
            markdown: DOC.into(),
        })),
        t0,
    );
    assert_eq!(ops(&fx), [Op::ReviewDone]);
    assert!(s.editor.is_none());
}

#[test]
fn countdown_with_time_passed_in_reaches_review_done() {
    let t0 = Instant::now();
    let mut s = state();
    update(&mut s, frozen("/n/h.md"), t0);
    let fx = update(&mut s, Msg::Tick, t0 + Duration::from_millis(14_900));
    assert!(ops(&fx).is_empty());
    assert!(
        fx.contains(&Effect::ScheduleFrame(Some(Duration::from_millis(100)))),
        "{fx:?}"
    );
    let fx = update(&mut s, Msg::Tick, t0 + Duration::from_secs(15));
    assert_eq!(ops(&fx), [Op::ReviewDone]);
    assert_eq!(s.focus, Focus::Input, "the focus goes back to the input");
    assert!(
        s.editor.as_ref().is_some_and(|e| !e.in_review()),
        "the editor stays open"
    );
    assert!(
        ops(&update(&mut s, Msg::Tick, t0 + Duration::from_secs(16))).is_empty(),
        "once"
    );
}

#[test]
fn a_keystroke_pauses_the_countdown() {
    let t0 = Instant::now();
    let mut s = state();
    update(&mut s, frozen("/n/h.md"), t0);
    update(&mut s, key(KeyCode::Char('x')), t0 + Duration::from_secs(5));
    let ed = s.editor.as_ref().unwrap();
    assert!(ed.is_paused());
    assert!(ed.is_dirty());
    let fx = update(&mut s, Msg::Tick, t0 + Duration::from_secs(60));
    assert!(ops(&fx).is_empty(), "paused never times out");
    assert_eq!(
        s.editor
            .as_ref()
            .unwrap()
            .countdown(t0 + Duration::from_secs(60)),
        Some(10)
    );
}

#[test]
fn ctrl_s_saves_then_sends_review_done() {
    let t0 = Instant::now();
    let mut s = state();
    update(&mut s, frozen("/n/h.md"), t0);
    update(&mut s, key(KeyCode::Char('!')), t0);
    let fx = update(&mut s, ctrl('s'), t0);
    let text = format!("!{DOC}");
    assert_eq!(
        fx[0],
        Effect::SaveEditor {
            path: "/n/h.md".into(),
            text: text.clone()
        }
    );
    assert!(ops(&fx).is_empty(), "ReviewDone waits for the save to land");
    assert_eq!(s.editor.as_ref().unwrap().review, Review::Saving);
    let fx = update(
        &mut s,
        Msg::Saved {
            path: "/n/h.md".into(),
            text,
            result: Ok(()),
        },
        t0,
    );
    assert_eq!(ops(&fx), [Op::ReviewDone]);
    let ed = s.editor.as_ref().unwrap();
    assert!(!ed.is_dirty());
    assert!(!ed.in_review());
}

#[test]
fn a_failed_save_keeps_the_review_open() {
    let t0 = Instant::now();
    let mut s = state();
    update(&mut s, frozen("/n/h.md"), t0);
    update(&mut s, ctrl('s'), t0);
    let fx = update(
        &mut s,
        Msg::Saved {
            path: "/n/h.md".into(),
            text: DOC.into(),
            result: Err("read-only".into()),
        },
        t0,
    );
    assert!(ops(&fx).is_empty());
    assert!(s.editor.as_ref().unwrap().in_review());
    assert!(matches!(last_cell(&s), Cell::Error { message } if message.contains("read-only")));
    // Esc continues with the file as it is on disk.
    assert_eq!(
        ops(&update(&mut s, key(KeyCode::Esc), t0)),
        [Op::ReviewDone]
    );
}

#[test]
fn esc_in_the_editor_ends_the_review_then_closes() {
    let t0 = Instant::now();
    let mut s = state();
    update(&mut s, frozen("/n/h.md"), t0);
    update(&mut s, key(KeyCode::Char('z')), t0);
    assert_eq!(
        ops(&update(&mut s, key(KeyCode::Esc), t0)),
        [Op::ReviewDone]
    );
    let ed = s.editor.as_ref().unwrap();
    assert_eq!(ed.text(), DOC, "Esc keeps the file as it is on disk");
    assert_eq!(s.focus, Focus::Editor);
    // After the review: edits, Esc asks, Esc again discards and closes.
    update(&mut s, key(KeyCode::Char('q')), t0);
    let fx = update(&mut s, key(KeyCode::Esc), t0);
    assert!(fx.iter().all(|e| *e != Effect::UnwatchFile));
    assert_eq!(s.editor.as_ref().unwrap().prompt, Prompt::DiscardConfirm);
    let fx = update(&mut s, key(KeyCode::Esc), t0);
    assert!(fx.contains(&Effect::UnwatchFile));
    assert!(s.editor.is_none());
    assert_eq!(s.focus, Focus::Input);
    // /edit-handoff reopens the latest document, without a countdown.
    type_text(&mut s, "/edit-handoff", t0);
    let fx = update(&mut s, key(KeyCode::Enter), t0);
    assert!(fx.contains(&Effect::LoadEditor("/n/h.md".into())));
    update(
        &mut s,
        Msg::EditorLoaded {
            path: "/n/h.md".into(),
            content: Ok(DOC.into()),
        },
        t0,
    );
    let ed = s.editor.as_ref().unwrap();
    assert_eq!(ed.review, Review::Over);
    assert_eq!(s.focus, Focus::Editor);
}

#[test]
fn outside_changes_reload_or_ask() {
    let t0 = Instant::now();
    let mut s = state();
    update(&mut s, frozen("/n/h.md"), t0);
    let changed = |c: &str| Msg::FileChanged {
        path: "/n/h.md".into(),
        content: Ok(c.into()),
    };
    update(&mut s, changed("outside\n"), t0);
    assert_eq!(s.editor.as_ref().unwrap().text(), "outside\n");
    update(&mut s, key(KeyCode::Char('m')), t0);
    update(&mut s, changed("again\n"), t0);
    assert!(matches!(
        s.editor.as_ref().unwrap().prompt,
        Prompt::Conflict { .. }
    ));
    // While the prompt shows, typing does not edit; r reloads.
    update(&mut s, key(KeyCode::Char('x')), t0);
    assert_eq!(s.editor.as_ref().unwrap().text(), "moutside\n");
    update(&mut s, key(KeyCode::Char('r')), t0);
    let ed = s.editor.as_ref().unwrap();
    assert_eq!(ed.text(), "again\n");
    assert_eq!(ed.prompt, Prompt::None);
}

#[test]
fn ctrl_c_clears_then_quits_within_one_second() {
    let t0 = Instant::now();
    let mut s = state();
    type_text(&mut s, "draft", t0);
    let fx = update(&mut s, ctrl('c'), t0);
    assert!(!fx.contains(&Effect::Quit));
    assert!(s.input.is_empty());
    let fx = update(&mut s, ctrl('c'), t0 + Duration::from_millis(900));
    assert!(fx.contains(&Effect::Quit));

    let mut s = state();
    update(&mut s, ctrl('c'), t0);
    update(
        &mut s,
        Msg::Tick,
        t0 + Duration::from_secs(1) + Duration::from_millis(1),
    );
    assert_eq!(s.ctrl_c_at, None, "the window closed");
    let fx = update(&mut s, ctrl('c'), t0 + Duration::from_secs(2));
    assert!(!fx.contains(&Effect::Quit), "2 s apart does not quit");
    assert_eq!(s.ctrl_c_at, Some(t0 + Duration::from_secs(2)));
}

#[test]
fn handoff_command_guard_and_focus() {
    let t0 = Instant::now();
    let mut s = state();
    type_text(&mut s, "/handoff", t0);
    let fx = update(&mut s, key(KeyCode::Enter), t0);
    assert!(ops(&fx).is_empty());
    assert_eq!(
        last_cell(&s),
        Cell::Notice {
            message: "Nothing to hand off (no messages yet)".into()
        }
    );

    with_exchange(&mut s, t0);
    type_text(&mut s, "/handoff the parser bug", t0);
    let fx = update(&mut s, key(KeyCode::Enter), t0);
    assert_eq!(
        ops(&fx),
        [Op::Handoff {
            focus: Some("the parser bug".into())
        }]
    );

    // Done after a manual handoff: divider + notice.
    update(
        &mut s,
        ev(Event::Handoff(HandoffPhase::Writing {
            manual: true,
            focus: None,
        })),
        t0,
    );
    update(
        &mut s,
        ev(Event::Handoff(HandoffPhase::Done {
            context: 152_000,
            window: 200_000,
            degraded: false,
            path: Some("/n/h.md".into()),
            sections: vec![],
            generation: 2,
        })),
        t0,
    );
    let n = s.chat.len();
    assert!(matches!(
        s.chat.get(n - 2),
        Some(Cell::Divider {
            generation: 2,
            context: 152_000,
            ..
        })
    ));
    assert_eq!(
        last_cell(&s),
        Cell::Notice {
            message: "New session started with handoff context".into()
        }
    );
}

#[test]
fn window_command_validates() {
    let t0 = Instant::now();
    let mut s = state();
    type_text(&mut s, "/window abc", t0);
    let fx = update(&mut s, key(KeyCode::Enter), t0);
    assert!(ops(&fx).is_empty());
    assert!(
        matches!(last_cell(&s), Cell::Error { message } if message.contains("`abc` is not a number"))
    );
    type_text(&mut s, "/window 40K", t0);
    let fx = update(&mut s, key(KeyCode::Enter), t0);
    assert_eq!(ops(&fx), [Op::SetWindow { window: 40_000 }]);
    assert_eq!(
        (s.gauge.window, s.gauge.at, s.gauge.warn_at),
        (40_000, 10_000, 1_000)
    );
}

#[test]
fn history_up_down() {
    let t0 = Instant::now();
    let mut s = state();
    for m in ["one", "two"] {
        type_text(&mut s, m, t0);
        update(&mut s, key(KeyCode::Enter), t0);
    }
    type_text(&mut s, "dra", t0);
    update(&mut s, key(KeyCode::Up), t0);
    assert_eq!(s.input_text(), "two");
    update(&mut s, key(KeyCode::Up), t0);
    assert_eq!(s.input_text(), "one");
    update(&mut s, key(KeyCode::Down), t0);
    assert_eq!(s.input_text(), "two");
    update(&mut s, key(KeyCode::Down), t0);
    assert_eq!(s.input_text(), "dra", "the draft comes back");
    // On a multi-line input, Up on the second line moves the cursor, not the history.
    update(
        &mut s,
        Msg::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT)),
        t0,
    );
    type_text(&mut s, "ft", t0);
    update(&mut s, key(KeyCode::Up), t0);
    assert_eq!(s.input_text(), "dra\nft");
}

#[test]
fn approval_prompt_takes_the_keys() {
    let t0 = Instant::now();
    let mut s = state();
    update(
        &mut s,
        ev(Event::ToolCall {
            id: "t1".into(),
            name: "bash".into(),
            input: json!({"command": "make"}),
        }),
        t0,
    );
    update(
        &mut s,
        ev(Event::ApprovalRequest {
            id: "t1".into(),
            name: "bash".into(),
            summary: "make".into(),
        }),
        t0,
    );
    assert_eq!(s.focus, Focus::Approval);
    update(&mut s, key(KeyCode::Char('x')), t0);
    assert!(s.input.is_empty(), "keys do not leak into the input");
    let fx = update(&mut s, key(KeyCode::Char('a')), t0);
    assert_eq!(
        ops(&fx),
        [Op::Approval {
            id: "t1".into(),
            decision: Approval::Always
        }]
    );
    assert_eq!(s.focus, Focus::Input);
    assert!(
        matches!(last_cell(&s), Cell::Approval { answer: Some(a), .. } if a.contains("always"))
    );
    update(
        &mut s,
        ev(Event::ApprovalRequest {
            id: "t2".into(),
            name: "write_file".into(),
            summary: "a.rs".into(),
        }),
        t0,
    );
    assert_eq!(
        ops(&update(&mut s, key(KeyCode::Esc), t0)),
        [Op::Approval {
            id: "t2".into(),
            decision: Approval::Deny
        }]
    );
}

#[test]
fn tool_cells_fill_in() {
    let t0 = Instant::now();
    let mut s = state();
    update(
        &mut s,
        ev(Event::TextDelta {
            text: "Let me look.".into(),
        }),
        t0,
    );
    update(
        &mut s,
        ev(Event::ToolCall {
            id: "t1".into(),
            name: "read_file".into(),
            input: json!({"path": "src/a.rs"}),
        }),
        t0,
    );
    assert_eq!(
        s.running,
        Running::Tool {
            name: "read_file".into(),
            since: t0
        }
    );
    assert!(
        matches!(
            s.chat.get(0),
            Some(Cell::Assistant {
                streaming: false,
                ..
            })
        ),
        "closed by the tool"
    );
    let t1 = t0 + Duration::from_secs(1);
    update(
        &mut s,
        ev(Event::ToolResult {
            id: "t1".into(),
            name: "read_file".into(),
            output: "fn a() {}".into(),
            is_error: false,
            spilled: None,
        }),
        t1,
    );
    assert_eq!(s.running, Running::Streaming { since: t1 });
    assert!(
        matches!(last_cell(&s), Cell::Tool { output: Some(o), summary, .. } if o == "fn a() {}" && summary == "src/a.rs")
    );
    update(&mut s, ctrl('t'), t1);
    assert!(matches!(last_cell(&s), Cell::Tool { expanded: true, .. }));
}

#[test]
fn a_10_mb_paste_is_one_chip_expanded_on_send() {
    let t0 = Instant::now();
    let mut s = state();
    let line = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n";
    let big = line.repeat(10 * 1024 * 1024 / line.len());
    let started = Instant::now();
    update(&mut s, Msg::Paste(big.clone()), t0);
    assert_eq!(s.input.lines().len(), 1, "the textarea holds the chip only");
    assert_eq!(s.input_text(), "[pasted 10.0 MB, 163,840 lines]");
    type_text(&mut s, " explain", t0);
    let fx = update(&mut s, key(KeyCode::Enter), t0);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "a paste must not freeze the UI"
    );
    match ops(&fx).as_slice() {
        [Op::UserTurn { text }] => {
            assert_eq!(text.len(), big.len() + " explain".len());
            assert!(text.starts_with(line) && text.ends_with("\n explain"));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        last_cell(&s),
        Cell::User {
            text: "[pasted 10.0 MB, 163,840 lines] explain".into()
        }
    );
    // A small paste goes in as text.
    update(&mut s, Msg::Paste("a\r\nb".into()), t0);
    assert_eq!(s.input_text(), "a\nb");
}

#[test]
fn usage_moves_the_gauge_and_cost_is_kept_per_generation() {
    let t0 = Instant::now();
    let mut s = state();
    let started = |id: &str, generation| {
        ev(Event::SessionStarted {
            session_id: id.into(),
            parent_session: None,
            generation,
            model: "m".into(),
            provider: "anthropic".into(),
            window: 200_000,
            at: 150_000,
            warn_at: 130_000,
            demo: false,
        })
    };
    let usage = |context, cost_usd, estimated| {
        ev(Event::Usage {
            context,
            window: 200_000,
            estimated,
            usage: Usage::default(),
            cost_usd,
        })
    };
    update(&mut s, started("aaaaaaaa-1", 1), t0);
    update(&mut s, usage(120_000, 0.5, false), t0);
    update(&mut s, usage(131_000, 0.5, true), t0);
    assert_eq!((s.gauge.context, s.gauge.estimated), (131_000, true));
    update(&mut s, usage(140_000, 0.75, false), t0);
    update(
        &mut s,
        ev(Event::TurnEnd {
            reason: ExitReason::Completed,
        }),
        t0,
    );
    update(&mut s, started("bbbbbbbb-2", 2), t0);
    assert_eq!(s.gauge.context, 0);
    update(&mut s, usage(20_000, 0.1, false), t0);
    let report = cost_report(&s);
    assert!(
        report.contains("gen 1 (aaaaaaaa): $0.7500 · 1 turn · 2 requests"),
        "{report}"
    );
    assert!(
        report.contains("gen 2 (bbbbbbbb): $0.1000 · 0 turns · 1 request"),
        "{report}"
    );
    assert!(report.contains("total: $0.8500"), "{report}");
    type_text(&mut s, "/cost", t0);
    update(&mut s, key(KeyCode::Enter), t0);
    assert_eq!(last_cell(&s), Cell::Notice { message: report });
}

#[test]
fn near_notice_once_per_generation() {
    let t0 = Instant::now();
    let mut s = state();
    let near = || {
        ev(Event::Handoff(HandoffPhase::Near {
            context: 130_000,
            at: 150_000,
            window: 200_000,
        }))
    };
    update(&mut s, near(), t0);
    update(&mut s, near(), t0);
    let notices = s
        .chat
        .iter()
        .filter(|c| matches!(c, Cell::Notice { .. }))
        .count();
    assert_eq!(notices, 1);
    assert_eq!(
        last_cell(&s),
        Cell::Notice {
            message: "Context at 130.0K/200K: a handoff will be written at 150.0K".into()
        }
    );
}

#[test]
fn popup_selects_and_runs_commands() {
    let t0 = Instant::now();
    let mut s = state();
    type_text(&mut s, "/h", t0);
    let names: Vec<_> = popup_items(&s).iter().map(|c| c.name).collect();
    assert_eq!(names, ["handoff", "help"]);
    update(&mut s, key(KeyCode::Down), t0);
    update(&mut s, key(KeyCode::Enter), t0);
    assert!(matches!(last_cell(&s), Cell::Notice { message } if message.starts_with("commands:")));
    type_text(&mut s, "/wi", t0);
    update(&mut s, key(KeyCode::Tab), t0);
    assert_eq!(s.input_text(), "/window ");
    assert!(popup_items(&s).is_empty());
    update(&mut s, ctrl('c'), t0);
    type_text(&mut s, "/zz", t0);
    update(&mut s, key(KeyCode::Enter), t0);
    assert!(
        matches!(last_cell(&s), Cell::Error { message } if message.starts_with("Unknown command /zz"))
    );
    assert_eq!(s.input_text(), "/zz", "the input stays for correction");
    update(&mut s, key(KeyCode::Esc), t0);
    assert!(popup_items(&s).is_empty());
}

#[test]
fn idle_means_no_frames() {
    let t0 = Instant::now();
    let mut s = state();
    assert_eq!(next_frame_in(&s, t0), None);
    let moved = MouseEvent {
        kind: MouseEventKind::Moved,
        column: 3,
        row: 3,
        modifiers: KeyModifiers::NONE,
    };
    assert!(
        update(&mut s, Msg::Mouse(moved), t0).is_empty(),
        "mouse motion draws nothing"
    );
    assert!(
        update(&mut s, Msg::Tick, t0).is_empty(),
        "an idle tick asks for no next frame"
    );
    update(
        &mut s,
        ev(Event::Handoff(HandoffPhase::Writing {
            manual: false,
            focus: None,
        })),
        t0,
    );
    let d = next_frame_in(&s, t0 + Duration::from_millis(30)).unwrap();
    assert_eq!(d, Duration::from_millis(50), "the spinner's next frame");
}

#[test]
fn a_failed_send_gives_the_message_back() {
    let t0 = Instant::now();
    let mut s = state();
    type_text(&mut s, "hello", t0);
    let fx = update(&mut s, key(KeyCode::Enter), t0);
    let op = ops(&fx).remove(0);
    update(
        &mut s,
        Msg::SendFailed {
            op,
            reason: "the engine is busy; try again".into(),
        },
        t0,
    );
    assert_eq!(s.input_text(), "hello");
    assert_eq!(s.running, Running::Idle);
    assert!(matches!(last_cell(&s), Cell::Error { message } if message.contains("busy")));
    update(&mut s, Msg::EngineClosed, t0);
    update(&mut s, key(KeyCode::Enter), t0);
    assert!(matches!(last_cell(&s), Cell::Error { message } if message.contains("not running")));
}
