//! A prompt streams, an edit arrives with its diff after a permission request (read from and
//! written through the editor's buffers), a cancel ends the turn as Esc does, and a second prompt
//! while a turn runs is refused. An image in a prompt reaches the model as an image block.

use serde_json::json;

use super::{drive, entries, reply_text, set_up, u, updates};
use crate::support::check::each_str;
use crate::support::fake::{Reply, anthropic as a};
use crate::support::harness::text_prefix;

#[test]
fn a_prompt_streams_its_reply_and_the_context_fill() {
    let (_rt, server, home) = set_up();
    server.push(a::text("Hello from the fake model, in pieces.", u(1_000)));
    let report = drive(
        &home,
        &server,
        json!({"mode": "accept-edits", "prompts": [{"text": "say hello"}]}),
        &["--window", "200000"],
    );
    let init = &report["init"];
    assert_eq!(init["protocolVersion"], 1, "{init}");
    let caps = &init["agentCapabilities"];
    assert_eq!(caps["loadSession"], true);
    assert_eq!(caps["promptCapabilities"]["image"], true);
    assert_eq!(caps["promptCapabilities"]["embeddedContext"], true);
    assert_eq!(caps["mcpCapabilities"]["http"], true);
    assert!(caps["sessionCapabilities"]["list"].is_object(), "{caps}");
    assert_eq!(init["agentInfo"]["name"], "flower-tui");

    let modes = &report["new"]["modes"];
    assert_eq!(modes["currentModeId"], "normal", "{modes}");
    assert_eq!(modes["availableModes"].as_array().unwrap().len(), 3);
    let result = &report["results"][0];
    assert_eq!(result["stop_reason"], "end_turn", "{report}");
    // A figure for the README (never asserted): the editor's prompt to its first chunk.
    eprintln!(
        "acp: prompt → first chunk {:.1} ms, whole turn {:.1} ms",
        result["first_chunk_ms"].as_f64().unwrap_or(f64::NAN),
        result["total_ms"].as_f64().unwrap_or(f64::NAN)
    );
    assert_eq!(reply_text(&report), "Hello from the fake model, in pieces.");

    let ups = updates(&report);
    assert!(
        ups.iter()
            .any(|u| u["sessionUpdate"] == "current_mode_update"
                && u["currentModeId"] == "accept-edits"),
        "{ups:#?}"
    );
    let usage = ups
        .iter()
        .rfind(|u| u["sessionUpdate"] == "usage_update")
        .expect("a usage update");
    assert_eq!(usage["used"], 1_010);
    assert_eq!(usage["size"], 200_000);
    assert_eq!(usage["_meta"]["flower"]["handoffAt"], 150_000);
    assert!(
        ups.iter()
            .any(|u| u["sessionUpdate"] == "available_commands_update"
                && u["availableCommands"][0]["name"] == "handoff"),
        "{ups:#?}"
    );
    // The editor's session is the run: its ledger is under the session id.
    let id = report["session_id"].as_str().unwrap();
    let manifest = home.manifest(id);
    assert_eq!(manifest["steps"][0]["generations"], 1, "{manifest:#}");
    assert_eq!(report["exit_code"], 0);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    assert!(reqs[0]["messages"].to_string().contains("say hello"));
}

#[test]
fn an_edit_asks_first_reads_the_unsaved_buffer_and_writes_through_the_editor() {
    let (_rt, server, home) = set_up();
    let file = home.ws().join("notes.txt");
    std::fs::write(&file, "one\ntwo on disk\nthree\n").unwrap();
    // The edit matches only the editor's unsaved buffer, not the disk.
    server.push(a::tool_use(
        "e1",
        "edit_file",
        r#"{"path": "notes.txt", "old_string": "two unsaved", "new_string": "TWO"}"#,
        u(1_000),
    ));
    server.push(a::text("Edited notes.txt.", u(1_200)));
    let report = drive(
        &home,
        &server,
        json!({
            "fs": true,
            "buffers": {file.display().to_string(): "one\ntwo unsaved\nthree\n"},
            "prompts": [{"text": "fix the second line"}],
        }),
        &[],
    );
    assert_eq!(report["results"][0]["stop_reason"], "end_turn", "{report}");
    let asked = entries(&report, "permission");
    assert_eq!(asked.len(), 1, "{asked:#?}");
    let call = &asked[0]["tool_call"];
    assert_eq!(call["toolCallId"], "e1");
    assert_eq!(call["kind"], "edit");
    assert_eq!(call["content"][0]["type"], "diff", "{call}");
    let options = each_str(&asked[0]["options"], "kind");
    assert_eq!(options, ["allow_once", "allow_always", "reject_once"]);

    let ups = updates(&report);
    let started = ups
        .iter()
        .position(|u| u["sessionUpdate"] == "tool_call" && u["toolCallId"] == "e1")
        .expect("the tool call");
    assert_eq!(
        ups[started]["locations"][0]["path"],
        file.display().to_string()
    );
    let done = ups
        .iter()
        .rfind(|u| u["sessionUpdate"] == "tool_call_update" && u["toolCallId"] == "e1")
        .unwrap();
    assert_eq!(done["status"], "completed", "{done}");
    let diff = &done["content"][0];
    assert_eq!(diff["type"], "diff");
    assert_eq!(diff["path"], file.display().to_string());
    assert!(
        diff["oldText"].as_str().unwrap().contains("two unsaved"),
        "{diff}"
    );
    assert!(diff["newText"].as_str().unwrap().contains("TWO"), "{diff}");

    // Read from the buffer, written through the editor (which saved it).
    let reads = entries(&report, "read");
    assert!(
        reads
            .iter()
            .any(|r| r["path"] == file.display().to_string())
    );
    let writes = entries(&report, "write");
    assert_eq!(writes.len(), 1, "{writes:#?}");
    assert_eq!(writes[0]["content"], "one\nTWO\nthree\n");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "one\nTWO\nthree\n");
}

