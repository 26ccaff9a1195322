//! The router: unknown tools, invalid JSON, containment, approval, summaries, specs.

use super::Ws;
use crate::engine::tools::{TOOL_NAMES, is_known, needs_approval, specs, summary};
use crate::engine::types::INVALID_JSON_KEY;
use serde_json::{Value, json};

#[tokio::test]
async fn unknown_tools_and_bad_inputs() {
    let ws = Ws::new();
    let e = ws.err("rm_rf", json!({})).await;
    assert!(
        e.starts_with("Unknown tool `rm_rf`. The available tools are: read_file, write_file"),
        "{e}"
    );
    let e = ws.err("read_file", json!([1, 2])).await;
    assert!(e.contains("must be a JSON object"), "{e}");
    let e = ws.err("read_file", Value::Null).await;
    assert!(e.contains("`path`") && e.contains("missing"), "{e}");
    let e = ws.err("grep", json!({"pattern": 5})).await;
    assert!(e.contains("`pattern` must be a string, got 5"), "{e}");
}

#[tokio::test]
async fn invalid_json_is_reported_with_the_raw_text() {
    let ws = Ws::new();
    let raw = format!("{{\"path\": \"a.rs\", \"content\": \"{}", "z".repeat(5_000));
    let e = ws.err("write_file", json!({ INVALID_JSON_KEY: raw })).await;
    assert!(
        e.contains("were not valid JSON, so the tool did not run"),
        "{e}"
    );
    assert!(e.contains("{\"path\": \"a.rs\", \"content\": \"zzz"), "{e}");
    assert!(e.len() < 3_000, "the raw text is truncated");
    assert!(!ws.root().join("a.rs").exists());
    assert_eq!(
        summary("write_file", &json!({ INVALID_JSON_KEY: "{" })),
        "write_file: (invalid JSON arguments)"
    );
}

#[tokio::test]
async fn outside_the_workspace_is_refused_unless_approved() {
    let mut ws = Ws::new();
    std::fs::write(ws.outer.join("secret.txt"), "top secret\n").unwrap();
    std::os::unix::fs::symlink(&ws.outer, ws.root().join("escape")).unwrap();
    for (tool, input) in [
        ("read_file", json!({"path": "../secret.txt"})),
        ("read_file", json!({"path": "escape/secret.txt"})),
        ("read_file", json!({"path": ws.outer.join("secret.txt")})),
        ("write_file", json!({"path": "../new.txt", "content": "x"})),
        (
            "write_file",
            json!({"path": "escape/new.txt", "content": "x"}),
        ),
        (
            "edit_file",
            json!({"path": "escape/secret.txt", "old_string": "top", "new_string": "no"}),
        ),
        ("list_dir", json!({"path": ".."})),
        ("grep", json!({"pattern": "secret", "path": "escape"})),
        ("glob", json!({"pattern": "*", "path": "src/../.."})),
    ] {
        let e = ws.err(tool, input.clone()).await;
        assert!(e.contains("outside the workspace"), "{tool} {input}: {e}");
        assert!(needs_approval(tool, &input, ws.root()), "{tool} {input}");
    }
    assert!(!ws.outer.join("new.txt").exists());
    assert_eq!(
        std::fs::read_to_string(ws.outer.join("secret.txt")).unwrap(),
        "top secret\n"
    );
    ws.ctx.allow_outside = true;
    let out = ws.ok("read_file", json!({"path": "../secret.txt"})).await;
    assert_eq!(out, "     1\ttop secret\n");
    let out = ws.ok("list_dir", json!({"path": ".."})).await;
    assert!(
        out.starts_with(&format!("{}/ (", ws.outer.display())),
        "{out}"
    );
}

#[test]
fn approval_rules() {
    let ws = Ws::new();
    let root = ws.root();
    assert!(needs_approval("bash", &json!({"command": "ls"}), root));
    assert!(needs_approval("write_file", &json!({"path": "a"}), root));
    assert!(needs_approval("edit_file", &json!({"path": "a"}), root));
    assert!(!needs_approval(
        "read_file",
        &json!({"path": "src/a.rs"}),
        root
    ));
    assert!(!needs_approval(
        "read_file",
        &json!({"path": "src/../a.rs"}),
        root
    ));
    assert!(!needs_approval("grep", &json!({"pattern": "x"}), root));
    assert!(!needs_approval("list_dir", &json!({}), root));
    assert!(needs_approval("list_dir", &json!({"path": "/"}), root));
    assert!(needs_approval(
        "glob",
        &json!({"pattern": "*", "path": "~"}),
        root
    ));
    assert!(!needs_approval("nope", &json!({}), root));
}

#[test]
fn summaries() {
    let cases = [
        ("bash", json!({"command": "cargo test"}), "bash: cargo test"),
        ("bash", json!({"command": "cd x\nmake"}), "bash: cd x …"),
        (
            "edit_file",
            json!({"path": "src/main.rs"}),
            "edit_file: src/main.rs",
        ),
        ("write_file", json!({"path": "a\nb"}), "write_file: a b"),
        (
            "read_file",
            json!({"path": "a.rs", "offset": 10, "limit": 31}),
            "read_file: a.rs:10-40",
        ),
        (
            "read_file",
            json!({"path": "a.rs", "limit": 5}),
            "read_file: a.rs:1-5",
        ),
        (
            "read_file",
            json!({"path": "a.rs", "offset": 7}),
            "read_file: a.rs:7-",
        ),
        ("read_file", json!({"path": "a.rs"}), "read_file: a.rs"),
        (
            "grep",
            json!({"pattern": "fn \\w+", "path": "src", "glob": "*.rs"}),
            "grep: /fn \\w+/ in src (*.rs)",
        ),
        ("glob", json!({"pattern": "**/*.rs"}), "glob: **/*.rs"),
        ("list_dir", json!({}), "list_dir: ."),
        ("mystery", json!({}), "mystery"),
        ("bash", json!({}), "bash"),
    ];
    for (tool, input, want) in cases {
        assert_eq!(summary(tool, &input), want);
    }
    let long = summary("bash", &json!({"command": "x".repeat(500)}));
    assert!(long.chars().count() <= 107 && long.ends_with('…'), "{long}");
}

#[test]
fn specs_are_complete_schemas() {
    let specs = specs();
    let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, TOOL_NAMES);
    for s in &specs {
        assert!(is_known(&s.name));
        assert!(
            s.description.len() > 80,
            "{} needs a real description",
            s.name
        );
        assert_eq!(s.input_schema["type"], "object");
        let props = s.input_schema["properties"].as_object().unwrap();
        let required = s.input_schema.get("required").and_then(Value::as_array);
        for r in required.into_iter().flatten() {
            assert!(props.contains_key(r.as_str().unwrap()), "{}: {r}", s.name);
        }
        for (k, v) in props {
            assert!(
                v.get("description").is_some(),
                "{}.{k} needs a description",
                s.name
            );
        }
    }
    assert!(!is_known("Bash"));
}
