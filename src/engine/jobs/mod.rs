//! Background jobs: commands the model starts with `bash`'s `run_in_background` and reads later.
//!
//! [`Jobs`] is one session's table of them (the main thread's lives as long as the process, so
//! jobs run on through handoffs; a subagent's ends with its task). A job runs through the same
//! shell, sandbox and process-group guards as a `bash` command ([`process`]); its output goes to
//! `<dir>/<id>.log` and a bounded ring ([`output`]), so a flooding job costs neither memory nor
//! context. At most [`JobLimits::max_running`] run at once; a stop is `SIGTERM`, then `SIGKILL`
//! after the grace period. Every job ends when its table is dropped (`SIGKILL` to its group) and
//! when flower-tui dies, however it dies (the death signal and the lifeline watcher).
//!
//! The table tells its owner when a job starts and ends ([`JobChange`]), keeps which ends the
//! model has not been told of yet ([`Jobs::take_notice`]), and records every job in
//! `<dir>/jobs.json`: a later process on the same run reads it and lists the jobs that were
//! running then as gone ([`JobState::Gone`]), since they died with their process.

mod output;
mod ports;
mod process;
mod registry;
mod tool;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;
use tokio::sync::{mpsc, oneshot, watch};

use crate::engine::fsutil::now_unix;
use crate::engine::tools::ToolCtx;
use output::OutputLog;

pub(crate) use tool::{age, is_background, line, size, specs};

/// How many jobs may run at once, by default.
pub const DEFAULT_MAX_RUNNING: usize = 8;
/// How long a stopped job has between `SIGTERM` and `SIGKILL`, by default.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(5);

/// The limits of a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobLimits {
    /// Jobs running at once.
    pub max_running: usize,
    /// Between `SIGTERM` and `SIGKILL`.
    pub grace: Duration,
    /// How long a start waits for the first lines (less when the job ends, or prints a URL or
    /// opens a port first).
    pub first_wait: Duration,
}

impl Default for JobLimits {
    fn default() -> Self {
        JobLimits {
            max_running: DEFAULT_MAX_RUNNING,
            grace: DEFAULT_GRACE,
            first_wait: Duration::from_secs(2),
        }
    }
}

/// Where a job stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum JobState {
    Running,
    /// It exited by itself with this code.
    Exited {
        code: i32,
    },
    /// A signal it did not get from us ended it.
    Killed {
        signal: i32,
    },
    /// Stopped by the model, the user, or the end of its session.
    Stopped,
    /// Its status could not be read.
    Unknown,
    /// It belonged to an earlier flower-tui process, which ended (and stopped it).
    Gone,
}

impl JobState {
    pub fn is_running(self) -> bool {
        self == JobState::Running
    }

    /// In words: `running`, `exit code 1`, `killed by signal 9`, `stopped`, `gone`.
    pub fn describe(self) -> String {
        match self {
            JobState::Running => "running".into(),
            JobState::Exited { code } => format!("exit code {code}"),
            JobState::Killed { signal } => format!("killed by signal {signal}"),
            JobState::Stopped => "stopped".into(),
            JobState::Unknown => "ended, status unknown".into(),
            JobState::Gone => "gone (its flower-tui process ended)".into(),
        }
    }
}

/// A job as front ends, the handoff and the final JSON see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JobInfo {
    pub id: u32,
    pub command: String,
    #[serde(flatten)]
    pub state: JobState,
    pub started_unix: u64,
    pub ended_unix: Option<u64>,
    /// Bytes and lines printed so far.
    pub bytes: u64,
    pub lines: u64,
    /// The first URL it printed.
    pub url: Option<String>,
    /// The TCP ports it listened on when last looked at.
    pub ports: Vec<u16>,
    /// The file with its output.
    pub log: PathBuf,
    /// Its last lines.
    pub last_lines: Vec<String>,
}

/// What a table tells its owner: something changed, the list is worth sending again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobChange {
    Started,
    Ended,
    /// The owner asked for the list ([`Jobs::ask_list`]).
    Asked,
}

/// What the front end is to be told now ([`Jobs::front_list`]).
#[derive(Debug, Clone, Default)]
pub struct FrontList {
    /// The jobs that ended since the last list, each told once, before the list.
    pub ended: Vec<JobInfo>,
    /// Every job.
    pub all: Vec<JobInfo>,
}

