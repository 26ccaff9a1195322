//! The handoff document (SPEC §6.6, §6.7): five sections, a tolerant parser, the file format, the
//! successor's briefing and the mechanically assembled degraded fallback.
//!
//! # File format
//!
//! ```text
//! # Handoff · step fix-macos-build · generation 2 · 152.0K/200K · 2026-11-29 13:40
//! ## Doing
//! …
//! ## Decided
//! (empty)
//! ## Dead ends
//! …
//! ## Next
//! …
//! ## Scene
//! …
//! ```
//!
//! # What the parser accepts
//!
//! - Section starts, in any order and any case, optionally numbered (`## 1. Doing`) and optionally
//!   followed by a parenthetical: ATX headings `#`..`######`, bold lines (`**Doing**`, `**Next:** text`)
//!   and a plain label alone on its line (`Doing:`).
//! - Names: `Doing` / `Currently doing`; `Decided` / `Decisions`; `Dead ends` / `Deadends` /
//!   `Dead-ends` / `Dead end`; `Next` / `Next step` / `Next steps`; `Scene` / `Files` / `Key files`.
//! - A section heading repeated inside its own section (`Files:` under `## Scene`) is kept as text; a
//!   section that appears again later is appended to the first occurrence after a blank line.
//! - Unknown headings are kept as prose under the section before them, heading line included.
//! - Text before the first section is model preamble and ignored, except the `# Handoff ·` header
//!   line, which parses back into [`HandoffMeta`]. The counts in the header have display precision
//!   (`152.3K`), so `used`/`window` come back rounded the way the header shows them.
//! - A section holding only `(empty)` (or `empty`, `(none)`, `none`, `n/a`) is empty.
//! - CRLF line ends are read as LF.
//! - A document wrapped in a code fence (a fence opened in the preamble is still open at the first
//!   section) loses the closing fence at its end.
//!
//! Section text is written with a leading backslash on every line that would otherwise parse as a
//! section start or as `(empty)` (Markdown renders `\#` as `#`), and the parser removes exactly that
//! backslash, so `HandoffDoc::parse(&doc.to_markdown()) == doc` for any trimmed section text.

use super::syntax::{self, Section};

/// The mark a mechanically assembled handoff carries at the start of `doing`.
pub const DEGRADED_MARKER: &str = "[DEGRADED: handoff not written]";

/// How many characters of the original task a degraded handoff (and the task note) carries.
pub const TASK_EXCERPT_CHARS: usize = 1_200;

/// The header line's fields.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HandoffMeta {
    /// The step name as the user knows it (not the file-safe form).
    pub step: String,
    /// The generation that wrote the document (the successor is `generation + 1`).
    pub generation: u32,
    /// Main-thread context at the cut, in tokens.
    pub used: u64,
    /// The context window, in tokens.
    pub window: u64,
    /// Wall-clock time of the cut as displayed, e.g. `2026-11-29 13:40` (`fsutil::minute_stamp`).
    pub time: String,
}

/// A handoff document: the five sections of SPEC §6.6 plus the optional header.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HandoffDoc {
    pub meta: Option<HandoffMeta>,
    /// Required: what is being done right now.
    pub doing: String,
    /// Settled decisions, with why.
    pub decided: String,
    /// What was tried and failed, with why.
    pub deadends: String,
    /// Required: the next concrete step.
    pub next: String,
    /// Pointers to key files and artifacts.
    pub scene: String,
}

/// What a degraded handoff is assembled from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DegradedParams<'a> {
    /// Why the writing turn produced no usable document (`network`, `missing sections: next`, …).
    pub reason: &'a str,
    /// The step's original task.
    pub task: &'a str,
    /// Paths known to have been touched (written, edited) in this step.
    pub touched: &'a [String],
    pub meta: Option<HandoffMeta>,
}

