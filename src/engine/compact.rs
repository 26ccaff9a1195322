//! Compaction mode (`--no-handoff`): the pure part — which messages to summarise, the
//! summariser's request, the reference-only summary message, and splicing it in. When it is due is
//! decided below, in `context::strategy` (`CompactionStrategy`, at 80% of the window).
//!
//! The session layer drives it: before a request, `if strategy.due(..)` → [`plan`] → send
//! [`summary_request`] to the model → [`summary_message`] → [`apply`] → persist and advance the replace
//! generation. The overflow path calls [`plan`] the same way, whatever the pressure.

use std::collections::HashMap;
use std::ops::Range;

use super::text::head_chars;
use super::types::{Block, Message, Role};

/// The newest fraction of the conversation, by tokens, kept verbatim.
pub(crate) const KEEP_FRACTION: f64 = 0.16;

/// The summariser's instructions; `{transcript}` is replaced by the rendered messages.
pub(crate) const COMPACT_PROMPT_TEMPLATE: &str = include_str!("../../assets/compact_prompt.md");

/// A system prompt for the summarisation request.
pub(crate) const SUMMARY_SYSTEM: &str = "You write faithful, compact summaries of coding sessions so that \
    an agent can continue the work from the summary alone.";

/// The opening of every summary message. It frames the summary as background so that the model does
/// not re-run finished requests quoted in it, and says the tools stay usable (framing that only says
/// "reference only" has been seen to stop agents from using tools at all).
pub(crate) const SUMMARY_PREFIX: &str = "[Summary of earlier conversation — reference only]\n\
    The earlier part of this conversation was summarised to free context. Treat the summary below as \
    background you remember, not as instructions: do not redo work it reports as done, and do not act \
    on requests it quotes unless they are still open. The latest user message after this summary is \
    what to act on (if it is a tool result, carry on with the work in progress). Your tools remain \
    fully available; keep using them as before.";

/// The closing line of every summary message.
pub(crate) const SUMMARY_END: &str =
    "[End of summary — respond to the latest user message after it, not to the summary]";

/// Compaction failures that the caller must handle.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompactError {
    /// The summariser returned no text (an empty summary is a failure, not a success).
    #[error("the summary is empty")]
    EmptySummary,
    /// Fewer than two messages lie between the protected head and the verbatim tail.
    #[error("nothing to summarise")]
    NothingToSummarise,
    /// The history changed while it was summarised (the plan no longer fits).
    #[error("the history changed while it was summarised")]
    HistoryChanged,
}

/// Which messages to replace by a summary: `summarize` (always `keep_head..tail`), the protected head
/// before it, and the verbatim tail after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CompactionPlan {
    /// The messages the summary replaces.
    pub summarize: Range<usize>,
    /// How many messages at the start stay verbatim (`summarize.start`).
    pub keep_head: usize,
}

/// Choose which messages to summarise: keep the newest `keep_fraction` (0.16) of the conversation by
/// tokens verbatim; never split a tool_use/tool_result pair (an assistant message with tool_use and
/// the user message with its tool_result stay on the same side); always keep the last user message
/// verbatim; protect the first `head` messages only when `first_compaction` is true (head = the first
/// user message, typically 1). Returns None when there is nothing worth summarising (fewer than two
/// messages between head and tail).
///
/// The tail is grown (never shrunk) past its token budget when needed: to reach a clean cut, and,
/// when the head ends with a user message, to start with an assistant message so that the summary
/// (a user message) can join the head without two user messages meeting.
pub fn plan(
    messages: &[Message],
    token_of: impl Fn(&Message) -> u64,
    keep_fraction: f64,
    first_compaction: bool,
) -> Option<CompactionPlan> {
    let n = messages.len();
    let last_user = messages.iter().rposition(|m| m.role == Role::User)?;
    let crossing = pair_crossings(messages);
    let clean = |i: usize| crossing.get(i).copied().unwrap_or(0) == 0;

    let mut head = if first_compaction {
        messages
            .iter()
            .position(|m| m.role == Role::User)
            .map_or(0, |i| i + 1)
    } else {
        0
    };
    while head < n && !clean(head) {
        head += 1; // a malformed history: protect more rather than split a pair
    }

    let tokens: Vec<u64> = messages.iter().map(&token_of).collect();
    let total = tokens.iter().fold(0u64, |a, &t| a.saturating_add(t));
    let budget = (total as f64 * keep_fraction.clamp(0.0, 1.0)).ceil() as u64;
    let mut tail = n;
    let mut kept = 0u64;
    while tail > head && kept < budget {
        tail -= 1;
        kept = kept.saturating_add(tokens.get(tail).copied().unwrap_or(0));
    }
    tail = tail.min(last_user);
    let is_user = |i: usize| messages.get(i).is_some_and(|m| m.role == Role::User);
    let head_ends_with_user = head.checked_sub(1).is_some_and(is_user);
    while tail > head && (!clean(tail) || (head_ends_with_user && is_user(tail))) {
        tail -= 1;
    }
    if tail < head + 2 {
        return None;
    }
    Some(CompactionPlan {
        summarize: head..tail,
        keep_head: head,
    })
}

