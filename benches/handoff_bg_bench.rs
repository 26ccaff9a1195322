//! The background handoff's figures on the loopback provider.
//!
//! `perf turnover`: the user-visible pause at the turnover when the writing turn takes 20 s (its
//! reply trickles in over 20 s), review off: from the main thread's last response before the
//! turnover to the next main-thread request (the successor's first), in background and in blocking
//! mode, side by side in one run (two engines at once, each with its own fake).
//!
//! `perf rescue`: overflow handoffs on the fake enforcing its window by body size, trials of
//! varied shape (how many turns, result and argument sizes; a main-thread request that overflows,
//! or a writing request that does): the share written by the model (rescued) where a reduced copy
//! fits, and the degraded answer where none can (a first message larger than the window).

use std::time::{Duration, Instant};

use flower_tui::engine::policy::{FrontEnd, HandoffMode};
use flower_tui::engine::protocol::{DocumentSource, Event, HandoffPhase, Op, TurnId};
use flower_tui::engine::session;
use serde_json::Value;

use crate::fake::{FakeServer, Recorded, Reply, U, anthropic as a, is_writing};

const DOC: &str = "## Doing\nBenchmarking the turnover.\n## Decided\n- x\n## Dead ends\n- y\n## Next\nGo on.\n## Scene\n- a.rs\n";
/// The writing turn's duration.
const WRITING: Duration = Duration::from_secs(20);
/// The main thread's steps after the line, each the model's 2 s: 24 s of work.
const STEPS: usize = 12;
const STEP: Duration = Duration::from_secs(2);

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

/// `reply`'s bytes spread evenly over `total` (a model writing at its own pace): the fake waits
/// `delay` between chunks, so the first chunk comes at once and the last after `total`.
fn trickle(reply: &Reply, total: Duration, pieces: usize) -> Reply {
    let bytes = reply.body_bytes();
    let size = bytes.len().div_ceil(pieces.max(1)).max(1);
    let chunks: Vec<Vec<u8>> = bytes.chunks(size).map(<[u8]>::to_vec).collect();
    let gaps = chunks.len().saturating_sub(1).max(1) as u32;
    Reply::Sse {
        chunks,
        delay: Some(total / gaps),
    }
}

/// A successor's request: its first message is a briefing.
fn is_successor(body: &Value) -> bool {
    body["messages"][0]["content"][0]["text"]
        .as_str()
        .is_some_and(|t| t.contains("<handoff>"))
}

/// A main-thread step: a tool call after the model's `STEP`; usage below the hard limit in the
/// first generation, low in the successor (so it does not hand off again).
fn step(i: usize) -> Reply {
    Reply::lazy(move |body, _| {
        let input = if is_successor(body) {
            5_000 + 10 * i as u64
        } else {
            31_000 + 100 * i as u64
        };
        a::tool_use(&format!("s{i}"), "list_dir", "{}", U::new(input, 10)).after(STEP)
    })
}

struct Pause {
    /// From the last main-thread response before the turnover to the successor's first request.
    pause: Duration,
    /// The whole turn.
    turn: Duration,
}

fn pause_of(rec: &[Recorded]) -> Option<Duration> {
    let mains: Vec<&Recorded> = rec.iter().filter(|r| !is_writing(&r.body)).collect();
    let succ = mains.iter().position(|r| is_successor(&r.body))?;
    let before = mains.get(succ.checked_sub(1)?)?;
    Some(
        mains
            .get(succ)?
            .arrived
            .saturating_duration_since(before.finished?),
    )
}

async fn one(mode: HandoffMode) -> Pause {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = FakeServer::start().await;
    server.push(a::tool_use("t0", "list_dir", "{}", U::new(31_000, 10)));
    for i in 0..STEPS {
        server.push(step(i));
    }
    server.push(a::text("done", U::new(6_000, 10)));
    server.push_writing(trickle(&a::text(DOC, U::new(31_000, 400)), WRITING, 40));
    let mut p = crate::engine_bench::params(&server, dir.path(), 40_000, 10_000, 8);
    p.handoff.mode = mode;
    p.front_end = FrontEnd::Interactive { review: false };
    let mut h = session::spawn(p).expect("engine");
    let started = Instant::now();
    h.ops
        .send(Op::UserTurn {
            turn: TurnId(1),
            text: "work".into(),
        })
        .await
        .expect("send");
    while let Some(ev) = h.events.recv().await {
        if let Event::TurnEnd { .. } = ev {
            break;
        }
    }
    let turn = started.elapsed();
    let _ = h.ops.send(Op::Shutdown).await;
    Pause {
        pause: pause_of(&server.recorded()).expect("a turnover"),
        turn,
    }
}

