//! The session's approvals: whether a call runs unasked, is asked about, or is denied, and what
//! the user's answers leave behind. A call needs the user when its tool asks for approval (a file
//! edit, a command, a path outside the workspace, every MCP tool) and nothing covers it: `--yes`,
//! the one question of `AskOnce`, accept-edits mode, an "always" grant, a `PreToolUse` hook's
//! allow, or — for a `bash` command — a sandbox that confines it (unless the config asks for
//! every command). A path outside the workspace is approved call by call; a headless run cannot
//! ask and denies. "Always" grants live for the session: `/new` and `/resume` clear them,
//! `/permissions` lists and revokes them, a custom command lends its `allowed-tools` for its turn.
//! The settings files' permission rules come first: a `deny` refuses the call whatever else
//! allows it (`--yes`, a grant, a hook, a read that needs no approval), an `ask` asks where
//! anything would allow it, an `allow` covers the call like a grant (and, when it names the
//! call's path, also outside the workspace).

use std::path::PathBuf;

use serde_json::Value;

use super::outbox::Outbox;
use super::params::ToolParams;
use super::planning::Planning;
use crate::engine::approvals::{self, AllowOffer, AllowRule, Allowances};
use crate::engine::commands::allowed;
use crate::engine::diff::FileDiff;
use crate::engine::permissions::{CallRef, Permissions, Verdict};
use crate::engine::policy::{ApprovalPolicy, FrontEnd, SandboxApproval};
use crate::engine::protocol::{Approval, Event};
use crate::engine::secrets;
use crate::engine::subagent::ChildTools;
use crate::engine::tools::sandbox::{self, Support};
use crate::engine::tools::{self, ToolOutput, names};

/// The approvals of this session and the policy they follow.
#[derive(Debug)]
pub(super) struct ApprovalState {
    /// What "always" allowed (`/new` clears it).
    granted: Allowances,
    /// The settings files' permission rules (for the whole run).
    rules: Permissions,
    /// An approval was asked (and answered): `ApprovalPolicy::AskOnce` asks no more.
    asked_once: bool,
    /// `--yes` or not.
    policy: ApprovalPolicy,
    /// Whether a command the sandbox confines is still asked for.
    sandbox_approval: SandboxApproval,
    /// The front end answers questions (headless cannot).
    front_end: FrontEnd,
    /// The workspace a grant covers calls within.
    workspace: PathBuf,
    out: Outbox,
}

/// What the `PreToolUse` hooks said about a call's approval.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Hooked {
    /// Run it without asking (a path outside the workspace is still asked for).
    pub(super) allow: bool,
    /// Ask even where a grant or `--yes` would allow it.
    pub(super) ask: bool,
}

/// What is known of a call before its approval is judged.
#[derive(Debug, Clone)]
pub(super) struct Call<'a> {
    pub(super) name: &'a str,
    pub(super) input: &'a Value,
    pub(super) hooked: Hooked,
    /// Its path lies outside the workspace.
    pub(super) outside: bool,
    pub(super) tool: ToolKind,
}

/// The tool of a call, as its approval sees it.
#[derive(Debug, Clone)]
pub(super) enum ToolKind {
    /// A tool of an MCP server (always asked for); `unavailable`: why its server cannot run it.
    Mcp { unavailable: Option<String> },
    /// Any other tool; `asks`: it is known and this call needs approval (not a read of the
    /// run's spill files or of a loaded skill's folder).
    Builtin { asks: bool },
}

/// How a call's approval stands before anyone is asked.
#[derive(Debug)]
pub(super) enum Judgement {
    Allow,
    Deny(String),
    /// The call cannot run (its server is gone): this is its result.
    Fail(ToolOutput),
    /// Only the user can decide.
    Ask,
}

/// The answer to one approval request.
#[derive(Debug)]
pub(super) enum Decision {
    Allow,
    /// Allowed by the user for this call although its web page is on a private address.
    AllowPrivate,
    Deny(String),
    /// The call cannot apply (its preview failed): this is its result, nobody was asked.
    Fail(ToolOutput),
    Abort,
}

