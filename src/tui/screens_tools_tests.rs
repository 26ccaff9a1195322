//! Whole-screen snapshots of tool calls: a tool cell selected and expanded, diffs of an edit and
//! of a new file, a command's live output with its time, and the approval prompt (waiting for the
//! input to empty, a long command scrolled, a diff previewed).

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;

use crate::engine::diff::DiffLimits;
use crate::engine::protocol::{AllowOffer, AllowRule, Event, FileDiff};

use super::msg::Msg;
use super::screens_tests::{draw, draw_with, session};
use super::test_support::{ctrl, ev, key, state, type_text};
use super::update::update;
use super::view::ViewCache;

#[test]
fn a_tool_cell_selected_and_expanded() {
    let t0 = Instant::now();
    let mut s = state();
    session(&mut s, t0);
    update(
        &mut s,
        ev(Event::ToolCall {
            turn: None,
            id: "t2".into(),
            name: "bash".into(),
            input: json!({"command": "cargo test"}),
            summary: "bash: cargo test".into(),
            changes_files: true,
        }),
        t0,
    );
    let out: String = (1..=9).map(|i| format!("test case_{i} ... ok\n")).collect();
    update(
        &mut s,
        ev(Event::ToolResult {
            turn: None,
            id: "t2".into(),
            name: "bash".into(),
            output: format!("{out}test result: ok. 9 passed"),
            is_error: false,
            spilled: None,
            diff: None,
            exit: None,
            sandbox: None,
        }),
        t0,
    );
    let collapsed = draw(&s, 80, 24, t0);
    // Alt-Up selects the newest tool call; Ctrl-T expands it.
    let alt_up = Msg::Key(KeyEvent::new(KeyCode::Up, KeyModifiers::ALT));
    update(&mut s, alt_up, t0);
    update(&mut s, ctrl('t'), t0);
    insta::assert_snapshot!("tool_cells_collapsed", collapsed.backend());
    let t = draw(&s, 80, 30, t0);
    insta::assert_snapshot!("tool_cell_selected_and_expanded", t.backend());
    // The selected cell is drawn in the selection style, every row of it.
    let theme = super::render::theme::Theme::builtin("dark").expect("theme");
    let buf = t.backend().buffer();
    let row_of = |text: &str| {
        (0..buf.area.height).find(|y| {
            (0..buf.area.width)
                .map(|x| buf[(x, *y)].symbol().to_string())
                .collect::<String>()
                .contains(text)
        })
    };
    let header = row_of("▾ bash: cargo test").expect("the expanded header");
    let body = row_of("test case_5").expect("an expanded line");
    for y in [header, body] {
        assert_eq!(
            buf[(40, y)].bg,
            theme.selection.bg.expect("a background"),
            "row {y}"
        );
    }
    let other = row_of("▸ bash: make").expect("the other tool");
    assert_ne!(
        buf[(40, other)].bg,
        theme.selection.bg.expect("a background")
    );
}

#[test]
fn the_approval_prompt_waits_for_typed_text() {
    let t0 = Instant::now();
    let mut s = state();
    session(&mut s, t0);
    type_text(&mut s, "can you also", t0);
    update(
        &mut s,
        ev(Event::ApprovalRequest {
            id: "t9".into(),
            name: "bash".into(),
            summary: "bash: git push --force".into(),
            outside_workspace: false,
            command: None,
            diff: None,
            always: None,
            unsandboxed: None,
        }),
        t0,
    );
    insta::assert_snapshot!(draw(&s, 80, 16, t0 + Duration::from_secs(1)).backend());
}

