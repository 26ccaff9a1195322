//! Hooks in the reducer: each hook that blocked, failed or gave the model context becomes a cell
//! (the others are folded: a count in the status line, their cells on Alt-H), and the question whether a workspace
//! settings file's hooks may run is asked like a tool's approval (under the same guard against
//! keys typed ahead), answered with `Op::HooksDecision`.

use std::time::Instant;

use crate::engine::hooks::{Grant, HookNote, HooksQuestion};

use super::questions::{Asked, PendingApproval};
use super::render::cell::Cell;
use super::state::AppState;

/// A hook ran: a cell when it blocked, failed or gave the model context; else folded (counted
/// in the status line, shown on [`show_quiet`]'s key).
pub(super) fn on_hook(state: &mut AppState, note: HookNote) {
    if note.quiet {
        state.chat.fold_hook(note);
    } else {
        state.chat.push_cell(Cell::Hook(Box::new(note)));
    }
}

/// The folded hooks, as cells now (the count goes back to zero).
pub(super) fn show_quiet(state: &mut AppState) {
    let folded = state.chat.take_folded_hooks();
    if folded.is_empty() {
        state.chat.notice("No hook ran quietly since the last look");
        return;
    }
    state.chat.notice(format!(
        "{} hook(s) ran quietly (succeeded, gave the model nothing):",
        folded.len()
    ));
    for note in folded {
        state.chat.push_cell(Cell::Hook(Box::new(note)));
    }
}

/// The engine holds a settings file's hooks until the user says whether they may run.
pub(super) fn on_question(state: &mut AppState, q: HooksQuestion, now: Instant) {
    let asked = Asked::Hooks { sha256: q.sha256 };
    if state.questions.asks(&asked) {
        return;
    }
    let shown = q.path.display().to_string();
    let summary = format!("{shown} would run: {}", q.hooks.join("; "));
    let file = q
        .path
        .file_name()
        .map_or_else(|| shown.clone(), |n| n.to_string_lossy().into_owned());
    let title = trust_title(&file, &q.hooks);
    state.chat.push_cell(Cell::HooksQuestion {
        path: shown,
        hooks: q.hooks,
        answer: None,
    });
    let p = PendingApproval::question(asked, &title, summary, state.chat.last_index());
    state.questions.enqueue(p, now);
}

/// The question's title: what the workspace's `file` would be trusted with, read from the lines
/// it lists.
pub(super) fn trust_title(file: &str, lines: &[String]) -> String {
    let has = |g: Grant| lines.iter().any(|l| Grant::of(l) == g);
    if has(Grant::CommandTools) && !has(Grant::Hook) && !has(Grant::Allow) {
        return "Let this workspace's commands use the tools they name".to_string();
    }
    let wants = [
        (has(Grant::Hook), "run its hooks"),
        (has(Grant::Allow), "use its allow rules"),
        (
            has(Grant::CommandTools),
            "let its commands use the tools they name",
        ),
    ];
    let wants: Vec<&str> = wants.iter().filter(|w| w.0).map(|w| w.1).collect();
    let wants = match wants.as_slice() {
        [] => "trust it".to_string(),
        [one] => (*one).to_string(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    };
    format!("This workspace's {file}: {wants}")
}
