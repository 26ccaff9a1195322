//! The engine with real language servers and the loopback fake model: an edit that adds an
//! undefined name is told so in its result (and the front end gets it as an event), the fix is
//! told as fixed, a handoff after the broken edit carries the open error in `## Touched`, a
//! `bash` command's change is checked too, the `diagnostics` tool answers, TypeScript's errors
//! come through `typescript-language-server`, and no server outlives its manager.

use std::sync::Arc;
use std::time::Duration;

use flower_tui::engine::lsp::{ChangeReport, LspManager, Severity};
use flower_tui::engine::protocol::{Event, HandoffPhase};
use serde_json::json;

use super::{left_in, real_params, server_path};
use crate::support::fake::{U, anthropic as a};
use crate::support::harness::{Harness, start};

const DOC: &str = "## Doing\nA calculator.\n\n## Decided\n- Keep it small.\n\n## Dead ends\n(none)\n\n## Next\nFix what is broken.\n\n## Scene\n- calc.py\n";

fn u(input: u64) -> U {
    U::new(input, 10)
}

fn reports(events: &[Event]) -> Vec<ChangeReport> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Diagnostics { report, .. } => Some(report.clone()),
            _ => None,
        })
        .collect()
}

/// The tool results the model was sent in the last request, as text.
fn last_request(h: &Harness) -> String {
    serde_json::to_string(&h.server.requests().last().unwrap()["messages"]).unwrap()
}

