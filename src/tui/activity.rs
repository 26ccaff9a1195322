//! What the engine is doing, as far as the UI knows, and the spinner line that says so: a reply
//! streaming, a tool running, the subagents at work, the handoff's writing turn; a provider
//! silent for long, the MCP servers a request waits for, a question waiting for the user's
//! answer, the main thread waiting for a handoff written beside it.

use std::time::{Duration, Instant};

use super::handoff_state::{BackgroundHandoff, BackgroundStage};
use super::keymap::{Action, short_label_for};

/// What the engine is doing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Running {
    /// Nothing runs.
    Idle,
    /// A request is in flight or streaming.
    Streaming {
        /// When it started.
        since: Instant,
    },
    /// A tool runs.
    Tool {
        /// The tool.
        name: String,
        /// When it started.
        since: Instant,
    },
    /// The handoff's writing turn runs (Esc cancels it).
    WritingHandoff {
        /// When the writing turn started.
        since: Instant,
    },
}

/// A spinner line: its label, since when it runs, and the key hint after it.
pub(crate) type SpinnerLine = (String, Instant, String);

/// What runs, and what the spinner says about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Activity {
    /// What the engine is doing.
    running: Running,
    /// Since when the provider has sent nothing, once that passed 15 s (the spinner says so).
    silent_since: Option<Instant>,
    /// The MCP servers the next request waits for, and since when (the spinner says so).
    mcp_waiting: Option<(Vec<String>, Instant)>,
    /// The subagents running now (their `task` call ids) and when each started.
    agents: Vec<(String, Instant)>,
}

impl Default for Activity {
    fn default() -> Self {
        Activity {
            running: Running::Idle,
            silent_since: None,
            mcp_waiting: None,
            agents: Vec::new(),
        }
    }
}

impl Activity {
    /// What runs now.
    #[cfg(test)]
    pub(crate) fn running(&self) -> &Running {
        &self.running
    }

    /// True while something runs that Esc can abort.
    pub(crate) fn is_running(&self) -> bool {
        !matches!(self.running, Running::Idle)
    }

    /// The handoff's writing turn runs: its text goes to the document, not the chat.
    pub(crate) fn writing_handoff(&self) -> bool {
        matches!(self.running, Running::WritingHandoff { .. })
    }

    /// A message was sent (or a turn of messages started): it runs, unless something does.
    pub(crate) fn message_sent(&mut self, now: Instant) {
        if self.running == Running::Idle {
            self.running = Running::Streaming { since: now };
        }
    }

    /// Text of the reply streams (after a tool, or the first of the turn).
    pub(crate) fn streaming(&mut self, now: Instant) {
        if !matches!(self.running, Running::Streaming { .. }) {
            self.running = Running::Streaming { since: now };
        }
    }

    /// A tool call runs (not during the handoff's writing turn, which goes on).
    pub(crate) fn tool_started(&mut self, name: String, now: Instant) {
        if !self.writing_handoff() {
            self.running = Running::Tool { name, since: now };
        }
    }

    /// A tool call has its result: the reply streams on.
    pub(crate) fn tool_done(&mut self, now: Instant) {
        if matches!(self.running, Running::Tool { .. }) {
            self.running = Running::Streaming { since: now };
        }
    }

    /// The user allowed the tool waiting for the answer: it runs from now.
    pub(crate) fn tool_allowed(&mut self, now: Instant) {
        if let Running::Tool { since, .. } = &mut self.running {
            *since = now;
        }
    }

    /// The handoff's writing turn runs.
    pub(crate) fn writing_started(&mut self, now: Instant) {
        self.running = Running::WritingHandoff { since: now };
    }

    /// The handoff's writing turn is over (its document frozen, or the successor started).
    pub(crate) fn writing_over(&mut self) {
        if self.writing_handoff() {
            self.running = Running::Idle;
        }
    }

    /// Nothing runs any more (the handoff cancelled or failed, its document frozen).
    pub(crate) fn stop(&mut self) {
        self.running = Running::Idle;
    }

    /// A message could not reach the engine: what it started does not run.
    pub(crate) fn send_failed(&mut self) {
        if matches!(self.running, Running::Streaming { .. }) {
            self.running = Running::Idle;
        }
    }

    /// A turn ended: the MCP wait is over and no subagent runs on (the engine answers every
    /// `task` call before a turn ends).
    pub(crate) fn turn_over(&mut self) {
        self.mcp_waiting = None;
        self.agents.clear();
    }