pub fn turnover() {
    runtime().block_on(async {
        println!(
            "   a writing turn of {} s (its reply trickles in), review off; {STEPS} main-thread steps of {} s each after the line",
            WRITING.as_secs(),
            STEP.as_secs()
        );
        let (bg, blocking) = tokio::join!(one(HandoffMode::Background), one(HandoffMode::Blocking));
        println!(
            "   wait at the turnover (last main response before it → the successor's first request): background {:.0} ms, blocking {:.2} s (goal: ≤ 0.5 s against ≥ 20 s)",
            bg.pause.as_secs_f64() * 1e3,
            blocking.pause.as_secs_f64()
        );
        println!(
            "   the whole turn: background {:.1} s, blocking {:.1} s",
            bg.turn.as_secs_f64(),
            blocking.turn.as_secs_f64()
        );
    });
}

/// A tiny deterministic generator for the trials' shapes.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n.max(1)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// The provider's window is below what the session holds (the engine's guess was too big): the
    /// next main-thread request overflows.
    Main,
    /// Blocking mode: the results that cross the line make the writing request overflow, while every
    /// main-thread request before it fitted.
    Writing,
    /// The first message alone is larger than the window: no reduced copy can fit.
    Impossible,
}

struct Trial {
    kind: Kind,
    source: Option<DocumentSource>,
    stubbed: usize,
    dropped: usize,
    /// The window against the smallest copy a rescue could send (system, tools, first message).
    window: u64,
    floor: u64,
}

/// One trial's script, the same on every run of it (`seed`), so a dry run can measure the
/// requests a second run then overflows.
struct Script {
    /// (file size in characters, argument padding) per tool call of the first turn.
    first: Vec<(usize, usize)>,
    /// The second turn's calls (Writing: results of 60–66K characters that cross the line).
    second: Vec<(usize, usize)>,
    task: String,
}

impl Script {
    fn new(seed: u64, kind: Kind) -> Script {
        let mut rng = Lcg(seed);
        let first = (0..3 + rng.below(5))
            .map(|_| {
                (
                    8_000 + rng.below(24_000) as usize,
                    rng.below(1_500) as usize,
                )
            })
            .collect();
        let second = match kind {
            Kind::Writing => (0..3)
                .map(|_| {
                    (
                        60_000 + rng.below(6_000) as usize,
                        rng.below(1_500) as usize,
                    )
                })
                .collect(),
            _ => Vec::new(),
        };
        let task = match kind {
            Kind::Impossible => format!("read this: {}", "w ".repeat(200_000)),
            _ => "read every file".to_string(),
        };
        Script {
            first,
            second,
            task,
        }
    }
}

/// What one run of a script saw.
struct Seen {
    recorded: Vec<Recorded>,
    source: Option<DocumentSource>,
    stubbed: usize,
    dropped: usize,
}

/// The engine's window and headroom. Main, Impossible: far above anything sent (the guess that
/// turns out too big). Writing: the line at 45K tokens, which the second turn's results (three of
/// 60–66K characters, below the per-turn spill limit) cross in every script.
fn engine_window(kind: Kind) -> (u64, u64) {
    match kind {
        Kind::Writing => (60_000, 15_000),
        _ => (1_000_000, 50_000),
    }
}

