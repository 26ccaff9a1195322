//! Reducer tests of a turn's tool and thinking cells: a command's live output streaming into
//! its cell and its exit staying visible, an edit's diff on its cell, thinking collapsed to one
//! line until expanded.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::engine::diff::DiffLimits;
use crate::engine::protocol::{CommandExit, Event, FileDiff};
use crate::engine::tools::CommandEnd;

use super::render::cell::Cell;
use super::render::tool_cell::ToolStatus;
use super::state::AppState;
use super::test_support::{ev, last_cell, state};
use super::update::update;

fn bash_call(s: &mut AppState, id: &str, now: Instant) {
    update(
        s,
        ev(Event::ToolCall {
            turn: None,
            id: id.into(),
            name: "bash".into(),
            input: json!({"command": "cargo test"}),
            summary: "bash: cargo test".into(),
            changes_files: true,
        }),
        now,
    );
}

#[test]
fn bash_output_streams_into_its_cell_and_the_exit_stays_visible() {
    let t0 = Instant::now();
    let mut s = state();
    bash_call(&mut s, "b1", t0);
    for piece in [
        "Compiling foo\n",
        "\x1b[32mRunning\x1b[0m 3 tests\ntest a",
        " ... ok\n",
    ] {
        update(
            &mut s,
            ev(Event::ToolOutputDelta {
                id: "b1".into(),
                text: piece.into(),
            }),
            t0,
        );
    }
    let Cell::Tool {
        status: ToolStatus::Running { live, .. },
        ..
    } = last_cell(&s)
    else {
        panic!("running");
    };
    assert_eq!(live.text(), "Compiling foo\nRunning 3 tests\ntest a ... ok");
    // A delta for another call changes nothing.
    update(
        &mut s,
        ev(Event::ToolOutputDelta {
            id: "nope".into(),
            text: "x\n".into(),
        }),
        t0,
    );
    let exit = CommandExit {
        end: CommandEnd::Exited { code: 101 },
        elapsed_ms: 3_400,
        summary: "exit code 101".into(),
    };
    update(
        &mut s,
        ev(Event::ToolResult {
            turn: None,
            id: "b1".into(),
            name: "bash".into(),
            output: "Compiling foo\nRunning 3 tests\ntest a ... ok\ntest b ... FAILED".into(),
            is_error: true,
            spilled: None,
            diff: None,
            exit: Some(exit.clone()),
            sandbox: None,
        }),
        t0 + Duration::from_secs(3),
    );
    let cell = last_cell(&s);
    assert!(matches!(&cell, Cell::Tool { exit: Some(e), .. } if *e == exit));
    let lines: Vec<String> = cell
        .lines(80, &super::render::theme::Theme::plain())
        .iter()
        .map(|l| l.to_string())
        .collect();
    assert_eq!(lines[0], "▸ bash: cargo test · exit code 101 · 3.4s");
    assert!(s.mention.stale(), "a command may have changed files");
}

#[test]
fn an_edit_result_carries_its_diff_to_the_cell() {
    let t0 = Instant::now();
    let mut s = state();
    update(
        &mut s,
        ev(Event::ToolCall {
            turn: None,
            id: "e1".into(),
            name: "edit_file".into(),
            input: json!({}),
            summary: "edit_file: a.rs".into(),
            changes_files: true,
        }),
        t0,
    );
    let diff = FileDiff::new("a.rs", Some("a\n"), "b\n", DiffLimits::RESULT);
    update(
        &mut s,
        ev(Event::ToolResult {
            turn: None,
            id: "e1".into(),
            name: "edit_file".into(),
            output: "Edited a.rs".into(),
            is_error: false,
            spilled: None,
            diff: Some(Box::new(diff.clone())),
            exit: None,
            sandbox: None,
        }),
        t0,
    );
    assert!(matches!(last_cell(&s), Cell::Tool { diff: Some(d), .. } if *d == diff));
}

#[test]
fn thinking_is_one_line_until_expanded() {
    let t0 = Instant::now();
    let mut s = state();
    for piece in ["Let me check", " the loop.\nThen the tests."] {
        update(&mut s, ev(Event::ThinkingDelta { text: piece.into() }), t0);
    }
    let theme = super::render::theme::Theme::plain();
    let text = |s: &AppState| -> Vec<String> {
        last_cell(s)
            .lines(80, &theme)
            .iter()
            .map(|l| l.to_string())
            .collect()
    };
    assert_eq!(
        text(&s),
        ["┊ thinking · 2 lines · ctrl-t expands · Let me check the loop."]
    );
    update(&mut s, super::test_support::ctrl('t'), t0);
    assert_eq!(
        text(&s),
        [
            "┊ thinking",
            "┊ Let me check the loop.",
            "┊ Then the tests."
        ]
    );
}
