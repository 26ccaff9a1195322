//! Provider resilience under the fake's chaos mode: many tool-calling turns against a
//! loopback server that answers 40 % of requests with a fault drawn independently per request (status
//! storms, truncation, a malformed event, dropped and reset connections, stalls), on both protocols.
//!
//! It measures the fraction of turns that complete and, for every fault that was retried, the wall
//! time it cost beyond the backoff the retry announced: from the faulted request's arrival at the
//! server to the arrival of its retry, minus the announced delay. That is the time to notice the
//! fault plus a fresh connection and request; for a stall it is the idle timeout by design.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use flower_tui::engine::protocol::{Event, ExitReason, Op, TurnId};
use flower_tui::engine::provider::Provider;
use flower_tui::engine::provider::anthropic::{AnthropicConfig, AnthropicProvider};
use flower_tui::engine::provider::openai::{OpenAiConfig, OpenAiProvider};
use flower_tui::engine::provider::retry::RetryPolicy;
use flower_tui::engine::session;

use crate::fake::chaos::{Chaos, FaultKind};
use crate::fake::{FakeServer, Reply, U, anthropic as a, openai as o};

const TURNS: usize = 150;
const RATE: f64 = 0.4;
const IDLE: Duration = Duration::from_millis(300);

fn policy() -> RetryPolicy {
    RetryPolicy {
        max_tries: 5,
        base_delay: Duration::from_millis(50),
        max_delay: Duration::from_millis(800),
        idle_timeout: IDLE,
        ..RetryPolicy::default()
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Api {
    Anthropic,
    OpenAi,
}

fn provider(api: Api, server: &FakeServer) -> Arc<dyn Provider> {
    match api {
        Api::Anthropic => Arc::new(AnthropicProvider::new(AnthropicConfig {
            base_url: server.base_url(),
            api_key: "sk-bench".into(),
            http: Some(crate::fake::client()),
            ..Default::default()
        })),
        Api::OpenAi => Arc::new(OpenAiProvider::new(OpenAiConfig {
            base_url: server.base_url(),
            api_key: "sk-bench".into(),
            http: Some(crate::fake::client()),
            ..Default::default()
        })),
    }
}

fn replies(api: Api, n: usize) -> [Reply; 2] {
    let id = format!("call_{n}");
    let first = format!("Listing the files for turn {n}, then a summary of what is there.");
    let last = format!("Turn {n}: the workspace holds what it held before; nothing to change.");
    match api {
        Api::Anthropic => [
            a::text_then_tools(&first, &[(&id, "list_dir", "{}")], U::new(1_000, 30)),
            a::text(&last, U::new(1_100, 30)),
        ],
        Api::OpenAi => [
            o::Stream::new(U::new(1_000, 30))
                .text(&first)
                .tool(&id, "list_dir", "{}")
                .reply(),
            o::text(&last, U::new(1_100, 30)),
        ],
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

struct Outcome {
    completed: usize,
    requests: usize,
    exhausted: usize,
    faults: BTreeMap<FaultKind, usize>,
    extra: Vec<(FaultKind, Duration)>,
    backoff: Vec<Duration>,
    wall: Duration,
}

async fn run_api(api: Api, seed: u64) -> Outcome {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = FakeServer::start().await;
    server.set_chaos(Chaos::combined(seed, RATE).stall_for(Duration::from_millis(600)));
    let mut params = crate::engine_bench::params(&server, dir.path(), 200_000, 50_000, 8);
    params.provider.client = provider(api, &server);
    params.provider.retry = policy();
    let mut h = session::spawn(params).expect("engine");
    let mut completed = 0;
    let mut delays = Vec::new();
    let started = Instant::now();
    for n in 0..TURNS {
        server.push_all(replies(api, n));
        let turn = TurnId(n as u64 + 1);
        h.ops
            .send(Op::UserTurn {
                turn,
                text: format!("turn {n}"),
            })
            .await
            .expect("send");
        while let Some(ev) = h.events.recv().await {
            match ev {
                Event::Retry { delay_ms, .. } => delays.push(Duration::from_millis(delay_ms)),
                Event::TurnEnd {
                    turn: t, reason, ..
                } if t == turn => {
                    if reason == ExitReason::Completed {
                        completed += 1;
                    }
                    break;
                }
                _ => {}
            }
        }
        // A turn that gave up leaves its other reply queued: the next turn starts clean.
        server.drop_pending();
    }
    let wall = started.elapsed();
    let _ = h.ops.send(Op::Shutdown).await;
    let _ = tokio::time::timeout(Duration::from_secs(5), h.task).await;

    // Walk the requests in order: a fault is followed by its retry unless it was the fifth of a row
    // (the request gave up); each retry announced its delay in the same order.
    let rec = server.recorded();
    let mut faults = BTreeMap::new();
    let mut extra = Vec::new();
    let mut in_a_row = 0;
    let mut exhausted = 0;
    let mut next_delay = delays.iter();
    for (i, r) in rec.iter().enumerate() {
        let Some(f) = &r.fault else {
            in_a_row = 0;
            continue;
        };
        *faults.entry(f.kind()).or_insert(0) += 1;
        in_a_row += 1;
        if in_a_row == policy().max_tries {
            exhausted += 1;
            in_a_row = 0;
            continue;
        }
        let (Some(retry), Some(delay)) = (rec.get(i + 1), next_delay.next()) else {
            break;
        };
        let gap = retry.arrived.saturating_duration_since(r.arrived);
        extra.push((f.kind(), gap.saturating_sub(*delay)));
    }
    Outcome {
        completed,
        requests: rec.len(),
        exhausted,
        faults,
        extra,
        backoff: delays,
        wall,
    }
}

fn report(name: &str, o: &Outcome) {
    let faults: usize = o.faults.values().sum();
    println!(
        "{name}: {}/{TURNS} turns completed ({:.1} %), {} requests, {faults} faults ({:.1} % of requests: {}), {} requests gave up after 5 tries, {:.1} s",
        o.completed,
        100.0 * o.completed as f64 / TURNS as f64,
        o.requests,
        100.0 * faults as f64 / o.requests.max(1) as f64,
        o.faults
            .iter()
            .map(|(k, n)| format!("{k:?} {n}"))
            .collect::<Vec<_>>()
            .join(", "),
        o.exhausted,
        o.wall.as_secs_f64(),
    );
    let mut all: Vec<Duration> = o.extra.iter().map(|(_, d)| *d).collect();
    all.sort_unstable();
    let mut backoff = o.backoff.clone();
    backoff.sort_unstable();
    println!(
        "  extra wall time per retried fault beyond its backoff: median {:.1} ms, p90 {:.1} ms (n = {}); backoff median {:.1} ms",
        ms(percentile(&all, 0.5)),
        ms(percentile(&all, 0.9)),
        all.len(),
        ms(percentile(&backoff, 0.5)),
    );
    for kind in FaultKind::ALL {
        let mut k: Vec<Duration> = o
            .extra
            .iter()
            .filter(|(f, _)| *f == kind)
            .map(|(_, d)| *d)
            .collect();
        k.sort_unstable();
        if !k.is_empty() {
            println!(
                "    {kind:?}: median {:.1} ms, max {:.1} ms (n = {})",
                ms(percentile(&k, 0.5)),
                ms(percentile(&k, 1.0)),
                k.len()
            );
        }
    }
}

pub fn run() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let anthropic = run_api(Api::Anthropic, 8).await;
        report("anthropic", &anthropic);
        let openai = run_api(Api::OpenAi, 9).await;
        report("openai", &openai);
        let turns = 2 * TURNS;
        let done = anthropic.completed + openai.completed;
        let per_request = 1.0 - RATE.powi(policy().max_tries as i32);
        println!(
            "both: {done}/{turns} turns completed ({:.1} %); with faults independent per try, a request fails all 5 tries with probability 0.4^5 = 1.0 %, so a two-request turn completes with probability {:.1} %",
            100.0 * done as f64 / turns as f64,
            100.0 * per_request * per_request
        );
        println!(
            "  (stalls cost the idle timeout, {} ms here, by design; the other faults cost the time to notice them and reconnect)",
            IDLE.as_millis()
        );
    });
}
