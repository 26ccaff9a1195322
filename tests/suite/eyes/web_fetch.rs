//! `web_fetch` through the engine against a real local web server: a page on a host the config
//! allows comes back as Markdown without its scripts; the same URL without the allowance is
//! refused before any byte is sent (the server sees no connection); a redirect to a private
//! address is refused; a name that resolves to 127.0.0.1 is refused; in the TUI the user may
//! approve a private address for one call, and "always" is not offered for it.

use flower_tui::engine::policy::{ApprovalPolicy, FrontEnd};
use flower_tui::engine::protocol::{AllowOffer, Approval, Event, ExitReason, Op, TurnId};
use flower_tui::engine::tools::web_fetch::WebAccess;

use super::page_server::{Page, PageServer};
use crate::support::check::assert_contains;
use crate::support::fake::{U, anthropic as a};
use crate::support::harness::{Harness, Running, exit_reason, start};

const PAGE: &str = r#"<!doctype html><html><head><title>Widget docs</title>
<script>window.tracker = "SCRIPT-SECRET";</script><style>.x{color:red}</style></head>
<body><nav><a href="/">Home</a> <a href="/blog">Blog</a></nav>
<main><h1>Installing widgets</h1><p>Run <code>widget init</code> first.</p>
<ul><li>fast</li><li>small</li></ul>
<table><tr><th>flag</th><th>meaning</th></tr><tr><td>-q</td><td>quiet</td></tr></table>
<script>console.log("INLINE-SECRET")</script></main><footer>© Widgets</footer></body></html>"#;

