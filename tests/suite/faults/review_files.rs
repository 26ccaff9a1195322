//! The handoff file under attack during its review: deleted (the path holds the document again,
//! and the successor reads it), or impossible to write in the workspace (a file where the notes
//! folder should be: the document is saved, reviewed and recorded in the run directory).

use flower_tui::engine::protocol::{Event, Op};
use serde_json::Value;

use crate::support::check::{assert_event, assert_file};
use crate::support::harness::{Harness, turn_end};

const DOC: &str = "## Doing\nRefactoring the parser.\n\n## Decided\n- Keep the old API.\n\n## Dead ends\n- Regex parsing.\n\n## Next\nRun the parser tests.\n\n## Scene\n- src/parser.rs\n";

fn first_user_text(body: &Value) -> String {
    body["messages"][0]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn a_file_deleted_during_the_review_is_written_again_with_the_document() {
    let h = Harness::new().await;
    let (mut r, handoff, path, frozen) = h.in_review(DOC).await;
    std::fs::remove_file(&path).unwrap();
    r.send(Op::ReviewDone { handoff }).await;
    let ev = r.until(|e| matches!(e, Event::TurnEnd { .. })).await;
    assert_eq!(turn_end(&ev), "completed");
    assert_event!(
        ev,
        Event::Warning { message }
            if message.contains("was deleted: it is written again")
    );
    assert!(first_user_text(&h.server.requests()[2]).contains("Run the parser tests."));
    // The path holds again what the successor read: later reviews and `--continue` find it.
    assert_file(&path, frozen);
    r.shutdown().await;
}

#[tokio::test]
async fn a_file_written_back_by_the_editor_after_a_delete_is_what_the_successor_reads() {
    let h = Harness::new().await;
    let (mut r, handoff, path, frozen) = h.in_review(DOC).await;
    std::fs::remove_file(&path).unwrap();
    // What the side editor does when the review ends on a deleted file: its buffer goes back.
    let edited = frozen.replace(
        "Run the parser tests.",
        "Run the parser tests.\nTYPED AFTER THE DELETE",
    );
    std::fs::write(&path, &edited).unwrap();
    r.send(Op::ReviewDone { handoff }).await;
    let ev = r.until(|e| matches!(e, Event::TurnEnd { .. })).await;
    assert_eq!(turn_end(&ev), "completed");
    assert!(first_user_text(&h.server.requests()[2]).contains("TYPED AFTER THE DELETE"));
    assert_file(&path, edited);
    assert!(r.manifest().steps[0].handoffs[0].edited);
    r.shutdown().await;
}

#[tokio::test]
async fn a_workspace_that_cannot_hold_the_file_gets_it_reviewed_in_the_run_directory() {
    let h = Harness::new().await;
    // A file where the notes folder should be: nothing can be written under it.
    std::fs::create_dir_all(h.workbench()).unwrap();
    std::fs::write(h.workbench().join("notes"), "not a folder").unwrap();
    let (mut r, handoff, path, _) = h.in_review(DOC).await;
    assert!(
        path.starts_with(&r.run_root),
        "{} is not in the run directory {}",
        path.display(),
        r.run_root.display()
    );
    assert_event!(r.events, Event::Warning { message } if message.contains("reviewed there"));
    // The review runs on that file: an edit there reaches the successor.
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        text.replace("Run the parser tests.", "REVIEWED IN THE RUN DIR"),
    )
    .unwrap();
    // The ledger records where it is, while it waits and once it is turned over.
    let waiting = r.manifest().steps[0]
        .frozen
        .clone()
        .expect("a frozen record");
    assert_eq!(waiting.file.path(), Some(path.as_path()));
    r.send(Op::ReviewDone { handoff }).await;
    let ev = r.until(|e| matches!(e, Event::TurnEnd { .. })).await;
    assert_eq!(turn_end(&ev), "completed");
    assert!(first_user_text(&h.server.requests()[2]).contains("REVIEWED IN THE RUN DIR"));
    assert_eq!(
        r.manifest().steps[0].handoffs[0].path.as_deref(),
        Some(path.as_path())
    );
    r.shutdown().await;
}
