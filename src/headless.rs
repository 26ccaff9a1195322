//! Headless mode: the engine without a terminal, for scripts and tests. One task (`-p`) runs to
//! its end; every event is printed as a JSON line on stdout (or, with `--output text`, only the
//! answer), and the last line is the `result`. Exit code 0 when the turn completed, 1 when it
//! failed, 128 + N when signal N (SIGTERM, SIGHUP, SIGINT) stopped it the way Esc does (every tool
//! call answered, the transcript and ledger written).
//!
//! `-p /undo` and `-p /redo` (with `--continue`) restore the step's last turn instead of running
//! one, and never write over a file changed since that turn: they name it and restore nothing.
//! `-p "/name args"` runs the custom command `name` as the TUI would; `-p /skills` lists the
//! skills and runs no turn.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use crate::config::{Config, OutputFormat, SessionChoice};
use crate::engine::checkpoint::{OnConflict, UndoAction};
use crate::engine::commands::Catalog;
use crate::engine::mcp::McpManager;
use crate::engine::protocol::{Event, ExitReason, JobInfo, JobsOp, Op, StreamState, TurnId};
use crate::engine::session::{self, EngineHandle};
use crate::engine::skills::SkillCatalog;
use crate::launch;
use crate::tui::render::wrap::sanitize;

