//! Hooks in the TUI: a hook that ran is a cell (blocked in the warning colour, its output cut to
//! a few lines), and a workspace settings file's hooks are asked about like `.mcp.json`'s servers.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossterm::event::KeyCode;

use crate::engine::hooks::{HookNote, HooksQuestion};
use crate::engine::protocol::{Event, Op};

use super::render::cell::Cell;
use super::subagent_tests::{draw, started};
use super::test_support::{ev, key, ops, state};
use super::update::update;

fn note(event: &str, outcome: &'static str, exit: &str, output: &str) -> HookNote {
    HookNote {
        event: event.into(),
        name: "~/.config/hooks/guard.sh".into(),
        source: "config.toml".into(),
        outcome,
        exit: exit.into(),
        elapsed_ms: 42,
        output: output.into(),
        quiet: false,
    }
}

#[test]
fn hooks_that_ran_are_cells() {
    let t0 = Instant::now();
    let mut s = state();
    started(&mut s, t0);
    let flood: String = (1..=9).map(|i| format!("line {i}\n")).collect();
    for n in [
        note(
            "PreToolUse",
            "blocked",
            "exit code 2",
            "rm -rf is not allowed here",
        ),
        note("PostToolUse", "succeeded", "exit code 0", &flood),
        note("Stop", "failed", "timed out after 1s", ""),
    ] {
        update(&mut s, ev(Event::Hook(n)), t0);
    }
    assert_eq!(
        s.chat
            .cells()
            .iter()
            .filter(|c| matches!(c, Cell::Hook(_)))
            .count(),
        3
    );
    insta::assert_snapshot!("hook_cells", draw(&s, 80, 20, t0).backend());
}

#[test]
fn a_settings_file_is_asked_about_and_answered_with_its_hash() {
    let t0 = Instant::now();
    let mut s = state();
    started(&mut s, t0);
    let question = HooksQuestion {
        path: PathBuf::from("/w/.claude/settings.json"),
        sha256: "feed01".into(),
        hooks: vec![
            "PreToolUse [Bash]: ./guard.sh".into(),
            "Stop: python3 check.py".into(),
        ],
    };
    update(&mut s, ev(Event::HooksApproval(question.clone())), t0);
    // The same question again is not asked twice.
    update(&mut s, ev(Event::HooksApproval(question)), t0);
    assert_eq!(s.questions.len(), 1);
    insta::assert_snapshot!("hooks_question", draw(&s, 80, 14, t0).backend());
    // Too soon: typed ahead, it answers nothing.
    let fx = update(
        &mut s,
        key(KeyCode::Char('y')),
        t0 + Duration::from_millis(50),
    );
    assert!(ops(&fx).is_empty());
    let mut s = state();
    started(&mut s, t0);
    let question = HooksQuestion {
        path: PathBuf::from("/w/.claude/settings.json"),
        sha256: "feed01".into(),
        hooks: vec!["Stop: python3 check.py".into()],
    };
    update(&mut s, ev(Event::HooksApproval(question)), t0);
    let fx = update(&mut s, key(KeyCode::Char('n')), t0 + Duration::from_secs(2));
    assert_eq!(
        ops(&fx),
        [Op::HooksDecision {
            sha256: "feed01".into(),
            approve: false
        }]
    );
    assert!(s.chat.cells().iter().any(|c| matches!(
        c,
        Cell::HooksQuestion { answer: Some(a), .. } if a.starts_with("declined for this workspace")
    )));
}

#[test]
fn quiet_hooks_are_folded_counted_in_the_status_line_and_shown_on_alt_h() {
    use crossterm::event::{KeyEvent, KeyModifiers};
    let t0 = Instant::now();
    let mut s = state();
    started(&mut s, t0);
    let quiet = |event: &str| HookNote {
        quiet: true,
        ..note(
            event,
            "succeeded",
            "exit code 0",
            "{\"decision\":\"approve\"}",
        )
    };
    for n in [
        quiet("UserPromptSubmit"),
        quiet("PreToolUse"),
        quiet("Stop"),
    ] {
        update(&mut s, ev(Event::Hook(n)), t0);
    }
    // One that blocks is still a cell.
    update(
        &mut s,
        ev(Event::Hook(note(
            "PreToolUse",
            "blocked",
            "exit code 2",
            "no",
        ))),
        t0,
    );
    let hooks = |s: &super::state::AppState| {
        s.chat
            .cells()
            .iter()
            .filter(|c| matches!(c, Cell::Hook(_)))
            .count()
    };
    assert_eq!(hooks(&s), 1);
    let screen = format!("{:?}", draw(&s, 160, 12, t0).backend());
    assert!(screen.contains("3 hook(s) ran quietly"), "{screen}");
    assert!(!screen.contains("approve"), "{screen}");
    let alt_h = super::msg::Msg::Key(KeyEvent::new(KeyCode::Char('h'), KeyModifiers::ALT));
    update(&mut s, alt_h, t0);
    assert_eq!(hooks(&s), 4);
    let screen = format!("{:?}", draw(&s, 100, 30, t0).backend());
    assert!(
        !screen.contains("ran quietly\""),
        "the count is gone: {screen}"
    );
    assert!(screen.contains("UserPromptSubmit"), "{screen}");
}

#[test]
fn the_trust_question_says_what_the_file_would_be_trusted_with() {
    use super::hook_events::trust_title;
    let lines = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        trust_title("settings.json", &lines(&["Stop: ./check.sh"])),
        "This workspace's settings.json: run its hooks"
    );
    assert_eq!(
        trust_title(
            "settings.local.json",
            &lines(&["PreToolUse [Bash]: ./guard.sh", "allow: Bash(git status:*)"])
        ),
        "This workspace's settings.local.json: run its hooks and use its allow rules"
    );
    assert_eq!(
        trust_title("commands", &lines(&["command /mk: Bash(mkdir:*)"])),
        "Let this workspace's commands use the tools they name"
    );
    assert_eq!(
        trust_title(
            "settings.json",
            &lines(&["allow: Read", "command /mk: Bash(mkdir:*)"])
        ),
        "This workspace's settings.json: use its allow rules and let its commands use the tools \
         they name"
    );
}

#[test]
fn a_file_with_allow_rules_only_is_asked_to_be_trusted_not_to_run_hooks() {
    let t0 = Instant::now();
    let mut s = state();
    started(&mut s, t0);
    let question = HooksQuestion {
        path: PathBuf::from("/w/.claude/settings.json"),
        sha256: "feed02".into(),
        hooks: vec!["allow: Bash(git status:*)".into()],
    };
    update(&mut s, ev(Event::HooksApproval(question)), t0);
    let screen = format!("{:?}", draw(&s, 120, 16, t0).backend());
    assert!(
        screen.contains("trust /w/.claude/settings.json?"),
        "{screen}"
    );
    assert!(
        screen.contains("This workspace's settings.json: use its allow rules?"),
        "{screen}"
    );
    assert!(!screen.contains("hooks"), "{screen}");
}
