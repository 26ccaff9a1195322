//! Byte-exact Anthropic Messages stream replies, and the API's own tool-history validation.

use std::collections::HashSet;

use serde_json::Value;

use super::{Reply, U};

/// The model name the scripted streams report.
pub const MODEL: &str = "claude-sonnet-4-5-20250929";

/// A JSON string literal.
fn js(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// One SSE event as the API writes it.
fn event(name: &str, data: &str) -> Vec<u8> {
    format!("event: {name}\ndata: {data}\n\n").into_bytes()
}

/// Split text into small deltas (about two words each), as the API streams them.
pub fn pieces(text: &str) -> Vec<String> {
    let words: Vec<&str> = text.split_inclusive(' ').collect();
    let out: Vec<String> = words.chunks(2).map(|c| c.concat()).collect();
    if out.is_empty() {
        vec![String::new()]
    } else {
        out
    }
}

/// Split a string into fragments of `n` characters (never inside a character).
pub fn fragments(s: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    chars.chunks(n.max(1)).map(|c| c.iter().collect()).collect()
}

#[derive(Debug, Clone)]
enum Part {
    Text(String),
    Thinking {
        thinking: String,
        signature: String,
    },
    Redacted(String),
    Tool {
        id: String,
        name: String,
        input_json: String,
    },
}

/// A scripted Anthropic response, built block by block.
///
/// ```ignore
/// server.push(Stream::new(U::new(1200, 40)).thinking("hmm", "sig").text("Reading it.").tool("toolu_1", "read", r#"{"path":"a.rs"}"#).reply());
/// ```
#[derive(Debug, Clone)]
pub struct Stream {
    usage: U,
    parts: Vec<Part>,
    stop_reason: Option<String>,
    usage_in_delta: bool,
}

impl Stream {
    /// An empty response reporting `usage`.
    pub fn new(usage: U) -> Stream {
        Stream {
            usage,
            parts: Vec::new(),
            stop_reason: None,
            usage_in_delta: false,
        }
    }

    /// A text block (streamed in several deltas).
    pub fn text(mut self, text: &str) -> Stream {
        self.parts.push(Part::Text(text.to_owned()));
        self
    }

    /// A thinking block with its signature.
    pub fn thinking(mut self, thinking: &str, signature: &str) -> Stream {
        self.parts.push(Part::Thinking {
            thinking: thinking.to_owned(),
            signature: signature.to_owned(),
        });
        self
    }

    /// A `redacted_thinking` block.
    pub fn redacted_thinking(mut self, data: &str) -> Stream {
        self.parts.push(Part::Redacted(data.to_owned()));
        self
    }

    /// A `tool_use` block whose input arrives as `input_json_delta` fragments of `input_json`
    /// (which need not be valid JSON).
    pub fn tool(mut self, id: &str, name: &str, input_json: &str) -> Stream {
        self.parts.push(Part::Tool {
            id: id.to_owned(),
            name: name.to_owned(),
            input_json: input_json.to_owned(),
        });
        self
    }

    /// The stop reason (default: `tool_use` when there is a tool block, else `end_turn`).
    pub fn stop_reason(mut self, reason: &str) -> Stream {
        self.stop_reason = Some(reason.to_owned());
        self
    }

    /// Report the full usage (input and cache numbers too) in `message_delta`, as newer API versions do.
    pub fn usage_in_delta(mut self) -> Stream {
        self.usage_in_delta = true;
        self
    }

    fn stop(&self) -> String {
        self.stop_reason.clone().unwrap_or_else(|| {
            let tools = self.parts.iter().any(|p| matches!(p, Part::Tool { .. }));
            if tools { "tool_use" } else { "end_turn" }.to_owned()
        })
    }

    /// The events up to and including the last `content_block_stop` (no `message_delta`/`message_stop`).
    pub fn head_events(&self) -> Vec<Vec<u8>> {
        let u = self.usage;
        let mut out = vec![event(
            "message_start",
            &format!(
                r#"{{"type":"message_start","message":{{"id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message","role":"assistant","model":"{MODEL}","content":[],"stop_reason":null,"stop_sequence":null,"usage":{{"input_tokens":{},"cache_creation_input_tokens":{},"cache_read_input_tokens":{},"cache_creation":{{"ephemeral_5m_input_tokens":{},"ephemeral_1h_input_tokens":0}},"output_tokens":{},"service_tier":"standard"}}}}}}"#,
                u.input,
                u.cache_creation,
                u.cache_read,
                u.cache_creation,
                u.output.min(1)
            ),
        )];
        for (i, part) in self.parts.iter().enumerate() {
            let start = |block: String| {
                event(
                    "content_block_start",
                    &format!(
                        r#"{{"type":"content_block_start","index":{i},"content_block":{block}}}"#
                    ),
                )
            };
            let delta = |d: String| {
                event(
                    "content_block_delta",
                    &format!(r#"{{"type":"content_block_delta","index":{i},"delta":{d}}}"#),
                )
            };
            match part {
                Part::Text(text) => {
                    out.push(start(r#"{"type":"text","text":""}"#.to_owned()));
                    for p in pieces(text) {
                        out.push(delta(format!(
                            r#"{{"type":"text_delta","text":{}}}"#,
                            js(&p)
                        )));
                    }
                }
                Part::Thinking {
                    thinking,
                    signature,
                } => {
                    out.push(start(
                        r#"{"type":"thinking","thinking":"","signature":""}"#.to_owned(),
                    ));
                    for p in pieces(thinking) {
                        out.push(delta(format!(
                            r#"{{"type":"thinking_delta","thinking":{}}}"#,
                            js(&p)
                        )));
                    }
                    out.push(delta(format!(
                        r#"{{"type":"signature_delta","signature":{}}}"#,
                        js(signature)
                    )));
                }
                Part::Redacted(data) => {
                    out.push(start(format!(
                        r#"{{"type":"redacted_thinking","data":{}}}"#,
                        js(data)
                    )));
                }
                Part::Tool {
                    id,
                    name,
                    input_json,
                } => {
                    out.push(start(format!(
                        r#"{{"type":"tool_use","id":{},"name":{},"input":{{}}}}"#,
                        js(id),
                        js(name)
                    )));
                    out.push(delta(
                        r#"{"type":"input_json_delta","partial_json":""}"#.to_owned(),
                    ));
                    for f in fragments(input_json, 9) {
                        out.push(delta(format!(
                            r#"{{"type":"input_json_delta","partial_json":{}}}"#,
                            js(&f)
                        )));
                    }
                }
            }
            if i == 0 {
                out.push(event("ping", r#"{"type": "ping"}"#));
            }
            out.push(event(
                "content_block_stop",
                &format!(r#"{{"type":"content_block_stop","index":{i}}}"#),
            ));
        }
        out
    }

    /// Every event of the response, one per element (how the API flushes them).
    pub fn events(&self) -> Vec<Vec<u8>> {
        let u = self.usage;
        let mut out = self.head_events();
        let usage = if self.usage_in_delta {
            format!(
                r#"{{"input_tokens":{},"cache_creation_input_tokens":{},"cache_read_input_tokens":{},"output_tokens":{}}}"#,
                u.input, u.cache_creation, u.cache_read, u.output
            )
        } else {
            format!(r#"{{"output_tokens":{}}}"#, u.output)
        };
        out.push(event(
            "message_delta",
            &format!(
                r#"{{"type":"message_delta","delta":{{"stop_reason":{},"stop_sequence":null}},"usage":{usage}}}"#,
                js(&self.stop())
            ),
        ));
        out.push(event("message_stop", r#"{"type":"message_stop"}"#));
        out
    }

    /// The whole body.
    pub fn bytes(&self) -> Vec<u8> {
        self.events().concat()
    }

    /// A reply sending one event per chunk.
    pub fn reply(&self) -> Reply {
        Reply::stream(self.events())
    }
}

/// A plain text answer.
pub fn text(text: &str, usage: U) -> Reply {
    Stream::new(usage).text(text).reply()
}

/// A single tool call whose arguments stream as fragments of `input_json`.
pub fn tool_use(id: &str, name: &str, input_json: &str, usage: U) -> Reply {
    Stream::new(usage).tool(id, name, input_json).reply()
}

/// The usage the fake counted for a request, with `output` tokens written.
pub fn counted_usage(c: super::cache::Counted, output: u64) -> U {
    U {
        input: c.input,
        output,
        cache_creation: c.cache_creation,
        cache_read: c.cache_read,
    }
}

/// A text reply whose usage is what the fake counted for the request (input and prompt cache).
pub fn text_counted(text: &str, output: u64) -> Reply {
    let text = text.to_owned();
    Reply::lazy(move |_, c| Stream::new(counted_usage(c, output)).text(&text).reply())
}

/// A tool call whose usage is what the fake counted for the request.
pub fn tool_use_counted(id: &str, name: &str, input_json: &str, output: u64) -> Reply {
    let (id, name, input) = (id.to_owned(), name.to_owned(), input_json.to_owned());
    Reply::lazy(move |_, c| {
        Stream::new(counted_usage(c, output))
            .tool(&id, &name, &input)
            .reply()
    })
}

/// Some text, then tool calls `(id, name, input_json)`.
pub fn text_then_tools(text: &str, tools: &[(&str, &str, &str)], usage: U) -> Reply {
    let mut s = Stream::new(usage).text(text);
    for (id, name, input) in tools {
        s = s.tool(id, name, input);
    }
    s.reply()
}

/// A thinking block (with signature) followed by text.
pub fn thinking_then_text(thinking: &str, signature: &str, text: &str, usage: U) -> Reply {
    Stream::new(usage)
        .thinking(thinking, signature)
        .text(text)
        .reply()
}

/// The body of an API error.
pub fn error_json(ty: &str, message: &str) -> String {
    format!(
        r#"{{"type":"error","error":{{"type":{},"message":{}}},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}}"#,
        js(ty),
        js(message)
    )
}

/// A stream that starts and then fails with an `error` event (e.g. `overloaded_error`).
pub fn error_event(ty: &str, message: &str) -> Reply {
    let start = Stream::new(U::default()).head_events().remove(0);
    let err = event(
        "error",
        &format!(
            r#"{{"type":"error","error":{{"type":{},"message":{}}}}}"#,
            js(ty),
            js(message)
        ),
    );
    Reply::Sse {
        chunks: vec![start, err],
        delay: None,
    }
}

/// An HTTP error with the API's JSON body.
pub fn error_status(status: u16, ty: &str, message: &str) -> Reply {
    Reply::status(status, error_json(ty, message))
}

/// `400 prompt is too long`, as the API refuses a request of `tokens` in a window of `max`.
pub fn too_long(tokens: u64, max: u64) -> Reply {
    Reply::status(
        400,
        format!(
            r#"{{"type":"error","error":{{"type":"invalid_request_error","message":"prompt is too long: {tokens} tokens > {max} maximum"}}}}"#
        ),
    )
}

/// `529 overloaded_error`, as the API answers under load.
pub fn overloaded() -> Reply {
    error_status(529, "overloaded_error", "Overloaded")
}

fn blocks(m: &Value) -> &[Value] {
    m.get("content")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

fn ids<'a>(m: &'a Value, ty: &str, key: &str) -> Vec<&'a str> {
    blocks(m)
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some(ty))
        .filter_map(|b| b.get(key).and_then(Value::as_str))
        .collect()
}

/// The 400 body the API answers for a request with an invalid tool history, if any.
pub fn validate(body: &Value) -> Option<String> {
    let msgs = body.get("messages")?.as_array()?;
    let has_tools = body
        .get("tools")
        .and_then(Value::as_array)
        .is_some_and(|t| !t.is_empty());
    let tool_blocks = msgs.iter().flat_map(blocks).any(|b| {
        matches!(
            b.get("type").and_then(Value::as_str),
            Some("tool_use" | "tool_result")
        )
    });
    let bad = |m: String| Some(error_json("invalid_request_error", &m));
    if tool_blocks && !has_tools {
        return bad(
            "Requests which include `tool_use` or `tool_result` blocks must define tools.".into(),
        );
    }
    for (i, m) in msgs.iter().enumerate() {
        let role = m.get("role").and_then(Value::as_str);
        if role == Some("assistant") {
            let uses = ids(m, "tool_use", "id");
            let answered: HashSet<&str> = msgs
                .get(i + 1)
                .filter(|n| n.get("role").and_then(Value::as_str) == Some("user"))
                .map(|n| ids(n, "tool_result", "tool_use_id").into_iter().collect())
                .unwrap_or_default();
            let missing: Vec<&str> = uses
                .into_iter()
                .filter(|id| !answered.contains(id))
                .collect();
            if !missing.is_empty() {
                return bad(format!(
                    "messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: {}. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
                    missing.join(", ")
                ));
            }
        }
        if role == Some("user") {
            let prev: HashSet<&str> = i
                .checked_sub(1)
                .and_then(|p| msgs.get(p))
                .filter(|p| p.get("role").and_then(Value::as_str) == Some("assistant"))
                .map(|p| ids(p, "tool_use", "id").into_iter().collect())
                .unwrap_or_default();
            for (j, b) in blocks(m).iter().enumerate() {
                if b.get("type").and_then(Value::as_str) != Some("tool_result") {
                    continue;
                }
                let id = b.get("tool_use_id").and_then(Value::as_str).unwrap_or("");
                if !prev.contains(id) {
                    return bad(format!(
                        "messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: {id}. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
                    ));
                }
            }
        }
    }
    None
}

/// The `tool_result` blocks of a recorded request's last message.
pub fn tool_results(body: &Value) -> Vec<Value> {
    super::body::last_blocks(body)
        .into_iter()
        .filter(|b| b["type"] == "tool_result")
        .collect()
}
