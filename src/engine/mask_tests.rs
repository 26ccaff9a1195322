//! Tests of observation masking: when a step is taken, what a stub says, and (proptest) that
//! between two steps every request extends the previous one.

use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;
use crate::engine::types::{Block, Message, Role};

/// Tokens as the engine estimates them: four characters a token.
fn tokens(m: &Message) -> u64 {
    (m.char_len() as u64).div_ceil(4)
}

fn call(id: &str, name: &str, input: Value) -> Message {
    Message {
        role: Role::Assistant,
        content: vec![Block::ToolUse {
            id: id.into(),
            name: name.into(),
            input,
            from_text: false,
        }],
    }
}

fn result(id: &str, content: String) -> Message {
    Message {
        role: Role::User,
        content: vec![Block::ToolResult {
            tool_use_id: id.into(),
            content,
            is_error: false,
        }],
    }
}

/// A task, then `n` reads of `chars` characters each.
fn reads(n: usize, chars: usize) -> Vec<Message> {
    let mut out = vec![Message::user("read the files")];
    for i in 0..n {
        let id = format!("t{i}");
        out.push(call(&id, "read_file", json!({"path": format!("f{i}.rs")})));
        out.push(result(&id, format!("{:>6}\t{}\n", 1, "x".repeat(chars))));
    }
    out
}

const SETTINGS: MaskSettings = MaskSettings {
    mode: MaskMode::On,
    recent_tokens: 3_000,
    step_percent: 10,
};

#[test]
fn nothing_is_masked_before_a_step_is_worth_it() {
    // 4 reads of 1,000 tokens: the span older than the window would free ~1,000 tokens, less
    // than 10% of a 20,000-token window.
    let m = reads(4, 4_000);
    let out = mask(&m, &SETTINGS, 20_000, 0, tokens);
    assert_eq!(out.messages, m);
    assert_eq!((out.boundary, out.stepped, out.stubbed), (0, false, 0));
}

#[test]
fn a_step_masks_everything_older_than_the_recent_window() {
    let m = reads(8, 4_000);
    let out = mask(&m, &SETTINGS, 20_000, 0, tokens);
    assert!(out.stepped);
    // The newest two reads (2 × ~1,000 tokens + calls) stay; every older result is a stub.
    assert_eq!(out.boundary, 13);
    assert_eq!(out.stubbed, 6);
    assert_eq!(out.messages.get(13..), m.get(13..));
    let Some(Block::ToolResult {
        content,
        tool_use_id,
        ..
    }) = out.messages.get(2).and_then(|m| m.content.first())
    else {
        panic!("a result");
    };
    assert_eq!(tool_use_id, "t0");
    assert_eq!(
        content,
        "[output masked to save context: read_file {\"path\":\"f0.rs\"} returned 4008 \
         characters (1 lines). Get it back with recall {\"call\": \"t0\"}, or read_file again \
         (the file may have changed since)]"
    );
    assert!(out.saved_tokens > 5_500, "{}", out.saved_tokens);
    // The same history and boundary again: the same request, no step.
    let again = mask(&m, &SETTINGS, 20_000, out.boundary, tokens);
    assert_eq!(again.messages, out.messages);
    assert!(!again.stepped);
}

#[test]
fn the_newest_message_is_never_masked() {
    // One huge result, larger than the whole recent window.
    let mut m = reads(1, 200);
    m.push(call("big", "bash", json!({"command": "cat log"})));
    m.push(result("big", "y".repeat(100_000)));
    let out = mask(&m, &SETTINGS, 20_000, 0, tokens);
    assert_eq!(out.messages.last(), m.last());
}

#[test]
fn off_sends_the_history_as_it_is() {
    let m = reads(30, 4_000);
    let out = mask(&m, &MaskSettings::OFF, 20_000, 7, tokens);
    assert_eq!(out.messages, m);
    assert_eq!(out.boundary, 0);
}

#[test]
fn a_replaced_history_starts_again() {
    let m = reads(2, 100);
    let out = mask(&m, &SETTINGS, 20_000, 40, tokens);
    assert_eq!((out.boundary, out.messages), (0, m));
}

