//! Where a run works and keeps its records: the workspace, the workbench (`<workspace>/.flower`,
//! for handoff files and spills), the run directory and step name, the data and config
//! directories, and which session a start continues (`--continue`, `--resume [RUN_ID]`).
//!
//! The rules: the workspace is the flag's, else the file's, else the current directory, and must
//! be a directory; `.flower` in it must be a directory when it exists (the demo works in a scratch
//! copy, so it does not look); `--run-dir` must be a directory when it exists; checkpoints are
//! on unless the flag or the file's `no_checkpoints` turns them off.

use std::path::{Path, PathBuf};

use clap::Args;
use serde::Deserialize;

use super::env::{self, Env};
use super::error::ConfigError;
use crate::engine::policy::CheckpointPolicy;

/// Which session a start continues.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SessionChoice {
    /// A new run (or the review an earlier process left open, interactively).
    New,
    /// `--continue`: the latest session of the workspace's newest run (or of `--run-dir`).
    Continue,
    /// `--resume` alone: the TUI shows a picker of this workspace's sessions.
    Pick,
    /// `--resume RUN_ID`: continue that run (the id or a unique prefix of it).
    Resume(String),
}

/// The flags of this concern (their place in `--help` is `display_order`).
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct PlaceFlags {
    /// Continue the last run's latest session
    #[arg(global = true, long = "continue", display_order = 7)]
    pub(crate) continue_last: bool,
    /// Continue a session of this workspace: alone, pick one (TUI); with RUN_ID (or a unique
    /// prefix of it), continue that run's latest session (TUI and headless)
    #[arg(
        global = true,
        long,
        value_name = "RUN_ID",
        num_args = 0..=1,
        default_missing_value = "",
        conflicts_with = "continue_last",
        display_order = 8
    )]
    pub(crate) resume: Option<String>,
    /// The workspace (default: the current directory)
    #[arg(global = true, long, value_name = "DIR", display_order = 10)]
    pub(crate) workspace: Option<PathBuf>,
    /// The run directory (default: <data_dir>/flower/runs/<run-id>)
    #[arg(global = true, long, value_name = "DIR", display_order = 11)]
    pub(crate) run_dir: Option<PathBuf>,
    /// Write no notes (handoff files, spills) into <workspace>/.flower
    #[arg(global = true, long, display_order = 12)]
    pub(crate) no_workbench: bool,
    /// Take no checkpoints of the workspace (/undo, /redo and /rewind's code part then cannot
    /// help)
    #[arg(global = true, long, display_order = 29)]
    pub(crate) no_checkpoints: bool,
    /// Step name (default: derived from the first task)
    #[arg(global = true, long, value_name = "NAME", display_order = 14)]
    pub(crate) step: Option<String>,
}

/// The config file's keys of this concern.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct PlaceKeys {
    pub(crate) workspace: Option<PathBuf>,
    pub(crate) run_dir: Option<PathBuf>,
    pub(crate) no_workbench: Option<bool>,
    pub(crate) no_checkpoints: Option<bool>,
    /// false: no process watches the workspace between sessions (each start walks it).
    pub(crate) checkpoint_keeper: Option<bool>,
    pub(crate) step: Option<String>,
}

/// The effective settings of this concern.
#[derive(Debug, Clone)]
pub(crate) struct Places {
    pub(crate) workspace: PathBuf,
    /// Keep notes in `<workspace>/.flower` (off with `--no-workbench`).
    pub(crate) workbench: bool,
    /// Checkpoints of the workspace before and after turns (off with `--no-checkpoints`).
    pub(crate) checkpoints: CheckpointPolicy,
    pub(crate) run_dir: Option<PathBuf>,
    pub(crate) step: Option<String>,
    /// `<data_dir>/flower`: runs, logs, learned windows.
    pub(crate) data_dir: PathBuf,
    /// `<config_dir>/flower`: the config file and the user's own `AGENTS.md`.
    pub(crate) config_dir: Option<PathBuf>,
    pub(crate) session: SessionChoice,
}

impl Places {
    /// `<workspace>/.flower`, or None with `--no-workbench`.
    pub(crate) fn workbench_dir(&self) -> Option<PathBuf> {
        self.workbench.then(|| self.workspace.join(".flower"))
    }
}

/// Merge this concern's flags, env and file keys; `demo`: the run works in a scratch copy.
pub(crate) fn resolve(
    flags: PlaceFlags,
    keys: PlaceKeys,
    env: &Env,
    demo: bool,
) -> Result<Places, ConfigError> {
    let workspace = resolve_workspace(flags.workspace.or(keys.workspace))?;
    let workbench = !(flags.no_workbench || keys.no_workbench.unwrap_or(false));
    if workbench && !demo {
        check_workbench(&workspace)?;
    }
    let run_dir = flags.run_dir.or(keys.run_dir);
    if let Some(dir) = &run_dir {
        check_run_dir(dir)?;
    }
    let session = match (flags.continue_last, flags.resume) {
        (true, _) => SessionChoice::Continue,
        (false, None) => SessionChoice::New,
        (false, Some(id)) => match id.trim() {
            "" => SessionChoice::Pick,
            id => SessionChoice::Resume(id.to_string()),
        },
    };
    let checkpoints = if flags.no_checkpoints || keys.no_checkpoints.unwrap_or(false) {
        CheckpointPolicy::Off
    } else if keys.checkpoint_keeper == Some(false) {
        CheckpointPolicy::OnWithoutKeeper
    } else {
        CheckpointPolicy::On
    };
    Ok(Places {
        workspace,
        workbench,
        checkpoints,
        run_dir,
        step: flags.step.or(keys.step),
        data_dir: env::data_dir(env),
        config_dir: env::config_path(env).and_then(|p| p.parent().map(Path::to_path_buf)),
        session,
    })
}

/// The workspace (default: the current directory), canonical; it must be a directory.
fn resolve_workspace(given: Option<PathBuf>) -> Result<PathBuf, ConfigError> {
    let workspace = given.unwrap_or_else(|| PathBuf::from("."));
    let workspace =
        workspace
            .canonicalize()
            .map_err(|source| ConfigError::WorkspaceUnresolvable {
                path: workspace.clone(),
                source,
            })?;
    if !workspace.is_dir() {
        return Err(ConfigError::WorkspaceNotADirectory { path: workspace });
    }
    Ok(workspace)
}

/// `<workspace>/.flower` must be a directory (or not exist yet): a file there is named as such.
fn check_workbench(workspace: &Path) -> Result<(), ConfigError> {
    let dir = workspace.join(".flower");
    match std::fs::metadata(&dir) {
        Ok(m) if !m.is_dir() => Err(ConfigError::WorkbenchIsAFile { dir }),
        _ => Ok(()),
    }
}

/// `--run-dir` must be a directory when it exists.
fn check_run_dir(dir: &Path) -> Result<(), ConfigError> {
    match std::fs::metadata(dir) {
        Ok(m) if !m.is_dir() => Err(ConfigError::RunDirNotADirectory {
            dir: dir.to_path_buf(),
        }),
        _ => Ok(()),
    }
}