impl ApprovalState {
    /// No grants yet, under the policy and sandbox approval of `tools`; `front_end`: whether
    /// anyone can be asked; `workspace`: what a grant covers calls within.
    pub(super) fn new(
        tools: &ToolParams,
        front_end: FrontEnd,
        workspace: PathBuf,
        rules: Permissions,
        out: Outbox,
    ) -> ApprovalState {
        ApprovalState {
            granted: Allowances::default(),
            rules,
            asked_once: false,
            policy: tools.approvals,
            sandbox_approval: tools.sandbox_approval,
            front_end,
            workspace,
            out,
        }
    }

    /// `allow` rules the user approved apply from now on.
    pub(super) fn permit(&mut self, allow: Permissions) {
        self.rules.extend(allow);
    }

    /// Whether anyone can be asked (an interactive front end).
    pub(super) fn can_ask(&self) -> bool {
        self.front_end.can_ask()
    }

    /// Whether the sandbox makes this call's approval needless: a `bash` command confined to the
    /// workspace on a kernel that can confine it (in `planning`'s mode), unless the config asks
    /// for every command.
    pub(super) fn sandbox_covers(&self, planning: &Planning, name: &str) -> bool {
        name == names::BASH
            && self.sandbox_approval == SandboxApproval::Skip
            && sandbox::confines(&planning.bash_sandbox(), &Support::current())
    }

    /// Whether `call` may run: unasked where nothing needs the user (or a `PreToolUse` hook
    /// allowed it), else asked (also where a hook asked for the question), or denied where nobody
    /// can be asked.
    pub(super) fn judge(&self, planning: &Planning, call: &Call<'_>) -> Judgement {
        let Call {
            name,
            input,
            hooked,
            outside,
            ref tool,
        } = *call;
        let rule = self.rules.verdict(CallRef {
            name,
            input,
            workspace: &self.workspace,
        });
        let (hooked, ruled_in) = match rule {
            Some(Verdict::Deny(rule)) => {
                return Judgement::Deny(format!(
                    "denied by the permission rule `{rule}` in the user's or the workspace's \
                     settings; do not try this call another way."
                ));
            }
            Some(Verdict::Ask(_)) => (
                Hooked {
                    allow: false,
                    ask: true,
                },
                false,
            ),
            // A command naming a path outside is asked for, as with a grant.
            Some(Verdict::Allow { names_path, .. }) => (
                hooked,
                names_path
                    || (!outside
                        && input
                            .get("command")
                            .and_then(Value::as_str)
                            .is_none_or(|c| !approvals::names_outside(c, &self.workspace))),
            ),
            None => (hooked, false),
        };
        // Every MCP tool needs approval: flower-tui cannot know what a server's tool does. A tool
        // whose server is gone fails at once: there is nothing to approve.
        let needs = match tool {
            ToolKind::Mcp {
                unavailable: Some(why),
            } => return Judgement::Fail(ToolOutput::error(why.clone())),
            ToolKind::Mcp { unavailable: None } => true,
            ToolKind::Builtin { asks } => {
                hooked.ask || (*asks && !self.sandbox_covers(planning, name))
            }
        };
        if !needs {
            return Judgement::Allow;
        }
        // A path outside the workspace is approved call by call: neither --yes nor "always"
        // covers it.
        let auto = match self.policy {
            ApprovalPolicy::Auto => true,
            ApprovalPolicy::AskOnce => self.asked_once,
            ApprovalPolicy::Ask => false,
        };
        let covered = auto
            || planning.approves(name)
            || self.granted.covers_within(name, input, &self.workspace);
        if !outside && (hooked.allow || (!hooked.ask && covered)) {
            return Judgement::Allow;
        }
        if ruled_in && !hooked.ask {
            return Judgement::Allow;
        }
        let can_ask = self.can_ask();
        if outside && !can_ask {
            return Judgement::Deny(format!(
                "denied: `{name}` would leave the workspace ({}); only the user can approve that, \
                 call by call, and this headless run cannot ask.",
                tools::summary(name, input)
            ));
        }
        if !can_ask {
            return Judgement::Deny(format!(
                "denied: `{name}` needs the user's approval and this is a headless run without --yes. \
                 Continue without it or explain what you need."
            ));
        }
        Judgement::Ask
    }

