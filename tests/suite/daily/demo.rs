//! The demo plays by itself, asks exactly once, and leaves no scratch directory behind.

use std::sync::Arc;
use std::time::Duration;

use flower_tui::engine::demo::{DemoProvider, FIRST_MESSAGE, Scratch};
use flower_tui::engine::policy::{ApprovalPolicy, FrontEnd};
use flower_tui::engine::protocol::{Approval, Event, Origin, TurnId};

use crate::support::check::{assert_event, assert_success};
use crate::support::harness::{Harness, start};
use crate::support::headless::{bin, ledger, lines};

#[tokio::test]
async fn the_demo_types_its_own_first_message_and_shows_one_approval() {
    let h = Harness::new().await;
    let scratch = Scratch::create().unwrap();
    let mut p = h.params(40_000, 10_000);
    p.provider.client = Arc::new(DemoProvider {
        pace: Duration::ZERO,
    });
    p.settings.model = "flower-demo".into();
    p.provider.demo = true;
    p.places.workspace = scratch.path().to_path_buf();
    p.places.workbench = Some(scratch.path().join(".flower"));
    p.tools.approvals = ApprovalPolicy::AskOnce;
    p.front_end = FrontEnd::Interactive { review: false };
    p.start.autostart = Some(FIRST_MESSAGE.into());
    let mut r = start(p);
    // Nothing sent: it starts by itself.
    let ev = r
        .until(|e| matches!(e, Event::ApprovalRequest { .. }))
        .await;
    assert_event!(
        ev,
        Event::TurnStarted {
            turn: TurnId::ENGINE,
            origin: Origin::Engine,
            ..
        }
    );
    assert_event!(
        ev,
        Event::UserMessage { origin: Origin::Engine, text, .. }
            if text == FIRST_MESSAGE
    );
    let Some(Event::ApprovalRequest { id, name, diff, .. }) = ev.last().cloned() else {
        unreachable!()
    };
    assert_eq!(name, "edit_file");
    assert_eq!(
        diff.map(|d| (d.added, d.removed)),
        Some((1, 1)),
        "the fix as a diff"
    );
    r.answer(&id, Approval::Once).await;
    let ev = r.until_end(TurnId::ENGINE).await;
    assert!(
        !ev.iter()
            .any(|e| matches!(e, Event::ApprovalRequest { .. })),
        "one prompt only"
    );
    assert!(
        ev.iter().any(|e| matches!(e, Event::Handoff(_))),
        "it hands off"
    );
    let calc = std::fs::read_to_string(scratch.path().join("calc.sh")).unwrap();
    assert!(
        calc.contains("$((a + b))") && calc.contains("mul)"),
        "{calc}"
    );
    r.shutdown().await;
}

#[test]
fn a_headless_demo_removes_its_scratch_directory() {
    let home = tempfile::tempdir().unwrap();
    let out = bin(home.path())
        .args(["-p", "fix the calculator", "--demo"])
        .output()
        .unwrap();
    assert_success(&out);
    assert_eq!(lines(&out).last().unwrap()["is_error"], false);
    let m = ledger(home.path());
    assert!(
        m.workspace.starts_with(std::env::temp_dir()),
        "{}",
        m.workspace.display()
    );
    assert!(
        !m.workspace.exists(),
        "{} is left behind",
        m.workspace.display()
    );
}