#[test]
fn an_approval_offers_only_keys_that_answer_it_and_its_call_waits() {
    let t0 = Instant::now();
    let mut s = state();
    session(&mut s, t0);
    update(
        &mut s,
        ev(Event::ToolCall {
            turn: None,
            id: "t5".into(),
            name: "bash".into(),
            input: json!({"command": "ls /etc"}),
            summary: "bash: ls /etc".into(),
            changes_files: true,
        }),
        t0,
    );
    update(
        &mut s,
        ev(Event::ApprovalRequest {
            id: "t5".into(),
            name: "bash".into(),
            summary: "bash: ls /etc".into(),
            outside_workspace: true,
            command: Some("ls /etc".into()),
            diff: None,
            always: None,
            unsandboxed: None,
        }),
        t0,
    );
    // Seconds pass while the user reads: the call has not started.
    let t3 = t0 + Duration::from_secs(3);
    update(&mut s, Msg::Tick, t3);
    let screen = draw(&s, 150, 24, t3);
    insta::assert_snapshot!("approval_outside_without_always", screen.backend());
    let text = format!("{:?}", screen.backend());
    assert!(text.contains("waits for your approval"), "{text}");
    assert!(!text.contains("running…"), "{text}");
    // "always" is not offered here: neither the prompt nor the footer names its key.
    assert!(!text.contains("a always"), "{text}");
    assert!(text.contains("y once  ·  n/esc deny"), "{text}");
    let footer = text
        .lines()
        .rev()
        .find(|l| l.contains("claude-haiku"))
        .unwrap_or("");
    assert!(footer.contains("y once  n/esc deny"), "the footer: {text}");
    // Allowed, it runs, and its seconds count from then.
    update(&mut s, key(KeyCode::Char('y')), t3);
    update(&mut s, Msg::Tick, t3 + Duration::from_secs(2));
    let text = format!(
        "{:?}",
        draw(&s, 100, 24, t3 + Duration::from_secs(2)).backend()
    );
    assert!(text.contains("running… 2s"), "{text}");
}

fn offer(label: &str) -> Option<AllowOffer> {
    Some(AllowOffer {
        rules: vec![AllowRule::BashCommand {
            command: "x".into(),
        }],
        label: label.into(),
    })
}

#[test]
fn an_approval_shows_the_whole_long_command_and_scrolls() {
    let t0 = Instant::now();
    let mut s = state();
    session(&mut s, t0);
    let command = "cat > cleanup.sh <<'EOF'\n#!/bin/sh\nset -e\necho cleaning\nrm -rf ~/.cache/build $HOME/old\nfind . -name '*.o' -delete\necho done\nEOF\nsh cleanup.sh";
    update(
        &mut s,
        ev(Event::ApprovalRequest {
            id: "t7".into(),
            name: "bash".into(),
            summary: "bash: cat > cleanup.sh <<'EOF'".into(),
            outside_workspace: false,
            command: Some(command.into()),
            diff: None,
            always: offer("always allow exactly this command this session (it writes a file)"),
            unsandboxed: None,
        }),
        t0,
    );
    let later = t0 + Duration::from_millis(500);
    let mut cache = ViewCache::new();
    insta::assert_snapshot!(
        "approval_long_command",
        draw_with(&s, &mut cache, 80, 16, later).backend()
    );
    // Down scrolls the command: its last lines come into view.
    for _ in 0..4 {
        for fx in update(&mut s, key(KeyCode::Down), later) {
            if let super::msg::Effect::ScrollPrompt(d) = fx {
                cache.scroll_prompt(d);
            }
        }
    }
    let screen = format!("{:?}", draw_with(&s, &mut cache, 80, 16, later).backend());
    assert!(screen.contains("sh cleanup.sh"), "{screen}");
    assert!(
        !screen.contains("#!/bin/sh"),
        "scrolled past the top: {screen}"
    );
}

#[test]
fn an_approval_previews_the_diff() {
    let t0 = Instant::now();
    let mut s = state();
    session(&mut s, t0);
    let old = "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";
    let new = "[package]\nname = \"demo\"\nversion = \"0.2.0\"\nedition = \"2024\"\n";
    update(
        &mut s,
        ev(Event::ApprovalRequest {
            id: "e1".into(),
            name: "edit_file".into(),
            summary: "edit_file: Cargo.toml".into(),
            outside_workspace: false,
            command: None,
            diff: Some(Box::new(FileDiff::new(
                "Cargo.toml",
                Some(old),
                new,
                DiffLimits::PREVIEW,
            ))),
            always: offer("always allow edit_file inside the workspace this session"),
            unsandboxed: None,
        }),
        t0,
    );
    insta::assert_snapshot!(draw(&s, 80, 24, t0 + Duration::from_millis(500)).backend());
    // On a short screen the seven lines still fit: all shown, the `+` lines too, nothing to
    // scroll.
    let short = format!(
        "{:?}",
        draw(&s, 80, 18, t0 + Duration::from_millis(500)).backend()
    );
    assert!(short.contains("4 + edition = \"2024\""), "{short}");
    assert!(!short.contains(" lines "), "{short}");
    assert!(!short.contains("up/down scroll"), "{short}");
}