    /// The question about call `id` (`diff`: the change it would make): the event that asks it,
    /// and the "always" it offers.
    pub(super) fn question(
        id: &str,
        call: &Call<'_>,
        diff: Option<FileDiff>,
    ) -> (Event, Option<AllowOffer>) {
        let (name, input, outside) = (call.name, call.input, call.outside);
        let always = approvals::offer(name, input, outside);
        let ev = Event::ApprovalRequest {
            id: id.to_string(),
            name: name.to_string(),
            summary: secrets::redact(&tools::summary(name, input)).into_owned(),
            outside_workspace: outside,
            command: (name == names::BASH)
                .then(|| {
                    input
                        .get("command")
                        .and_then(Value::as_str)
                        .map(|c| secrets::redact(c).into_owned())
                })
                .flatten(),
            diff: diff.map(Box::new),
            always: always.clone(),
            unsandboxed: None,
        };
        (ev, always)
    }

    /// The user's answer about a call of `name` (None: the turn was stopped meanwhile), with the
    /// "always" its question offered: remembered, and what it decides.
    pub(super) fn answered(
        &mut self,
        name: &str,
        answer: Option<Approval>,
        always: Option<AllowOffer>,
    ) -> Decision {
        if answer.is_some() {
            self.asked_once = true;
        }
        match answer {
            Some(Approval::Once) => Decision::Allow,
            Some(Approval::Always) => {
                if let Some(offer) = &always {
                    self.granted.grant(&offer.rules);
                }
                Decision::Allow
            }
            Some(Approval::Deny) => {
                Decision::Deny(format!("denied: the user did not allow this `{name}` call"))
            }
            None => Decision::Abort,
        }
    }

    /// What a subagent may call under the approval policy in force: `bash` where the parent
    /// would run a command unasked, which includes every command the sandbox confines.
    pub(super) fn child_tools(&self, planning: &Planning) -> ChildTools {
        let by_policy = ChildTools::for_policy(self.policy, self.asked_once);
        ChildTools {
            bash: by_policy.bash || self.sandbox_covers(planning, names::BASH),
        }
    }

    /// `/permissions` and its revocations: the policy, the grants, the sandbox and the settings
    /// files' rules in force.
    pub(super) fn permissions_event(&self, planning: &Planning) -> Event {
        let mut sandbox = sandbox::describe(&planning.bash_sandbox(), &Support::current());
        if self.sandbox_covers(planning, names::BASH) {
            sandbox.push_str("; the commands it confines run without asking");
        }
        Event::Permissions {
            policy: self.policy,
            allowances: self.granted.list(),
            sandbox,
            rules: self.rules.listed(),
        }
    }

    /// `Op::Revoke`: one grant, or all of them; said, then the permissions as they are now.
    pub(super) fn revoke(&mut self, planning: &Planning, rule: Option<AllowRule>) {
        let message = match rule {
            None => match self.granted.clear() {
                0 => "no \"always\" approvals to revoke".to_string(),
                n => format!("revoked {n} \"always\" approval(s)"),
            },
            Some(rule) if self.granted.revoke(&rule) => format!("revoked: {rule}"),
            Some(rule) => format!("not granted, nothing to revoke: {rule}"),
        };
        self.out.emit(Event::Notice { message });
        self.out.emit(self.permissions_event(planning));
    }

    /// Every "always" grant goes (a fresh session, another run); how many there were.
    pub(super) fn forget(&mut self) -> usize {
        self.granted.clear()
    }

    /// A custom command's `allowed-tools`, granted for its turn: the grants the session did not
    /// hold already (to take back with [`ApprovalState::take_back`]); entries that grant nothing
    /// are said.
    pub(super) fn lend(&mut self, allowed: &[String]) -> Vec<AllowRule> {
        let grants = allowed::grants(allowed);
        if !grants.ignored.is_empty() {
            self.out.emit(Event::Notice {
                message: format!(
                    "allowed-tools not granted (still asked for): {}",
                    grants.ignored.join(", ")
                ),
            });
        }
        let held: Vec<AllowRule> = self.granted.list().into_iter().map(|a| a.rule).collect();
        let rules: Vec<AllowRule> = grants
            .rules
            .into_iter()
            .filter(|r| !held.contains(r))
            .collect();
        self.granted.grant(&rules);
        rules
    }

    /// Take back the grants [`ApprovalState::lend`] gave.
    pub(super) fn take_back(&mut self, rules: &[AllowRule]) {
        for rule in rules {
            self.granted.revoke(rule);
        }
    }
}
