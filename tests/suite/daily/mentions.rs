//! `@path` in a message attaches the file for the model; the replay shows what was typed.

use flower_tui::engine::protocol::Event;

use crate::support::check::picked;
use crate::support::harness::{Harness, start};

#[tokio::test]
async fn a_mentioned_file_travels_with_the_message_under_its_path() {
    let h = Harness::new().await;
    std::fs::create_dir_all(h.workspace.join("src")).unwrap();
    h.file("src/calc.sh", "echo $((a - b))\n");
    h.script().at(500).text("It subtracts.");
    let mut r = start(h.params(200_000, 50_000));
    let ev = r
        .turn("why is @src/calc.sh wrong? ask me@example.com")
        .await;
    let att: Vec<(&str, bool, &str)> = picked!(
        ev,
        Event::Attachment { path, attached, summary, .. } => (path.as_str(), *attached, summary.as_str())
    );
    assert_eq!(
        att,
        [("src/calc.sh", true, "src/calc.sh: 1 lines attached")]
    );
    let body = &h.server.requests()[0];
    let blocks = body["messages"][0]["content"].as_array().unwrap();
    assert_eq!(blocks.len(), 2);
    assert_eq!(
        blocks[0]["text"],
        "why is @src/calc.sh wrong? ask me@example.com"
    );
    assert_eq!(
        blocks[1]["text"],
        "<attached path=\"src/calc.sh\">\n     1\techo $((a - b))\n</attached>"
    );
    let root = r.run_root.clone();
    r.shutdown().await;

    // Replayed later, the message is what the user typed.
    let mut r = start(h.reopened(&root));
    let ev = r
        .until(|e| matches!(e, Event::Notice { message } if message.starts_with("continuing")))
        .await;
    let replayed: Vec<&str> = picked!(
        ev,
        Event::UserMessage { turn: None, text, .. } => text.as_str()
    );
    assert_eq!(replayed, ["why is @src/calc.sh wrong? ask me@example.com"]);
    r.shutdown().await;
}
