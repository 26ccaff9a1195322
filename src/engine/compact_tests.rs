//! Tests of the compaction planner, the summary message and its splicing.

use super::*;
use proptest::prelude::*;
use serde_json::json;

fn tokens(m: &Message) -> u64 {
    m.char_len() as u64
}

fn call(id: &str, text: &str) -> Message {
    Message {
        role: Role::Assistant,
        content: vec![
            Block::text(text),
            Block::ToolUse {
                id: id.into(),
                name: "read_file".into(),
                input: json!({ "path": format!("src/{id}.rs") }),
                from_text: false,
            },
        ],
    }
}

fn result(id: &str, content: &str) -> Message {
    Message {
        role: Role::User,
        content: vec![Block::ToolResult {
            tool_use_id: id.into(),
            content: content.into(),
            is_error: false,
        }],
    }
}

/// A valid alternation that the Anthropic API accepts: starts with a user message, roles alternate,
/// every tool_result answers a tool_use of the message right before it, and every tool_use (except
/// in a trailing assistant message) is answered in the message right after it.
fn assert_api_valid(messages: &[Message]) {
    assert_eq!(
        messages.first().map(|m| m.role),
        Some(Role::User),
        "starts with user"
    );
    for (i, pair) in messages.windows(2).enumerate() {
        assert_ne!(pair[0].role, pair[1].role, "roles alternate at {i}");
    }
    for (i, m) in messages.iter().enumerate() {
        for b in &m.content {
            if let Block::ToolResult { tool_use_id, .. } = b {
                let prev = i.checked_sub(1).map(|p| &messages[p]);
                assert!(
                    prev.is_some_and(|p| p.tool_uses().any(|(id, _, _)| id == tool_use_id)),
                    "tool_result {tool_use_id} at {i} without its tool_use right before"
                );
            }
        }
        if i + 1 < messages.len() {
            for (id, _, _) in m.tool_uses() {
                assert!(
                    messages[i + 1].content.iter().any(
                        |b| matches!(b, Block::ToolResult { tool_use_id, .. } if tool_use_id == id)
                    ),
                    "tool_use {id} at {i} not answered right after"
                );
            }
        }
    }
}

/// U0 A1 U2 A3 … of equal sizes, ending with a user message: `n` messages.
fn plain_chat(n: usize) -> Vec<Message> {
    (0..n)
        .map(|i| {
            let text = format!("{i:03}").repeat(30);
            if i % 2 == 0 {
                Message::user(text)
            } else {
                Message::assistant(text)
            }
        })
        .collect()
}

#[test]
fn plain_chat_keeps_head_and_newest_sixth() {
    let msgs = plain_chat(25); // 25 × 90 tokens; 16 % of 2,250 = 360 → the last 4 messages
    let p = plan(&msgs, tokens, KEEP_FRACTION, true).unwrap();
    // Head = U0; the tail must start with an assistant message because the head ends with a user.
    assert_eq!(p.keep_head, 1);
    assert_eq!(p.summarize, 1..21);
    assert_eq!(msgs[21].role, Role::Assistant);

    // A budget boundary on a user message moves back to the assistant before it.
    let five = 4.5 * 90.0 / 2_250.0;
    let p = plan(&msgs, tokens, five, true).unwrap();
    assert_eq!(p.summarize, 1..19);

    // After the first compaction nothing is protected at the start.
    let p = plan(&msgs, tokens, KEEP_FRACTION, false).unwrap();
    assert_eq!(p.keep_head, 0);
    assert_eq!(p.summarize, 0..21);
}

#[test]
fn keep_fraction_is_respected() {
    let msgs = plain_chat(101);
    let total: u64 = msgs.iter().map(tokens).sum();
    for fraction in [0.0, 0.05, KEEP_FRACTION, 0.5, 0.9] {
        if let Some(p) = plan(&msgs, tokens, fraction, false) {
            let kept: u64 = msgs[p.summarize.end..].iter().map(tokens).sum();
            assert!(
                kept as f64 >= fraction * total as f64,
                "fraction {fraction}"
            );
            // Minimal: dropping the first kept message would fall under the budget (no pairs here,
            // and no head, so nothing else grows the tail).
            let first = tokens(&msgs[p.summarize.end]);
            assert!(((kept - first) as f64) < fraction * total as f64 || kept == first);
        }
    }
    assert_eq!(plan(&msgs, tokens, 1.0, false), None, "keep everything");
}

