//! The side editor alone: the file text round-trips, the countdown runs, pauses and ends, a
//! change on disk reloads or asks, the cursor starts in the first section, a revert.

use super::*;

const DOC: &str = "# Handoff\n## Doing\nx\n## Next\ny\n";

fn ed(review: Option<u64>, t0: Instant) -> SideEditor {
    SideEditor::open("/n/h.md".into(), DOC, review.map(Duration::from_secs), t0)
}

#[test]
fn round_trips_the_file_text() {
    let t0 = Instant::now();
    let e = ed(None, t0);
    assert_eq!(e.text(), DOC);
    assert!(!e.is_dirty());
    let e = SideEditor::open("x".into(), "a\r\nb", None, t0);
    assert_eq!(e.text(), "a\nb");
    assert!(!e.is_dirty());
    let e = SideEditor::open("x".into(), "", None, t0);
    assert_eq!(e.text(), "");
    assert!(!e.is_dirty());
}

#[test]
fn countdown_runs_pauses_and_ends() {
    let t0 = Instant::now();
    let mut e = ed(Some(15), t0);
    assert_eq!(e.countdown(t0), Some(15));
    assert_eq!(e.countdown(t0 + Duration::from_millis(8_200)), Some(7));
    assert_eq!(
        e.next_change(t0 + Duration::from_millis(8_200)),
        Some(Duration::from_millis(800))
    );
    assert!(!e.tick(t0 + Duration::from_secs(14)));
    assert!(e.tick(t0 + Duration::from_secs(15)));
    assert!(!e.in_review());
    assert!(!e.tick(t0 + Duration::from_secs(16)), "ends once");

    let mut e = ed(Some(15), t0);
    e.pause(t0 + Duration::from_secs(5));
    assert!(e.is_paused());
    assert_eq!(e.countdown(t0 + Duration::from_secs(60)), Some(10));
    assert!(
        !e.tick(t0 + Duration::from_secs(60)),
        "paused never runs out"
    );
    assert_eq!(e.next_change(t0), None);
}

#[test]
fn disk_changes_reload_or_conflict() {
    let t0 = Instant::now();
    let mut e = ed(None, t0);
    e.disk_changed(Ok(DOC.into()));
    assert_eq!(e.note, None, "no change: ignored");
    e.disk_changed(Ok("new\n".into()));
    assert_eq!(e.text(), "new\n");
    assert!(!e.is_dirty());

    e.cursor_to(false);
    e.area.insert_str("mine ");
    assert!(e.is_dirty());
    e.disk_changed(Ok("theirs\n".into()));
    assert_eq!(
        e.prompt,
        Prompt::Conflict {
            disk: "theirs\n".into()
        }
    );
    assert_eq!(
        e.text(),
        "mine new\n",
        "the buffer is untouched until answered"
    );
    e.resolve_conflict(false);
    assert_eq!(e.prompt, Prompt::None);
    assert!(e.is_dirty(), "kept edits stay unsaved");

    e.disk_changed(Ok("third\n".into()));
    e.resolve_conflict(true);
    assert_eq!(e.text(), "third\n");
    assert!(!e.is_dirty());

    e.disk_changed(Err(std::io::Error::other("No such file").into()));
    assert!(e.disk_text.is_none());
    assert!(e.is_dirty(), "a deleted file makes the buffer unsaved");
}

#[test]
fn the_cursor_starts_in_the_first_section_and_ctrl_end_reaches_the_end() {
    let t0 = Instant::now();
    let doc =
        "# Handoff · step demo · generation 2\n\n## Doing\nFixing it.\nStill.\n\n## Next\ny\n";
    let mut e = SideEditor::open("/n/h.md".into(), doc, None, t0);
    assert_eq!(e.area.cursor(), DataCursor(4, 6), "after `Still.`");
    e.area.insert_str(" more");
    assert_eq!(
        e.text(),
        "# Handoff · step demo · generation 2\n\n## Doing\nFixing it.\nStill. more\n\n## Next\ny\n",
        "the header line is untouched"
    );
    e.cursor_to(true);
    assert_eq!(e.area.cursor(), DataCursor(7, 1));
    e.cursor_to(false);
    assert_eq!(e.area.cursor(), DataCursor(0, 0));
    // No section with text: the end of the document.
    let e = SideEditor::open("x".into(), "# Handoff\n## Doing\n## Next\n", None, t0);
    assert_eq!(e.area.cursor(), DataCursor(2, 7));
    let e = SideEditor::open("x".into(), "", None, t0);
    assert_eq!(e.area.cursor(), DataCursor(0, 0));
}

#[test]
fn revert_restores_the_disk_text() {
    let t0 = Instant::now();
    let mut e = ed(Some(15), t0);
    e.area.insert_str("typo");
    e.revert();
    assert_eq!(e.text(), DOC);
}

#[test]
fn ctrl_u_deletes_to_the_line_start_and_ctrl_z_undoes() {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let t0 = Instant::now();
    let mut e = ed(None, t0);
    let ctrl = |c| KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL);
    // The cursor starts after the first section's text (`x`).
    e.type_key(ctrl('u'), t0);
    assert_eq!(e.text(), "# Handoff\n## Doing\n\n## Next\ny\n");
    e.type_key(ctrl('z'), t0);
    assert_eq!(e.text(), DOC);
}
