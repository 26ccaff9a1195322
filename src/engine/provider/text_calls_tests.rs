//! The text-call reader against the shapes small models write and the near misses that must never
//! run. The first rows are the shapes the real Qwen2.5-Coder 0.5B/1.5B wrote through llama.cpp.

use serde_json::{Value, json};

use super::*;
use crate::engine::types::{Message, ToolSpec, Usage};

const OFFERED: &[&str] = &["read_file", "bash", "list_dir", "edit_file"];

fn offered(name: &str) -> bool {
    OFFERED.contains(&name)
}

fn read(path: &str) -> (&'static str, Value) {
    ("read_file", json!({"path": path}))
}

/// The calls expected of a text: None = not read as calls.
type Expected = Option<Vec<(&'static str, Value)>>;

/// (what, text, calls expected)
fn cases() -> Vec<(&'static str, String, Expected)> {
    let mut all = call_shapes();
    all.extend(more_call_shapes());
    all.extend(near_misses());
    all
}

/// Texts that are tool calls written as text.
fn call_shapes() -> Vec<(&'static str, String, Expected)> {
    let one = r#"{"name": "read_file", "arguments": {"path": "src/main.rs"}}"#;
    let bash = r#"{"name": "bash", "arguments": {"command": "cargo test"}}"#;
    vec![
        // Shapes that are calls.
        ("bare object", one.into(), Some(vec![read("src/main.rs")])),
        (
            "json fence",
            format!("```json\n{one}\n```"),
            Some(vec![read("src/main.rs")]),
        ),
        (
            "plain fence, blank lines around",
            format!("\n\n```\n{one}\n```\n"),
            Some(vec![read("src/main.rs")]),
        ),
        (
            "fence closed on the last line without a newline",
            format!("```json\n{one}```"),
            Some(vec![read("src/main.rs")]),
        ),
        (
            "arguments as a JSON string",
            r#"{"name": "read_file", "arguments": "{\"path\": \"a.rs\"}"}"#.into(),
            Some(vec![read("a.rs")]),
        ),
        (
            "empty arguments string",
            r#"{"name": "list_dir", "arguments": ""}"#.into(),
            Some(vec![("list_dir", json!({}))]),
        ),
        (
            "llama `parameters`",
            r#"{"name": "read_file", "parameters": {"path": "b.rs"}}"#.into(),
            Some(vec![read("b.rs")]),
        ),
        (
            "llama type function",
            r#"{"type": "function", "name": "read_file", "parameters": {"path": "c.rs"}}"#.into(),
            Some(vec![read("c.rs")]),
        ),
        (
            "openai wrapper",
            r#"{"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"d.rs\"}"}}"#.into(),
            Some(vec![read("d.rs")]),
        ),
        (
            "two in a row",
            format!("{one}\n{bash}"),
            Some(vec![
                read("src/main.rs"),
                ("bash", json!({"command": "cargo test"})),
            ]),
        ),
        (
            // What Qwen2.5-Coder 0.5B wrote through llama.cpp, asked to read and then edit a file.
            "two with a comma between",
            format!("{one},\n{bash}"),
            Some(vec![
                read("src/main.rs"),
                ("bash", json!({"command": "cargo test"})),
            ]),
        ),
    ]
}

/// More texts that are tool calls: several calls, other wrappers.
fn more_call_shapes() -> Vec<(&'static str, String, Expected)> {
    let one = r#"{"name": "read_file", "arguments": {"path": "src/main.rs"}}"#;
    let bash = r#"{"name": "bash", "arguments": {"command": "cargo test"}}"#;
    vec![
        (
            "two with a comma between, in a fence",
            format!("```json\n{one},\n{bash}\n```"),
            Some(vec![
                read("src/main.rs"),
                ("bash", json!({"command": "cargo test"})),
            ]),
        ),
        (
            "array",
            format!("[{one}, {bash}]"),
            Some(vec![
                read("src/main.rs"),
                ("bash", json!({"command": "cargo test"})),
            ]),
        ),
        (
            "two fences",
            format!("```json\n{one}\n```\n\n```json\n{bash}\n```"),
            Some(vec![
                read("src/main.rs"),
                ("bash", json!({"command": "cargo test"})),
            ]),
        ),
        (
            "hermes tags",
            format!("<tool_call>\n{one}\n</tool_call>"),
            Some(vec![read("src/main.rs")]),
        ),
        (
            "hermes tags, two",
            format!("<tool_call>\n{one}\n</tool_call>\n<tool_call>\n{bash}\n</tool_call>"),
            Some(vec![
                read("src/main.rs"),
                ("bash", json!({"command": "cargo test"})),
            ]),
        ),
        (
            "hermes tag without its closing tag",
            format!("<tool_call>\n{one}"),
            Some(vec![read("src/main.rs")]),
        ),
        (
            "fence inside a tag",
            format!("<tool_call>\n```json\n{one}\n```\n</tool_call>"),
            Some(vec![read("src/main.rs")]),
        ),
        (
            "mistral marker",
            format!("[TOOL_CALLS][{one}]"),
            Some(vec![read("src/main.rs")]),
        ),
        (
            "python tag marker",
            format!("<|python_tag|>{one}"),
            Some(vec![read("src/main.rs")]),
        ),
        (
            "keys in any order, text with braces and fences inside strings",
            r#"{"arguments": {"command": "echo '{}' && printf '```'"}, "name": "bash"}"#.into(),
            Some(vec![(
                "bash",
                json!({"command": "echo '{}' && printf '```'"}),
            )]),
        ),
    ]
}

/// Texts close to a call that must never run.
fn near_misses() -> Vec<(&'static str, String, Expected)> {
    let one = r#"{"name": "read_file", "arguments": {"path": "src/main.rs"}}"#;
    let bash = r#"{"name": "bash", "arguments": {"command": "cargo test"}}"#;
    vec![
        // Near misses: never run.
        ("empty", String::new(), None),
        ("blank", "  \n ".into(), None),
        (
            "prose before",
            format!("I will read the file.\n```json\n{one}\n```"),
            None,
        ),
        (
            "prose after",
            format!("```json\n{one}\n```\nThis shows the entry point."),
            None,
        ),
        (
            "prose around a bare object",
            format!("Call: {one} now"),
            None,
        ),
        (
            "prose after a tag",
            format!("<tool_call>\n{one}\n</tool_call>\nDone."),
            None,
        ),
        (
            "tool not offered",
            r#"{"name": "delete_everything", "arguments": {}}"#.into(),
            None,
        ),
        (
            "one of two not offered",
            format!(r#"[{one}, {{"name": "rm_rf", "arguments": {{}}}}]"#),
            None,
        ),
        (
            "arguments not JSON",
            r#"{"name": "read_file", "arguments": "src/main.rs"}"#.into(),
            None,
        ),
        (
            "arguments an array",
            r#"{"name": "read_file", "arguments": ["src/main.rs"]}"#.into(),
            None,
        ),
        (
            "both arguments and parameters",
            r#"{"name": "read_file", "arguments": {}, "parameters": {}}"#.into(),
            None,
        ),
        ("no arguments", r#"{"name": "read_file"}"#.into(), None),
        (
            "an extra key",
            r#"{"name": "read_file", "arguments": {"path": "a"}, "reason": "look"}"#.into(),
            None,
        ),
        (
            "type not function",
            r#"{"type": "object", "name": "read_file", "arguments": {}}"#.into(),
            None,
        ),
        (
            "plain data object",
            r#"{"path": "src/main.rs"}"#.into(),
            None,
        ),
        (
            "a config file in a fence",
            "```json\n{\"name\": \"my-package\", \"version\": \"1.0.0\"}\n```".into(),
            None,
        ),
        (
            "a package.json whose name is a tool",
            r#"{"name": "bash", "version": "1.0.0", "arguments": {}}"#.into(),
            None,
        ),
        (
            "truncated JSON",
            r#"{"name": "read_file", "arguments": {"path": "src/ma"#.into(),
            None,
        ),
        (
            "code fence of code",
            "```rust\nfn main() {}\n```".into(),
            None,
        ),
        ("empty array", "[]".into(), None),
        ("a comma with no call after it", format!("{one},"), None),
        ("two commas", format!("{one},,{bash}"), None),
        (
            "a comma, then prose",
            format!("{one}, then I will run it"),
            None,
        ),
        ("a JSON string", r#""read_file""#.into(), None),
        (
            "name not a string",
            r#"{"name": 7, "arguments": {}}"#.into(),
            None,
        ),
        (
            "wrapper with its own name",
            r#"{"name": "x", "function": {"name": "read_file", "arguments": {}}}"#.into(),
            None,
        ),
        (
            "unclosed fence followed by text",
            format!("```json\n{one}\nand more"),
            None,
        ),
    ]
}

#[test]
fn shapes_and_near_misses() {
    for (what, text, want) in cases() {
        let got = parse(&text, &offered).map(|calls| {
            calls
                .into_iter()
                .map(|c| (c.name, c.arguments))
                .collect::<Vec<_>>()
        });
        let want = want.map(|calls| {
            calls
                .into_iter()
                .map(|(n, a)| (n.to_string(), a))
                .collect::<Vec<_>>()
        });
        assert_eq!(got, want, "{what}: {text}");
    }
}

fn spec(name: &str) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: String::new(),
        input_schema: json!({"type": "object"}),
    }
}

fn request(tool_choice: ToolChoice) -> ModelRequest {
    ModelRequest {
        model: "m".into(),
        system: String::new(),
        messages: vec![Message::user("read main")],
        tools: vec![spec("read_file")],
        tool_choice,
        max_tokens: 100,
        effort: None,
    }
}

fn response(content: Vec<Block>) -> ModelResponse {
    ModelResponse {
        content,
        usage: Usage::default(),
        stop_reason: Some("end_turn".into()),
        web_search_requests: 0,
    }
}

#[test]
fn adopt_turns_the_text_into_calls_marked_as_read_from_text() {
    let text = "```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.rs\"}}\n```";
    let resp = adopt(
        response(vec![
            Block::Thinking {
                thinking: "the file".into(),
                signature: String::new(),
            },
            Block::text(text),
        ]),
        &request(ToolChoice::Auto),
    );
    assert_eq!(resp.stop_reason.as_deref(), Some("tool_use"));
    assert!(matches!(resp.content.first(), Some(Block::Thinking { .. })));
    match resp.content.get(1) {
        Some(Block::ToolUse {
            id,
            name,
            input,
            from_text,
        }) => {
            assert!(id.starts_with("call_"), "{id}");
            assert_eq!(
                (name.as_str(), input),
                ("read_file", &json!({"path": "a.rs"}))
            );
            assert!(*from_text);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(resp.content.len(), 2);
    // The mark survives the transcript (serde) and is absent from native calls.
    let line = serde_json::to_string(&resp.message()).unwrap_or_default();
    assert!(line.contains(r#""from_text":true"#), "{line}");
    let native = Block::ToolUse {
        id: "c".into(),
        name: "read_file".into(),
        input: json!({}),
        from_text: false,
    };
    let native_line = serde_json::to_string(&native).unwrap_or_default();
    assert!(!native_line.contains("from_text"), "{native_line}");
    let back: Block =
        serde_json::from_str(r#"{"type":"tool_use","id":"c","name":"read_file","input":{}}"#)
            .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(back, native);
}

#[test]
fn adopt_leaves_other_replies_alone() {
    let call = r#"{"name": "read_file", "arguments": {"path": "a.rs"}}"#;
    // Tool use off (the handoff's writing turn): the text is the answer.
    let off = response(vec![Block::text(call)]);
    assert_eq!(adopt(off.clone(), &request(ToolChoice::None)), off);
    // A native call already there.
    let native = response(vec![
        Block::text(call),
        Block::ToolUse {
            id: "x".into(),
            name: "read_file".into(),
            input: json!({}),
            from_text: false,
        },
    ]);
    assert_eq!(adopt(native.clone(), &request(ToolChoice::Auto)), native);
    // No tools offered.
    let mut bare = request(ToolChoice::Auto);
    bare.tools.clear();
    let plain = response(vec![Block::text(call)]);
    assert_eq!(adopt(plain.clone(), &bare), plain);
    // Prose.
    let prose = response(vec![Block::text(format!("Here: {call}"))]);
    assert_eq!(adopt(prose.clone(), &request(ToolChoice::Auto)), prose);
}
