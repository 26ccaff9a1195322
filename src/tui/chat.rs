//! The chat as the reducer keeps it: its cells, the reply streaming into one of them, the tool
//! cell picked with the selection keys, the tool cell running now (its seconds counted), the
//! notices held while a reply streams (a notice must not cut the reply's cell in two), and where
//! each turn this front end sent begins (a rewind removes the turns it abandons, from there on).
//! Turn events, commands and answers change the chat only through these methods; the view draws
//! [`Chat::cells`].

use std::path::PathBuf;
use std::time::Instant;

use crate::engine::protocol::{CommandExit, FileDiff, TurnId};

use super::render::agent_cell::AgentCell;
use super::render::cell::{AssistantState, Cell};
use super::render::tool_cell::ToolStatus;
use super::render::transcript::Transcript;

/// What a tool cell says when its turn ended before its result: the result of an aborted call
/// may arrive after the next turn started, and is dropped then.
const TOOL_INTERRUPTED: &str = "interrupted: its turn ended before the result";

/// The chat: its cells and the cells the reducer points at.
pub(crate) struct Chat {
    /// The transcript.
    cells: Transcript,
    /// The cell of the reply streaming now (deltas go there until `AssistantDone`).
    reply: Option<usize>,
    /// The tool cell picked with the selection keys or the mouse (Ctrl-T expands it).
    selected_tool: Option<usize>,
    /// The tool call running now: its cell and when it started (its cell counts seconds).
    running_tool: Option<(usize, Instant)>,
    /// Notices held while a reply streams; shown when it is done.
    deferred: Vec<String>,
    /// Hooks that ran quietly (succeeded, gave the model nothing), not shown yet.
    folded_hooks: Vec<crate::engine::hooks::HookNote>,
    /// The turns this front end sent and the cell each begins at, oldest first.
    turn_starts: Vec<(TurnId, usize)>,
}

impl Chat {
    /// An empty chat, or one with the banner as its first line.
    pub(crate) fn new(banner: Option<String>) -> Self {
        let mut cells = Transcript::new();
        if let Some(message) = banner {
            cells.push(Cell::Notice { message });
        }
        Chat {
            cells,
            reply: None,
            selected_tool: None,
            running_tool: None,
            deferred: Vec::new(),
            folded_hooks: Vec::new(),
            turn_starts: Vec::new(),
        }
    }

    /// The cells, for the view and for reading.
    pub(crate) fn cells(&self) -> &Transcript {
        &self.cells
    }

    /// The index of the last cell (0 when there is none).
    pub(crate) fn last_index(&self) -> usize {
        self.cells.len().saturating_sub(1)
    }

    /// The tool cell the selection keys picked, if any.
    pub(crate) fn selected_tool(&self) -> Option<usize> {
        self.selected_tool
    }

    /// Whether a tool call's cell counts its seconds now.
    #[cfg(test)]
    pub(crate) fn tool_runs(&self) -> bool {
        self.running_tool.is_some()
    }

    /// The streaming assistant cell (if it is the last cell) stops streaming.
    pub(crate) fn finish_streaming(&mut self) {
        if self.cells.last().is_some_and(Cell::is_streaming)
            && let Some(Cell::Assistant { state, .. }) = self.cells.last_mut()
        {
            *state = AssistantState::Done;
        }
    }

    /// Push a cell after closing the streaming one.
    /// Keep a hook that ran quietly out of the chat (counted until shown).
    pub(crate) fn fold_hook(&mut self, note: crate::engine::hooks::HookNote) {
        self.folded_hooks.push(note);
    }

    /// How many hooks ran quietly and are not shown.
    pub(crate) fn folded_hooks(&self) -> usize {
        self.folded_hooks.len()
    }

    /// The hooks that ran quietly, taken.
    pub(crate) fn take_folded_hooks(&mut self) -> Vec<crate::engine::hooks::HookNote> {
        std::mem::take(&mut self.folded_hooks)
    }

    pub(crate) fn push_cell(&mut self, cell: Cell) {
        self.finish_streaming();
        self.cells.push(cell);
    }

