//! `/undo` and `/redo` on the real binary, headless, through the loopback fake: a scripted turn
//! writes, creates, edits, deletes files, appends and changes a mode with `bash`; `-p /undo` with
//! `--continue` puts every byte and mode back, `-p /redo` brings the turn's state back, a file the
//! user changed since is named and not written over, and undo walks back across a handoff into
//! the earlier generation. The ledger records each checkpoint.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::support::check::{assert_contains, assert_exit, assert_file, assert_success, each_str};
use crate::support::fake::anthropic::Stream;
use crate::support::fake::{FakeServer, U};
use crate::support::harness::KEY;
use crate::support::headless::{bin, lines, stderr};

pub(super) fn u(input: u64) -> U {
    U {
        input,
        output: 10,
        cache_creation: 0,
        cache_read: 0,
    }
}

/// Every file of `ws` (but the workbench) with its permission bits and bytes.
pub(super) fn state(ws: &Path) -> BTreeMap<String, (u32, Vec<u8>)> {
    let mut out = BTreeMap::new();
    let mut todo = vec![ws.to_path_buf()];
    while let Some(dir) = todo.pop() {
        for e in fs::read_dir(&dir).unwrap().flatten() {
            let path = e.path();
            if e.file_name() == ".flower" {
                continue;
            }
            if path.is_dir() {
                todo.push(path);
                continue;
            }
            let rel = path
                .strip_prefix(ws)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o7777;
            out.insert(rel, (mode, fs::read(&path).unwrap()));
        }
    }
    out
}

/// A home with a workspace folder `ws` (the data dir stays outside it).
pub(super) struct Home {
    pub(super) dir: tempfile::TempDir,
}

impl Home {
    pub(super) fn new() -> Home {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("ws")).unwrap();
        Home { dir }
    }

    pub(super) fn ws(&self) -> PathBuf {
        self.dir.path().join("ws")
    }

    /// The binary in the workspace, talking to `server`, with `args`.
    pub(super) fn command(&self, server: &FakeServer, args: &[&str]) -> std::process::Command {
        let mut c = bin(self.dir.path());
        c.current_dir(self.ws())
            .env("ANTHROPIC_API_KEY", KEY)
            .env("ANTHROPIC_BASE_URL", server.base_url())
            .args(["--window", "40000", "--headroom", "10000", "--yes"])
            .args(args);
        c
    }

    pub(super) async fn run(&self, server: &FakeServer, args: &[&str]) -> Output {
        let c = self.command(server, args);
        crate::support::headless::run(c).await.output
    }

    /// The step's record in the only run's ledger.
    pub(super) fn step(&self) -> Value {
        let runs = self.dir.path().join("data/flower/runs");
        let run = fs::read_dir(&runs)
            .unwrap()
            .flatten()
            .next()
            .unwrap()
            .path();
        let m: Value =
            serde_json::from_str(&fs::read_to_string(run.join("manifest.json")).unwrap()).unwrap();
        m["steps"][0].clone()
    }
}

/// The `restore` event of a `-p /undo` or `-p /redo` run.
pub(super) fn restore_event(out: &Output) -> Value {
    lines(out)
        .into_iter()
        .find(|e| e["type"] == "restore")
        .unwrap_or_else(|| panic!("no restore event: {}", stderr(out)))
}

pub(super) fn paths(report: &Value) -> Vec<String> {
    report["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            f["path"]
                .as_str()
                .unwrap_or_else(|| f.as_str().unwrap())
                .to_string()
        })
        .collect()
}