    /// A message turn's end: its reply and tools stop (the handoff's writing turn goes on).
    pub(crate) fn message_over(&mut self) {
        if matches!(
            self.running,
            Running::Streaming { .. } | Running::Tool { .. }
        ) {
            self.running = Running::Idle;
        }
    }

    /// The engine is gone: nothing runs.
    pub(crate) fn engine_gone(&mut self) {
        self.running = Running::Idle;
        self.turn_over();
    }

    /// The provider has sent nothing for `silent`.
    pub(crate) fn silent(&mut self, silent: Duration, now: Instant) {
        self.silent_since = now.checked_sub(silent);
    }

    /// The provider speaks again.
    pub(crate) fn resumed(&mut self) {
        self.silent_since = None;
    }

    /// The MCP servers the next request waits for (none: the wait is over).
    pub(crate) fn mcp_waiting(&mut self, servers: Vec<String>, now: Instant) {
        self.mcp_waiting = match (servers.is_empty(), self.mcp_waiting.take()) {
            (true, _) => None,
            (false, Some((_, since))) => Some((servers, since)),
            (false, None) => Some((servers, now)),
        };
    }

    /// Whether a request waits for MCP servers.
    #[cfg(test)]
    pub(crate) fn waits_for_mcp(&self) -> bool {
        self.mcp_waiting.is_some()
    }

    /// The subagents running, and since when.
    pub(crate) fn agents(&self) -> &[(String, Instant)] {
        &self.agents
    }

    /// Subagent `id` started (a restart replaces the earlier one).
    pub(crate) fn agent_started(&mut self, id: &str, now: Instant) {
        self.agents.retain(|(a, _)| a != id);
        self.agents.push((id.to_string(), now));
    }

    /// Subagent `id` ended.
    pub(crate) fn agent_ended(&mut self, id: &str) {
        self.agents.retain(|(a, _)| a != id);
    }

    /// The spinner line, if one shows: a tool waiting for the answer to `asking` (the name of
    /// the question first in line), the main thread waiting for `background`'s document or
    /// review, the MCP servers, a silent provider, the subagents, or what runs.
    pub(crate) fn spinner(
        &self,
        asking: Option<&str>,
        background: Option<BackgroundHandoff>,
    ) -> Option<SpinnerLine> {
        if let (Some(name), Running::Tool { since, .. }) = (asking, &self.running) {
            return Some((
                format!("{name} waits for your answer…"),
                *since,
                String::new(),
            ));
        }
        let esc = short_label_for(Action::Abort);
        // A silence that began during what runs now (a stale one from an aborted try is ignored).
        let silent = |since: &Instant| self.silent_since.filter(|s| s >= since);
        match &self.running {
            Running::Idle => None,
            Running::Streaming { since } => {
                let hint = format!("{esc} to interrupt");
                if let Some(bg) = background
                    && let Some(t) = bg.main_waits
                {
                    let label = if bg.stage == BackgroundStage::Review {
                        "waiting for the handoff review to end…"
                    } else {
                        "waiting for the handoff document…"
                    };
                    return Some((label.into(), t, hint));
                }
                if let Some((servers, waiting)) = &self.mcp_waiting {
                    return Some((
                        format!("waiting for MCP servers: {}…", servers.join(", ")),
                        *waiting,
                        hint,
                    ));
                }
                Some(match silent(since) {
                    Some(s) => ("waiting for the provider…".into(), s, hint),
                    None => ("working…".into(), *since, hint),
                })
            }
            Running::Tool { since, .. } if !self.agents.is_empty() => Some((
                match self.agents.len() {
                    1 => "a subagent works…".to_string(),
                    n => format!("{n} subagents work…"),
                },
                *since,
                format!(
                    "{esc} to interrupt · {} shows their work",
                    short_label_for(Action::ToggleTool)
                ),
            )),
            Running::Tool { name, since } => Some((
                format!("running {name}…"),
                *since,
                format!("{esc} to interrupt"),
            )),
            Running::WritingHandoff { since } => {
                let hint = format!("{esc} to cancel");
                Some(match silent(since) {
                    Some(s) => ("writing handoff… waiting for the provider…".into(), s, hint),
                    None => ("writing handoff…".into(), *since, hint),
                })
            }
        }
    }
}
