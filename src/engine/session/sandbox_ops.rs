//! The sandbox in the turn: a `bash` command it confines runs without asking, and one it stopped
//! may run once more outside it when the user, asked with the whole command shown, allows it.
//! Only an interactive front end is asked; headless keeps the sandboxed result.

use serde_json::Value;

use super::Engine;
use crate::engine::policy::SandboxApproval;
use crate::engine::protocol::{Approval, Event};
use crate::engine::secrets;
use crate::engine::tools::sandbox::{self, SandboxPolicy, Support};
use crate::engine::tools::{self, ToolCtx, ToolOutput, names};

impl Engine {
    /// Whether the sandbox makes this call's approval needless: a `bash` command confined to the
    /// workspace on a kernel that can confine it, unless the config asks for every command.
    pub(super) fn sandbox_covers(&self, name: &str) -> bool {
        name == names::BASH
            && self.run.tools.sandbox_approval == SandboxApproval::Skip
            && sandbox::confines(&self.bash_sandbox(), &Support::current())
    }

    /// The sandbox in force, in one line for `/permissions`.
    pub(super) fn sandbox_line(&self) -> String {
        let mut line = sandbox::describe(&self.bash_sandbox(), &Support::current());
        if self.sandbox_covers(names::BASH) {
            line.push_str("; the commands it confines run without asking");
        }
        line
    }

    /// `out` is the result of a command the sandbox stopped: ask whether it may run once outside
    /// the sandbox, and if so run it again unconfined. The sandboxed result stands when nobody
    /// can be asked, when the user says no, or when the turn is stopped during the question (true
    /// in the second place). None: the engine shut down during the rerun.
    pub(super) async fn offer_unsandboxed(
        &mut self,
        id: &str,
        input: &Value,
        out: ToolOutput,
    ) -> (Option<ToolOutput>, bool) {
        let (Some(stopped), Some(command)) = (
            out.sandbox.as_ref(),
            input.get("command").and_then(Value::as_str),
        ) else {
            return (Some(out), false);
        };
        // Plan mode never runs a command outside its read-only sandbox.
        let planning = self.planning.mode == crate::engine::policy::Mode::Plan;
        if !self.run.front_end.can_ask() || !self.run.tools.sandbox.is_on() || planning {
            return (Some(out), false);
        }
        let reason = stopped.message.clone();
        self.emit_logged(Event::ApprovalRequest {
            id: id.to_string(),
            name: names::BASH.into(),
            summary: secrets::redact(&tools::summary(names::BASH, input)).into_owned(),
            outside_workspace: false,
            command: Some(secrets::redact(command).into_owned()),
            diff: None,
            always: None,
            unsandboxed: Some(secrets::redact(&reason).into_owned()),
        });
        let mut out = out;
        match self.answer(id).await {
            Some(Approval::Once | Approval::Always) => {}
            Some(Approval::Deny) => {
                out.content
                    .push_str("\n[the user chose not to run this command outside the sandbox]");
                return (Some(out), false);
            }
            None => return (Some(out), true),
        }
        let ctx = ToolCtx {
            sandbox: SandboxPolicy::off(),
            ..self.tool_ctx(false)
        };
        let Some(mut rerun) = self.run_bash(id, input, &ctx).await else {
            return (None, true);
        };
        rerun.content = format!(
            "[the sandbox stopped this command; the user allowed it to run once outside the \
             sandbox, and this is that run's result]\n{}",
            rerun.content
        );
        let rerun = tools::for_model(names::BASH, rerun, &ctx, &mut self.s.spiller);
        (Some(rerun), false)
    }
}
