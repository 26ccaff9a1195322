//! What a finished hook means, in Claude Code's protocol, and what several hooks of one event
//! mean together.
//!
//! One hook: exit code 0 is success (plain stdout is context for the model on `SessionStart`,
//! `UserPromptSubmit` and `PreHandoff`, output to show elsewhere); exit code 2 blocks an event
//! that can be blocked, with stderr as the reason (for the model on `PreToolUse`, `PostToolUse`,
//! `Stop`, `SubagentStop`; for the user on `UserPromptSubmit`, `PreHandoff`) and is shown to the
//! user elsewhere; any other ending is an error shown to the user that changes nothing. On exit
//! 0, stdout that is a JSON object is read instead: `continue: false` (+ `stopReason`) stops the
//! turn, `decision` `block`/`approve` + `reason`, `hookSpecificOutput.permissionDecision`
//! `allow`/`deny`/`ask` + `permissionDecisionReason` (`PreToolUse`, winning over `decision`),
//! `hookSpecificOutput.additionalContext`, `systemMessage` (for the user), `suppressOutput`.
//!
//! Together: every hook's context and notices in order, and one [`Decision`] where a block (deny)
//! beats ask, and ask beats allow.

use serde_json::{Map, Value};

use super::config::HookSource;
use super::event::HookEvent;
use super::run::{Finished, HookExit};
use crate::engine::text::one_line;

/// What the hooks of one event decided.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Decision {
    /// No hook had an opinion: go on as without hooks.
    #[default]
    None,
    /// `PreToolUse`: run the call without asking the user.
    Allow { reason: Option<String> },
    /// `PreToolUse`: ask the user even where a grant or `--yes` would allow the call.
    Ask { reason: Option<String> },
    /// Blocked: the call is denied, the prompt dropped, the stop refused or the handoff refused;
    /// the reason goes to [`HookEvent::blocks_for`].
    Block { reason: String },
}

impl Decision {
    fn rank(&self) -> u8 {
        match self {
            Decision::None => 0,
            Decision::Allow { .. } => 1,
            Decision::Ask { .. } => 2,
            Decision::Block { .. } => 3,
        }
    }

    /// The stronger of two decisions; two of the same kind keep both reasons.
    fn merge(self, other: Decision) -> Decision {
        let join = |a: Option<String>, b: Option<String>| match (a, b) {
            (Some(a), Some(b)) => Some(format!("{a}\n{b}")),
            (a, b) => a.or(b),
        };
        match (self, other) {
            (Decision::Allow { reason: a }, Decision::Allow { reason: b }) => {
                Decision::Allow { reason: join(a, b) }
            }
            (Decision::Ask { reason: a }, Decision::Ask { reason: b }) => {
                Decision::Ask { reason: join(a, b) }
            }
            (Decision::Block { reason: a }, Decision::Block { reason: b }) => Decision::Block {
                reason: format!("{a}\n{b}"),
            },
            (a, b) if b.rank() > a.rank() => b,
            (a, _) => a,
        }
    }
}

/// How one hook did, for the user to see (a cell in the TUI, a `hook` event headless).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookStatus {
    /// It ran and let things go on.
    Succeeded,
    /// It blocked (or denied) what the event was about.
    Blocked,
    /// It failed; nothing changed because of it.
    Failed,
}

/// One hook that ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookReport {
    pub event: HookEvent,
    /// Masked.
    pub command: String,
    pub source: HookSource,
    pub exit: HookExit,
    pub status: HookStatus,
    pub elapsed_ms: u64,
    /// What to show of its output (stdout unless it asked to suppress it, and stderr when it did
    /// not succeed), masked; bytes beyond the cap are counted in a last line.
    pub output: String,
    /// It gave the model context.
    pub added_context: bool,
}

