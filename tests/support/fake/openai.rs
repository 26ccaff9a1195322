//! Byte-exact OpenAI Chat Completions stream replies, and the API's own tool-history validation.

use serde_json::Value;

use super::anthropic::{fragments, pieces};
use super::{Reply, U};

/// The model name the scripted streams report.
pub const MODEL: &str = "gpt-4o-mini-2024-07-18";

fn js(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// One `data:` line of a chunk with this `choices` JSON and `usage` JSON.
fn chunk(choices: &str, usage: &str) -> Vec<u8> {
    format!(
        "data: {{\"id\":\"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG\",\"object\":\"chat.completion.chunk\",\"created\":1741570283,\"model\":\"{MODEL}\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_06737a9306\",\"choices\":{choices},\"usage\":{usage}}}\n\n"
    )
    .into_bytes()
}

fn delta(d: &str, finish: Option<&str>) -> Vec<u8> {
    let finish = finish.map(js).unwrap_or_else(|| "null".into());
    chunk(
        &format!(r#"[{{"index":0,"delta":{d},"logprobs":null,"finish_reason":{finish}}}]"#),
        "null",
    )
}

/// A scripted Chat Completions response.
#[derive(Debug, Clone)]
pub struct Stream {
    usage: U,
    reasoning: Option<String>,
    text: Option<String>,
    calls: Vec<(String, String, String)>,
    finish: Option<String>,
    include_usage: bool,
}

impl Stream {
    /// An empty response whose final usage chunk reports `usage` (`prompt_tokens = input +
    /// cache_creation + cache_read`, `cached_tokens = cache_read`).
    pub fn new(usage: U) -> Stream {
        Stream {
            usage,
            reasoning: None,
            text: None,
            calls: Vec::new(),
            finish: None,
            include_usage: true,
        }
    }

    /// `delta.reasoning_content` pieces before the answer (DeepSeek, vLLM, llama.cpp).
    pub fn reasoning(mut self, text: &str) -> Stream {
        self.reasoning = Some(text.to_owned());
        self
    }

    /// `delta.content` pieces.
    pub fn text(mut self, text: &str) -> Stream {
        self.text = Some(text.to_owned());
        self
    }

    /// A tool call whose `arguments` arrive in fragments.
    pub fn tool(mut self, id: &str, name: &str, arguments: &str) -> Stream {
        self.calls
            .push((id.to_owned(), name.to_owned(), arguments.to_owned()));
        self
    }

    /// The finish reason (default `tool_calls` with tools, else `stop`).
    pub fn finish_reason(mut self, r: &str) -> Stream {
        self.finish = Some(r.to_owned());
        self
    }

    /// Leave out the usage chunk (a server that ignores `stream_options`).
    pub fn no_usage(mut self) -> Stream {
        self.include_usage = false;
        self
    }

    /// Every chunk, one per element, ending with `data: [DONE]`.
    pub fn events(&self) -> Vec<Vec<u8>> {
        let mut out = vec![delta(
            r#"{"role":"assistant","content":"","refusal":null}"#,
            None,
        )];
        if let Some(r) = &self.reasoning {
            for p in pieces(r) {
                out.push(delta(
                    &format!(r#"{{"reasoning_content":{}}}"#, js(&p)),
                    None,
                ));
            }
        }
        if let Some(t) = &self.text {
            for p in pieces(t) {
                out.push(delta(&format!(r#"{{"content":{}}}"#, js(&p)), None));
            }
        }
        for (i, (id, name, args)) in self.calls.iter().enumerate() {
            out.push(delta(
                &format!(
                    r#"{{"tool_calls":[{{"index":{i},"id":{},"type":"function","function":{{"name":{},"arguments":""}}}}]}}"#,
                    js(id),
                    js(name)
                ),
                None,
            ));
            for f in fragments(args, 7) {
                out.push(delta(
                    &format!(
                        r#"{{"tool_calls":[{{"index":{i},"function":{{"arguments":{}}}}}]}}"#,
                        js(&f)
                    ),
                    None,
                ));
            }
        }
        let finish = self.finish.clone().unwrap_or_else(|| {
            if self.calls.is_empty() {
                "stop"
            } else {
                "tool_calls"
            }
            .to_owned()
        });
        out.push(delta("{}", Some(&finish)));
        if self.include_usage {
            let u = self.usage;
            let prompt = u.input + u.cache_creation + u.cache_read;
            out.push(chunk(
                "[]",
                &format!(
                    r#"{{"prompt_tokens":{prompt},"completion_tokens":{},"total_tokens":{},"prompt_tokens_details":{{"cached_tokens":{},"audio_tokens":0}},"completion_tokens_details":{{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}}}"#,
                    u.output,
                    prompt + u.output,
                    u.cache_read
                ),
            ));
        }
        out.push(b"data: [DONE]\n\n".to_vec());
        out
    }

    /// A reply sending one chunk per write.
    pub fn reply(&self) -> Reply {
        Reply::stream(self.events())
    }

    /// The whole body.
    pub fn bytes(&self) -> Vec<u8> {
        self.events().concat()
    }
}

/// A plain text answer.
pub fn text(text: &str, usage: U) -> Reply {
    Stream::new(usage).text(text).reply()
}

/// Tool calls `(id, name, arguments)` with arguments streamed in fragments.
pub fn tool_calls(calls: &[(&str, &str, &str)], usage: U) -> Reply {
    let mut s = Stream::new(usage);
    for (id, name, args) in calls {
        s = s.tool(id, name, args);
    }
    s.reply()
}

/// The body of an API error.
pub fn error_json(message: &str, ty: &str, code: Option<&str>) -> String {
    let code = code.map(js).unwrap_or_else(|| "null".into());
    format!(
        r#"{{"error":{{"message":{},"type":{},"param":null,"code":{code}}}}}"#,
        js(message),
        js(ty)
    )
}

/// A stream that sends some text, then an `{"error": …}` chunk and ends.
pub fn error_chunk(text: &str, message: &str, ty: &str, code: Option<&str>) -> Reply {
    let mut chunks = vec![delta(r#"{"role":"assistant","content":""}"#, None)];
    if !text.is_empty() {
        chunks.push(delta(&format!(r#"{{"content":{}}}"#, js(text)), None));
    }
    chunks.push(format!("data: {}\n\n", error_json(message, ty, code)).into_bytes());
    Reply::Sse {
        chunks,
        delay: None,
    }
}

/// An HTTP error with the API's JSON body.
pub fn error_status(status: u16, message: &str, ty: &str, code: Option<&str>) -> Reply {
    Reply::status(status, error_json(message, ty, code))
}

fn role(m: &Value) -> Option<&str> {
    m.get("role").and_then(Value::as_str)
}

/// The 400 body the API answers for a request with an invalid tool history, if any.
pub fn validate(body: &Value) -> Option<String> {
    let msgs = body.get("messages")?.as_array()?;
    let bad = |m: String| Some(error_json(&m, "invalid_request_error", None));
    for (i, m) in msgs.iter().enumerate() {
        if role(m) == Some("assistant") {
            let calls: Vec<&str> = m
                .get("tool_calls")
                .and_then(Value::as_array)
                .map(|c| {
                    c.iter()
                        .filter_map(|c| c.get("id").and_then(Value::as_str))
                        .collect()
                })
                .unwrap_or_default();
            let answered: Vec<&str> = msgs[i + 1..]
                .iter()
                .take_while(|n| role(n) == Some("tool"))
                .filter_map(|n| n.get("tool_call_id").and_then(Value::as_str))
                .collect();
            let missing: Vec<&str> = calls
                .into_iter()
                .filter(|id| !answered.contains(id))
                .collect();
            if !missing.is_empty() {
                return bad(format!(
                    "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: {}",
                    missing.join(", ")
                ));
            }
        }
        if role(m) == Some("tool") {
            let id = m.get("tool_call_id").and_then(Value::as_str).unwrap_or("");
            let owner = msgs[..i].iter().rev().find(|p| role(p) != Some("tool"));
            let ok = owner.is_some_and(|p| {
                role(p) == Some("assistant")
                    && p.get("tool_calls")
                        .and_then(Value::as_array)
                        .is_some_and(|c| {
                            c.iter()
                                .any(|c| c.get("id").and_then(Value::as_str) == Some(id))
                        })
            });
            if !ok {
                return bad(
                    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.".into(),
                );
            }
        }
    }
    None
}