impl HandoffDoc {
    /// Parse a document written by a model or edited by a person. Never fails: what cannot be
    /// recognised ends up as text of the section before it, or is ignored before the first section.
    pub fn parse(text: &str) -> HandoffDoc {
        let mut doc = HandoffDoc::default();
        // Every occurrence of each section, as raw lines.
        let mut parts: [Vec<Vec<&str>>; 5] = Default::default();
        let mut current: Option<Section> = None;
        // A model that wraps the whole document in a code fence: a fence is still open when the
        // first section starts, and its closing fence must not end up in the last section.
        let mut preamble_fence = false;
        for line in text.split('\n').map(|l| l.trim_end_matches('\r')) {
            match syntax::known_heading(line) {
                Some((section, inline)) if current != Some(section) => {
                    current = Some(section);
                    let lines = if inline.is_empty() {
                        Vec::new()
                    } else {
                        vec![inline]
                    };
                    parts[section.index()].push(lines);
                }
                _ => match current {
                    Some(section) => {
                        if let Some(last) = parts[section.index()].last_mut() {
                            last.push(line);
                        }
                    }
                    None => {
                        if is_fence(line) {
                            preamble_fence = !preamble_fence;
                        }
                        if doc.meta.is_none() {
                            doc.meta = syntax::parse_header(line).map(
                                |(step, generation, used, window, time)| HandoffMeta {
                                    step,
                                    generation,
                                    used,
                                    window,
                                    time,
                                },
                            );
                        }
                    }
                },
            }
        }
        if preamble_fence && let Some(lines) = current.and_then(|s| parts[s.index()].last_mut()) {
            while lines.last().is_some_and(|l| l.trim().is_empty()) {
                lines.pop();
            }
            if lines.last().is_some_and(|l| is_fence(l)) {
                lines.pop();
            }
        }
        for section in Section::ALL {
            let text = parts[section.index()]
                .iter()
                .map(|lines| section_text(lines))
                .filter(|t| !t.is_empty())
                .collect::<Vec<_>>()
                .join("\n\n");
            *doc.field_mut(section) = text;
        }
        doc
    }

