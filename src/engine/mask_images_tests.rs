//! Masking of images and of the provider's web search results: an old image becomes a line
//! naming it and its stored copy (inside its call's result when a tool returned it, so the
//! results still come first in the message); an old search becomes the pages it found.

use serde_json::json;

use super::*;
use crate::engine::images::ImageRef;
use crate::engine::types::{Block, Message, Role};

fn image(name: &str) -> ImageRef {
    ImageRef {
        name: name.into(),
        source: format!("/home/me/{name}"),
        path: format!("/run/images/{name}").into(),
        media_type: "image/png".into(),
        width: 1429,
        height: 804,
    }
}

fn history() -> Vec<Message> {
    vec![
        Message {
            role: Role::User,
            content: vec![
                Block::text("what is wrong here?"),
                Block::image(image("shot.png")),
            ],
        },
        Message {
            role: Role::Assistant,
            content: vec![
                Block::ServerToolUse {
                    id: "s1".into(),
                    name: "web_search".into(),
                    input: json!({"query": "layout bug"}),
                },
                Block::WebSearchToolResult {
                    tool_use_id: "s1".into(),
                    content: json!([{"type": "web_search_result", "url": "https://a.dev/x",
                        "title": "A fix", "encrypted_content": "x".repeat(4_000)}]),
                },
                Block::ToolUse {
                    id: "r1".into(),
                    name: "read_file".into(),
                    input: json!({"path": "ui.png"}),
                    from_text: false,
                },
            ],
        },
        Message {
            role: Role::User,
            content: vec![
                Block::ToolResult {
                    tool_use_id: "r1".into(),
                    content: "Image ui.png: PNG 2560×1440".into(),
                    is_error: false,
                },
                Block::Image {
                    image: image("ui.png"),
                    tool_use_id: Some("r1".into()),
                },
            ],
        },
        Message::assistant("The button overflows."),
        Message::user("fix it"),
    ]
}

#[test]
fn old_images_and_searches_become_lines_that_say_where_they_are() {
    let m = history();
    let out = apply(&m, 4, |m| (m.char_len() as u64).div_ceil(4));
    assert_eq!(out.stubbed, 3);
    assert!(out.saved_tokens > 2_000, "{}", out.saved_tokens);
    let first = &out.messages[0].content;
    assert!(matches!(&first[1], Block::Text { text }
        if text.starts_with("[image shot.png (1429×804, image/png) masked to save context")
            && text.contains("/run/images/shot.png")));
    let reply = &out.messages[1].content;
    assert!(matches!(&reply[0], Block::Text { text } if text.contains("layout bug")));
    assert!(matches!(&reply[1], Block::Text { text } if text.contains("A fix <https://a.dev/x>")));
    // The tool's image joins its result, which stays the message's first block.
    let results = &out.messages[2].content;
    assert_eq!(results.len(), 1);
    let Block::ToolResult { content, .. } = &results[0] else {
        panic!("{results:?}")
    };
    assert!(
        content.starts_with("Image ui.png: PNG 2560×1440\n[image ui.png"),
        "{content}"
    );
    assert!(out.messages.iter().all(|m| m.images().next().is_none()));
}
