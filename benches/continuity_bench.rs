//! `perf concurrency`: 30 pairs of real flower-tui processes, each pair two headless
//! runs on the same step in one workspace, all 60 at once, each handing off twice. Counted:
//! documents lost (a process's document found nowhere on disk, live or archived), cross-briefings
//! (a successor whose first message lacks its own process's document or holds the other's), and
//! what the step's document lock cost each handoff (freeze + read-back, from the processes' logs).
//! Then the same lock in one process, uncontended: freeze with and without it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use flower_tui::engine::handoff::store;

use super::fake::{FakeServer, U, anthropic as a};
use super::median_of;

const PAIRS: usize = 30;
const NAMES: [&str; 2] = ["alpha", "beta"];
const KEY: &str = "sk-bench-0123456789abcdef";

fn doc(marker: &str) -> String {
    format!(
        "## Doing\nWork of {marker}.\n## Decided\n- {marker} decided.\n## Dead ends\n(empty)\n\
         ## Next\nContinue {marker}.\n## Scene\n- src/{marker}.rs\n"
    )
}

fn script(server: &FakeServer, who: &str) {
    let u = |input| U::new(input, 10);
    // The first reply waits a little, so both processes of a pair hold their step at once.
    server.push(
        a::tool_use("t1", "list_dir", "{}", u(31_000)).with_delay(Duration::from_millis(200)),
    );
    server.push(a::text(&doc(&format!("{who}-g1")), u(31_500)));
    server.push(a::tool_use("t2", "list_dir", "{}", u(31_000)));
    server.push(a::text(&doc(&format!("{who}-g2")), u(31_500)));
    server.push(a::text("finished", u(5_000)));
}

fn files(root: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == ext) {
                out.push(p);
            }
        }
    }
    out
}

fn first_message_text(body: &serde_json::Value) -> String {
    body["messages"][0]["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| b["text"].as_str())
        .collect()
}

fn pct(sorted: &[u64], p: f64) -> u64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(i).copied().unwrap_or(0)
}

pub fn run() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(pairs());
    uncontended();
}

async fn pairs() {
    let root = tempfile::tempdir().expect("tempdir");
    let mut servers = Vec::new();
    let mut children = Vec::new();
    let started = Instant::now();
    for pair in 0..PAIRS {
        let home = root.path().join(format!("pair-{pair}"));
        let ws = home.join("ws");
        std::fs::create_dir_all(&ws).expect("workspace");
        for who in NAMES {
            let server = FakeServer::start().await;
            script(&server, who);
            let child = Command::new(env!("CARGO_BIN_EXE_flower-tui"))
                .env_clear()
                .env("PATH", std::env::var("PATH").unwrap_or_default())
                .env("HOME", &home)
                .env("XDG_DATA_HOME", home.join("data"))
                .env("XDG_CONFIG_HOME", home.join("config"))
                .env("ANTHROPIC_API_KEY", KEY)
                .env("ANTHROPIC_BASE_URL", server.base_url())
                .current_dir(&home)
                .args(["--yes", "--window", "40000", "--headroom", "10000"])
                .args(["--step", "same", "--workspace"])
                .arg(&ws)
                .args(["-p", &format!("task of {who}")])
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .expect("spawn flower-tui");
            servers.push((pair, who, server));
            children.push(tokio::task::spawn_blocking(move || {
                child.wait_with_output().expect("wait")
            }));
        }
    }
    let mut failed = 0;
    let mut renamed = 0;
    for c in children {
        let out = c.await.expect("join");
        if !out.status.success() {
            failed += 1;
        }
        renamed += String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| l.contains("\"type\":\"notice\"") && l.contains("works as step same-"))
            .count();
    }
    let wall = started.elapsed();
    let (mut lost, mut cross, mut lock_us) = (0, 0, Vec::new());
    for pair in 0..PAIRS {
        let home = root.path().join(format!("pair-{pair}"));
        let docs: Vec<String> = files(&home.join("ws/.flower/notes"), "md")
            .iter()
            .filter_map(|p| std::fs::read_to_string(p).ok())
            .collect();
        for who in NAMES {
            for g in ["g1", "g2"] {
                let marker = format!("Work of {who}-{g}.");
                if !docs.iter().any(|d| d.contains(&marker)) {
                    lost += 1;
                }
            }
        }
        for log in files(&home.join("data/flower/logs"), "log") {
            let text = std::fs::read_to_string(log).unwrap_or_default();
            for line in text
                .lines()
                .filter(|l| l.contains("handoff: document lock"))
            {
                if let Some(n) = line
                    .split("lock_us=")
                    .nth(1)
                    .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
                    .and_then(|n| n.parse::<u64>().ok())
                {
                    lock_us.push(n);
                }
            }
        }
    }
    for (_, who, server) in &servers {
        let reqs = server.requests();
        let other = NAMES
            .iter()
            .find(|n| *n != who)
            .copied()
            .unwrap_or_default();
        for (i, g) in [(2usize, "g1"), (4, "g2")] {
            let first = reqs.get(i).map(first_message_text).unwrap_or_default();
            if !first.contains(&format!("Work of {who}-{g}."))
                || first.contains(&format!("Work of {other}"))
            {
                cross += 1;
            }
        }
    }
    lock_us.sort_unstable();
    println!(
        "{PAIRS} same-step pairs, {} processes at once, {:.1} s: documents lost {lost} (goal 0), cross-briefings {cross} (goal 0), processes failed {failed}, second processes renamed to same-2 {renamed}/{PAIRS}",
        PAIRS * 2,
        wall.as_secs_f64()
    );
    println!(
        "document lock per handoff (freeze + read-back, {} handoffs, under that load): median {:.3} ms (goal <= 1 ms), p90 {:.3} ms, max {:.3} ms",
        lock_us.len(),
        pct(&lock_us, 0.5) as f64 / 1e3,
        pct(&lock_us, 0.9) as f64 / 1e3,
        lock_us.last().copied().unwrap_or(0) as f64 / 1e3,
    );
}

/// The lock's own cost, uncontended: a freeze with it against one without it, interleaved.
fn uncontended() {
    const RUNS: usize = 301;
    let dir = tempfile::tempdir().expect("tempdir");
    let wb = dir.path();
    let text = doc("bench");
    let mut n = 0u64;
    let mut freeze = |locked: bool| {
        n += 1;
        let text = format!("{text}{n}\n");
        let t = Instant::now();
        let r = if locked {
            store::freeze(wb, "s", &text, n)
        } else {
            store::freeze_unlocked(wb, "s", &text, n)
        };
        r.expect("freeze");
        t.elapsed()
    };
    let mut with = Vec::new();
    let mut without = Vec::new();
    for _ in 0..RUNS {
        with.push(freeze(true));
        without.push(freeze(false));
    }
    let med = |v: &mut Vec<Duration>| {
        v.sort_unstable();
        v[v.len() / 2]
    };
    let (w, wo) = (med(&mut with), med(&mut without));
    let lock_only = median_of(RUNS, || {
        let t = Instant::now();
        let _ = flower_tui::engine::handoff::workbench_locks::with_doc_lock(wb, "s", || Ok(()));
        t.elapsed()
    });
    println!(
        "uncontended, one process: freeze {:.3} ms with the lock, {:.3} ms without; taking and releasing it alone {:.3} ms (median of {RUNS})",
        w.as_secs_f64() * 1e3,
        wo.as_secs_f64() * 1e3,
        lock_only.as_secs_f64() * 1e3
    );
}
