//! The window of well-known models: Claude takes 200,000 unless `[1m]` asks for the 1M beta,
//! which is sent as a header with the marker stripped; a learned window beats the table, `--window`
//! beats both, and `-v` says which one is in force.

use std::path::Path;
use std::process::{Command, Output};

use flower_tui::engine::provider::known_windows::CONTEXT_1M_BETA;
use flower_tui::engine::types::Message;

use super::{anthropic, request, run as provider_run};
use crate::support::check::assert_success;
use crate::support::fake::{FakeServer, U};
use crate::support::files::write;
use crate::support::headless::{bin_for, run};

#[tokio::test]
async fn the_1m_marker_becomes_the_beta_header_and_leaves_the_model_id() {
    let server = FakeServer::start().await;
    server
        .script()
        .usage(U::new(1, 1))
        .text("big")
        .text("normal");
    let p = anthropic(&server);
    let mut req = request(vec![Message::user("hi")]);
    req.model = "claude-sonnet-4-5[1m]".into();
    provider_run(&p, &req).await.0.unwrap();
    req.model = "claude-sonnet-4-5".into();
    provider_run(&p, &req).await.0.unwrap();
    let rec = server.recorded();
    assert_eq!(rec[0].body["model"], "claude-sonnet-4-5");
    assert_eq!(rec[0].header("anthropic-beta"), Some(CONTEXT_1M_BETA));
    assert_eq!(rec[1].body["model"], "claude-sonnet-4-5");
    assert_eq!(rec[1].header("anthropic-beta"), None);
}

fn bin(home: &Path, server: &FakeServer, model: &str, args: &[&str]) -> Command {
    let mut c = bin_for(home, server);
    c.env("ANTHROPIC_MODEL", model)
        .args(["-p", "hi", "-v"])
        .args(args);
    c
}

async fn output(c: Command) -> Output {
    run(c).await.output
}

/// The `window:` line of `-v`.
fn window_line(out: &Output) -> String {
    assert_success(out);
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .find(|l| l.starts_with("window:"))
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn verbose_names_the_source_and_the_precedence_holds() {
    let server = FakeServer::start().await;
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    for _ in 0..5 {
        server.script().usage(U::new(10, 1)).text("ok");
    }
    let line = window_line(&output(bin(h, &server, "claude-sonnet-4-5", &[])).await);
    assert_eq!(
        line,
        "window: 200000 (model table: Claude on the Anthropic API)"
    );
    let line = window_line(&output(bin(h, &server, "claude-sonnet-4-5[1m]", &[])).await);
    assert_eq!(line, "window: 1000000 (1m marker in the model name)");
    let sent = server.recorded();
    assert_eq!(sent[1].body["model"], "claude-sonnet-4-5");
    assert_eq!(sent[1].header("anthropic-beta"), Some(CONTEXT_1M_BETA));
    assert_eq!(sent[0].header("anthropic-beta"), None);

    // A window learned from an overflow message beats the table; --window beats both.
    let data = h.join("data/flower");
    write(
        &data.join("windows.json"),
        r#"{"claude-sonnet-4-5": 180000}"#,
    );
    let line = window_line(&output(bin(h, &server, "claude-sonnet-4-5", &[])).await);
    assert_eq!(line, "window: 180000 (learned from an overflow message)");
    let line =
        window_line(&output(bin(h, &server, "claude-sonnet-4-5", &["--window", "300k"])).await);
    assert_eq!(line, "window: 300000 (--window)");
    let line = window_line(&output(bin(h, &server, "some-local-model", &[])).await);
    assert_eq!(line, "window: 1000000 (default for the model name)");
}
