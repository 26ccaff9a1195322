//! The handoff document: five sections, a tolerant parser, the file format, the
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
//! ## Touched
//! …
//! ```
//!
//! `Touched` is written by the engine from the tool log ([`super::touched`]), after the model's
//! five sections; a document without it (an older one, or one the user cut it from) is whole.
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

use super::echo;
use super::syntax::{self, Section};
use crate::engine::text::head_chars;

/// The mark a mechanically assembled handoff carries at the start of `doing`.
pub(crate) const DEGRADED_MARKER: &str = "[DEGRADED: handoff not written]";

/// The sections a document must have.
const REQUIRED: [Section; 2] = [Section::Doing, Section::Next];

/// How many characters of the original task a degraded handoff (and the task note) carries.
pub(crate) const TASK_EXCERPT_CHARS: usize = 1_200;

/// Opens what a degraded handoff carries forward from an earlier document (a section's first
/// line: `[carried forward from the generation 2 handoff, not checked since]`).
pub const CARRIED_MARKER: &str = "[carried forward";

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

/// A handoff document: its five sections (doing, decided, dead ends, next, scene) plus the
/// optional header.
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
    /// What the tool log says the generation touched (engine-written; empty: not written).
    pub touched: String,
}

/// What a degraded handoff is assembled from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DegradedParams<'a> {
    /// Why the writing turn produced no usable document (`network`, `missing sections: next`, …).
    pub reason: &'a str,
    /// The step's original task.
    pub task: &'a str,
    /// The user messages of the request in progress at the cut, oldest first (may be empty).
    pub request: &'a [String],
    /// Paths known to have been touched (written, edited) in this step.
    pub touched: &'a [String],
    /// The document this generation was briefed with, if any: its Decided, Dead ends and Scene
    /// are carried forward, marked as such.
    pub previous: Option<&'a HandoffDoc>,
    pub meta: Option<HandoffMeta>,
}

/// Every occurrence of each section while a document is read, as raw lines.
#[derive(Default)]
struct Parts<'a> {
    doing: Vec<Vec<&'a str>>,
    decided: Vec<Vec<&'a str>>,
    deadends: Vec<Vec<&'a str>>,
    next: Vec<Vec<&'a str>>,
    scene: Vec<Vec<&'a str>>,
    touched: Vec<Vec<&'a str>>,
}

impl<'a> Parts<'a> {
    fn of(&mut self, section: Section) -> &mut Vec<Vec<&'a str>> {
        match section {
            Section::Doing => &mut self.doing,
            Section::Decided => &mut self.decided,
            Section::Deadends => &mut self.deadends,
            Section::Next => &mut self.next,
            Section::Scene => &mut self.scene,
            Section::Touched => &mut self.touched,
        }
    }
}

