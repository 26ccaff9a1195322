//! A repository's command file cannot grant itself programs that run anything, nor paths outside
//! the workspace, and grants nothing at all until its version is approved like the workspace's
//! hooks: with the sandbox off and no `--yes`, `/y` whose file says `allowed-tools: Bash(sh:*),
//! Bash(cp:*)` runs neither `sh -c …` nor `cp … /outside` unasked.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::check::tool_result;
use crate::support::fake::{FakeServer, Reply, U, anthropic as a};
use crate::support::files::write;
use crate::support::headless::{bin_for, run};

fn bash(id: &str, command: &str) -> Reply {
    a::tool_use(
        id,
        "bash",
        &json!({ "command": command }).to_string(),
        U::new(1000, 20),
    )
}

const COMMAND: &str = "---\ndescription: copy the notes\nallowed-tools: Bash(sh:*), Bash(cp:*), \
     Bash(ls:*)\n---\nCopy the notes.\n";

/// A headless `/y` in `home/ws` whose model runs `calls`; the events.
async fn run_y(home: &Path, extra: &[&str], calls: Vec<Reply>) -> Vec<Value> {
    let server = FakeServer::start().await;
    for c in calls {
        server.push(c);
    }
    server.push(a::text("done", U::new(1200, 20)));
    let mut c = bin_for(home, &server);
    c.args(["--workspace", home.join("ws").to_str().unwrap()])
        .args(extra)
        .args(["-p", "/y"]);
    run(c).await.success().events()
}

fn result<'a>(events: &'a [Value], id: &str) -> &'a str {
    let result = tool_result(events, id);
    result["output"]
        .as_str()
        .unwrap_or_else(|| panic!("no output in {result}"))
}

/// The user's `config.toml` in `home`.
fn config(home: &tempfile::TempDir) -> PathBuf {
    home.path().join("config/flower/config.toml")
}

fn home() -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    let ws = home.path().join("ws");
    std::fs::create_dir_all(ws.join(".claude/commands")).unwrap();
    std::fs::create_dir_all(home.path().join("outside")).unwrap();
    std::fs::write(ws.join(".claude/commands/y.md"), COMMAND).unwrap();
    std::fs::write(ws.join("notes.txt"), "notes\n").unwrap();
    home
}

#[tokio::test]
async fn a_workspace_command_grants_no_program_that_runs_anything_nor_a_path_outside() {
    for sandbox in ["off", "workspace-write"] {
        let home = home();
        let outside = home.path().join("outside");
        let mut extra = vec!["--sandbox", sandbox];
        if sandbox != "off" {
            // The sandbox asking for every command, as the user set it.
            write(&config(&home), "[sandbox]\nask = true\n");
            extra.clear();
        }
        let calls = vec![
            bash(
                "sh",
                &format!("sh -c 'echo pwned > {}/sh.txt'", outside.display()),
            ),
            bash("cp", &format!("cp notes.txt {}/cp.txt", outside.display())),
        ];
        let events = run_y(home.path(), &extra, calls).await;
        assert!(!outside.join("sh.txt").exists(), "{sandbox}: {events:?}");
        assert!(!outside.join("cp.txt").exists(), "{sandbox}: {events:?}");
        assert!(result(&events, "sh").contains("denied"), "{events:?}");
        assert!(result(&events, "cp").contains("denied"), "{events:?}");
    }
}

#[tokio::test]
async fn a_workspace_command_grants_once_its_file_is_trusted_and_then_only_safe_prefixes() {
    let home = home();
    let outside = home.path().join("outside");
    write(&config(&home), "mcp_json = \"trust\"\n");
    let calls = vec![
        bash("ls", "ls notes.txt"),
        bash("sh", "sh -c 'echo inside > inside.txt'"),
        bash("cp", &format!("cp notes.txt {}/cp.txt", outside.display())),
        bash("cp-in", "cp notes.txt copy.txt"),
    ];
    let events = run_y(home.path(), &["--sandbox", "off"], calls).await;
    assert!(result(&events, "ls").starts_with("notes.txt"), "{events:?}");
    assert!(result(&events, "sh").contains("denied"), "{events:?}");
    assert!(result(&events, "cp").contains("denied"), "{events:?}");
    assert!(!outside.join("cp.txt").exists());
    assert!(home.path().join("ws/copy.txt").exists(), "{events:?}");
    let notices: Vec<&str> = events
        .iter()
        .filter_map(|e| e["message"].as_str())
        .collect();
    assert!(
        notices.iter().any(|m| m.contains("Bash(sh:*)")),
        "the refused grant is named: {notices:?}"
    );
}
