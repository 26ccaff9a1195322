//! The engine end to end against the fake provider: turns, tools, retries, errors, budget, spill.

use flower_tui::engine::policy::{ApprovalPolicy, FrontEnd};
use flower_tui::engine::protocol::{ErrorKind, Event, ExitReason, Op, Origin};
use flower_tui::engine::provider::ErrorKind as P;

use crate::support::check::{assert_contains, assert_event, assert_file};
use crate::support::fake::{Reply, U, anthropic as a, openai as o};
use crate::support::harness::{Harness, KEY, all_files, exit_reason, start, text_of, turn_end};

#[tokio::test]
async fn plain_reply_streams_and_records_usage() {
    let h = Harness::new().await;
    h.script()
        .usage(U::new(1200, 20))
        .text("Hello there, human.");
    let mut r = start(h.params(200_000, 50_000));
    let ev = r.turn("say hello").await;
    assert_eq!(text_of(&ev), "Hello there, human.");
    assert_eq!(turn_end(&ev), "completed");
    assert_event!(
        ev,
        Event::Usage {
            context: 1220,
            estimated: false,
            ..
        }
    );
    let m = r.manifest();
    assert_eq!(m.steps[0].figures.context, 1220);
    assert_eq!(m.steps[0].figures.num_turns, 1);
    let body = &h.server.requests()[0];
    assert_eq!(body["stream"], true);
    assert_eq!(body["messages"][0]["content"][0]["text"], "say hello");
    r.shutdown().await;
}

#[tokio::test]
async fn write_then_edit_then_reply() {
    let h = Harness::new().await;
    h.script()
        .usage(U::new(1000, 20))
        .tool(
            "write_file",
            r#"{"path":"notes.txt","content":"alpha\nbeta\n"}"#,
        )
        .at(1500)
        .tool(
            "edit_file",
            r#"{"path":"notes.txt","old_string":"beta","new_string":"gamma"}"#,
        )
        .at(2000)
        .text("Done: notes.txt now says alpha and gamma.");
    let mut r = start(h.params(200_000, 50_000));
    r.completed_turn("make notes").await;
    assert_file(h.workspace.join("notes.txt"), "alpha\ngamma\n");
    let reqs = h.server.requests();
    assert_eq!(reqs.len(), 3);
    let r2 = a::tool_results(&reqs[1]);
    assert_eq!(r2[0]["tool_use_id"], "t1");
    let r3 = a::tool_results(&reqs[2]);
    assert_eq!(r3[0]["tool_use_id"], "t2");
    assert_ne!(r3[0]["is_error"], true, "{r3:?}");
    // The transcript holds the tool results.
    let sid = r.manifest().steps[0].session_id.clone();
    let transcript =
        std::fs::read_to_string(r.run_root.join(format!("sessions/{sid}.jsonl"))).unwrap();
    assert!(
        transcript
            .lines()
            .next()
            .unwrap()
            .contains("\"type\":\"header\"")
    );
    assert!(transcript.contains("\"tool_use_id\":\"t2\""));
    assert_eq!(r.manifest().steps[0].touched, vec!["notes.txt".to_string()]);
    r.shutdown().await;
}

