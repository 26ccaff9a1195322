//! `flower-tui acp`: the editor's wait from sending `session/prompt` to the first
//! `agent_message_chunk` of the reply, over real pipes to the real binary, against the loopback
//! fake model (whose first delta is immediate). One process, one session, many prompts in turn;
//! p50 and p95, with the machine's load at the time.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::fake::{FakeServer, U, anthropic as a};

const PROMPTS: usize = 60;
const KEY: &str = "sk-bench-0123456789abcdef";

pub fn run() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let server = rt.block_on(FakeServer::start());
    for i in 0..PROMPTS + 1 {
        server.push(a::text(
            &format!("Reply {i}, in a few words."),
            U::new(1_000, 10),
        ));
    }
    let home = tempfile::tempdir().unwrap();
    let ws = home.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_flower-tui"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("XDG_DATA_HOME", home.path().join("data"))
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .env("ANTHROPIC_API_KEY", KEY)
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .arg("acp")
        .current_dir(&ws)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, lines) = mpsc::channel::<(Instant, Value)>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let Ok(msg) = serde_json::from_str(&line) else {
                continue;
            };
            if tx.send((Instant::now(), msg)).is_err() {
                break;
            }
        }
    });
    let mut send = |msg: Value| {
        stdin.write_all(format!("{msg}\n").as_bytes()).unwrap();
        stdin.flush().unwrap();
        Instant::now()
    };
    let wait = |pick: &dyn Fn(&Value) -> bool| -> Instant {
        loop {
            let (at, msg) = lines.recv_timeout(Duration::from_secs(60)).unwrap();
            if pick(&msg) {
                return at;
            }
        }
    };
    let response = |id: u64| move |m: &Value| m["id"] == id && m.get("method").is_none();
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}),
    );
    wait(&response(1));
    let cwd = ws.canonicalize().unwrap().display().to_string();
    send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": cwd, "mcpServers": []}}),
    );
    let session = {
        let (_, msg) = loop {
            let got = lines.recv_timeout(Duration::from_secs(60)).unwrap();
            if got.1["id"] == 2 {
                break got;
            }
        };
        msg["result"]["sessionId"].as_str().unwrap().to_string()
    };
    let mut firsts = Vec::new();
    // The first prompt warms the connection to the model; it is not counted.
    for i in 0..=PROMPTS {
        let id = 10 + i as u64;
        let sent = send(
            json!({"jsonrpc": "2.0", "id": id, "method": "session/prompt", "params": {
            "sessionId": session, "prompt": [{"type": "text", "text": format!("prompt {i}")}]}}),
        );
        let first = wait(&|m: &Value| {
            m["method"] == "session/update"
                && m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
        });
        wait(&response(id));
        if i > 0 {
            firsts.push(first - sent);
        }
    }
    drop(stdin);
    let _ = child.wait();
    firsts.sort_unstable();
    let pct = |p: usize| firsts[(firsts.len() * p / 100).min(firsts.len() - 1)];
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load: Vec<&str> = load.split_whitespace().take(3).collect();
    println!(
        "prompt → first agent_message_chunk over {} prompts: p50 {:.1} ms, p95 {:.1} ms, max {:.1} ms (load average {}, {} cores)",
        firsts.len(),
        pct(50).as_secs_f64() * 1000.0,
        pct(95).as_secs_f64() * 1000.0,
        firsts[firsts.len() - 1].as_secs_f64() * 1000.0,
        load.join(" "),
        std::thread::available_parallelism().map_or(0, |n| n.get()),
    );
}
