//! The current session, one generation: its id and lineage, the conversation the model sees, its
//! transcript, its system prompt (a resumed session's is prepared beside the engine and taken
//! before anything needs it), what its context holds (the last reading plus an estimate of
//! what was appended since), its cost, the tool-result budget, the document it was briefed with,
//! and the user request in progress (which a successor carries on). Also what the session says
//! of itself: its start, and its conversation replayed for a front end that shows it.

use super::handoff::CallCounts;
use super::masked_history::MaskState;
use super::params::ModelSettings;
use super::run_context::PromptAside;
use crate::engine::handoff::HandoffDoc;
use crate::engine::ledger::{Held, Transcript, TranscriptLine};
use crate::engine::protocol::{Event, Origin};
use crate::engine::sysprompt::SessionPrompt;
use crate::engine::tools::Spiller;
use crate::engine::types::{Block, Message, Role, append_message};

/// How the output of a user's `!` command opens, in the message it goes with.
pub(super) const SHELL_NOTE_OPEN: &str = "<bash-input>";

/// The state of the current session (one generation).
pub(super) struct Conversation {
    pub(super) id: String,
    pub(super) parent: Option<String>,
    pub(super) generation: u32,
    pub(super) messages: Vec<Message>,
    pub(super) transcript: Transcript,
    /// The session's whole system prompt (the base, the environment and the project
    /// instructions read when it started), unchanged for its every request.
    pub(super) system_prompt: String,
    /// Last main-thread ctx the provider reported for this session.
    pub(super) ctx: u64,
    /// Characters appended since that report (estimated into the gauge).
    pub(super) appended_chars: usize,
    /// The near-handoff warning was given.
    pub(super) near_fired: bool,
    /// What this session's requests cost so far.
    pub(super) cost_usd: f64,
    /// The tool-result budget of the session's turns.
    pub(super) spiller: Spiller,
    /// The user request in progress, for the successor and the degraded document.
    pub(super) request: UserRequest,
    /// The document the session was briefed with (a degraded one carries it forward).
    pub(super) briefed: Option<HandoffDoc>,
    /// The line counts of this session's file changes, for the handoff's `Touched` section.
    pub(super) call_counts: CallCounts,
    /// Where masking of this session's requests stands.
    pub(super) mask: MaskState,
    /// What the user's own `!` commands printed since the last message, to go with the next.
    shell_notes: Vec<String>,
    /// A resumed session's prompt being prepared beside the engine (`system_prompt` is the base
    /// prompt until it is taken).
    prompt_aside: Option<PromptAside>,
}

impl Conversation {
    /// No session yet: the first message starts one. Its prompt is the base prompt until then.
    pub(super) fn none(base_prompt: &str) -> Conversation {
        Conversation::new(
            Identity::default(),
            Vec::new(),
            Transcript::disabled(),
            base_prompt,
        )
    }

    /// A session with `messages` so far, written to `transcript`.
    pub(super) fn new(
        who: Identity,
        messages: Vec<Message>,
        transcript: Transcript,
        system_prompt: &str,
    ) -> Conversation {
        let appended_chars = messages.iter().map(Message::char_len).sum();
        Conversation {
            id: who.id,
            parent: who.parent,
            generation: who.generation,
            messages,
            transcript,
            system_prompt: system_prompt.to_string(),
            ctx: 0,
            appended_chars,
            near_fired: false,
            cost_usd: 0.0,
            spiller: Spiller::new(),
            request: UserRequest::default(),
            briefed: None,
            call_counts: CallCounts::default(),
            mask: MaskState::default(),
            shell_notes: Vec::new(),
            prompt_aside: None,
        }
    }

    /// The session's prompt is being prepared by `making`: until it is taken, only what needs
    /// no prompt may run.
    pub(super) fn prompt_from(&mut self, making: PromptAside) {
        self.prompt_aside = Some(making);
    }

    /// The prompt being prepared, waited for; `Some(None)` when its preparation failed (the
    /// caller prepares it again), None when none is pending. Safe to drop before it is ready.
    pub(super) async fn prompt_made(&mut self) -> Option<Option<SessionPrompt>> {
        let made = (&mut self.prompt_aside.as_mut()?.made).await;
        self.prompt_aside = None;
        Some(made.ok())
    }

    /// The prompt being prepared will not be taken (the engine leaves): its look at the
    /// environment (a `git status` that can take a while in a large repository) is stopped
    /// rather than left running after the process.
    pub(super) fn abandon_prompt(&mut self) {
        if let Some(thread) = self.prompt_aside.take().and_then(|a| a.thread) {
            crate::engine::sysprompt::stop_looking(thread);
        }
    }

    /// The user ran `command` with `!` and it printed `output` (ended as `ending` says): kept
    /// for the next message to the model.
    pub(super) fn note_shell(&mut self, command: &str, output: &str, ending: &str) {
        self.shell_notes.push(format!(
            "{SHELL_NOTE_OPEN}{command}</bash-input>\n\
             (the user ran this command in the shell themselves, {ending}; its output is context, \
             not a request)\n<bash-output>\n{}\n</bash-output>",
            output.trim_end()
        ));
    }

