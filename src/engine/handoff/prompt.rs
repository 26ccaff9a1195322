//! The writing turn's prompt and the successor's reminder of its original task.

use super::document::TASK_EXCERPT_CHARS;
use crate::engine::context::{fmt_tokens, fmt_window};
use crate::engine::text::head_chars;

/// The handoff prompt template, with `{used}` and `{window}` placeholders.
pub(crate) const HANDOFF_PROMPT_TEMPLATE: &str = include_str!("../../../assets/handoff_prompt.md");

/// The user message of the writing turn: the template with `{used}` and `{window}` filled in
/// (`152.0K`, `200K`), and `\n\nAdditional focus: <focus>` appended verbatim when a focus is given
/// (`/handoff [focus]`). The focus is never expanded as a template: `{used}` in it stays literal.
pub(crate) fn handoff_prompt(used: u64, window: u64, focus: Option<&str>) -> String {
    let mut prompt = HANDOFF_PROMPT_TEMPLATE
        .trim_end()
        .replace("{used}", &fmt_tokens(used))
        .replace("{window}", &fmt_window(window));
    if let Some(focus) = focus.map(str::trim).filter(|f| !f.is_empty()) {
        prompt.push_str("\n\nAdditional focus: ");
        prompt.push_str(focus);
    }
    prompt
}

/// A short note the session layer may append to the successor's first message: the step's original
/// task (its first 1,200 characters), as reference, so that a chain of generations stays anchored to
/// what was asked rather than to a retelling of it. Empty when the task is blank.
pub fn successor_task_note(task: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::handoff::HandoffDoc;

    #[test]
    fn placeholders_are_filled() {
        let p = handoff_prompt(152_000, 200_000, None);
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
        let p = handoff_prompt(1_500, 1_000_000, Some("keep {used} and {window} as typed"));
        assert!(p.contains("at 1.5K of 1M"));
        assert!(p.ends_with("\n\nAdditional focus: keep {used} and {window} as typed"));
        assert_eq!(
            p.matches("{used}").count(),
            1,
            "only the focus keeps the literal"
        );
        // A blank focus adds nothing.
        assert_eq!(handoff_prompt(1, 2, Some("  ")), handoff_prompt(1, 2, None));
    }

    #[test]
    fn prompt_asks_for_the_five_sections_the_parser_reads() {
        let p = handoff_prompt(10, 20, None);
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
