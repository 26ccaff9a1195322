//! read_file, write_file, edit_file.

use super::Ws;
use serde_json::json;
use std::os::unix::fs::PermissionsExt;

#[tokio::test]
async fn write_then_edit_then_read() {
    let ws = Ws::new();
    let out = ws
        .ok(
            "write_file",
            json!({"path": "src/lib.rs", "content": "fn a() {}\nfn b() {}\n"}),
        )
        .await;
    assert_eq!(out, "Created src/lib.rs (20 bytes, 2 lines).");
    let out = ws
        .ok(
            "edit_file",
            json!({"path": "src/lib.rs", "old_string": "fn b() {}", "new_string": "fn b() {\n    a();\n}"}),
        )
        .await;
    assert_eq!(
        out,
        "Edited src/lib.rs: replaced 1 occurrence.\n     1\tfn a() {}\n     2\tfn b() {\n     3\t    a();\n     4\t}\n"
    );
    let out = ws.ok("read_file", json!({"path": "src/lib.rs"})).await;
    assert_eq!(
        out,
        "     1\tfn a() {}\n     2\tfn b() {\n     3\t    a();\n     4\t}\n"
    );
    let out = ws
        .ok("write_file", json!({"path": "src/lib.rs", "content": "x"}))
        .await;
    assert_eq!(out, "Overwrote src/lib.rs (1 bytes, 1 lines).");
    assert_eq!(ws.read("src/lib.rs"), "x");
}

#[tokio::test]
async fn write_keeps_the_executable_bit_and_refuses_directories() {
    let ws = Ws::new();
    ws.write("run.sh", "echo 1\n");
    let p = ws.root().join("run.sh");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    ws.ok(
        "write_file",
        json!({"path": "run.sh", "content": "echo 2\n"}),
    )
    .await;
    ws.ok(
        "edit_file",
        json!({"path": "run.sh", "old_string": "2", "new_string": "3"}),
    )
    .await;
    assert_eq!(
        std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
        0o755
    );
    assert_eq!(ws.read("run.sh"), "echo 3\n");
    std::fs::create_dir(ws.root().join("d")).unwrap();
    let e = ws
        .err("write_file", json!({"path": "d", "content": ""}))
        .await;
    assert!(e.contains("is a directory"), "{e}");
    let e = ws.err("write_file", json!({"path": "a.txt"})).await;
    assert!(e.contains("`content`"), "{e}");
}

#[tokio::test]
async fn edit_zero_matches_shows_candidates() {
    let ws = Ws::new();
    ws.write("a.py", "def f():\n\treturn 1\n\ndef g():\n    return 2\n");
    // Indentation differs: spaces instead of the file's tab.
    let e = ws
        .err(
            "edit_file",
            json!({"path": "a.py", "old_string": "def f():\n    return 1", "new_string": "x"}),
        )
        .await;
    assert!(e.starts_with("`old_string` was not found in a.py."), "{e}");
    assert!(e.contains("match when whitespace is ignored"), "{e}");
    assert!(e.contains("     1\tdef f():\n     2\t\treturn 1\n"), "{e}");
    // Right first line, wrong continuation.
    let e = ws
        .err(
            "edit_file",
            json!({"path": "a.py", "old_string": "def g():\n    return 3", "new_string": "x"}),
        )
        .await;
    assert!(e.contains("     4\tdef g():"), "{e}");
    // A near miss.
    let e = ws
        .err(
            "edit_file",
            json!({"path": "a.py", "old_string": "    return 22;", "new_string": "x"}),
        )
        .await;
    assert!(
        e.contains("most similar") && e.contains("     5\t    return 2"),
        "{e}"
    );
    assert_eq!(
        ws.read("a.py"),
        "def f():\n\treturn 1\n\ndef g():\n    return 2\n"
    );
}

#[tokio::test]
async fn edit_multiple_matches_lists_them_and_replace_all_works() {
    let ws = Ws::new();
    ws.write("m.rs", "let a = 1;\nlet b = a;\nlet c = 1;\n");
    let e = ws
        .err(
            "edit_file",
            json!({"path": "m.rs", "old_string": "= 1", "new_string": "= 2"}),
        )
        .await;
    assert!(e.contains("occurs 2 times in m.rs"), "{e}");
    assert!(
        e.contains("     1\tlet a = 1;\n     3\tlet c = 1;\n"),
        "{e}"
    );
    assert!(e.contains("replace_all"));
    let out = ws
        .ok(
            "edit_file",
            json!({"path": "m.rs", "old_string": "= 1", "new_string": "= 2", "replace_all": true}),
        )
        .await;
    assert!(
        out.starts_with("Edited m.rs: replaced 2 occurrences."),
        "{out}"
    );
    assert_eq!(ws.read("m.rs"), "let a = 2;\nlet b = a;\nlet c = 2;\n");
}