    /// What the user's `!` commands printed since the last message, taken for the next.
    pub(super) fn take_shell_notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.shell_notes)
    }

    /// `/context`: what this session's next request sends, part by part (`tools`: the
    /// characters of the tool specs offered).
    pub(super) fn fill(&self, tools: usize) -> super::context_fill::Fill {
        super::context_fill::Fill::of(self.system_prompt.len(), tools, &self.messages)
    }

    /// No session has started yet (before the first message).
    pub(super) fn is_none(&self) -> bool {
        self.id.is_empty()
    }

    /// Append a message to the conversation and the transcript. Consecutive user messages merge.
    pub(super) fn push(&mut self, msg: Message) {
        self.appended_chars += msg.char_len();
        append_message(&mut self.messages, msg.clone());
        self.transcript
            .append(&TranscriptLine::Message { message: msg });
    }

    /// The history was replaced in place (a compaction): the transcript records it, and the
    /// context is estimated from the new history until the next response.
    pub(super) fn replaced(&mut self) {
        self.transcript.append(&TranscriptLine::Replaced {
            messages: self.messages.clone(),
        });
        self.ctx = 0;
        self.appended_chars = self.messages.iter().map(Message::char_len).sum();
    }

    /// A transcript that cannot be written (disk full, directory gone), said once: the warning.
    pub(super) fn transcript_warning(&mut self) -> Option<Event> {
        self.transcript.take_error().map(|message| Event::Warning {
            message: format!("{message}; the session goes on but is no longer recorded"),
        })
    }

    /// Cut the history to before the user's message `index` that began with `text`, recorded in
    /// the transcript as a replacement; the request in flight ends with it. False when the
    /// history no longer holds it where it was (a compaction replaced it).
    pub(super) fn cut_before(&mut self, index: usize, text: &str) -> bool {
        let first_line = text.lines().next().unwrap_or_default();
        let holds = self
            .messages
            .get(index)
            .is_some_and(|m| m.role == Role::User && m.text().starts_with(first_line));
        if !holds {
            return false;
        }
        self.messages.truncate(index);
        self.replaced();
        self.near_fired = false;
        self.request = UserRequest::default();
        true
    }

    /// The `SessionStarted` event of this session, under `settings`, with `provider` (the
    /// `demo` model or not).
    pub(super) fn started(&self, settings: &ModelSettings, provider: &str, demo: bool) -> Event {
        Event::SessionStarted {
            session_id: self.id.clone(),
            parent_session: self.parent.clone(),
            generation: self.generation,
            model: settings.model.clone(),
            provider: provider.to_string(),
            thresholds: settings.thresholds,
            demo,
        }
    }

    /// `--continue` in the TUI: the conversation so far as events (text as cells, tool calls as
    /// a line).
    pub(super) fn replay(&self) -> Vec<Event> {
        let mut out = Vec::new();
        for (i, m) in self.messages.iter().enumerate() {
            match m.role {
                Role::User => {
                    // What the user typed: the `@path` attachments stay out of the replay.
                    let text: String = m
                        .content
                        .iter()
                        .filter_map(|b| match b {
                            Block::Text { text }
                                if !text.starts_with(crate::engine::mentions::ATTACHMENT_OPEN)
                                    && !text.starts_with(SHELL_NOTE_OPEN) =>
                            {
                                Some(text.as_str())
                            }
                            _ => None,
                        })
                        .collect();
                    if !text.trim().is_empty() {
                        // A successor's first message is its briefing; a summary is compaction's.
                        let engine = (i == 0 && self.parent.is_some())
                            || text.starts_with(crate::engine::compact::SUMMARY_PREFIX);
                        out.push(Event::UserMessage {
                            turn: None,
                            origin: if engine { Origin::Engine } else { Origin::User },
                            text,
                        });
                    }
                }
                Role::Assistant => {
                    let text = m.text();
                    if !text.trim().is_empty() {
                        out.push(Event::AssistantDone {
                            turn: None,
                            text,
                            interrupted: false,
                        });
                    }
                    let tools: Vec<&str> = m
                        .content
                        .iter()
                        .filter_map(|b| match b {
                            Block::ToolUse { name, .. } => Some(name.as_str()),
                            _ => None,
                        })
                        .collect();
                    if !tools.is_empty() {
                        out.push(Event::Notice {
                            message: format!("(earlier tool calls: {})", tools.join(", ")),
                        });
                    }
                }
            }
        }
        out
    }

    /// What the session holds now (`tokens`: its context as the gauge estimates it), for the
    /// ledger and the divider when it is retired.
    pub(super) fn held(&self, tokens: u64) -> Held {
        let tool_calls = self
            .messages
            .iter()
            .flat_map(|m| &m.content)
            .filter(|b| matches!(b, Block::ToolUse { .. }))
            .count();
        let path = self.transcript.path();
        Held {
            messages: self.messages.len(),
            tool_calls,
            tokens,
            transcript: (!path.as_os_str().is_empty()).then(|| path.to_path_buf()),
        }
    }
}

/// Which session a state is: its id, its parent (a successor's) and its generation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Identity {
    pub(super) id: String,
    pub(super) parent: Option<String>,
    pub(super) generation: u32,
}

impl Default for Identity {
    fn default() -> Self {
        Identity {
            id: String::new(),
            parent: None,
            generation: 1,
        }
    }
}

/// The user request in progress: the running message turn's user messages, kept
/// after the turn when it did not complete (interrupted, failed, out of iterations), so a handoff
/// made then still carries it. A completed turn closes it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct UserRequest {
    pub(super) messages: Vec<String>,
    pub(super) open: bool,
}

impl UserRequest {
    /// A new request opened by a user turn.
    pub(super) fn opened(text: String) -> UserRequest {
        UserRequest {
            messages: vec![text],
            open: true,
        }
    }

    /// The messages a successor gets after its briefing: none when no request is open.
    pub(super) fn in_flight(&self) -> Vec<String> {
        if self.open {
            self.messages.clone()
        } else {
            Vec::new()
        }
    }
}
