//! `web_fetch` through the engine against a real local web server: a page on a host the config
//! allows comes back as Markdown without its scripts; the same URL without the allowance is
//! refused before any byte is sent (the server sees no connection); a redirect to a private
//! address is refused; a name that resolves to 127.0.0.1 is refused; in the TUI the user may
//! approve a private address for one call, and "always" is not offered for it.

use flower_tui::engine::policy::{ApprovalPolicy, FrontEnd};
use flower_tui::engine::protocol::{Approval, Event, ExitReason, Op};
use flower_tui::engine::tools::web_fetch::WebAccess;

use super::page_server::{Page, PageServer};
use crate::support::fake::{U, anthropic as a};
use crate::support::harness::{Harness, exit_reason, start};

const PAGE: &str = r#"<!doctype html><html><head><title>Widget docs</title>
<script>window.tracker = "SCRIPT-SECRET";</script><style>.x{color:red}</style></head>
<body><nav><a href="/">Home</a> <a href="/blog">Blog</a></nav>
<main><h1>Installing widgets</h1><p>Run <code>widget init</code> first.</p>
<ul><li>fast</li><li>small</li></ul>
<table><tr><th>flag</th><th>meaning</th></tr><tr><td>-q</td><td>quiet</td></tr></table>
<script>console.log("INLINE-SECRET")</script></main><footer>© Widgets</footer></body></html>"#;