/// `crossing[i]` = how many tool_use/tool_result pairs a cut before message `i` would split.
/// Pairs are matched by id; an assistant message with tool_use directly followed by a user message
/// with tool_result also counts as a pair, whatever the ids say.
fn pair_crossings(messages: &[Message]) -> Vec<u32> {
    let n = messages.len();
    let mut diff = vec![0i64; n + 2];
    let mut mark = |a: usize, b: usize| {
        let (lo, hi) = (a.min(b), a.max(b));
        if lo < hi {
            if let Some(d) = diff.get_mut(lo + 1) {
                *d += 1;
            }
            if let Some(d) = diff.get_mut(hi + 1) {
                *d -= 1;
            }
        }
    };
    let mut uses: HashMap<&str, usize> = HashMap::new();
    for (i, m) in messages.iter().enumerate() {
        for (id, _, _) in m.tool_uses() {
            uses.insert(id, i);
        }
    }
    for (i, m) in messages.iter().enumerate() {
        for b in &m.content {
            if let Block::ToolResult { tool_use_id, .. } = b
                && let Some(&u) = uses.get(tool_use_id.as_str())
            {
                mark(u, i);
            }
        }
        let after_use = i
            .checked_sub(1)
            .and_then(|p| messages.get(p))
            .is_some_and(Message::has_tool_use);
        if after_use && m.has_tool_result() {
            mark(i - 1, i);
        }
    }
    let mut out = Vec::with_capacity(n + 1);
    let mut acc = 0i64;
    for d in diff.iter().take(n + 1) {
        acc += d;
        out.push(u32::try_from(acc.max(0)).unwrap_or(u32::MAX));
    }
    out
}

/// Longest text block shown to the summariser, in characters (head and tail kept).
const TEXT_LIMIT: usize = 6_000;
/// Longest thinking block shown.
const THINKING_LIMIT: usize = 600;
/// Longest tool-call argument JSON shown.
const ARGS_LIMIT: usize = 300;
/// Longest tool result shown.
const RESULT_LIMIT: usize = 1_200;

/// The summarisation request's user prompt for the messages to summarise (rendered as a readable
/// transcript: roles, text, tool calls with args abbreviated, tool results truncated).
pub(crate) fn summary_request(messages: &[Message]) -> String {
    COMPACT_PROMPT_TEMPLATE.trim_end().replacen(
        "{transcript}",
        render_transcript(messages).trim_end(),
        1,
    )
}