#[tokio::test]
async fn undo_and_redo_restore_a_scripted_turn_byte_for_byte() {
    let server = FakeServer::start().await;
    let home = Home::new();
    let ws = home.ws();
    fs::write(ws.join("a.txt"), "one\ntwo\n").unwrap();
    fs::write(ws.join("gone.txt"), b"bye\x00\xff\n").unwrap();
    fs::write(ws.join("run.sh"), "echo hi\n").unwrap();
    fs::set_permissions(ws.join("run.sh"), fs::Permissions::from_mode(0o644)).unwrap();
    fs::create_dir(ws.join("src")).unwrap();
    fs::write(ws.join("src/lib.rs"), "fn main() {}\n").unwrap();
    let before = state(&ws);

    server.push(
        Stream::new(u(1_000))
            .tool("w1", "write_file", r#"{"path":"src/new.rs","content":"pub fn f() {}\n"}"#)
            .tool(
                "e1",
                "edit_file",
                r#"{"path":"a.txt","old_string":"two","new_string":"TWO"}"#,
            )
            .tool(
                "b1",
                "bash",
                r#"{"command":"rm gone.txt && printf 'appended\\n' >> src/lib.rs && chmod +x run.sh"}"#,
            )
            .reply(),
    );
    server.script().at(1_200).text("done");
    let out = home.run(&server, &["-p", "change things"]).await;
    assert_success(&out);
    let after = state(&ws);
    assert_eq!(after["a.txt"].1, b"one\nTWO\n");
    assert!(!after.contains_key("gone.txt"));
    assert_eq!(after["run.sh"].0, 0o755);
    assert_eq!(after["src/lib.rs"].1, b"fn main() {}\nappended\n");
    assert_eq!(after["src/new.rs"].1, b"pub fn f() {}\n");

    // The ledger: a checkpoint before the first call, the turn's end state with its files.
    let step = home.step();
    let kinds = each_str(&step["checkpoints"], "kind");
    assert_eq!(kinds, ["before", "after"]);
    let end = &step["checkpoints"][1];
    assert_eq!(
        (end["turn"].as_u64(), end["generation"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(
        end["files"],
        serde_json::json!(["a.txt", "gone.txt", "run.sh", "src/lib.rs", "src/new.rs"])
    );

    let out = home.run(&server, &["--continue", "-p", "/undo"]).await;
    assert_success(&out);
    assert_eq!(state(&ws), before, "every byte and mode back");
    let report = restore_event(&out);
    assert_eq!(report["outcome"], "restored");
    assert_eq!(report["action"], "undo");
    assert_eq!(paths(&report).len(), 5);
    let result = lines(&out).pop().unwrap();
    assert_eq!(result["type"], "result");
    assert!(
        result["text"]
            .as_str()
            .unwrap()
            .contains("removed src/new.rs"),
        "{result}"
    );

    // Nothing further back.
    let out = home.run(&server, &["--continue", "-p", "/undo"]).await;
    assert_exit(&out, 1);
    assert_eq!(restore_event(&out)["outcome"], "nothing");

    let out = home.run(&server, &["--continue", "-p", "/redo"]).await;
    assert_success(&out);
    assert_eq!(state(&ws), after, "the turn's state again");

    // The user changes a file the turn changed: undo names it and restores nothing.
    fs::write(ws.join("a.txt"), "mine\n").unwrap();
    let mine = state(&ws);
    let out = home.run(&server, &["--continue", "-p", "/undo"]).await;
    assert_exit(&out, 1);
    let report = restore_event(&out);
    assert_eq!(report["outcome"], "conflict");
    assert_eq!(report["files"], serde_json::json!(["a.txt"]));
    assert!(
        lines(&out).pop().unwrap()["text"]
            .as_str()
            .unwrap()
            .contains("a.txt")
    );
    assert_eq!(state(&ws), mine, "nothing written over");
    let kinds: Vec<String> = home.step()["checkpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["kind"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(kinds, ["before", "after", "undo", "redo"]);
}

#[tokio::test]
async fn undo_walks_back_across_a_handoff_into_the_earlier_generation() {
    let server = FakeServer::start().await;
    let home = Home::new();
    let ws = home.ws();
    fs::write(ws.join("keep.txt"), "kept\n").unwrap();
    let start = state(&ws);

    // Generation 1: a turn writes one.txt; the handoff after it starts generation 2.
    server
        .script()
        .tool("write_file", r#"{"path":"one.txt","content":"1\n"}"#)
        .at(1_500)
        .text("## Doing\nWriting files.\n## Next\nMore.\n")
        .at(1_200)
        .text("first done");
    let out = home
        .run(&server, &["-p", "first", "--handoff-after", "1"])
        .await;
    assert_success(&out);
    let after_one = state(&ws);
    // Generation 2: a turn overwrites keep.txt.
    server
        .script()
        .tool("bash", r#"{"command":"printf 'changed\\n' > keep.txt"}"#)
        .at(1_200)
        .text("second done");
    let out = home.run(&server, &["--continue", "-p", "second"]).await;
    assert_success(&out);
    assert_file(ws.join("keep.txt"), b"changed\n");

    let step = home.step();
    let handoff = step["checkpoints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["kind"] == "handoff")
        .expect("the handoff is a checkpoint")
        .clone();
    assert_eq!(handoff["generation"], 1);
    assert_eq!(handoff["files"], serde_json::json!(["one.txt"]));

    let out = home.run(&server, &["--continue", "-p", "/undo"]).await;
    assert_success(&out);
    let report = restore_event(&out);
    assert_eq!(report["of"]["generation"], 2);
    assert_eq!(state(&ws), after_one);
    let out = home.run(&server, &["--continue", "-p", "/undo"]).await;
    assert_success(&out);
    let report = restore_event(&out);
    assert_eq!(report["of"]["generation"], 1, "into the earlier generation");
    assert_eq!(state(&ws), start);
    let out = home.run(&server, &["--continue", "-p", "/redo"]).await;
    assert_success(&out);
    assert_eq!(state(&ws), after_one);
}

/// `-p "/undo skip"` and `-p "/undo overwrite"` do what they do in the TUI; `-p /rewind` and an
/// unknown option are refused (exit 2). None of them is ever sent to the model as a task.
#[tokio::test]
async fn headless_undo_options_are_commands_never_tasks_for_the_model() {
    let server = FakeServer::start().await;
    let home = Home::new();
    let ws = home.ws();
    fs::write(ws.join("a.txt"), "a\n").unwrap();
    fs::write(ws.join("b.txt"), "b\n").unwrap();
    server
        .script()
        .tool(
            "bash",
            r#"{"command":"printf 'A\\n' >> a.txt && printf 'B\\n' >> b.txt"}"#,
        )
        .at(1_200)
        .text("done");
    let out = home.run(&server, &["-p", "change things"]).await;
    assert_success(&out);
    let asked = server.requests().len();

    for refused in ["/rewind", "/undo now", "/redo skip please"] {
        let out = home.run(&server, &["--continue", "-p", refused]).await;
        assert_eq!(out.status.code(), Some(2), "{refused}: {}", stderr(&out));
        assert!(stderr(&out).contains(refused.split(' ').next().unwrap()));
    }

    // The user changed a.txt: skip keeps it and restores b.txt.
    fs::write(ws.join("a.txt"), "mine\n").unwrap();
    let out = home.run(&server, &["--continue", "-p", "/undo skip"]).await;
    assert_success(&out);
    assert_eq!(restore_event(&out)["action"], "undo");
    assert_file(ws.join("a.txt"), b"mine\n");
    assert_file(ws.join("b.txt"), b"b\n");

    // Redo, then overwrite: the turn's version of a.txt is written over the user's.
    let out = home
        .run(&server, &["--continue", "-p", "/redo overwrite"])
        .await;
    assert_success(&out);
    assert_file(ws.join("b.txt"), b"b\nB\n");
    fs::write(ws.join("a.txt"), "mine again\n").unwrap();
    let out = home
        .run(&server, &["--continue", "-p", "/undo overwrite"])
        .await;
    assert_success(&out);
    assert_file(ws.join("a.txt"), b"a\n");
    assert_file(ws.join("b.txt"), b"b\n");

    assert_eq!(
        server.requests().len(),
        asked,
        "no command reached the model"
    );
}

/// A file name holding an escape sequence is listed by `-p /undo --output text` without it: the
/// workspace's names never reach the terminal as control sequences.
#[tokio::test]
async fn headless_text_output_keeps_escapes_in_file_names_off_the_terminal() {
    use std::os::unix::ffi::OsStrExt;
    let server = FakeServer::start().await;
    let home = Home::new();
    let ws = home.ws();
    let name = std::ffi::OsStr::from_bytes(b"n\xff\x1b]0;pwned\x07\x1b[31mred.txt");
    fs::write(ws.join(name), "x\n").unwrap();
    server
        .script()
        .tool(
            "bash",
            r#"{"command":"for f in n*; do printf 'y\\n' >> \"$f\"; done"}"#,
        )
        .at(1_200)
        .text("done");
    let out = home.run(&server, &["-p", "change it"]).await;
    assert_success(&out);
    assert_file(ws.join(name), b"x\ny\n");

    let out = home
        .run(&server, &["--continue", "--output", "text", "-p", "/undo"])
        .await;
    assert_success(&out);
    assert_file(ws.join(name), b"x\n");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_contains(&stdout, "red.txt");
    assert!(!out.stdout.contains(&0x1b), "{stdout:?}");
    assert!(!out.stdout.contains(&0x07), "{stdout:?}");
}

/// A resumed session's prompt is made beside the engine: `/undo` in a repository whose
/// `git status` hangs restores without waiting for it (no prompt is ever taken) and stops it on
/// its way out rather than leave it running; the next session's request still carries the
/// environment, the status included.
#[tokio::test]
async fn an_undo_does_not_wait_for_the_environments_git_status() {
    use crate::support::files::git;
    let server = FakeServer::start().await;
    let home = Home::new();
    let ws = home.ws();
    fs::write(ws.join("a.txt"), "one\n").unwrap();
    git(&ws, &["init", "-q"]);
    git(&ws, &["add", "a.txt"]);
    git(&ws, &["commit", "-qm", "one"]);
    let before = state(&ws);
    server
        .script()
        .tool("bash", r#"{"command":"printf 'two\\n' >> a.txt"}"#)
        .at(1_200)
        .text("appended");
    assert_success(&home.run(&server, &["-p", "append"]).await);
    assert_eq!(state(&ws)["a.txt"].1, b"one\ntwo\n");

    // A `git` first on PATH whose `status` writes its pid and hangs; the rest is the real git.
    let real = String::from_utf8(
        Command::new("sh")
            .args(["-c", "command -v git"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let (bin_dir, mark) = (
        home.dir.path().join("bin"),
        home.dir.path().join("status.pid"),
    );
    fs::create_dir(&bin_dir).unwrap();
    let fake = bin_dir.join("git");
    fs::write(
        &fake,
        format!(
            "#!/bin/sh\nfor a in \"$@\"; do\n  if [ \"$a\" = status ]; then echo $$ > '{}'; exec sleep 120; fi\ndone\nexec '{}' \"$@\"\n",
            mark.display(),
            real.trim()
        ),
    )
    .unwrap();
    fs::set_permissions(&fake, fs::Permissions::from_mode(0o755)).unwrap();
    let mut undo = home.command(&server, &["--continue", "-p", "/undo"]);
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap());
    undo.env("PATH", path);
    let out = crate::support::headless::run(undo).await.output;
    assert_success(&out);
    assert_eq!(restore_event(&out)["outcome"], "restored");
    assert_eq!(state(&ws), before, "the turn is undone");
    let events = lines(&out);
    assert!(
        !events.iter().any(|e| e["type"] == "session_prompt"),
        "the undo waited for the session's prompt: {}",
        stderr(&out)
    );
    // The status may still be starting as the process ends (its pid then comes a moment
    // later), or never start at all; once started it is stopped, not left behind.
    let pid = (0..40).find_map(|_| {
        let pid = fs::read_to_string(&mark).ok().filter(|p| p.ends_with('\n'));
        if pid.is_none() {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        pid
    });
    if let Some(pid) = pid {
        let stat = format!("/proc/{}/stat", pid.trim());
        let running = || {
            fs::read_to_string(&stat).is_ok_and(|s| {
                !s.rsplit(')')
                    .next()
                    .is_some_and(|r| r.trim_start().starts_with('Z'))
            })
        };
        let gone = (0..100).any(|_| {
            std::thread::sleep(std::time::Duration::from_millis(50));
            !running()
        });
        let _ = Command::new("kill").args(["-9", pid.trim()]).status();
        assert!(gone, "the status was left running after the process");
    }

    // With the real git, the next session's request carries the environment and its status.
    fs::write(ws.join("b.txt"), "new\n").unwrap();
    server.script().text("noted");
    assert_success(
        &home
            .run(&server, &["--continue", "-p", "what changed?"])
            .await,
    );
    let last = server.requests().pop().unwrap();
    let system = last["system"].to_string();
    assert_contains(&system, "# Environment");
    assert_contains(&system, "?? b.txt");
}
