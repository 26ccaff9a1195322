//! A run goes on in a second process: `session/list` names it, `session/load` replays its
//! conversation and continues it from the ledger, as `--resume RUN_ID` does in the terminal.

use serde_json::json;

use super::{drive, handoff_flags, reply_text, script_crossing, set_up, u, updates};
use crate::support::fake::anthropic as a;

#[test]
fn a_second_process_lists_loads_and_continues_the_run() {
    let (_rt, server, home) = set_up();
    server.push(a::text("Noted: the number is seven.", u(1_000)));
    let first = drive(
        &home,
        &server,
        json!({"prompts": [{"text": "remember the number seven"}]}),
        &[],
    );
    let id = first["session_id"].as_str().unwrap().to_string();

    server.push(a::text("It was seven.", u(1_300)));
    let second = drive(
        &home,
        &server,
        json!({"list": true, "load": id, "prompts": [{"text": "which number was it?"}]}),
        &[],
    );
    let listed = second["list"]["sessions"].as_array().unwrap();
    let entry = listed
        .iter()
        .find(|s| s["sessionId"] == id.as_str())
        .unwrap_or_else(|| panic!("{id} not listed: {listed:#?}"));
    assert_eq!(entry["title"], "remember the number seven");
    assert_eq!(entry["cwd"], home.ws().display().to_string());
    assert!(second["loaded"]["modes"].is_object(), "{second}");

    // The replay came before the load's answer, then the new prompt streamed.
    let ups = updates(&second);
    let user = ups
        .iter()
        .position(|u| {
            u["sessionUpdate"] == "user_message_chunk"
                && u["content"]["text"] == "remember the number seven"
        })
        .expect("the replayed user message");
    let replayed = ups
        .iter()
        .position(|u| {
            u["sessionUpdate"] == "agent_message_chunk"
                && u["content"]["text"]
                    .as_str()
                    .is_some_and(|t| t.contains("Noted: the number is seven."))
        })
        .expect("the replayed reply");
    assert!(user < replayed);
    assert!(reply_text(&second).ends_with("It was seven."));
    assert_eq!(second["results"][0]["stop_reason"], "end_turn");

    // The same run and session went on: the model saw the first exchange.
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    let history = reqs[1]["messages"].to_string();
    assert!(history.contains("remember the number seven"), "{history}");
    assert!(history.contains("Noted: the number is seven."), "{history}");
    let manifest = home.manifest(&id);
    assert_eq!(
        manifest["steps"].as_array().unwrap().len(),
        1,
        "{manifest:#}"
    );
}

/// A five-section handoff document, as a model writes it.
const DOC: &str = "## Doing\nCounting sheep.\n\n## Decided\n- Count in sevens.\n\n## Dead ends\n- Counting goats.\n\n## Next\nCount the rest.\n\n## Scene\n- sheep.txt\n";

#[test]
fn a_load_replays_every_generation_with_the_handoff_between_them() {
    let (_rt, server, home) = set_up();
    script_crossing(&server, DOC);
    server.push(a::text("Generation two counting on.", u(5_000)));
    let args = handoff_flags("0");
    let first = drive(
        &home,
        &server,
        json!({"prompts": [{"text": "count the sheep"}]}),
        &args,
    );
    assert_eq!(first["results"][0]["stop_reason"], "end_turn", "{first}");
    let id = first["session_id"].as_str().unwrap().to_string();
    assert_eq!(home.manifest(&id)["steps"][0]["generations"], 2);

    server.push(a::text("Still counting.", u(6_000)));
    let second = drive(
        &home,
        &server,
        json!({"load": id, "prompts": [{"text": "how far?"}]}),
        &args,
    );
    assert_eq!(second["results"][0]["stop_reason"], "end_turn", "{second}");
    let ups = updates(&second);
    let at = |what: &str, pick: &dyn Fn(&serde_json::Value) -> bool| {
        ups.iter()
            .position(|u| pick(u))
            .unwrap_or_else(|| panic!("no {what} in {ups:#?}"))
    };
    // Generation one: the user's message, its tool call with its result.
    let typed = at("the first message", &|u| {
        u["sessionUpdate"] == "user_message_chunk" && u["content"]["text"] == "count the sheep"
    });
    let call = at("generation one's tool call", &|u| {
        u["sessionUpdate"] == "tool_call" && u["toolCallId"] == "t1"
    });
    assert_eq!(ups[call]["kind"], "read");
    assert_eq!(ups[call]["title"], "list_dir: .");
    let result = at("its result", &|u| {
        u["sessionUpdate"] == "tool_call_update" && u["toolCallId"] == "t1"
    });
    assert_eq!(ups[result]["status"], "completed");
    // The handoff between them, with its document and file.
    let handoff = at("the handoff", &|u| {
        u["sessionUpdate"] == "tool_call" && u["toolCallId"] == "handoff-g2"
    });
    assert_eq!(ups[handoff]["title"], "Handoff → generation 2");
    assert_eq!(ups[handoff]["status"], "completed");
    let doc = ups[handoff]["content"][0]["content"]["text"]
        .as_str()
        .unwrap();
    assert!(doc.contains("Counting sheep."), "{doc}");
    let path = ups[handoff]["locations"][0]["path"].as_str().unwrap();
    assert!(path.contains("/.flower/notes/handoff-"), "{path}");
    // Generation two: its reply (its briefing is not shown as the user's).
    let reply = at("generation two's reply", &|u| {
        u["sessionUpdate"] == "agent_message_chunk"
            && u["content"]["text"]
                .as_str()
                .is_some_and(|t| t.contains("Generation two counting on."))
    });
    assert!(typed < call && call < result && result < handoff && handoff < reply);
    let users = ups
        .iter()
        .filter(|u| u["sessionUpdate"] == "user_message_chunk")
        .count();
    assert_eq!(users, 1, "only what the user typed: {ups:#?}");
    // Each message once: the engine's own replay of the latest generation is not repeated.
    let told = ups
        .iter()
        .filter(|u| {
            u["content"]["text"]
                .as_str()
                .is_some_and(|t| t.contains("Generation two counting on."))
        })
        .count();
    assert_eq!(told, 1);
    assert!(reply_text(&second).ends_with("Still counting."));
}
