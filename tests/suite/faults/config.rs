//! Configuration edge cases: each a one-line error naming the key (exit 2), or a warning.

use super::super::cli::{bin, lines, stderr};
use crate::support::fake::{FakeServer, U, anthropic as a};
use crate::support::harness::KEY;

/// Run `flower-tui ARGS` in `home` with `config.toml` holding `file`.
fn run_with(home: &std::path::Path, file: &str, args: &[&str]) -> std::process::Output {
    let cfg = home.join("config/flower");
    std::fs::create_dir_all(&cfg).unwrap();
    std::fs::write(cfg.join("config.toml"), file).unwrap();
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
async fn a_handoff_line_at_the_window_is_a_warning() {
    let server = FakeServer::start().await;
    server.push(a::text("fine", U::new(500, 5)));
    let home = tempfile::tempdir().unwrap();
    let mut c = bin(home.path());
    c.env("ANTHROPIC_API_KEY", KEY)
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .args(["-p", "hi", "-v", "--window", "9000"]);
    let out = tokio::task::spawn_blocking(move || c.output().unwrap())
        .await
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("warning: the handoff line (10.0K) is at or above the window (9K)"),
        "{err}"
    );
    // The engine says it too (the TUI shows it; headless prints the event).
    let warned = lines(&out).into_iter().any(|e| {
        e["type"] == "warning"
            && e["message"]
                .as_str()
                .is_some_and(|m| m.contains("at or above the window"))
    });
    assert!(warned);
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
    assert!(err.contains(".flower is a file, not a directory"), "{err}");
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
    assert!(
        err.contains(&format!("--run-dir {}: not a directory", file.display())),
        "{err}"
    );
}
