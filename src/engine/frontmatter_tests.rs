//! The frontmatter shapes command and skill files use, and the errors for what is not read.

use super::*;

fn text(s: &str) -> Value {
    Value::Text(s.to_string())
}

#[test]
fn the_shapes_commands_and_skills_use() {
    let file = "---\n\
        name: pdf-tools\n\
        description: >-\n  Extract text and tables\n  from PDF files.\n\n  Use for forms.\n\
        argument-hint: \"<file> [pages]\"\n\
        model: 'claude-sonnet-4-5' # a comment\n\
        allowed-tools: [Read, \"Bash(git add:*)\", 'Grep']\n\
        license: Apache-2.0\n\
        tags:\n  - one\n  - \"two words\"\n\
        metadata:\n  author: someone\n  version: \"1.0\"\n\
        # a comment line\n\
        literal: |\n  line one\n    indented\n  line three\n\
        empty:\n\
        ---\n\
        The body.\n---\nstays body.\n";
    let (fm, body) = split(file).unwrap();
    assert_eq!(body, "The body.\n---\nstays body.\n");
    assert_eq!(fm.get("name"), Some(&text("pdf-tools")));
    assert_eq!(
        fm.text("description"),
        Some("Extract text and tables from PDF files.\nUse for forms.")
    );
    assert_eq!(fm.text("argument-hint"), Some("<file> [pages]"));
    assert_eq!(fm.text("model"), Some("claude-sonnet-4-5"));
    assert_eq!(
        fm.get("allowed-tools"),
        Some(&Value::List(vec![
            "Read".into(),
            "Bash(git add:*)".into(),
            "Grep".into()
        ]))
    );
    assert_eq!(
        fm.get("tags"),
        Some(&Value::List(vec!["one".into(), "two words".into()]))
    );
    let Some(Value::Map(meta)) = fm.get("metadata") else {
        panic!("metadata is a map: {fm:?}");
    };
    assert_eq!(meta.get("version").map(String::as_str), Some("1.0"));
    assert_eq!(
        fm.get("literal"),
        Some(&text("line one\n  indented\nline three\n"))
    );
    assert_eq!(fm.get("empty"), Some(&text("")));
    assert_eq!(fm.text("empty"), None);
    assert_eq!(fm.text("nothing"), None);
}

#[test]
fn quoting_escapes_and_line_endings() {
    let file = "\u{feff}---\r\nsingle: 'it''s here'\r\ndouble: \"a \\\"b\\\" \\u00e9\\n\"\r\ncolon: a: b\r\nplain: one\r\n  two\r\n---\r\nbody\r\n";
    let (fm, body) = split(file).unwrap();
    assert_eq!(body, "body\r\n");
    assert_eq!(fm.text("single"), Some("it's here"));
    assert_eq!(fm.get("double"), Some(&text("a \"b\" é\n")));
    assert_eq!(fm.text("colon"), Some("a: b"));
    assert_eq!(fm.text("plain"), Some("one two"));
}

#[test]
fn no_frontmatter_is_all_body() {
    for file in [
        "",
        "just text",
        "# Title\n---\nnot: frontmatter\n---\n",
        "---",
    ] {
        let (fm, body) = split(file).unwrap_or_else(|e| panic!("{file:?}: {e}"));
        assert!(fm.is_empty(), "{file:?}");
        assert_eq!(body, file);
    }
}

#[test]
fn what_it_cannot_read_is_an_error_naming_the_line() {
    let cases = [
        ("---\nname: a\n", FrontmatterError::Unclosed),
        // Trailing spaces after the opening dashes still open a block.
        ("--- \nnot a block", FrontmatterError::Unclosed),
        (
            "---\nname: a\njust words\n---\n",
            FrontmatterError::NotKeyValue { line: 3 },
        ),
        (
            "---\nname: a\nname: b\n---\n",
            FrontmatterError::Duplicate {
                line: 3,
                key: "name".into(),
            },
        ),
        (
            "---\ndescription: \"never closed\n---\n",
            FrontmatterError::UnclosedQuote { line: 2 },
        ),
        (
            "---\ntools: [a, b\n---\n",
            FrontmatterError::UnclosedList { line: 2 },
        ),
        (
            "---\n  indented: first\n---\n",
            FrontmatterError::Indented { line: 2 },
        ),
        (
            "---\nkey:value\n---\n",
            FrontmatterError::NotKeyValue { line: 2 },
        ),
    ];
    for (file, want) in cases {
        assert_eq!(split(file).unwrap_err(), want, "{file:?}");
    }
    assert_eq!(
        FrontmatterError::NotKeyValue { line: 3 }.to_string(),
        "frontmatter line 3: expected `key: value`"
    );
}

#[test]
fn names_in_every_shape() {
    assert_eq!(
        names(Some(&text("Bash(git add:*), Bash(git status:*) Read"))),
        vec!["Bash(git add:*)", "Bash(git status:*)", "Read"]
    );
    assert_eq!(names(Some(&Value::List(vec!["Read".into()]))), vec!["Read"]);
    assert!(names(None).is_empty());
}
