//! Running the tool calls of one assistant message: approvals, execution, spill, results.

use serde_json::Value;

use super::Engine;
use crate::engine::policy::ApprovalPolicy;
use crate::engine::protocol::{Approval, Event, Op};
use crate::engine::tools::{self, ToolCtx, ToolOutput};
use crate::engine::types::{Block, Message, Role};

/// The answer to one approval request.
enum Decision {
    Allow,
    Deny(String),
    Abort,
}

impl Engine {
    fn tool_ctx(&self, allow_outside: bool) -> ToolCtx {
        ToolCtx {
            workspace: self.p.workspace.clone(),
            spill_dir: self.p.workbench.as_ref().map(|w| w.join("spill")),
            session_id: self.s.id.clone(),
            bash_timeout: self.p.bash_timeout,
            allow_outside,
        }
    }

    /// Run every tool call of `msg` and append one user message with all their results.
    /// Returns false when the user aborted (every call still gets a result).
    pub(crate) async fn run_tools(&mut self, msg: &Message) -> bool {
        let calls: Vec<(String, String, Value)> = msg
            .tool_uses()
            .map(|(id, name, input)| (id.to_string(), name.to_string(), input.clone()))
            .collect();
        let mut results: Vec<Block> = Vec::with_capacity(calls.len());
        let mut aborted = false;
        for (id, name, input) in calls {
            if aborted || self.shutdown {
                results.push(Block::ToolResult {
                    tool_use_id: id,
                    content: "not run: the user interrupted the turn".into(),
                    is_error: true,
                });
                continue;
            }
            self.emit_logged(Event::ToolCall {
                id: id.clone(),
                name: name.clone(),
                input: input.clone(),
                summary: tools::summary(&name, &input),
            });
            let out = match self.approve(&id, &name, &input).await {
                Decision::Allow => {
                    // Only reached for an outside path when the user approved that very call.
                    let outside = tools::touches_outside(&name, &input, &self.p.workspace);
                    match self.execute(&name, &input, outside).await {
                        Some(out) => out,
                        None => {
                            aborted = true;
                            ToolOutput {
                                content: "interrupted by the user".into(),
                                is_error: true,
                                spilled: None,
                            }
                        }
                    }
                }
                Decision::Deny(why) => ToolOutput {
                    content: why,
                    is_error: true,
                    spilled: None,
                },
                Decision::Abort => {
                    aborted = true;
                    ToolOutput {
                        content: "not run: the user interrupted the turn".into(),
                        is_error: true,
                        spilled: None,
                    }
                }
            };
            if !out.is_error && matches!(name.as_str(), "write_file" | "edit_file") {
                self.note_touched(&input);
            }
            self.emit_logged(Event::ToolResult {
                id: id.clone(),
                name: name.clone(),
                output: out.content.clone(),
                is_error: out.is_error,
                spilled: out.spilled.clone(),
            });
            results.push(Block::ToolResult {
                tool_use_id: id,
                content: out.content,
                is_error: out.is_error,
            });
        }
        self.push_message(Message {
            role: Role::User,
            content: results,
        });
        self.emit_usage_estimate();
        !aborted
    }

    /// Remember a written path for a degraded handoff's scene.
    fn note_touched(&mut self, input: &Value) {
        if let Some(path) = input.get("path").and_then(Value::as_str) {
            let path = path.to_string();
            self.record(|rec| {
                if !rec.touched.contains(&path) {
                    rec.touched.push(path);
                }
            });
        }
    }

    async fn approve(&mut self, id: &str, name: &str, input: &Value) -> Decision {
        if !tools::is_known(name) || !tools::needs_approval(name, input, &self.p.workspace) {
            return Decision::Allow;
        }
        // A path outside the workspace is approved call by call: neither --yes nor "always"
        // covers it (SPEC §14).
        let outside = tools::touches_outside(name, input, &self.p.workspace);
        let auto = self.p.approvals == ApprovalPolicy::Auto;
        if !outside && (auto || self.always_allowed.contains(name)) {
            return Decision::Allow;
        }
        let can_ask = self.p.front_end.can_ask();
        if outside && !can_ask {
            return Decision::Deny(format!(
                "denied: `{name}` would leave the workspace ({}); only the user can approve that,                  call by call, and this headless run cannot ask.",
                tools::summary(name, input)
            ));
        }
        if !can_ask {
            return Decision::Deny(format!(
                "denied: `{name}` needs the user's approval and this is a headless run without --yes. \
                 Continue without it or explain what you need."
            ));
        }
        self.emit_logged(Event::ApprovalRequest {
            id: id.to_string(),
            name: name.to_string(),
            summary: tools::summary(name, input),
            outside_workspace: outside,
        });
        loop {
            let op = tokio::select! {
                op = self.ops.recv() => op,
                Some(w) = self.bg_rx.recv() => {
                    // A background handoff's document arrived while the user decides.
                    self.on_written(w);
                    continue;
                }
            };
            match op {
                Some(Op::Approval { id: got, decision }) if got == id => {
                    return match decision {
                        Approval::Once => Decision::Allow,
                        Approval::Always => {
                            if !outside {
                                self.always_allowed.insert(name.to_string());
                            }
                            Decision::Allow
                        }
                        Approval::Deny => Decision::Deny(format!(
                            "denied: the user did not allow this `{name}` call"
                        )),
                    };
                }
                // An answer to another request: stale.
                Some(Op::Approval { .. }) => {}
                other => {
                    if self.triage(other).is_some() {
                        return Decision::Abort;
                    }
                }
            }
        }
    }

    /// Run one tool; None when the user aborted it (the future is dropped, a child process dies).
    async fn execute(
        &mut self,
        name: &str,
        input: &Value,
        allow_outside: bool,
    ) -> Option<ToolOutput> {
        let ctx = self.tool_ctx(allow_outside);
        let mut out = self.abortable(tools::run(name, input, &ctx)).await?;
        if let std::borrow::Cow::Owned(clean) = crate::engine::secrets::redact(&out.content) {
            out.content = clean;
        }
        Some(self.spiller.apply(name, out, &ctx))
    }
}
