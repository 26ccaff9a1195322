//! Engine benchmarks against the loopback fake provider: the handoff's own overhead, and memory
//! across generations.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use flower_tui::engine::context::{Thresholds, WindowSource};
use flower_tui::engine::ledger::RunDir;
use flower_tui::engine::policy::{ApprovalPolicy, ContextPolicy, FrontEnd, HandoffMode};
use flower_tui::engine::protocol::{Event, Op, TurnId};
use flower_tui::engine::provider::anthropic::{AnthropicConfig, AnthropicProvider};
use flower_tui::engine::provider::retry::RetryPolicy;
use flower_tui::engine::session::{
    self, EngineParams, HandoffParams, ModelSettings, Places, PromptParams, ProviderParams,
    StartParams, ToolParams,
};

use crate::fake::{FakeServer, U, anthropic as a};

const DOC: &str = "## Doing\nBenchmarking.\n## Decided\n- x\n## Dead ends\n- y\n## Next\nGo on.\n## Scene\n- a.rs\n";

pub fn params(
    server: &FakeServer,
    dir: &Path,
    window: u64,
    headroom: u64,
    max_generations: u32,
) -> EngineParams {
    let ws = dir.join("ws");
    std::fs::create_dir_all(&ws).expect("workspace");
    EngineParams {
        provider: ProviderParams {
            client: Arc::new(AnthropicProvider::new(AnthropicConfig {
                base_url: server.base_url(),
                api_key: "sk-bench".into(),
                http: Some(crate::fake::client()),
                ..Default::default()
            })),
            max_tokens: 1024,
            retry: RetryPolicy::default(),
            demo: false,
        },
        settings: ModelSettings {
            model: "claude-bench".into(),
            effort: None,
            thresholds: Thresholds::new(window, headroom),
            window_source: WindowSource::ModelName,
        },
        places: Places {
            workspace: ws.clone(),
            workbench: Some(ws.join(".flower")),
            data_dir: dir.join("data"),
            checkpoints: flower_tui::engine::policy::CheckpointPolicy::On,
        },
        run_dir: RunDir::create(&dir.join("data"), None).expect("run dir"),
        prompt: PromptParams {
            system_prompt: "bench".into(),
            instructions: Default::default(),
            style: Default::default(),
        },
        handoff: HandoffParams {
            context: ContextPolicy::Handoff,
            // The handoff-overhead figures are the blocking path's; `perf turnover` measures both.
            mode: HandoffMode::Blocking,
            max_generations,
            after: None,
        },
        tools: ToolParams {
            max_iterations: 10_000,
            approvals: ApprovalPolicy::Auto,
            sandbox: flower_tui::engine::tools::sandbox::SandboxPolicy::off(),
            sandbox_approval: flower_tui::engine::policy::SandboxApproval::Skip,
            bash_timeout: Duration::from_secs(30),
            jobs: Default::default(),
            subagent: Default::default(),
            mode: None,
            web: Default::default(),
            files: Default::default(),
            terminals: Default::default(),
        },
        front_end: FrontEnd::Headless,
        start: StartParams {
            step: Some("bench".into()),
            resume: None,
            autostart: None,
        },
        mcp: None,
        lsp: None,
        side_events: None,
        masking: Default::default(),
        hooks: Default::default(),
        extensions: Default::default(),
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

async fn run_turn(h: &mut session::EngineHandle, text: &str) {
    // Turn ids only need to differ; one counter serves every engine of the bench.
    static LAST: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let turn = TurnId(LAST.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1);
    h.ops
        .send(Op::UserTurn {
            turn,
            text: text.into(),
        })
        .await
        .expect("send");
    while let Some(ev) = h.events.recv().await {
        if matches!(ev, Event::TurnEnd { .. }) {
            return;
        }
    }
}

/// Engine time of a handoff: from the writing turn's last byte to the successor's first request.
pub fn handoff() {
    const HANDOFFS: usize = 30;
    runtime().block_on(async {
        let dir = tempfile::tempdir().expect("tempdir");
        let server = FakeServer::start().await;
        server.push(a::tool_use("t", "list_dir", "{}", U::new(31_000, 10)));
        for _ in 0..HANDOFFS {
            server.push(a::text(DOC, U::new(31_500, 10)));
            server.push(a::tool_use("t", "list_dir", "{}", U::new(31_000, 10)));
        }
        server.push(a::text(DOC, U::new(31_500, 10)));
        let mut h = session::spawn(params(&server, dir.path(), 40_000, 10_000, HANDOFFS as u32))
            .expect("engine");
        run_turn(&mut h, "go").await;
        let rec = server.recorded();
        let mut gaps: Vec<Duration> = Vec::new();
        // Requests: 0 first, then (writing, successor) pairs.
        for i in 0..HANDOFFS {
            let writing = &rec[1 + 2 * i];
            let successor = &rec[2 + 2 * i];
            if let Some(done) = writing.finished {
                gaps.push(successor.arrived.saturating_duration_since(done));
            }
        }
        gaps.sort_unstable();
        let med = gaps[gaps.len() / 2];
        println!(
            "handoff overhead (writing turn's last byte → successor's first request): median {:.2} ms, min {:.2} ms, max {:.2} ms over {} handoffs (includes freeze with fsync, archive, ledger, new transcript)",
            med.as_secs_f64() * 1e3,
            gaps[0].as_secs_f64() * 1e3,
            gaps[gaps.len() - 1].as_secs_f64() * 1e3,
            gaps.len()
        );
        let _ = h.ops.send(Op::Shutdown).await;
    });
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

/// Memory after 8 generations of ~150k-token sessions vs after one: retired histories are freed.
pub fn memory() {
    const GENERATIONS: usize = 8;
    const CALLS: u64 = 7;
    runtime().block_on(async {
        let dir = tempfile::tempdir().expect("tempdir");
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(&ws).expect("ws");
        // ~90k characters a call, under the 100k spill line: 7 calls ≈ 630k chars ≈ 157k tokens.
        let line = "let value = compute(previous, next); // a line of source code, about eighty chars\n";
        std::fs::write(ws.join("big.rs"), line.repeat(1_100)).expect("big file");
        let server = FakeServer::start().await;
        let mut h = session::spawn(params(&server, dir.path(), 200_000, 50_000, GENERATIONS as u32 + 1))
            .expect("engine");
        let mut after = Vec::new();
        for g in 0..GENERATIONS {
            for c in 0..CALLS {
                server.push(a::tool_use(
                    &format!("t{g}-{c}"),
                    "read_file",
                    r#"{"path":"big.rs"}"#,
                    U::new(20_000 * (c + 1), 10),
                ));
            }
            server.push(a::text(DOC, U::new(151_000, 10)));
            // The successor answers and the turn ends.
            server.push(a::text("done", U::new(3_000, 10)));
            run_turn(&mut h, &format!("generation {g}: read big.rs seven times")).await;
            server.clear_requests();
            after.push(rss_kib());
        }
        let first = after[0] as f64;
        let last = after[after.len() - 1] as f64;
        println!(
            "RSS after each generation (MiB): {}",
            after
                .iter()
                .map(|k| format!("{:.1}", *k as f64 / 1024.0))
                .collect::<Vec<_>>()
                .join(", ")
        );
        println!(
            "memory after {GENERATIONS} generations of ~150k-token sessions: {:.1} MiB vs {:.1} MiB after one = {:.2}×",
            last / 1024.0,
            first / 1024.0,
            last / first
        );
        let _ = h.ops.send(Op::Shutdown).await;
    });
}

/// The engine's own time around a subagent: from the parent's `task` reply's last byte to the
/// child's first request (its session, transcript and tools set up), and from the child's report's
/// last byte to the parent's next request (its cost and record in the ledger, the report through
/// the budget); then four `task` calls of one reply, to the last of the four children's first
/// requests.
pub fn subagent() {
    const TURNS: usize = 30;
    let task = |n: usize| {
        serde_json::json!({"description": format!("look {n}"), "prompt": format!("JOB-{n}: look")})
            .to_string()
    };
    runtime().block_on(async {
        let dir = tempfile::tempdir().expect("tempdir");
        let server = FakeServer::start().await;
        for i in 0..TURNS {
            server.push(a::tool_use("t", "task", &task(i), U::new(2_000, 10)));
            server.push(a::text("REPORT: nothing here.", U::new(1_500, 10)));
            server.push(a::text("ok", U::new(2_100, 5)));
        }
        let mut h = session::spawn(params(&server, dir.path(), 200_000, 50_000, 8)).expect("engine");
        for _ in 0..TURNS {
            run_turn(&mut h, "go").await;
        }
        let rec = server.recorded();
        let (mut start, mut end): (Vec<Duration>, Vec<Duration>) = (Vec::new(), Vec::new());
        for i in 0..TURNS {
            let (parent, child, next) = (&rec[3 * i], &rec[3 * i + 1], &rec[3 * i + 2]);
            if let (Some(p), Some(c)) = (parent.finished, child.finished) {
                start.push(child.arrived.saturating_duration_since(p));
                end.push(next.arrived.saturating_duration_since(c));
            }
        }
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        for (what, v) in [
            ("task reply → child's first request", &mut start),
            ("child's report → parent's next request", &mut end),
        ] {
            v.sort_unstable();
            println!(
                "subagent {what}: median {:.2} ms, min {:.2} ms, max {:.2} ms over {}",
                ms(v[v.len() / 2]),
                ms(v[0]),
                ms(v[v.len() - 1]),
                v.len()
            );
        }
        let _ = h.ops.send(Op::Shutdown).await;

        // Four at once.
        let dir = tempfile::tempdir().expect("tempdir");
        let server = FakeServer::start().await;
        let mut spreads = Vec::new();
        for round in 0..10 {
            let calls: Vec<(String, String)> = (0..4)
                .map(|k| (format!("t{k}"), task(round * 4 + k)))
                .collect();
            let tools: Vec<(&str, &str, &str)> = calls
                .iter()
                .map(|(id, input)| (id.as_str(), "task", input.as_str()))
                .collect();
            server.push(a::text_then_tools("four", &tools, U::new(2_000, 10)));
            for k in 0..4 {
                server.push_for(
                    &format!("JOB-{}:", round * 4 + k),
                    a::text("REPORT", U::new(1_500, 10)),
                );
            }
            server.push(a::text("ok", U::new(2_100, 5)));
        }
        let mut h = session::spawn(params(&server, dir.path(), 200_000, 50_000, 8)).expect("engine");
        let mut seen = 0;
        for _ in 0..10 {
            run_turn(&mut h, "go").await;
            let rec = server.recorded();
            let new = &rec[seen..];
            seen = rec.len();
            let Some(parent_done) = new.first().and_then(|r| r.finished) else {
                continue;
            };
            if let Some(last) = new.get(1..5).and_then(|c| c.iter().map(|r| r.arrived).max()) {
                spreads.push(last.saturating_duration_since(parent_done));
            }
        }
        spreads.sort_unstable();
        if !spreads.is_empty() {
            println!(
                "four task calls of one reply → the last child's first request: median {:.2} ms, max {:.2} ms over {} replies",
                ms(spreads[spreads.len() / 2]),
                ms(spreads[spreads.len() - 1]),
                spreads.len()
            );
        }
        let _ = h.ops.send(Op::Shutdown).await;
    });
}
