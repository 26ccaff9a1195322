//! Rescue on overflow: when a request overflows the context window, the writing turn
//! runs once more on a *reduced copy* of the history sized to fit the window minus the writing
//! reserve, instead of falling straight back to the mechanical degraded document.
//!
//! Two reductions, in this order, each only as far as needed:
//! 1. **Stubs**: old tool results (oldest first) are replaced by one line naming the tool, its
//!    arguments and the size elided — the model still sees *what* was run, only not its output.
//! 2. **Drops**: if every result is a stub and it still does not fit, the oldest turns after the
//!    first user message go, whole: a cut never splits a `tool_use` from its `tool_result`, and the
//!    history still alternates (the first user message is followed by an assistant message). A note
//!    at the end of the first message says how many messages were dropped there.
//!
//! If even the first message and the last exchange do not fit, there is no reduced copy and the
//! caller writes the degraded document. Everything here is pure: sizes come from the caller.

use std::collections::HashMap;

use crate::engine::types::{Block, Message, Role};

/// Arguments shown in a stub, at most (characters).
pub(crate) const STUB_ARGS_CHARS: usize = 160;
/// The reduced copy aims at this share of the budget: estimates are estimates.
pub(crate) const MARGIN: f64 = 0.95;
/// Without a count in the overflow message, a history the estimate says fits is cut to this share
/// of its estimate: the provider said it does not fit, so the estimate is wrong.
pub(crate) const BLIND_SHARE: f64 = 0.75;

/// A reduced copy of a history.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Reduced {
    pub messages: Vec<Message>,
    /// Tool results replaced by stubs.
    pub stubbed: usize,
    /// Messages dropped after the first user message.
    pub dropped: usize,
    /// Its size, in the caller's units (the fixed part included).
    pub size: u64,
}

impl Reduced {
    /// Nothing had to go.
    pub fn is_whole(&self) -> bool {
        self.stubbed == 0 && self.dropped == 0
    }
}

/// The one-line stand-in for a tool result: the tool, its arguments, what was elided.
pub fn stub(name: &str, input: &serde_json::Value, chars: usize) -> String {
    let args = input.to_string();
    let shown: String = args.chars().take(STUB_ARGS_CHARS).collect();
    let more = if shown.len() < args.len() { "…" } else { "" };
    format!(
        "[tool result elided to fit the context window: {name} {shown}{more} returned {chars} characters]"
    )
}

/// The note left in the first message where messages were dropped.
pub(crate) fn dropped_note(n: usize) -> String {
    format!(
        "[{n} message{} of this conversation after this one were dropped here to fit the context \
         window; the workspace shows what they did]",
        if n == 1 { "" } else { "s" }
    )
}