/// What the hooks of one event mean together.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Outcome {
    /// One per hook that ran, in configuration order.
    pub reports: Vec<HookReport>,
    pub decision: Decision,
    /// Text for the model (for `PreHandoff`: focus text for the document), in hook order.
    pub context: Vec<String>,
    /// One-line messages for the user: failures, `systemMessage`s, exit-2 stderr of events that
    /// cannot be blocked, parts of the output that could not be used.
    pub notices: Vec<String>,
    /// A hook said `continue: false`: stop after this event (the turn ends); the reason is for
    /// the user.
    pub stop: Option<String>,
}

impl Outcome {
    /// The reason when the hooks blocked the event.
    pub fn block_reason(&self) -> Option<&str> {
        match &self.decision {
            Decision::Block { reason } => Some(reason),
            _ => None,
        }
    }

    /// The context joined into one text, `None` when there is none.
    pub fn context_text(&self) -> Option<String> {
        (!self.context.is_empty()).then(|| self.context.join("\n\n"))
    }

    /// Add one hook's result.
    pub(super) fn add(
        &mut self,
        event: HookEvent,
        command: &str,
        source: &HookSource,
        done: Finished,
    ) {
        let judged = judge(event, command, &done);
        let added_context = judged.context.is_some();
        self.decision = std::mem::take(&mut self.decision).merge(judged.decision);
        self.context.extend(judged.context);
        self.notices.extend(judged.notices);
        if self.stop.is_none() {
            self.stop = judged.stop;
        }
        self.reports.push(HookReport {
            event,
            command: crate::engine::secrets::redact(command).into_owned(),
            source: source.clone(),
            exit: done.exit,
            status: judged.status,
            elapsed_ms: u64::try_from(done.elapsed.as_millis()).unwrap_or(u64::MAX),
            output: judged.output,
            added_context,
        });
    }
}

/// One hook's meaning.
struct Judged {
    decision: Decision,
    context: Option<String>,
    notices: Vec<String>,
    stop: Option<String>,
    status: HookStatus,
    output: String,
}

fn judge(event: HookEvent, command: &str, done: &Finished) -> Judged {
    let name = format!("`{}`", one_line(command, 60));
    let stdout = done.stdout.text.trim();
    let stderr = done.stderr.text.trim();
    let mut shown = with_dropped(stdout, done.stdout.dropped);
    let mut j = Judged {
        decision: Decision::None,
        context: None,
        notices: Vec::new(),
        stop: None,
        status: HookStatus::Succeeded,
        output: String::new(),
    };
    match &done.exit {
        HookExit::Code(0) => {
            if let Some(obj) = json_object(stdout) {
                let suppress = read_json(event, &name, &obj, &mut j);
                if suppress {
                    shown.clear();
                }
            } else if event.stdout_is_context() && !stdout.is_empty() {
                j.context = Some(stdout.to_string());
            }
        }
        HookExit::Code(2) => {
            shown = join_output(&shown, &with_dropped(stderr, done.stderr.dropped));
            if event.blocks_for().is_some() {
                let reason = if stderr.is_empty() {
                    format!("blocked by the hook {name}")
                } else {
                    stderr.to_string()
                };
                j.decision = Decision::Block { reason };
                j.status = HookStatus::Blocked;
            } else {
                j.status = HookStatus::Failed;
                j.notices.push(failure(event, &name, &done.exit, stderr));
            }
        }
        other => {
            shown = join_output(&shown, &with_dropped(stderr, done.stderr.dropped));
            j.status = HookStatus::Failed;
            j.notices.push(failure(event, &name, other, stderr));
        }
    }
    if matches!(j.decision, Decision::Block { .. }) {
        j.status = HookStatus::Blocked;
    }
    j.output = shown;
    j
}

/// `Some` when stdout is a JSON object (Claude Code's structured output).
fn json_object(stdout: &str) -> Option<Map<String, Value>> {
    if !stdout.starts_with('{') {
        return None;
    }
    match serde_json::from_str(stdout) {
        Ok(Value::Object(obj)) => Some(obj),
        _ => None,
    }
}

