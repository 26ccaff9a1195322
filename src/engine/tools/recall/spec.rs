//! The `recall` tool's schema and description, and its one-line summary for front ends.

use serde_json::{Value, json};

use super::{NAME, PAGE_MATCHES, READ_LIMIT, Source};
use crate::engine::text::one_line;
use crate::engine::types::ToolSpec;

/// `1–3`, `1, 3`, `2`: the generations of `sources`.
pub(super) fn generations(sources: &[Source]) -> String {
    let gens: Vec<u32> = sources.iter().map(|s| s.generation).collect();
    match (gens.first(), gens.last()) {
        (Some(a), Some(b)) if a == b => a.to_string(),
        (Some(a), Some(b))
            if gens
                .windows(2)
                .all(|w| w.get(1).copied() == w.first().map(|x| x + 1)) =>
        {
            format!("{a}–{b}")
        }
        _ => gens
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// The tool's schema and description, naming the generations it can search.
pub fn spec(sources: &[Source]) -> ToolSpec {
    spec_with(format!(
        "Search the transcripts of your predecessors, the earlier generations of this step \
         (generations {}), which the handoff document only summarised",
        generations(sources)
    ))
}

/// The spec when the current generation (`own`, the last of `sources`) is searched too: old
/// tool output masked in the conversation comes back through it.
pub fn spec_with_own(sources: &[Source], own: u32) -> ToolSpec {
    let earlier: Vec<Source> = sources
        .iter()
        .filter(|s| s.generation != own)
        .cloned()
        .collect();
    let mut whose = format!("this conversation (generation {own}) as it really was");
    if !earlier.is_empty() {
        whose.push_str(&format!(", and of your predecessors, the earlier generations of this step (generations {}), which the handoff document only summarised", generations(&earlier)));
    }
    spec_with(format!(
        "Search the transcript of {whose}. Old tool output is masked in the conversation to \
         save context: a masked result's stub names its call; `call` with that id reads the \
         output whole"
    ))
}

fn spec_with(whose: String) -> ToolSpec {
    ToolSpec {
        name: NAME.into(),
        description: format!(
            "{whose}: what the user said, \
             what was answered, every tool call and its result. Use it when you need a detail \
             the briefing lacks (an exact error, a command's output, why something was decided) \
             instead of redoing the work. `query` is words (every word must appear, any case) or, \
             with `regex: true`, a regular expression (Rust syntax). Optionally one `generation`. \
             Returns the matching messages with their generation, number, role or tool, and the \
             lines around each hit, {PAGE_MATCHES} a page (`page` for more). A long message is \
             read whole with `generation` and `message` (its number), page by page with `offset` \
             and `limit` like read_file; so is the result of one tool call with `call` (its id)."
        ),
        input_schema: json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Words to find (all of them, any case), or a regex with `regex: true`."},
                "regex": {"type": "boolean", "description": "Treat `query` as a regular expression. Default false."},
                "generation": {"type": "integer", "minimum": 1, "description": "Only this generation. Default: all of them."},
                "page": {"type": "integer", "minimum": 1, "description": "Page of matches, from 1. Default 1."},
                "message": {"type": "integer", "minimum": 1, "description": "Read this message whole (its number in `generation`) instead of searching."},
                "call": {"type": "string", "description": "Read the result of this tool call whole (its id, as a masked output names it) instead of searching."},
                "offset": {"type": "integer", "minimum": 1, "description": "With `message`: the first line to read, 1-based. Default 1."},
                "limit": {"type": "integer", "minimum": 1, "description": format!("With `message`: how many lines. Default {READ_LIMIT}.")}
            },
            "additionalProperties": false
        }),
    }
}

/// One line for UIs: `recall: "parser bug"`, `recall: generation 1, message 12`.
pub fn summary(input: &Value) -> String {
    let n = |k: &str| input.get(k).and_then(crate::engine::tools::args::as_u64);
    if let Some(m) = n("message") {
        return match n("generation") {
            Some(g) => format!("recall: generation {g}, message {m}"),
            None => format!("recall: message {m}"),
        };
    }
    match input.get("query").and_then(Value::as_str) {
        Some(q) => {
            let mut line = if input.get("regex").and_then(Value::as_bool) == Some(true) {
                format!("recall: /{}/", one_line(q, 80))
            } else {
                format!("recall: \"{}\"", one_line(q, 80))
            };
            if let Some(g) = n("generation") {
                line.push_str(&format!(" in generation {g}"));
            }
            line
        }
        None => match input.get("call").and_then(Value::as_str) {
            Some(c) => format!("recall: the output of call {}", one_line(c, 60)),
            None => NAME.into(),
        },
    }
}
