//! The engine-written `## Touched` section of every handoff document: what the generation did,
//! taken from its tool log (the session's tool calls with their inputs and results), never from
//! the model's memory.
//!
//! - **Files**: read (with the line ranges shown, merged), edited, created, deleted or moved,
//!   with `+added -removed` line counts. A `bash` command counts as a deletion or a move only
//!   when it is a single `rm`, `mv`, `git rm` or `git mv` of plain paths that exited 0; anything
//!   else stays in the commands list.
//! - **Commands**: each distinct `bash` command with its last exit, failing ones first, then the
//!   most recent, capped.
//! - **Images** shown to the model (attached by the user or read by a tool): by path, the file
//!   they came from and the stored copy a successor reads with `read_file`, never their bytes.
//! - **The last test or build** command (recognised by its shape: `cargo test`, `npm run build`,
//!   `pytest`, `go test`, `make`, …) with its exit and its most telling output line.
//! - **Earlier generations**: the previous document's `Touched` section (as the user left it) is
//!   parsed back and carried forward in a compact form: paths by category, the last test or
//!   build, and any lines the user added, as notes.
//! - **Errors still open** at the cut, last: what the language servers last reported for this
//!   generation's files (errors only, capped), or that they reported none. Not carried forward
//!   (the next cut says what is open then).
//!
//! A change the user undid (and has not redone) is not one of the generation's: its calls are
//! left out of the files (a file it alone touched is not listed), though its commands did run.
//!
//! Everything here is pure and deterministic; the rendering is capped in size. The line counts of
//! an edit come from the engine's diff of the call when the caller has it (`counts`), else from
//! the call's own input and result.

mod carry;
mod log;
mod render;
mod shapes;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use crate::engine::jobs::JobInfo;
use crate::engine::lsp::OpenProblems;
use crate::engine::types::Message;

pub(crate) use carry::Earlier;

/// Lines added and removed by a change.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LineCounts {
    pub added: u64,
    pub removed: u64,
}

impl LineCounts {
    fn add(&mut self, o: LineCounts) {
        self.added = self.added.saturating_add(o.added);
        self.removed = self.removed.saturating_add(o.removed);
    }
}

/// What the section is built from.
#[derive(Debug, Clone, Copy)]
pub struct ToolLog<'a> {
    /// The generation's messages, in order (the tool calls and their results).
    pub messages: &'a [Message],
    /// The diff counts of edit and write calls, by call id (may be empty or partial).
    pub counts: &'a HashMap<String, LineCounts>,
    /// Calls whose changes the user undid (`/undo`, a rewind of the code) and has not redone:
    /// their edits, writes, deletions and moves are left out (a command still counts as run).
    pub undone: &'a [String],
    /// The generation these messages belong to.
    pub generation: u32,
    /// The workspace root: absolute paths under it are shown relative to it.
    pub workspace: Option<&'a Path>,
    /// The `Touched` section of the document this generation was briefed with, as the file held
    /// it (the user may have edited it).
    pub previous: Option<&'a str>,
    /// What the language servers last said about the files they have open (None: they are off).
    pub open_problems: Option<&'a OpenProblems>,
}

/// What became of a file in this generation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Fate {
    /// Only read.
    Read,
    /// Changed in place (edited or overwritten).
    Edited,
    Created,
    /// Deleted; its length in lines when a whole read or a write had told it.
    Deleted {
        lines: Option<u64>,
    },
    /// Created and deleted again in the same generation.
    Transient,
    /// Moved (or renamed) away.
    Moved {
        to: String,
    },
}

/// One file's facts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileFacts {
    pub fate: Fate,
    /// Line ranges shown by `read_file` (1-based, inclusive), merged and sorted.
    pub read: Vec<(u64, u64)>,
    /// The file's length in lines, as last known (a read said it, or a write).
    pub total: Option<u64>,
    /// Lines added and removed by the counted changes.
    pub counts: LineCounts,
    /// Edit and write calls that changed it.
    pub changes: u32,
    /// Changes whose line counts are unknown (an overwrite without the engine's diff).
    pub uncounted: u32,
}

impl FileFacts {
    fn new() -> FileFacts {
        FileFacts {
            fate: Fate::Read,
            read: Vec::new(),
            total: None,
            counts: LineCounts::default(),
            changes: 0,
            uncounted: 0,
        }
    }
}