#[tokio::test]
async fn edit_refusals() {
    let ws = Ws::new();
    ws.write("t.txt", "same\n");
    let e = ws
        .err(
            "edit_file",
            json!({"path": "t.txt", "old_string": "same", "new_string": "same"}),
        )
        .await;
    assert!(e.contains("identical"), "{e}");
    let e = ws
        .err(
            "edit_file",
            json!({"path": "t.txt", "old_string": "", "new_string": "x"}),
        )
        .await;
    assert!(e.contains("use write_file"), "{e}");
    let e = ws
        .err(
            "edit_file",
            json!({"path": "tt.txt", "old_string": "a", "new_string": "b"}),
        )
        .await;
    assert!(
        e.contains("File not found: tt.txt. Did you mean: t.txt?"),
        "{e}"
    );
    ws.write("bin", b"\x00\x01\x02");
    let e = ws
        .err(
            "edit_file",
            json!({"path": "bin", "old_string": "a", "new_string": "b"}),
        )
        .await;
    assert!(e.contains("binary"), "{e}");
    ws.write("latin1.txt", b"caf\xe9\n");
    let e = ws
        .err(
            "edit_file",
            json!({"path": "latin1.txt", "old_string": "caf", "new_string": "b"}),
        )
        .await;
    assert!(e.contains("not valid UTF-8"), "{e}");
}

#[tokio::test]
async fn edit_crlf_file_with_lf_strings() {
    let ws = Ws::new();
    ws.write("w.txt", "one\r\ntwo\r\nthree\r\n");
    ws.ok(
        "edit_file",
        json!({"path": "w.txt", "old_string": "one\ntwo", "new_string": "1\n2"}),
    )
    .await;
    assert_eq!(ws.read("w.txt"), "1\r\n2\r\nthree\r\n");
}

#[tokio::test]
async fn read_pages_with_offset_and_limit() {
    let ws = Ws::new();
    let body: String = (1..=10).map(|i| format!("l{i}\n")).collect();
    ws.write("ten.txt", body);
    let out = ws
        .ok(
            "read_file",
            json!({"path": "ten.txt", "offset": 4, "limit": 2}),
        )
        .await;
    assert_eq!(
        out,
        "     4\tl4\n     5\tl5\n\n(showing lines 4-5 of 10; continue with offset=6.)"
    );
    let out = ws
        .ok("read_file", json!({"path": "ten.txt", "offset": "9"}))
        .await;
    assert_eq!(out, "     9\tl9\n    10\tl10\n");
    let e = ws
        .err("read_file", json!({"path": "ten.txt", "limit": 0}))
        .await;
    assert!(e.contains("at least 1"), "{e}");
}

#[tokio::test]
async fn read_binary_non_utf8_directories_and_missing_files() {
    let ws = Ws::new();
    let mut elf = b"\x7fELF\x02\x01\x01\x00".to_vec();
    elf.extend(vec![0u8; 92]);
    ws.write("prog", &elf);
    let e = ws.err("read_file", json!({"path": "prog"})).await;
    assert_eq!(
        e,
        "prog is a binary file (100 bytes); read_file only shows text."
    );
    // A file that starts like a PNG is read as an image: a broken one says so.
    let mut png = b"\x89PNG\r\n\x1a\n\x00\x00".to_vec();
    png.extend(vec![7u8; 90]);
    ws.write("img.png", &png);
    let e = ws.err("read_file", json!({"path": "img.png"})).await;
    assert!(
        e.starts_with("Cannot read the image img.png: the PNG image could not be decoded"),
        "{e}"
    );
    ws.write("latin1.txt", b"caf\xe9\nok\n");
    let out = ws.ok("read_file", json!({"path": "latin1.txt"})).await;
    assert!(
        out.starts_with("(Note: this file is not valid UTF-8"),
        "{out}"
    );
    assert!(out.contains("     1\tcaf\u{fffd}\n     2\tok\n"), "{out}");
    ws.write("src/main.rs", "fn main() {}\n");
    let e = ws.err("read_file", json!({"path": "src"})).await;
    assert!(
        e.contains("is a directory") && e.contains("list_dir"),
        "{e}"
    );
    let e = ws.err("read_file", json!({"path": "src/mian.rs"})).await;
    assert_eq!(e, "File not found: src/mian.rs. Did you mean: src/main.rs?");
    let e = ws.err("read_file", json!({"path": "nope/x.rs"})).await;
    assert!(e.contains("does not exist either"), "{e}");
    ws.write("empty.txt", "");
    assert_eq!(
        ws.ok("read_file", json!({"path": "empty.txt"})).await,
        "(empty.txt is empty.)"
    );
}