#[test]
fn a_denied_write_does_not_happen_and_the_model_hears_why() {
    let (_rt, server, home) = set_up();
    server.push(a::tool_use(
        "w1",
        "write_file",
        r#"{"path": "made.txt", "content": "x"}"#,
        u(1_000),
    ));
    server.push(a::text("Understood, I will not write it.", u(1_100)));
    let report = drive(
        &home,
        &server,
        json!({"permissions": ["deny"], "prompts": [{"text": "make a file"}]}),
        &[],
    );
    assert_eq!(report["results"][0]["stop_reason"], "end_turn", "{report}");
    let asked = entries(&report, "permission");
    assert_eq!(asked.len(), 1, "{report}");
    assert_eq!(asked[0]["tool_call"]["kind"], "edit");
    assert!(!home.ws().join("made.txt").exists());
    let failed = updates(&report)
        .into_iter()
        .rfind(|u| u["sessionUpdate"] == "tool_call_update" && u["toolCallId"] == "w1")
        .unwrap()
        .clone();
    assert_eq!(failed["status"], "failed", "{failed}");
    let reqs = server.requests();
    assert!(
        reqs[1]["messages"].to_string().contains("denied"),
        "{:#}",
        reqs[1]
    );
}

#[test]
fn cancel_ends_the_turn_as_esc_does_and_a_second_prompt_meanwhile_is_refused() {
    let (_rt, server, home) = set_up();
    server.push(Reply::Stall {
        prefix: text_prefix("Thinking about it"),
    });
    server.push(a::text("After the cancel, a fresh answer.", u(1_500)));
    let report = drive(
        &home,
        &server,
        json!({"prompts": [
            {"text": "a long task", "cancel_on": "chunk", "concurrent": "another one"},
            {"text": "something else"},
        ]}),
        &[],
    );
    let first = &report["results"][0];
    assert_eq!(first["stop_reason"], "cancelled", "{report}");
    let refused = first["concurrent"]["error"].as_str().unwrap_or_default();
    assert!(refused.contains("already running"), "{first}");
    assert_eq!(report["results"][1]["stop_reason"], "end_turn");
    assert!(reply_text(&report).ends_with("After the cancel, a fresh answer."));
    // The partial reply was kept, marked interrupted, and the session went on.
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    let history = reqs[1]["messages"].to_string();
    assert!(
        history.contains("a long task") && history.contains("Thinking about it"),
        "{history}"
    );
    assert!(!history.contains("another one"), "{history}");
}

#[test]
fn an_image_in_a_prompt_reaches_the_model_as_an_image() {
    use base64::Engine as _;
    let (_rt, server, home) = set_up();
    server.push(a::text("A striped picture.", u(1_000)));
    let picture = image::RgbImage::from_fn(64, 48, |x, _| image::Rgb([(x * 4) as u8, 80, 160]));
    let mut png = std::io::Cursor::new(Vec::new());
    picture.write_to(&mut png, image::ImageFormat::Png).unwrap();
    let data = base64::engine::general_purpose::STANDARD.encode(png.get_ref());
    let report = drive(
        &home,
        &server,
        json!({"prompts": [{"text": "what is in this picture?",
                            "image": {"data": data, "mime": "image/png"}}]}),
        &[],
    );
    assert_eq!(report["results"][0]["stop_reason"], "end_turn", "{report}");
    assert_eq!(reply_text(&report), "A striped picture.");
    let reqs = server.requests();
    let content = reqs[0]["messages"]
        .as_array()
        .and_then(|m| m.last())
        .map(|m| m["content"].clone())
        .unwrap();
    let image = content
        .as_array()
        .and_then(|blocks| blocks.iter().find(|b| b["type"] == "image"))
        .unwrap_or_else(|| panic!("no image block: {content:#}"));
    assert_eq!(image["source"]["media_type"], "image/png", "{image}");
    let sent = base64::engine::general_purpose::STANDARD
        .decode(image["source"]["data"].as_str().unwrap())
        .unwrap();
    let seen = image::load_from_memory(&sent).unwrap();
    assert_eq!((seen.width(), seen.height()), (64, 48));
    assert!(
        content.to_string().contains("what is in this picture?"),
        "{content:#}"
    );
}
