//! Which files a call is told about when something else changes the workspace in the same
//! moment (another flower-tui process, an editor): a `write_file` is checked for the file it
//! names only, a `bash` command for every file its call's two checkpoints differ in.

use std::time::Duration;

use flower_tui::engine::checkpoint::{Checkpoints, Options};
use flower_tui::engine::lsp::LspManager;
use serde_json::json;

use super::{left_in, real_params, server_path};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_is_told_about_its_own_file_a_command_about_all_it_may_have_changed() {
    let Some(path) = server_path("a_write_is_told_about_its_own_file") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (data, ws) = (dir.path().join("data"), dir.path().join("ws"));
    std::fs::create_dir_all(&ws).unwrap();
    let ws = ws.canonicalize().unwrap();
    let store = Checkpoints::open(&data, &ws, Options::default()).unwrap();
    let mut p = real_params(&ws, path);
    p.wait = Duration::from_secs(30);
    let lsp = LspManager::new(p);

    // The write's call: mine.py is its file; theirs.py, broken, is another writer's, written
    // between the call's two checkpoints.
    let before = store.snapshot("before").unwrap().id;
    let watch = lsp.before_call(
        "write_file",
        &json!({"path": "mine.py", "content": "x = 1\n"}),
    );
    std::fs::write(ws.join("mine.py"), "x = 1\n").unwrap();
    std::fs::write(ws.join("theirs.py"), "print(nowhere)\n").unwrap();
    let after = store.snapshot("after").unwrap().id;
    let report = lsp
        .after_call(watch, Some((store.clone(), before, after)))
        .await
        .unwrap();
    assert_eq!(report.checked, ["mine.py"], "{report:?}");
    assert!(
        report.new.is_empty() && report.notes.is_empty(),
        "{report:?}"
    );

    // A command's call with the same two checkpoints: it may have written either, so both are
    // checked, and the other writer's error is told.
    let watch = lsp.before_call("bash", &json!({"command": "true"}));
    let report = lsp
        .after_call(watch, Some((store.clone(), before, after)))
        .await
        .unwrap();
    assert_eq!(report.checked, ["mine.py", "theirs.py"], "{report:?}");
    let lines: Vec<String> = report.new.iter().map(ToString::to_string).collect();
    assert_eq!(
        lines,
        ["theirs.py:1:7 error undefined name 'nowhere' (pyflakes)"]
    );

    lsp.shutdown().await;
    assert_eq!(
        left_in(&ws, Duration::from_secs(5)).await,
        Vec::<u32>::new()
    );
}

/// An error another writer put into a file is not the next edit's: the file as it was on disk
/// just before the edit is what the edit is compared with, not what this process last sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_another_writer_made_is_not_blamed_on_the_next_edit() {
    let Some(path) = server_path("an_error_another_writer_made_is_not_blamed") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().canonicalize().unwrap();
    let mut p = real_params(&ws, path);
    p.wait = Duration::from_secs(30);
    let lsp = LspManager::new(p);
    let write = |text: &str| {
        let watch = lsp.before_call("write_file", &json!({"path": "calc.py", "content": text}));
        std::fs::write(ws.join("calc.py"), text).unwrap();
        watch
    };
    let clean = lsp.after_call(write("x = 1\n"), None).await.unwrap();
    assert!(clean.new.is_empty() && clean.notes.is_empty(), "{clean:?}");
    // Someone else breaks it; then this process edits another line.
    std::fs::write(ws.join("calc.py"), "x = 1\nprint(gone)\n").unwrap();
    let edit = lsp
        .after_call(write("x = 2\nprint(gone)\n"), None)
        .await
        .unwrap();
    assert!(edit.new.is_empty(), "{edit:?}");
    assert_eq!((edit.kept_errors, edit.notes.len()), (1, 0), "{edit:?}");
    lsp.shutdown().await;
}
