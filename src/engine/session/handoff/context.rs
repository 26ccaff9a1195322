//! The narrow context a handoff works through ([`HandoffCx`]): the parts it works on (its own
//! state, the conversation, the step's ledger, the running turn), what the run was started with,
//! the language servers' open problems, the event sink, the provider and the main thread's
//! requests, the gates of the user's hooks, the step's memory, the op queue it waits on, and the
//! start of the successor session. The engine lends itself as this context; the unit reaches
//! nothing else of it.

use crate::engine::context::strategy::StrategyKind;
use crate::engine::error::Error;
use crate::engine::hooks::{HookBatch, HookInput, Outcome as HookOutcome};
use crate::engine::lsp::OpenProblems;
use crate::engine::policy::FrontEnd;
use crate::engine::protocol::{Event, ExitReason, HandoffRefusal, Op, TurnId, TurnKind};
use crate::engine::session::conversation::Conversation;
use crate::engine::session::model_request::{Outcome, Purpose, Stop};
use crate::engine::session::step_ledger::StepLedger;
use crate::engine::session::user_hooks::Gate;
use crate::engine::session::{ActiveTurn, HandoffParams, ModelSettings, Places};
use crate::engine::tools::recall::Source;
use crate::engine::types::{Message, ModelRequest};

use super::phases::Handoffs;
use super::tasks::{BgReply, Requester};

/// What woke a wait of the main thread: an op (None: the front end is gone), or the answer of a
/// background task.
pub(in crate::engine::session) enum Wake {
    Op(Option<Op>),
    Reply(BgReply),
}

/// What a handoff reads and where it writes.
pub(in crate::engine::session) trait HandoffCx {
    // The parts it works on.

    /// The runner's state: every handoff of the run.
    fn handoffs(&mut self) -> &mut Handoffs;
    /// The current session: its history, request in flight, briefing and transcript.
    fn conv(&mut self) -> &mut Conversation;
    /// The step's record in the run's ledger.
    fn ledger(&mut self) -> &mut StepLedger;
    /// The turn running now (None when idle).
    fn turn(&mut self) -> &mut Option<ActiveTurn>;

    // What the run was started with.

    /// The model, effort and window in force.
    fn settings(&self) -> &ModelSettings;
    /// The workspace, the workbench and the data directory.
    fn places(&self) -> &Places;
    /// When and how the run hands off.
    fn params(&self) -> HandoffParams;
    /// Who drives the engine (whether it reviews, whether it can ask).
    fn front_end(&self) -> FrontEnd;
    /// The problems the language servers see now in the files they have open (None: off).
    fn open_problems(&self) -> Option<OpenProblems>;

    // The event sink.

    fn emit(&mut self, ev: Event);
    /// Emit `ev` and record it in the transcript.
    fn emit_logged(&mut self, ev: Event);
    /// Write the ledger (a failure is said).
    fn save_manifest(&mut self);
    /// Report an error (in the ledger and as an event): the turn ends with its kind.
    fn fail(&mut self, e: &Error) -> ExitReason;
    /// The gauge's estimate of the context, to the front end.
    fn emit_usage_estimate(&mut self);

    // The provider and the main thread's requests.

    /// The context as the gauge estimates it now.
    fn ctx(&self) -> u64;
    /// The output cap (`max_tokens`) requests ask for in the window in force.
    fn output_cap(&self) -> u32;
    /// The main thread's request on `history` with tool use off: its system prompt, tools and
    /// settings, the history masked as its last request sent it (the provider's cache holds).
    fn prefix_request(&self, history: Vec<Message>) -> ModelRequest;
    /// Every instruction flower-tui writes into the requests a writer has seen (both writing
    /// prompts, the briefing's fixed texts, the system prompt, the tools' descriptions): what a
    /// document must not restate.
    fn instruction_texts(&self) -> Vec<String>;
    /// The first context strategy in force whose line is crossed.
    fn due_strategy(&self) -> Option<StrategyKind>;
    /// A window stated by an overflow message becomes the model's window.
    fn learn_window(&mut self, limit: u64);
    /// Book a request's cost.
    fn add_cost(&mut self, cost: f64);
    /// Stream `req` in the main thread while the op queue is listened to.
    async fn stream(&mut self, req: ModelRequest, purpose: Purpose) -> Outcome;
    /// Main-thread responses so far (the `--handoff-after` hook counts them).
    fn responses(&self) -> u32;
    /// Overflow retries in a row so far.
    fn overflow_retries(&self) -> u32;
    /// One more overflow retry.
    fn retry_overflow(&mut self);
    /// What a request sent beside the main thread needs (it is counted now).
    fn requester(&mut self) -> Requester;

    // The user's hooks.

    /// `PreHandoff` in the main thread: refused, aborted, or the focus to write with.
    async fn pre_handoff(&mut self, manual: bool, focus: Option<String>) -> Gate;
    /// Run the hooks for `input` in the main thread (Esc kills them; the handoff goes on).
    async fn run_hooks(&mut self, input: HookInput);
    /// The batch `input` runs, if any hook matches it (a background handoff runs it as a task).
    fn hook_batch(&mut self, input: &HookInput) -> Option<HookBatch>;
    /// Each hook that ran, to the front end.
    fn report_hooks(&mut self, outcome: &HookOutcome);
    /// What `PreHandoff` hooks decided (a refusal is recorded in the ledger).
    fn handoff_verdict(&mut self, outcome: &HookOutcome, focus: Option<String>) -> Gate;

    // The step's memory.

    /// The writing turn's focus: the step's standing focus, then `given`.
    fn focus(&self, given: Option<String>) -> Option<String>;
    /// Pins the user typed into the document during its review.
    fn adopt_typed_pins(&mut self, file: &str, frozen: &str);
    /// The transcripts of the step's retired generations, oldest first.
    fn predecessors(&self) -> Vec<Source>;
    /// The background jobs running now, for the successor's briefing; None when none runs.
    fn jobs_briefing(&self) -> Option<String>;
    /// The background jobs, for the `## Touched` section.
    fn jobs(&self) -> Vec<crate::engine::jobs::JobInfo>;
    /// The request in flight fitted below the successor's handoff line: whether any was spilled.
    fn fit_request(&mut self, request: &mut [String], before: &Message) -> bool;

    // Turns and the op queue.

    fn begin_turn(&mut self, id: TurnId, kind: TurnKind) -> ActiveTurn;
    /// The turn `turn` is over, for `reason`.
    fn close_turn(&mut self, turn: ActiveTurn, reason: ExitReason);
    /// Decline a `/handoff` turn.
    fn refuse_handoff(&mut self, turn: TurnId, reason: HandoffRefusal);
    /// Wait for the next op or the next answer of a background task.
    async fn next_wake(&mut self) -> Wake;
    /// An op that is there already.
    fn ready_op(&mut self) -> Option<Op>;
    /// Take the first queued op `wanted` picks: whether there was one.
    fn take_queued(&mut self, wanted: impl Fn(&Op) -> bool) -> bool;
    /// Sort an op that arrived while something runs: what it stops.
    fn triage(&mut self, op: Option<Op>) -> Option<Stop>;
    /// Shutdown came, or the front end is gone.
    fn shutting_down(&self) -> bool;

    // The successor.

    /// Retire the current session for a successor of `generation` whose first message is
    /// `first`: the workspace's checkpoint, the old session's `SessionEnd`, the new session.
    fn start_successor(&mut self, parent: String, generation: u32, first: Message);
}
