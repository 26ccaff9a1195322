//! Faults no SDK would commit, sent as raw lines: a malformed line gets a parse error and the
//! connection goes on; an unknown method gets "method not found"; an unknown session to load is
//! an error; an editor that hangs up mid-turn aborts the turn and stops the agent with its ledger
//! whole; SIGTERM and kill -9 mid-command leave the ledger whole and no process behind; a run
//! open in one process is refused to a second (which says who holds it) and loses nothing. Every
//! line the agent writes on stdout is a JSON-RPC message.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{Home, set_up, u};
use crate::support::fake::{FakeServer, Reply, anthropic as a};
use crate::support::harness::text_prefix;
use crate::support::mcp_setup::{pids_with_env, wait_gone};

/// `flower-tui acp` on pipes, its stdout read line by line on a thread.
struct Raw {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    seen: Vec<Value>,
}

impl Raw {
    fn start(home: &Home, server: &FakeServer) -> Raw {
        Raw::start_with(home, server, &[], None)
    }

    /// With `args`, and `marker` (`NAME=value`) in the agent's environment: everything it
    /// starts carries it, so what is left of it can be found in `/proc`.
    fn start_with(home: &Home, server: &FakeServer, args: &[&str], marker: Option<&str>) -> Raw {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_flower-tui"));
        home.env(&mut cmd, server);
        if let Some((k, v)) = marker.and_then(|m| m.split_once('=')) {
            cmd.env(k, v);
        }
        let mut child = cmd
            .arg("acp")
            .args(args)
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

    /// `initialize`, then a new session in the workspace (or `load` of a run): the session id,
    /// or the error of the load.
    fn open(&mut self, home: &Home, load: Option<&str>) -> Result<String, Value> {
        self.request(1, "initialize", json!({"protocolVersion": 1}));
        self.response(1);
        let ws = home.ws().display().to_string();
        match load {
            Some(id) => {
                self.request(
                    2,
                    "session/load",
                    json!({"cwd": ws, "sessionId": id, "mcpServers": []}),
                );
                let answer = self.response(2);
                match answer.get("error") {
                    Some(e) => Err(e.clone()),
                    None => Ok(id.to_string()),
                }
            }
            None => {
                self.request(2, "session/new", json!({"cwd": ws, "mcpServers": []}));
                let answer = self.response(2);
                Ok(answer["result"]["sessionId"].as_str().unwrap().to_string())
            }
        }
    }

    fn prompt(&mut self, req: u64, id: &str, text: &str) {
        self.request(
            req,
            "session/prompt",
            json!({"sessionId": id, "prompt": [{"type": "text", "text": text}]}),
        );
    }

    /// Wait for the agent to end; its status.
    fn ended(&mut self, within: Duration) -> std::process::ExitStatus {
        let deadline = Instant::now() + within;
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s;
            }
            assert!(Instant::now() < deadline, "the agent did not stop");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// A marker unique to this test process and `name`.
fn marker(name: &str) -> String {
    format!("FLOWER_ACP_FAULT={name}-{}", std::process::id())
}

/// The processes carrying `marker` other than `agent`, waited for until one shows up.
fn children_of(marker: &str, agent: u32) -> Vec<u32> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let kids: Vec<u32> = pids_with_env(marker)
            .into_iter()
            .filter(|p| *p != agent)
            .collect();
        if !kids.is_empty() {
            return kids;
        }
        assert!(Instant::now() < deadline, "the command never started");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The run's ledger reads back: its manifest is JSON naming the session, every transcript line
/// but a torn last one is JSON, and `text` is in it.
fn ledger_whole(home: &Home, id: &str, text: &str) {
    let manifest = home.manifest(id);
    let session = manifest["steps"][0]["session_id"]
        .as_str()
        .unwrap_or_default();
    assert!(!session.is_empty(), "{manifest:#}");
    let path = home
        .data()
        .join("runs")
        .join(id)
        .join("sessions")
        .join(format!("{session}.jsonl"));
    let transcript = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = transcript.lines().collect();
    for line in lines.iter().take(lines.len().saturating_sub(1)) {
        serde_json::from_str::<Value>(line).unwrap_or_else(|e| panic!("{e}: {line}"));
    }
    assert!(transcript.contains(text), "{transcript}");
}

/// A second process loads the run and replays `text`: nothing of it was lost.
fn loads_again(home: &Home, server: &FakeServer, id: &str, text: &str) {
    let mut again = Raw::start(home, server);
    again
        .open(home, Some(id))
        .unwrap_or_else(|e| panic!("the run does not load again: {e}"));
    let shown = again
        .seen
        .iter()
        .any(|m| m["params"]["update"]["content"]["text"] == text);
    assert!(shown, "{text} not replayed: {:#?}", again.seen);
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
    let (_rt, server, home) = set_up();
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
    let (_rt, server, home) = set_up();
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
    assert!(aborted(&text), "the turn was aborted: {text}");
}

/// The transcript records a turn that ended interrupted (aborted, as Esc does).
fn aborted(transcript: &str) -> bool {
    transcript.lines().any(|line| {
        serde_json::from_str::<Value>(line).is_ok_and(|l| {
            l["event"]["type"] == "turn_end" && l["event"]["reason"] == "interrupted"
        })
    })
}

/// A signal mid-command: SIGTERM stops the agent as a hang-up does (the turn aborted, the
/// ledger written), kill -9 stops it dead; either way nothing it started is left running and
/// the run loads again with what was said.
fn killed_mid_command(signal: i32, name: &str) {
    let (_rt, server, home) = set_up();
    server.push(a::tool_use(
        "b1",
        "bash",
        r#"{"command": "sleep 60 & sleep 60"}"#,
        u(1_000),
    ));
    let marker = marker(name);
    let mut raw = Raw::start_with(&home, &server, &["--yes"], Some(&marker));
    let id = raw.open(&home, None).unwrap();
    raw.prompt(3, &id, "a long task");
    let agent = raw.child.id();
    let kids = children_of(&marker, agent);
    // SAFETY: kill(2) on the agent we started.
    unsafe { libc::kill(agent as i32, signal) };
    let status = raw.ended(Duration::from_secs(30));
    if signal == libc::SIGKILL {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(libc::SIGKILL));
    } else {
        assert_eq!(status.code(), Some(128 + signal), "{status}");
    }
    let left = wait_gone(&marker, Duration::from_secs(10));
    assert!(
        left.is_empty(),
        "left running: {left:?} (the command was {kids:?})"
    );
    ledger_whole(&home, &id, "a long task");
    if signal != libc::SIGKILL {
        // The turn was aborted as Esc does: the command's result and the turn's end recorded.
        let path = home.data().join("runs").join(&id).join("sessions");
        let all: String = std::fs::read_dir(path)
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
            .collect();
        assert!(all.contains("b1"), "{all}");
        assert!(aborted(&all), "{all}");
    }
    drop(raw);
    loads_again(&home, &server, &id, "a long task");
}

#[test]
fn sigterm_mid_turn_leaves_the_ledger_whole_and_no_child_behind() {
    killed_mid_command(libc::SIGTERM, "term");
}

#[test]
fn kill_9_mid_turn_leaves_the_ledger_whole_and_no_child_behind() {
    killed_mid_command(libc::SIGKILL, "kill");
}

#[test]
fn a_run_open_in_one_process_is_refused_to_a_second_and_loses_nothing() {
    let (_rt, server, home) = set_up();
    server.push(a::text("First answer.", u(1_000)));
    let mut first = Raw::start(&home, &server);
    let id = first.open(&home, None).unwrap();
    first.prompt(3, &id, "first question");
    assert!(first.response(3).get("result").is_some());

    // A second editor process asks for the same run while the first holds it.
    let mut second = Raw::start(&home, &server);
    let refused = second.open(&home, Some(&id)).unwrap_err();
    let message = refused["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(&format!("run {id} is open in another flower-tui acp"))
            && message.contains(&format!("process {}", first.child.id())),
        "{refused}"
    );
    // The second one's connection goes on; the first session goes on too.
    second.request(5, "session/list", json!({}));
    assert!(second.response(5).get("result").is_some());
    server.push(a::text("Second answer.", u(1_200)));
    first.prompt(4, &id, "second question");
    assert!(first.response(4).get("result").is_some());
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2, "the refused load asked the model nothing");

    // Once the first has gone, the run loads with both exchanges.
    drop(first.stdin.take());
    assert_eq!(first.ended(Duration::from_secs(30)).code(), Some(0));
    drop(second);
    loads_again(&home, &server, &id, "first question");
    loads_again(&home, &server, &id, "second question");
}