#[test]
fn last_user_message_is_always_kept() {
    // One giant assistant message at the end would fill the budget alone, but the last user message
    // before it stays verbatim.
    let mut msgs = plain_chat(9);
    msgs.push(Message::assistant("x".repeat(100_000)));
    let p = plan(&msgs, tokens, KEEP_FRACTION, false).unwrap();
    assert!(p.summarize.end <= 8, "{p:?}");
    assert_eq!(msgs[8].role, Role::User);
}

#[test]
fn tool_pairs_stay_together() {
    // U0 A1(call a) U2(result a) A3(call b) U4(result b) A5 U6 — the budget boundary falls between
    // A3 and U4; the cut must move before A3.
    let msgs = vec![
        Message::user("task"),
        call("a", "reading a"),
        result("a", &"a".repeat(400)),
        call("b", "reading b"),
        result("b", &"b".repeat(400)),
        Message::assistant("done with both"),
        Message::user("thanks, now c"),
    ];
    let total: u64 = msgs.iter().map(tokens).sum();
    let tail_from_u4: u64 = msgs[4..].iter().map(tokens).sum();
    let fraction = (tail_from_u4 as f64 - 1.0) / total as f64;
    let p = plan(&msgs, tokens, fraction, false).unwrap();
    assert_eq!(p.summarize, 0..3, "A3/U4 stay together in the tail");
}

#[test]
fn nothing_worth_summarising() {
    assert_eq!(plan(&[], tokens, KEEP_FRACTION, true), None);
    assert_eq!(plan(&plain_chat(1), tokens, KEEP_FRACTION, true), None);
    // U0 A1 U2: with head protection only A1 is left, and the tail must start with an assistant.
    assert_eq!(plan(&plain_chat(3), tokens, KEEP_FRACTION, true), None);
    // Without it, U0 A1 go and U2 stays.
    assert_eq!(
        plan(&plain_chat(3), tokens, KEEP_FRACTION, false).map(|p| p.summarize),
        Some(0..2)
    );
    // No user message at all.
    assert_eq!(plan(&[Message::assistant("a")], tokens, 0.0, false), None);
}

#[test]
fn empty_summary_is_an_error() {
    assert_eq!(summary_message(""), Err(CompactError::EmptySummary));
    assert_eq!(summary_message(" \n\t"), Err(CompactError::EmptySummary));
    let m = summary_message("  ## Task\nfix it  ").unwrap();
    assert_eq!(m.role, Role::User);
    let text = m.text();
    assert!(text.starts_with(SUMMARY_PREFIX));
    assert!(text.contains("reference only"));
    assert!(text.contains("latest user message"));
    assert!(text.contains("tools remain fully available"));
    assert!(text.contains("\n\n## Task\nfix it\n\n"));
    assert!(text.ends_with(SUMMARY_END));
}

#[test]
fn apply_merges_into_the_next_user_message() {
    let mut msgs = plain_chat(7);
    let last = msgs[6].clone();
    let p = plan(&msgs, tokens, 0.01, false).unwrap();
    assert_eq!(p.summarize, 0..6);
    assert!(apply(&mut msgs, &p, summary_message("sum").unwrap()));
    assert_eq!(msgs.len(), 1);
    assert_eq!(
        msgs[0].content.len(),
        2,
        "summary first, then the user's own block"
    );
    assert!(msgs[0].text().starts_with(SUMMARY_PREFIX));
    assert_eq!(msgs[0].content[1], last.content[0]);
    assert_api_valid(&msgs);
}

#[test]
fn apply_after_a_head_joins_the_head() {
    let mut msgs = plain_chat(25);
    let task = msgs[0].content[0].clone();
    let p = plan(&msgs, tokens, KEEP_FRACTION, true).unwrap();
    assert!(apply(&mut msgs, &p, summary_message("sum").unwrap()));
    assert_eq!(msgs.len(), 1 + 4);
    assert_eq!(msgs[0].content[0], task, "the task stays first");
    assert!(msgs[0].text().contains(SUMMARY_PREFIX));
    assert_api_valid(&msgs);
}

#[test]
fn apply_joins_both_neighbours_and_keeps_tool_results_first() {
    // A hand-made plan that replaces one assistant message between two user messages: the summary
    // joins the next one (first), and that joins the previous one, after its tool result.
    let mut msgs = vec![
        Message::user("first"),
        call("z", "c"),
        result("z", "r"),
        Message::assistant("thinking aloud"),
        Message::user("go on"),
    ];
    let p = CompactionPlan {
        summarize: 3..4,
        keep_head: 3,
    };
    assert!(apply(&mut msgs, &p, summary_message("s").unwrap()));
    assert_eq!(msgs.len(), 3);
    let joined = &msgs[2].content;
    assert!(matches!(joined[0], Block::ToolResult { .. }));
    assert!(matches!(&joined[1], Block::Text { text } if text.starts_with(SUMMARY_PREFIX)));
    assert_eq!(joined[2], Block::text("go on"));
    assert_api_valid(&msgs);
}

