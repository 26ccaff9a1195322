//! The engine's loop: what it says once the front end listens, the first moves of a resumed or
//! self-starting run, then one op at a time while idle (a turn, a handoff, a setting, a question,
//! an undo or a rewind),
//! a background handoff turned over at every idle boundary, and the way out on shutdown.

use super::Engine;
use super::conversation::Request;
use super::handoff;
use super::startup::FirstMoves;
use super::user_hooks;
use crate::engine::context;
use crate::engine::protocol::{Event, Op, Origin, TurnId, TurnKind};

impl Engine {
    pub(super) async fn run(&mut self, first: FirstMoves) {
        for message in first.warnings {
            self.emit(Event::Warning { message });
        }
        self.warn_about_the_floor();
        user_hooks::announce(self);
        if self.planning.mode != crate::engine::policy::Mode::Normal {
            self.emit(Event::Mode {
                mode: self.planning.mode,
            });
        }
        if first.resumed {
            self.announce_resumed();
            self.close_cut_short_turn().await;
            self.reopen_frozen().await;
        } else if let Some(text) = first.autostart {
            let task = text.clone();
            self.message_turn(
                TurnId::ENGINE,
                TurnKind::Message,
                Origin::Engine,
                &task,
                text,
            )
            .await;
        }
        while !self.inbox.shutdown {
            // Idle is a message boundary: a background handoff whose review is over turns over.
            self.turnover_if_ready();
            let Some(op) = self.next_idle_op().await else {
                break;
            };
            if !self.on_idle_op(op).await {
                break;
            }
        }
        // Quitting: a writing request still running is dropped (the transcript keeps the
        // session, the next start hands off again); a frozen document keeps its record and its
        // review reopens at the next start.
        self.background_op(Op::Shutdown);
        self.save_manifest_if_any();
        user_hooks::session_end(self).await;
    }

    /// One op while idle. False when the engine stops.
    async fn on_idle_op(&mut self, op: Op) -> bool {
        match op {
            Op::UserTurn { turn, text } => self.user_turn(turn, text).await,
            Op::Command { turn, name, args } => self.command_turn(turn, name, args).await,
            Op::Init { turn, overwrite } => self.init_turn(turn, overwrite).await,
            Op::Handoff { turn, focus } => handoff::manual(self, turn, focus).await,
            Op::ImplementPlan { turn, choice } => self.implement_plan(turn, choice).await,
            Op::Resume { run_id } => self.resume_run(&run_id).await,
            Op::Shutdown => {
                handoff::settle_before_exit(self).await;
                return false;
            }
            Op::NewSession => self.new_session(),
            Op::SetWindow { window } => self.set_window(window),
            Op::Restore {
                action,
                on_conflict,
            } => self.restore_op(action, on_conflict).await,
            Op::Rewind {
                turn,
                mode,
                on_conflict,
            } => self.rewind(turn, mode, on_conflict).await,
            op => self.on_answered_op(op),
        }
        true
    }

    /// The ops answered at once, the same while idle as during a turn (settings, questions, the
    /// step's memory, MCP, a background handoff's own ops); a stale answer is dropped.
    fn on_answered_op(&mut self, op: Op) {
        match op {
            Op::Permissions => self.emit(self.permissions_event()),
            Op::Cost => self.emit(self.cost_event()),
            Op::ListSessions => self.emit(self.sessions_event()),
            Op::RewindPoints => self.emit(self.rewind_points()),
            Op::SetModel { model } => self.set_model(&model),
            Op::SetEffort { effort } => self.set_effort(effort),
            Op::Revoke { rule } => self.revoke(rule),
            op @ (Op::Pin { .. } | Op::Unpin { .. } | Op::SetFocus { .. }) => self.on_memory_op(op),
            Op::McpRestart { name } => self.restart_mcp(&name),
            Op::SetMode { mode } => self.set_mode(mode),
            Op::McpJsonDecision { sha256, approve } => self.decide_mcp_json(&sha256, approve),
            Op::HooksDecision { sha256, approve } => self.decide_hooks(&sha256, approve),
            // Nothing is running: an abort can only drop a queued turn.
            Op::Abort { turn } => {
                let _ = self.on_abort(turn);
            }
            // A background handoff's own ops; anything else is a stale answer.
            op @ (Op::ReviewDone { .. } | Op::UnsavedEdits { .. } | Op::CancelHandoff { .. }) => {
                self.background_op(op)
            }
            Op::Approval { .. }
            | Op::UserTurn { .. }
            | Op::Command { .. }
            | Op::Init { .. }
            | Op::Handoff { .. }
            | Op::ImplementPlan { .. }
            | Op::Resume { .. }
            | Op::Shutdown
            | Op::NewSession
            | Op::SetWindow { .. }
            | Op::Restore { .. }
            | Op::Rewind { .. } => {}
        }
    }

    /// `/new`: a fresh session with no handoff; the "always" grants go.
    fn new_session(&mut self) {
        self.drop_background("/new started a fresh session");
        let revoked = self.approvals.granted.clear();
        if self.ledger.has_step() {
            // A fresh start: no briefing, no request carried into it; the next generation,
            // marked as a /new (no handoff, no parent).
            self.s.request = Request::default();
            self.s.briefed = None;
            let next = self.s.generation + 1;
            self.session_left_hooks(crate::engine::hooks::EndReason::Clear);
            self.start_session(None, next, Vec::new());
        }
        let mut message = String::from("new session started (no handoff)");
        if revoked > 0 {
            message.push_str(&format!(
                "; {revoked} \"always\" approval(s) of the last session revoked"
            ));
        }
        self.emit(Event::Notice { message });
    }

    /// `/window N`: a new context window for the rest of the run.
    fn set_window(&mut self, window: u64) {
        self.settings.thresholds = self.thresholds_for(window);
        if self.ledger.has_step() {
            self.ledger.record(|rec| rec.figures.window = window);
            self.save_manifest();
        }
        let t = self.settings.thresholds;
        self.emit(Event::Notice {
            message: format!(
                "window set to {} (handoff at {}, warning at {})",
                context::fmt_window(window),
                context::fmt_tokens(t.at),
                context::fmt_tokens(t.warn_at)
            ),
        });
        self.warn_about_the_floor();
        self.emit_usage_estimate();
    }

    /// The next op while idle (queued ones first); a background writing request's result is
    /// handled as it arrives.
    async fn next_idle_op(&mut self) -> Option<Op> {
        loop {
            if let Some(op) = self.inbox.pending.pop_front() {
                return Some(op);
            }
            tokio::select! {
                op = self.inbox.ops.recv() => return op,
                Some(w) = self.handoff.next_reply() => {
                    self.on_background(w);
                    self.turnover_if_ready();
                }
            }
        }
    }
}
