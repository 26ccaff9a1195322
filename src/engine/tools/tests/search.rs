//! grep, glob, list_dir.

use super::Ws;
use serde_json::json;
use std::time::{Duration, SystemTime};

fn project() -> Ws {
    let ws = Ws::new();
    ws.write(".gitignore", "target/\n*.log\n");
    ws.write("src/main.rs", "fn main() {\n    println!(\"Hello\");\n}\n");
    ws.write("src/util/mod.rs", "pub fn hello() {}\n");
    ws.write("README.md", "# hello world\n");
    ws.write("target/debug/out.rs", "fn hello_ignored() {}\n");
    ws.write("debug.log", "hello from a log\n");
    ws.write(".hidden/secret.rs", "hello hidden\n");
    ws.write("blob.bin", b"hello\x00binary");
    ws
}

#[tokio::test]
async fn grep_respects_gitignore_hidden_and_binary() {
    let ws = project();
    let out = ws.ok("grep", json!({"pattern": "hello"})).await;
    assert_eq!(
        out,
        "README.md:1:# hello world\nsrc/util/mod.rs:1:pub fn hello() {}\n\n(2 matches in 2 files.)"
    );
    let out = ws
        .ok(
            "grep",
            json!({"pattern": "HELLO", "case_insensitive": true, "glob": "*.rs"}),
        )
        .await;
    assert_eq!(
        out,
        "src/main.rs:2:    println!(\"Hello\");\nsrc/util/mod.rs:1:pub fn hello() {}\n\n(2 matches in 2 files.)"
    );
    // An explicit path into an ignored directory is searched.
    let out = ws
        .ok("grep", json!({"pattern": "hello", "path": "target"}))
        .await;
    assert!(out.starts_with("target/debug/out.rs:1:"), "{out}");
    // A single file.
    let out = ws
        .ok("grep", json!({"pattern": "fn", "path": "src/main.rs"}))
        .await;
    assert!(out.starts_with("src/main.rs:1:fn main() {"), "{out}");
}

#[tokio::test]
async fn grep_caps_results_and_reports_bad_patterns() {
    let ws = Ws::new();
    let body: String = (0..50).map(|i| format!("match {i}\n")).collect();
    ws.write("many.txt", body);
    let out = ws
        .ok("grep", json!({"pattern": "match", "max_results": 5}))
        .await;
    assert_eq!(out.lines().count(), 7, "{out}");
    assert!(out.contains("many.txt:5:match 4"));
    assert!(
        out.contains("Showing the first 5 matches; there are more"),
        "{out}"
    );
    let out = ws.ok("grep", json!({"pattern": "nothing here"})).await;
    assert_eq!(out, "No matches for /nothing here/ in the workspace.");
    let e = ws.err("grep", json!({"pattern": "fn ("})).await;
    assert!(e.starts_with("Invalid regular expression `fn (`"), "{e}");
    let e = ws
        .err("grep", json!({"pattern": "x", "path": "missing"}))
        .await;
    assert!(e.contains("not found"), "{e}");
}

#[tokio::test]
async fn glob_by_name_and_path_newest_first() {
    let ws = project();
    let old = SystemTime::now() - Duration::from_secs(3600);
    let f = std::fs::File::options()
        .write(true)
        .open(ws.root().join("src/main.rs"))
        .unwrap();
    f.set_modified(old).unwrap();
    let out = ws.ok("glob", json!({"pattern": "*.rs"})).await;
    assert_eq!(out, "src/util/mod.rs\nsrc/main.rs");
    let out = ws.ok("glob", json!({"pattern": "src/*.rs"})).await;
    assert_eq!(out, "src/main.rs");
    let out = ws
        .ok("glob", json!({"pattern": "**/*.{md,rs}", "path": "src"}))
        .await;
    assert_eq!(out, "src/util/mod.rs\nsrc/main.rs");
    let out = ws.ok("glob", json!({"pattern": "*.py"})).await;
    assert_eq!(out, "No files match `*.py` in the workspace.");
    let e = ws.err("glob", json!({"pattern": "a[b"})).await;
    assert!(e.starts_with("Invalid glob pattern"), "{e}");
    let e = ws
        .err("glob", json!({"pattern": "*", "path": "README.md"}))
        .await;
    assert!(e.contains("is a file"), "{e}");
}

#[tokio::test]
async fn list_dir_sorts_dirs_first_and_marks_ignored() {
    let ws = project();
    std::os::unix::fs::symlink("src", ws.root().join("link")).unwrap();
    let out = ws.ok("list_dir", json!({})).await;
    assert_eq!(
        out,
        "./ (4 directories, 4 files)\n\
         .hidden/\n\
         link/ -> src\n\
         src/\n\
         target/  (ignored)\n\
         .gitignore  (14 B)\n\
         blob.bin  (12 B)\n\
         debug.log  (17 B)  (ignored)\n\
         README.md  (14 B)"
    );
    let out = ws.ok("list_dir", json!({"path": "src/util"})).await;
    assert_eq!(out, "src/util/ (0 directories, 1 file)\nmod.rs  (18 B)");
    std::fs::create_dir(ws.root().join("void")).unwrap();
    assert_eq!(
        ws.ok("list_dir", json!({"path": "void"})).await,
        "void/ (empty directory)"
    );
    let e = ws.err("list_dir", json!({"path": "README.md"})).await;
    assert!(e.contains("is a file") && e.contains("read_file"), "{e}");
    let e = ws.err("list_dir", json!({"path": "scr"})).await;
    assert!(e.contains("Did you mean: src"), "{e}");
}

#[test]
fn the_shared_walk_yields_files_by_name_and_stops_when_cancelled() {
    use super::super::grep::{files, walker};
    use std::sync::atomic::AtomicBool;
    let ws = project();
    let running = AtomicBool::new(false);
    let found: Vec<String> = files(walker(ws.root()).build(), &running)
        .map(|e| {
            let e = e.unwrap();
            let rel = e.path().strip_prefix(ws.root()).unwrap().to_owned();
            rel.to_string_lossy().into_owned()
        })
        .collect();
    assert_eq!(
        found,
        ["README.md", "blob.bin", "src/main.rs", "src/util/mod.rs"]
    );
    let cancelled = AtomicBool::new(true);
    let mut walk = files(walker(ws.root()).build(), &cancelled);
    assert_eq!(
        walk.next().map(|e| e.err()),
        Some(Some("The search was cancelled."))
    );
}