/// A manager for the real servers (on `path`) whose waits do not depend on the machine's load
/// (the goal of 1 s is the benchmark's): tests wait for the servers' answers, however long.
fn manager(h: &Harness, path: String) -> Arc<LspManager> {
    let mut p = real_params(&h.workspace, path);
    p.wait = Duration::from_secs(30);
    Arc::new(LspManager::new(p))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_edit_is_told_its_fix_is_told_fixed_and_the_handoff_carries_the_open_error() {
    let Some(path) = server_path("a_broken_edit_is_told_its_fix_is_told_fixed") else {
        return;
    };
    let h = Harness::new().await;
    let ws = h.workspace.clone();
    let mut p = h.params(200_000, 50_000);
    p.lsp = Some(manager(&h, path));
    let mut r = start(p);
    let write = json!({"path": "calc.py", "content": "def total(xs):\n    return sum(xs)\n"});
    let breaks =
        json!({"path": "calc.py", "old_string": "sum(xs)", "new_string": "sum(xs) + bonus"});
    h.server.push(a::tool_use(
        "w1",
        "write_file",
        &write.to_string(),
        u(1_000),
    ));
    h.server.push(a::tool_use(
        "e1",
        "edit_file",
        &breaks.to_string(),
        u(1_100),
    ));
    h.server.push(a::text("done", u(1_200)));
    let events = r.turn("write a calculator").await;
    let got = reports(&events);
    assert_eq!(got.len(), 2, "{events:#?}");
    assert_eq!(got[0].checked, ["calc.py"]);
    assert!(
        got[0].new.is_empty() && got[0].notes.is_empty(),
        "{:?}",
        got[0]
    );
    let broken = &got[1];
    assert_eq!(broken.new.len(), 1, "{broken:?}");
    let e = &broken.new[0];
    assert_eq!(
        (
            e.path.as_str(),
            e.line,
            e.severity,
            e.message.as_str(),
            e.source.as_deref()
        ),
        (
            "calc.py",
            2,
            Severity::Error,
            "undefined name 'bonus'",
            Some("pyflakes")
        )
    );
    // The model got the same, after the edit's own result.
    let sent = last_request(&h);
    assert!(
        sent.contains(&format!("Diagnostics after this change (calc.py):\\n{e}")),
        "{sent}"
    );

    // A handoff now: its Touched section ends with the error still open.
    h.server.push(a::text(DOC, u(1_300)));
    let turn = r.send_handoff(None).await;
    let events = r.until_end(turn).await;
    let doc = events
        .iter()
        .find_map(|e| match e {
            Event::Handoff(HandoffPhase::Frozen { markdown, .. }) => Some(markdown.clone()),
            _ => None,
        })
        .expect("a frozen document");
    let touched = doc.split("## Touched").nth(1).expect("a Touched section");
    assert!(
        touched.trim_end().ends_with(&format!(
            "Errors still open at the cut (language servers, 1 in 1 file):\n- `calc.py:2:{}` \
             undefined name 'bonus' (pyflakes)",
            e.col
        )),
        "{touched}"
    );

    // The successor fixes it and is told so.
    let fix = json!({"path": "calc.py", "old_string": " + bonus", "new_string": ""});
    h.server
        .push(a::tool_use("e2", "edit_file", &fix.to_string(), u(1_000)));
    h.server.push(a::text("fixed", u(1_100)));
    let events = r.turn("fix it").await;
    let got = reports(&events);
    assert_eq!(got.len(), 1, "{events:#?}");
    assert!(got[0].new.is_empty(), "{:?}", got[0]);
    assert_eq!(got[0].gone.len(), 1);
    assert_eq!(got[0].gone[0].message, "undefined name 'bonus'");
    assert!(last_request(&h).contains(&format!("fixed: {e}")));

    // A command's change is checked too (the call's checkpoints name the file); the
    // `diagnostics` tool answers for a file and for everything open.
    let cmd = json!({"command": "printf 'import os\\nprint(missing)\\n' > tool.py"});
    h.server
        .push(a::tool_use("b1", "bash", &cmd.to_string(), u(1_000)));
    h.server.push(a::tool_use(
        "d1",
        "diagnostics",
        r#"{"path":"calc.py"}"#,
        u(1_100),
    ));
    h.server
        .push(a::tool_use("d2", "diagnostics", "{}", u(1_200)));
    h.server.push(a::text("checked", u(1_300)));
    let events = r.turn("make a tool").await;
    let got = reports(&events);
    assert_eq!(got.len(), 1, "{events:#?}");
    let lines: Vec<String> = got[0].new.iter().map(ToString::to_string).collect();
    assert_eq!(
        lines,
        [
            "tool.py:2:7 error undefined name 'missing' (pyflakes)",
            "tool.py:1:1 warning 'os' imported but unused (pyflakes)"
        ]
    );
    let results: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolResult { name, output, .. } if name == "diagnostics" => Some(output.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(results[0], "0 errors, 0 warnings in calc.py");
    assert!(
        results[1].starts_with("1 error, 1 warning in ")
            && results[1].contains("tool.py:2:7 error undefined name 'missing' (pyflakes)"),
        "{}",
        results[1]
    );

    r.shutdown().await;
    assert_eq!(
        left_in(&ws, Duration::from_secs(5)).await,
        Vec::<u32>::new()
    );
}

/// The manager alone (the engine's path is the test above): typescript-language-server's first
/// start takes tsserver's, which on a loaded machine is longer than a harness turn may take.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_errors_come_through_typescript_language_server() {
    let Some(path) = server_path("typescript_errors_come_through_typescript_language_server")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().canonicalize().unwrap();
    let mut p = real_params(&ws, path);
    p.wait = Duration::from_secs(120);
    let lsp = LspManager::new(p);
    let write = |text: &str| {
        let watch = lsp.before_call("write_file", &json!({"path": "app.ts", "content": text}));
        std::fs::write(ws.join("app.ts"), text).unwrap();
        watch
    };
    let clean = lsp
        .after_call(write("export const n: number = 1;\n"), None)
        .await
        .unwrap();
    assert_eq!(clean.checked, ["app.ts"], "{clean:?}");
    assert!(clean.new.is_empty() && clean.notes.is_empty(), "{clean:?}");
    let broken = lsp
        .after_call(write("export const n: number = \"one\";\n"), None)
        .await
        .unwrap();
    let e = broken.new.first().unwrap_or_else(|| panic!("{broken:?}"));
    assert_eq!(
        (e.path.as_str(), e.line, e.severity),
        ("app.ts", 1, Severity::Error)
    );
    assert!(
        e.message
            .contains("Type 'string' is not assignable to type 'number'"),
        "{e}"
    );
    assert!(lsp.report().contains("- typescript (`"), "{}", lsp.report());
    lsp.shutdown().await;
    assert_eq!(
        left_in(&ws, Duration::from_secs(5)).await,
        Vec::<u32>::new()
    );
}