/// One turn in which the model fetches `url`; the content of the call's result.
async fn fetch_turn(h: &Harness, access: WebAccess, url: &str) -> (String, bool) {
    let mut p = h.params(200_000, 20_000);
    p.tools.web = access;
    h.server.push(a::tool_use(
        "f1",
        "web_fetch",
        &serde_json::json!({ "url": url }).to_string(),
        U::new(1000, 10),
    ));
    h.server.push(a::text("read it", U::new(1200, 10)));
    let mut r = start(p);
    let events = r.turn("read the docs").await;
    assert_eq!(
        exit_reason(&events),
        Some(ExitReason::Completed),
        "{events:#?}"
    );
    r.shutdown().await;
    let body = h.server.requests().last().cloned().unwrap();
    let result = a::tool_results(&body).into_iter().next().unwrap();
    (
        result["content"].as_str().unwrap_or_default().to_string(),
        result["is_error"].as_bool().unwrap_or(false),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_allowed_local_page_comes_back_as_markdown_without_its_scripts() {
    let site = PageServer::start(vec![("/docs", Page::html(PAGE))]).await;
    let h = Harness::new().await;
    let allow = WebAccess::new(vec![format!("127.0.0.1:{}", site.port)]);
    let (md, failed) = fetch_turn(&h, allow, &site.url("/docs")).await;
    assert!(!failed, "{md}");
    assert!(
        md.starts_with("# Widget docs\nSource: http://127.0.0.1:"),
        "{md}"
    );
    for kept in [
        "# Installing widgets",
        "`widget init`",
        "fast",
        "small",
        "| flag | meaning |",
    ] {
        assert!(md.contains(kept), "{kept} missing in {md}");
    }
    assert!(
        md.lines()
            .any(|l| l.starts_with("| -q") && l.contains("quiet")),
        "{md}"
    );
    for gone in [
        "SCRIPT-SECRET",
        "INLINE-SECRET",
        "color:red",
        "Blog",
        "© Widgets",
    ] {
        assert!(!md.contains(gone), "{gone} in {md}");
    }
    assert_eq!(site.connections(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_allowance_no_byte_is_sent() {
    let site = PageServer::start(vec![("/docs", Page::html(PAGE))]).await;
    let h = Harness::new().await;
    // `--yes` (the harness's policy) does not cover a private address; headless cannot ask.
    let (out, failed) = fetch_turn(&h, WebAccess::default(), &site.url("/docs")).await;
    assert!(failed, "{out}");
    assert!(
        out.contains("127.0.0.1 resolves to 127.0.0.1, a loopback"),
        "{out}"
    );
    assert!(out.contains("allow_private_hosts"), "{out}");
    assert_eq!(site.connections(), 0, "the server saw a connection");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_that_resolves_to_loopback_is_refused() {
    let site = PageServer::start(vec![("/docs", Page::html(PAGE))]).await;
    let h = Harness::new().await;
    // The address is allowed, the name is not: what counts is the name's resolution.
    let allow = WebAccess::new(vec![format!("127.0.0.1:{}", site.port)]);
    let url = format!("http://localhost:{}/docs", site.port);
    let (out, failed) = fetch_turn(&h, allow, &url).await;
    assert!(failed, "{out}");
    assert!(out.contains("localhost resolves to"), "{out}");
    assert!(out.contains("loopback"), "{out}");
    assert_eq!(site.connections(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_to_a_private_address_is_refused() {
    let inner = PageServer::start(vec![("/secret", Page::html("<p>metadata</p>"))]).await;
    let to = format!("http://127.0.0.1:{}/secret", inner.port);
    let site = PageServer::start(vec![("/go", Page::redirect(&to))]).await;
    let h = Harness::new().await;
    // Only the first server's port is allowed; the hop to the other is checked on its own.
    let allow = WebAccess::new(vec![format!("127.0.0.1:{}", site.port)]);
    let (out, failed) = fetch_turn(&h, allow, &site.url("/go")).await;
    assert!(failed, "{out}");
    assert!(
        out.starts_with("Refused: 127.0.0.1 resolves to 127.0.0.1"),
        "{out}"
    );
    assert_eq!(site.connections(), 1);
    assert_eq!(inner.connections(), 0, "the redirect was followed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn types_it_cannot_read_and_errors_are_said_plainly() {
    let site = PageServer::start(vec![
        (
            "/paper.pdf",
            Page::typed("application/pdf", b"%PDF-1.7 ..."),
        ),
        (
            "/data.json",
            Page::typed("application/json", br#"{"ok": true}"#),
        ),
    ])
    .await;
    let h = Harness::new().await;
    let allow = WebAccess::new(vec![format!("127.0.0.1:{}", site.port)]);
    let (out, failed) = fetch_turn(&h, allow.clone(), &site.url("/paper.pdf")).await;
    assert!(
        failed && out.contains("is a PDF (`application/pdf`)"),
        "{out}"
    );
    let (out, failed) = fetch_turn(&h, allow.clone(), &site.url("/data.json")).await;
    assert!(!failed && out.ends_with(r#"{"ok": true}"#), "{out}");
    let (out, failed) = fetch_turn(&h, allow, &site.url("/missing")).await;
    assert!(failed && out.contains("HTTP 404"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tui_asks_for_a_private_address_call_by_call() {
    let site = PageServer::start(vec![("/docs", Page::html(PAGE))]).await;
    let h = Harness::new().await;
    let mut p = h.params(200_000, 20_000);
    p.tools.approvals = ApprovalPolicy::Auto;
    p.front_end = FrontEnd::Interactive { review: false };
    h.server.push(a::tool_use(
        "f1",
        "web_fetch",
        &serde_json::json!({ "url": site.url("/docs") }).to_string(),
        U::new(1000, 10),
    ));
    h.server.push(a::text("read it", U::new(1200, 10)));
    let mut r = start(p);
    let turn = r.send_turn("read the docs").await;
    let asked = r
        .until(|e| matches!(e, Event::ApprovalRequest { .. }))
        .await;
    let Some(Event::ApprovalRequest {
        id,
        summary,
        always,
        ..
    }) = asked.last().cloned()
    else {
        unreachable!()
    };
    assert!(summary.contains("a loopback (127/8) address"), "{summary}");
    assert!(summary.contains("approved call by call"), "{summary}");
    assert_eq!(
        always, None,
        "--yes and always never cover a private address"
    );
    assert_eq!(site.connections(), 0, "nothing is sent before the answer");
    r.send(Op::Approval {
        id,
        decision: Approval::Once,
    })
    .await;
    let events = r.until_end(turn).await;
    assert_eq!(exit_reason(&events), Some(ExitReason::Completed));
    r.shutdown().await;
    let body = h.server.requests().last().cloned().unwrap();
    let result = &a::tool_results(&body)[0];
    assert!(
        result["content"]
            .as_str()
            .unwrap()
            .contains("# Installing widgets")
    );
    assert_eq!(site.connections(), 1);
}
