//! A run goes on in a second process: `session/list` names it, `session/load` replays its
//! conversation and continues it from the ledger, as `--resume RUN_ID` does in the terminal.

use serde_json::json;

use super::{Home, drive, reply_text, u, updates};
use crate::support::fake::{FakeServer, anthropic as a};
use crate::support::pty::runtime;

#[test]
fn a_second_process_lists_loads_and_continues_the_run() {
    let rt = runtime();
    let server = rt.block_on(FakeServer::start());
    let home = Home::new();
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
