//! The successor's first message — assembled here and nowhere else.
//!
//! It is one user message made of parts, in this order:
//!
//! 1. **The briefing**: a preamble that says what the successor is receiving and why the
//!    previous generation stopped (its context was nearly full or overflowed, or the user asked
//!    for the handoff: [`HandoffCause`]), then the handoff
//!    document *exactly as the successor is to read it* — the file as it is on disk when the review
//!    ends, byte for byte (header line, text before the first section, unknown sections, the
//!    user's formatting), between `<handoff>` and `</handoff>`. Parsing never rewrites it.
//!    The preamble also says where the transcripts of the step's retired generations are and
//!    that `recall` searches them.
//! 2. **What the engine carries itself** (`step_memory::carried_block`): the user's pins under
//!    `## Pinned`, the plan under `## Plan`, the standing focus under `## Focus`, verbatim, so a
//!    degraded or rescued document loses none of them.
//!    Then the background jobs still running (`## Background jobs`: id, command, since when,
//!    URL or port, last lines), which run on through the turnover.
//! 3. **The request in flight**: when a user request was in progress at the cut (the running
//!    turn's, or the last turn's when it did not complete), a short note, then every user message
//!    of that request, verbatim and each a block of its own, so the successor continues *that*
//!    request.
//!
//! 4. **The record after the cut** (a background handoff): the main thread kept
//!    working while the document was written, so a note, then every message of the session after
//!    the document's cut, oldest first, one block each: the user's words, the assistant's text,
//!    tool calls with their arguments and their results (a large result capped, with the file that
//!    holds it whole). Built by [`tail_blocks`].
//!
//! Each part is its own text block, so a part never changes another part's bytes. A new part:
//! add a field to [`Briefing`] (it derives `Default`, so callers write `..Default::default()`)
//! and a step in [`Briefing::blocks`].

use crate::engine::ledger::HandoffCause;
use crate::engine::step_memory::{StepMemory, carried_block};
use crate::engine::tools::recall::Source;
use crate::engine::types::{Block, Message, Role};

/// Opens the document inside the briefing.
pub(crate) const OPEN_TAG: &str = "<handoff>\n";
/// Closes the document inside the briefing.
pub(crate) const CLOSE_TAG: &str = "</handoff>\n";

/// What the successor is briefed with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Briefing<'a> {
    /// The handoff document's text as the successor reads it (the file on disk, or the rendering
    /// of the in-memory document when the file is gone).
    pub document: &'a str,
    /// The document is degraded: the preamble warns.
    pub degraded: bool,
    /// The user messages of the request in progress at the cut, oldest first (may be empty).
    pub request: &'a [String],
    /// The step's pins, plan and standing focus, which the engine writes in itself.
    pub memory: Option<&'a StepMemory>,
    /// The transcripts of the step's retired generations, oldest first, the one being retired
    /// included: the preamble says where they are.
    pub predecessors: &'a [Source],
    /// What the session did after the document's cut (a background handoff; else empty).
    pub tail: &'a [TailMessage],
    /// The document was written from a reduced copy of the history: the preamble says so.
    pub rescued: bool,
    /// Why the previous generation stopped: the preamble says so.
    pub cause: HandoffCause,
    /// The focus the user gave `/handoff`: the preamble names it.
    pub focus: Option<&'a str>,
    /// The background jobs running at the turnover: they run on, and the successor reads and
    /// stops them by id.
    pub jobs: Option<&'a str>,
}

/// One message of the record after the cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TailMessage {
    pub role: Role,
    pub parts: Vec<TailPart>,
}

/// A part of a [`TailMessage`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TailPart {
    /// Text as written (a user's message, the assistant's reply).
    Text(String),
    /// A user message the briefing quotes already as message `n` (from 1) of the request.
    RequestRef(usize),
    /// A tool call: its id, the tool, the arguments as JSON.
    Call {
        id: String,
        name: String,
        input: String,
    },
    /// A tool's result, `content` capped; `elided` says what the cap left out and where it is.
    Result {
        id: String,
        name: String,
        content: String,
        is_error: bool,
        elided: Option<Elided>,
    },
}

/// What a capped result left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Elided {
    /// Characters not shown.
    pub chars: usize,
    /// The file holding the whole result, as the model should name it; None when it could not be
    /// written.
    pub path: Option<String>,
}