/// The task of `-p -`: all of `input` (stdin), which must not be empty.
pub(crate) fn task_from(mut input: impl std::io::Read) -> std::io::Result<String> {
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
pub(crate) async fn run(mut config: Config) -> i32 {
    // Held to the end: the demo's scratch directory goes when it is dropped.
    let _scratch = match launch::prepare_demo(&mut config, false) {
        Ok(s) => s,
        Err(e) => return launch::start_failed(&e),
    };
    let Some(task) = config.prompt.clone() else {
        eprintln!("flower-tui: headless mode needs a task (-p \"task\")");
        return 2;
    };
    if config.places.session == SessionChoice::Pick {
        return no_picker(&config);
    }
    // The demo's workspace exists only now: its environment is looked at from here.
    if _scratch.is_some() {
        look_early(&config);
    }
    let params = match launch::engine_params(&config, false) {
        Ok(p) => p,
        Err(e) => return launch::start_failed(&e),
    };
    let run_dir = params.run_dir.root.clone();
    let mcp = params.mcp.clone();
    if task.trim() == "/skills" {
        return list_skills(
            &params.extensions.skills,
            config.front.output == OutputFormat::Json,
        );
    }
    let op = first_op(&task, &params.extensions.commands);
    let handle = match session::spawn(params) {
        Ok(h) => h,
        Err(e) => return launch::start_failed(&e),
    };
    eprintln!("flower-tui: run directory {}", run_dir.display());
    let out = Printer {
        json: config.front.output == OutputFormat::Json,
        stdout: std::io::stdout(),
    };
    match restore_action(&task) {
        Some(Ok((action, on_conflict))) => {
            return restore(handle, action, on_conflict, &out).await;
        }
        Some(Err(e)) => {
            // Never a task for the model: the user meant a command.
            eprintln!("flower-tui: {e}");
            let _ = handle.ops.send(Op::Shutdown).await;
            let _ = handle.task.await;
            return 2;
        }
        None => {}
    }
    let turn = TurnId::FIRST;
    if handle.ops.send(op).await.is_err() {
        eprintln!("flower-tui: the engine stopped before the task was sent");
        return 1;
    }
    drive(handle, turn, &run_dir, mcp, &out).await
}

/// A new run's first session starts as soon as the engine runs: its environment block (git
/// status) is looked at now, beside the rest of the start. Called by the start as soon as the
/// configuration is read (and again by [`run`] for the demo, whose workspace is made there).
pub(crate) fn look_early(config: &Config) {
    let Some(task) = config.prompt.as_deref() else {
        return;
    };
    if config.places.session == SessionChoice::New
        && restore_action(task).is_none()
        && task.trim() != "/skills"
    {
        crate::engine::sysprompt::Environment::look_early(&config.places.workspace);
    }
}

/// The task's op: `/name args` runs the custom command `name`, anything else is the user's
/// message.
fn first_op(task: &str, commands: &Catalog) -> Op {
    let turn = TurnId::FIRST;
    if let Some(rest) = task.trim_start().strip_prefix('/') {
        let (word, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        if let Some(command) = commands.get(word) {
            return Op::Command {
                turn,
                name: command.name.clone(),
                args: args.trim().to_string(),
            };
        }
    }
    Op::UserTurn {
        turn,
        text: task.to_string(),
    }
}

/// `-p /skills`: the skills this run would offer, and the files that could not be loaded; no
/// turn runs. Exit code 0.
fn list_skills(skills: &SkillCatalog, json: bool) -> i32 {
    let text = skills.report();
    if json {
        let out = Printer {
            json,
            stdout: std::io::stdout(),
        };
        out.json_line(&Event::Result {
            text,
            is_error: false,
            num_turns: 0,
            cost_usd: 0.0,
            session_id: String::new(),
            plan: None,
            jobs: Vec::new(),
        });
    } else {
        println!("{}", sanitize(text.trim_end()));
    }
    0
}

/// `--resume` alone: no picker without a terminal, so say which runs there are and how to name
/// one. Exit code 2.
fn no_picker(config: &Config) -> i32 {
    let places = &config.places;
    let runs = crate::engine::ledger::run_list::list(&places.data_dir, &places.workspace);
    if runs.is_empty() {
        eprintln!(
            "flower-tui: --resume: no earlier session of {}",
            places.workspace.display()
        );
    } else {
        eprintln!(
            "flower-tui: --resume needs a run id in headless mode (flower-tui --resume RUN_ID -p …); this workspace's sessions, newest first:\n{}",
            crate::engine::ledger::run_list::describe(&runs, 10).trim_end()
        );
    }
    2
}

/// Print the engine's events until `turn` ends (or the engine stops), then the result; stop the
/// MCP servers and the engine. Returns the exit code.
async fn drive(
    mut handle: EngineHandle,
    turn: TurnId,
    run_dir: &Path,
    mut mcp: Option<Arc<McpManager>>,
    out: &Printer,
) -> i32 {
    let mut tally = Tally::default();
    let mut signals = crate::launch::StopSignals::new();
    let mut stopped_by: Option<(&'static str, i32)> = None;
    let mut code = 1;
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
        tally.observe(&ev);
        out.event(&ev);
        if let Event::TurnEnd {
            turn: ended,
            reason,
            ..
        } = &ev
            && *ended == turn
        {
            let ended = tally.end(reason, stopped_by);
            code = ended.code;
            // Jobs end with the run: stopped now, so the result lists how they ended.
            if !tally.jobs.is_empty() {
                stop_jobs(&mut handle, &mut tally, out).await;
            }
            // The servers stop before the result, so their last `mcp_status` (stopped) is
            // printed and `result` stays the last line.
            if let Some(mcp) = mcp.take() {
                mcp.shutdown().await;
                for status in mcp.statuses() {
                    out.json_only(&Event::McpStatus(status));
                }
            }
            out.result(&tally, &ended, run_dir);
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

/// Stop every background job and wait for the engine's list of them (each is killed after its
/// grace period at the latest); the events on the way are printed.
async fn stop_jobs(handle: &mut EngineHandle, tally: &mut Tally, out: &Printer) {
    if handle.ops.send(Op::Jobs(JobsOp::StopAll)).await.is_err() {
        return;
    }
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    while let Ok(Some(ev)) = tokio::time::timeout_at(deadline, handle.events.recv()).await {
        tally.observe(&ev);
        out.event(&ev);
        if let Event::Jobs { jobs } = &ev
            && jobs.iter().all(|j| !j.state.is_running())
        {
            break;
        }
    }
}

/// A slash command headless cannot run: it is never sent to the model as a task.
#[derive(Debug, thiserror::Error)]
enum RestoreUsage {
    #[error("/rewind works only in the TUI; headless has /undo and /redo")]
    RewindInTui,
    #[error("{command}: `{task}`? (usage: {command} [overwrite|skip])")]
    BadOption { command: String, task: String },
}

/// `-p /undo` or `-p /redo` (with `--continue`, whose step holds the undo stack), with `skip` or
/// `overwrite` as in the TUI. `None` when the task is no such command.
fn restore_action(task: &str) -> Option<Result<(UndoAction, OnConflict), RestoreUsage>> {
    let mut words = task.split_whitespace();
    let first = words.next()?;
    let action = match first {
        "/undo" => UndoAction::Undo,
        "/redo" => UndoAction::Redo,
        "/rewind" => return Some(Err(RestoreUsage::RewindInTui)),
        _ => return None,
    };
    let on_conflict = match (words.next(), words.next()) {
        (None, _) => OnConflict::Stop,
        (Some("skip"), None) => OnConflict::KeepUsers,
        (Some("overwrite"), None) => OnConflict::Overwrite,
        _ => {
            return Some(Err(RestoreUsage::BadOption {
                command: first.to_string(),
                task: task.trim().to_string(),
            }));
        }
    };
    Some(Ok((action, on_conflict)))
}

/// Undo or redo without asking: unless the task said `skip` or `overwrite`, files the user changed
/// since the turn are never written over; the result names them and nothing is restored. Exit code 0 when the files were restored.
async fn restore(
    mut handle: EngineHandle,
    action: UndoAction,
    on_conflict: OnConflict,
    out: &Printer,
) -> i32 {
    let op = Op::Restore {
        action,
        on_conflict,
    };
    let mut report = None;
    if handle.ops.send(op).await.is_ok() {
        while let Some(ev) = handle.events.recv().await {
            out.event(&ev);
            if let Event::Restore(r) = ev {
                report = Some(r);
                break;
            }
        }
    }
    let _ = handle.ops.send(Op::Shutdown).await;
    let _ = handle.task.await;
    let (text, ok) = match report {
        Some(r) => (r.summary(), r.moved()),
        None => ("the engine stopped before it answered".to_string(), false),
    };
    if out.json {
        out.json_line(&Event::Result {
            text,
            is_error: !ok,
            num_turns: 0,
            cost_usd: 0.0,
            session_id: String::new(),
            plan: None,
            jobs: Vec::new(),
        });
    } else if ok {
        println!("{}", sanitize(&text));
    } else {
        eprintln!("flower-tui: {}", sanitize(&text));
    }
    if ok { 0 } else { 1 }
}

/// What the events said so far: the answer, the cost, the turns, the session, the failure.
#[derive(Debug, Default)]
struct Tally {
    answer: String,
    cost: f64,
    turns: u32,
    session_id: String,
    failure: Option<String>,
    /// The plan file plan mode presented.
    plan: Option<std::path::PathBuf>,
    /// The background jobs, as the engine last listed them.
    jobs: Vec<JobInfo>,
}

/// How the task's turn ended.
struct Ended {
    ok: bool,
    /// The failure's text: the error, the signal, or the exit reason.
    failure: String,
    code: i32,
}

impl Tally {
    fn observe(&mut self, ev: &Event) {
        match ev {
            Event::SessionStarted { session_id, .. } => self.session_id = session_id.clone(),
            Event::UserMessage { .. } => self.answer.clear(),
            Event::TextDelta { text, .. } => self.answer.push_str(text),
            // A replayed try's text replaces the broken one's.
            Event::ToolCall { .. } | Event::Stream(StreamState::Discarded { .. }) => {
                self.answer.clear()
            }
            Event::Usage { cost_usd, .. } => self.cost += cost_usd,
            Event::Error { message, .. } => self.failure = Some(message.clone()),
            Event::Plan { path, .. } => self.plan = Some(path.clone()),
            Event::Jobs { jobs } => self.jobs.clone_from(jobs),
            _ => {}
        }
    }

    /// The turn ended for `reason`; `stopped_by` is the signal that stopped it, if one did.
    fn end(&mut self, reason: &ExitReason, stopped_by: Option<(&'static str, i32)>) -> Ended {
        self.turns += 1;
        let completed = matches!(
            reason,
            ExitReason::Completed | ExitReason::MaxIterations { .. }
        );
        let code = match stopped_by {
            Some((_, n)) => 128 + n,
            None if completed => 0,
            None => 1,
        };
        if let Some((name, _)) = stopped_by {
            self.failure = Some(format!("stopped by {name}"));
        }
        Ended {
            ok: completed && stopped_by.is_none(),
            failure: self.failure.clone().unwrap_or_else(|| reason.to_string()),
            code,
        }
    }
}

/// Where events go: JSON lines on stdout, or (text) warnings and notices on stderr.
struct Printer {
    json: bool,
    stdout: std::io::Stdout,
}

impl Printer {
    fn event(&self, ev: &Event) {
        if self.json {
            self.json_line(ev);
        } else if let Event::Warning { message } | Event::Notice { message } = ev {
            // File names from the workspace may hold escape sequences: never for the terminal.
            eprintln!("flower-tui: {}", sanitize(message));
        }
    }

    fn json_only(&self, ev: &Event) {
        if self.json {
            self.json_line(ev);
        }
    }

    /// The last line: the `result` event, or (text) the answer on stdout or the failure on stderr.
    fn result(&self, tally: &Tally, ended: &Ended, run_dir: &Path) {
        if !self.json {
            if ended.ok {
                println!("{}", sanitize(tally.answer.trim_end()));
                if let Some(plan) = &tally.plan {
                    println!("Plan: {}", sanitize(&plan.display().to_string()));
                }
            } else {
                eprintln!("flower-tui: {}", ended.failure);
            }
            return;
        }
        self.json_line(&Event::Result {
            text: if ended.ok {
                tally.answer.clone()
            } else {
                ended.failure.clone()
            },
            is_error: !ended.ok,
            num_turns: tally.turns,
            // The ledger has every request's cost (writing turns and summaries too).
            cost_usd: crate::engine::ledger::Manifest::load(&run_dir.join("manifest.json"))
                .map(|m| m.steps.iter().map(|st| st.figures.cost_usd).sum())
                .unwrap_or(tally.cost),
            session_id: tally.session_id.clone(),
            plan: tally.plan.clone(),
            jobs: tally.jobs.clone(),
        });
    }

    /// One event as one JSON line on stdout, flushed.
    fn json_line(&self, ev: &Event) {
        if let Ok(line) = serde_json::to_string(ev) {
            let mut out = self.stdout.lock();
            let _ = writeln!(out, "{line}");
            let _ = out.flush();
        }
    }
}
