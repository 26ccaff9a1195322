//! Reducer tests of the commands that say where things stand: `/status`, `/memory`, `/config`,
//! `/context` and `/hooks` (the engine answers), `/export` (the app writes), and the aliases
//! `/clear` and `/compact`.

use std::path::PathBuf;
use std::time::Instant;

use crossterm::event::KeyCode;

use crate::engine::protocol::{Op, TurnId};

use super::msg::{Effect, FileError, Msg};
use super::render::cell::Cell;
use super::test_support::{key, last_cell, ops, state, type_text, with_exchange};
use super::update::update;

fn run(s: &mut super::state::AppState, line: &str) -> Vec<Effect> {
    let t0 = Instant::now();
    type_text(s, line, t0);
    update(s, key(KeyCode::Enter), t0)
}

fn notice(s: &super::state::AppState) -> String {
    match last_cell(s) {
        Cell::Notice { message } => message,
        other => panic!("not a notice: {other:?}"),
    }
}

#[test]
fn status_says_model_session_mode_and_context() {
    let mut s = state();
    with_exchange(&mut s, Instant::now());
    run(&mut s, "/status");
    let text = notice(&s);
    insta::assert_snapshot!(text);
}

#[test]
fn memory_and_config_answer_from_the_state() {
    let mut s = state();
    run(&mut s, "/memory");
    let text = notice(&s);
    assert!(text.starts_with("No pins"), "{text}");
    assert!(
        text.contains("No focus") && text.contains("No plan"),
        "{text}"
    );
    run(&mut s, "/config");
    assert_eq!(notice(&s), "model: claude-haiku-4-5");
}

#[test]
fn context_and_hooks_ask_the_engine_and_aliases_run_their_commands() {
    let mut s = state();
    assert_eq!(ops(&run(&mut s, "/context")), [Op::Context]);
    assert_eq!(ops(&run(&mut s, "/hooks")), [Op::Hooks]);
    assert_eq!(ops(&run(&mut s, "/clear")), [Op::NewSession]);
    assert_eq!(
        ops(&run(&mut s, "/compact the parser")),
        [Op::Handoff {
            turn: TurnId(1),
            focus: Some("the parser".into())
        }]
    );
    let help = {
        run(&mut s, "/help");
        notice(&s)
    };
    for name in [
        "/clear", "/compact", "/status", "/context", "/memory", "/config", "/export", "/hooks",
    ] {
        assert!(help.contains(name), "{name} in /help");
    }
}

#[test]
fn export_writes_the_conversation_and_says_where_or_why_not() {
    let mut s = state();
    run(&mut s, "/export");
    assert!(notice(&s).starts_with("Nothing to export yet"));
    with_exchange(&mut s, Instant::now());
    let fx = run(&mut s, "/export notes/chat.md");
    let Some(Effect::Export { path, markdown }) = fx
        .iter()
        .find(|e| matches!(e, Effect::Export { .. }))
        .cloned()
    else {
        panic!("no export: {fx:?}")
    };
    assert_eq!(path, Some(PathBuf::from("notes/chat.md")));
    assert!(markdown.starts_with("**You:** "), "{markdown}");
    let t0 = Instant::now();
    update(
        &mut s,
        Msg::Exported {
            path: PathBuf::from("/ws/notes/chat.md"),
            result: Ok(()),
        },
        t0,
    );
    assert_eq!(notice(&s), "Exported the conversation to /ws/notes/chat.md");
    update(
        &mut s,
        Msg::Exported {
            path: PathBuf::from("/proc/chat.md"),
            result: Err(FileError::Io {
                kind: std::io::ErrorKind::PermissionDenied,
                message: "Permission denied (os error 13)".into(),
            }),
        },
        t0,
    );
    assert!(matches!(last_cell(&s), Cell::Error { message }
        if message.starts_with("/export: cannot write /proc/chat.md: Permission denied")));
}
