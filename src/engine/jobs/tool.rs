//! The model's side of the jobs: `bash`'s `run_in_background` (start, with what the job printed
//! first and the URL or port it opened), `job_output` (the list, a job's new output since the
//! last read, its tail, or its lines matching a filter) and `job_stop`; the notice of ended jobs
//! the next request carries; the running jobs in a successor's briefing.

use std::time::Duration;

use regex::Regex;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::{JobInfo, JobState, Jobs, ports};
use crate::engine::fsutil::now_unix;
use crate::engine::text::one_line;
use crate::engine::tools::{ToolCtx, ToolOutput, names};
use crate::engine::types::ToolSpec;

/// Lines of a job a start shows.
const FIRST_LINES: usize = 20;

/// Whether a `bash` call asks to run in the background.
pub(crate) fn is_background(input: &Value) -> bool {
    input.get("run_in_background").and_then(Value::as_bool) == Some(true)
}

/// The specs of `job_output` and `job_stop`.
pub(crate) fn specs() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: names::JOB_OUTPUT.into(),
            description: "Read a background job (started with bash's run_in_background). Without \
                          `id`: the list of jobs with their state. With `id`: the output printed \
                          since your last read of it (the newest part when there is much), or \
                          its last `tail` lines, or only the lines matching the regex `filter`. \
                          You are told when a job ends without asking; do not poll in a loop."
                .into(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "id": {"type": "integer", "description": "The job's id."},
                    "filter": {"type": "string", "description": "A regular expression: only the new lines matching it."},
                    "tail": {"type": "integer", "minimum": 1, "maximum": 500, "description": "The last N lines instead of the new ones."}
                },
                "additionalProperties": false
            }),
        },
        ToolSpec {
            name: names::JOB_STOP.into(),
            description: "Stop a background job: SIGTERM to its process group, SIGKILL if it is \
                          still there after the grace period. Returns how it ended and its last \
                          lines."
                .into(),
            input_schema: json!({
                "type": "object",
                "properties": {"id": {"type": "integer", "description": "The job's id."}},
                "required": ["id"],
                "additionalProperties": false
            }),
        },
    ]
}

/// A job id from the call: a number, or a string such as `3` or `#3`.
fn job_id(input: &Value) -> Result<Option<u32>, String> {
    match input.get("id") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .map(Some)
            .ok_or_else(|| format!("`id` must be a job's number, got {n}")),
        Some(Value::String(s)) => s
            .trim()
            .trim_start_matches('#')
            .parse()
            .map(Some)
            .map_err(|_| format!("`id` must be a job's number, got \"{}\"", one_line(s, 40))),
        Some(other) => Err(format!("`id` must be a job's number, got {other}")),
    }
}

/// `3m 12s`, `45s`, `2h 05m`.
pub(crate) fn age(secs: u64) -> String {
    match secs {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m {:02}s", s / 60, s % 60),
        s => format!("{}h {:02}m", s / 3600, (s % 3600) / 60),
    }
}

/// `12 KiB`, `3.4 MiB`.
pub(crate) fn size(bytes: u64) -> String {
    match bytes {
        b if b < 1024 => format!("{b} B"),
        b if b < 1024 * 1024 => format!("{} KiB", b / 1024),
        b => format!("{:.1} MiB", b as f64 / (1024.0 * 1024.0)),
    }
}