impl HandoffDoc {
    /// Parse a document written by a model or edited by a person. Never fails: what cannot be
    /// recognised ends up as text of the section before it, or is ignored before the first section.
    pub fn parse(text: &str) -> HandoffDoc {
        let mut doc = HandoffDoc::default();
        let mut parts = Parts::default();
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
                    parts.of(section).push(lines);
                }
                _ => match current {
                    Some(section) => {
                        if let Some(last) = parts.of(section).last_mut() {
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
        if preamble_fence && let Some(lines) = current.and_then(|s| parts.of(s).last_mut()) {
            while lines.last().is_some_and(|l| l.trim().is_empty()) {
                lines.pop();
            }
            if lines.last().is_some_and(|l| is_fence(l)) {
                lines.pop();
            }
        }
        for section in Section::ALL {
            let text = parts
                .of(section)
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
        REQUIRED
            .into_iter()
            .filter(|&s| self.field(s).trim().is_empty())
            .map(Section::key)
            .collect()
    }

    /// Whether a section restated `instructions`, the wording the writer has seen, instead of
    /// reporting (see [`super::echo`]); `doing` and `next` must also have words of their own.
    /// `Touched` is the engine's, not the writer's, and is not judged.
    pub(crate) fn echo_check(&self, instructions: &[&str]) -> Result<(), echo::Restated> {
        let parts: Vec<echo::Part<'_>> = Section::ALL
            .into_iter()
            .filter(|&s| s != Section::Touched)
            .map(|s| echo::Part {
                name: s.key(),
                text: self.field(s),
                required: REQUIRED.contains(&s),
            })
            .collect();
        echo::check(instructions, &parts)
    }

    /// True when both required sections are present.
    pub fn complete(&self) -> bool {
        self.missing().is_empty()
    }

    /// The file format: the header (when `meta` is set), then every section under its `##` heading,
    /// an empty one as `(empty)` (an empty `Touched` is left out). Ends with a newline.
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
            if section == Section::Touched && self.touched.trim().is_empty() {
                continue;
            }
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

    /// The in-memory document as a successor's briefing (no request): what
    /// [`super::briefing::Briefing`] makes of [`HandoffDoc::to_markdown`].
    pub fn prompt_block(&self) -> String {
        super::briefing::Briefing {
            document: &self.to_markdown(),
            degraded: self.degraded(),
            ..Default::default()
        }
        .briefing_block()
    }

    /// True when `doing` carries [`DEGRADED_MARKER`].
    pub fn degraded(&self) -> bool {
        self.doing.contains(DEGRADED_MARKER)
    }

    /// The keys of the non-empty sections, in canonical order (`doing`, `decided`, `deadends`,
    /// `next`, `scene`, `touched`).
    pub fn section_names(&self) -> Vec<String> {
        Section::ALL
            .into_iter()
            .filter(|&s| !self.field(s).trim().is_empty())
            .map(|s| s.key().to_string())
            .collect()
    }

    /// The mechanical fallback when the writing turn failed: `doing` carries
    /// the marker and the reason; `scene` the request in progress (its first 1,200 characters),
    /// the step's original task (the same) and the touched paths; `next` tells the successor to
    /// inspect the workspace first. The Decided, Dead ends and Scene of the document this
    /// generation was briefed with are carried forward under [`CARRIED_MARKER`] (a degraded
    /// predecessor passes on only what it had carried itself).
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
        let request: Vec<&str> = p
            .request
            .iter()
            .map(|m| m.trim())
            .filter(|m| !m.is_empty())
            .collect();
        let request = request.join("\n\n");
        let task = p.task.trim();
        let mut scene = String::new();
        if !request.is_empty() {
            scene.push_str(if request == task {
                "Request in progress at the cut (the step's original task):\n"
            } else {
                "Request in progress at the cut:\n"
            });
            push_excerpt(&mut scene, &request, "request");
            scene.push_str("\n[quoted in full after this document]\n\n");
        }
        if request != task {
            scene.push_str("Original task of this step:\n");
            if task.is_empty() {
                scene.push_str("(not recorded)");
            } else {
                push_excerpt(&mut scene, task, "task");
            }
            scene.push_str("\n\n");
        }
        scene.push_str("Files touched so far:");
        if p.touched.is_empty() {
            scene.push_str("\n(none recorded)");
        }
        for path in p.touched {
            scene.push_str("\n- ");
            scene.push_str(&collapse_whitespace(path));
        }
        let carried = p.previous.map(Carried::from).unwrap_or_default();
        if !carried.scene.is_empty() {
            scene.push_str("\n\n");
            scene.push_str(&carried.scene);
        }
        let then = if request.is_empty() {
            "Then continue the task from where the workspace actually stands."
        } else {
            "Then continue the request in progress (quoted after this document) from where the \
             workspace actually stands."
        };
        let next = format!(
            "Inspect the workspace before doing anything else: run `git status` and `git diff`, \
             read the files listed under Scene, and work out how far the work got. {then}"
        );
        HandoffDoc {
            meta: p.meta,
            doing,
            decided: carried.decided,
            deadends: carried.deadends,
            next,
            scene,
            touched: String::new(),
        }
    }

    fn field(&self, s: Section) -> &str {
        match s {
            Section::Doing => &self.doing,
            Section::Decided => &self.decided,
            Section::Deadends => &self.deadends,
            Section::Next => &self.next,
            Section::Scene => &self.scene,
            Section::Touched => &self.touched,
        }
    }

    fn field_mut(&mut self, s: Section) -> &mut String {
        match s {
            Section::Doing => &mut self.doing,
            Section::Decided => &mut self.decided,
            Section::Deadends => &mut self.deadends,
            Section::Next => &mut self.next,
            Section::Scene => &mut self.scene,
            Section::Touched => &mut self.touched,
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

/// What a degraded document carries forward from the one its generation was briefed with.
#[derive(Debug, Default)]
struct Carried {
    decided: String,
    deadends: String,
    scene: String,
}

impl From<&HandoffDoc> for Carried {
    fn from(prev: &HandoffDoc) -> Carried {
        if prev.degraded() {
            // Its Decided and Dead ends are what it carried (already marked); of its Scene only
            // the carried part: its own mechanical part is rebuilt fresh.
            let scene = prev
                .scene
                .find(CARRIED_MARKER)
                .and_then(|i| prev.scene.get(i..))
                .unwrap_or_default();
            return Carried {
                decided: prev.decided.clone(),
                deadends: prev.deadends.clone(),
                scene: scene.trim().to_string(),
            };
        }
        let from = match &prev.meta {
            Some(m) => format!("the generation {} handoff", m.generation),
            None => "the previous handoff".to_string(),
        };
        let mark = |text: &str| {
            let text = text.trim();
            if text.is_empty() {
                String::new()
            } else {
                format!("{CARRIED_MARKER} from {from}, not checked since]\n{text}")
            }
        };
        Carried {
            decided: mark(&prev.decided),
            deadends: mark(&prev.deadends),
            scene: mark(&prev.scene),
        }
    }
}

/// The first 1,200 characters of `text`, and a note when it was cut.
fn push_excerpt(out: &mut String, text: &str, what: &str) {
    let (excerpt, truncated) = head_chars(text, TASK_EXCERPT_CHARS);
    out.push_str(&excerpt);
    if truncated {
        out.push_str(&format!(
            "\n[… {what} truncated to its first 1,200 characters]"
        ));
    }
}

fn collapse_whitespace(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
#[path = "document_tests.rs"]
mod tests;