#[tokio::test]
async fn read_huge_file_pages_under_the_cap() {
    let ws = Ws::new();
    let line = "y".repeat(199);
    let body: String = (0..3000).map(|_| format!("{line}\n")).collect();
    ws.write("big.txt", body);
    let out = ws.ok("read_file", json!({"path": "big.txt"})).await;
    assert!(out.len() <= 100_200, "{}", out.len());
    let tail = &out[out.len() - 100..];
    assert!(tail.contains("of 3000; continue with offset="), "{tail}");
}

#[tokio::test]
async fn read_refuses_pipes_instead_of_hanging() {
    let ws = Ws::new();
    let fifo = ws.root().join("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let e = tokio::time::timeout(
        std::time::Duration::from_secs(5),
        ws.err("read_file", json!({"path": "fifo"})),
    )
    .await
    .expect("read_file hung on a pipe");
    assert!(e.contains("not a regular file"), "{e}");
}

#[tokio::test]
async fn file_tools_carry_their_diff_and_preview_writes_nothing() {
    use crate::engine::diff::{FileChange, LineKind};
    use crate::engine::tools::preview;
    let ws = Ws::new();
    let out = ws
        .call(
            "write_file",
            json!({"path": "a.txt", "content": "one\ntwo\n"}),
        )
        .await;
    let d = out.diff.expect("a new file has a diff");
    assert_eq!((d.change, d.added, d.removed), (FileChange::Created, 2, 0));
    assert_eq!(d.path, "a.txt");
    // The model's result stays the short text.
    assert_eq!(out.content, "Created a.txt (8 bytes, 2 lines).");

    let input = json!({"path": "a.txt", "old_string": "two", "new_string": "TWO"});
    let shown = preview("edit_file", &input, &ws.ctx).unwrap().unwrap();
    assert_eq!(ws.read("a.txt"), "one\ntwo\n", "a preview writes nothing");
    let out = ws.call("edit_file", input).await;
    let d = out.diff.expect("an edit has a diff");
    assert_eq!(
        d.hunks, shown.hunks,
        "the preview is the diff that was made"
    );
    let kinds: Vec<_> = d.hunks[0].lines.iter().map(|l| l.kind).collect();
    assert_eq!(
        kinds,
        [LineKind::Context, LineKind::Removed, LineKind::Added]
    );

    // Overwriting shows old against new; a failing call previews as its error.
    let input = json!({"path": "a.txt", "content": "one\n"});
    let d = preview("write_file", &input, &ws.ctx).unwrap().unwrap();
    assert_eq!((d.change, d.added, d.removed), (FileChange::Modified, 0, 1));
    let bad = json!({"path": "a.txt", "old_string": "nope", "new_string": "x"});
    let err = preview("edit_file", &bad, &ws.ctx).unwrap_err();
    assert!(err.0.contains("was not found"), "{}", err.0);
    assert_eq!(
        preview("read_file", &json!({"path": "a.txt"}), &ws.ctx),
        Ok(None)
    );
    // A binary file being overwritten has no diff, and the write still happens.
    ws.write("b.bin", [0u8, 159, 146, 150]);
    let out = ws
        .call("write_file", json!({"path": "b.bin", "content": "text\n"}))
        .await;
    assert!(!out.is_error && out.diff.is_none());
    // Reading outside the workspace to preview is allowed; writing there is not.
    let outside = json!({"path": "../x.txt", "content": "x"});
    assert!(preview("write_file", &outside, &ws.ctx).unwrap().is_some());
    assert!(ws.call("write_file", outside).await.is_error);
}

#[tokio::test]
async fn the_file_tools_do_not_write_a_repositorys_git() {
    let ws = Ws::new();
    ws.write(".git/config", "[core]\n");
    ws.write("sub/.git", "gitdir: ../.git/worktrees/sub\n");
    for path in [
        ".git/config",
        ".git/hooks/pre-commit",
        "sub/.git",
        "./src/../.git/x",
    ] {
        let e = ws
            .err("write_file", json!({"path": path, "content": "x"}))
            .await;
        assert!(
            e.contains("which the file tools do not write"),
            "{path}: {e}"
        );
    }
    let e = ws
        .err(
            "edit_file",
            json!({"path": ".git/config", "old_string": "[core]", "new_string": "[core]\n\tfsmonitor = evil"}),
        )
        .await;
    assert!(e.contains("which the file tools do not write"), "{e}");
    assert_eq!(ws.read(".git/config"), "[core]\n");
    assert_eq!(ws.read("sub/.git"), "gitdir: ../.git/worktrees/sub\n");
    // A name that only starts like it is an ordinary file, and reading `.git` still works.
    ws.ok(
        "write_file",
        json!({"path": ".gitignore", "content": "target\n"}),
    )
    .await;
    ws.ok("write_file", json!({"path": "a.git/x", "content": "x"}))
        .await;
    assert_eq!(
        ws.ok("read_file", json!({"path": ".git/config"})).await,
        "     1\t[core]\n"
    );
}