    /// A notice line.
    pub(crate) fn notice(&mut self, message: impl Into<String>) {
        self.push_cell(Cell::Notice {
            message: message.into(),
        });
    }

    /// An error line.
    pub(crate) fn error(&mut self, message: impl Into<String>) {
        self.push_cell(Cell::Error {
            message: message.into(),
        });
    }

    /// A notice now, or after the reply that streams (so the reply stays one cell).
    pub(crate) fn notice_soon(&mut self, message: impl Into<String>) {
        if self.cells.last().is_some_and(Cell::is_streaming) {
            self.deferred.push(message.into());
        } else {
            self.notice(message);
        }
    }

    /// Show the notices held while a reply streamed.
    pub(crate) fn flush_deferred(&mut self) {
        for m in std::mem::take(&mut self.deferred) {
            self.notice(m);
        }
    }

    /// A message the user sent, as shown (the selection goes: the chat follows the bottom).
    pub(crate) fn sent(&mut self, text: String) {
        self.finish_streaming();
        self.cells.push(Cell::User { text });
        self.selected_tool = None;
    }

    /// Turn `turn` begins here: its cells are the ones pushed from now on.
    pub(crate) fn turn_begins(&mut self, turn: TurnId) {
        self.finish_streaming();
        self.turn_starts.push((turn, self.cells.len()));
    }

    /// A rewind went back to before the message of `turn` (None: one sent before any turn shown
    /// here, by an earlier process): the cells from that turn's on go, whatever came after it
    /// (the transcript file keeps them). False when no cell of it is here (nothing goes).
    pub(crate) fn drop_turns_from(&mut self, turn: Option<TurnId>) -> bool {
        let start = match turn {
            Some(t) => self.turn_starts.iter().find(|(id, _)| *id == t),
            None => self.turn_starts.first(),
        };
        let Some(&(_, cut)) = start else {
            return false;
        };
        self.cells.truncate(cut);
        self.turn_starts.retain(|(_, at)| *at < cut);
        self.reply = self.reply.filter(|&i| i < cut);
        self.selected_tool = self.selected_tool.filter(|&i| i < cut);
        self.running_tool = self.running_tool.filter(|&(i, _)| i < cut);
        self.deferred.clear();
        true
    }

    /// Another run is continued: the cells go too when `clear` (another run than the one shown);
    /// nothing points into them any more.
    pub(crate) fn resumed(&mut self, clear: bool) {
        if clear {
            self.cells.clear();
            self.turn_starts.clear();
        }
        self.reply = None;
        self.selected_tool = None;
        self.running_tool = None;
    }

    /// Ctrl-T: the selected tool cell (else the newest) expands or collapses; its index, to
    /// bring it into view.
    pub(crate) fn toggle_tool(&mut self) -> Option<usize> {
        let idx = self
            .selected_tool
            .or_else(|| self.cells.tool_before(None))?;
        self.cells.toggle_tool_expanded(idx).then_some(idx)
    }

    /// Alt-Up / Alt-Down: the previous / next tool cell is selected; down past the newest
    /// clears the selection (`None`: the chat goes to the bottom).
    pub(crate) fn select_tool(&mut self, prev: bool) -> Option<usize> {
        let next = match (prev, self.selected_tool) {
            (true, None) => self.cells.tool_before(None),
            (true, Some(i)) => self.cells.tool_before(Some(i)).or(Some(i)),
            (false, None) => None,
            (false, Some(i)) => self.cells.tool_after(i),
        };
        self.selected_tool = next;
        next
    }

    /// A click on cell `idx`: a tool cell is selected (false when it is no such cell).
    pub(crate) fn select_cell(&mut self, idx: usize) -> bool {
        if !self.cells.get(idx).is_some_and(Cell::is_expandable) {
            return false;
        }
        self.selected_tool = Some(idx);
        true
    }

    /// The running tool cell shows its whole seconds: changed (and re-laid out) once a second.
    pub(crate) fn count_tool_seconds(&mut self, now: Instant) {
        let Some((idx, since)) = self.running_tool else {
            return;
        };
        let secs = now.saturating_duration_since(since).as_secs();
        let stale = matches!(
            self.cells.get(idx),
            Some(Cell::Tool { status: ToolStatus::Running { secs: s, .. }, .. }) if *s != secs
        );
        if stale
            && let Some(Cell::Tool {
                status: ToolStatus::Running { secs: s, .. },
                ..
            }) = self.cells.get_mut(idx)
        {
            *s = secs;
        }
    }