/// One job in the table.
#[derive(Debug)]
struct Job {
    id: u32,
    command: String,
    started_unix: u64,
    started: Instant,
    ended_unix: Option<u64>,
    state: JobState,
    log: OutputLog,
    /// The group to signal, while its leader is not reaped.
    pgid: Option<u32>,
    ports: Vec<u16>,
    /// Where the model's last read of new output ended.
    cursor: u64,
    stop: Option<oneshot::Sender<()>>,
    done: Option<watch::Receiver<bool>>,
    /// Its end was told to the front end (or it ended in an earlier process).
    end_told: bool,
    /// Stopped because its process is leaving: recorded as gone, as if the process had died
    /// with it running (a later process tells the model to start it again).
    leaving: bool,
    /// Its id in the run it was recorded in, when `/resume` brought it here under another.
    formerly: Option<u32>,
}

impl Job {
    fn info(&self, last: usize) -> JobInfo {
        JobInfo {
            id: self.id,
            command: self.command.clone(),
            state: self.state,
            started_unix: self.started_unix,
            ended_unix: self.ended_unix,
            bytes: self.log.total(),
            lines: self.log.lines(),
            url: self.log.url().map(str::to_string),
            ports: self.ports.clone(),
            log: self.log.path().to_path_buf(),
            last_lines: self.log.last_lines(last),
        }
    }
}

/// The jobs, shared with their watching tasks.
#[derive(Debug, Default)]
pub(crate) struct Table {
    jobs: Vec<Job>,
    next_id: u32,
    /// Ended jobs the model has not been told of, in the order they ended.
    unannounced: Vec<u32>,
    registry: Option<PathBuf>,
    /// Where new jobs' output goes.
    dir: PathBuf,
}

impl Table {
    fn job_mut(&mut self, id: u32) -> Option<&mut Job> {
        self.jobs.iter_mut().find(|j| j.id == id)
    }

    fn job(&self, id: u32) -> Option<&Job> {
        self.jobs.iter().find(|j| j.id == id)
    }

    fn running(&self) -> usize {
        self.jobs.iter().filter(|j| j.state.is_running()).count()
    }

    /// Job `id` ended in `state`: recorded, to be told.
    fn finish(&mut self, id: u32, state: JobState) {
        let Some(job) = self.job_mut(id) else { return };
        job.state = state;
        job.ended_unix = Some(now_unix().0);
        job.stop = None;
        self.unannounced.push(id);
        self.save();
    }

    fn save(&self) {
        if let Some(path) = &self.registry {
            registry::save(path, &self.jobs);
        }
    }
}

/// One session's background jobs.
#[derive(Debug)]
pub struct Jobs {
    table: Arc<Mutex<Table>>,
    limits: JobLimits,
    changes: Option<mpsc::UnboundedSender<JobChange>>,
}

impl Jobs {
    /// A table writing its jobs' output to `dir` (made on the first start). `record`: keep
    /// `dir/jobs.json`, and list the jobs an earlier process left there running as gone.
    pub fn new(dir: PathBuf, limits: JobLimits, record: bool) -> Jobs {
        let mut table = Table {
            next_id: 1,
            dir: dir.clone(),
            ..Table::default()
        };
        if record {
            let path = dir.join(registry::FILE);
            for job in registry::load(&path) {
                let gone = job.state == JobState::Gone;
                table.next_id = table.next_id.max(job.id + 1);
                if gone {
                    table.unannounced.push(job.id);
                }
                table.jobs.push(job);
            }
            table.registry = Some(path);
            if !table.jobs.is_empty() {
                table.save();
            }
        }
        Jobs {
            table: Arc::new(Mutex::new(table)),
            limits,
            changes: None,
        }
    }

    /// Tell `tx` when a job starts and ends.
    pub fn with_changes(mut self, tx: mpsc::UnboundedSender<JobChange>) -> Jobs {
        self.changes = Some(tx);
        self
    }

    pub fn limits(&self) -> JobLimits {
        self.limits
    }

    /// Every job, oldest first, its last `last` lines each; running jobs' ports looked up now
    /// (a walk of `/proc`, done without holding the table: the jobs' output goes on meanwhile).
    pub fn list(&self, last: usize) -> Vec<JobInfo> {
        let groups: Vec<(u32, u32)> = match self.table.lock() {
            Ok(t) => t
                .jobs
                .iter()
                .filter(|j| j.state.is_running())
                .filter_map(|j| Some((j.id, j.pgid?)))
                .collect(),
            Err(_) => return Vec::new(),
        };
        let found: Vec<(u32, Vec<u16>)> = groups
            .into_iter()
            .map(|(id, pgid)| (id, ports::listening(pgid)))
            .collect();
        let Ok(mut t) = self.table.lock() else {
            return Vec::new();
        };
        for (id, ports) in found {
            if let Some(job) = t.job_mut(id).filter(|j| j.state.is_running()) {
                job.ports = ports;
            }
        }
        t.jobs.iter().map(|j| j.info(last)).collect()
    }