#[test]
fn stale_plan_changes_nothing() {
    let mut msgs = plain_chat(5);
    let before = msgs.clone();
    for p in [
        CompactionPlan {
            summarize: 2..9,
            keep_head: 2,
        },
        CompactionPlan {
            summarize: 3..3,
            keep_head: 3,
        },
        CompactionPlan {
            summarize: 1..3,
            keep_head: 0,
        },
    ] {
        assert!(!apply(&mut msgs, &p, Message::user("s")));
        assert_eq!(msgs, before);
    }
}

#[test]
fn summary_request_renders_a_readable_transcript() {
    let msgs = vec![
        Message::user("please fix the build"),
        Message {
            role: Role::Assistant,
            content: vec![
                Block::Thinking {
                    thinking: "t".repeat(2_000),
                    signature: "sig".into(),
                },
                Block::ToolUse {
                    id: "1".into(),
                    name: "bash".into(),
                    input: json!({ "command": "make", "pad": "p".repeat(1_000) }),
                    from_text: false,
                },
            ],
        },
        Message {
            role: Role::User,
            content: vec![Block::ToolResult {
                tool_use_id: "1".into(),
                content: format!("{}END-OF-OUTPUT", "e".repeat(50_000)),
                is_error: true,
            }],
        },
    ];
    let req = summary_request(&msgs);
    assert!(req.contains("<transcript>\n[1] user:\nplease fix the build\n"));
    assert!(req.contains("[2] assistant:\n(thinking) "));
    assert!(req.contains("→ tool call bash {\"command\":\"make\""));
    assert!(req.contains("…\n"), "args abbreviated");
    assert!(req.contains("← bash result (error):\n"));
    assert!(req.contains("characters omitted"));
    assert!(
        req.contains("END-OF-OUTPUT"),
        "the tail of a result is kept"
    );
    assert!(req.len() < 10_000, "truncated: {} bytes", req.len());
    assert!(req.ends_with("</transcript>"));
    assert!(!req.contains("{transcript}"));
    // A transcript that itself contains the placeholder is not re-expanded.
    let odd = summary_request(&[Message::user("{transcript}")]);
    assert_eq!(odd.matches("{transcript}").count(), 1);
}

#[test]
fn abbreviate_is_char_safe() {
    let s = "ñ".repeat(100);
    let a = abbreviate(&s, 10);
    assert!(a.starts_with(&"ñ".repeat(6)));
    assert!(a.ends_with(&"ñ".repeat(4)));
    assert!(a.contains("[… 90 characters omitted …]"));
    assert_eq!(abbreviate("short", 10), "short");
}

/// One step of a generated history: a human message, rounds of tool calls, maybe a final answer.
#[derive(Debug, Clone)]
struct Turn {
    human: usize,
    rounds: Vec<Vec<usize>>,
    answer: Option<usize>,
    thinking: bool,
}

fn turn() -> impl Strategy<Value = Turn> {
    (
        1usize..400,
        proptest::collection::vec(proptest::collection::vec(1usize..2_000, 1..4), 0..4),
        proptest::option::of(1usize..400),
        any::<bool>(),
    )
        .prop_map(|(human, rounds, answer, thinking)| Turn {
            human,
            rounds,
            answer,
            thinking,
        })
}

/// A history as the session holds it just before a request: it ends with a user message (a human
/// message or tool results).
fn history(turns: &[Turn]) -> Vec<Message> {
    let mut msgs = Vec::new();
    let mut next_id = 0;
    for (t, turn) in turns.iter().enumerate() {
        let last_turn = t + 1 == turns.len();
        msgs.push(Message::user("h".repeat(turn.human)));
        if last_turn && turn.rounds.is_empty() {
            break;
        }
        for sizes in &turn.rounds {
            let mut call = Vec::new();
            if turn.thinking {
                call.push(Block::Thinking {
                    thinking: "think".into(),
                    signature: String::new(),
                });
            }
            let mut results = Vec::new();
            for &size in sizes {
                next_id += 1;
                let id = format!("t{next_id}");
                call.push(Block::ToolUse {
                    id: id.clone(),
                    name: "grep".into(),
                    input: json!({ "pattern": "x" }),
                    from_text: false,
                });
                results.push(Block::ToolResult {
                    tool_use_id: id,
                    content: "r".repeat(size),
                    is_error: false,
                });
            }
            msgs.push(Message {
                role: Role::Assistant,
                content: call,
            });
            msgs.push(Message {
                role: Role::User,
                content: results,
            });
        }
        if last_turn {
            break; // mid-turn: the history ends with tool results
        }
        msgs.push(Message::assistant("a".repeat(turn.answer.unwrap_or(5))));
    }
    msgs
}

