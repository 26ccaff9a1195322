//! Every question the TUI would ask, as `session/request_permission`: a tool call's approval
//! (allow once / always, as the engine offers it / deny), with the command or the diff it would
//! make; the workspace's `.mcp.json` servers and settings-file hooks never approved (approve /
//! deny). An answer the client could not give (cancelled, an error, gone) is "deny", as Esc is.

use std::path::Path;

use agent_client_protocol::v1::schema::{
    PermissionOption, PermissionOptionKind, RequestPermissionOutcome, ToolCallStatus,
    ToolCallUpdate, ToolCallUpdateFields,
};

use super::tool_calls;
use crate::engine::protocol::{AllowOffer, Approval, FileDiff};

const ONCE: &str = "allow-once";
const ALWAYS: &str = "allow-always";
const DENY: &str = "deny";

/// What an approval request shows: the call and what it would do.
pub(super) struct Asked<'a> {
    pub(super) id: &'a str,
    pub(super) name: &'a str,
    pub(super) summary: &'a str,
    pub(super) command: Option<&'a str>,
    pub(super) diff: Option<&'a FileDiff>,
    pub(super) always: Option<&'a AllowOffer>,
    pub(super) outside_workspace: bool,
    pub(super) unsandboxed: Option<&'a str>,
}

/// The permission question for a tool call the engine asks about.
pub(super) fn approval_question(
    workspace: &Path,
    asked: &Asked<'_>,
) -> (ToolCallUpdate, Vec<PermissionOption>) {
    let mut content = Vec::new();
    if let Some(diff) = asked.diff {
        content.push(tool_calls::diff_content(workspace, diff));
    }
    if let Some(command) = asked.command {
        content.push(tool_calls::output_content(command));
    }
    let mut title = asked.summary.to_string();
    if asked.outside_workspace {
        title.push_str(" (outside the workspace)");
    }
    if let Some(why) = asked.unsandboxed {
        title.push_str(&format!(
            " — the sandbox stopped it ({why}); run it outside the sandbox?"
        ));
    }
    let mut fields = ToolCallUpdateFields::new()
        .title(title)
        .kind(tool_calls::kind(asked.name))
        .status(ToolCallStatus::Pending);
    if !content.is_empty() {
        fields = fields.content(content);
    }
    let mut options = vec![PermissionOption::new(
        ONCE,
        "Allow once",
        PermissionOptionKind::AllowOnce,
    )];
    if let Some(offer) = asked.always {
        options.push(PermissionOption::new(
            ALWAYS,
            capitalised(&offer.label),
            PermissionOptionKind::AllowAlways,
        ));
    }
    options.push(PermissionOption::new(
        DENY,
        "Deny",
        PermissionOptionKind::RejectOnce,
    ));
    (ToolCallUpdate::new(asked.id.to_string(), fields), options)
}

/// The engine's answer for the client's: an option chosen, or "deny" for anything else.
pub(super) fn decision(outcome: Option<&RequestPermissionOutcome>) -> Approval {
    match outcome {
        Some(RequestPermissionOutcome::Selected(s)) => match &*s.option_id.0 {
            ONCE => Approval::Once,
            ALWAYS => Approval::Always,
            _ => Approval::Deny,
        },
        _ => Approval::Deny,
    }
}

/// A yes/no question about the workspace's own configuration (`what`), on a tool call of its own.
pub(super) fn trust_question(id: &str, what: &str) -> (ToolCallUpdate, Vec<PermissionOption>) {
    let call = ToolCallUpdate::new(
        id.to_string(),
        ToolCallUpdateFields::new()
            .title(what.to_string())
            .status(ToolCallStatus::Pending),
    );
    let options = vec![
        PermissionOption::new(ONCE, "Approve", PermissionOptionKind::AllowAlways),
        PermissionOption::new(DENY, "Deny", PermissionOptionKind::RejectAlways),
    ];
    (call, options)
}

fn capitalised(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::SelectedPermissionOutcome;

    fn ask<'a>(always: Option<&'a AllowOffer>) -> Asked<'a> {
        Asked {
            id: "call-1",
            name: "bash",
            summary: "bash: cargo test",
            command: Some("cargo test"),
            diff: None,
            always,
            outside_workspace: false,
            unsandboxed: None,
        }
    }

    #[test]
    fn always_is_offered_only_when_the_engine_offers_it() {
        let offer = AllowOffer {
            rules: Vec::new(),
            label: "always allow `cargo test …` this session".into(),
        };
        let (call, options) = approval_question(Path::new("/w"), &ask(Some(&offer)));
        assert_eq!(&*call.tool_call_id.0, "call-1");
        let kinds: Vec<_> = options.iter().map(|o| o.kind).collect();
        assert_eq!(
            kinds,
            [
                PermissionOptionKind::AllowOnce,
                PermissionOptionKind::AllowAlways,
                PermissionOptionKind::RejectOnce
            ]
        );
        assert_eq!(options[1].name, "Always allow `cargo test …` this session");
        let (_, options) = approval_question(Path::new("/w"), &ask(None));
        assert_eq!(options.len(), 2);
    }

    #[test]
    fn only_a_chosen_allow_allows() {
        let chose = |id: &str| {
            RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(id.to_string()))
        };
        assert_eq!(decision(Some(&chose(ONCE))), Approval::Once);
        assert_eq!(decision(Some(&chose(ALWAYS))), Approval::Always);
        assert_eq!(decision(Some(&chose(DENY))), Approval::Deny);
        assert_eq!(decision(Some(&chose("what"))), Approval::Deny);
        assert_eq!(
            decision(Some(&RequestPermissionOutcome::Cancelled)),
            Approval::Deny
        );
        assert_eq!(decision(None), Approval::Deny);
    }
}
