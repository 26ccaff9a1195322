//! The servers in words: `/lsp` (each configured server, whether its program is found, and the
//! running ones with their root, state and the files they have open) and the `-v` line.

use std::fmt::Write as _;
use std::path::Path;

use super::manager::LspManager;
use super::report::plural;
use super::server::{Phase, busy_with};
use super::spec::{ServerSpec, find_program};
use super::uri;

/// Open files named per running server before the rest are counted.
const NAMED_FILES: usize = 8;

impl LspManager {
    /// One line of the servers that can run: `pylsp (py, pyi)` for each found, for a tool's
    /// answer.
    pub(crate) fn summary(&self) -> String {
        let found: Vec<String> = self
            .specs()
            .iter()
            .filter(|s| self.is_found(s))
            .map(|s| format!("{} ({})", s.name, s.extensions.join(", ")))
            .collect();
        if found.is_empty() {
            "no language server was found on PATH".into()
        } else {
            format!("servers found: {}", found.join("; "))
        }
    }

    /// `/lsp`: every enabled server, and each running one with its state and open files.
    pub fn report(&self) -> String {
        let mut out = String::from("Language servers:\n");
        let running = self.running();
        for spec in self.specs() {
            let found = if self.is_found(spec) {
                "found"
            } else {
                "not found"
            };
            let _ = writeln!(
                out,
                "- {} (`{}`, {found}): .{}",
                spec.name,
                spec.command.join(" "),
                spec.extensions.join(" .")
            );
            for h in running.iter().filter(|h| h.spec.name == spec.name) {
                let state = h.lock();
                let phase = match &state.phase {
                    Phase::Starting => "starting".to_string(),
                    Phase::Ready => match busy_with(&state) {
                        Some(work) => format!("ready, busy: {work}"),
                        None => "ready".to_string(),
                    },
                    Phase::Restarting { reason } => format!("restarting after: {reason}"),
                    Phase::Failed { reason } => format!("failed: {reason}"),
                    Phase::Stopped => "stopped".to_string(),
                };
                let files: Vec<String> = state
                    .docs
                    .keys()
                    .map(|p| uri::shown(p, self.workspace()))
                    .collect();
                let errors: usize = state
                    .docs
                    .values()
                    .map(|d| d.found.iter().filter(|f| f.is_error()).count())
                    .sum();
                let mut named = files
                    .iter()
                    .take(NAMED_FILES)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ");
                if files.len() > NAMED_FILES {
                    let _ = write!(named, " and {} more", files.len() - NAMED_FILES);
                }
                let _ = writeln!(
                    out,
                    "  root {}: {phase}; {} {} watched{}{}; {errors} {} open",
                    h.root.display(),
                    files.len(),
                    plural(files.len(), "file"),
                    if named.is_empty() { "" } else { ": " },
                    named,
                    plural(errors, "error"),
                );
            }
        }
        if self.specs().is_empty() {
            out.push_str("- none enabled\n");
        }
        out.trim_end().to_string()
    }
}

/// The `-v` line: each enabled server with its program found or not, and the disabled ones.
pub fn describe(servers: &[ServerSpec], path_var: Option<&str>, off: bool) -> String {
    if off {
        return "off (--no-lsp)".into();
    }
    let mut parts: Vec<String> = servers
        .iter()
        .filter(|s| s.enabled)
        .map(|s| {
            let found = find_program(s.program(), path_var)
                .map_or_else(|| "not found".to_string(), |p| display(&p));
            format!("{} ({found}; .{})", s.name, s.extensions.join(" ."))
        })
        .collect();
    let off: Vec<&str> = servers
        .iter()
        .filter(|s| !s.enabled)
        .map(|s| s.name.as_str())
        .collect();
    if !off.is_empty() {
        parts.push(format!("disabled: {}", off.join(", ")));
    }
    parts.join(", ")
}

fn display(p: &Path) -> String {
    p.display().to_string()
}