/// Where a job listens, in words: `http://localhost:5173/, port 5173`.
fn reach(info: &JobInfo) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(url) = &info.url {
        parts.push(url.clone());
    }
    match info.ports.as_slice() {
        [] => {}
        [p] => parts.push(format!("port {p}")),
        ps => parts.push(format!(
            "ports {}",
            ps.iter().map(u16::to_string).collect::<Vec<_>>().join(", ")
        )),
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// One line about a job: `#2 running 3m 12s · npm run dev · 1,204 lines (56 KiB) · http://…`.
pub(crate) fn line(info: &JobInfo) -> String {
    let now = now_unix().0;
    let when = match (info.state, info.ended_unix) {
        (JobState::Running, _) => {
            format!("running for {}", age(now.saturating_sub(info.started_unix)))
        }
        (state, Some(end)) => format!(
            "{} after {}",
            state.describe(),
            age(end.saturating_sub(info.started_unix))
        ),
        (state, None) => state.describe(),
    };
    let mut out = format!(
        "#{} `{}` — {when}; {} lines ({})",
        info.id,
        one_line(&info.command, 120),
        info.lines,
        size(info.bytes)
    );
    if let Some(r) = reach(info) {
        out.push_str(&format!("; {r}"));
    }
    out
}

fn indented(lines: &[String]) -> String {
    lines
        .iter()
        .map(|l| format!("    {l}\n"))
        .collect::<String>()
}

impl Jobs {
    /// `bash` with `run_in_background`: start, wait briefly for the first lines (less when the
    /// job ends, prints a URL or opens a port), and say what came.
    pub async fn run_start(&self, input: &Value, ctx: &ToolCtx) -> ToolOutput {
        let Some(command) = input.get("command").and_then(Value::as_str) else {
            return ToolOutput::error("`bash`: the `command` argument is missing.");
        };
        if command.trim().is_empty() {
            return ToolOutput::error("`bash`: the command is empty.");
        }
        let id = match self.start(command, ctx).await {
            Ok(id) => id,
            Err(e) => return ToolOutput::error(e),
        };
        let deadline = Instant::now() + self.limits.first_wait;
        let mut probe_at = Instant::now() + Duration::from_millis(300);
        loop {
            tokio::time::sleep(Duration::from_millis(50)).await;
            let (running, url, pgid) = match self.table.lock() {
                Ok(t) => match t.job(id) {
                    Some(j) => (j.state.is_running(), j.log.url().is_some(), j.pgid),
                    None => break,
                },
                Err(_) => break,
            };
            if !running || url {
                break;
            }
            if Instant::now() >= probe_at {
                probe_at = Instant::now() + Duration::from_millis(300);
                // A walk of `/proc`: off the runtime's workers, which run the jobs' output.
                let found = match pgid {
                    Some(pgid) => tokio::task::spawn_blocking(move || ports::listening(pgid))
                        .await
                        .unwrap_or_default(),
                    None => Vec::new(),
                };
                if !found.is_empty() {
                    if let Ok(mut t) = self.table.lock()
                        && let Some(j) = t.job_mut(id)
                    {
                        j.ports = found;
                    }
                    break;
                }
            }
            if Instant::now() >= deadline {
                break;
            }
        }
        let Ok(mut t) = self.table.lock() else {
            return ToolOutput::error("the job table is broken");
        };
        let Some(job) = t.job_mut(id) else {
            return ToolOutput::error(format!("job #{id} is gone"));
        };
        let info = job.info(0);
        let first = job.log.first_lines(FIRST_LINES);
        // What was not shown here is the next read's new output.
        job.cursor = job.log.after_first_lines(FIRST_LINES);
        let mut out = String::new();
        if info.state.is_running() {
            out.push_str(&format!(
                "Job #{id} runs in the background: `{}`.\n",
                one_line(command, 200)
            ));
            if let Some(r) = reach(&info) {
                out.push_str(&format!("It listens at {r}.\n"));
            }
        } else {
            let elapsed = job.started.elapsed().as_secs_f64();
            out.push_str(&format!(
                "Job #{id} ended already ({}, after {elapsed:.1}s): `{}`.\n",
                info.state.describe(),
                one_line(command, 200)
            ));
        }
        if first.is_empty() {
            out.push_str("It printed nothing yet.\n");
        } else {
            out.push_str("Its first lines:\n");
            out.push_str(&indented(&first));
            if info.lines > first.len() as u64 {
                out.push_str(&format!("    [… {} lines so far in all]\n", info.lines));
            }
        }
        out.push_str(&format!(
            "Its whole output goes to {}.\n",
            info.log.display()
        ));
        if info.state.is_running() {
            out.push_str(&format!(
                "Read its new output with job_output {{\"id\": {id}}} (a `filter` greps it); stop \
                 it with job_stop {{\"id\": {id}}}. You will be told when it ends."
            ));
        } else {
            t.unannounced.retain(|&u| u != id);
        }
        let failed = matches!(
            info.state,
            JobState::Exited { code } if code != 0
        ) || matches!(info.state, JobState::Killed { .. } | JobState::Unknown);
        ToolOutput {
            is_error: failed,
            ..ToolOutput::ok(out.trim_end().to_string())
        }
    }

    /// `job_output` or `job_stop`; None for another tool.
    pub async fn run_tool(&self, name: &str, input: &Value) -> Option<ToolOutput> {
        let out = match name {
            names::JOB_OUTPUT => self.output_call(input).await,
            names::JOB_STOP => self.stop_call(input).await,
            _ => return None,
        };
        Some(out.unwrap_or_else(ToolOutput::error))
    }

    async fn output_call(&self, input: &Value) -> Result<ToolOutput, String> {
        let Some(id) = job_id(input)? else {
            let all = self.list(0);
            if all.is_empty() {
                return Ok(ToolOutput::ok("No background jobs were started."));
            }
            let lines: Vec<String> = all.iter().map(line).collect();
            return Ok(ToolOutput::ok(format!(
                "Background jobs:\n{}",
                lines.join("\n")
            )));
        };
        let filter = match input.get("filter").and_then(Value::as_str) {
            Some(f) if !f.is_empty() => {
                Some(Regex::new(f).map_err(|e| format!("`filter` is not a valid regex: {e}"))?)
            }
            _ => None,
        };
        let tail = match input.get("tail") {
            None | Some(Value::Null) => None,
            Some(t) => Some(
                t.as_u64()
                    .filter(|n| (1..=500).contains(n))
                    .ok_or("`tail` must be a whole number of lines from 1 to 500")?,
            ),
        };
        if let Some(re) = filter {
            let (source, head) = {
                let mut t = self.table.lock().map_err(|_| "the job table is broken")?;
                let job = t.job_mut(id).ok_or_else(|| no_job(id))?;
                let head = line(&job.info(0));
                (job.log.filter_source(job.cursor), head)
            };
            let (found, count, to) = tokio::task::spawn_blocking(move || source.matching(&re))
                .await
                .map_err(|e| format!("reading the output failed: {e}"))?;
            let mut t = self.table.lock().map_err(|_| "the job table is broken")?;
            if let Some(job) = t.job_mut(id) {
                job.cursor = to;
            }
            self.mark_told(&mut t, id);
            let mut out = format!("{head}\n{count} new line(s) match");
            if count > found.len() {
                out.push_str(&format!(", the last {} shown", found.len()));
            }
            out.push_str(":\n");
            out.push_str(&found.join("\n"));
            return Ok(ToolOutput::ok(out.trim_end().to_string()));
        }
        let mut t = self.table.lock().map_err(|_| "the job table is broken")?;
        let job = t.job_mut(id).ok_or_else(|| no_job(id))?;
        let head = line(&job.info(0));
        let out = if let Some(n) = tail {
            let n = usize::try_from(n).unwrap_or(500);
            let last = job.log.last_lines(n);
            job.cursor = job.log.total();
            format!(
                "{head}\nIts last {} line(s):\n{}",
                last.len(),
                last.join("\n")
            )
        } else {
            let shown = job.log.since(job.cursor);
            job.cursor = shown.to;
            let mut out = head;
            if shown.text.trim().is_empty() {
                out.push_str("\nNo new output since the last read.");
            } else {
                if shown.skipped > 0 {
                    // A file that stopped growing does not hold it all: its note says what.
                    let kept = match job.log.file_note() {
                        None => "all of it is in",
                        Some(_) => "what was kept of it is in",
                    };
                    out.push_str(&format!(
                        "\n[… {} of the new output not shown; {kept} {}]",
                        size(shown.skipped),
                        job.log.path().display()
                    ));
                }
                out.push_str("\nNew output:\n");
                out.push_str(&shown.text);
            }
            out
        };
        let note = job.log.file_note().map(str::to_string);
        self.mark_told(&mut t, id);
        let mut out = out;
        if let Some(n) = note {
            out.push_str(&format!("\n[{n}]"));
        }
        Ok(ToolOutput::ok(out))
    }

    async fn stop_call(&self, input: &Value) -> Result<ToolOutput, String> {
        let id = job_id(input)?.ok_or("`job_stop` needs the job's `id`")?;
        let mut done = self.request_stop(id)?;
        let started = Instant::now();
        let wait = self.limits.grace + Duration::from_secs(2);
        let _ = tokio::time::timeout(wait, done.wait_for(|d| *d)).await;
        let mut t = self.table.lock().map_err(|_| "the job table is broken")?;
        let job = t.job(id).ok_or_else(|| no_job(id))?;
        let info = job.info(5);
        let mut out = if info.state.is_running() {
            format!(
                "Job #{id} was asked to stop but is still there after {:.1}s.",
                started.elapsed().as_secs_f64()
            )
        } else {
            format!(
                "Job #{id} `{}` stopped after {:.1}s.",
                one_line(&info.command, 200),
                started.elapsed().as_secs_f64()
            )
        };
        if !info.last_lines.is_empty() {
            out.push_str("\nIts last lines:\n");
            out.push_str(&indented(&info.last_lines));
        }
        self.mark_told(&mut t, id);
        Ok(ToolOutput::ok(out.trim_end().to_string()))
    }

    /// The model has read job `id` as it stands: an end it saw needs no notice.
    fn mark_told(&self, t: &mut super::Table, id: u32) {
        if t.job(id).is_some_and(|j| !j.state.is_running()) {
            t.unannounced.retain(|&u| u != id);
        }
    }
}

fn no_job(id: u32) -> String {
    format!("there is no job #{id}; job_output without an id lists them")
}

/// The notice of ended (or gone) jobs for the next request; each with its id in the run it
/// was recorded in when `/resume` gave it another.
pub(super) fn ended_notice(ended: &[(JobInfo, Option<u32>)]) -> Option<String> {
    if ended.is_empty() {
        return None;
    }
    let mut out = String::from("[flower-tui: background jobs changed since your last request]\n");
    for (info, formerly) in ended {
        if info.state == JobState::Gone {
            let was = formerly.map_or_else(String::new, |f| {
                format!(" (#{f} in the session you resumed; #{} now)", info.id)
            });
            out.push_str(&format!(
                "- Job #{} `{}`{was} is gone: it was running in an earlier flower-tui process, \
                 which stopped it when it ended. Start it again if you still need it; do not \
                 rely on it running.\n",
                formerly.unwrap_or(info.id),
                one_line(&info.command, 200)
            ));
            continue;
        }
        out.push_str(&format!("- {}\n", line(info)));
        if !info.last_lines.is_empty() {
            out.push_str("  Last lines:\n");
            out.push_str(&indented(&info.last_lines));
        }
    }
    out.push_str("job_output reads more of a job by its id.");
    Some(out)
}

/// The running jobs for a successor: they keep running, and it reads and stops them by id.
pub(super) fn briefing(all: &[JobInfo]) -> Option<String> {
    let running: Vec<&JobInfo> = all.iter().filter(|j| j.state.is_running()).collect();
    if running.is_empty() {
        return None;
    }
    let mut out = String::from(
        "## Background jobs\n\nThese background jobs were started before you and are still \
         running; they run on. Read their output with job_output and stop them with job_stop, \
         by id:\n",
    );
    for info in running {
        out.push_str(&format!(
            "- {} (started {})\n",
            line(info),
            crate::engine::fsutil::rfc3339(info.started_unix)
        ));
        if !info.last_lines.is_empty() {
            out.push_str("  Last lines:\n");
            out.push_str(&indented(&info.last_lines));
        }
    }
    Some(out)
}