#[test]
fn an_edit_and_a_new_file_as_diff_cells() {
    let t0 = Instant::now();
    let mut s = state();
    session(&mut s, t0);
    let old: String = (1..=40).map(|i| format!("line {i}\n")).collect();
    let new = old
        .replace("line 3\n", "line three\n")
        .replace("line 30\n", "line thirty\nline thirty-one and a half\n");
    for (id, name, before, after, path) in [
        (
            "e1",
            "edit_file",
            Some(old.as_str()),
            new.as_str(),
            "notes.txt",
        ),
        (
            "w1",
            "write_file",
            None,
            "fn main() {\n    println!(\"hi\");\n}\n",
            "src/main.rs",
        ),
    ] {
        update(
            &mut s,
            ev(Event::ToolCall {
                turn: None,
                id: id.into(),
                name: name.into(),
                input: json!({}),
                summary: format!("{name}: {path}"),
                changes_files: name != "read_file",
            }),
            t0,
        );
        update(
            &mut s,
            ev(Event::ToolResult {
                turn: None,
                id: id.into(),
                name: name.into(),
                output: format!("Wrote {path}"),
                is_error: false,
                spilled: None,
                diff: Some(Box::new(FileDiff::new(
                    path,
                    before,
                    after,
                    DiffLimits::RESULT,
                ))),
                exit: None,
                sandbox: None,
            }),
            t0,
        );
    }
    insta::assert_snapshot!("diff_cells_collapsed", draw(&s, 80, 30, t0).backend());
    update(
        &mut s,
        Msg::Key(KeyEvent::new(KeyCode::Up, KeyModifiers::ALT)),
        t0,
    );
    update(
        &mut s,
        Msg::Key(KeyEvent::new(KeyCode::Up, KeyModifiers::ALT)),
        t0,
    );
    update(&mut s, ctrl('t'), t0);
    insta::assert_snapshot!("diff_cell_expanded", draw(&s, 80, 36, t0).backend());
}

#[test]
fn a_live_bash_cell_streams_its_output_with_the_time() {
    let t0 = Instant::now();
    let mut s = state();
    session(&mut s, t0);
    update(
        &mut s,
        ev(Event::ToolCall {
            turn: None,
            id: "b1".into(),
            name: "bash".into(),
            input: json!({"command": "cargo test"}),
            summary: "bash: cargo test".into(),
            changes_files: true,
        }),
        t0,
    );
    let out: String = (1..=12)
        .map(|i| format!("\x1b[32mtest\x1b[0m case_{i} ... ok\n"))
        .collect();
    for piece in [out.as_str(), "Downloading 10%\rDownloading 62%"] {
        update(
            &mut s,
            ev(Event::ToolOutputDelta {
                id: "b1".into(),
                text: piece.into(),
            }),
            t0,
        );
    }
    let t1 = t0 + Duration::from_millis(7_300);
    update(&mut s, Msg::Tick, t1);
    insta::assert_snapshot!(draw(&s, 80, 20, t1).backend());
}

#[test]
fn a_command_the_sandbox_stopped_asks_to_run_once_outside_it() {
    let t0 = Instant::now();
    let mut s = state();
    session(&mut s, t0);
    let command = "echo 'export PATH=$HOME/bin:$PATH' >> /home/ann/.profile && echo added";
    update(
        &mut s,
        ev(Event::ToolCall {
            turn: None,
            id: "t4".into(),
            name: "bash".into(),
            input: json!({ "command": command }),
            summary: "bash: echo 'export PATH=$HOME/bin:$PATH' >> /home/ann/.profile …".into(),
            changes_files: true,
        }),
        t0,
    );
    update(
        &mut s,
        ev(Event::ApprovalRequest {
            id: "t4".into(),
            name: "bash".into(),
            summary: "bash: echo 'export PATH=$HOME/bin:$PATH' >> /home/ann/.profile …".into(),
            outside_workspace: false,
            command: Some(command.into()),
            diff: None,
            always: None,
            unsandboxed: Some(
                "[sandbox: the sandbox refused the write to `/home/ann/.profile`: commands may \
                 write only in the workspace (/w) and the temp dirs (/tmp).]"
                    .into(),
            ),
        }),
        t0,
    );
    let t1 = t0 + Duration::from_secs(1);
    let screen = draw(&s, 100, 24, t1);
    insta::assert_snapshot!(screen.backend());
    let text = format!("{:?}", screen.backend());
    assert!(
        text.contains("The sandbox stopped bash: run it once outside the sandbox?"),
        "{text}"
    );
    assert!(
        text.contains("$ echo 'export PATH=$HOME/bin:$PATH' >> /home/ann/.profile && echo added"),
        "{text}"
    );
    assert!(!text.contains("a always"), "{text}");
    assert!(text.contains("once more, outside the sandbox"), "{text}");
}
