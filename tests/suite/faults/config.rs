//! Configuration edge cases: each a one-line error naming the key (exit 2), or a warning.

use crate::support::check::{assert_contains, assert_success};
use crate::support::fake::{FakeServer, U};
use crate::support::files::write;
use crate::support::harness::KEY;
use crate::support::headless::{bin, bin_for, lines, stderr};

/// Run `flower-tui ARGS` in `home` with `config.toml` holding `file`.
fn run_with(home: &std::path::Path, file: &str, args: &[&str]) -> std::process::Output {
    let cfg = home.join("config/flower");
    write(&cfg.join("config.toml"), file);
    bin(home).args(args).output().unwrap()
}

#[test]
fn config_edge_cases_are_one_line_naming_the_key_with_exit_2() {
    let home = tempfile::tempdir().unwrap();
    // (config file, flags, what the one line names)
    let table: [(&str, &[&str], &[&str]); 8] = [
        ("[window]\nsize = 3\n", &[], &["`window`", "table"]),
        ("max_tokens = 0\n", &[], &["`max_tokens`", "≥ 1"]),
        (
            "base_url = \"localhost:8080\"\n",
            &[],
            &["`base_url`", "http(s)"],
        ),
        ("base_url = \"/v1\"\n", &[], &["`base_url`", "absolute"]),
        ("window = \"huge\"\n", &[], &["`window`", "200k"]),
        ("", &["--review", "-3"], &["--review", "-3", "off"]),
        ("", &["--window", "-3"], &["--window", "-3", "200k"]),
        ("", &["--headroom", "lots"], &["--headroom", "lots"]),
    ];
    for (file, flags, want) in table {
        let mut args = vec!["-p", "x", "--demo"];
        args.extend_from_slice(flags);
        let out = run_with(home.path(), file, &args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{file:?} {flags:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        for w in want {
            assert!(err.contains(w), "{file:?} {flags:?}: {w:?} missing: {err}");
        }
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn a_window_in_the_file_is_read_as_the_flag_reads_it() {
    let home = tempfile::tempdir().unwrap();
    let out = run_with(
        home.path(),
        "window = \"200k\"\nheadroom = \"20k\"\n",
        &["-p", "fix the calculator", "--demo", "-v"],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("window: 200000") && err.contains("at: 180000"),
        "{err}"
    );
}

#[tokio::test]
async fn a_small_window_scales_the_line_and_a_floor_too_large_for_it_is_a_warning() {
    let server = FakeServer::start().await;
    // Usage too small to calibrate the token estimates from (they stay at 4 characters a token).
    server
        .script()
        .usage(U::new(150, 5))
        .text("fine")
        .text("fine");
    let home = tempfile::tempdir().unwrap();
    let run = |home: &std::path::Path| {
        let mut c = bin_for(home, &server);
        c.args(["-p", "hi", "-v", "--window", "9000"]);
        tokio::task::spawn_blocking(move || c.output().unwrap())
    };
    let out = run(home.path()).await.unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    // The 10k floor would be above the window: the line leaves the document's 2,250 free.
    assert!(
        err.contains("\nat: 5625\n") && err.contains("\nprompt: lean"),
        "{err}"
    );
    let floor_warning = |out: &std::process::Output| {
        lines(out).into_iter().any(|e| {
            e["type"] == "warning"
                && e["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("the session's own prompt"))
        })
    };
    assert!(!floor_warning(&out), "the lean floor fits a 9K window");
    // Project instructions of some 4,000 tokens take the floor over a third of the window.
    std::fs::write(
        home.path().join("AGENTS.md"),
        "Always run the whole test suite before you say anything works.\n".repeat(250),
    )
    .unwrap();
    let out = run(home.path()).await.unwrap();
    assert_success(&out);
    assert!(
        floor_warning(&out),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn a_dot_flower_file_and_a_bad_run_dir_are_named() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join(".flower"), "a file").unwrap();
    let mut c = bin(home.path());
    c.env("ANTHROPIC_API_KEY", KEY).args(["-p", "x"]);
    let out = c.output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_contains(&err, ".flower is a file, not a directory");
    std::fs::remove_file(home.path().join(".flower")).unwrap();
    let file = home.path().join("not-a-dir");
    std::fs::write(&file, "x").unwrap();
    let mut c = bin(home.path());
    let out = c
        .args(["-p", "x", "--demo", "--run-dir"])
        .arg(&file)
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_contains(
        &err,
        &format!("--run-dir {}: not a directory", file.display()),
    );
}
