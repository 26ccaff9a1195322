//! Argument splitting, placeholder substitution and the `!` command places of a command's body.

use super::expand::{FillError, split_arguments};
use super::*;

#[test]
fn arguments_split_as_a_shell_splits_them() {
    let cases: [(&str, &[&str]); 10] = [
        ("", &[]),
        ("   ", &[]),
        ("456 high", &["456", "high"]),
        ("  a\tb\n c ", &["a", "b", "c"]),
        (r#""foo bar" baz"#, &["foo bar", "baz"]),
        ("'it is' \"a \\\"b\\\"\"", &["it is", "a \"b\""]),
        (r"a\ b c", &["a b", "c"]),
        (r#"x"y z"w"#, &["xy zw"]),
        ("#123 $HOME *.rs a|b", &["#123", "$HOME", "*.rs", "a|b"]),
        // An unclosed quote: split on whitespace, quote and all.
        ("\"unclosed quote here", &["\"unclosed", "quote", "here"]),
    ];
    for (args, want) in cases {
        assert_eq!(split_arguments(args), want, "{args:?}");
    }
}

#[test]
fn placeholders_are_replaced_and_unnamed_arguments_appended() {
    let body = "Review PR #$1 with priority $2 ($3). All: $ARGUMENTS. Cost: $5 stays? $10 $1x $ARGUMENTSX $$1";
    assert_eq!(
        substitute_arguments(body, "  456 \"very high\"  "),
        "Review PR #456 with priority very high (). All: 456 \"very high\". Cost:  stays? $10 $1x $ARGUMENTSX $456"
    );
    assert_eq!(
        substitute_arguments("Summarize the repository.", "focus on tests"),
        "Summarize the repository.\n\nARGUMENTS: focus on tests"
    );
    assert_eq!(
        substitute_arguments("Summarize the repository.", "  "),
        "Summarize the repository."
    );
    assert_eq!(substitute_arguments("Fix $ARGUMENTS", ""), "Fix ");
    // Text from the arguments is not expanded again.
    assert_eq!(substitute_arguments("$1 and $2", "$2 x"), "$2 and x");
}

#[test]
fn shell_commands_are_listed_and_filled_in_order() {
    let body = "Status:\n!`git status --short`\nDiff of $1: !`git diff $1` and `not!`this`\nemail!`no`\n!`` empty\n!`unclosed\n";
    let e = Expansion::new(body, "src/a.rs");
    assert_eq!(
        e.commands(),
        vec!["git status --short", "git diff src/a.rs"]
    );
    assert!(e.text().contains("!`git diff src/a.rs`"));
    let filled = e
        .clone()
        .fill(&[" M src/a.rs\n".to_string(), "+new line\n".to_string()])
        .unwrap();
    assert_eq!(
        filled,
        "Status:\n M src/a.rs\nDiff of src/a.rs: +new line and `not!`this`\nemail!`no`\n!`` empty\n!`unclosed\n"
    );
    assert_eq!(
        e.fill(&[]).unwrap_err(),
        FillError {
            expected: 2,
            got: 0
        }
    );
    let none = Expansion::new("no commands here", "");
    assert!(none.commands().is_empty());
    assert_eq!(none.fill(&[]).unwrap(), "no commands here");
}
