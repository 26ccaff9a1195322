//! Headless mode: the engine without a terminal; events as JSON lines on stdout.

use std::io::Write;

use crate::config::{Config, OutputFormat};
use crate::engine::protocol::{Event, ExitReason, Op, StreamState, TurnId};
use crate::engine::session;

/// The task of `-p -`: all of `input` (stdin), which must not be empty.
pub fn task_from(mut input: impl std::io::Read) -> std::io::Result<String> {
    let mut bytes = Vec::new();
    input.read_to_end(&mut bytes)?;
    let task = String::from_utf8(bytes)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    if task.trim().is_empty() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "the task read from stdin is empty",
        ));
    }
    Ok(task)
}

/// Run one task to completion. Returns the process exit code.
pub async fn run(mut config: Config) -> i32 {
    // Held to the end: the demo's scratch directory goes when it is dropped.
    let _scratch = match crate::launch::prepare_demo(&mut config, false) {
        Ok(s) => s,
        Err(e) => return crate::launch::start_failed(&e),
    };
    let Some(task) = config.prompt.clone() else {
        eprintln!("flower-tui: headless mode needs a task (-p \"task\")");
        return 2;
    };
    if config.resume == Some(crate::config::ResumeChoice::Pick) {
        // No picker without a terminal: say which runs there are and how to name one.
        let runs = crate::engine::ledger::run_list::list(&config.data_dir, &config.workspace);
        if runs.is_empty() {
            eprintln!(
                "flower-tui: --resume: no earlier session of {}",
                config.workspace.display()
            );
        } else {
            eprintln!(
                "flower-tui: --resume needs a run id in headless mode (flower-tui --resume RUN_ID -p …); this workspace's sessions, newest first:\n{}",
                crate::engine::ledger::run_list::describe(&runs, 10).trim_end()
            );
        }
        return 2;
    }
    let params = match crate::launch::engine_params(&config, false) {
        Ok(p) => p,
        Err(e) => return crate::launch::start_failed(&e),
    };
    let run_dir = params.run_dir.root.clone();
    let mut mcp = params.mcp.clone();
    let mut handle = match session::spawn(params) {
        Ok(h) => h,
        Err(e) => return crate::launch::start_failed(&e),
    };
    eprintln!("flower-tui: run directory {}", run_dir.display());
    let turn = TurnId::FIRST;
    if handle
        .ops
        .send(Op::UserTurn { turn, text: task })
        .await
        .is_err()
    {
        eprintln!("flower-tui: the engine stopped before the task was sent");
        return 1;
    }
    let json = config.output == OutputFormat::Json;
    let stdout = std::io::stdout();
    let mut answer = String::new();
    let mut cost = 0.0;
    let mut turns = 0;
    let mut session_id = String::new();
    let mut failure: Option<String> = None;
    let mut code = 1;
    // SIGTERM, SIGHUP or SIGINT stop the turn the way Esc does (every tool call answered, the
    // transcript and ledger written), then the result says why and the exit code is 128 + N.
    let mut signals = Signals::new();
    let mut stopped_by: Option<(&'static str, i32)> = None;
    loop {
        let ev = tokio::select! {
            ev = handle.events.recv() => match ev {
                Some(ev) => ev,
                None => break,
            },
            sig = signals.next(), if stopped_by.is_none() => {
                stopped_by = Some(sig);
                eprintln!("flower-tui: {}: stopping the turn", sig.0);
                let _ = handle.ops.send(Op::Abort { turn }).await;
                continue;
            }
        };
        match &ev {
            Event::SessionStarted { session_id: id, .. } => session_id = id.clone(),
            Event::UserMessage { .. } => answer.clear(),
            Event::TextDelta { text } => answer.push_str(text),
            // A replayed try's text replaces the broken one's.
            Event::ToolCall { .. } | Event::Stream(StreamState::Discarded { .. }) => answer.clear(),
            Event::Usage { cost_usd, .. } => cost += cost_usd,
            Event::Error { message, .. } => failure = Some(message.clone()),
            _ => {}
        }
        if json {
            print_json(&stdout, &ev);
        } else if let Event::Warning { message } | Event::Notice { message } = &ev {
            eprintln!("flower-tui: {message}");
        }
        if let Event::TurnEnd {
            turn: ended,
            reason,
            ..
        } = &ev
            && *ended == turn
        {
            turns += 1;
            let ok = matches!(
                reason,
                ExitReason::Completed | ExitReason::MaxIterations { .. }
            );
            code = match stopped_by {
                Some((_, n)) => 128 + n,
                None if ok => 0,
                None => 1,
            };
            if let Some((name, _)) = stopped_by {
                failure = Some(format!("stopped by {name}"));
            }
            let ok = ok && stopped_by.is_none();
            // The servers stop before the result, so their last `mcp_status` (stopped) is
            // printed and `result` stays the last line.
            if let Some(mcp) = mcp.take() {
                mcp.shutdown().await;
                if json {
                    for status in mcp.statuses() {
                        print_json(&stdout, &Event::McpStatus(status));
                    }
                }
            }
            let result = Event::Result {
                text: if ok {
                    answer.clone()
                } else {
                    failure.clone().unwrap_or_else(|| reason.to_string())
                },
                is_error: !ok,
                num_turns: turns,
                // The ledger has every request's cost (writing turns and summaries too).
                cost_usd: crate::engine::ledger::Manifest::load(&run_dir.join("manifest.json"))
                    .map(|m| m.steps.iter().map(|st| st.cost_usd).sum())
                    .unwrap_or(cost),
                session_id: session_id.clone(),
            };
            if json {
                print_json(&stdout, &result);
            } else if ok {
                println!("{}", answer.trim_end());
            } else {
                eprintln!(
                    "flower-tui: {}",
                    failure.clone().unwrap_or_else(|| reason.to_string())
                );
            }
            let _ = handle.ops.send(Op::Shutdown).await;
            break;
        }
    }
    let _ = handle.task.await;
    if let Some(mcp) = mcp {
        mcp.shutdown().await;
    }
    code
}

/// The signals that stop a headless run: the first to arrive, with its name and number.
struct Signals {
    term: Option<tokio::signal::unix::Signal>,
    hup: Option<tokio::signal::unix::Signal>,
    int: Option<tokio::signal::unix::Signal>,
}

impl Signals {
    fn new() -> Signals {
        use tokio::signal::unix::{SignalKind, signal};
        Signals {
            term: signal(SignalKind::terminate()).ok(),
            hup: signal(SignalKind::hangup()).ok(),
            int: signal(SignalKind::interrupt()).ok(),
        }
    }

    async fn next(&mut self) -> (&'static str, i32) {
        use crate::launch::recv_signal as recv;
        tokio::select! {
            _ = recv(&mut self.term) => ("SIGTERM", 15),
            _ = recv(&mut self.hup) => ("SIGHUP", 1),
            _ = recv(&mut self.int) => ("SIGINT", 2),
        }
    }
}

/// One event as one JSON line on stdout, flushed.
fn print_json(stdout: &std::io::Stdout, ev: &Event) {
    if let Ok(line) = serde_json::to_string(ev) {
        let mut out = stdout.lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }
}
