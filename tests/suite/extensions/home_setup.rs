//! The user's Claude Code home setup and permission rules, through the real binary headless
//! against the loopback fake provider, with `HOME` a temporary folder apart from the workspace:
//! `~/.claude/commands`, `~/.claude/CLAUDE.md` and its `@` imports, the hooks and rules of
//! `~/.claude/settings.json`; a workspace's `deny` applying at once while its `allow`, its
//! `settings.local.json` hooks and its command files' `allowed-tools` wait for approval; a `deny`
//! winning over `--yes`; a malformed settings file said and left as it is; a workspace command
//! winning a name clash over the user's, said at the start.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use super::hooks_wired::{Home, lines};
use crate::support::check::{assert_success, strs_of};
use crate::support::fake::{FakeServer, U, anthropic as a};

/// A home (`HOME`, the config and data folders) and a workspace beside it.
pub(super) struct Setup {
    pub(super) home: Home,
    pub(super) ws: PathBuf,
}

impl Setup {
    pub(super) fn new() -> Setup {
        let home = Home::new();
        let ws = home.path().join("work/project");
        std::fs::create_dir_all(ws.join(".git")).unwrap();
        Setup { home, ws }
    }

    fn put(&self, path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    pub(super) fn in_home(&self, rel: &str, text: &str) {
        self.put(&self.home.path().join(rel), text);
    }

    pub(super) fn in_ws(&self, rel: &str, text: &str) {
        self.put(&self.ws.join(rel), text);
    }

    pub(super) async fn run(&self, server: &FakeServer, args: &[&str]) -> Output {
        let mut c = self.home.command(server);
        c.current_dir(&self.ws)
            .args(["--output", "json"])
            .args(args);
        tokio::task::spawn_blocking(move || c.output().unwrap())
            .await
            .unwrap()
    }
}

fn notices(events: &[Value]) -> Vec<String> {
    strs_of(events, "notice", "message")
}

pub(super) fn results(events: &[Value]) -> Vec<String> {
    strs_of(events, "tool_result", "output")
}

#[tokio::test]
async fn the_home_setup_is_read_and_a_deny_wins_over_yes() {
    let s = Setup::new();
    s.in_home(
        ".claude/commands/standup.md",
        "---\ndescription: my standup\n---\nWrite the standup for $ARGUMENTS.\n",
    );
    s.in_home(".claude/commands/team/sync.md", "Team sync.\n");
    s.in_home(".claude/CLAUDE.md", "HOME-RULES-7 and @~/notes/extra.md\n");
    s.in_home("notes/extra.md", "EXTRA-IMPORTED-7\n");
    let log = s.home.file("prompts.log");
    s.in_home(
        ".claude/settings.json",
        &serde_json::json!({
            "hooks": {"UserPromptSubmit": [{"hooks": [
                {"type": "command", "command": format!("cat >> '{}'", log.display())}
            ]}]},
            "permissions": {"deny": ["Bash(rm:*)"], "allow": ["Bash(touch:*)"]}
        })
        .to_string(),
    );
    s.in_ws("precious.txt", "keep me\n");
    let server = FakeServer::start().await;
    server.push(a::tool_use(
        "t1",
        "bash",
        r#"{"command":"ls && rm -f precious.txt"}"#,
        U::new(1000, 10),
    ));
    server.push(a::text("done", U::new(1100, 10)));
    let out = s.run(&server, &["-p", "/standup friday", "--yes"]).await;
    assert_success(&out);
    let events = lines(&out);
    let first = server.requests()[0].to_string();
    for want in [
        "HOME-RULES-7",
        "EXTRA-IMPORTED-7",
        "Write the standup for friday.",
    ] {
        assert!(first.contains(want), "{want}: {first}");
    }
    assert!(
        std::fs::read_to_string(&log).unwrap().contains("standup"),
        "the home settings file's hook ran"
    );
    assert_eq!(
        std::fs::read_to_string(s.ws.join("precious.txt")).unwrap(),
        "keep me\n",
        "deny wins over --yes"
    );
    let results = results(&events);
    assert!(
        results
            .iter()
            .any(|r| r.contains("denied by the permission rule `Bash(rm:*)`")),
        "{results:?}"
    );
    // Namespaced: `/team:sync` is a command too.
    server.push(a::text("synced", U::new(1000, 10)));
    let out = s.run(&server, &["-p", "/team:sync"]).await;
    assert!(out.status.success());
    assert!(
        server
            .requests()
            .last()
            .unwrap()
            .to_string()
            .contains("Team sync.")
    );
}

#[tokio::test]
async fn a_workspace_deny_applies_at_once_its_allow_hooks_and_command_grants_once_approved() {
    let s = Setup::new();
    s.in_ws(".env", "API_TOKEN=hunter2\n");
    s.in_ws(
        ".claude/settings.json",
        r#"{"permissions": {"deny": ["Read(./.env)"], "allow": ["Bash(touch:*)"]}}"#,
    );
    let hook_ran = s.ws.join("local-hook-ran");
    s.in_ws(
        ".claude/settings.local.json",
        &serde_json::json!({"hooks": {"Stop": [{"hooks": [
            {"type": "command", "command": format!("touch '{}'", hook_ran.display())}
        ]}]}})
        .to_string(),
    );
    s.in_ws(
        ".claude/commands/mk.md",
        "---\nallowed-tools: Bash(mkdir:*)\n---\nMake the folder.\n",
    );
    let server = FakeServer::start().await;
    let script = |server: &FakeServer| {
        server.push(a::tool_use(
            "r1",
            "read_file",
            r#"{"path":".env"}"#,
            U::new(1000, 10),
        ));
        server.push(a::tool_use(
            "b1",
            "bash",
            r#"{"command":"touch made.txt"}"#,
            U::new(1100, 10),
        ));
        server.push(a::tool_use(
            "b2",
            "bash",
            r#"{"command":"mkdir made-dir"}"#,
            U::new(1200, 10),
        ));
        server.push(a::text("done", U::new(1300, 10)));
    };
    // Never approved, headless, no --yes, and the sandbox asked for every command: the deny
    // applies, nothing the workspace grants does.
    script(&server);
    let out = s.run(&server, &["-p", "/mk", "--sandbox", "off"]).await;
    assert_success(&out);
    let events = lines(&out);
    let got = results(&events);
    assert!(
        got[0].contains("denied by the permission rule `Read(./.env)`"),
        "{got:?}"
    );
    assert!(
        !server
            .requests()
            .iter()
            .any(|r| r.to_string().contains("hunter2"))
    );
    assert!(!s.ws.join("made.txt").exists() && !s.ws.join("made-dir").exists());
    assert!(
        !hook_ran.exists(),
        "the local settings file's hook waits for approval"
    );
    let said = notices(&events).join("\n");
    assert!(said.contains("settings.local.json"), "{said}");
    assert!(
        said.contains("allowed-tools of this workspace's commands (/mk: Bash(mkdir:*))"),
        "{said}"
    );
    // Approved (as the TUI records it): the allow rule, the hook and the command's grant apply.
    use flower_tui::engine::hooks::project;
    use flower_tui::engine::mcp::{ApprovalStore, Decision, approval::sha256_hex};
    let store = ApprovalStore::new(&s.home.path().join("data/flower"));
    for rel in [".claude/settings.json", ".claude/settings.local.json"] {
        let bytes = std::fs::read(s.ws.join(rel)).unwrap();
        store
            .record_file(&s.ws, rel, &sha256_hex(&bytes), Decision::Approved)
            .unwrap();
    }
    store
        .record_file(
            &s.ws,
            project::COMMAND_GRANTS,
            &sha256_hex(b"/mk: Bash(mkdir:*)"),
            Decision::Approved,
        )
        .unwrap();
    script(&server);
    let out = s.run(&server, &["-p", "/mk", "--sandbox", "off"]).await;
    assert_success(&out);
    let results = results(&lines(&out));
    assert!(
        results[0].contains("denied by the permission rule"),
        "{results:?}"
    );
    assert!(s.ws.join("made.txt").exists(), "{results:?}");
    assert!(s.ws.join("made-dir").is_dir(), "{results:?}");
    assert!(hook_ran.exists());
}

#[tokio::test]
async fn a_malformed_home_settings_file_is_said_and_left_as_it_is() {
    let s = Setup::new();
    let broken = "{\"permissions\": {\"deny\": [\"Bash(rm:*)\"]\n";
    s.in_home(".claude/settings.json", broken);
    let server = FakeServer::start().await;
    server.push(a::text("fine", U::new(1000, 10)));
    let out = s.run(&server, &["-p", "hello"]).await;
    assert_success(&out);
    let said = notices(&lines(&out)).join("\n");
    assert!(
        said.contains(".claude/settings.json: not valid JSON (line 2, column 0)"),
        "{said}"
    );
    assert_eq!(
        std::fs::read_to_string(s.home.path().join(".claude/settings.json")).unwrap(),
        broken
    );
}

#[tokio::test]
async fn a_workspace_command_wins_a_name_clash_with_the_users_and_the_start_says_so() {
    let s = Setup::new();
    s.in_home(
        ".claude/commands/standup.md",
        "HOME-STANDUP for $ARGUMENTS.\n",
    );
    s.in_ws(
        ".claude/commands/standup.md",
        "WS-STANDUP for $ARGUMENTS.\n",
    );
    let server = FakeServer::start().await;
    server.push(a::text("written", U::new(1000, 10)));
    let out = s.run(&server, &["-p", "/standup friday"]).await;
    assert_success(&out);
    let sent = server.requests()[0].to_string();
    assert!(sent.contains("WS-STANDUP for friday."), "{sent}");
    assert!(!sent.contains("HOME-STANDUP"), "{sent}");
    let said = strs_of(&lines(&out), "warning", "message").join("\n");
    let home_file = s.home.path().join(".claude/commands/standup.md");
    let ws_file = s.ws.join(".claude/commands/standup.md");
    assert!(
        said.contains(&format!(
            "{}: /standup is not offered: {} has the same name and wins",
            home_file.display(),
            ws_file.display()
        )),
        "{said}"
    );
}
