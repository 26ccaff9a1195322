//! The record after the cut: what a session did while its background handoff was written, as
//! the successor's briefing carries it ([`crate::engine::handoff::briefing`]).
//!
//! Every message after the cut, in order: user text (a message the briefing already quotes as the
//! request in flight is referred to, not repeated), assistant text, tool calls with their
//! arguments, tool results. Thinking is left out. A result or an argument list over
//! [`TAIL_CAP`] characters shows its first [`TAIL_PREVIEW`] and goes whole to
//! `<workbench>/spill/<session>-tail-<n>.txt` (`<run>/spill/` without a workbench), named in the
//! record so the successor can read it with `read_file`.

use std::collections::HashMap;
use std::path::PathBuf;

use super::context::HandoffCx;
use crate::engine::fsutil::write_new;
use crate::engine::handoff::briefing::{Elided, TailMessage, TailPart};
use crate::engine::ledger::Cut;
use crate::engine::protocol::Event;
use crate::engine::types::{Block, Role};

/// A result (or arguments) longer than this is capped in the record.
const TAIL_CAP: usize = 2_000;
/// What a capped result shows.
const TAIL_PREVIEW: usize = 1_500;
/// Spill names tried per file.
const TAIL_SPILL_NAMES: u32 = 10_000;

/// The messages of the current session after `cut`, as the briefing records them. `request`:
/// the messages the briefing quotes as the request in flight.
pub(super) fn tail_record(
    cx: &mut impl HandoffCx,
    cut: Cut,
    request: &[String],
) -> Vec<TailMessage> {
    let Some((_, after)) = cut.split(&cx.conv().messages) else {
        cx.emit(Event::Warning {
            message: "the history no longer holds the handoff's cut: the successor gets no record of what happened after it".into(),
        });
        return Vec::new();
    };
    let names: HashMap<String, String> = cx
        .conv()
        .messages
        .iter()
        .flat_map(|m| m.tool_uses())
        .map(|(id, name, _)| (id.to_string(), name.to_string()))
        .collect();
    let mut quoted = vec![false; request.len()];
    let mut out = Vec::with_capacity(after.len());
    for m in after {
        let mut parts = Vec::new();
        for b in m.content {
            match b {
                Block::Text { text } => {
                    let known = (m.role == Role::User)
                        .then(|| {
                            request
                                .iter()
                                .zip(&quoted)
                                .position(|(r, done)| *r == text && !done)
                        })
                        .flatten();
                    match known {
                        Some(i) => {
                            if let Some(q) = quoted.get_mut(i) {
                                *q = true;
                            }
                            parts.push(TailPart::RequestRef(i + 1));
                        }
                        None => parts.push(TailPart::Text(text)),
                    }
                }
                Block::Thinking { .. } => {}
                // An image is named with where it is stored (the successor reads it there).
                Block::Image { image, .. } => {
                    parts.push(TailPart::Text(image.stand_in("shown to the model")))
                }
                Block::ServerToolUse { name, input, .. } => {
                    parts.push(TailPart::Text(format!("[{name} {input}]")))
                }
                Block::WebSearchToolResult { content, .. } => parts.push(TailPart::Text(
                    crate::engine::provider::anthropic::search_summary(&content),
                )),
                Block::ToolUse {
                    id, name, input, ..
                } => {
                    let (input, elided) = capped(cx, &input.to_string());
                    let input = match elided {
                        Some(e) => format!(
                            "{input}… [{} more characters{}]",
                            e.chars,
                            e.path
                                .map(|p| format!(": the whole call is in {p}"))
                                .unwrap_or_default()
                        ),
                        None => input,
                    };
                    parts.push(TailPart::Call { id, name, input });
                }
                Block::ToolResult {
                    tool_use_id,
                    content,
                    is_error,
                } => {
                    let (content, elided) = capped(cx, &content);
                    let name = names
                        .get(&tool_use_id)
                        .cloned()
                        .unwrap_or_else(|| "tool".into());
                    parts.push(TailPart::Result {
                        id: tool_use_id,
                        name,
                        content,
                        is_error,
                        elided,
                    });
                }
            }
        }
        out.push(TailMessage {
            role: m.role,
            parts,
        });
    }
    out
}

/// `text` as the record shows it: whole up to [`TAIL_CAP`] characters, else its first
/// [`TAIL_PREVIEW`] and where the rest is.
fn capped(cx: &mut impl HandoffCx, text: &str) -> (String, Option<Elided>) {
    let chars = text.chars().count();
    if chars <= TAIL_CAP {
        return (text.to_string(), None);
    }
    let shown: String = text.chars().take(TAIL_PREVIEW).collect();
    let path = spill_tail(cx, text);
    (
        shown,
        Some(Elided {
            chars: chars - TAIL_PREVIEW,
            path,
        }),
    )
}

/// Write a whole result for the record; its path as the model should name it.
fn spill_tail(cx: &mut impl HandoffCx, text: &str) -> Option<String> {
    let dir: PathBuf = match &cx.places().workbench {
        Some(wb) => wb.join("spill"),
        None => cx.ledger().run_dir.root.join("spill"),
    };
    let stem: String = cx
        .conv()
        .id
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let names = (1..=TAIL_SPILL_NAMES).map(|k| format!("{stem}-tail-{k}.txt"));
    let masked = crate::engine::secrets::redact(text);
    match write_new(&dir, names, masked.as_bytes()) {
        Ok(file) => Some(crate::engine::tools::paths::display(
            &cx.places().workspace,
            &file.path,
        )),
        Err(e) => {
            cx.emit(Event::Warning {
                message: format!(
                    "could not keep a long result of the record after the cut under {}: {e}",
                    dir.display()
                ),
            });
            None
        }
    }
}
