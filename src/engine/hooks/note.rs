//! What the user is shown of hooks: one [`HookNote`] per hook that ran (a cell in the TUI, a
//! `hook` line headless), and the [`HooksQuestion`] asked before a workspace settings file's
//! hooks may run. Everything here is masked and short: a hook that floods its output is shown
//! by its first lines and a count of the rest.

use std::path::PathBuf;

use serde::Serialize;

use super::config::HookSource;
use super::outcome::{HookReport, HookStatus};
use crate::engine::text::one_line;

/// At most this many characters of a hook's output are shown.
const SHOWN_CHARS: usize = 2000;
/// At most this many lines of a hook's output are shown.
const SHOWN_LINES: usize = 20;

/// One hook that ran, as the user sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HookNote {
    /// The event's name (`PreToolUse`, …).
    pub event: String,
    /// The command, on one line, masked.
    pub name: String,
    /// `config.toml` or the settings file's path.
    pub source: String,
    /// `succeeded`, `blocked` or `failed`.
    pub outcome: &'static str,
    /// How it ended (`exit code 2`, `timed out after 1s`, …).
    pub exit: String,
    pub elapsed_ms: u64,
    /// The start of what it printed (masked), with a count of what is left out.
    pub output: String,
    /// It succeeded and gave the model nothing: a front end may fold it (not in the JSON line).
    #[serde(skip)]
    pub quiet: bool,
}

impl HookNote {
    pub fn from_report(report: &HookReport) -> HookNote {
        HookNote {
            event: report.event.as_str().to_string(),
            name: one_line(&crate::engine::secrets::redact(&report.command), 80),
            source: source_label(&report.source),
            outcome: match report.status {
                HookStatus::Succeeded => "succeeded",
                HookStatus::Blocked => "blocked",
                HookStatus::Failed => "failed",
            },
            exit: report.exit.to_string(),
            elapsed_ms: report.elapsed_ms,
            output: short_output(&crate::engine::secrets::redact(&report.output)),
            quiet: report.status == HookStatus::Succeeded && !report.added_context,
        }
    }
}

/// Where a hook was configured, in words.
pub fn source_label(source: &HookSource) -> String {
    match source {
        HookSource::ConfigFile => "config.toml".to_string(),
        HookSource::Settings(path) => path.display().to_string(),
    }
}

/// The first lines of `text`, at most [`SHOWN_LINES`] and [`SHOWN_CHARS`], with what is left out
/// counted on a last line.
fn short_output(text: &str) -> String {
    let text = text.trim_end();
    let mut out = String::new();
    let mut lines = 0;
    for line in text.lines() {
        if lines >= SHOWN_LINES || out.chars().count() + line.chars().count() > SHOWN_CHARS {
            break;
        }
        if lines > 0 {
            out.push('\n');
        }
        out.push_str(line);
        lines += 1;
    }
    let total = text.lines().count();
    if lines < total {
        if lines == 0 {
            // One line longer than the whole budget: its start.
            out = text.chars().take(SHOWN_CHARS).collect();
            lines = 1;
        }
        out.push_str(&format!("\n[… {} more lines]", total.saturating_sub(lines)));
    }
    out
}

/// A workspace settings file whose hooks or allow rules (or the workspace commands'
/// `allowed-tools`) wait for the user's approval (this version of it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HooksQuestion {
    pub path: PathBuf,
    pub sha256: String,
    /// One line per hook (`EVENT [matcher]: command`, masked), per allow rule (`allow: RULE`),
    /// per command (`command /name: TOOLS`).
    pub hooks: Vec<String>,
}

impl HooksQuestion {
    pub fn new(waiting: &super::Unapproved) -> HooksQuestion {
        HooksQuestion {
            path: waiting.file.path.clone(),
            sha256: waiting.file.sha256.clone(),
            hooks: waiting.lines(),
        }
    }
}

/// What one line of a [`HooksQuestion`] grants: a hook, an allow rule (`allow: RULE`) or a
/// command's tools (`command /name: TOOLS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grant {
    Hook,
    Allow,
    CommandTools,
}

impl Grant {
    pub fn of(line: &str) -> Grant {
        if line.starts_with("command /") {
            Grant::CommandTools
        } else if line.starts_with("allow: ") {
            Grant::Allow
        } else {
            Grant::Hook
        }
    }
}

/// One hook on one line, for the approval question.
pub fn describe(hook: &super::Hook) -> String {
    let matcher = hook.matcher.as_text();
    let command = one_line(&crate::engine::secrets::redact(&hook.command), 100);
    if matcher == "*" {
        format!("{}: {command}", hook.event)
    } else {
        format!("{} [{matcher}]: {command}", hook.event)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_output_keeps_the_first_lines_and_counts_the_rest() {
        let many: String = (0..100).map(|i| format!("line {i}\n")).collect();
        let shown = short_output(&many);
        assert!(shown.starts_with("line 0\nline 1\n"));
        assert!(shown.ends_with("[… 80 more lines]"), "{shown}");
        let wide = "x".repeat(10_000);
        let shown = short_output(&wide);
        assert_eq!(shown.chars().filter(|c| *c == 'x').count(), SHOWN_CHARS);
        assert_eq!(short_output("ok\n"), "ok");
    }
}