impl Briefing<'_> {
    /// The blocks of the successor's first user message, in order.
    pub fn blocks(&self) -> Vec<Block> {
        let mut blocks = vec![Block::text(self.briefing_block())];
        if let Some(carried) = self.memory.and_then(carried_block) {
            blocks.push(Block::text(carried));
        }
        if let Some(jobs) = self.jobs.filter(|j| !j.trim().is_empty()) {
            blocks.push(Block::text(jobs.to_string()));
        }
        let request: Vec<&String> = self
            .request
            .iter()
            .filter(|m| !m.trim().is_empty())
            .collect();
        if !request.is_empty() {
            blocks.push(Block::text(request_note(request.len())));
            blocks.extend(request.into_iter().map(|m| Block::text(m.clone())));
        }
        blocks.extend(tail_blocks(self.tail));
        blocks
    }

    /// The successor's first message.
    pub fn message(&self) -> Message {
        Message {
            role: Role::User,
            content: self.blocks(),
        }
    }

    /// The preamble and the document, wrapped.
    pub fn briefing_block(&self) -> String {
        let mut out = preamble(self.cause, self.focus, self.degraded);
        if self.rescued && !self.degraded {
            out.push_str(RESCUED_NOTE);
        }
        out.push_str(&transcripts_note(self.predecessors));
        out.push('\n');
        out.push_str(OPEN_TAG);
        out.push_str(self.document);
        if !self.document.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(CLOSE_TAG);
        out
    }
}

/// The text that tells the successor what it is receiving, why (with the focus the user gave
/// `/handoff`, quoted), and how to use it.
pub(crate) fn preamble(cause: HandoffCause, focus: Option<&str>, degraded: bool) -> String {
    if cause == HandoffCause::Plan {
        return PLAN_PREAMBLE.to_string();
    }
    let why = match (cause, focus) {
        (HandoffCause::Pressure, _) => "Its context window was nearly full".to_string(),
        (HandoffCause::Overflow, _) => "Its context window overflowed".to_string(),
        (HandoffCause::Manual, None) => "The user asked for a handoff".to_string(),
        (HandoffCause::Plan, _) => "The user chose to start fresh from a plan".to_string(),
        (HandoffCause::Manual, Some(focus)) => format!(
            "The user asked for a handoff with the focus \"{}\"",
            crate::engine::text::one_line(focus, 200)
        ),
    };
    // Written from memory at the end of a long context, or wherever the user chose to stop.
    let memory = match cause {
        HandoffCause::Manual | HandoffCause::Plan => "it was written from memory",
        HandoffCause::Pressure | HandoffCause::Overflow => {
            "it was written from memory at the end of a long context"
        }
    };
    let mut out = format!(
        "You are taking over this work from your previous generation. {why}, so it stopped and \
         wrote the handoff document below for you. You start fresh: you have no memory of that \
         conversation, only this document and the workspace.\n\
         \n\
         - This document is your briefing. Continue from its Next section; do not ask the \
         human for background that the document or the workspace can give you.\n\
         - Verify rather than trust blindly: {memory}. Check the state of the files and commands \
         it names in the workspace before you build on them.\n\
         - Respect what it lists as Decided, and do not retry what it lists under Dead ends \
         unless you have new evidence.\n\
         - The human may have edited it before you read it: where their words and the rest \
         disagree, theirs win.\n",
    );
    if degraded {
        out.push_str(
            "- WARNING: this handoff is DEGRADED. The previous generation could not write it, \
             so it was assembled mechanically and is incomplete. Inspect the workspace \
             (git status, git diff, the files listed under Scene) before you continue.\n",
        );
    }
    out
}

/// What a session started from a reviewed plan reads before the plan file.
pub const PLAN_PREAMBLE: &str = "The user reviewed the plan below, written while planning in an \
     earlier session, and chose to have it implemented in this fresh session. You have no memory \
     of that session, only this plan and the workspace.\n\
     \n\
     - Implement the plan now, step by step; verify as it says.\n\
     - The user may have edited it: their words win over anything else.\n\
     - Check the files it names before you change them: the plan was written from reading them, \
     and they may have moved on.\n";

/// The preamble's line for a document written from a reduced history.
pub const RESCUED_NOTE: &str = "- It was written from a shortened copy of the conversation (the \
     context window was exceeded: old tool results were replaced by stubs, maybe early turns were \
     dropped), so details it does not mention may be missing: check the workspace.\n";

/// The opening of the record after the cut.
pub const TAIL_NOTE: &str = "The session did not stop when the handoff document above was cut: \
     it kept working while the document was written. Here is the faithful record of everything it \
     did after the cut, oldest first, one message per block. The document does not know about \
     this: where they disagree, this record is newer. Large tool results are capped; the file \
     named holds the whole result (read it with read_file).\n";

