//! `/context`: what fills the context window — the system prompt, the tool specs, and the
//! conversation by kind (the user's messages, the files attached to them, the replies, the
//! calls, their results) — in characters and estimated tokens, beside the last reading.

use crate::engine::context::{Thresholds, fmt_tokens, fmt_window};
use crate::engine::types::{Block, Message, Role};

/// The characters of each part of what the next request sends.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct Fill {
    pub(super) system: usize,
    pub(super) tools: usize,
    pub(super) user: usize,
    pub(super) attached: usize,
    pub(super) images: usize,
    pub(super) replies: usize,
    pub(super) thinking: usize,
    pub(super) calls: usize,
    pub(super) results: usize,
    pub(super) messages: usize,
}

impl Fill {
    /// The parts of a session with `system` prompt and `tools` specs (characters) holding
    /// `messages`.
    pub(super) fn of(system: usize, tools: usize, messages: &[Message]) -> Fill {
        let mut f = Fill {
            system,
            tools,
            messages: messages.len(),
            ..Fill::default()
        };
        for m in messages {
            for b in &m.content {
                match (m.role, b) {
                    (Role::User, Block::Text { text })
                        if text.starts_with(crate::engine::mentions::ATTACHMENT_OPEN) =>
                    {
                        f.attached += text.len()
                    }
                    (Role::User, Block::Text { text }) => f.user += text.len(),
                    (_, Block::Text { text }) => f.replies += text.len(),
                    (_, Block::Thinking { thinking, .. }) => f.thinking += thinking.len(),
                    (_, Block::ToolUse { input, name, .. }) => {
                        f.calls += name.len() + input.to_string().len()
                    }
                    (_, Block::ToolResult { content, .. }) => f.results += content.len(),
                    (_, Block::Image { .. }) => f.images += b.char_len(),
                    (_, Block::ServerToolUse { .. }) => f.calls += b.char_len(),
                    (_, Block::WebSearchToolResult { .. }) => f.results += b.char_len(),
                }
            }
        }
        f
    }

    /// The report: one line per part (characters, estimated tokens by `estimate`), the total,
    /// and where the last reading `ctx` stands against `t`.
    pub(super) fn report(
        &self,
        ctx: u64,
        t: Thresholds,
        estimate: impl Fn(usize) -> u64,
    ) -> String {
        let rows = [
            ("system prompt", self.system),
            ("tool specs", self.tools),
            ("your messages", self.user),
            ("attached files", self.attached),
            ("images", self.images),
            ("replies", self.replies),
            ("thinking", self.thinking),
            ("tool calls", self.calls),
            ("tool results", self.results),
        ];
        let total: usize = rows.iter().map(|(_, c)| c).sum();
        let reading = if ctx > 0 {
            format!("{} by the last reading", fmt_tokens(ctx))
        } else {
            "no reading yet".to_string()
        };
        let mut lines = vec![format!(
            "Context: {reading} of a {} window (handoff at {}) · {} messages",
            fmt_window(t.window),
            fmt_window(t.at),
            self.messages
        )];
        for (name, chars) in rows {
            lines.push(format!(
                "  {name:<15} {:>10} chars  ~{:>7} tokens",
                group(chars),
                fmt_tokens(estimate(chars))
            ));
        }
        lines.push(format!(
            "  {:<15} {:>10} chars  ~{:>7} tokens (estimated)",
            "total",
            group(total),
            fmt_tokens(estimate(total))
        ));
        lines.join("\n")
    }
}

/// `12345` as `12,345`.
fn group(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_block_counts_where_it_belongs() {
        let messages = vec![
            Message::user("hello".to_string()),
            Message {
                role: Role::User,
                content: vec![Block::text(format!(
                    "{}a.rs\">\nfn main() {{}}",
                    crate::engine::mentions::ATTACHMENT_OPEN
                ))],
            },
            Message {
                role: Role::Assistant,
                content: vec![
                    Block::text("hi there"),
                    Block::ToolUse {
                        id: "t".into(),
                        name: "bash".into(),
                        input: json!({"command": "ls"}),
                        from_text: false,
                    },
                ],
            },
            Message {
                role: Role::User,
                content: vec![Block::ToolResult {
                    tool_use_id: "t".into(),
                    content: "a.rs\nb.rs".into(),
                    is_error: false,
                }],
            },
        ];
        let f = Fill::of(100, 2_000, &messages);
        assert_eq!((f.user, f.replies, f.results), (5, 8, 9));
        assert_eq!(f.calls, "bash".len() + r#"{"command":"ls"}"#.len());
        assert!(f.attached > 10);
        let report = f.report(0, Thresholds::new(200_000, 50_000), |c| (c / 4) as u64);
        assert!(
            report.starts_with("Context: no reading yet of a 200K window"),
            "{report}"
        );
        assert!(
            report.contains("tool specs           2,000 chars"),
            "{report}"
        );
        assert_eq!(group(1_234_567), "1,234,567");
    }
}
