//! The engine's side of the hooks part: the narrow context it lends the part's verbs
//! ([`HookCx`]), and its delegations for the hook points more than one place calls (a point with
//! one caller is called there, with the engine as its context).

use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;

use super::gates::ToolGate;
use super::points::{self, HookCx};
use super::state::Hooks;
use crate::engine::hooks::{EndReason, HookBatch, HookSession, Outcome, PermissionMode};
use crate::engine::permissions::Permissions;
use crate::engine::policy::ApprovalPolicy;
use crate::engine::protocol::{Event, ExitReason};
use crate::engine::session::{ActiveTurn, Engine, Places};
use crate::engine::tools::ToolOutput;
use crate::engine::types::Message;

impl HookCx for Engine {
    fn hooks(&mut self) -> &mut Hooks {
        &mut self.hooks
    }

    fn hook_session(&self) -> HookSession {
        HookSession {
            session_id: self.conversation.id.clone(),
            transcript_path: self.ledger.transcript_path(&self.conversation.id),
            workspace: self.run.places.workspace.clone(),
            permission_mode: match self.run.tools.approvals {
                ApprovalPolicy::Auto => PermissionMode::BypassPermissions,
                ApprovalPolicy::Ask | ApprovalPolicy::AskOnce => PermissionMode::Default,
            },
        }
    }

    async fn beside_ops(&mut self, batch: HookBatch) -> Option<Outcome> {
        self.abortable(batch).await
    }

    fn emit(&mut self, ev: Event) {
        Engine::emit(self, ev);
    }

    fn emit_logged(&mut self, ev: Event) {
        Engine::emit_logged(self, ev);
    }

    fn events(&self) -> UnboundedSender<Event> {
        self.run.events.clone()
    }

    fn push_message(&mut self, msg: Message) {
        Engine::push_message(self, msg);
    }

    fn has_session(&self) -> bool {
        !self.conversation.is_none()
    }

    fn can_ask(&self) -> bool {
        self.run.front_end.can_ask()
    }

    fn places(&self) -> &Places {
        &self.run.places
    }

    fn approved(&mut self, allow: Permissions, command_grants: bool) {
        self.approvals.permit(allow);
        if command_grants {
            std::sync::Arc::make_mut(&mut self.run.extensions.commands).release_held();
        }
    }

    fn record_error(&mut self, text: String) {
        self.ledger.record(|rec| rec.errors.push(text));
    }

    fn close_turn(&mut self, turn: ActiveTurn, reason: ExitReason) {
        self.turn = None;
        Engine::end_turn(self, turn, reason);
    }
}

impl Engine {
    /// `PreToolUse` on one call, before its approval.
    pub(in crate::engine::session) async fn pre_tool_hooks(
        &mut self,
        id: &str,
        name: &str,
        input: &Value,
    ) -> ToolGate {
        points::pre_tool(self, id, name, input).await
    }

    /// `PostToolUse` on a call that ran. False: the user stopped the turn meanwhile.
    pub(in crate::engine::session) async fn post_tool_hooks(
        &mut self,
        id: &str,
        name: &str,
        input: &Value,
        out: &mut ToolOutput,
    ) -> bool {
        points::post_tool(self, id, name, input, out).await
    }

    /// `SessionEnd` of a session left for another (`/new`, `/resume`, a handoff).
    pub(in crate::engine::session) fn session_left_hooks(&mut self, reason: EndReason) {
        points::session_left(self, reason);
    }

    /// The user's answer about a workspace settings file's hooks.
    pub(in crate::engine::session) fn decide_hooks(&mut self, sha256: &str, approve: bool) {
        points::decide(self, sha256, approve);
    }
}
