//! Whether a written document restated its instructions instead of reporting what happened.
//!
//! A model asked for a handoff sometimes answers with the prompt itself: every heading is there,
//! so the document parses as complete, but each section holds the description of what belongs in
//! it ("What is being done right now, at the moment of the cut: …"). Small models do it often;
//! large ones do it when the prompt is long and the context nearly full. This module reads the
//! words against every instruction text the writer has seen, not only the prompt of its own
//! request: after a failed first writing, the retry with the short prompt can answer with the
//! *long* prompt word for word. The caller passes the texts (for a handoff:
//! `prompt::instruction_texts`, both writing prompts, the briefing's fixed texts, the system
//! prompt and the tools' descriptions). [`check`] takes any document as named parts: a plan
//! document calls it with its own prompt and sections.
//!
//! # The measure
//!
//! Text becomes words: runs of letters and digits, lowercased, so case, punctuation, Markdown
//! marks and backticks do not count. The instructions' words give a set of shingles, every run
//! of [`SHINGLE`] consecutive words of one text. A word of a section is *copied* when a shingle that holds it is
//! in the prompt's set. A lightly edited copy stays mostly copied (an edited, inserted or moved
//! word uncovers only itself and its neighbours' shingles through it); a section that quotes a
//! phrase of the prompt has few copied words among many of its own.
//!
//! # The rule
//!
//! A section *restates its instructions* when at least [`MIN_COPIED`] of its words are copied and
//! they are at least [`ECHO_PERCENT`] percent of its words. A required section also does when no
//! word of it is its own (a short copy, or nothing but punctuation). An empty section is not
//! judged here (the writer's `(empty)` is parsed as empty; a required empty section is
//! `HandoffDoc::missing`'s). One section that restates its instructions fails the document.

use std::collections::HashSet;
use std::fmt;

/// Words in a shingle: three keeps a quoted phrase short of a finding and a copy with a word
/// changed here and there mostly copied.
pub(crate) const SHINGLE: usize = 3;

/// Copied words below this never make a section restate its instructions on their share alone:
/// a quoted phrase ("if nothing has failed yet", "keep the public API") is allowed.
pub(crate) const MIN_COPIED: usize = 6;

/// The share of copied words, in percent, from which a section is mostly the prompt's wording.
pub(crate) const ECHO_PERCENT: usize = 50;

/// One section to judge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Part<'a> {
    /// Its key, as the reason names it (`doing`).
    pub name: &'a str,
    pub text: &'a str,
    /// A required section must have words of its own.
    pub required: bool,
}

/// How much of a text is the prompt's wording.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Copied {
    /// Its words.
    pub words: usize,
    /// Those inside a shingle of the prompt.
    pub copied: usize,
}

impl Copied {
    /// The share of copied words, in whole percent (0 for no words).
    pub(crate) fn percent(self) -> usize {
        (self.copied * 100).checked_div(self.words).unwrap_or(0)
    }

    fn restates(self, required: bool) -> bool {
        let mostly = self.copied >= MIN_COPIED && self.copied * 100 >= ECHO_PERCENT * self.words;
        mostly || (required && self.copied == self.words)
    }
}

/// A section that restated its instructions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Finding {
    pub section: String,
    pub copied: Copied,
}

/// Why a document is not a document: the sections that restated their instructions.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the document restated its instructions ({})", self.detail())]
pub(crate) struct Restated {
    pub findings: Vec<Finding>,
}

impl Restated {
    /// `words from the prompt: doing 100%, next 97%` (a section without words: `next: no words`).
    pub(crate) fn detail(&self) -> String {
        let each: Vec<String> = self
            .findings
            .iter()
            .map(|f| match f.copied.words {
                0 => format!("{}: no words", f.section),
                _ => format!("{} {}%", f.section, f.copied.percent()),
            })
            .collect();
        format!("words from the prompt: {}", each.join(", "))
    }
}

/// The prompt's shingles, to measure texts against.
#[derive(Debug, Clone)]
pub(crate) struct Wording {
    shingles: HashSet<String>,
}

impl Wording {
    /// The shingles of every text (none crosses from one text into the next).
    pub(crate) fn of_all(texts: &[&str]) -> Wording {
        Wording {
            shingles: texts
                .iter()
                .flat_map(|t| {
                    words(t)
                        .windows(SHINGLE)
                        .map(|s| s.join(" "))
                        .collect::<Vec<_>>()
                })
                .collect(),
        }
    }

    /// How many of `text`'s words are the prompt's wording.
    pub(crate) fn copied(&self, text: &str) -> Copied {
        let words = words(text);
        let mut covered = vec![false; words.len()];
        for (start, shingle) in words.windows(SHINGLE).enumerate() {
            if self.shingles.contains(&shingle.join(" ")) {
                covered
                    .iter_mut()
                    .skip(start)
                    .take(SHINGLE)
                    .for_each(|c| *c = true);
            }
        }
        Copied {
            words: words.len(),
            copied: covered.iter().filter(|&&c| c).count(),
        }
    }
}

/// Judge every non-empty part against the wording of `instructions`.
pub(crate) fn check(instructions: &[&str], parts: &[Part<'_>]) -> Result<(), Restated> {
    let wording = Wording::of_all(instructions);
    let findings: Vec<Finding> = parts
        .iter()
        .filter(|p| !p.text.trim().is_empty())
        .filter_map(|p| {
            let copied = wording.copied(p.text);
            copied.restates(p.required).then(|| Finding {
                section: p.name.to_string(),
                copied,
            })
        })
        .collect();
    if findings.is_empty() {
        Ok(())
    } else {
        Err(Restated { findings })
    }
}

/// Runs of letters and digits, lowercased.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

impl fmt::Display for Copied {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} of {} words copied", self.copied, self.words)
    }
}

#[cfg(test)]
#[path = "echo_tests.rs"]
mod tests;