fn check_plan(msgs: &[Message], p: &CompactionPlan, fraction: f64, first: bool) {
    let crossing = pair_crossings(msgs);
    assert_eq!(p.summarize.start, p.keep_head);
    assert!(p.summarize.len() >= 2);
    assert_eq!(crossing[p.summarize.start], 0, "head cut splits a pair");
    assert_eq!(crossing[p.summarize.end], 0, "tail cut splits a pair");
    let last_user = msgs.iter().rposition(|m| m.role == Role::User).unwrap();
    assert!(p.summarize.end <= last_user, "last user message summarised");
    let first_user = msgs.iter().position(|m| m.role == Role::User).unwrap();
    assert_eq!(p.keep_head, if first { first_user + 1 } else { 0 });
    let total: u64 = msgs.iter().map(tokens).sum();
    let kept: u64 = msgs[p.summarize.end..].iter().map(tokens).sum();
    assert!(kept as f64 >= fraction * total as f64);
    if p.keep_head > 0 && msgs[p.keep_head - 1].role == Role::User {
        // The summary joins the head, so the tail must open with the assistant.
        assert_eq!(msgs[p.summarize.end].role, Role::Assistant);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn random_tool_histories(
        turns in proptest::collection::vec(turn(), 1..8),
        fraction in prop_oneof![Just(KEEP_FRACTION), 0.0f64..0.6],
        first in any::<bool>(),
    ) {
        let mut msgs = history(&turns);
        assert_api_valid(&msgs);
        let last = msgs.last().cloned().unwrap();
        let Some(p) = plan(&msgs, tokens, fraction, first) else {
            return Ok(());
        };
        check_plan(&msgs, &p, fraction, first);
        let head: Vec<Message> = msgs[..p.keep_head].to_vec();
        prop_assert!(apply(&mut msgs, &p, summary_message("summary").unwrap()));
        assert_api_valid(&msgs);
        // The head's own blocks come first, unchanged; the last user message's blocks end the
        // conversation unchanged.
        for (orig, now) in head.iter().zip(&msgs) {
            prop_assert_eq!(&now.content[..orig.content.len()], &orig.content[..]);
        }
        let now_last = msgs.last().unwrap();
        prop_assert!(now_last.content.ends_with(&last.content));
        let summaries = msgs.iter().flat_map(|m| &m.content).filter(
            |b| matches!(b, Block::Text { text } if text.starts_with(SUMMARY_PREFIX))
        ).count();
        prop_assert_eq!(summaries, 1);

        // A second compaction on the result (no head protection any more) stays valid too.
        if let Some(p2) = plan(&msgs, tokens, fraction, false) {
            check_plan(&msgs, &p2, fraction, false);
            prop_assert!(apply(&mut msgs, &p2, summary_message("again").unwrap()));
            assert_api_valid(&msgs);
            prop_assert!(msgs.last().unwrap().content.ends_with(&last.content));
        }
    }
}

#[test]
fn the_transcript_names_images_and_searches_where_they_are() {
    use crate::engine::images::ImageRef;
    let image = ImageRef {
        name: "shot.png".into(),
        source: "/home/me/shot.png".into(),
        path: "/run/images/ab.png".into(),
        media_type: "image/png".into(),
        width: 1429,
        height: 804,
    };
    let msgs = vec![
        Message {
            role: Role::User,
            content: vec![Block::text("what is wrong here?"), Block::image(image)],
        },
        Message {
            role: Role::Assistant,
            content: vec![
                Block::ServerToolUse {
                    id: "s1".into(),
                    name: "web_search".into(),
                    input: serde_json::json!({"query": "layout bug"}),
                },
                Block::WebSearchToolResult {
                    tool_use_id: "s1".into(),
                    content: serde_json::json!([{"type": "web_search_result", "url": "https://a.dev/x",
                        "title": "A fix", "encrypted_content": "x".repeat(4_000)}]),
                },
            ],
        },
    ];
    let text = render_transcript(&msgs);
    assert!(
        text.contains("[image shot.png (1429×804, image/png) shown to the model here; stored at /run/images/ab.png]"),
        "{text}"
    );
    assert!(
        text.contains("→ web_search {\"query\":\"layout bug\"}"),
        "{text}"
    );
    assert!(text.contains("A fix <https://a.dev/x>"), "{text}");
    assert!(
        !text.contains(&"x".repeat(100)),
        "encrypted content in the summary's input"
    );
}