    /// Job `id` with its last `last` lines, its ports as last looked up.
    pub fn get(&self, id: u32, last: usize) -> Option<JobInfo> {
        self.table.lock().ok()?.job(id).map(|j| j.info(last))
    }

    /// What the front end is to be told now: the jobs that ended since the last call (each
    /// once) and every job, from one look at the table, with their last `last` lines. One
    /// owner's task calls it for every change, so no list shows a job ended before the front end
    /// was told how it ended.
    pub fn front_list(&self, last: usize) -> FrontList {
        let all = self.list(last);
        let Ok(mut t) = self.table.lock() else {
            return FrontList::default();
        };
        let mut ended = Vec::new();
        for info in &all {
            if let Some(job) = t.job_mut(info.id)
                && !info.state.is_running()
                && !job.end_told
            {
                job.end_told = true;
                ended.push(info.clone());
            }
        }
        FrontList { ended, all }
    }

    /// `/resume` moved the session to the run whose jobs folder is `dir`: the jobs recorded there
    /// join this table (the ones that were running are gone, told at the next request; one whose
    /// id this table uses already gets a free one, and the notice names both), this table's
    /// record moves there, and new jobs write their output there. This process's own jobs run on.
    pub fn adopt(&self, dir: PathBuf) {
        let Ok(mut t) = self.table.lock() else { return };
        if t.dir == dir {
            return;
        }
        let path = dir.join(registry::FILE);
        let loaded = registry::load(&path);
        let taken: Vec<u32> = t.jobs.iter().map(|j| j.id).collect();
        let mut free = loaded
            .iter()
            .map(|j| j.id)
            .chain(taken.iter().copied())
            .max()
            .unwrap_or(0)
            .max(t.next_id.saturating_sub(1))
            + 1;
        for mut job in loaded {
            if taken.contains(&job.id) {
                job.formerly = Some(job.id);
                job.id = free;
                free += 1;
            }
            if job.state == JobState::Gone {
                t.unannounced.push(job.id);
            }
            t.jobs.push(job);
        }
        t.next_id = free;
        t.jobs.sort_by_key(|j| j.id);
        if t.registry.is_some() {
            t.registry = Some(path);
        }
        t.dir = dir;
        t.save();
        drop(t);
        self.ask_list();
    }

    /// Ask for the list: the owner's task sends it, after the ends not told yet.
    pub fn ask_list(&self) {
        if let Some(tx) = &self.changes {
            let _ = tx.send(JobChange::Asked);
        }
    }

    /// How many run now.
    #[cfg(test)]
    pub fn running(&self) -> usize {
        self.table.lock().map_or(0, |t| t.running())
    }

