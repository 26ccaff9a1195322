//! Reducer tests of custom commands and skills in the TUI: the popup and `/help` list the custom
//! commands (read from real files) after the built-in ones, Enter sends `Op::Command` while the
//! chat shows what was typed, a queued command is sent as one too, and `/skills` lists the skills.

use std::sync::Arc;
use std::time::Instant;

use crossterm::event::KeyCode;

use crate::engine::commands::{self, CommandDirs};
use crate::engine::protocol::{Event, ExitReason, Op, TurnId, TurnKind};
use crate::engine::skills::{self, SkillDirs};

use super::render::cell::Cell;
use super::state::AppState;
use super::test_support::{ev, key, last_cell, ops, state, type_text};
use super::update::update;

fn write(path: &std::path::Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

/// A state whose extensions are loaded from a workspace holding `/review`, `/git:commit`, a
/// `help.md` that a built-in shadows, and the skill `pdf`.
fn with_extensions() -> (AppState, tempfile::TempDir) {
    let ws = tempfile::tempdir().expect("tempdir");
    let cmds = ws.path().join(".claude/commands");
    write(
        &cmds.join("review.md"),
        "---\ndescription: Review a change\nargument-hint: <what>\n---\nReview $1.\n",
    );
    write(&cmds.join("git/commit.md"), "# Commit the staged changes\n");
    write(&cmds.join("help.md"), "not the built-in\n");
    write(
        &ws.path().join(".claude/skills/pdf/SKILL.md"),
        "---\nname: pdf\ndescription: Fill in PDF forms\n---\nSteps.\n",
    );
    let builtins: Vec<&str> = super::slash::COMMANDS.iter().map(|c| c.name).collect();
    let catalog = commands::load(
        &CommandDirs {
            config_dir: None,
            home: None,
            workspace: ws.path().to_path_buf(),
        },
        &builtins,
    );
    let skills = skills::load(&SkillDirs {
        config_dir: None,
        home: None,
        workspace: ws.path().to_path_buf(),
    });
    let mut s = state();
    s.settings.extensions.commands = Arc::new(catalog);
    s.settings.extensions.skills = Arc::new(skills);
    (s, ws)
}

#[test]
fn the_popup_lists_custom_commands_after_the_built_in_ones() {
    let t0 = Instant::now();
    let (mut s, _ws) = with_extensions();
    type_text(&mut s, "/", t0);
    let items = s.popup_items();
    let names: Vec<&str> = items.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(names.iter().filter(|n| **n == "help").count(), 1);
    assert_eq!(&names[names.len() - 2..], ["git:commit", "review"]);
    let review = items.last().expect("an item");
    assert_eq!(review.synopsis(), "/review <what>");
    assert_eq!(review.desc, "Review a change (project)");
    assert_eq!(review.cmd, None);

    // Tab completes it with a space for its argument.
    type_text(&mut s, "rev", t0);
    update(&mut s, key(KeyCode::Tab), t0);
    assert_eq!(s.input.text(), "/review ");
}

#[test]
fn enter_sends_the_command_and_the_chat_shows_what_was_typed() {
    let t0 = Instant::now();
    let (mut s, _ws) = with_extensions();
    type_text(&mut s, "/review  parser.rs ", t0);
    let fx = update(&mut s, key(KeyCode::Enter), t0);
    assert_eq!(
        ops(&fx),
        [Op::Command {
            turn: TurnId(1),
            name: "review".into(),
            args: "parser.rs".into()
        }]
    );
    assert!(matches!(last_cell(&s), Cell::User { text } if text == "/review  parser.rs "));

    // Typed while that turn runs: queued, then sent as a command when the turn ends.
    update(
        &mut s,
        ev(Event::TurnStarted {
            turn: TurnId(1),
            kind: TurnKind::Message,
            origin: crate::engine::protocol::Origin::User,
        }),
        t0,
    );
    type_text(&mut s, "/git:commit", t0);
    assert!(ops(&update(&mut s, key(KeyCode::Enter), t0)).is_empty());
    let fx = update(
        &mut s,
        ev(Event::TurnEnd {
            turn: TurnId(1),
            kind: TurnKind::Message,
            origin: crate::engine::protocol::Origin::User,
            reason: ExitReason::Completed,
        }),
        t0,
    );
    assert_eq!(
        ops(&fx),
        [Op::Command {
            turn: TurnId(2),
            name: "git:commit".into(),
            args: String::new()
        }]
    );
}

#[test]
fn help_lists_custom_commands_and_skills_lists_the_skills() {
    let t0 = Instant::now();
    let (mut s, _ws) = with_extensions();
    type_text(&mut s, "/help", t0);
    update(&mut s, key(KeyCode::Enter), t0);
    let Cell::Notice { message } = last_cell(&s) else {
        panic!("a notice");
    };
    let custom = message.find("custom commands:").expect("a custom section");
    assert!(message[custom..].contains("/review <what>"), "{message}");
    assert!(
        message[custom..].contains("Commit the staged changes (project)"),
        "{message}"
    );
    assert!(!message[custom..].contains("/help"), "{message}");

    type_text(&mut s, "/skills", t0);
    update(&mut s, key(KeyCode::Enter), t0);
    let Cell::Notice { message } = last_cell(&s) else {
        panic!("a notice");
    };
    assert!(message.starts_with("1 skill(s):"), "{message}");
    assert!(message.contains("pdf — Fill in PDF forms"), "{message}");
}
