//! Language servers, real ones (pylsp with pyflakes; typescript-language-server), installed by
//! the bench's own set-up from PyPI and npm (the tests' `lsp_setup`): the time from the end of an
//! edit to its diagnostics (warm: p50, p95 over alternating breaking and fixing edits), the first
//! diagnostics of a cold start (the server started by the first file), the memory the servers
//! add (their processes' resident sets) and how long they take to shut down. Everything goes
//! through the manager the engine uses, with its settle time after an answer; its wait is lifted
//! so that no figure is cut off at the 3 s a tool call waits (the edits that took longer than
//! that are counted instead).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use flower_tui::engine::lsp::{DEFAULT_WAIT, LspManager, LspParams, spec};
use serde_json::json;

use crate::support::lsp_setup;

const EDITS: usize = 30;
/// Long enough for any answer of a working server, however loaded the machine.
const PATIENT: Duration = Duration::from_secs(120);

fn manager(ws: &Path, path: &str, only: &str) -> LspManager {
    let mut env = BTreeMap::new();
    env.insert("PATH".to_string(), path.to_string());
    env.insert(
        "HOME".to_string(),
        std::env::var("HOME").unwrap_or_default(),
    );
    let servers = spec::builtins()
        .into_iter()
        .map(|mut s| {
            s.enabled = s.name == only;
            s
        })
        .collect();
    let mut p = LspParams::new(servers, ws.to_path_buf(), env);
    p.wait = PATIENT;
    LspManager::new(p)
}

/// One `write_file` as the engine runs it: the watch, the write, then the wait for diagnostics.
async fn edit(lsp: &LspManager, ws: &Path, name: &str, text: &str) -> (Duration, usize, usize) {
    let watch = lsp.before_call("write_file", &json!({"path": name, "content": text}));
    std::fs::write(ws.join(name), text).unwrap();
    let t = Instant::now();
    let r = lsp.after_call(watch, None).await.expect("a report");
    (t.elapsed(), r.new.len(), r.notes.len())
}

/// Resident memory (KiB) of the processes whose working directory is `dir`.
fn rss_in(dir: &Path) -> u64 {
    let mut kib = 0;
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        if !e
            .file_name()
            .to_string_lossy()
            .chars()
            .all(|c| c.is_ascii_digit())
        {
            continue;
        }
        if std::fs::read_link(e.path().join("cwd")).is_ok_and(|c| c == dir) {
            let status = std::fs::read_to_string(e.path().join("status")).unwrap_or_default();
            kib += status
                .lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
                .unwrap_or(0);
        }
    }
    kib
}

fn pct(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

async fn one(path: &str, server: &str, file: &str, good: &str, bad: &str) {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().canonicalize().unwrap();
    let lsp = manager(&ws, path, server);
    let (cold, _, notes) = edit(&lsp, &ws, file, good).await;
    println!(
        "  {server}: cold start to first diagnostics {cold:.2?}{}",
        if notes > 0 { " (no answer)" } else { "" }
    );
    let mut times = Vec::new();
    for i in 0..EDITS {
        let text = if i % 2 == 0 { bad } else { good };
        let (took, new, notes) = edit(&lsp, &ws, file, text).await;
        assert!(
            notes == 0 && (new > 0) == (i % 2 == 0),
            "edit {i}: {new} new problems, {notes} notes"
        );
        times.push(took);
    }
    times.sort_unstable();
    let late = times.iter().filter(|t| **t > DEFAULT_WAIT).count();
    println!(
        "  {server}: edit end → diagnostics, warm: p50 {:.0?}, p95 {:.0?}, max {:.0?} ({EDITS} edits, {late} over the {:.0?} a call waits)",
        pct(&times, 0.5),
        pct(&times, 0.95),
        times.last().copied().unwrap_or_default(),
        DEFAULT_WAIT,
    );
    println!(
        "  {server}: memory of its processes: {:.0} MB",
        rss_in(&ws) as f64 / 1024.0
    );
    let t = Instant::now();
    lsp.shutdown().await;
    println!("  {server}: shutdown {:.0?}", t.elapsed());
}

pub fn run() {
    let path = match lsp_setup::servers() {
        Ok(servers) => servers.path(),
        Err(why) => return lsp_setup::skip("lsp bench", &why),
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        one(
            &path,
            "pylsp",
            "calc.py",
            "def total(xs):\n    return sum(xs)\n",
            "def total(xs):\n    return sum(xs) + bonus\n",
        )
        .await;
        one(
            &path,
            "typescript",
            "app.ts",
            "export const n: number = 1;\n",
            "export const n: number = \"one\";\n",
        )
        .await;
    });
}