#[tokio::test]
async fn bash_timeout_is_reported_to_the_model() {
    let h = Harness::new().await;
    h.script()
        .usage(U::new(1000, 20))
        .tool("bash", r#"{"command":"echo start; sleep 20","timeout":1}"#)
        .at(1100)
        .text("It timed out.");
    let mut r = start(h.params(200_000, 50_000));
    let t0 = std::time::Instant::now();
    let ev = r.turn("run it").await;
    assert!(t0.elapsed().as_secs() < 10);
    assert_eq!(turn_end(&ev), "completed");
    let res = a::tool_results(&h.server.requests()[1]);
    let text = res[0]["content"].as_str().unwrap().to_lowercase();
    assert_contains(&text, "timed out");
    assert_contains(&text, "start");
    r.shutdown().await;
}

#[tokio::test]
async fn overloaded_twice_then_success_shows_retries() {
    let h = Harness::new().await;
    for _ in 0..2 {
        h.server.push(Reply::Status {
            status: 529,
            headers: vec![],
            body: r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
                .into(),
        });
    }
    h.script().usage(U::new(900, 20)).text("finally");
    let mut r = start(h.params(200_000, 50_000));
    let ev = r.turn("hi").await;
    let retries: Vec<_> = ev
        .iter()
        .filter(|e| matches!(e, Event::Retry { .. }))
        .collect();
    assert_eq!(retries.len(), 2, "{ev:#?}");
    assert!(matches!(
        retries[0],
        Event::Retry {
            attempt: 2,
            max: 5,
            ..
        }
    ));
    assert_eq!(turn_end(&ev), "completed");
    assert_eq!(text_of(&ev), "finally");
    r.shutdown().await;
}

#[tokio::test]
async fn mid_stream_error_event_ends_the_turn_with_its_kind() {
    let h = Harness::new().await;
    h.server.push(a::error_event(
        "invalid_request_error",
        "something is off with this request",
    ));
    let mut r = start(h.params(200_000, 50_000));
    let ev = r.turn("hi").await;
    assert!(
        matches!(
            exit_reason(&ev),
            Some(ExitReason::Error(ErrorKind::Provider(_)))
        ),
        "{ev:#?}"
    );
    assert_event!(ev, Event::Error { message, .. } if message.contains("something is off"));
    // The session is still usable.
    h.script().usage(U::new(900, 20)).text("ok now");
    r.completed_turn("again").await;
    r.shutdown().await;
}

#[tokio::test]
async fn malformed_and_truncated_streams_are_clear_errors() {
    let h = Harness::new().await;
    for _ in 0..5 {
        h.server.push(Reply::Sse {
            chunks: vec![b"event: message_start\ndata: {not json\n\n".to_vec()],
            delay: None,
        });
    }
    let mut r = start(h.params(200_000, 50_000));
    let ev = r.turn("hi").await;
    assert!(
        matches!(
            exit_reason(&ev),
            Some(ExitReason::Error(ErrorKind::Provider(_)))
        ),
        "{ev:#?}"
    );
    let full = a::text("this will be cut", U::new(900, 20));
    let Reply::Sse { chunks, .. } = full else {
        panic!()
    };
    let bytes: Vec<u8> = chunks.concat();
    h.server.push(Reply::Cut {
        bytes: bytes[..bytes.len() / 2].to_vec(),
    });
    // Every try is cut: it is replayed until the five tries are spent, then ends in a clear error.
    h.server.push(Reply::Cut {
        bytes: bytes[..bytes.len() / 2].to_vec(),
    });
    h.server.push(Reply::Cut {
        bytes: bytes[..bytes.len() / 2].to_vec(),
    });
    h.server.push(Reply::Cut {
        bytes: bytes[..bytes.len() / 2].to_vec(),
    });
    h.server.push(Reply::Cut {
        bytes: bytes[..bytes.len() / 2].to_vec(),
    });
    let ev = r.turn("again").await;
    assert!(
        matches!(
            exit_reason(&ev),
            Some(ExitReason::Error(ErrorKind::Provider(_)))
        ),
        "{ev:#?}"
    );
    assert_event!(ev, Event::Error { .. });
    r.shutdown().await;
}

#[tokio::test]
async fn bad_tool_json_goes_back_to_the_model_as_a_tool_error() {
    let h = Harness::new().await;
    h.script()
        .usage(U::new(1000, 20))
        .tool(
            "write_file",
            r#"{"path": "x.txt", "content": "unterminated"#,
        )
        .at(1100)
        .tool("no_such_tool", r#"{}"#)
        .at(1200)
        .text("I see.");
    let mut r = start(h.params(200_000, 50_000));
    r.completed_turn("go").await;
    let reqs = h.server.requests();
    let r1 = a::tool_results(&reqs[1]);
    assert_eq!(r1[0]["is_error"], true);
    assert!(
        r1[0]["content"]
            .as_str()
            .unwrap()
            .to_lowercase()
            .contains("json")
    );
    let r2 = a::tool_results(&reqs[2]);
    assert_eq!(r2[0]["is_error"], true);
    assert!(r2[0]["content"].as_str().unwrap().contains("no_such_tool"));
    assert!(!h.workspace.join("x.txt").exists());
    r.shutdown().await;
}

#[tokio::test]
async fn iteration_budget_ends_with_a_summary_request_without_tools() {
    let h = Harness::new().await;
    h.script()
        .usage(U::new(1000, 20))
        .listings(3, 1000, 1)
        .at(2000)
        .text("Summary: listed the directory three times.");
    let mut p = h.params(200_000, 50_000);
    p.tools.max_iterations = 3;
    let mut r = start(p);
    let ev = r.turn("loop").await;
    assert_eq!(turn_end(&ev), "max_iterations_reached(3/3)");
    let reqs = h.server.requests();
    assert_eq!(reqs.len(), 4);
    assert_eq!(reqs[3]["tool_choice"]["type"], "none");
    assert!(
        !reqs[3]["tools"].as_array().unwrap().is_empty(),
        "same tool list"
    );
    r.shutdown().await;
}

#[tokio::test]
async fn big_tool_output_is_spilled_with_a_preview() {
    let h = Harness::new().await;
    h.script()
        .usage(U::new(1000, 20))
        .tool(
            "bash",
            r#"{"command":"head -c 300000 /dev/zero | tr '\\0' a"}"#,
        )
        .at(1100)
        .text("Big.");
    let mut r = start(h.params(200_000, 50_000));
    let ev = r.completed_turn("big").await;
    let res = a::tool_results(&h.server.requests()[1]);
    let content = res[0]["content"].as_str().unwrap();
    assert!(content.len() < 5_000, "preview only, got {}", content.len());
    let spill_dir = h.workbench().join("spill");
    let files: Vec<_> = std::fs::read_dir(&spill_dir).unwrap().flatten().collect();
    assert_eq!(files.len(), 1);
    let spilled = std::fs::read_to_string(files[0].path()).unwrap();
    assert!(spilled.matches('a').count() >= 300_000);
    assert!(content.contains(&files[0].file_name().to_string_lossy().to_string()));
    assert_event!(
        ev,
        Event::ToolResult {
            spilled: Some(_),
            ..
        }
    );
    r.shutdown().await;
}

#[tokio::test]
async fn abort_while_streaming_keeps_partial_text_and_session_usable() {
    let h = Harness::new().await;
    h.server.push(Reply::Stall {
        prefix: crate::support::harness::text_prefix("partial answer"),
    });
    let mut r = start(h.params(200_000, 50_000));
    let turn = r.send_turn("go").await;
    r.until(|e| matches!(e, Event::TextDelta { .. })).await;
    r.send(Op::Abort { turn }).await;
    let ev = r.until(|e| matches!(e, Event::TurnEnd { .. })).await;
    assert_eq!(turn_end(&ev), "interrupted");
    assert_event!(
        ev,
        Event::AssistantDone {
            interrupted: true,
            ..
        }
    );
    h.script().usage(U::new(900, 20)).text("fine");
    r.completed_turn("continue").await;
    let last = h.server.requests().last().unwrap().clone();
    let msgs = last["messages"].as_array().unwrap();
    assert!(
        msgs[1]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("[interrupted")
    );
    r.shutdown().await;
}

#[tokio::test]
async fn openai_protocol_core_flow() {
    let h = Harness::new().await;
    h.server.push(o::tool_calls(
        &[("call_1", "write_file", r#"{"path":"o.txt","content":"hi"}"#)],
        U::new(800, 20),
    ));
    h.script()
        .openai()
        .usage(U::new(900, 20))
        .text("Wrote o.txt.");
    let mut p = h.params(128_000, 50_000);
    p.provider.client = h.openai();
    let mut r = start(p);
    let ev = r.completed_turn("write").await;
    assert_file(h.workspace.join("o.txt"), "hi");
    let reqs = h.server.requests();
    let msgs = reqs[1]["messages"].as_array().unwrap();
    assert!(
        msgs.iter()
            .any(|m| m["role"] == "tool" && m["tool_call_id"] == "call_1")
    );
    assert_eq!(text_of(&ev), "Wrote o.txt.");
    r.shutdown().await;
}

#[tokio::test]
async fn headless_denies_unapproved_tools() {
    let h = Harness::new().await;
    h.script()
        .usage(U::new(1000, 20))
        .tool("bash", r#"{"command":"touch pwned"}"#)
        .at(1100)
        .text("ok");
    let mut p = h.params(200_000, 50_000);
    p.tools.approvals = ApprovalPolicy::Ask;
    let mut r = start(p);
    r.turn("go").await;
    assert!(!h.workspace.join("pwned").exists());
    let res = a::tool_results(&h.server.requests()[1]);
    assert!(res[0]["content"].as_str().unwrap().contains("--yes"));
    r.shutdown().await;
}

#[tokio::test]
async fn api_key_never_reaches_disk() {
    let h = Harness::new().await;
    h.script()
        .usage(U::new(1000, 20))
        .tool("bash", "{\"command\":\"echo hi\"}");
    h.server.push(Reply::Status {
        status: 401,
        headers: vec![],
        body: format!(r#"{{"type":"error","error":{{"type":"authentication_error","message":"invalid x-api-key {KEY}"}}}}"#),
    });
    let mut r = start(h.params(200_000, 50_000));
    let ev = r.turn("go").await;
    assert_eq!(
        exit_reason(&ev),
        Some(ExitReason::Error(ErrorKind::Provider(P::Auth))),
        "{ev:#?}"
    );
    for e in &ev {
        assert!(!format!("{e:?}").contains(KEY));
    }
    r.shutdown().await;
    for f in all_files(h.dir.path()) {
        let bytes = std::fs::read(&f).unwrap();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(KEY),
            "key in {}",
            f.display()
        );
    }
}

#[tokio::test]
async fn paths_outside_the_workspace_need_a_call_by_call_approval() {
    let h = Harness::new().await;
    let outside = h.dir.path().join("outside.txt");
    let input =
        serde_json::json!({"path": outside.display().to_string(), "content": "x"}).to_string();
    h.script()
        .usage(U::new(1000, 20))
        .tool("write_file", input)
        .at(1100)
        .text("ok");
    // --yes approves tool calls, not leaving the workspace.
    let mut r = start(h.params(200_000, 50_000));
    r.turn("write outside").await;
    assert!(!outside.exists());
    let res = a::tool_results(&h.server.requests()[1]);
    assert_eq!(res[0]["is_error"], true);
    assert!(
        res[0]["content"]
            .as_str()
            .unwrap()
            .contains("leave the workspace")
    );
    r.shutdown().await;
}

#[tokio::test]
async fn interactive_always_does_not_cover_an_outside_path() {
    use flower_tui::engine::protocol::Approval;
    let h = Harness::new().await;
    let outside = h.dir.path().join("outside.txt");
    let inside = serde_json::json!({"path": "in.txt", "content": "x"}).to_string();
    let out_input =
        serde_json::json!({"path": outside.display().to_string(), "content": "x"}).to_string();
    h.script()
        .usage(U::new(1000, 20))
        .tool("write_file", inside)
        .at(1100)
        .tool("write_file", out_input)
        .at(1200)
        .text("ok");
    let mut p = h.params(200_000, 50_000);
    p.tools.approvals = ApprovalPolicy::Ask;
    p.front_end = FrontEnd::Interactive { review: false };
    let mut r = start(p);
    r.send_turn("go").await;
    r.until(|e| matches!(e, Event::ApprovalRequest { .. }))
        .await;
    r.answer("t1", Approval::Always).await;
    // Still asked for the outside path, despite "always".
    let ev = r
        .until(|e| matches!(e, Event::ApprovalRequest { .. }))
        .await;
    assert!(matches!(ev.last(), Some(Event::ApprovalRequest { id, .. }) if id == "t2"));
    r.answer("t2", Approval::Once).await;
    let ev = r.until(|e| matches!(e, Event::TurnEnd { .. })).await;
    assert_eq!(turn_end(&ev), "completed");
    assert!(h.workspace.join("in.txt").exists());
    assert!(outside.exists(), "approved once, written");
    r.shutdown().await;
}

#[tokio::test]
async fn continuing_in_the_tui_replays_the_conversation() {
    let h = Harness::new().await;
    h.script()
        .usage(U::new(1000, 20))
        .tool("list_dir", "{}")
        .at(1100)
        .text("Listed it.");
    let mut r = start(h.params(200_000, 50_000));
    r.turn("list the files").await;
    let root = r.run_root.clone();
    r.shutdown().await;

    let mut r = start(h.reopened(&root));
    let ev = r
        .until(
            |e| matches!(e, Event::Notice { message } if message.starts_with("continuing session")),
        )
        .await;
    assert_event!(
        ev,
        Event::UserMessage { turn: None, origin: Origin::User, text }
            if text == "list the files"
    );
    assert_event!(ev, Event::AssistantDone { text, .. } if text == "Listed it.");
    assert_event!(ev, Event::Notice { message } if message.contains("list_dir"));
    h.script().usage(U::new(1300, 20)).text("still here");
    r.completed_turn("and now?").await;
    let body = h.server.requests().last().unwrap().clone();
    assert_eq!(
        body["messages"].as_array().unwrap().len(),
        5,
        "the old history plus the new message"
    );
    r.shutdown().await;
}

#[tokio::test]
async fn the_budget_summary_survives_an_overflow() {
    let h = Harness::new().await;
    h.script()
        .usage(U::new(20_000, 20))
        .tool("list_dir", "{}")
        .reply(a::too_long(250_000, 200_000))
        .at(3_000)
        .text("Summary: listed once; nothing else done.");
    let mut p = h.params(1_000_000, 50_000);
    p.tools.max_iterations = 1;
    let mut r = start(p);
    let ev = r.turn("loop").await;
    assert_eq!(turn_end(&ev), "max_iterations_reached(1/1)", "{ev:#?}");
    let reqs = h.server.requests();
    assert_eq!(reqs.len(), 3);
    let last = &reqs[2];
    assert_eq!(last["tool_choice"]["type"], "none");
    let text = serde_json::to_string(&last["messages"]).unwrap();
    assert!(
        text.contains("[DEGRADED") && text.contains("iteration budget"),
        "{text}"
    );
    r.shutdown().await;
}

#[tokio::test]
async fn a_failed_budget_summary_reports_the_error_and_still_ends_on_the_budget() {
    let h = Harness::new().await;
    h.script().usage(U::new(1_000, 20)).tool("list_dir", "{}");
    h.server.push(Reply::Status {
        status: 400,
        headers: vec![],
        body: r#"{"type":"error","error":{"type":"invalid_request_error","message":"tool_choice none is not allowed here"}}"#.into(),
    });
    let mut p = h.params(200_000, 50_000);
    p.tools.max_iterations = 1;
    let mut r = start(p);
    let ev = r.turn("loop").await;
    assert_eq!(turn_end(&ev), "max_iterations_reached(1/1)", "{ev:#?}");
    assert!(
        ev.iter().any(
            |e| matches!(e, Event::Error { message, .. } if message.contains("tool_choice none"))
        ),
        "{ev:#?}"
    );
    assert_eq!(h.server.requests().len(), 2);
    r.shutdown().await;
}