    /// A broken try's text is taken back (its replay streams anew after the retry line).
    pub(crate) fn discard_broken_try(&mut self) {
        while matches!(
            self.cells.last(),
            Some(
                Cell::Assistant {
                    state: AssistantState::Streaming(_),
                    ..
                } | Cell::Thinking { .. }
            )
        ) {
            self.cells.pop();
        }
        self.reply = None;
    }

    /// A piece of the reply: into its streaming cell, or a new one.
    pub(crate) fn text_delta(&mut self, text: String) {
        let streaming = self.cells.last().is_some_and(Cell::is_streaming);
        match self.cells.last_mut() {
            Some(cell) if streaming => {
                cell.push_delta(&text);
            }
            _ => {
                self.cells.push(Cell::streaming(text));
                self.reply = Some(self.last_index());
            }
        }
    }

    /// A piece of thinking: into the thinking cell at the end, or a new one.
    pub(crate) fn thinking_delta(&mut self, text: String) {
        if let Some(Cell::Thinking { text: t, .. }) = self.cells.last_mut() {
            t.push_str(&text);
        } else {
            self.push_cell(Cell::Thinking {
                text,
                expanded: false,
            });
        }
    }

    /// The reply is complete. Its own cell gets its end, wherever it is now (a notice may have
    /// come after it); a reply that never streamed is drawn once, here. Never both: that drew an
    /// interrupted reply twice. The notices held meanwhile follow.
    pub(crate) fn assistant_done(&mut self, text: String, interrupted: bool) {
        let end = if interrupted {
            AssistantState::Interrupted
        } else {
            AssistantState::Done
        };
        match self.reply.take() {
            Some(idx) => {
                if let Some(Cell::Assistant {
                    markdown,
                    state: cell_state,
                }) = self.cells.get_mut(idx)
                {
                    // Deltas that went missing: the complete text extends what streamed.
                    if text.len() > markdown.len() && text.starts_with(markdown.as_str()) {
                        *markdown = text;
                    }
                    *cell_state = end;
                }
            }
            None if !text.is_empty() => self.push_cell(Cell::Assistant {
                markdown: text,
                state: end,
            }),
            None => {}
        }
        self.flush_deferred();
    }

    /// Whether the last cell is a reply marked interrupted (no "Interrupted" line is needed).
    pub(crate) fn ends_interrupted(&self) -> bool {
        matches!(
            self.cells.last(),
            Some(Cell::Assistant {
                state: AssistantState::Interrupted,
                ..
            })
        )
    }

    /// A tool call starts: its cell, counting its seconds from `now`.
    pub(crate) fn tool_call(&mut self, id: String, name: String, summary: String, now: Instant) {
        self.push_cell(Cell::Tool {
            id,
            name,
            summary,
            status: ToolStatus::running(),
            expanded: false,
            diff: None,
            exit: None,
        });
        self.running_tool = Some((self.last_index(), now));
    }

    /// A tool call's result, into its cell (or its subagent's).
    pub(crate) fn tool_result(
        &mut self,
        id: &str,
        result: ToolStatus,
        (new_diff, new_exit): (Option<Box<FileDiff>>, Option<CommandExit>),
    ) {
        self.running_tool = None;
        match self.cells.find_tool_mut(id) {
            Some(Cell::Tool {
                status, diff, exit, ..
            }) => {
                *status = result;
                *diff = new_diff;
                *exit = new_exit;
            }
            Some(Cell::Subagent(agent)) => agent.report = result,
            _ => {}
        }
    }

    /// A piece of a running command's output: into its cell.
    pub(crate) fn tool_output(&mut self, id: &str, text: &str) {
        if let Some(Cell::Tool {
            status: ToolStatus::Running { live, .. },
            ..
        }) = self.cells.find_tool_mut(id)
        {
            live.push(text);
        }
    }

