//! Tool calls a model wrote as text. Small local models often answer a tool request with the
//! call as a JSON object in their text (`{"name": "read_file", "arguments": {...}}`, often in a
//! code fence) instead of a native `tool_calls` entry; Qwen's and Hermes's chat templates write
//! `<tool_call>{...}</tool_call>`. A reply with no native call whose *whole* text is one or more
//! such calls of tools that were offered is read as those calls.
//!
//! What is read: a JSON object with `name` and `arguments` (or `parameters`, as Llama writes it;
//! arguments as an object or as a JSON string holding one), also wrapped as OpenAI writes it
//! (`{"type": "function", "function": {...}}`); several in a row (also with a comma between
//! them, as Qwen2.5-Coder writes them), in a JSON array, each in a code fence, or each in `<tool_call>` tags (the last closing tag may be missing: the server stops at
//! it); a leading `[TOOL_CALLS]` or `<|python_tag|>` marker is skipped.
//!
//! What is never read: text with anything else in it (prose that contains JSON, a call followed
//! by an explanation), a call of a tool that was not offered (then none of the calls is run), an
//! object with keys a call does not have, arguments that are not an object.

use serde_json::{Map, Value};

use crate::engine::fsutil::new_id;
use crate::engine::types::{Block, ModelRequest, ModelResponse, ToolChoice};

/// A call read from text: the tool's name and its arguments (an object).
#[derive(Debug, Clone, PartialEq)]
pub struct TextCall {
    pub name: String,
    pub arguments: Value,
}

/// Keys a call object may have.
const CALL_KEYS: &[&str] = &["name", "arguments", "parameters", "type", "id", "function"];
/// Markers some templates put before their calls.
const MARKERS: &[&str] = &["[TOOL_CALLS]", "<|python_tag|>"];
const OPEN_TAG: &str = "<tool_call>";
const CLOSE_TAG: &str = "</tool_call>";
const FENCE: &str = "```";

/// The arguments of a call: an object, or a JSON string holding one (an empty string is `{}`).
fn arguments(v: &Value) -> Option<Value> {
    match v {
        Value::Object(_) => Some(v.clone()),
        Value::String(s) if s.trim().is_empty() => Some(Value::Object(Map::new())),
        Value::String(s) => match serde_json::from_str::<Value>(s) {
            Ok(o @ Value::Object(_)) => Some(o),
            _ => None,
        },
        _ => None,
    }
}

/// One call object, if it is one (see the module header).
fn call(v: &Value, offered: &dyn Fn(&str) -> bool) -> Option<TextCall> {
    let obj = v.as_object()?;
    if obj.keys().any(|k| !CALL_KEYS.contains(&k.as_str())) {
        return None;
    }
    if let Some(t) = obj.get("type")
        && t.as_str() != Some("function")
    {
        return None;
    }
    if let Some(inner) = obj.get("function") {
        // `{"type": "function", "function": {...}}`: the name and arguments are inside.
        if obj.contains_key("name") || obj.contains_key("arguments") {
            return None;
        }
        return call(inner, offered);
    }
    let name = obj.get("name")?.as_str()?.trim();
    let args = match (obj.get("arguments"), obj.get("parameters")) {
        (Some(a), None) | (None, Some(a)) => arguments(a)?,
        _ => return None,
    };
    offered(name).then(|| TextCall {
        name: name.to_string(),
        arguments: args,
    })
}

/// The calls one JSON value holds: an object, or a non-empty array of them.
fn calls_of(v: &Value, offered: &dyn Fn(&str) -> bool, out: &mut Vec<TextCall>) -> Option<()> {
    match v {
        Value::Array(items) if !items.is_empty() => {
            for item in items {
                out.push(call(item, offered)?);
            }
            Some(())
        }
        Value::Object(_) => {
            out.push(call(v, offered)?);
            Some(())
        }
        _ => None,
    }
}

/// Every JSON value of `text` (whitespace between them, or a comma as in an array without its
/// brackets), each one or more calls.
fn json_calls(text: &str, offered: &dyn Fn(&str) -> bool, out: &mut Vec<TextCall>) -> Option<()> {
    let mut rest = text.trim();
    if !rest.starts_with(['{', '[']) {
        return None;
    }
    while !rest.is_empty() {
        let mut stream = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
        let v = stream.next()?.ok()?;
        calls_of(&v, offered, out)?;
        rest = after_separator(rest.get(stream.byte_offset()..)?)?;
    }
    Some(())
}

