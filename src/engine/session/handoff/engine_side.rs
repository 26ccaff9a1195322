//! The engine's side of the handoff unit: the narrow context it lends the unit
//! ([`HandoffCx`]), each piece a line or three over the engine's parts, and its delegations for
//! the unit's entry points more than one place calls (an entry point with one caller is called
//! there, with the engine as its context).

use super::background;
use super::boundary;
use super::context::{HandoffCx, Wake};
use super::phases::Handoffs;
use super::reopened_review;
use super::tasks::{BgReply, Requester};
use crate::engine::context::strategy::{Pressure, StrategyKind};
use crate::engine::error::Error;
use crate::engine::hooks::{EndReason, HookBatch, HookInput, Outcome as HookOutcome};
use crate::engine::ledger::Cut;
use crate::engine::lsp::OpenProblems;
use crate::engine::policy::FrontEnd;
use crate::engine::protocol::{Event, ExitReason, HandoffRefusal, Op, TurnId, TurnKind};
use crate::engine::session::conversation::Conversation;
use crate::engine::session::model_request::{Outcome, Purpose, Stop};
use crate::engine::session::step_ledger::StepLedger;
use crate::engine::session::user_hooks::{self, Gate};
use crate::engine::session::{ActiveTurn, Engine, HandoffParams, ModelSettings, Places};
use crate::engine::tools::recall::Source;
use crate::engine::types::{Message, ModelRequest, ToolChoice};

impl HandoffCx for Engine {
    fn handoffs(&mut self) -> &mut Handoffs {
        &mut self.handoff
    }

    fn conv(&mut self) -> &mut Conversation {
        &mut self.conversation
    }

    fn ledger(&mut self) -> &mut StepLedger {
        &mut self.ledger
    }

    fn turn(&mut self) -> &mut Option<ActiveTurn> {
        &mut self.turn
    }

    fn settings(&self) -> &ModelSettings {
        &self.settings
    }

    fn places(&self) -> &Places {
        &self.run.places
    }

    fn params(&self) -> HandoffParams {
        self.run.handoff
    }

    fn front_end(&self) -> FrontEnd {
        self.run.front_end
    }

    fn open_problems(&self) -> Option<OpenProblems> {
        self.run.lsp.open_problems()
    }

    fn emit(&mut self, ev: Event) {
        Engine::emit(self, ev);
    }

    fn emit_logged(&mut self, ev: Event) {
        Engine::emit_logged(self, ev);
    }

    fn save_manifest(&mut self) {
        self.ledger.save();
    }

    fn fail(&mut self, e: &Error) -> ExitReason {
        Engine::fail(self, e)
    }

    fn emit_usage_estimate(&mut self) {
        Engine::emit_usage_estimate(self);
    }

    fn ctx(&self) -> u64 {
        self.ctx_estimate()
    }

    fn output_cap(&self) -> u32 {
        self.settings.output_cap(self.run.provider.max_tokens)
    }

    fn prefix_request(&self, history: Vec<Message>) -> ModelRequest {
        ModelRequest {
            model: self.settings.model.clone(),
            system: self.conversation.system_prompt.clone(),
            messages: self.conversation.mask.as_sent(history, &self.history_at()),
            tools: self.tool_specs(),
            tool_choice: ToolChoice::None,
            max_tokens: self.settings.output_cap(self.run.provider.max_tokens),
            effort: self.settings.effort,
        }
    }

    fn instruction_texts(&self) -> Vec<String> {
        crate::engine::handoff::prompt::instruction_texts(
            &self.conversation.system_prompt,
            &self.tool_specs(),
        )
    }

    fn due_strategy(&self) -> Option<StrategyKind> {
        let pressure = Pressure {
            ctx: self.ctx_estimate(),
            window: self.settings.thresholds.window,
            writing_turn: false,
            has_session_id: !self.conversation.is_none(),
        };
        let due = self.run.strategies.iter().find(|s| s.due(&pressure));
        due.map(|s| s.kind())
    }

    fn learn_window(&mut self, limit: u64) {
        Engine::learn_window(self, limit);
    }

    fn add_cost(&mut self, cost: f64) {
        Engine::add_cost(self, cost);
    }

    async fn stream(&mut self, req: ModelRequest, purpose: Purpose) -> Outcome {
        Engine::stream(self, req, purpose).await
    }

    fn responses(&self) -> u32 {
        self.counters.responses()
    }

    fn overflow_retries(&self) -> u32 {
        self.counters.overflow_retries()
    }

    fn retry_overflow(&mut self) {
        self.counters.retry_overflow();
    }

