//! Tests of the echo check: recorded documents that restated the prompt (verbatim, lightly
//! edited, partly filled in) and good documents that quote a few of its words.

use super::*;
use crate::engine::handoff::HandoffDoc;
use crate::engine::handoff::prompt::{HANDOFF_PROMPT_SHORT_TEMPLATE, HANDOFF_PROMPT_TEMPLATE};

const LONG: &str = HANDOFF_PROMPT_TEMPLATE;
const SHORT: &str = HANDOFF_PROMPT_SHORT_TEMPLATE;

/// The echo a small local model wrote for a manual handoff after one exchange about `calc.py`:
/// the prompt's descriptions under its headings, word for word (the first sentence or two of
/// each).
const VERBATIM: &str = include_str!("../../../tests/fixtures/echo/verbatim.md");

/// The same, lightly edited: case, punctuation, bullets, a few words changed, dropped or moved.
const EDITED: &str = include_str!("../../../tests/fixtures/echo/lightly_edited.md");

/// Descriptions with a word of the task pushed in here and there: still mostly the prompt.
const PARTLY_FILLED: &str = include_str!("../../../tests/fixtures/echo/partly_filled.md");

/// A short copy in a required section: too few words for the share rule, but none its own.
const HOLLOW_NEXT: &str = include_str!("../../../tests/fixtures/echo/hollow_next.md");

/// The short prompt's own example, copied.
const EXAMPLE_COPIED: &str = include_str!("../../../tests/fixtures/echo/short_example_copied.md");

/// What Qwen2.5-Coder-0.5B (Q4_K_M, llama.cpp) wrote for a manual handoff after one exchange
/// about `average([])` in calc.py, with the long prompt: the prompt itself, its rules too, cut at
/// the 500-token reserve.
const REAL_LONG: &str = include_str!("../../../tests/fixtures/echo/real_05b_long_prompt.md");

/// What the same model wrote on the retry with the short prompt: the example, word for word.
const REAL_SHORT: &str = include_str!("../../../tests/fixtures/echo/real_05b_short_prompt.md");

/// A good document about the same bug that quotes a few of the prompt's words.
const GOOD_QUOTING: &str = include_str!("../../../tests/fixtures/echo/good_quoting.md");

/// A good document shaped like the short prompt's example.
const GOOD_LIKE_THE_EXAMPLE: &str =
    include_str!("../../../tests/fixtures/echo/good_like_the_example.md");

/// A good document about another task: a macOS build shim.
const MACOS_SHIM: &str = include_str!("../../../tests/fixtures/echo/good_macos_shim.md");

/// Short sections and the words people write for "nothing here".
const GOOD_TERSE: &str = include_str!("../../../tests/fixtures/echo/good_terse.md");

fn verdict(doc: &str, prompt: &str) -> Result<(), Restated> {
    HandoffDoc::parse(doc).echo_check(&[prompt])
}

fn sections(r: &Restated) -> Vec<&str> {
    r.findings.iter().map(|f| f.section.as_str()).collect()
}

#[test]
fn documents_that_restate_the_prompt_fail_with_the_sections_named() {
    let all: &[&str] = &["doing", "decided", "deadends", "next", "scene"];
    let table: [(&str, &str, &str, &[&str]); 7] = [
        ("the real model, long prompt", REAL_LONG, LONG, all),
        ("the real model, short prompt", REAL_SHORT, SHORT, all),
        ("verbatim", VERBATIM, LONG, all),
        ("lightly edited", EDITED, LONG, all),
        ("partly filled", PARTLY_FILLED, LONG, &["doing", "next"]),
        ("hollow next", HOLLOW_NEXT, LONG, &["next"]),
        // Its Scene, one path of three words, is under the floor and not required.
        (
            "the example copied",
            EXAMPLE_COPIED,
            SHORT,
            &["doing", "decided", "deadends", "next"],
        ),
    ];
    for (name, doc, prompt, want) in table {
        let err = verdict(doc, prompt).expect_err(name);
        assert_eq!(sections(&err), want, "{name}: {err}");
        assert!(
            err.to_string()
                .starts_with("the document restated its instructions (words from the prompt: "),
            "{name}: {err}"
        );
    }
}

#[test]
fn a_document_is_measured_against_the_prompt_it_was_given() {
    // The long prompt's descriptions are not the short prompt's wording: each request's
    // document is checked against its own prompt.
    assert_eq!(verdict(VERBATIM, SHORT), Ok(()));
    assert_eq!(verdict(EXAMPLE_COPIED, LONG), Ok(()));
}

#[test]
fn good_documents_pass_against_both_prompts() {
    let table = [
        ("quoting the prompt", GOOD_QUOTING),
        ("like the example", GOOD_LIKE_THE_EXAMPLE),
        ("a macOS build shim", MACOS_SHIM),
        ("terse", GOOD_TERSE),
    ];
    for (name, doc) in table {
        assert_eq!(verdict(doc, LONG), Ok(()), "{name}, long prompt");
        assert_eq!(verdict(doc, SHORT), Ok(()), "{name}, short prompt");
    }
}