    /// The required sections (`doing`, `next`) that are empty, in canonical order.
    pub fn missing(&self) -> Vec<&'static str> {
        [Section::Doing, Section::Next]
            .into_iter()
            .filter(|&s| self.field(s).trim().is_empty())
            .map(Section::key)
            .collect()
    }

    /// True when both required sections are present.
    pub fn complete(&self) -> bool {
        self.missing().is_empty()
    }

    /// The file format: the header (when `meta` is set), then every section under its `##` heading,
    /// an empty one as `(empty)`. Ends with a newline.
    pub fn to_markdown(&self) -> String {
        let mut out = String::new();
        if let Some(m) = &self.meta {
            out.push_str(&syntax::header_line(
                &m.step,
                m.generation,
                m.used,
                m.window,
                &m.time,
            ));
            out.push('\n');
        }
        for section in Section::ALL {
            out.push_str("## ");
            out.push_str(section.heading());
            out.push('\n');
            let text = self.field(section).trim();
            if text.is_empty() {
                out.push_str(syntax::EMPTY);
            } else {
                out.push_str(&syntax::escape_text(text));
            }
            out.push('\n');
        }
        out
    }

    /// The successor's first user message: a preamble that tells it what it is receiving and how to
    /// use it, then the document.
    pub fn prompt_block(&self) -> String {
        let mut out = String::from(
            "You are taking over this work from your previous generation. Its context window ran \
             out, so it stopped and wrote the handoff document below for you. You start fresh: you \
             have no memory of that conversation, only this document and the workspace.\n\
             \n\
             - This document is your briefing. Continue from its Next section; do not ask the \
             human for background that the document or the workspace can give you.\n\
             - Verify rather than trust blindly: it was written from memory at the end of a long \
             context. Check the state of the files and commands it names in the workspace before \
             you build on them.\n\
             - Respect what it lists as Decided, and do not retry what it lists under Dead ends \
             unless you have new evidence.\n",
        );
        if self.degraded() {
            out.push_str(
                "- WARNING: this handoff is DEGRADED. The previous generation could not write it, \
                 so it was assembled mechanically and is incomplete. Inspect the workspace \
                 (git status, git diff, the files listed under Scene) before you continue.\n",
            );
        }
        out.push_str("\n<handoff>\n");
        out.push_str(&self.to_markdown());
        out.push_str("</handoff>\n");
        out
    }

    /// True when `doing` carries [`DEGRADED_MARKER`].
    pub fn degraded(&self) -> bool {
        self.doing.contains(DEGRADED_MARKER)
    }

    /// The keys of the non-empty sections, in canonical order (`doing`, `decided`, `deadends`,
    /// `next`, `scene`).
    pub fn section_names(&self) -> Vec<String> {
        Section::ALL
            .into_iter()
            .filter(|&s| !self.field(s).trim().is_empty())
            .map(|s| s.key().to_string())
            .collect()
    }

    /// The mechanical fallback when the writing turn failed (SPEC §6.7): `doing` carries the marker
    /// and the reason, `scene` the first 1,200 characters of the task and the touched paths, `next`
    /// tells the successor to inspect the workspace first.
    pub fn degraded_from(p: DegradedParams) -> HandoffDoc {
        let reason = collapse_whitespace(p.reason);
        let reason = if reason.is_empty() {
            "unknown reason".to_string()
        } else {
            reason
        };
        let doing = format!(
            "{DEGRADED_MARKER} {reason}\n\
             The previous generation could not write its handoff document; this one was assembled \
             mechanically from what the harness knew, so what was in progress is unknown."
        );
        let (excerpt, truncated) = head_chars(p.task.trim(), TASK_EXCERPT_CHARS);
        let mut scene = String::from("Original task of this step:\n");
        scene.push_str(if excerpt.is_empty() {
            "(not recorded)"
        } else {
            &excerpt
        });
        if truncated {
            scene.push_str("\n[… task truncated to its first 1,200 characters]");
        }
        scene.push_str("\n\nFiles touched so far:");
        if p.touched.is_empty() {
            scene.push_str("\n(none recorded)");
        }
        for path in p.touched {
            scene.push_str("\n- ");
            scene.push_str(&collapse_whitespace(path));
        }
        let next = "Inspect the workspace before doing anything else: run `git status` and \
                    `git diff`, read the files listed under Scene, and work out how far the task \
                    got. Then continue the task from where the workspace actually stands."
            .to_string();
        HandoffDoc {
            meta: p.meta,
            doing,
            decided: String::new(),
            deadends: String::new(),
            next,
            scene,
        }
    }

    fn field(&self, s: Section) -> &str {
        match s {
            Section::Doing => &self.doing,
            Section::Decided => &self.decided,
            Section::Deadends => &self.deadends,
            Section::Next => &self.next,
            Section::Scene => &self.scene,
        }
    }

    fn field_mut(&mut self, s: Section) -> &mut String {
        match s {
            Section::Doing => &mut self.doing,
            Section::Decided => &mut self.decided,
            Section::Deadends => &mut self.deadends,
            Section::Next => &mut self.next,
            Section::Scene => &mut self.scene,
        }
    }
}

/// One occurrence's text: trimmed, `(empty)` → "", escapes removed.
fn section_text(lines: &[&str]) -> String {
    let raw = lines.join("\n");
    let raw = raw.trim();
    if syntax::is_empty_token(raw) {
        return String::new();
    }
    let unescaped: Vec<&str> = raw.split('\n').map(syntax::unescape_line).collect();
    unescaped.join("\n").trim().to_string()
}

/// A Markdown code fence line (```` ``` ````, ```` ```markdown ````, `~~~`).
fn is_fence(line: &str) -> bool {
    let t = line.trim();
    t.starts_with("```") || t.starts_with("~~~")
}

/// The first `n` characters of `s` (never splitting a character) and whether anything was cut.
pub(crate) fn head_chars(s: &str, n: usize) -> (String, bool) {
    match s.char_indices().nth(n) {
        Some((byte, _)) => (s[..byte].to_string(), true),
        None => (s.to_string(), false),
    }
}

fn collapse_whitespace(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
#[path = "document_tests.rs"]
mod tests;