    /// The call `id` asks for approval: its cell waits for the answer (it runs, and counts its
    /// seconds, once allowed).
    pub(crate) fn awaits_approval(&mut self, id: &str) {
        if let Some(Cell::Tool { status, .. }) = self.cells.find_tool_mut(id)
            && matches!(status, ToolStatus::Running { .. })
        {
            *status = ToolStatus::AwaitsApproval;
        }
    }

    /// The user allowed the call `id`: its cell runs from now (a denied call gets its result).
    pub(crate) fn tool_allowed(&mut self, id: &str, now: Instant) {
        if let Some(Cell::Tool { status, .. }) = self.cells.find_tool_mut(id)
            && *status == ToolStatus::AwaitsApproval
        {
            *status = ToolStatus::running();
        }
        if let Some((_, since)) = self.running_tool.as_mut() {
            *since = now;
        }
    }

    /// The running turn is over: its tool cells with no result yet are closed as interrupted,
    /// so none stays running on screen.
    pub(crate) fn close_running_tools(&mut self) {
        let open: Vec<usize> = (0..self.cells.len())
            .filter(|&i| {
                matches!(
                    self.cells.get(i),
                    Some(Cell::Tool {
                        status: ToolStatus::Running { .. } | ToolStatus::AwaitsApproval,
                        ..
                    })
                )
            })
            .collect();
        for i in &open {
            if let Some(Cell::Tool { status, .. }) = self.cells.get_mut(*i) {
                *status = ToolStatus::Failed(TOOL_INTERRUPTED.to_string());
            }
        }
        if !open.is_empty() {
            self.running_tool = None;
        }
    }

    /// The answer to a question, recorded in its cell; false when cell `idx` is no question.
    pub(crate) fn record_answer(&mut self, idx: usize, text: &str) -> bool {
        match self.cells.get_mut(idx) {
            Some(
                Cell::Approval { answer, .. }
                | Cell::McpJson { answer, .. }
                | Cell::HooksQuestion { answer, .. },
            ) => {
                *answer = Some(text.to_string());
                true
            }
            _ => false,
        }
    }

    /// The newest assistant reply with text, as markdown.
    pub(crate) fn last_reply(&self) -> Option<String> {
        self.cells.iter().rev().find_map(|c| match c {
            Cell::Assistant { markdown, .. } if !markdown.trim().is_empty() => {
                Some(markdown.clone())
            }
            _ => None,
        })
    }

    /// A subagent started for the `task` call `id`: its call's cell becomes its live cell (one
    /// is added when the call's cell is not there).
    pub(crate) fn subagent_started(
        &mut self,
        id: String,
        description: &str,
        model: String,
        window: u64,
        transcript: PathBuf,
    ) {
        let fallback = format!("task: {description}");
        match self.cells.find_tool_mut(&id) {
            Some(cell @ Cell::Tool { .. }) => {
                let summary = match cell {
                    Cell::Tool { summary, .. } => std::mem::take(summary),
                    _ => fallback,
                };
                *cell = Cell::Subagent(Box::new(AgentCell::started(
                    id, summary, model, window, transcript,
                )));
            }
            Some(_) => {}
            None => self.push_cell(Cell::Subagent(Box::new(AgentCell::started(
                id, fallback, model, window, transcript,
            )))),
        }
    }

    /// The live cell of subagent `id`, to follow its events.
    pub(crate) fn subagent_mut(&mut self, id: &str) -> Option<&mut AgentCell> {
        match self.cells.find_tool_mut(id) {
            Some(Cell::Subagent(agent)) => Some(agent),
            _ => None,
        }
    }

    /// Subagent `id` has run `secs` whole seconds: its cell shows them (changed only when the
    /// second changed, so the cell is laid out again once a second).
    pub(crate) fn subagent_seconds(&mut self, id: &str, secs: u64) {
        let shown = self.cells.iter().rev().find_map(|c| match c {
            Cell::Subagent(a) if a.id == id => Some(a.elapsed_ms / 1000),
            _ => None,
        });
        if shown.is_some_and(|s| s != secs)
            && let Some(a) = self.subagent_mut(id)
        {
            a.elapsed_ms = secs.saturating_mul(1000);
        }
    }
}