#[test]
fn the_prompts_own_skeletons_restate_them() {
    // The long prompt parses into its five sections: each is its own description.
    let err = verdict(LONG, LONG).expect_err("the long prompt as a document");
    assert_eq!(sections(&err).len(), 5, "{err}");
    assert!(
        err.findings.iter().all(|f| f.copied.percent() == 100),
        "{err}"
    );
    let err = verdict(SHORT, SHORT).expect_err("the short prompt as a document");
    assert_eq!(sections(&err).len(), 5, "{err}");
}

#[test]
fn the_share_and_the_floor() {
    let w =
        Wording::of_all(&["the single next concrete step: one action the successor can start on"]);
    // Case, punctuation and Markdown do not count.
    assert_eq!(
        w.copied("**The SINGLE next-concrete `step`**"),
        Copied {
            words: 5,
            copied: 5
        }
    );
    // Two words swapped: only they are uncovered (the shingles through them break; the words
    // around them are held by shingles of their own).
    assert_eq!(
        w.copied("the single next concrete step one action successor the can start on"),
        Copied {
            words: 12,
            copied: 10
        }
    );
    // A phrase quoted among words of one's own.
    let quoted =
        w.copied("Take the single next concrete step: run pytest on calc.py and read the failure");
    assert_eq!(
        quoted,
        Copied {
            words: 15,
            copied: 5
        }
    );
    assert_eq!(quoted.percent(), 33);
    // Fewer than three words never match; no words is 0 %.
    assert_eq!(
        w.copied("next step"),
        Copied {
            words: 2,
            copied: 0
        }
    );
    assert_eq!(
        w.copied("—"),
        Copied {
            words: 0,
            copied: 0
        }
    );
    assert_eq!(
        Copied {
            words: 0,
            copied: 0
        }
        .percent(),
        0
    );

    // The rule, section by section.
    let judge = |text: &str, required: bool| {
        check(
            &["the single next concrete step: one action the successor can start on"],
            &[Part {
                name: "next",
                text,
                required,
            }],
        )
    };
    // Five copied words of five: under the floor, so only a required section fails (no word
    // of its own).
    assert!(judge("The single next concrete step.", false).is_ok());
    assert!(judge("The single next concrete step.", true).is_err());
    // Six copied of ten: mostly the prompt.
    assert!(
        judge(
            "the single next concrete step one action: fix calc.py now",
            false
        )
        .is_err()
    );
    // Six copied of thirteen: a quote.
    assert!(
        judge(
            "the single next concrete step one action: fix divide in calc.py and run pytest",
            true
        )
        .is_ok()
    );
    // Nothing but punctuation in a required section: no content of its own.
    let err = judge("…", true).expect_err("punctuation only");
    assert_eq!(err.detail(), "words from the prompt: next: no words");
    // Blank text is not judged (a missing section is `missing()`'s).
    assert!(judge("  \n", true).is_ok());
}

#[test]
fn the_reason_names_each_section_and_its_share() {
    let err = verdict(PARTLY_FILLED, LONG).expect_err("partly filled");
    let doing = err.findings.first().expect("doing").copied;
    assert!(doing.words > 20 && doing.percent() >= 80, "{doing}");
    assert_eq!(
        err.to_string(),
        format!(
            "the document restated its instructions (words from the prompt: doing {}%, next {}%)",
            doing.percent(),
            err.findings.get(1).expect("next").copied.percent()
        )
    );
}

/// The instructions of a session as `prompt::instruction_texts` gathers them, with a system
/// prompt and one tool of its own.
fn every_instruction() -> Vec<String> {
    let tool = crate::engine::types::ToolSpec {
        name: "read_file".into(),
        description: "Read a file of the workspace, with line numbers; a range reads part of it."
            .into(),
        input_schema: serde_json::json!({"type": "object"}),
    };
    crate::engine::handoff::prompt::instruction_texts(
        "You are a coding agent working in the user's workspace. Prefer small, verified steps.",
        &[tool],
    )
}

#[test]
fn the_retry_with_the_short_prompt_refuses_the_long_prompt_repeated() {
    // The short prompt's request alone lets the long prompt's wording through …
    assert!(verdict(REAL_LONG, SHORT).is_ok() || verdict(VERBATIM, SHORT).is_ok());
    // … every instruction the writer has seen does not.
    let texts = every_instruction();
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    for (what, doc) in [
        ("real long", REAL_LONG),
        ("verbatim", VERBATIM),
        ("edited", EDITED),
    ] {
        let r = HandoffDoc::parse(doc).echo_check(&texts);
        assert!(r.is_err(), "{what} passed");
    }
    // A section that repeats the system prompt or a tool's description is no report either.
    let doc = "## Doing\nYou are a coding agent working in the user's workspace. Prefer small, \
               verified steps.\n## Next\nRead a file of the workspace, with line numbers; a range \
               reads part of it.\n";
    let r = HandoffDoc::parse(doc).echo_check(&texts).unwrap_err();
    assert_eq!(sections(&r), ["doing", "next"]);
    // Good documents stay good against all of them.
    for doc in [GOOD_QUOTING, GOOD_LIKE_THE_EXAMPLE, MACOS_SHIM, GOOD_TERSE] {
        assert_eq!(HandoffDoc::parse(doc).echo_check(&texts), Ok(()));
    }
}
