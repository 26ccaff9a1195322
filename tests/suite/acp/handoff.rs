//! The handoff in the editor: its own tool call ("Writing handoff…", then completed with the
//! document and its file), the review as a permission request ("wait, I am editing it", the file
//! edited and saved, then "continue"), the successor reading the file as saved, and one editor
//! session across both generations with the ledger recording them.

use serde_json::json;

use super::{drive, entries, handoff_flags, reply_text, script_crossing, set_up, u, updates};
use crate::support::check::each_str;
use crate::support::fake::anthropic as a;

/// A five-section handoff document, as a model writes it.
const DOC: &str = "## Doing\nRefactoring the parser.\n\n## Decided\n- Keep the old API.\n\n## Dead ends\n- Regex parsing: breaks on nested quotes.\n\n## Next\nRun the parser tests.\n\n## Scene\n- src/parser.rs\n";

#[test]
fn the_handoff_is_shown_reviewed_in_the_editor_and_read_back_as_saved() {
    let (_rt, server, home) = set_up();
    script_crossing(&server, DOC);
    server.push(a::text(
        "Successor here: running the parser tests.",
        u(5_000),
    ));
    let line = "\n- Typed in the editor during the review.\n";
    let report = drive(
        &home,
        &server,
        json!({
            "prompts": [{"text": "refactor the parser"}],
            "review": [{"answer": "wait", "append": line}, {"answer": "continue"}],
        }),
        &handoff_flags("60"),
    );
    assert_eq!(report["results"][0]["stop_reason"], "end_turn", "{report}");
    let id = report["session_id"].as_str().unwrap();
    let ups = updates(&report);

    // The handoff's own tool call: writing, then the document with its file.
    let writing = ups
        .iter()
        .find(|u| u["sessionUpdate"] == "tool_call" && u["toolCallId"] == "handoff-1")
        .expect("the handoff's tool call");
    assert_eq!(writing["title"], "Writing handoff…");
    assert_eq!(writing["status"], "in_progress");
    let frozen = ups
        .iter()
        .find(|u| {
            u["sessionUpdate"] == "tool_call_update"
                && u["toolCallId"] == "handoff-1"
                && u["status"] == "completed"
        })
        .expect("the frozen handoff");
    let doc = frozen["content"][0]["content"]["text"].as_str().unwrap();
    assert!(
        doc.contains("## Doing") && doc.contains("Refactoring the parser."),
        "{doc}"
    );
    let path = frozen["locations"][0]["path"].as_str().unwrap().to_string();
    assert!(
        path.ends_with(".md") && path.contains("/.flower/notes/handoff-"),
        "{path}"
    );

    // The review: asked, "wait" (the file edited), asked again, "continue".
    let asked = entries(&report, "permission");
    assert_eq!(asked.len(), 2, "{asked:#?}");
    for q in &asked {
        assert_eq!(q["tool_call"]["toolCallId"], "handoff-1");
        let ids = each_str(&q["options"], "optionId");
        assert_eq!(ids, ["continue", "wait"]);
    }
    assert_eq!(asked[0]["edited"], path.as_str());
    assert!(
        std::fs::read_to_string(&path)
            .unwrap()
            .contains(line.trim())
    );

    // The successor read the file as saved, and the reply went on in the same editor session.
    let reqs = server.requests();
    let successor = reqs.last().unwrap();
    let briefing = successor["messages"][0].to_string();
    assert!(
        briefing.contains("Typed in the editor during the review."),
        "{briefing}"
    );
    assert!(reply_text(&report).contains("Successor here: running the parser tests."));
    assert!(
        ups.iter().any(|u| u["toolCallId"] == "handoff-1"
            && u["title"]
                .as_str()
                .is_some_and(|t| t.contains("generation 2"))),
        "{ups:#?}"
    );
    let sessions: std::collections::BTreeSet<&str> = report["log"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["session"].as_str())
        .collect();
    assert_eq!(sessions.into_iter().collect::<Vec<_>>(), [id]);

    // The context fill after the handoff is the successor's, with the handoff line.
    let usage = ups
        .iter()
        .rfind(|u| u["sessionUpdate"] == "usage_update")
        .unwrap();
    assert_eq!(usage["size"], 40_000);
    let line = usage["_meta"]["flower"]["handoffAt"].as_u64().unwrap();
    assert!(line > 10_000 && line <= 30_000, "{usage}");
    assert!(usage["used"].as_u64().unwrap() < line, "{usage}");

    // The ledger: two generations, the first retired by the handoff.
    let manifest = home.manifest(id);
    let step = &manifest["steps"][0];
    assert_eq!(step["generations"], 2, "{manifest:#}");
    assert_eq!(step["retired"].as_array().unwrap().len(), 1, "{manifest:#}");
}