/// The record after the cut: [`TAIL_NOTE`], then one block per message. Empty for no messages.
pub(crate) fn tail_blocks(tail: &[TailMessage]) -> Vec<Block> {
    let shown: Vec<String> = tail
        .iter()
        .map(render_tail_message)
        .filter(|t| !t.is_empty())
        .collect();
    if shown.is_empty() {
        return Vec::new();
    }
    let mut blocks = vec![Block::text(TAIL_NOTE)];
    blocks.extend(shown.into_iter().map(Block::text));
    blocks
}

/// One message of the record: `[user]` / `[assistant]`, then its parts.
fn render_tail_message(m: &TailMessage) -> String {
    let mut parts: Vec<String> = Vec::new();
    for p in &m.parts {
        match p {
            TailPart::Text(t) if t.trim().is_empty() => {}
            TailPart::Text(t) => parts.push(t.clone()),
            TailPart::RequestRef(n) => parts.push(format!(
                "(the user's message {n} of the request quoted above, sent at this point)"
            )),
            TailPart::Call { id, name, input } => {
                parts.push(format!("[tool call {id}: {name} {input}]"))
            }
            TailPart::Result {
                id,
                name,
                content,
                is_error,
                elided,
            } => {
                let what = if *is_error { "error" } else { "result" };
                let mut out = format!("[tool {what} {id} ({name})]\n{content}");
                if let Some(e) = elided {
                    match &e.path {
                        Some(p) => out.push_str(&format!(
                            "\n[… {} more characters: the whole result is in {p}]",
                            e.chars
                        )),
                        None => out.push_str(&format!(
                            "\n[… {} more characters not kept (they could not be written to a file)]",
                            e.chars
                        )),
                    }
                }
                parts.push(out);
            }
        }
    }
    if parts.is_empty() {
        return String::new();
    }
    let role = match m.role {
        Role::User => "[user]",
        Role::Assistant => "[assistant]",
    };
    format!("{role}\n{}\n", parts.join("\n"))
}

/// The preamble's line about the predecessors' transcripts (empty when none is known).
pub(crate) fn transcripts_note(predecessors: &[Source]) -> String {
    if predecessors.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "- Your predecessors' full transcripts are kept on disk (JSON lines), one per \
         generation:\n",
    );
    for p in predecessors {
        out.push_str(&format!(
            "  - generation {}: {}\n",
            p.generation,
            p.path.display()
        ));
    }
    out.push_str(
        "  When you need a detail this document does not hold (an exact error, a command's \
         output, why something was decided), search them with the `recall` tool (words or a \
         regex, optionally one generation) instead of redoing the work.\n",
    );
    out
}

/// The note before the request's messages.
fn request_note(n: usize) -> String {
    let what = if n == 1 {
        "the user's message".to_string()
    } else {
        format!("the user's {n} messages, oldest first")
    };
    format!(
        "The handoff was made while this request of the user was in progress. It follows \
         verbatim ({what}). It is the request you are continuing: pick it up from where the \
         handoff and the workspace say it stands, and do not start it over.\n"
    )
}

/// The document inside a briefing block (between the tags), if the text is one. Used to find the
/// document a resumed successor was briefed with.
pub(crate) fn document_of(briefing_block: &str) -> Option<&str> {
    let start = briefing_block.find(OPEN_TAG)? + OPEN_TAG.len();
    let end = briefing_block.rfind(CLOSE_TAG)?;
    briefing_block.get(start..end)
}