#[test]
fn stubs_say_how_a_command_ended_and_where_a_spilled_result_is() {
    let s = stub(
        "toolu_9",
        "bash",
        &json!({"command": "cargo test"}),
        &format!("{}\n\n[exit code 101]", "z".repeat(700)),
    );
    assert_eq!(
        s,
        "[output masked to save context: bash {\"command\":\"cargo test\"} returned 717 \
         characters (3 lines), ending [exit code 101]. Get it back with recall {\"call\": \
         \"toolu_9\"}]"
    );
    let spilled = "[This result is 200000 characters (10 lines), over the 100000-character \
                   limit for one result, so it was saved in full to .flower/spill/s-1.txt. Read \
                   it with read_file, e.g. …]\npreview";
    let s = stub("t", "grep", &json!({"pattern": "x"}), spilled);
    assert!(
        s.contains(
            "read_file {\"path\": \".flower/spill/s-1.txt\"} (saved in full there), or recall"
        ),
        "{s}"
    );
}

/// One step of a session: a read of `chars` characters, or a user message that joins the last
/// user message (a queued message arriving after tool results).
#[derive(Debug, Clone)]
enum Append {
    Read(usize),
    Command(usize),
    Say(usize),
}

fn append() -> impl Strategy<Value = Append> {
    prop_oneof![
        4 => (10usize..6_000).prop_map(Append::Read),
        2 => (10usize..3_000).prop_map(Append::Command),
        1 => (1usize..200).prop_map(Append::Say),
    ]
}

/// `a` is a prefix of `b` as a request: every message equal, except that the last one of `a`
/// may have grown by blocks in `b`.
fn is_prefix(a: &[Message], b: &[Message]) -> bool {
    let Some((last, head)) = a.split_last() else {
        return true;
    };
    b.len() >= a.len()
        && b.get(..head.len()) == Some(head)
        && b.get(head.len()).is_some_and(|m| {
            m.role == last.role && m.content.get(..last.content.len()) == Some(&last.content[..])
        })
}

proptest! {
    /// Over any session, masking moves in steps only: between two steps every request's
    /// messages start with the previous request's; the boundary never moves back; a step frees
    /// at least its share of the window; the newest message and every call's pairing stay.
    #[test]
    fn between_steps_every_request_extends_the_previous_one(
        steps in proptest::collection::vec(append(), 1..80),
        recent in 500u64..6_000,
        percent in 1u8..30,
    ) {
        let settings = MaskSettings { mode: MaskMode::On, recent_tokens: recent, step_percent: percent };
        let window = 40_000;
        let mut history = vec![Message::user("task")];
        let mut boundary = 0;
        let mut last: Option<Vec<Message>> = None;
        let mut steps_taken = 0;
        for (i, a) in steps.iter().enumerate() {
            let id = format!("c{i}");
            match a {
                Append::Read(n) => {
                    history.push(call(&id, "read_file", json!({"path": format!("{i}.rs")})));
                    history.push(result(&id, "r".repeat(*n)));
                }
                Append::Command(n) => {
                    history.push(call(&id, "bash", json!({"command": format!("make {i}")})));
                    history.push(result(&id, format!("{}\n\n[exit code 0]", "o".repeat(*n))));
                }
                Append::Say(n) => {
                    if let Some(m) = history.last_mut().filter(|m| m.role == Role::User) {
                        m.content.push(Block::text("s".repeat(*n)));
                    }
                }
            }
            let out = mask(&history, &settings, window, boundary, tokens);
            prop_assert!(out.boundary >= boundary, "the boundary moved back");
            prop_assert!(out.boundary < history.len().max(1));
            prop_assert_eq!(out.messages.last(), history.last());
            prop_assert_eq!(out.messages.len(), history.len());
            if out.stepped {
                steps_taken += 1;
                let before = mask(&history, &settings, window, boundary, tokens);
                prop_assert!(!before.stepped || before.boundary == out.boundary);
                prop_assert!(out.saved_tokens >= settings.step_tokens(window));
            } else {
                prop_assert_eq!(out.boundary, boundary);
                if let Some(prev) = &last {
                    prop_assert!(is_prefix(prev, &out.messages), "request {} is not an extension", i);
                }
            }
            // Every result keeps its call's id, unmasked ones their text.
            for (m, orig) in out.messages.iter().zip(&history) {
                for (b, o) in m.content.iter().zip(&orig.content) {
                    match (b, o) {
                        (Block::ToolResult { tool_use_id: a, content, .. },
                         Block::ToolResult { tool_use_id: c, content: full, .. }) => {
                            prop_assert_eq!(a, c);
                            prop_assert!(content == full || content.starts_with("[output masked"));
                        }
                        (b, o) => prop_assert_eq!(b, o),
                    }
                }
            }
            boundary = out.boundary;
            last = Some(out.messages);
        }
        // Steps are large: each frees at least `percent` of the window, so a session can
        // only take so many.
        let total: u64 = history.iter().map(tokens).sum();
        prop_assert!(steps_taken as u64 <= total / settings.step_tokens(window) + 1);
    }
}
