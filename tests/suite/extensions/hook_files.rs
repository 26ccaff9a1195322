//! A workspace's hook settings files: used only once approved (per workspace and file hash, in
//! the `.mcp.json` store), each file decided on its own, a malformed one a notice that leaves
//! the other usable; approved hooks run.

use flower_tui::engine::hooks::project::{self, IgnoredBecause};
use flower_tui::engine::hooks::{
    HookInput, HookSession, HookSet, PermissionMode, WorkspaceHooks, workspace_hooks,
};
use flower_tui::engine::mcp::{ApprovalStore, Decision, McpJsonPolicy};

const CLAUDE: &str = r#"{
  "permissions": {"allow": ["Bash(npm test:*)"]},
  "hooks": {
    "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo from-claude-settings"}]}],
    "PreCompact": [{"hooks": [{"type": "command", "command": "echo compacting"}]}]
  }
}"#;

fn write(ws: &std::path::Path, rel: &str, text: &str) {
    let path = ws.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn kinds(found: &[WorkspaceHooks]) -> Vec<String> {
    found
        .iter()
        .map(|w| match w {
            WorkspaceHooks::Use { file, hooks, .. } => {
                format!("use {} ({})", file.relative, hooks.len())
            }
            WorkspaceHooks::NeedsApproval { file, hooks, .. } => {
                format!("ask {} ({})", file.relative, hooks.len())
            }
            WorkspaceHooks::Ignored { file, reason } => {
                format!("ignored {} {reason:?}", file.relative)
            }
            WorkspaceHooks::Invalid(n) => format!("invalid {}", n.path.display()),
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_files_run_only_once_approved_and_ask_again_when_changed() {
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let store = ApprovalStore::new(data.path());
    let ask = |policy| workspace_hooks(ws.path(), policy, &store);
    assert!(ask(McpJsonPolicy::Ask).is_empty());

    write(ws.path(), ".claude/settings.json", CLAUDE);
    write(
        ws.path(),
        ".flower/settings.json",
        r#"{"model": "no hooks here"}"#,
    );
    let found = ask(McpJsonPolicy::Ask);
    assert_eq!(kinds(&found), vec!["ask .claude/settings.json (1)"]);
    let WorkspaceHooks::NeedsApproval {
        file,
        hooks,
        notices,
        ..
    } = &found[0]
    else {
        unreachable!()
    };
    assert_eq!(hooks[0].command, "echo from-claude-settings");
    assert_eq!(
        notices[0].to_string(),
        format!(
            "{}: `PreCompact` hooks are not supported by flower-tui and are skipped",
            file.path.display()
        )
    );
    assert!(project::headless_notice(file).contains("never approved in this workspace"));
    assert_eq!(
        kinds(&ask(McpJsonPolicy::Trust)),
        vec!["use .claude/settings.json (1)"]
    );
    assert_eq!(
        kinds(&ask(McpJsonPolicy::Ignore)),
        vec!["ignored .claude/settings.json Policy"]
    );

    // Approved: used, and its hooks run.
    project::record(&store, ws.path(), file, Decision::Approved).unwrap();
    let found = ask(McpJsonPolicy::Ask);
    let WorkspaceHooks::Use { hooks, .. } = &found[0] else {
        panic!("{:?}", kinds(&found));
    };
    let session = HookSession {
        session_id: "s".into(),
        transcript_path: ws.path().join("t.jsonl"),
        workspace: ws.path().to_path_buf(),
        permission_mode: PermissionMode::Default,
    };
    let outcome = HookSet::new(hooks.clone())
        .run(
            &HookInput::UserPromptSubmit {
                prompt: "hi".into(),
            },
            &session,
        )
        .await;
    assert_eq!(outcome.context, vec!["from-claude-settings"]);

    // An edited file asks again; the other file is decided apart.
    write(
        ws.path(),
        ".claude/settings.json",
        &CLAUDE.replace("from-claude", "edited"),
    );
    write(
        ws.path(),
        ".flower/settings.json",
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo done"}]}]}}"#,
    );
    let found = ask(McpJsonPolicy::Ask);
    assert_eq!(
        kinds(&found),
        vec![
            "ask .flower/settings.json (1)",
            "ask .claude/settings.json (1)"
        ]
    );
    let WorkspaceHooks::NeedsApproval { file, .. } = &found[0] else {
        unreachable!()
    };
    project::record(&store, ws.path(), file, Decision::Denied).unwrap();
    let found = ask(McpJsonPolicy::Ask);
    assert_eq!(
        kinds(&found),
        vec![
            "ignored .flower/settings.json Declined",
            "ask .claude/settings.json (1)"
        ]
    );
    assert!(found[0].notice().unwrap().contains("you declined them"));
    assert!(matches!(
        found[0],
        WorkspaceHooks::Ignored {
            reason: IgnoredBecause::Declined,
            ..
        }
    ));
    // The `.mcp.json` decision of the same workspace is its own.
    assert_eq!(store.decision(ws.path(), CLAUDE.as_bytes()), None);
}

#[test]
fn a_malformed_settings_file_is_one_notice_and_the_other_still_loads() {
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let store = ApprovalStore::new(data.path());
    write(
        ws.path(),
        ".claude/settings.json",
        "{\"hooks\": {\"Stop\": [",
    );
    write(
        ws.path(),
        ".flower/settings.json",
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo done"}]}]}}"#,
    );
    let found = workspace_hooks(ws.path(), McpJsonPolicy::Trust, &store);
    assert_eq!(
        kinds(&found),
        vec![
            "use .flower/settings.json (1)".to_string(),
            format!(
                "invalid {}",
                ws.path().join(".claude/settings.json").display()
            ),
        ]
    );
    let notice = found[1].notice().unwrap();
    assert_eq!(
        notice,
        format!(
            "{}: not valid JSON (line 1, column 20): EOF while parsing a list; neither its hooks nor its permission rules are used",
            ws.path().join(".claude/settings.json").display()
        )
    );

    // Only unusable parts: nothing to approve, the notices are still given.
    write(
        ws.path(),
        ".claude/settings.json",
        r#"{"hooks": {"PreToolUse": [{"hooks": [{"type": "http", "url": "http://x"}]}]}}"#,
    );
    let found = workspace_hooks(ws.path(), McpJsonPolicy::Ask, &store);
    let WorkspaceHooks::Use { hooks, notices, .. } = &found[1] else {
        panic!("{:?}", kinds(&found));
    };
    assert!(hooks.is_empty());
    assert!(notices[0].to_string().ends_with(
        "`hooks.PreToolUse[0].hooks[0]`: hooks of type `http` are not supported (only `command`); skipped"
    ));
}
