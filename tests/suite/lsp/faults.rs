//! Servers that misbehave (a fault injector of ours, `faulty_server.py`): one that hangs at
//! `initialize`, answers garbage, floods notifications or crashes costs a call no more than its
//! wait, is named in one notice (and, once given up on, in one call's result), is restarted at
//! most a few times and leaves no process behind;
//! a configured server that is not installed is named once; a file of no known language is
//! skipped without a word.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use flower_tui::engine::lsp::{ChangeReport, LspManager, LspParams, ServerSpec};
use serde_json::json;
use tokio::sync::mpsc;

use super::left_in;

const WAIT: Duration = Duration::from_secs(2);
/// A wait no answer of a working server takes, even on a loaded machine.
const PATIENT: Duration = Duration::from_secs(30);

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lsp/faulty_server.py")
}

/// The faulty server in `mode` (or `program`), waited for `wait` per call.
pub(super) fn faulty(
    ws: &Path,
    mode: &str,
    program: Option<&str>,
    wait: Duration,
) -> (LspManager, mpsc::UnboundedReceiver<String>) {
    let command = match program {
        Some(p) => vec![p.to_string()],
        None => vec![
            "python3".into(),
            script().display().to_string(),
            mode.into(),
        ],
    };
    let spec = ServerSpec {
        name: format!("faulty-{mode}"),
        command,
        extensions: vec!["flt".into()],
        root_markers: Vec::new(),
        env: BTreeMap::new(),
        enabled: true,
        builtin: false,
    };
    let mut env = BTreeMap::new();
    env.insert("PATH".into(), std::env::var("PATH").unwrap_or_default());
    let mut p = LspParams::new(vec![spec], ws.to_path_buf(), env);
    p.wait = wait;
    // Short where it is the fault under test; else long enough for a slow start (python's, under
    // load) not to count as a hang.
    p.init_timeout = if mode == "hang" {
        Duration::from_millis(400)
    } else {
        Duration::from_secs(20)
    };
    let (tx, rx) = mpsc::unbounded_channel();
    p.notices = Some(tx);
    (LspManager::new(p), rx)
}

/// Write `name` as a `write_file` call would, and what the servers said, with how long it took.
pub(super) async fn write(
    lsp: &LspManager,
    ws: &Path,
    name: &str,
    text: &str,
) -> (Option<ChangeReport>, Duration) {
    let watch = lsp.before_call("write_file", &json!({"path": name, "content": text}));
    std::fs::write(ws.join(name), text).unwrap();
    let started = Instant::now();
    let report = lsp.after_call(watch, None).await;
    (report, started.elapsed())
}

fn drain(rx: &mut mpsc::UnboundedReceiver<String>) -> Vec<String> {
    let mut out = Vec::new();
    while let Ok(n) = rx.try_recv() {
        out.push(n);
    }
    out
}

