//! `bash` in the editor's terminal: with the sandbox off and `terminal/*` offered, a command is
//! approved as ever, then runs in a terminal the editor creates (embedded in the tool call, its
//! output read back for the model), is killed at its timeout or on a cancel, and released; with
//! the sandbox on, the same editor's terminal is never asked for and the command stays confined.

use serde_json::{Value, json};

use super::{drive, entries, set_up, u, updates};
use crate::support::fake::{Reply, anthropic as a};

/// The terminal ops the editor saw, in order, as `op id`.
fn ops(report: &Value) -> Vec<String> {
    entries(report, "terminal")
        .iter()
        .map(|e| {
            format!(
                "{} {}",
                e["op"].as_str().unwrap(),
                e["id"].as_str().unwrap()
            )
        })
        .collect()
}

/// The model's call of bash with `command` (id `b1`).
fn bash_call(command: &str) -> Reply {
    a::tool_use(
        "b1",
        "bash",
        &json!({ "command": command }).to_string(),
        u(1_000),
    )
}

#[test]
fn with_the_sandbox_off_commands_run_in_the_editors_terminal() {
    let (_rt, server, home) = set_up();
    server.push(bash_call(
        r#"echo from-$((6*7)); echo to-stderr >&2; echo $PAGER > pager.txt; exit 3"#,
    ));
    server.push(a::text("It exited with 3.", u(1_200)));
    server.push(a::tool_use(
        "b2",
        "bash",
        r#"{"command": "echo before-the-wait; sleep 30", "timeout": 1}"#,
        u(1_300),
    ));
    server.push(a::text("It timed out.", u(1_400)));
    server.push(a::tool_use(
        "b3",
        "bash",
        r#"{"command": "sleep 30"}"#,
        u(1_500),
    ));
    let report = drive(
        &home,
        &server,
        json!({
            "terminal": true,
            "prompts": [
                {"text": "run it"},
                {"text": "run the slow one"},
                {"text": "run another", "cancel_on": "terminal"},
            ],
        }),
        &["--sandbox", "off"],
    );
    let results = &report["results"];
    assert_eq!(results[0]["stop_reason"], "end_turn", "{report}");
    assert_eq!(results[1]["stop_reason"], "end_turn", "{report}");
    assert_eq!(results[2]["stop_reason"], "cancelled", "{report}");

    // Each command was approved first, as in the terminal.
    let asked: Vec<&str> = entries(&report, "permission")
        .iter()
        .map(|p| p["tool_call"]["toolCallId"].as_str().unwrap())
        .collect();
    assert_eq!(asked, ["b1", "b2", "b3"]);

    // The editor ran them: `bash -c`, in the workspace, the output limit and pager set.
    let created = entries(&report, "terminal");
    let first = created.iter().find(|e| e["op"] == "create").unwrap();
    assert_eq!(first["command"], "bash");
    assert_eq!(first["args"][0], "-c");
    assert!(first["args"][1].as_str().unwrap().contains("from-$((6*7))"));
    assert_eq!(first["cwd"], home.ws().display().to_string());
    assert_eq!(first["limit"], 512 * 1024);
    assert_eq!(first["env"]["PAGER"], "cat");
    assert_eq!(
        std::fs::read_to_string(home.ws().join("pager.txt")).unwrap(),
        "cat\n"
    );
    assert_eq!(
        ops(&report),
        [
            "create term-1",
            "wait term-1",
            "output term-1",
            "release term-1",
            // The wait still outstanding is answered once the kill ended the command.
            "create term-2",
            "kill term-2",
            "wait term-2",
            "output term-2",
            "release term-2",
            "create term-3",
            "kill term-3",
            "wait term-3",
            "output term-3",
            "release term-3",
        ]
    );

    // The terminal is the call's content while it runs and after it ended.
    let ups = updates(&report);
    for (call, term) in [("b1", "term-1"), ("b2", "term-2")] {
        let shown: Vec<&&Value> = ups
            .iter()
            .filter(|u| u["toolCallId"] == call && u["content"][0]["type"] == "terminal")
            .collect();
        assert_eq!(shown.len(), 2, "{call}: {ups:#?}");
        assert!(shown.iter().all(|u| u["content"][0]["terminalId"] == term));
        let done = ups.iter().rfind(|u| u["toolCallId"] == call).unwrap();
        assert_eq!(done["status"], "failed", "{done}");
        assert_eq!(done["content"][0]["type"], "terminal", "{done}");
    }

    // The model read what the terminal printed, ended as it would have here.
    let reqs = server.requests();
    assert_eq!(reqs.len(), 5);
    let result = reqs[1]["messages"].to_string();
    assert!(result.contains("from-42"), "{result}");
    assert!(result.contains("to-stderr"), "{result}");
    assert!(result.contains("[exit code 3]"), "{result}");
    let slow = reqs[3]["messages"].to_string();
    assert!(slow.contains("before-the-wait"), "{slow}");
    assert!(slow.contains("timed out after 1s"), "{slow}");
    // Nothing the editor's terminals started is left running.
    for e in entries(&report, "terminal") {
        if let Some(pid) = e["pid"].as_u64() {
            assert!(
                !std::path::Path::new(&format!("/proc/{pid}")).exists()
                    || std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| s
                        .rsplit(')')
                        .next()
                        .is_some_and(|r| r.trim_start().starts_with('Z'))),
                "terminal process {pid} still runs"
            );
        }
    }
}

#[test]
fn with_the_sandbox_on_commands_stay_in_the_sandbox() {
    let (_rt, server, home) = set_up();
    server.push(bash_call(r#"echo confined-$((6*7))"#));
    server.push(a::text("Done.", u(1_200)));
    let report = drive(
        &home,
        &server,
        json!({"terminal": true, "prompts": [{"text": "run it"}]}),
        &[],
    );
    assert_eq!(report["results"][0]["stop_reason"], "end_turn", "{report}");
    assert!(ops(&report).is_empty(), "{:#?}", ops(&report));
    let ups = updates(&report);
    let done = ups.iter().rfind(|u| u["toolCallId"] == "b1").unwrap();
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["content"][0]["type"], "content", "{done}");
    assert!(
        done["content"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("confined-42"),
        "{done}"
    );
}