    fn requester(&mut self) -> Requester {
        Requester {
            number: self.counters.next_request(),
            provider: self.run.provider.client.clone(),
            retry: self.run.provider.retry,
            events: self.run.events.clone(),
        }
    }

    async fn pre_handoff(&mut self, manual: bool, focus: Option<String>) -> Gate {
        user_hooks::pre_handoff(self, manual, focus).await
    }

    async fn run_hooks(&mut self, input: HookInput) {
        user_hooks::run_for_handoff(self, input).await;
    }

    fn hook_batch(&mut self, input: &HookInput) -> Option<HookBatch> {
        user_hooks::batch(self, input)
    }

    fn report_hooks(&mut self, outcome: &HookOutcome) {
        user_hooks::report(self, outcome);
    }

    fn handoff_verdict(&mut self, outcome: &HookOutcome, focus: Option<String>) -> Gate {
        user_hooks::handoff_verdict(self, outcome, focus)
    }

    fn focus(&self, given: Option<String>) -> Option<String> {
        self.ledger.handoff_focus(given)
    }

    fn adopt_typed_pins(&mut self, file: &str, frozen: &str) {
        self.ledger.adopt_typed_pins(file, frozen);
    }

    fn predecessors(&self) -> Vec<Source> {
        self.ledger.predecessors()
    }

    fn jobs_briefing(&self) -> Option<String> {
        self.run.jobs.briefing()
    }

    fn jobs(&self) -> Vec<crate::engine::jobs::JobInfo> {
        self.run.jobs.list(0)
    }

    fn fit_request(&mut self, request: &mut [String], before: &Message) -> bool {
        self.input_room().fit(request, before)
    }

    fn begin_turn(&mut self, id: TurnId, kind: TurnKind) -> ActiveTurn {
        Engine::begin_turn(self, id, kind)
    }

    fn close_turn(&mut self, turn: ActiveTurn, reason: ExitReason) {
        self.turn = None;
        Engine::end_turn(self, turn, reason);
    }

    fn refuse_handoff(&mut self, turn: TurnId, reason: HandoffRefusal) {
        Engine::refuse_handoff(self, turn, reason);
    }

    async fn next_wake(&mut self) -> Wake {
        tokio::select! {
            op = self.inbox.ops.recv() => Wake::Op(op),
            Some(reply) = self.handoff.next_reply() => Wake::Reply(reply),
        }
    }

    fn ready_op(&mut self) -> Option<Op> {
        self.inbox.ops.try_recv().ok()
    }

    fn take_queued(&mut self, wanted: impl Fn(&Op) -> bool) -> bool {
        let at = self.inbox.pending.iter().position(wanted);
        at.and_then(|i| self.inbox.pending.remove(i)).is_some()
    }

    fn triage(&mut self, op: Option<Op>) -> Option<Stop> {
        Engine::triage(self, op)
    }

    fn shutting_down(&self) -> bool {
        self.inbox.shutdown
    }

    fn start_successor(&mut self, parent: String, generation: u32, first: Message) {
        let retiring = self.conversation.generation;
        self.checkpoints.at_handoff(&mut self.ledger, retiring);
        self.session_left_hooks(EndReason::Handoff);
        self.start_session(Some(parent), generation, vec![first], false);
        self.ledger.commit_replacement();
    }
}

impl Engine {
    /// Start the writing beside the main thread if the handoff line is crossed (see
    /// [`background::consider`]): whether the pressure is met beside it.
    pub(in crate::engine::session) fn consider_background(&mut self, cut: Cut) -> bool {
        background::consider(self, cut)
    }

    /// An answer of a background handoff's task.
    pub(in crate::engine::session) fn on_background(&mut self, reply: BgReply) {
        background::on_reply(self, reply);
    }

    /// An op that belongs to the background handoff.
    pub(in crate::engine::session) fn background_op(&mut self, op: Op) {
        boundary::on_op(self, op);
    }

    /// At a message boundary: a reviewed background document turns over. True: a successor
    /// started.
    pub(in crate::engine::session) fn turnover_if_ready(&mut self) -> bool {
        boundary::turnover_if_ready(self)
    }

    /// `/new` or `/resume`: the background handoff is dropped.
    pub(in crate::engine::session) fn drop_background(&mut self, why: &str) {
        boundary::drop_background(self, why);
    }

    /// At a resumed start: a frozen handoff never turned over is reviewed again.
    pub(in crate::engine::session) async fn reopen_frozen(&mut self) {
        reopened_review::reopen_frozen(self).await;
    }
}
