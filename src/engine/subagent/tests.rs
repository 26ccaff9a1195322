//! Subagents in isolation: what the approval policy lets a child do, the tools it may call, the
//! `task` tool's arguments, its spec and the child's prompt.

use std::path::Path;

use serde_json::json;

use super::*;

#[test]
fn the_approval_policy_decides_bash_and_nothing_else_changes() {
    let ask = ChildTools::for_policy(ApprovalPolicy::Ask, true);
    let auto = ChildTools::for_policy(ApprovalPolicy::Auto, false);
    assert!(!ask.bash && auto.bash);
    // AskOnce: like Ask until the session's one question was answered, then like Auto.
    assert!(!ChildTools::for_policy(ApprovalPolicy::AskOnce, false).bash);
    assert!(ChildTools::for_policy(ApprovalPolicy::AskOnce, true).bash);
    assert_eq!(ask.names(), ["read_file", "grep", "glob", "list_dir"]);
    assert_eq!(
        auto.names(),
        [
            "read_file",
            "bash",
            "grep",
            "glob",
            "list_dir",
            "job_output",
            "job_stop"
        ]
    );
    // The specs are the built-ins' own, byte for byte, the job tools' too (bash keeps
    // `run_in_background`: the child's jobs end with its task).
    let builtin: Vec<ToolSpec> = tools::specs()
        .into_iter()
        .chain(crate::engine::jobs::specs())
        .collect();
    for spec in auto.specs() {
        assert!(builtin.contains(&spec), "{}", spec.name);
    }
    let ctx = crate::engine::tools::ToolCtx::new(std::env::temp_dir(), "s");
    let asked = serde_json::json!({"command": "npm run dev", "run_in_background": true});
    assert!(auto.check("bash", &asked, &ctx).is_ok());
    assert!(
        ask.check("job_output", &json!({}), &ctx).is_err(),
        "no bash, no jobs"
    );
}

#[test]
fn a_child_may_call_only_its_own_tools_inside_the_workspace() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let spill = root.join("run/spill");
    std::fs::create_dir_all(&spill).unwrap();
    std::fs::create_dir_all(root.join("ws")).unwrap();
    let ws = crate::engine::tools::ToolCtx {
        spill_dir: Some(spill.clone()),
        ..crate::engine::tools::ToolCtx::new(root.join("ws"), "s")
    };
    let ws = &ws;
    let ask = ChildTools { bash: false };
    let auto = ChildTools { bash: true };
    let inside = json!({"path": "src/a.rs"});
    assert!(ask.check("read_file", &inside, ws).is_ok());
    assert!(ask.check("grep", &json!({"pattern": "x"}), ws).is_ok());
    let no_task = ask.check(TASK_TOOL, &json!({}), ws).unwrap_err();
    assert!(no_task.0.contains("cannot start subagents"), "{no_task}");
    assert!(auto.check(TASK_TOOL, &json!({}), ws).is_err());
    let no_bash = ask
        .check("bash", &json!({"command": "ls"}), ws)
        .unwrap_err();
    assert!(
        no_bash.0.contains("`bash` cannot be called here")
            && no_bash.0.contains("read_file, grep, glob, list_dir"),
        "{no_bash}"
    );
    assert!(auto.check("bash", &json!({"command": "ls"}), ws).is_ok());
    for name in ["write_file", "edit_file"] {
        let e = auto.check(name, &inside, ws).unwrap_err();
        assert!(e.0.contains("cannot change files"), "{e}");
    }
    assert!(auto.check("mcp__srv__search", &json!({}), ws).is_err());
    let outside = auto
        .check("read_file", &json!({"path": "/etc/passwd"}), ws)
        .unwrap_err();
    assert!(outside.0.contains("would leave the workspace"), "{outside}");
    // Its own spill files (outside the workspace with --no-workbench) it may read.
    let spilled = json!({"path": spill.join("s-1.txt").display().to_string()});
    assert!(ask.check("read_file", &spilled, ws).is_ok());
    assert!(ask.check("list_dir", &spilled, ws).is_err());
}

#[test]
fn task_arguments() {
    let t = TaskInput::parse(&json!({"description": " find loaders ", "prompt": " Find them. "}))
        .unwrap();
    assert_eq!(t.description, "find loaders");
    assert_eq!(t.prompt, "Find them.");
    // No description: the prompt's start names it.
    let t = TaskInput::parse(&json!({"prompt": "Look\nat every config file"})).unwrap();
    assert_eq!(t.description, "Look at every config file");
    for bad in [
        json!({"description": "x"}),
        json!({"description": "x", "prompt": "   "}),
        json!({"prompt": 3}),
        json!("just text"),
        json!({crate::engine::types::INVALID_JSON_KEY: "{prompt:"}),
    ] {
        assert!(TaskInput::parse(&bad).is_err(), "{bad}");
    }
}

#[test]
fn the_spec_and_the_prompt_say_what_the_child_can_do() {
    let with = spec(ChildTools { bash: true });
    let without = spec(ChildTools { bash: false });
    assert_eq!(with.name, "task");
    assert!(with.description.contains("run commands with bash"));
    assert!(!without.description.contains("bash"));
    assert!(without.description.contains("up to 4"));
    assert_eq!(
        with.input_schema["required"],
        json!(["description", "prompt"])
    );
    let p = system_prompt(
        Path::new("/w"),
        ChildTools { bash: false },
        "# Environment\n\n- Workspace: /w\n",
    );
    assert!(p.starts_with("You are a subagent of flower"));
    assert!(p.contains("Workspace: /w\n") && p.contains("You have no bash."));
    assert!(p.trim_end().ends_with("- Workspace: /w"), "{p}");
    assert!(!p.contains("{tools}") && !p.contains("{workspace}"));
    let p = system_prompt(Path::new("/w"), ChildTools { bash: true }, "");
    assert!(p.contains("You can run commands with bash"));
}