/// Fit `messages` into `budget`: `fixed` is what the request holds besides the history (system
/// prompt, tools, the writing prompt), `size` measures one message, in the same units. Returns the
/// history as it is when it fits, a reduced copy when one fits, or None.
pub fn reduce(
    messages: &[Message],
    fixed: u64,
    budget: u64,
    size: impl Fn(&Message) -> u64,
) -> Option<Reduced> {
    let mut out: Vec<Message> = messages.to_vec();
    let mut sizes: Vec<u64> = out.iter().map(&size).collect();
    let total = |sizes: &[u64]| fixed.saturating_add(sizes.iter().sum::<u64>());
    // The history with nothing dropped, stubbed or not.
    let undropped = |messages: Vec<Message>, sizes: &[u64], stubbed: usize| Reduced {
        size: total(sizes),
        messages,
        stubbed,
        dropped: 0,
    };
    let mut stubbed = 0;
    if total(&sizes) <= budget {
        return Some(undropped(out, &sizes, stubbed));
    }
    // 1. Stubs, oldest result first.
    let calls: HashMap<String, (String, serde_json::Value)> = messages
        .iter()
        .flat_map(Message::tool_uses)
        .map(|(id, name, input)| (id.to_string(), (name.to_string(), input.clone())))
        .collect();
    for (i, m) in out.iter_mut().enumerate() {
        let mut changed = false;
        for b in &mut m.content {
            if let Block::ToolResult {
                tool_use_id,
                content,
                ..
            } = b
            {
                let (name, input) = calls
                    .get(tool_use_id)
                    .cloned()
                    .unwrap_or_else(|| ("a tool".to_string(), serde_json::Value::Null));
                let line = stub(&name, &input, content.chars().count());
                if line.len() < content.len() {
                    *content = line;
                    stubbed += 1;
                    changed = true;
                }
            }
        }
        if changed && let Some(s) = sizes.get_mut(i) {
            *s = size(m);
            if total(&sizes) <= budget {
                return Some(undropped(out, &sizes, stubbed));
            }
        }
    }
    // 2. Drops: messages first+1 .. b go, where b is an assistant message that keeps its results.
    let first = out.iter().position(|m| m.role == Role::User)?;
    let candidates: Vec<usize> = (first + 1..out.len())
        .filter(|&b| out.get(b).is_some_and(|m| m.role == Role::Assistant))
        .collect();
    let head: u64 = sizes.iter().take(first + 1).sum();
    for b in candidates {
        let dropped = b - first - 1;
        if dropped == 0 {
            continue;
        }
        let note = dropped_note(dropped);
        let mut head_msg = out.get(first)?.clone();
        head_msg.content.push(Block::text(note));
        let head_size = head - sizes.get(first).copied().unwrap_or(0) + size(&head_msg);
        let rest: u64 = sizes.iter().skip(b).sum();
        let fits = fixed.saturating_add(head_size).saturating_add(rest);
        if fits <= budget {
            let mut kept: Vec<Message> = out.iter().take(first).cloned().collect();
            kept.push(head_msg);
            kept.extend(out.iter().skip(b).cloned());
            return Some(Reduced {
                messages: kept,
                stubbed,
                dropped,
                size: fits,
            });
        }
    }
    None
}

