//! Images through the engine and the loopback fake provider, both protocols: an attached PNG
//! reaches the request as an image block with the right media type and a decodable image no
//! larger than the limits; `read_file` of an image returns it (inside the `tool_result` for
//! Anthropic, as a user part after the tool message for OpenAI); a path dropped on the terminal
//! (quoted, outside the workspace) is attached; the transcript names the stored file and holds
//! no base64; a text-only model, and a server that refuses the image, get a notice and a working
//! turn.

use std::path::Path;

use base64::Engine as _;
use flower_tui::engine::images::{MAX_LONG_SIDE, MAX_PIXELS};
use flower_tui::engine::protocol::{Event, ExitReason};
use serde_json::Value;

use crate::support::fake::{U, anthropic as a, openai as o};
use crate::support::harness::{Harness, all_files, exit_reason, start};

/// A real 2560×1440 PNG screenshot-like picture at `path`.
fn screenshot(path: &Path) {
    let img = image::RgbImage::from_fn(2560, 1440, |x, y| {
        image::Rgb([
            (x % 251) as u8,
            (y % 241) as u8,
            if (x / 9) % 2 == 0 { 30 } else { 200 },
        ])
    });
    img.save(path).unwrap();
}

/// The image of a base64 payload: decoded for real, checked against the limits.
fn decoded(media_type: &str, data: &str) -> image::DynamicImage {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .unwrap();
    let format = image::guess_format(&bytes).unwrap();
    assert_eq!(format.to_mime_type(), media_type);
    let img = image::load_from_memory(&bytes).unwrap();
    assert!(
        img.width().max(img.height()) <= MAX_LONG_SIDE,
        "{}x{}",
        img.width(),
        img.height()
    );
    assert!(u64::from(img.width()) * u64::from(img.height()) <= MAX_PIXELS);
    img
}

/// Every Anthropic `image` block of a request, nested ones (in `tool_result`) included.
fn anthropic_images(body: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    let mut stack: Vec<&Value> = vec![body];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(m) => {
                if m.get("type").and_then(Value::as_str) == Some("image") {
                    out.push(v.clone());
                }
                stack.extend(m.values());
            }
            Value::Array(a) => stack.extend(a.iter()),
            _ => {}
        }
    }
    out
}