    /// Start `command` in the background (the caller has approved it). The job's id and
    /// what it printed first, or why it could not start.
    async fn start(&self, command: &str, ctx: &ToolCtx) -> Result<u32, String> {
        {
            let t = self.table.lock().map_err(|_| "the job table is broken")?;
            let running = t.running();
            if running >= self.limits.max_running {
                let list: Vec<String> = t
                    .jobs
                    .iter()
                    .filter(|j| j.state.is_running())
                    .map(|j| named(j.id, &j.command))
                    .collect();
                return Err(format!(
                    "not started: {running} background jobs run already, the most allowed. Stop \
                     one with `job_stop` first: {}.",
                    list.join(", ")
                ));
            }
        }
        let dir = self
            .table
            .lock()
            .map_err(|_| "the job table is broken")?
            .dir
            .clone();
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("the jobs folder {} cannot be made: {e}", dir.display()))?;
        let spawned = process::spawn(command, &ctx.workspace, &ctx.sandbox)
            .map_err(|e| format!("Could not start the shell: {e}"))?;
        let (stop_tx, stop_rx) = oneshot::channel();
        let (done_tx, done_rx) = watch::channel(false);
        let id = {
            let mut t = self.table.lock().map_err(|_| "the job table is broken")?;
            let id = t.next_id;
            t.next_id += 1;
            let job = Job {
                id,
                command: command.to_string(),
                started_unix: now_unix().0,
                started: Instant::now(),
                ended_unix: None,
                state: JobState::Running,
                log: OutputLog::create(dir.join(format!("{id}.log"))),
                pgid: spawned.pgid,
                ports: Vec::new(),
                cursor: 0,
                stop: Some(stop_tx),
                done: Some(done_rx),
                end_told: false,
                leaving: false,
                formerly: None,
            };
            t.jobs.push(job);
            t.save();
            id
        };
        let w = process::Watch {
            table: Arc::clone(&self.table),
            id,
            grace: self.limits.grace,
            stop: stop_rx,
            done: done_tx,
            changes: self.changes.clone(),
        };
        tokio::spawn(process::watch(spawned, w));
        if let Some(tx) = &self.changes {
            let _ = tx.send(JobChange::Started);
        }
        Ok(id)
    }

    /// Ask job `id` to stop (`SIGTERM`, `SIGKILL` after the grace period); the receiver turns
    /// true once it has ended. Err: no such job, or it is not running.
    pub fn request_stop(&self, id: u32) -> Result<watch::Receiver<bool>, String> {
        let mut t = self.table.lock().map_err(|_| "the job table is broken")?;
        let Some(job) = t.job_mut(id) else {
            return Err(format!("there is no job #{id}"));
        };
        if !job.state.is_running() {
            return Err(format!(
                "job #{id} is not running: {}",
                job.state.describe()
            ));
        }
        if let Some(tx) = job.stop.take() {
            let _ = tx.send(());
        }
        job.done
            .clone()
            .ok_or_else(|| format!("job #{id} cannot be waited for"))
    }

    /// The process leaves: [`Jobs::stop_all`], each job recorded as gone (a later process on the
    /// run lists it so), though this one sees it stopped.
    pub async fn leave(&self, within: Duration) {
        self.of_running(|job| job.leaving = true);
        self.stop_all(within).await;
    }

    /// `pick` applied to each running job, from one look at the table (none if it is broken).
    fn of_running<T>(&self, mut pick: impl FnMut(&mut Job) -> T) -> Vec<T> {
        self.table
            .lock()
            .map(|mut t| {
                t.jobs
                    .iter_mut()
                    .filter(|j| j.state.is_running())
                    .map(&mut pick)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Stop every running job and wait until they have ended: `SIGTERM`, then `SIGKILL` to
    /// what is left after `within`.
    pub async fn stop_all(&self, within: Duration) {
        let ids = self.of_running(|j| j.id);
        let mut waits: Vec<_> = ids
            .into_iter()
            .filter_map(|id| self.request_stop(id).ok())
            .collect();
        let deadline = tokio::time::Instant::now() + within;
        for rx in &mut waits {
            let _ = tokio::time::timeout_at(deadline, rx.wait_for(|d| *d)).await;
        }
        let left = self.of_running(|j| j.pgid);
        for pgid in left {
            process::signal_group(pgid, libc::SIGKILL);
        }
        let settle = tokio::time::Instant::now() + Duration::from_secs(2);
        for mut rx in waits {
            let _ = tokio::time::timeout_at(settle, rx.wait_for(|d| *d)).await;
        }
    }

    /// The notice of the jobs that ended (or are gone) since the model was last told, for the
    /// next request; None when there is none.
    pub fn take_notice(&self) -> Option<String> {
        let mut t = self.table.lock().ok()?;
        let ids = std::mem::take(&mut t.unannounced);
        let ended: Vec<(JobInfo, Option<u32>)> = ids
            .iter()
            .filter_map(|id| t.job(*id).map(|j| (j.info(3), j.formerly)))
            .collect();
        tool::ended_notice(&ended)
    }

    /// The running jobs for a successor's briefing; None when none runs.
    pub fn briefing(&self) -> Option<String> {
        tool::briefing(&self.list(3))
    }
}

impl Drop for Jobs {
    fn drop(&mut self) {
        self.of_running(|job| process::signal_group(job.pgid, libc::SIGKILL));
    }
}

/// `dir` for a run directory's jobs.
pub fn dir_in(run_dir: &Path) -> PathBuf {
    run_dir.join("jobs")
}

/// A job as a message names it: `#3 `npm run dev``, its command on one line.
pub(crate) fn named(id: u32, command: &str) -> String {
    format!("#{id} `{}`", crate::engine::text::one_line(command, 80))
}

#[cfg(test)]
mod tests;