/// What follows a call: the rest without the whitespace or the one comma before the next call;
/// None for a comma with nothing after it.
fn after_separator(rest: &str) -> Option<&str> {
    let rest = rest.trim_start();
    match rest.strip_prefix(',') {
        Some(next) => {
            let next = next.trim_start();
            (!next.is_empty()).then_some(next)
        }
        None => Some(rest),
    }
}

/// A fence's content: after the opening line (```` ``` ```` and an info word such as `json`),
/// up to a line that is only the closing fence. Returns the content and the rest after it.
fn fence(text: &str) -> Option<(&str, &str)> {
    let after = text.strip_prefix(FENCE)?;
    let (info, body) = after.split_once('\n')?;
    let info = info.trim();
    if info.contains(char::is_whitespace) || info.starts_with('`') {
        return None;
    }
    let mut at = 0;
    for line in body.split_inclusive('\n') {
        if line.trim() == FENCE {
            let content = body.get(..at)?;
            let rest = body.get(at + line.len()..)?;
            return Some((content, rest));
        }
        at += line.len();
    }
    // The reply ended inside the fence: the closing line is `` ``` `` without its newline.
    let content = body.trim_end().strip_suffix(FENCE)?;
    Some((content, ""))
}

/// A `<tool_call>` block's content and the rest after its closing tag (a missing closing tag
/// ends the text).
fn tagged(text: &str) -> Option<(&str, &str)> {
    let after = text.strip_prefix(OPEN_TAG)?;
    match after.find(CLOSE_TAG) {
        Some(end) => Some((after.get(..end)?, after.get(end + CLOSE_TAG.len()..)?)),
        None => Some((after, "")),
    }
}

/// The content of one segment: bare JSON or a fence.
fn segment_calls(
    content: &str,
    offered: &dyn Fn(&str) -> bool,
    out: &mut Vec<TextCall>,
) -> Option<()> {
    let content = content.trim();
    match fence(content) {
        Some((inner, rest)) if rest.trim().is_empty() => json_calls(inner, offered, out),
        Some(_) => None,
        None => json_calls(content, offered, out),
    }
}

/// The calls `text` is made of, when it is made of nothing else and every call names a tool
/// `offered` accepts; None otherwise.
pub fn parse(text: &str, offered: &dyn Fn(&str) -> bool) -> Option<Vec<TextCall>> {
    let mut out = Vec::new();
    let mut rest = text.trim();
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        if let Some(m) = MARKERS.iter().find(|m| rest.starts_with(**m)) {
            rest = rest.get(m.len()..)?.trim_start();
            continue;
        }
        let after = if rest.starts_with(OPEN_TAG) {
            let (inner, after) = tagged(rest)?;
            segment_calls(inner, offered, &mut out)?;
            after
        } else if rest.starts_with(FENCE) {
            let (inner, after) = fence(rest)?;
            json_calls(inner, offered, &mut out)?;
            after
        } else if rest.starts_with(['{', '[']) {
            // Bare JSON up to the next fence or tag (JSON strings may hold either, so the
            // values are read one by one).
            let mut stream = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
            let v = stream.next()?.ok()?;
            calls_of(&v, offered, &mut out)?;
            after_separator(rest.get(stream.byte_offset()..)?)?
        } else {
            return None;
        };
        rest = after.trim_start();
    }
    (!out.is_empty()).then_some(out)
}

/// A response whose whole text is tool calls of the request's tools, as those calls (marked as
/// read from text); any other response as it was. Only when tool use is on and the response has
/// no native call.
pub fn adopt(mut resp: ModelResponse, req: &ModelRequest) -> ModelResponse {
    if req.tool_choice != ToolChoice::Auto
        || req.tools.is_empty()
        || resp
            .content
            .iter()
            .any(|b| matches!(b, Block::ToolUse { .. }))
    {
        return resp;
    }
    let offered = |name: &str| req.tools.iter().any(|t| t.name == name);
    let Some(calls) = parse(&resp.text(), &offered) else {
        return resp;
    };
    // Thinking blocks stay; the text was the calls.
    resp.content.retain(|b| matches!(b, Block::Thinking { .. }));
    resp.content
        .extend(calls.into_iter().map(|c| Block::ToolUse {
            id: format!("call_{}", new_id()),
            name: c.name,
            input: c.arguments,
            from_text: true,
        }));
    resp.stop_reason = Some("tool_use".to_owned());
    resp
}

#[cfg(test)]
#[path = "text_calls_tests.rs"]
mod tests;