/// The transcripts of a run, as text.
fn transcripts(run_root: &Path) -> String {
    all_files(&run_root.join("sessions"))
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_attached_png_reaches_anthropic_as_a_scaled_image_block() {
    let h = Harness::new().await;
    screenshot(&h.workspace.join("shot.png"));
    h.server
        .push(a::text("I see a striped picture.", U::new(2000, 10)));
    let mut r = start(h.params(200_000, 20_000));
    let events = r.turn("what is wrong in @shot.png?").await;
    assert_eq!(exit_reason(&events), Some(ExitReason::Completed));
    let chip = events.iter().find_map(|e| match e {
        Event::Attachment {
            summary,
            attached: true,
            ..
        } => Some(summary.clone()),
        _ => None,
    });
    assert_eq!(
        chip.as_deref(),
        Some("[image: shot.png 1429×804]"),
        "{events:#?}"
    );
    let body = &h.server.requests()[0];
    let blocks = body["messages"][0]["content"].as_array().unwrap();
    assert_eq!(blocks[0]["text"], "what is wrong in @shot.png?");
    let image = &blocks[1];
    assert_eq!(image["type"], "image");
    assert_eq!(image["source"]["type"], "base64");
    let img = decoded(
        image["source"]["media_type"].as_str().unwrap(),
        image["source"]["data"].as_str().unwrap(),
    );
    assert_eq!((img.width(), img.height()), (1429, 804));
    // Stored once in the run directory; the transcript names the file, never the bytes.
    let stored = all_files(&r.run_root.join("images"));
    assert_eq!(stored.len(), 1);
    let log = transcripts(&r.run_root);
    assert!(log.contains(&stored[0].display().to_string()), "{log}");
    assert!(!log.contains("iVBORw0KGgo"), "base64 in the transcript");
    // The same image again is the same stored file.
    h.server.push(a::text("same", U::new(2100, 10)));
    r.turn("and again @shot.png").await;
    assert_eq!(all_files(&r.run_root.join("images")).len(), 1);
    r.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_path_outside_the_workspace_reaches_openai_as_a_data_url() {
    let h = Harness::new().await;
    let outside = h.dir.path().join("My Screenshots");
    std::fs::create_dir_all(&outside).unwrap();
    let file = outside.join("Screen Shot 1.png");
    screenshot(&file);
    let mut p = h.params(200_000, 20_000);
    p.provider.client = h.openai();
    p.settings.model = "gpt-4o".into();
    h.server
        .push(o::text("a striped picture", U::new(2000, 10)));
    let mut r = start(p);
    // A terminal pastes a dropped file as a quoted path.
    let text = format!("why is this broken? '{}' ", file.display());
    let events = r.turn(&text).await;
    assert_eq!(
        exit_reason(&events),
        Some(ExitReason::Completed),
        "{events:#?}"
    );
    let body = &h.server.requests()[0];
    let user = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "user")
        .unwrap();
    let parts = user["content"].as_array().unwrap();
    assert_eq!(parts[0]["type"], "text");
    assert_eq!(parts[1]["type"], "image_url");
    let url = parts[1]["image_url"]["url"].as_str().unwrap();
    let (head, data) = url.split_once(";base64,").unwrap();
    let media = head.strip_prefix("data:").unwrap();
    decoded(media, data);
    r.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_file_of_an_image_returns_it_in_both_protocols() {
    // Anthropic: the image inside the call's tool_result.
    let h = Harness::new().await;
    screenshot(&h.workspace.join("ui.png"));
    h.server.push(a::tool_use(
        "r1",
        "read_file",
        r#"{"path":"ui.png"}"#,
        U::new(1000, 10),
    ));
    h.server
        .push(a::text("the button is cut off", U::new(2500, 10)));
    let mut r = start(h.params(200_000, 20_000));
    let events = r.turn("look at ui.png").await;
    assert_eq!(exit_reason(&events), Some(ExitReason::Completed));
    r.shutdown().await;
    let body = &h.server.requests()[1];
    let result = &a::tool_results(body)[0];
    let content = result["content"].as_array().unwrap();
    assert_eq!(content[0]["type"], "text");
    let line = content[0]["text"].as_str().unwrap();
    assert!(line.starts_with("Image ui.png: PNG 2560×1440"), "{line}");
    assert!(line.contains("sent scaled to 1429×804"), "{line}");
    assert_eq!(content[1]["type"], "image");
    decoded(
        content[1]["source"]["media_type"].as_str().unwrap(),
        content[1]["source"]["data"].as_str().unwrap(),
    );
    assert_eq!(
        anthropic_images(body).len(),
        1,
        "the image is only in the tool_result"
    );

    // OpenAI: a tool message cannot carry it; a user part after it does.
    let h = Harness::new().await;
    screenshot(&h.workspace.join("ui.png"));
    let mut p = h.params(200_000, 20_000);
    p.provider.client = h.openai();
    p.settings.model = "gpt-4o".into();
    h.server.push(o::tool_calls(
        &[("r1", "read_file", r#"{"path":"ui.png"}"#)],
        U::new(1000, 10),
    ));
    h.server
        .push(o::text("the button is cut off", U::new(2500, 10)));
    let mut r = start(p);
    r.completed_turn("look at ui.png").await;
    r.shutdown().await;
    let msgs = h.server.requests()[1]["messages"]
        .as_array()
        .unwrap()
        .clone();
    let tool_at = msgs.iter().position(|m| m["role"] == "tool").unwrap();
    assert!(
        msgs[tool_at]["content"]
            .as_str()
            .unwrap()
            .starts_with("Image ui.png")
    );
    let next = &msgs[tool_at + 1];
    assert_eq!(next["role"], "user");
    let parts = next["content"].as_array().unwrap();
    assert!(
        parts[0]["text"]
            .as_str()
            .unwrap()
            .contains("returned by tool call r1")
    );
    assert_eq!(parts[1]["type"], "image_url");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_text_only_model_gets_a_notice_and_a_working_turn() {
    let h = Harness::new().await;
    screenshot(&h.workspace.join("shot.png"));
    let mut p = h.params(200_000, 20_000);
    p.provider.client = h.openai();
    p.settings.model = "deepseek-chat".into();
    h.server.push(o::text(
        "I cannot see images, describe it?",
        U::new(500, 10),
    ));
    let mut r = start(p);
    let events = r.turn("what is in @shot.png").await;
    assert_eq!(exit_reason(&events), Some(ExitReason::Completed));
    let said = events.iter().find_map(|e| match e {
        Event::Attachment {
            summary,
            attached: false,
            ..
        } => Some(summary.clone()),
        _ => None,
    });
    assert_eq!(
        said.as_deref(),
        Some("shot.png: not attached: the model in use takes no images")
    );
    let body = h.server.requests()[0].to_string();
    assert!(!body.contains("image_url"), "{body}");
    r.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_refuses_images_gets_the_turn_without_them() {
    let h = Harness::new().await;
    screenshot(&h.workspace.join("shot.png"));
    let mut p = h.params(200_000, 20_000);
    p.provider.client = h.openai();
    p.settings.model = "local-gguf".into();
    // llama.cpp without a vision projector answers an image with this 500.
    h.server.push(o::error_status(
        500,
        "image input is not supported - hint: if this is unexpected, you may need to provide the mmproj",
        "server_error",
        None,
    ));
    h.server
        .push(o::text("described from the text", U::new(500, 10)));
    h.server.push(o::text("second answer", U::new(600, 10)));
    let mut r = start(p);
    let events = r.completed_turn("what is in @shot.png").await;
    let notices: Vec<&String> = events
        .iter()
        .filter_map(|e| match e {
            Event::Notice { message } if message.starts_with("images left out") => Some(message),
            _ => None,
        })
        .collect();
    assert_eq!(notices.len(), 1, "{events:#?}");
    assert!(
        notices[0].contains("the server refused an image"),
        "{}",
        notices[0]
    );
    assert!(
        !events.iter().any(|e| matches!(e, Event::Retry { .. })),
        "no try was spent"
    );
    let reqs = h.server.requests();
    assert!(reqs[0].to_string().contains("image_url"));
    let second = reqs[1].to_string();
    assert!(!second.contains("image_url"), "{second}");
    assert!(
        second.contains("not sent: `local-gguf` takes no images"),
        "{second}"
    );
    // The next turn: still without the image, and no second notice.
    let events = r.turn("and now?").await;
    assert_eq!(exit_reason(&events), Some(ExitReason::Completed));
    assert!(
        !events.iter().any(
            |e| matches!(e, Event::Notice { message } if message.starts_with("images left out"))
        )
    );
    assert!(!h.server.requests()[2].to_string().contains("image_url"));
    r.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broken_images_are_said_plainly_and_the_message_still_goes() {
    let h = Harness::new().await;
    // A PNG signature and then nothing a decoder can use.
    let mut corrupt = b"\x89PNG\r\n\x1a\n".to_vec();
    corrupt.extend_from_slice(&[7u8; 300]);
    std::fs::write(h.workspace.join("corrupt.png"), &corrupt).unwrap();
    // 51 MB (sparse): over the limit, never read.
    let f = std::fs::File::create(h.workspace.join("huge.png")).unwrap();
    std::io::Write::write_all(&mut &f, b"\x89PNG\r\n\x1a\n").unwrap();
    f.set_len(51 * 1024 * 1024).unwrap();
    h.server.push(a::tool_use(
        "r1",
        "read_file",
        r#"{"path":"corrupt.png"}"#,
        U::new(1000, 10),
    ));
    h.server
        .push(a::text("the files are broken", U::new(1200, 10)));
    let mut r = start(h.params(200_000, 20_000));
    let events = r.turn("compare @corrupt.png with @huge.png please").await;
    assert_eq!(exit_reason(&events), Some(ExitReason::Completed));
    let images_dir = r.run_root.join("images");
    r.shutdown().await;
    let said: Vec<(String, bool)> = events
        .iter()
        .filter_map(|e| match e {
            Event::Attachment {
                summary, attached, ..
            } => Some((summary.clone(), *attached)),
            _ => None,
        })
        .collect();
    assert_eq!(said.len(), 2, "{said:?}");
    assert!(
        said[0]
            .0
            .starts_with("corrupt.png: not attached: the PNG image could not be decoded"),
        "{said:?}"
    );
    assert_eq!(
        said[1].0,
        "huge.png: not attached: the file is 51.0 MB, more than the 50 MB an image may have"
    );
    assert!(said.iter().all(|(_, attached)| !attached));
    // The message reached the model, without an image; the read failed as a result.
    let reqs = h.server.requests();
    assert_eq!(
        reqs[0]["messages"][0]["content"][0]["text"],
        "compare @corrupt.png with @huge.png please"
    );
    assert!(anthropic_images(&reqs[0]).is_empty());
    let result = &a::tool_results(&reqs[1])[0];
    assert_eq!(result["is_error"], true);
    let text = result["content"].as_str().unwrap().to_string();
    assert!(
        text.starts_with("Cannot read the image corrupt.png: the PNG image could not be decoded"),
        "{text}"
    );
    assert!(all_files(&images_dir).is_empty());
}