/// Poll `/lsp`'s report until it says `what` (the server's life goes on in the background).
async fn until_report(lsp: &LspManager, what: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let r = lsp.report();
        if r.contains(what) || Instant::now() > deadline {
            return r;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn workspace() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_hangs_or_answers_garbage_costs_the_wait_and_is_named_once() {
    for mode in ["hang", "garbage"] {
        let dir = workspace();
        let ws = dir.path().canonicalize().unwrap();
        let (lsp, mut notices) = faulty(&ws, mode, None, WAIT);
        let (report, took) = write(&lsp, &ws, "a.flt", "fine\n").await;
        let report = report.unwrap();
        assert!(
            took < WAIT + Duration::from_millis(1_500),
            "{mode}: {took:?}"
        );
        assert!(
            report.new.is_empty() && report.checked.is_empty(),
            "{report:?}"
        );
        assert_eq!(report.notes.len(), 1, "{report:?}");
        assert!(
            report.notes[0].contains(&format!("`faulty-{mode}`")),
            "{report:?}"
        );
        // The first call's note says it is starting or restarting, or (a quick failure)
        // already that it was given up on.
        let given_up =
            |notes: &[String]| notes.iter().filter(|n| n.contains("not restarted")).count();
        let mut failure_said = given_up(&report.notes);
        // It is restarted a few times, then given up on; no process is left meanwhile.
        let status = until_report(&lsp, "failed:").await;
        assert!(status.contains("failed: initialize"), "{mode}: {status}");
        // A failed server is not waited for; its failure is said in one result, and from then
        // on its files are passed over without a word.
        for text in ["still fine\n", "fine again\n"] {
            let (report, took) = write(&lsp, &ws, "a.flt", text).await;
            assert!(
                took < Duration::from_millis(500),
                "a failed server is not waited for: {took:?}"
            );
            failure_said += report.map_or(0, |r| given_up(&r.notes));
        }
        assert_eq!(failure_said, 1, "{mode}");
        let (report, _) = write(&lsp, &ws, "a.flt", "fine once more\n").await;
        assert_eq!(report, None, "{mode}");
        let told = drain(&mut notices);
        assert_eq!(told.len(), 1, "{told:?}");
        assert!(told[0].starts_with(&format!(
            "language server `faulty-{mode}` failed (initialize"
        )));
        assert_eq!(
            left_in(&ws, Duration::from_secs(3)).await,
            Vec::<u32>::new(),
            "{mode}"
        );
        lsp.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_notifications_does_not_hide_the_answer() {
    let dir = workspace();
    let ws = dir.path().canonicalize().unwrap();
    // Answers are awaited however long a loaded machine makes them (the wait's bound is the
    // hang test's); what matters is that the flood does not hide or replace them.
    let (lsp, _notices) = faulty(&ws, "flood", None, PATIENT);
    let (first, _) = write(&lsp, &ws, "a.flt", "one\n").await;
    assert_eq!(first.unwrap().checked, ["a.flt"]);
    let (report, took) = write(&lsp, &ws, "a.flt", "one\nBROKEN two\n").await;
    let report = report.unwrap();
    assert!(took < PATIENT, "{took:?}");
    let lines: Vec<String> = report.new.iter().map(ToString::to_string).collect();
    assert_eq!(lines, ["a.flt:2:1 error BROKEN here (faulty)"]);
    lsp.shutdown().await;
    assert_eq!(
        left_in(&ws, Duration::from_secs(3)).await,
        Vec::<u32>::new()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_crashes_is_restarted_a_few_times_then_left_alone() {
    let dir = workspace();
    let ws = dir.path().canonicalize().unwrap();
    let (lsp, mut notices) = faulty(&ws, "crash", None, PATIENT);
    let (first, _) = write(&lsp, &ws, "a.flt", "one\n").await;
    assert!(first.unwrap().notes.is_empty());
    // Each change crashes it; a restarted server is told the file again and answers for it.
    let (second, took) = write(&lsp, &ws, "a.flt", "BROKEN\n").await;
    let second = second.unwrap();
    assert!(took < PATIENT, "{took:?}");
    let lines: Vec<String> = second.new.iter().map(ToString::to_string).collect();
    assert_eq!(
        lines,
        ["a.flt:1:1 error BROKEN here (faulty)"],
        "{second:?}"
    );
    for text in ["BROKEN\nx\n", "BROKEN\ny\n", "BROKEN\nz\n"] {
        let _ = write(&lsp, &ws, "a.flt", text).await;
    }
    let status = until_report(&lsp, "failed:").await;
    assert!(status.contains("failed: it stopped"), "{status}");
    let told = drain(&mut notices);
    assert_eq!(told.len(), 1, "{told:?}");
    assert_eq!(
        left_in(&ws, Duration::from_secs(3)).await,
        Vec::<u32>::new()
    );
    lsp.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_server_is_named_once_and_an_unknown_language_is_skipped() {
    let dir = workspace();
    let ws = dir.path().canonicalize().unwrap();
    let (lsp, mut notices) = faulty(&ws, "missing", Some("no-such-language-server-here"), WAIT);
    assert_eq!(write(&lsp, &ws, "a.flt", "x\n").await.0, None);
    assert_eq!(write(&lsp, &ws, "b.flt", "y\n").await.0, None);
    let told = drain(&mut notices);
    assert_eq!(
        told,
        [
            "language server `faulty-missing`: `no-such-language-server-here` not found (PATH); \
          its files get no diagnostics"
        ]
    );
    assert_eq!(write(&lsp, &ws, "notes.xyz", "z\n").await.0, None);
    assert!(drain(&mut notices).is_empty());
    lsp.shutdown().await;
}