/// Read a JSON answer into `j`. Returns whether the hook asked to suppress its output.
fn read_json(event: HookEvent, name: &str, obj: &Map<String, Value>, j: &mut Judged) -> bool {
    let bad = |j: &mut Judged, field: &str, want: &str| {
        j.notices.push(format!(
            "{event} hook {name}: `{field}` must be {want}; ignored"
        ));
    };
    let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
    match obj.get("continue") {
        None | Some(Value::Bool(true)) => {}
        Some(Value::Bool(false)) => {
            j.stop = Some(
                text(obj.get("stopReason"))
                    .unwrap_or_else(|| format!("stopped by the {event} hook {name}")),
            );
        }
        Some(_) => bad(j, "continue", "true or false"),
    }
    let suppress = match obj.get("suppressOutput") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            bad(j, "suppressOutput", "true or false");
            false
        }
    };
    match obj.get("systemMessage") {
        None => {}
        Some(Value::String(m)) => j.notices.push(m.clone()),
        Some(_) => bad(j, "systemMessage", "a string"),
    }
    let reason = text(obj.get("reason"));
    match obj.get("decision").map(|d| (d, d.as_str())) {
        None | Some((Value::Null, _)) => {}
        Some((_, Some("block"))) if event.blocks_for().is_some() => {
            j.decision = Decision::Block {
                reason: reason.unwrap_or_else(|| format!("blocked by the hook {name}")),
            };
        }
        Some((_, Some("approve"))) if event == HookEvent::PreToolUse => {
            j.decision = Decision::Allow { reason };
        }
        // `approve` elsewhere lets things go on, as nothing would.
        Some((_, Some("approve"))) => {}
        Some(_) => bad(j, "decision", "\"block\" or \"approve\""),
    }
    match obj.get("hookSpecificOutput") {
        None | Some(Value::Null) => {}
        Some(Value::Object(specific)) => read_specific(event, name, specific, j),
        Some(_) => bad(j, "hookSpecificOutput", "an object"),
    }
    suppress
}

/// `hookSpecificOutput`: the permission decision and the additional context.
fn read_specific(event: HookEvent, name: &str, specific: &Map<String, Value>, j: &mut Judged) {
    let named = specific.get("hookEventName").and_then(Value::as_str);
    if named.is_some_and(|n| n != event.as_str()) {
        j.notices.push(format!(
            "{event} hook {name}: `hookSpecificOutput` is for {} events; ignored",
            named.unwrap_or_default()
        ));
        return;
    }
    let reason = specific
        .get("permissionDecisionReason")
        .and_then(Value::as_str)
        .map(str::to_string);
    match specific.get("permissionDecision").and_then(Value::as_str) {
        None => {}
        Some(_) if event != HookEvent::PreToolUse => {}
        Some("allow") => j.decision = Decision::Allow { reason },
        Some("ask") => j.decision = Decision::Ask { reason },
        Some("deny") => {
            j.decision = Decision::Block {
                reason: reason.unwrap_or_else(|| format!("denied by the hook {name}")),
            };
        }
        Some(other) => j.notices.push(format!(
            "{event} hook {name}: unknown permissionDecision `{}` (allow, deny or ask); ignored",
            one_line(other, 40)
        )),
    }
    if let Some(context) = specific.get("additionalContext").and_then(Value::as_str)
        && event.takes_context()
        && !context.trim().is_empty()
    {
        j.context = Some(context.trim().to_string());
    }
}

/// The notice for a hook that failed.
fn failure(event: HookEvent, name: &str, exit: &HookExit, stderr: &str) -> String {
    let mut line = format!("{event} hook {name} failed ({exit})");
    if let Some(first) = stderr.lines().find(|l| !l.trim().is_empty()) {
        line.push_str(": ");
        line.push_str(&one_line(first, 200));
    }
    line
}

fn with_dropped(text: &str, dropped: u64) -> String {
    if dropped == 0 {
        return text.to_string();
    }
    format!("{text}\n[… {dropped} more bytes of output not kept]")
}

fn join_output(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b.to_string(),
        (_, true) => a.to_string(),
        _ => format!("{a}\n{b}"),
    }
}
