//! The writing turn's prompt and the successor's reminder of its original task.
//!
//! The prompt opens with why this session ends ([`HandoffCause`]): its context is nearly full
//! (the automatic handoff; these bytes are fixed, so the prompt cache and the transcripts of
//! earlier runs see the same request), a request overflowed the window, or the user asked for a
//! handoff. The rest of the template is the same for all three.

use crate::engine::context::{fmt_tokens, fmt_window};
use crate::engine::ledger::HandoffCause;

/// The handoff prompt template: `{opening}` (one of the openings below), then the body, which
/// has no placeholder of its own.
pub(crate) const HANDOFF_PROMPT_TEMPLATE: &str = include_str!("../../../assets/handoff_prompt.md");

/// The short handoff prompt: the same `{opening}`, then a filled-in example instead of a
/// description of each section.
pub(crate) const HANDOFF_PROMPT_SHORT_TEMPLATE: &str =
    include_str!("../../../assets/handoff_prompt_short.md");

/// Which prompt a writing request carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WritingPrompt {
    /// The long prompt, which describes each section ([`HANDOFF_PROMPT_TEMPLATE`]).
    Full,
    /// The short one, which shows a filled-in example ([`HANDOFF_PROMPT_SHORT_TEMPLATE`]): the
    /// one retry after a document that restated its instructions. A small window affords it.
    Short,
}

impl WritingPrompt {
    /// The template, `{opening}` unfilled.
    pub(crate) fn template(self) -> &'static str {
        match self {
            WritingPrompt::Full => HANDOFF_PROMPT_TEMPLATE,
            WritingPrompt::Short => HANDOFF_PROMPT_SHORT_TEMPLATE,
        }
    }
}

/// Every instruction text flower-tui writes into a session's requests, for the echo check
/// (`echo.rs`): both writing prompts, the briefing's fixed texts (every cause, degraded or not,
/// the plan preamble, the rescue and tail notes), and what the session sent: its system prompt
/// and its tools' descriptions and schemas.
pub(crate) fn instruction_texts(
    system: &str,
    tools: &[crate::engine::types::ToolSpec],
) -> Vec<String> {
    use super::briefing;
    let mut texts = vec![
        HANDOFF_PROMPT_TEMPLATE.to_string(),
        HANDOFF_PROMPT_SHORT_TEMPLATE.to_string(),
        briefing::PLAN_PREAMBLE.to_string(),
        briefing::RESCUED_NOTE.to_string(),
        briefing::TAIL_NOTE.to_string(),
        system.to_string(),
    ];
    for cause in [
        HandoffCause::Pressure,
        HandoffCause::Overflow,
        HandoffCause::Manual,
    ] {
        for degraded in [false, true] {
            texts.push(briefing::preamble(cause, None, degraded));
        }
    }
    for spec in tools {
        texts.push(spec.description.clone());
        texts.push(spec.input_schema.to_string());
    }
    texts
}

/// The opening of an automatic handoff at the handoff line.
const PRESSURE: &str = "Your context window is at {used} of {window}. It is nearly full, so this \
                        session ends here. Stop the work you were doing and write a handoff \
                        document now.";
/// The opening after a request did not fit the window.
const OVERFLOW: &str = "Your last request did not fit in your context window of {window}, so this \
                        session ends here. Parts of the conversation above may have been \
                        shortened to make room for this request. Stop the work you were doing \
                        and write a handoff document now.";
/// The opening of `/handoff`: the user chose to end the session, the context did not force it.
const MANUAL: &str = "The user asked for a handoff now, so this session ends here (your context \
                      window is at {used} of {window}). Stop the work you were doing and write a \
                      handoff document now.";
/// Added to the manual opening when a focus is given.
const MANUAL_FOCUS: &str = " Give the document the focus asked for at the end of this message.";