/// The document a resumed session was briefed with: the one inside the first block of its first
/// message, when it is a successor (`parent` set).
pub(crate) fn briefed_with(
    messages: &[Message],
    parent: &Option<String>,
) -> Option<super::HandoffDoc> {
    parent.as_ref()?;
    let first = messages.first()?.content.first()?;
    let Block::Text { text } = first else {
        return None;
    };
    let doc = super::HandoffDoc::parse(document_of(text)?);
    (!doc.section_names().is_empty()).then_some(doc)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "# Handoff · step s · generation 1 · 1.0K/2K · 2026-11-29 13:40\n\
                        A note the user typed above the sections.\n\
                        ## Doing\n  *kept*   as typed\n## Notes from me\nan unknown section\n\
                        ## Next\nrun it";

    fn texts(blocks: &[Block]) -> Vec<&str> {
        blocks
            .iter()
            .map(|b| match b {
                Block::Text { text } => text.as_str(),
                other => panic!("not text: {other:?}"),
            })
            .collect()
    }

    #[test]
    fn the_document_is_inside_byte_for_byte() {
        let b = Briefing {
            document: FILE,
            degraded: false,
            request: &[],
            ..Default::default()
        };
        let blocks = b.blocks();
        assert_eq!(blocks.len(), 1);
        let block = texts(&blocks)[0];
        assert!(block.starts_with("You are taking over"), "{block}");
        // The file, then a newline only because it lacked one, then the closing tag.
        assert!(
            block.ends_with(&format!("{OPEN_TAG}{FILE}\n{CLOSE_TAG}")),
            "{block}"
        );
        assert_eq!(document_of(block), Some(&format!("{FILE}\n")[..]));
        assert!(!block.contains("DEGRADED"));
        // A file that ends with a newline gets nothing added.
        let with_nl = format!("{FILE}\n");
        let b = Briefing {
            document: &with_nl,
            ..b
        };
        assert!(
            b.briefing_block()
                .ends_with(&format!("{OPEN_TAG}{with_nl}{CLOSE_TAG}"))
        );
    }

    #[test]
    fn the_request_follows_verbatim_each_in_its_own_block() {
        let request = vec![
            "  first message\n  with   spacing\n".to_string(),
            "   ".to_string(),
            "## Next\nnot a heading of the document".to_string(),
        ];
        let b = Briefing {
            document: FILE,
            degraded: true,
            request: &request,
            ..Default::default()
        };
        let blocks = b.blocks();
        let t = texts(&blocks);
        assert_eq!(t.len(), 4, "{t:#?}");
        assert!(t[0].contains("WARNING: this handoff is DEGRADED"));
        assert!(t[1].contains("2 messages, oldest first"), "{}", t[1]);
        assert!(t[1].contains("continuing"));
        assert_eq!(t[2], request[0]);
        assert_eq!(t[3], request[2], "a blank message is left out");
        let m = b.message();
        assert_eq!(m.role, Role::User);
        assert_eq!(m.content, blocks);
        let one = vec!["just this".to_string()];
        let t1 = Briefing { request: &one, ..b }.blocks();
        assert!(texts(&t1)[1].contains("(the user's message)"));
    }

    #[test]
    fn a_resumed_successor_knows_its_briefing() {
        let request = vec!["go on".to_string()];
        let first = Briefing {
            document: FILE,
            degraded: false,
            request: &request,
            ..Default::default()
        }
        .message();
        let parent = Some("old".to_string());
        let doc = briefed_with(std::slice::from_ref(&first), &parent).unwrap();
        assert_eq!(doc.next, "run it");
        assert_eq!(doc.meta.map(|m| m.generation), Some(1));
        assert!(
            briefed_with(&[first], &None).is_none(),
            "a first generation"
        );
        assert!(briefed_with(&[Message::user("hi")], &parent).is_none());
        assert!(briefed_with(&[], &parent).is_none());
    }

    #[test]
    fn the_record_after_the_cut_follows_the_request() {
        let request = vec!["fix the build".to_string()];
        let tail = vec![
            TailMessage {
                role: Role::Assistant,
                parts: vec![
                    TailPart::Text("Running make.".into()),
                    TailPart::Call {
                        id: "t1".into(),
                        name: "bash".into(),
                        input: r#"{"command":"make"}"#.into(),
                    },
                ],
            },
            TailMessage {
                role: Role::User,
                parts: vec![
                    TailPart::Result {
                        id: "t1".into(),
                        name: "bash".into(),
                        content: "ok".into(),
                        is_error: false,
                        elided: Some(Elided {
                            chars: 9_000,
                            path: Some(".flower/spill/s-tail-1.txt".into()),
                        }),
                    },
                    TailPart::RequestRef(1),
                    TailPart::Text("  and then the docs  ".into()),
                ],
            },
            // Thinking only, say: nothing to record.
            TailMessage {
                role: Role::Assistant,
                parts: vec![TailPart::Text("  ".into())],
            },
        ];
        let b = Briefing {
            document: FILE,
            degraded: false,
            request: &request,
            tail: &tail,
            rescued: true,
            ..Default::default()
        };
        let blocks = b.blocks();
        let t = texts(&blocks);
        assert_eq!(t.len(), 6, "{t:#?}");
        assert!(t[0].contains(RESCUED_NOTE), "{}", t[0]);
        assert_eq!(t[2], request[0]);
        assert_eq!(t[3], TAIL_NOTE);
        assert_eq!(
            t[4],
            "[assistant]\nRunning make.\n[tool call t1: bash {\"command\":\"make\"}]\n"
        );
        assert_eq!(
            t[5],
            "[user]\n[tool result t1 (bash)]\nok\n[… 9000 more characters: the whole result is in .flower/spill/s-tail-1.txt]\n(the user's message 1 of the request quoted above, sent at this point)\n  and then the docs  \n"
        );
        assert!(tail_blocks(&[]).is_empty());
        // A degraded document says so, not that it was rescued.
        let d = Briefing {
            degraded: true,
            ..b
        };
        assert!(!d.briefing_block().contains(RESCUED_NOTE));
    }

    #[test]
    fn the_engine_writes_its_part_after_the_document_and_names_the_transcripts() {
        use crate::engine::step_memory::PinSource;
        use std::path::PathBuf;
        let mut memory = StepMemory::default();
        memory
            .add_pin("never push to main", PinSource::Command, "t")
            .unwrap();
        let preds = vec![
            Source {
                generation: 1,
                path: PathBuf::from("/r/sessions/a.jsonl"),
            },
            Source {
                generation: 2,
                path: PathBuf::from("/r/sessions/b.jsonl"),
            },
        ];
        let request = vec!["go on".to_string()];
        let b = Briefing {
            document: FILE,
            degraded: false,
            request: &request,
            memory: Some(&memory),
            predecessors: &preds,
            ..Default::default()
        };
        let blocks = b.blocks();
        let t = texts(&blocks);
        assert_eq!(t.len(), 4, "{t:#?}");
        let (preamble, _) = t[0].split_once(OPEN_TAG).unwrap();
        assert!(
            preamble.contains(
                "  - generation 1: /r/sessions/a.jsonl\n  - generation 2: /r/sessions/b.jsonl\n"
            ),
            "{preamble}"
        );
        assert!(preamble.contains("the `recall` tool"), "{preamble}");
        // The document is still byte for byte what it was.
        assert_eq!(document_of(t[0]), Some(&format!("{FILE}\n")[..]));
        assert_eq!(Some(t[1].to_string()), carried_block(&memory));
        assert!(t[1].contains("## Pinned\n- never push to main\n"));
        assert_eq!(t[3], "go on");
        // Nothing remembered, no predecessors: neither part.
        let empty = StepMemory::default();
        let plain = Briefing {
            memory: Some(&empty),
            predecessors: &[],
            ..b
        };
        let t = texts(&plain.blocks()).len();
        assert_eq!(t, 3);
        assert!(!plain.briefing_block().contains("recall"));
        // A background handoff's record comes last: after the engine's part and the request.
        let tail = vec![TailMessage {
            role: Role::Assistant,
            parts: vec![TailPart::Text("kept working".into())],
        }];
        let with_tail = Briefing { tail: &tail, ..b };
        let all = with_tail.blocks();
        let t = texts(&all);
        assert_eq!(t.len(), 6, "{t:#?}");
        assert_eq!(Some(t[1].to_string()), carried_block(&memory));
        assert_eq!(t[3], "go on");
        assert_eq!(t[4], TAIL_NOTE);
        assert_eq!(t[5], "[assistant]\nkept working\n");
    }

    #[test]
    fn the_preamble_says_why_the_previous_generation_stopped() {
        let block = |cause| {
            Briefing {
                document: FILE,
                cause,
                ..Default::default()
            }
            .briefing_block()
        };
        let manual = block(HandoffCause::Manual);
        assert!(
            manual.starts_with(
                "You are taking over this work from your previous generation. The user asked \
                 for a handoff, so it stopped"
            ),
            "{manual}"
        );
        assert!(!manual.contains("context window") && !manual.contains("long context"));
        let focused = Briefing {
            document: FILE,
            cause: HandoffCause::Manual,
            focus: Some("keep the\nparser notes"),
            ..Default::default()
        }
        .briefing_block();
        assert!(
            focused.contains(
                "The user asked for a handoff with the focus \"keep the parser notes\", so it \
                 stopped"
            ),
            "{focused}"
        );
        // A focus says nothing where the context forced the handoff.
        let pressure = Briefing {
            document: FILE,
            cause: HandoffCause::Pressure,
            focus: Some("ignored"),
            ..Default::default()
        };
        assert!(!pressure.briefing_block().contains("ignored"));
        assert!(block(HandoffCause::Pressure).contains("Its context window was nearly full, so"));
        assert!(block(HandoffCause::Overflow).contains("Its context window overflowed, so"));
        assert!(block(HandoffCause::Overflow).contains("at the end of a long context"));
    }

    #[test]
    fn document_of_needs_both_tags() {
        assert_eq!(document_of("no tags"), None);
        assert_eq!(document_of("<handoff>\nhalf"), None);
        assert_eq!(document_of("x<handoff>\nD\n</handoff>\n"), Some("D\n"));
    }
}
