//! Faults no SDK would commit, sent as raw lines: a malformed line gets a parse error and the
//! connection goes on; an unknown method gets "method not found"; an unknown session to load is
//! an error; an editor that hangs up mid-turn stops the agent with its ledger whole. Every line
//! the agent writes on stdout is a JSON-RPC message.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::Home;
use crate::support::fake::{FakeServer, Reply};
use crate::support::harness::text_prefix;
use crate::support::pty::runtime;

/// `flower-tui acp` on pipes, its stdout read line by line on a thread.
struct Raw {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    seen: Vec<Value>,
}

impl Raw {
    fn start(home: &Home, server: &FakeServer) -> Raw {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_flower-tui"));
        home.env(&mut cmd, server);
        let mut child = cmd
            .arg("acp")
            .current_dir(home.ws())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Raw {
            child,
            stdin,
            lines,
            seen: Vec::new(),
        }
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    fn request(&mut self, id: u64, method: &str, params: Value) {
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send(&msg.to_string());
    }

    /// The next message for which `pick` holds (every line on the way must be JSON-RPC 2.0).
    fn wait(&mut self, what: &str, pick: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no {what}; seen: {:#?}", self.seen));
            let msg: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout holds a line that is not JSON ({e}): {line}"));
            assert_eq!(msg["jsonrpc"], "2.0", "not JSON-RPC: {line}");
            self.seen.push(msg.clone());
            if pick(&msg) {
                return msg;
            }
        }
    }

    fn response(&mut self, id: u64) -> Value {
        self.wait(&format!("response {id}"), |m| {
            m["id"] == id && m.get("method").is_none()
        })
    }

    /// Send the request `id` and wait for its response.
    fn call(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.request(id, method, params);
        self.response(id)
    }
}

/// `response` is an error whose text holds `text`; the failure shows the whole response.
#[track_caller]
fn assert_error_says(response: &Value, text: &str) {
    assert!(response["error"].to_string().contains(text), "{response}");
}

impl Drop for Raw {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn bad_lines_and_unknown_methods_get_errors_and_the_connection_goes_on() {
    let rt = runtime();
    let server = rt.block_on(FakeServer::start());
    let home = Home::new();
    let mut raw = Raw::start(&home, &server);
    raw.send("this is not json");
    let parse = raw.wait("a parse error", |m| m.get("error").is_some());
    assert_eq!(parse["error"]["code"], -32700, "{parse}");
    assert_eq!(parse["id"], Value::Null);

    let init = raw.call(1, "initialize", json!({"protocolVersion": 1}));
    assert_eq!(init["result"]["protocolVersion"], 1, "{init}");

    let unknown_method = raw.call(2, "no/such/method", json!({}));
    assert_eq!(unknown_method["error"]["code"], -32601);

    raw.send(r#"{"jsonrpc": "2.0", "id": 3, "method": "session/new", "params": {"cwd": 5}}"#);
    assert_eq!(raw.response(3)["error"]["code"], -32602);

    let ws = home.ws().display().to_string();
    let relative = json!({"cwd": "relative/dir", "mcpServers": []});
    assert_error_says(&raw.call(4, "session/new", relative), "absolute");

    let unknown = json!({"cwd": ws, "sessionId": "no-such-run", "mcpServers": []});
    assert_error_says(&raw.call(5, "session/load", unknown), "no-such-run");

    let nope = json!({"sessionId": "nope", "prompt": []});
    assert!(raw.call(6, "session/prompt", nope).get("error").is_some());

    let opened = raw.call(7, "session/new", json!({"cwd": ws, "mcpServers": []}));
    assert!(opened["result"]["sessionId"].is_string(), "{opened}");
}

#[test]
fn an_editor_that_hangs_up_mid_turn_leaves_the_ledger_whole() {
    let rt = runtime();
    let server = rt.block_on(FakeServer::start());
    let home = Home::new();
    server.push(Reply::Stall {
        prefix: text_prefix("Working on it"),
    });
    let mut raw = Raw::start(&home, &server);
    raw.call(1, "initialize", json!({"protocolVersion": 1}));
    let ws = home.ws().display().to_string();
    let opened = raw.call(2, "session/new", json!({"cwd": ws, "mcpServers": []}));
    let id = opened["result"]["sessionId"].as_str().unwrap().to_string();
    raw.request(
        3,
        "session/prompt",
        json!({"sessionId": id, "prompt": [{"type": "text", "text": "a long task"}]}),
    );
    raw.wait("the first chunk", |m| {
        m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
    });
    // The editor goes away.
    drop(raw.stdin.take());
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(s) = raw.child.try_wait().unwrap() {
            break s;
        }
        assert!(
            Instant::now() < deadline,
            "the agent did not stop after the hang-up"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(0));
    // Whatever came before the end was protocol, and the turn was closed in the ledger.
    while let Ok(line) = raw.lines.try_recv() {
        let msg: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(msg["jsonrpc"], "2.0");
    }
    let manifest = home.manifest(&id);
    let step = &manifest["steps"][0];
    let session = step["session_id"].as_str().unwrap_or_default();
    assert!(!session.is_empty(), "{manifest:#}");
    let transcripts = home.data().join("runs").join(&id).join("sessions");
    let transcript = std::fs::read_dir(&transcripts)
        .unwrap()
        .filter_map(Result::ok)
        .find(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
        .expect("a transcript");
    let text = std::fs::read_to_string(transcript.path()).unwrap();
    for line in text.lines() {
        serde_json::from_str::<Value>(line).unwrap_or_else(|e| panic!("{e}: {line}"));
    }
    assert!(text.contains("a long task"), "{text}");
    assert!(
        text.contains("Working on it"),
        "the partial reply was kept: {text}"
    );
}