/// The input size an overflow message states besides the limit, e.g. `205030` in `prompt is too
/// long: 205030 tokens > 200000 maximum`, or `188240` in `188240 + 21333 > 200000`: the largest
/// number other than the limit.
pub(crate) fn stated_count(text: &str, limit: Option<u64>) -> Option<u64> {
    let mut numbers = Vec::new();
    let mut cur = String::new();
    for c in text.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_digit() {
            cur.push(c);
        } else if c == ',' && !cur.is_empty() {
            // 205,030: a thousands separator.
        } else if !cur.is_empty() {
            if let Ok(n) = cur.parse::<u64>() {
                numbers.push(n);
            }
            cur.clear();
        }
    }
    numbers
        .into_iter()
        .filter(|n| *n >= 100 && Some(*n) != limit)
        .max()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(id: &str, name: &str, input: serde_json::Value) -> Message {
        Message {
            role: Role::Assistant,
            content: vec![
                Block::text("calling"),
                Block::ToolUse {
                    id: id.into(),
                    name: name.into(),
                    input,
                    from_text: false,
                },
            ],
        }
    }

    fn result(id: &str, chars: usize) -> Message {
        Message {
            role: Role::User,
            content: vec![Block::ToolResult {
                tool_use_id: id.into(),
                content: "x".repeat(chars),
                is_error: false,
            }],
        }
    }

    fn size(m: &Message) -> u64 {
        m.char_len() as u64
    }

    fn history() -> Vec<Message> {
        vec![
            Message::user("the task"),
            call("a", "bash", json!({"command": "cargo test"})),
            result("a", 5_000),
            call("b", "read_file", json!({"path": "src/lib.rs"})),
            result("b", 3_000),
            call("c", "grep", json!({"pattern": "fn main"})),
            result("c", 1_000),
        ]
    }

    #[test]
    fn a_history_that_fits_is_kept_whole() {
        let h = history();
        let r = reduce(&h, 100, 1_000_000, size).unwrap();
        assert!(r.is_whole());
        assert_eq!(r.messages, h);
        assert_eq!(r.size, 100 + h.iter().map(size).sum::<u64>());
    }

    #[test]
    fn old_results_become_stubs_oldest_first_and_only_as_needed() {
        let h = history();
        let full: u64 = h.iter().map(size).sum();
        // Room for everything but the first result.
        let r = reduce(&h, 0, full - 4_000, size).unwrap();
        assert_eq!((r.stubbed, r.dropped), (1, 0));
        let Block::ToolResult { content, .. } = &r.messages[2].content[0] else {
            panic!()
        };
        assert_eq!(
            content,
            r#"[tool result elided to fit the context window: bash {"command":"cargo test"} returned 5000 characters]"#
        );
        assert_eq!(r.messages[4], h[4], "the newer results stay");
        assert!(r.size <= full - 4_000);
        // Tighter: the second goes too, the newest stays.
        let r = reduce(&h, 0, full - 7_500, size).unwrap();
        assert_eq!((r.stubbed, r.dropped), (2, 0));
        assert_eq!(r.messages[6], h[6]);
    }

    #[test]
    fn then_the_oldest_turns_after_the_first_message_go_in_pairs() {
        let h = history();
        // Stubs are ~100 characters: with all three stubbed the history is ~400 characters.
        let r = reduce(&h, 0, 330, size).unwrap();
        assert!(r.dropped > 0, "{r:#?}");
        assert_eq!(r.messages[0].role, Role::User);
        assert_eq!(
            r.messages[0].text(),
            format!("the task{}", dropped_note(r.dropped))
        );
        // Roles alternate and every call keeps its result.
        for w in r.messages.windows(2) {
            assert_ne!(w[0].role, w[1].role);
        }
        assert_eq!(r.messages[1].role, Role::Assistant);
        for (i, m) in r.messages.iter().enumerate() {
            for (id, _, _) in m.tool_uses() {
                assert!(
                    r.messages[i + 1].content.iter().any(
                        |b| matches!(b, Block::ToolResult { tool_use_id, .. } if tool_use_id == id)
                    ),
                    "{id} lost its result"
                );
            }
        }
        assert!(r.size <= 330);
        assert_eq!(r.messages.len() + r.dropped, h.len());
    }

    #[test]
    fn nothing_fits_below_the_first_message_and_the_last_exchange() {
        let h = history();
        assert!(reduce(&h, 0, 50, size).is_none());
        assert!(
            reduce(&h, 10_000, 10_200, size).is_none(),
            "the fixed part counts"
        );
        assert!(
            reduce(&h, 0, 300, size).is_some(),
            "the same room without it does"
        );
        let alone = vec![Message::user("x".repeat(1_000))];
        assert!(reduce(&alone, 0, 999, size).is_none());
    }

    #[test]
    fn long_arguments_are_cut_in_the_stub() {
        let s = stub("write_file", &json!({"content": "y".repeat(500)}), 42);
        assert!(s.contains("write_file"));
        assert!(s.contains('…'));
        assert!(s.ends_with("returned 42 characters]"));
        assert!(s.len() < 300);
    }

    #[test]
    fn the_count_an_overflow_message_states() {
        let text = "prompt is too long: 205030 tokens > 200000 maximum";
        assert_eq!(stated_count(text, Some(200_000)), Some(205_030));
        let sum = "input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000";
        assert_eq!(stated_count(sum, Some(200_000)), Some(188_240));
        assert_eq!(
            stated_count(
                "This model's maximum context length is 8,192 tokens. However, your messages resulted in 9,000 tokens.",
                Some(8_192)
            ),
            Some(9_000)
        );
        assert_eq!(stated_count("prompt is too long", None), None);
    }
}
