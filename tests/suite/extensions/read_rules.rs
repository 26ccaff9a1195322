//! A `Read` deny rule of a settings file keeps its files from the model by every route the file
//! tools take, through the real binary headless against the loopback fake: a `grep`, `glob` or
//! `list_dir` over the folder holding them leaves them out and says so, an `@file` of the prompt
//! is not attached, and a subagent's `read_file` is refused (as its `bash` is by a `Bash` deny
//! rule). The secret reaches no request.

use super::home_setup::{Setup, results};
use super::hooks_wired::lines;
use crate::support::check::{assert_contains, assert_lacks, assert_success, strs_of};
use crate::support::fake::{FakeServer, U, anthropic as a};

const SECRET: &str = "TOKEN-SECRET-42";

#[tokio::test]
async fn a_read_deny_rule_covers_searches_attachments_and_subagents() {
    let s = Setup::new();
    s.in_ws("secrets/key.txt", &format!("{SECRET}\n"));
    s.in_ws("src/app.txt", "reads the TOKEN from the environment\n");
    s.in_ws(
        ".claude/settings.json",
        r#"{"permissions": {"deny": ["Read(secrets/**)", "Bash(rm:*)"]}}"#,
    );
    let server = FakeServer::start().await;
    let u = |n| U::new(n, 10);
    server.push(a::tool_use("g1", "grep", r#"{"pattern":"TOKEN"}"#, u(1000)));
    server.push(a::tool_use(
        "g2",
        "glob",
        r#"{"pattern":"**/*.txt"}"#,
        u(1100),
    ));
    server.push(a::tool_use(
        "l1",
        "list_dir",
        r#"{"path":"secrets"}"#,
        u(1200),
    ));
    let task = serde_json::json!({"description": "peek", "prompt": "read secrets/key.txt"});
    server.push(a::tool_use("k1", "task", &task.to_string(), u(1300)));
    // The subagent's own replies.
    server.push(a::text_then_tools(
        "",
        &[
            ("c1", "read_file", r#"{"path":"secrets/key.txt"}"#),
            ("c2", "bash", r#"{"command":"rm -f src/app.txt"}"#),
        ],
        u(500),
    ));
    server.push(a::text("could not read it", u(600)));
    server.push(a::text("done", u(1400)));
    let out = s
        .run(
            &server,
            &[
                "-p",
                "look at @secrets/key.txt",
                "--yes",
                "--sandbox",
                "off",
            ],
        )
        .await;
    assert_success(&out);
    let events = lines(&out);

    let got = results(&events);
    assert_eq!(got.len(), 4, "{got:?}");
    let left_out = "1 file(s) left out: a permission rule in the settings denies reading them";
    for (i, r) in got.iter().take(3).enumerate() {
        assert_contains(r, left_out);
        assert_lacks(r, "key.txt");
        assert!(i == 2 || r.contains("src/app.txt"), "{r}");
    }
    let attached = strs_of(&events, "attachment", "summary").join("\n");
    assert_contains(&attached, "secrets/key.txt: not attached");
    assert_contains(&attached, "Read(secrets/**)");

    let requests = server.requests();
    assert_eq!(
        requests.len(),
        7,
        "four main turns, two of the subagent, the end"
    );
    let child = requests[5].to_string();
    assert_contains(&child, "denied by the permission rule `Read(secrets/**)`");
    assert_contains(&child, "denied by the permission rule `Bash(rm:*)`");
    assert!(
        s.ws.join("src/app.txt").exists(),
        "the subagent's rm was refused"
    );
    for r in &requests {
        assert_lacks(&r.to_string(), SECRET);
    }
}