/// One turn in which the model fetches `url`; the content of the call's result.
pub(super) async fn fetch_turn(h: &Harness, access: WebAccess, url: &str) -> (String, bool) {
    let mut p = h.params(200_000, 20_000);
    p.tools.web = access;
    one_fetch(h, url);
    let mut r = start(p);
    r.completed_turn("read the docs").await;
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
        assert_contains(&md, kept);
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
            "/shot.png",
            Page::typed("image/png", b"\x89PNG\r\n\x1a\n..."),
        ),
        (
            "/data.json",
            Page::typed("application/json", br#"{"ok": true}"#),
        ),
    ])
    .await;
    let h = Harness::new().await;
    let allow = WebAccess::new(vec![format!("127.0.0.1:{}", site.port)]);
    let (out, failed) = fetch_turn(&h, allow.clone(), &site.url("/shot.png")).await;
    assert!(failed && out.contains("is an image (`image/png`)"), "{out}");
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
    let (id, summary, always) = next_question(&mut r).await;
    assert!(summary.contains("a loopback (127/8) address"), "{summary}");
    assert!(summary.contains("approved call by call"), "{summary}");
    assert_eq!(
        always, None,
        "--yes and always never cover a private address"
    );
    assert_eq!(site.connections(), 0, "nothing is sent before the answer");
    answer(&r, id, Approval::Once).await;
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_pages_fail_plainly_and_the_turn_goes_on() {
    use std::time::{Duration, Instant};
    let flood = "<p>".to_string() + &"x".repeat(64 * 1024) + "</p>";
    let site =
        PageServer::start(vec![
        // Headers, then a trickle that never ends.
        ("/slow", Page::endless("<p>more</p>", Duration::from_millis(100))),
        // No length, and more bytes than any page should have.
        ("/flood", Page::endless(&flood, Duration::ZERO)),
        // A redirect to itself, for ever.
        ("/loop", Page::redirect("/loop")),
        // A declared length over the cap: refused before the body is read.
        ("/big", Page::html(&"y".repeat(11 * 1024 * 1024))),
        // Latin-1, said by the header; Windows-1252, said only by the page.
        (
            "/latin1",
            Page::typed(
                "text/html; charset=iso-8859-1",
                b"<main><p>caf\xe9 cr\xe8me</p></main>",
            ),
        ),
        (
            "/meta",
            Page::typed(
                "text/html",
                b"<head><meta charset=\"windows-1252\"></head><main><p>\x93quoted\x94</p></main>",
            ),
        ),
    ])
        .await;
    let h = Harness::new().await;
    let allow = WebAccess::new(vec![format!("127.0.0.1:{}", site.port)]);

    let started = Instant::now();
    let quick = allow.clone().with_timeout(Duration::from_secs(1));
    let (out, failed) = fetch_turn(&h, quick, &site.url("/slow")).await;
    assert!(failed, "{out}");
    assert!(
        out.contains("did not send the whole page within 1 s"),
        "{out}"
    );
    assert!(started.elapsed() < Duration::from_secs(10));

    let before = site.connections();
    let (out, failed) = fetch_turn(&h, allow.clone(), &site.url("/loop")).await;
    assert!(
        failed && out.contains("redirected more than 5 times"),
        "{out}"
    );
    assert_eq!(
        site.connections() - before,
        6,
        "the first request and 5 redirects"
    );

    let (out, failed) = fetch_turn(&h, allow.clone(), &site.url("/flood")).await;
    assert!(failed && out.contains("larger than 10 MB"), "{out}");
    let (out, failed) = fetch_turn(&h, allow.clone(), &site.url("/big")).await;
    assert!(failed && out.contains("larger than 10 MB"), "{out}");

    let (out, failed) = fetch_turn(&h, allow.clone(), &site.url("/latin1")).await;
    assert!(!failed && out.ends_with("café crème"), "{out}");
    let (out, failed) = fetch_turn(&h, allow, &site.url("/meta")).await;
    assert!(!failed && out.ends_with("\u{201c}quoted\u{201d}"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_page_is_spilled_and_fetched_once_per_session() {
    let paragraphs: String = (0..4000)
        .map(|i| format!("<p>Paragraph {i} of the long manual, with words.</p>\n"))
        .collect();
    let long = format!("<html><body><main><h1>Manual</h1>{paragraphs}</main></body></html>");
    let site = PageServer::start(vec![("/manual", Page::html(&long))]).await;
    let h = Harness::new().await;
    let mut p = h.params(200_000, 20_000);
    p.tools.web = WebAccess::new(vec![format!("127.0.0.1:{}", site.port)]);
    let input = serde_json::json!({ "url": site.url("/manual") }).to_string();
    h.server
        .push(a::tool_use("f1", "web_fetch", &input, U::new(1000, 10)));
    h.server
        .push(a::tool_use("f2", "web_fetch", &input, U::new(1500, 10)));
    h.server.push(a::text("read it", U::new(1800, 10)));
    let mut r = start(p);
    let events = r.turn("read the manual").await;
    assert_eq!(exit_reason(&events), Some(ExitReason::Completed));
    r.shutdown().await;
    let spilled: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolResult { spilled, .. } => Some(spilled.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(spilled.len(), 2);
    for s in &spilled {
        let path = s.as_ref().expect("the long page is spilled");
        let file = std::fs::read_to_string(path).unwrap();
        assert!(file.contains("# Manual"), "{file:.200}");
        assert!(file.contains("Paragraph 3999 of the long manual"));
    }
    let reqs = h.server.requests();
    let first = &a::tool_results(&reqs[1])[0];
    let preview = first["content"].as_str().unwrap();
    assert!(preview.len() < 5_000, "{} chars sent", preview.len());
    assert!(preview.contains("read_file"), "{preview}");
    assert_eq!(
        site.connections(),
        1,
        "the second call is served from the cache"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn always_covers_the_host_and_no_other() {
    let site = PageServer::start(vec![
        ("/a", Page::html("<main><p>page a</p></main>")),
        ("/b", Page::html("<main><p>page b</p></main>")),
    ])
    .await;
    let h = Harness::new().await;
    let mut p = h.params(200_000, 20_000);
    p.tools.approvals = ApprovalPolicy::Ask;
    p.front_end = FrontEnd::Interactive { review: false };
    // Both names are allowed private hosts, so both are asked like any public host.
    p.tools.web = WebAccess::new(vec![
        format!("127.0.0.1:{}", site.port),
        format!("localhost:{}", site.port),
    ]);
    let call = |id: &str, url: String| {
        a::tool_use(
            id,
            "web_fetch",
            &serde_json::json!({ "url": url }).to_string(),
            U::new(1000, 10),
        )
    };
    h.server.push(call("f1", site.url("/a")));
    h.server.push(call("f2", site.url("/b")));
    h.server
        .push(call("f3", format!("http://localhost:{}/a", site.port)));
    h.server.push(a::text("done", U::new(1200, 10)));
    let mut r = start(p);
    let turn = r.send_turn("read both").await;
    let (id, _, always) = next_question(&mut r).await;
    let offer = always.expect("a host can be allowed always");
    assert_eq!(
        offer.label,
        "always allow web_fetch of 127.0.0.1 this session"
    );
    answer(&r, id, Approval::Always).await;
    // f2 is on the same host: not asked. f3 is another host: asked.
    let asked = r
        .until(|e| matches!(e, Event::ApprovalRequest { .. }))
        .await;
    let Some(Event::ApprovalRequest { id, summary, .. }) = asked.last().cloned() else {
        unreachable!()
    };
    assert!(summary.contains("localhost"), "{summary}");
    assert!(
        !asked
            .iter()
            .any(|e| matches!(e, Event::ApprovalRequest { id, .. } if id == "f2"))
    );
    answer(&r, id, Approval::Deny).await;
    let events = r.until_end(turn).await;
    assert_eq!(exit_reason(&events), Some(ExitReason::Completed));
    r.shutdown().await;
    assert_eq!(site.connections(), 2);
}

/// A run whose model fetches `url` once.
fn one_fetch(h: &Harness, url: &str) {
    h.server.push(a::tool_use(
        "f1",
        "web_fetch",
        &serde_json::json!({ "url": url }).to_string(),
        U::new(1000, 10),
    ));
    h.server.push(a::text("read it", U::new(1200, 10)));
}

/// Waits for the next approval question; its id, summary and "always" offer.
async fn next_question(r: &mut Running) -> (String, String, Option<AllowOffer>) {
    let asked = r
        .until(|e| matches!(e, Event::ApprovalRequest { .. }))
        .await;
    match asked.last().cloned() {
        Some(Event::ApprovalRequest {
            id,
            summary,
            always,
            ..
        }) => (id, summary, always),
        other => panic!("not an approval question: {other:?}"),
    }
}

/// Answers the approval question `id` with `decision`.
async fn answer(r: &Running, id: String, decision: Approval) {
    r.send(Op::Approval { id, decision }).await;
}

/// A public-looking name that resolves to loopback (as DNS rebinding makes one).
fn rebound() -> WebAccess {
    WebAccess::default().with_host(
        "docs.example.test",
        vec![std::net::Ipv4Addr::LOCALHOST.into()],
    )
}

/// A TUI session under `approvals` where docs.example.test resolves to loopback ([`rebound`]),
/// sent "read the docs" with the model fetching that name from `site`; its turn.
async fn fetch_rebound_name(
    h: &Harness,
    site: &PageServer,
    approvals: ApprovalPolicy,
) -> (Running, TurnId) {
    let mut p = h.params(200_000, 20_000);
    p.tools.approvals = approvals;
    p.front_end = FrontEnd::Interactive { review: false };
    p.tools.web = rebound();
    one_fetch(h, &format!("http://docs.example.test:{}/docs", site.port));
    let mut r = start(p);
    let turn = r.send_turn("read the docs").await;
    (r, turn)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_is_resolved_only_after_the_user_approved_the_call() {
    let site = PageServer::start(vec![("/docs", Page::html(PAGE))]).await;
    let h = Harness::new().await;
    let (mut r, turn) = fetch_rebound_name(&h, &site, ApprovalPolicy::Ask).await;
    // The question comes before any lookup: nothing is known of the name yet.
    let (id, summary, always) = next_question(&mut r).await;
    assert!(!summary.contains('⚠'), "{summary}");
    assert_eq!(
        always.map(|a| a.label).as_deref(),
        Some("always allow web_fetch of docs.example.test this session")
    );
    answer(&r, id, Approval::Always).await;
    // Approved, the name is resolved: loopback, so the user is asked once more, for this call.
    let (id, summary, always) = next_question(&mut r).await;
    assert!(
        summary.contains("docs.example.test resolves to 127.0.0.1, a loopback (127/8) address"),
        "{summary}"
    );
    assert_eq!(always, None);
    answer(&r, id, Approval::Deny).await;
    let events = r.until_end(turn).await;
    assert_eq!(exit_reason(&events), Some(ExitReason::Completed));
    r.shutdown().await;
    let body = h.server.requests().last().cloned().unwrap();
    let result = &a::tool_results(&body)[0];
    assert_eq!(result["is_error"], true);
    assert_eq!(site.connections(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn yes_never_covers_a_name_that_resolves_privately() {
    // In the TUI with --yes: one question, with the warning.
    let site = PageServer::start(vec![("/docs", Page::html(PAGE))]).await;
    let h = Harness::new().await;
    let (mut r, turn) = fetch_rebound_name(&h, &site, ApprovalPolicy::Auto).await;
    let (id, summary, _) = next_question(&mut r).await;
    assert!(summary.contains("approved call by call"), "{summary}");
    answer(&r, id, Approval::Once).await;
    let events = r.until_end(turn).await;
    assert_eq!(exit_reason(&events), Some(ExitReason::Completed));
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, Event::ApprovalRequest { .. }))
            .count(),
        0,
        "asked once"
    );
    r.shutdown().await;
    assert_eq!(site.connections(), 1, "approved, it is fetched");

    // Headless with --yes: denied, saying why.
    let h = Harness::new().await;
    let (out, failed) = fetch_turn(
        &h,
        rebound(),
        &format!("http://docs.example.test:{}/docs", site.port),
    )
    .await;
    assert!(failed, "{out}");
    assert!(
        out.starts_with("denied: docs.example.test resolves to 127.0.0.1"),
        "{out}"
    );
    assert_eq!(site.connections(), 1);
}