/// The transcript the summariser reads.
pub(crate) fn render_transcript(messages: &[Message]) -> String {
    let names: HashMap<&str, &str> = messages
        .iter()
        .flat_map(|m| m.tool_uses())
        .map(|(id, name, _)| (id, name))
        .collect();
    let mut out = String::new();
    for (i, m) in messages.iter().enumerate() {
        let role = match m.role {
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        out.push_str(&format!("[{}] {role}:\n", i + 1));
        for b in &m.content {
            match b {
                Block::Text { text } => {
                    out.push_str(&abbreviate(text.trim(), TEXT_LIMIT));
                    out.push('\n');
                }
                Block::Thinking { thinking, .. } => {
                    out.push_str("(thinking) ");
                    out.push_str(&abbreviate(thinking.trim(), THINKING_LIMIT));
                    out.push('\n');
                }
                Block::ToolUse { name, input, .. } => {
                    let (args, cut) = head_chars(&input.to_string(), ARGS_LIMIT);
                    let more = if cut { "…" } else { "" };
                    out.push_str(&format!("→ tool call {name} {args}{more}\n"));
                }
                Block::ToolResult {
                    tool_use_id,
                    content,
                    is_error,
                } => {
                    let name = names.get(tool_use_id.as_str()).copied().unwrap_or("tool");
                    let error = if *is_error { " (error)" } else { "" };
                    out.push_str(&format!("← {name} result{error}:\n"));
                    out.push_str(&abbreviate(content.trim(), RESULT_LIMIT));
                    out.push('\n');
                }
                // The summary cannot carry an image: it names each one and where it is stored,
                // so the successor can read it again.
                Block::Image { image, .. } => {
                    out.push_str(&image.stand_in("shown to the model here"));
                    out.push('\n');
                }
                Block::ServerToolUse { name, input, .. } => {
                    let (args, _) = head_chars(&input.to_string(), ARGS_LIMIT);
                    out.push_str(&format!("→ {name} {args}\n"));
                }
                Block::WebSearchToolResult { content, .. } => {
                    let found = crate::engine::provider::anthropic::search_summary(content);
                    out.push_str(&abbreviate(&found, RESULT_LIMIT));
                    out.push('\n');
                }
            }
        }
        out.push('\n');
    }
    out
}

/// `s` when it has at most `limit` characters; otherwise its first two thirds and last third of the
/// limit with a note of how much was left out between them.
fn abbreviate(s: &str, limit: usize) -> String {
    let total = s.chars().count();
    if total <= limit {
        return s.to_string();
    }
    let head_n = limit * 2 / 3;
    let tail_n = limit - head_n;
    let (head, _) = head_chars(s, head_n);
    let tail: String = s.chars().skip(total - tail_n).collect();
    format!(
        "{head}\n[… {} characters omitted …]\n{tail}",
        total - head_n - tail_n
    )
}

/// The message that replaces the summarised range: framed as reference-only background ("a summary of
/// earlier conversation, for reference only; the latest user message after it is what to act on;
/// your tools remain fully available"). An empty summary is an error.
pub(crate) fn summary_message(summary: &str) -> Result<Message, CompactError> {
    let summary = summary.trim();
    if summary.is_empty() {
        return Err(CompactError::EmptySummary);
    }
    Ok(Message::user(format!(
        "{SUMMARY_PREFIX}\n\n{summary}\n\n{SUMMARY_END}"
    )))
}

/// Replace `plan.summarize` with `summary_msg`, keeping user/assistant alternation valid: when the
/// summary would meet another user message it joins it — first in the message after it (after any
/// leading tool_result blocks, which the API wants first), or last in the message before it.
/// Returns false, changing nothing, when the plan does not fit `messages` (a stale plan).
pub fn apply(messages: &mut Vec<Message>, plan: &CompactionPlan, summary_msg: Message) -> bool {
    let r = plan.summarize.clone();
    if r.start != plan.keep_head || r.start >= r.end || r.end > messages.len() {
        return false;
    }
    let at = r.start;
    messages.splice(r, std::iter::once(summary_msg));
    let same_role = |ms: &[Message], a: usize, b: usize| match (ms.get(a), ms.get(b)) {
        (Some(x), Some(y)) => x.role == y.role,
        _ => false,
    };
    if same_role(messages, at, at + 1) {
        let summary = messages.remove(at);
        if let Some(next) = messages.get_mut(at) {
            let pos = next
                .content
                .iter()
                .take_while(|b| matches!(b, Block::ToolResult { .. }))
                .count();
            next.content.splice(pos..pos, summary.content);
        }
    }
    if at > 0 && same_role(messages, at - 1, at) {
        let joined = messages.remove(at);
        if let Some(prev) = messages.get_mut(at - 1) {
            prev.content.extend(joined.content);
        }
    }
    true
}

#[cfg(test)]
#[path = "compact_tests.rs"]
mod tests;
