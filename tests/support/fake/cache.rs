//! The fake's token counting and prompt cache: what a request body holds, in tokens, and how much
//! of it a provider's prompt cache would have served.
//!
//! A body is a sequence of *units* in the order the Anthropic API caches them: each tool, each
//! system block, then each content block of each message (with its role). A unit's tokens are its
//! JSON (without `cache_control`) over 4, rounded up. A unit that carries `cache_control` is a
//! breakpoint: the prefix up to it is written to the cache. A later request reads the longest
//! prefix, ending at any unit boundary, that an earlier request wrote; what lies between that and
//! its own last breakpoint is written; the rest is plain input. This is the Messages API's rule
//! (minimum cacheable lengths and lifetimes aside).

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};

use serde_json::Value;

/// What a request body counts as.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Units {
    /// Per unit: the hash of the prefix ending with it, the tokens up to and with it, and whether
    /// it is a breakpoint.
    pub prefixes: Vec<(u64, u64, bool)>,
    /// All tokens of the body.
    pub total: u64,
}

/// The usage a provider would report for a request's input.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counted {
    pub input: u64,
    pub cache_creation: u64,
    pub cache_read: u64,
}

impl Counted {
    /// Everything the model saw.
    pub fn total(&self) -> u64 {
        self.input + self.cache_creation + self.cache_read
    }
}

fn strip_cache_control(v: &Value) -> (Value, bool) {
    match v {
        Value::Object(map) => {
            let marked = map.contains_key("cache_control");
            let clean = map
                .iter()
                .filter(|(k, _)| k.as_str() != "cache_control")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            (Value::Object(clean), marked)
        }
        other => (other.clone(), false),
    }
}

/// The units of a request body (Anthropic or OpenAI shape).
pub fn units(body: &Value) -> Units {
    let mut raw: Vec<(String, bool)> = Vec::new();
    if let Some(tools) = body["tools"].as_array() {
        for t in tools {
            let (clean, marked) = strip_cache_control(t);
            raw.push((format!("tool:{clean}"), marked));
        }
    }
    match &body["system"] {
        Value::String(s) => raw.push((format!("system:{}", Value::String(s.clone())), false)),
        Value::Array(blocks) => {
            for b in blocks {
                let (clean, marked) = strip_cache_control(b);
                raw.push((format!("system:{clean}"), marked));
            }
        }
        _ => {}
    }
    if let Some(messages) = body["messages"].as_array() {
        for m in messages {
            let role = m["role"].as_str().unwrap_or("?");
            match &m["content"] {
                Value::Array(blocks) => {
                    for b in blocks {
                        let (clean, marked) = strip_cache_control(b);
                        raw.push((format!("{role}:{clean}"), marked));
                    }
                }
                other => raw.push((format!("{role}:{other}"), false)),
            }
        }
    }
    let mut out = Units::default();
    let mut hash = 0u64;
    for (text, marked) in raw {
        let mut h = DefaultHasher::new();
        hash.hash(&mut h);
        text.hash(&mut h);
        hash = h.finish();
        out.total += (text.len() as u64).div_ceil(4);
        out.prefixes.push((hash, out.total, marked));
    }
    out
}

/// The prompt cache of one fake server.
#[derive(Debug, Default)]
pub struct PromptCache {
    written: HashSet<u64>,
}

impl PromptCache {
    /// Account one accepted request: what it reads, writes and sends plain; its breakpoints are
    /// written for the requests after it.
    pub fn account(&mut self, u: &Units) -> Counted {
        let read = u
            .prefixes
            .iter()
            .filter(|(h, _, _)| self.written.contains(h))
            .map(|(_, t, _)| *t)
            .max()
            .unwrap_or(0);
        let last_break = u
            .prefixes
            .iter()
            .filter(|(_, _, b)| *b)
            .map(|(_, t, _)| *t)
            .max()
            .unwrap_or(0);
        for (h, _, b) in &u.prefixes {
            if *b {
                self.written.insert(*h);
            }
        }
        let cache_creation = last_break.saturating_sub(read);
        Counted {
            input: u.total - read - cache_creation,
            cache_creation,
            cache_read: read,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn body(messages: Value) -> Value {
        json!({
            "system": [{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}],
            "tools": [{"name": "t", "cache_control": {"type": "ephemeral"}}],
            "messages": messages,
        })
    }

    #[test]
    fn a_longer_request_on_the_same_prefix_reads_the_cache() {
        let mut cache = PromptCache::default();
        let first = body(json!([
            {"role": "user", "content": [{"type": "text", "text": "hello", "cache_control": {"type": "ephemeral"}}]}
        ]));
        let u1 = units(&first);
        let c1 = cache.account(&u1);
        assert_eq!(c1.cache_read, 0);
        assert_eq!(c1.cache_creation, u1.total);
        // The same history and one more block, the marker moved to it.
        let second = body(json!([
            {"role": "user", "content": [{"type": "text", "text": "hello"}, {"type": "text", "text": "more", "cache_control": {"type": "ephemeral"}}]}
        ]));
        let u2 = units(&second);
        let c2 = cache.account(&u2);
        assert_eq!(c2.cache_read, u1.total, "{c2:?}");
        assert_eq!(c2.total(), u2.total);
        // A different history reads only the tools and the system prompt.
        let other = body(json!([{"role": "user", "content": "bye"}]));
        let c3 = cache.account(&units(&other));
        assert!(c3.cache_read > 0 && c3.cache_read < u1.total, "{c3:?}");
    }
}