/// The user message of the writing turn: the template opened for `cause`, with `{used}` and
/// `{window}` filled in (`152.0K`, `200K`), and `\n\nAdditional focus: <focus>` appended verbatim
/// when a focus is given (`/handoff [focus]`, `/focus`). The focus is never expanded as a
/// template: `{used}` in it stays literal.
pub(crate) fn handoff_prompt(
    kind: WritingPrompt,
    used: u64,
    window: u64,
    cause: HandoffCause,
    focus: Option<&str>,
) -> String {
    let focus = focus.map(str::trim).filter(|f| !f.is_empty());
    let mut opening = match cause {
        HandoffCause::Pressure => PRESSURE.to_string(),
        HandoffCause::Overflow => OVERFLOW.to_string(),
        // A plan is never written by the handoff prompt; were it asked, it is the user's choice.
        HandoffCause::Manual | HandoffCause::Plan => MANUAL.to_string(),
    };
    if cause == HandoffCause::Manual && focus.is_some() {
        opening.push_str(MANUAL_FOCUS);
    }
    let opening = opening
        .replace("{used}", &fmt_tokens(used))
        .replace("{window}", &fmt_window(window));
    let mut prompt = kind
        .template()
        .trim_end()
        .replacen("{opening}", &opening, 1);
    if let Some(focus) = focus {
        prompt.push_str("\n\nAdditional focus: ");
        prompt.push_str(focus);
    }
    prompt
}

#[cfg(test)]
mod tests {
    use super::super::document::TASK_EXCERPT_CHARS;
    use super::*;
    use crate::engine::handoff::HandoffDoc;
    use crate::engine::text::head_chars;

    /// A short note for the successor's first message: the step's original task (its first 1,200
    /// characters), as reference, so that a chain of generations stays anchored to what was asked
    /// rather than to a retelling of it. Empty when the task is blank.
    fn successor_task_note(task: &str) -> String {
        let task = task.trim();
        if task.is_empty() {
            return String::new();
        }
        let (excerpt, truncated) = head_chars(task, TASK_EXCERPT_CHARS);
        let mut note = String::from(
            "For reference, the task this step started with (the handoff above says where it stands \
             now; act on the handoff's Next):\n<original-task>\n",
        );
        note.push_str(&excerpt);
        if truncated {
            note.push_str("\n[… truncated to its first 1,200 characters]");
        }
        note.push_str("\n</original-task>\n");
        note
    }

    #[test]
    fn placeholders_are_filled() {
        let p = handoff_prompt(
            WritingPrompt::Full,
            152_000,
            200_000,
            HandoffCause::Pressure,
            None,
        );
        assert!(
            p.starts_with("Your context window is at 152.0K of 200K."),
            "{p}"
        );
        assert!(!p.contains("{used}") && !p.contains("{window}"));
        assert!(!p.contains("Additional focus"));
        assert!(!p.ends_with('\n'));
    }

    #[test]
    fn focus_is_appended_verbatim_and_never_expanded() {
        let p = handoff_prompt(
            WritingPrompt::Full,
            1_500,
            1_000_000,
            HandoffCause::Pressure,
            Some("keep {used} and {window} as typed"),
        );
        assert!(p.contains("at 1.5K of 1M"));
        assert!(p.ends_with("\n\nAdditional focus: keep {used} and {window} as typed"));
        assert_eq!(
            p.matches("{used}").count(),
            1,
            "only the focus keeps the literal"
        );
        // A blank focus adds nothing.
        let pressure = HandoffCause::Pressure;
        assert_eq!(
            handoff_prompt(WritingPrompt::Full, 1, 2, pressure, Some("  ")),
            handoff_prompt(WritingPrompt::Full, 1, 2, pressure, None)
        );
    }

    #[test]
    fn prompt_asks_for_the_five_sections_the_parser_reads() {
        let p = handoff_prompt(
            WritingPrompt::Full,
            10,
            20,
            HandoffCause::Manual,
            Some("the parser"),
        );
        // The prompt's own skeleton parses into all five sections: the headings it asks for are the
        // headings the parser knows.
        let doc = HandoffDoc::parse(&p);
        assert_eq!(
            doc.section_names(),
            ["doing", "decided", "deadends", "next", "scene"]
        );
        for phrase in [
            "no memory of this conversation",
            "what it would cost the successor to find this out again",
            "single next concrete step",
            "Pointers, not content",
            "appends a `## Touched` section itself, from the tool log",
            "Do not write a Touched section",
            "Do not call any tool",
            "document only",
        ] {
            assert!(p.contains(phrase), "missing: {phrase}");
        }
    }