/// Run `script`: the first turn with no window on the fake; then `window` set (Main, Impossible:
/// before the second turn) and the second turn.
async fn run_script(script: &Script, kind: Kind, window: Option<u64>) -> Seen {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = FakeServer::start().await;
    let (engine_window, headroom) = engine_window(kind);
    let mut p = crate::engine_bench::params(&server, dir.path(), engine_window, headroom, 8);
    let ws = p.places.workspace.clone();
    let calls = script.first.iter().chain(&script.second).enumerate();
    for (i, (chars, _)) in calls {
        std::fs::write(ws.join(format!("f{i}.txt")), "y".repeat(*chars)).expect("file");
    }
    p.handoff.mode = match kind {
        Kind::Writing => HandoffMode::Blocking,
        _ => HandoffMode::Background,
    };
    let run_root = p.run_dir.root.clone();
    let call = |i: usize, pad: usize| {
        a::tool_use_counted(
            &format!("t{i}"),
            "bash",
            &format!(r#"{{"command":"cat f{i}.txt # {}"}}"#, "z".repeat(pad)),
            10,
        )
    };
    for (i, (_, pad)) in script.first.iter().enumerate() {
        server.push(call(i, *pad));
    }
    server.push(a::text_counted("first turn done", 10));
    if kind == Kind::Writing {
        server.set_window(window);
    }
    let mut h = session::spawn(p).expect("engine");
    let mut seen = Seen {
        recorded: Vec::new(),
        source: None,
        stubbed: 0,
        dropped: 0,
    };
    let turns = [script.task.as_str(), "and now the rest"];
    for (t, text) in turns.iter().enumerate() {
        if t == 1 {
            let n = script.first.len();
            for (j, (_, pad)) in script.second.iter().enumerate() {
                server.push(call(n + j, *pad));
            }
            server.push_writing(a::text_counted(DOC, 120));
            for _ in 0..3 {
                server.push(a::text_counted("done", 10));
            }
            if kind != Kind::Writing {
                server.set_window(window);
            }
        }
        h.ops
            .send(Op::UserTurn {
                turn: TurnId(t as u64 + 1),
                text: (*text).to_string(),
            })
            .await
            .expect("send");
        while let Some(ev) = h.events.recv().await {
            match ev {
                Event::Handoff(HandoffPhase::Rescuing {
                    stubbed, dropped, ..
                }) => (seen.stubbed, seen.dropped) = (stubbed, dropped),
                Event::TurnEnd { .. } => break,
                _ => {}
            }
        }
    }
    let _ = h.ops.send(Op::Shutdown).await;
    let _ = h.task.await;
    let m = flower_tui::engine::ledger::Manifest::load(&run_root.join("manifest.json"))
        .expect("ledger");
    seen.source = m
        .steps
        .first()
        .and_then(|s| s.handoffs.first())
        .map(|h| h.source);
    seen.recorded = server.recorded();
    seen
}

async fn trial(seed: u64, kind: Kind) -> Trial {
    let script = Script::new(seed, kind);
    let mut rng = Lcg(seed ^ 0x5eed);
    // A dry run with no window: what each request holds.
    let dry = run_script(&script, kind, None).await;
    let floor = dry.recorded.first().map_or(0, |r| r.tokens) + 1_024 + 600;
    let window = match kind {
        // The session after its first turn, times 15–90 %.
        Kind::Main => {
            let full = dry.recorded.last().map_or(0, |r| r.tokens);
            full * (15 + rng.below(76)) / 100
        }
        // Between the last main-thread request before the cut and the writing request: only the
        // writing overflows.
        Kind::Writing => {
            let w = dry
                .recorded
                .iter()
                .position(|r| is_writing(&r.body))
                .expect("the dry run hands off");
            let before = dry.recorded.get(w.wrapping_sub(1)).map_or(0, |r| r.tokens);
            let writing = dry.recorded.get(w).map_or(0, |r| r.tokens);
            before + (writing - before) * (1 + rng.below(8)) / 10
        }
        // Below the first message.
        Kind::Impossible => floor.saturating_sub(1_700) / 2,
    };
    let seen = run_script(&script, kind, Some(window)).await;
    Trial {
        kind,
        source: seen.source,
        stubbed: seen.stubbed,
        dropped: seen.dropped,
        window,
        floor,
    }
}

pub fn rescue() {
    const TRIALS: u64 = 30;
    runtime().block_on(async {
        let mut trials = Vec::new();
        for seed in 0..TRIALS {
            let kind = match seed % 5 {
                0..=2 => Kind::Main,
                3 => Kind::Writing,
                _ => Kind::Impossible,
            };
            trials.push(trial(seed + 1, kind).await);
        }
        // A reduced copy fits when the window holds the smallest one a rescue can send.
        let (fits, none): (Vec<&Trial>, Vec<&Trial>) =
            trials.iter().partition(|t| t.window >= t.floor);
        let rescued = |of: &[&Trial]| {
            of.iter()
                .filter(|t| t.source == Some(DocumentSource::Rescued))
                .count()
        };
        let by = |k: Kind| {
            let of: Vec<&Trial> = fits.iter().copied().filter(|t| t.kind == k).collect();
            format!("{}/{}", rescued(&of), of.len())
        };
        let with_drops = fits.iter().filter(|t| t.dropped > 0).count();
        let stubs: usize = fits.iter().map(|t| t.stubbed).sum();
        let windows = |of: &[&Trial]| {
            let lo = of.iter().map(|t| t.window).min().unwrap_or(0);
            let hi = of.iter().map(|t| t.window).max().unwrap_or(0);
            format!("{:.1}K–{:.1}K", lo as f64 / 1e3, hi as f64 / 1e3)
        };
        println!(
            "   rescue rate where a reduced copy fits: {}/{} = {:.0} % model-written (main-thread overflows {}, writing overflows {}; windows {}; {stubs} results stubbed, old turns dropped in {with_drops} trials); goal 100 %",
            rescued(&fits),
            fits.len(),
            100.0 * rescued(&fits) as f64 / fits.len().max(1) as f64,
            by(Kind::Main),
            by(Kind::Writing),
            windows(&fits),
        );
        let degraded = none
            .iter()
            .filter(|t| t.source == Some(DocumentSource::Degraded))
            .count();
        println!(
            "   where none fits (a first message larger than the window): {degraded}/{} degraded, as they must be",
            none.len()
        );
        for t in fits
            .iter()
            .filter(|t| t.source != Some(DocumentSource::Rescued))
        {
            println!(
                "   not rescued: {:?} -> {:?} (window {}, floor {})",
                t.kind, t.source, t.window, t.floor
            );
        }
    });
}

// ---------------------------------------------------------------------------------------------
// continuity
// ---------------------------------------------------------------------------------------------

const PIN_A: &str = "never push to `main`";
const PIN_B: &str = "keep the public API of the parser";
const FOCUS: &str = "the nested-quotes bug";
const REQUEST: &str = "refactor the parser so nested quotes parse";
const PLAN1: &str = r#"{"items": [{"text": "read the parser", "status": "done"}, {"text": "fix nested quotes", "status": "in_progress"}, {"text": "run the tests", "status": "pending"}]}"#;
const PLAN2: &str = r#"{"items": [{"text": "read the parser", "status": "done"}, {"text": "fix nested quotes", "status": "done"}, {"text": "run the tests", "status": "in_progress"}, {"text": "update the changelog", "status": "pending"}]}"#;
/// Decided in generation 1; only documents carry it (the model's, or the engine's carry-forward
/// into a degraded one).
const DECISION_1: &str = "Keep the tokenizer: its callers depend on it.";
const DECISION_4: &str = "Quote nesting is tracked by a depth counter.";

fn written(decision: &str, next: &str) -> String {
    format!(
        "## Doing\nRefactoring the parser.\n## Decided\n- {decision}\n## Dead ends\n- A regex: breaks on nested quotes.\n## Next\n{next}\n## Scene\n- src/parser.rs\n"
    )
}

/// The facts the engine carries itself, and where each must appear.
fn engine_facts() -> Vec<(&'static str, String)> {
    vec![
        ("pin 1", format!("- {PIN_A}")),
        ("pin 2", format!("- {PIN_B}")),
        ("focus", FOCUS.to_string()),
        ("plan item 1", "read the parser".to_string()),
        ("plan item 2", "fix nested quotes".to_string()),
        ("plan item 3", "run the tests".to_string()),
        (
            "plan item 4 (added in generation 3)",
            "update the changelog".to_string(),
        ),
        ("the request in flight", REQUEST.to_string()),
    ]
}

/// Every text of a request's first message, joined.
fn first_message(body: &Value) -> String {
    body["messages"][0]["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| b["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

async fn continuity_run() -> (Vec<String>, Vec<Option<DocumentSource>>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = FakeServer::start().await;
    // Every usage is what the fake counted in the body, so sizes, overflow and rescue agree as
    // with a real provider. The context grows by reading 60,000-character files (15K tokens).
    let cat = |i: usize| {
        a::tool_use_counted(
            &format!("c{i}"),
            "bash",
            &format!(r#"{{"command":"cat big{i}.txt"}}"#),
            10,
        )
    };
    // Generation 1: a plan, two reads cross the line; the document is written.
    server.push(a::tool_use_counted("t1", "todo", PLAN1, 10));
    server.push(cat(1));
    server.push(cat(2));
    server.push_writing(a::text_counted(
        &written(DECISION_1, "Fix the quote scanner."),
        400,
    ));
    // Generation 2: crosses again; the writing turn answers without its sections: degraded.
    server.push(cat(3));
    server.push(cat(4));
    server.push_writing(a::text_counted("I could not write it.", 10));
    // Generation 3: a new plan, a read, then the provider refuses the request as larger than its
    // window (smaller than the engine thought): rescued on a reduced copy.
    server.push(a::tool_use_counted("t3", "todo", PLAN2, 10));
    server.push(cat(5));
    server.push(Reply::lazy(|_, c| {
        let count = c.total();
        Reply::Status {
            status: 400,
            headers: vec![],
            body: format!(
                r#"{{"type":"error","error":{{"type":"invalid_request_error","message":"prompt is too long: {count} tokens > {} maximum"}}}}"#,
                count.saturating_sub(500)
            ),
        }
    }));
    server.push_writing(a::text_counted(
        &written("Scan quotes with a state machine.", "Run the tests."),
        400,
    ));
    // Generation 4 (the request retried there): a read crosses the learned line; written.
    server.push(cat(6));
    server.push_writing(a::text_counted(
        &written(DECISION_4, "Update the changelog."),
        400,
    ));
    // Generation 5 finishes.
    server.push(a::text_counted("All done.", 10));
    let p = crate::engine_bench::params(&server, dir.path(), 40_000, 10_000, 8);
    for i in 1..=6 {
        std::fs::write(
            p.places.workspace.join(format!("big{i}.txt")),
            "q".repeat(60_000),
        )
        .expect("file");
    }
    let run_root = p.run_dir.root.clone();
    let mut h = session::spawn(p).expect("engine");
    for op in [
        Op::Pin { text: PIN_A.into() },
        Op::Pin { text: PIN_B.into() },
        Op::SetFocus {
            focus: Some(FOCUS.into()),
        },
    ] {
        h.ops.send(op).await.expect("send");
    }
    h.ops
        .send(Op::UserTurn {
            turn: TurnId(1),
            text: REQUEST.into(),
        })
        .await
        .expect("send");
    while let Some(ev) = h.events.recv().await {
        if let Event::TurnEnd { .. } = ev {
            break;
        }
    }
    let _ = h.ops.send(Op::Shutdown).await;
    let _ = h.task.await;
    let m = flower_tui::engine::ledger::Manifest::load(&run_root.join("manifest.json"))
        .expect("ledger");
    let sources = m
        .steps
        .first()
        .map(|s| s.handoffs.iter().map(|h| Some(h.source)).collect())
        .unwrap_or_default();
    // Each successor's first request: the first main-thread request with a new briefing.
    let mut briefings: Vec<String> = Vec::new();
    for r in server.recorded().iter().filter(|r| !is_writing(&r.body)) {
        let first = first_message(&r.body);
        if first.contains("<handoff>") && briefings.last() != Some(&first) {
            briefings.push(first);
        }
    }
    (briefings, sources)
}

pub fn continuity() {
    runtime().block_on(async {
        let (briefings, sources) = continuity_run().await;
        let names: Vec<String> = sources
            .iter()
            .map(|s| s.map_or("none".into(), |s| s.as_str().to_string()))
            .collect();
        println!(
            "   four handoffs in one turn, as the ledger records them: {}",
            names.join(", ")
        );
        let facts = engine_facts();
        for (i, b) in briefings.iter().enumerate() {
            let missing: Vec<&str> = facts
                .iter()
                // The second plan exists from generation 3's todo call on.
                .filter(|(n, _)| i >= 2 || !n.starts_with("plan item 4"))
                .filter(|(_, f)| !b.contains(f.as_str()))
                .map(|(n, _)| *n)
                .collect();
            let due = facts.len() - usize::from(i < 2);
            println!(
                "   generation {} is told: {}/{due} engine-carried facts{}; generation 1's decision {}; generation 4's decision {}",
                i + 2,
                due - missing.len(),
                if missing.is_empty() {
                    String::new()
                } else {
                    format!(" (missing: {})", missing.join(", "))
                },
                if b.contains(DECISION_1) { "present" } else { "absent" },
                if b.contains(DECISION_4) { "present" } else { "absent" },
            );
        }
        let Some(fifth) = briefings.get(3) else {
            println!(
                "   no fifth generation: only {} successors were briefed",
                briefings.len()
            );
            return;
        };
        let present = facts.iter().filter(|(_, f)| fifth.contains(f.as_str())).count();
        println!(
            "   continuity score, the fifth generation's first request: {present}/{} = {:.0} % of engine-carried facts (goal 100 %)",
            facts.len(),
            100.0 * present as f64 / facts.len() as f64
        );
    });
}