/// How a command ended, as its result's last line says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exit {
    Code(i32),
    Signal(i32),
    TimedOut,
    Interrupted,
    Unknown,
}

impl Exit {
    pub fn failed(self) -> bool {
        self != Exit::Code(0)
    }
}

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Exit::Code(c) => write!(f, "exit {c}"),
            Exit::Signal(s) => write!(f, "killed by signal {s}"),
            Exit::TimedOut => f.write_str("timed out"),
            Exit::Interrupted => f.write_str("interrupted"),
            Exit::Unknown => f.write_str("exit unknown"),
        }
    }
}

/// Every run of one command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CommandRuns {
    /// The command, on one line.
    pub command: String,
    pub runs: u32,
    pub failed: u32,
    pub last: Exit,
    /// The position of its last run among all runs (higher is more recent).
    pub last_at: usize,
}

/// Whether a command tests or builds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CheckKind {
    Test,
    Build,
}

/// The last test or build command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Check {
    pub command: String,
    pub kind: CheckKind,
    pub exit: Exit,
    /// The output line that says most about the result (`test result: FAILED. 3 passed; 1 failed`).
    pub line: Option<String>,
}

/// The facts of one generation, and what earlier ones left.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Touched {
    pub generation: u32,
    /// By path.
    pub files: BTreeMap<String, FileFacts>,
    /// In order of first run.
    pub commands: Vec<CommandRuns>,
    pub check: Option<Check>,
    /// Images shown to the model, in order, once each: (name, where it came from, stored copy).
    pub images: Vec<(String, String, String)>,
    /// Earlier generations, in brief (parsed back from the previous document).
    pub earlier: Earlier,
    /// The language servers' problems of this generation's files, when they answered for any.
    pub open: Option<OpenProblems>,
}

impl Touched {
    /// The facts of `log`'s messages, with the previous document's section carried forward.
    pub fn from_log(log: ToolLog) -> Touched {
        let mut t = Touched {
            generation: log.generation,
            files: BTreeMap::new(),
            commands: Vec::new(),
            check: None,
            images: Vec::new(),
            earlier: log
                .previous
                .map(|p| Earlier::carried(p, log.generation))
                .unwrap_or_default(),
            open: None,
        };
        log::replay(&mut t, &log);
        t.open = log.open_problems.map(|p| OpenProblems {
            files: p
                .files
                .iter()
                .filter(|f| t.files.contains_key(*f))
                .cloned()
                .collect(),
            found: p
                .found
                .iter()
                .filter(|f| f.is_error() && t.files.contains_key(&f.path))
                .cloned()
                .collect(),
        });
        t.open = t.open.take().filter(|p| !p.files.is_empty());
        for image in log.messages.iter().flat_map(Message::images) {
            let stored = image.path.display().to_string();
            if !t.images.iter().any(|(_, _, s)| *s == stored) {
                t.images
                    .push((image.name.clone(), image.source.clone(), stored));
            }
        }
        t
    }

    /// The section's text (without its heading), at most [`render::MAX_CHARS`] characters.
    pub fn render(&self) -> String {
        render::section(self)
    }

    fn file(&mut self, path: String) -> &mut FileFacts {
        self.files.entry(path).or_insert_with(FileFacts::new)
    }
}

/// What the jobs' part of the section starts with.
pub(crate) const JOBS_HEADING: &str = "Background jobs running at this handoff";

/// The section's part about the background jobs running now (they run on through the turnover;
/// the successor reads and stops them by id): empty when none runs. Not carried to the next
/// document: the next handoff lists the jobs running then.
pub(crate) fn jobs_lines(jobs: &[JobInfo]) -> String {
    let running: Vec<&JobInfo> = jobs.iter().filter(|j| j.state.is_running()).collect();
    if running.is_empty() {
        return String::new();
    }
    let mut out = format!("\n\n{JOBS_HEADING} (they run on; job_output and job_stop by id):\n");
    for job in running {
        out.push_str(&format!(
            "- {} (since {})\n",
            crate::engine::jobs::line(job),
            crate::engine::fsutil::rfc3339(job.started_unix)
        ));
    }
    out.trim_end().to_string()
}

/// The section's text for `log`: [`Touched::from_log`], rendered.
pub fn section(log: ToolLog) -> String {
    Touched::from_log(log).render()
}

#[cfg(test)]
#[path = "touched/tests.rs"]
mod tests;