    #[test]
    fn the_automatic_prompt_keeps_its_bytes() {
        // What every automatic handoff sent before the opening depended on the cause.
        let before = format!(
            "Your context window is at 152.0K of 200K. It is nearly full, so this session ends \
             here. Stop the work you were doing and write a handoff document now.\n{}",
            HANDOFF_PROMPT_TEMPLATE
                .trim_end()
                .strip_prefix("{opening}\n")
                .unwrap_or_default()
        );
        assert_eq!(
            handoff_prompt(
                WritingPrompt::Full,
                152_000,
                200_000,
                HandoffCause::Pressure,
                None
            ),
            before
        );
    }

    #[test]
    fn the_opening_says_why_the_session_ends() {
        let manual = handoff_prompt(
            WritingPrompt::Full,
            6_000,
            60_000,
            HandoffCause::Manual,
            None,
        );
        assert!(
            manual.starts_with(
                "The user asked for a handoff now, so this session ends here (your context \
                 window is at 6.0K of 60K). Stop the work you were doing and write a handoff \
                 document now.\n\n"
            ),
            "{manual}"
        );
        let opening = manual.split_once("\n\n").map_or("", |(o, _)| o);
        assert!(!manual.contains("nearly full") && !opening.contains("focus"));
        assert!(!manual.contains("Additional focus"));
        let focused = handoff_prompt(
            WritingPrompt::Full,
            6_000,
            60_000,
            HandoffCause::Manual,
            Some("the parser"),
        );
        assert!(focused.contains(
            "write a handoff document now. Give the document the focus asked for at the end of \
             this message.\n\n"
        ));
        assert!(focused.ends_with("\n\nAdditional focus: the parser"));
        let overflow = handoff_prompt(
            WritingPrompt::Full,
            70_000,
            60_000,
            HandoffCause::Overflow,
            None,
        );
        assert!(
            overflow.starts_with(
                "Your last request did not fit in your context window of 60K, so this session \
                 ends here."
            ),
            "{overflow}"
        );
        // The body after the opening is the same for every cause.
        let body = |p: &str| p.split_once("\n\n").map(|(_, b)| b.to_string());
        let pressure = handoff_prompt(
            WritingPrompt::Full,
            6_000,
            60_000,
            HandoffCause::Pressure,
            None,
        );
        assert_eq!(body(&manual), body(&pressure));
        assert_eq!(body(&overflow), body(&pressure));
    }

    #[test]
    fn the_short_prompt_shows_an_example_a_small_window_affords() {
        let manual = HandoffCause::Manual;
        let long = handoff_prompt(WritingPrompt::Full, 10, 20, manual, Some("the parser"));
        let short = handoff_prompt(
            WritingPrompt::Short,
            6_100,
            8_192,
            manual,
            Some("the parser"),
        );
        // The same opening as the long prompt's.
        assert!(
            short.starts_with(
                "The user asked for a handoff now, so this session ends here (your context \
                 window is at 6.1K of 8.2K)."
            ),
            "{short}"
        );
        assert!(short.ends_with("\n\nAdditional focus: the parser"));
        assert!(
            !short.contains("{used}")
                && !short.contains("{window}")
                && !short.contains("{opening}")
        );
        // What the fake provider (and the demo model) know a writing request by.
        assert!(
            short.contains("write a handoff document now")
                && long.contains("write a handoff document now")
        );
        // About 300 tokens, under a third of the long one.
        assert!(
            short.len() < 1_300 && short.len() * 3 < long.len(),
            "{}",
            short.len()
        );
        // The example is a filled-in document with the five sections the parser reads.
        let example = HandoffDoc::parse(&short);
        assert_eq!(
            example.section_names(),
            ["doing", "decided", "deadends", "next", "scene"]
        );
        assert!(example.next.contains("go test ./thumbs/"), "{example:?}");
    }

    #[test]
    fn task_note() {
        assert_eq!(successor_task_note("  \n"), "");
        let note = successor_task_note("fix the build");
        assert!(note.contains("<original-task>\nfix the build\n</original-task>"));
        assert!(!note.contains("truncated"));
        let long = "ж".repeat(1_300);
        let note = successor_task_note(&long);
        assert!(note.contains(&"ж".repeat(1_200)));
        assert!(!note.contains(&"ж".repeat(1_201)));
        assert!(note.contains("truncated"));
    }
}
