//! What the model may do and with what: approvals (`--yes`), the working mode (`--mode`), a
//! turn's iteration budget, the bash
//! timeout, the MCP servers of the config file and whether a workspace's `.mcp.json` is used, and
//! the `task` tool's subagents.
//!
//! The rules: `[mcp_servers.NAME]` tables are read with `${VAR}` expanded from the environment;
//! a workspace's `.mcp.json` is asked about once per workspace by default (headless ignores an
//! unapproved one), trusted, or ignored. Subagents use the main thread's model unless
//! `subagent_model` names another.

use clap::Args;
use serde::Deserialize;

use super::env::Env;
use super::error::ConfigError;
use super::values::{Choice, FileWord, FlagValueError, at_least_one, file_word};
use crate::engine::mcp::{McpJsonPolicy, ServerConfig};
use crate::engine::policy::{ApprovalPolicy, Mode};

pub(crate) const DEFAULT_MAX_ITERATIONS: u32 = 200;
pub(crate) const DEFAULT_BASH_TIMEOUT_SECS: u64 = 120;

impl Choice for McpJsonPolicy {
    const ACCEPTED: &'static str = McpJsonPolicy::ACCEPTED;

    fn from_word(word: &str) -> Option<Self> {
        McpJsonPolicy::parse(word)
    }
}

/// `--mcp-json`'s value parser: its error lists the accepted values without repeating the value.
fn mcp_json_flag(value: &str) -> Result<McpJsonPolicy, FlagValueError> {
    McpJsonPolicy::from_word(value).ok_or(FlagValueError::NotOneOf {
        accepted: McpJsonPolicy::ACCEPTED,
    })
}

impl Choice for Mode {
    const ACCEPTED: &'static str = Mode::ACCEPTED;

    fn from_word(word: &str) -> Option<Self> {
        Mode::parse(word)
    }
}

/// `--mode`'s value parser.
fn mode_flag(value: &str) -> Result<Mode, FlagValueError> {
    Mode::from_word(value).ok_or(FlagValueError::NotOneOf {
        accepted: Mode::ACCEPTED,
    })
}

/// The flags of this concern (their place in `--help` is `display_order`).
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct ToolFlags {
    /// Approve tool calls without asking
    #[arg(global = true, long, display_order = 15)]
    pub(crate) yes: bool,
    /// Iteration budget of one turn
    #[arg(global = true, long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..), allow_negative_numbers = true, display_order = 19)]
    pub(crate) max_iterations: Option<u32>,
    /// The workspace's .mcp.json: ask (once per workspace; headless ignores an unapproved one),
    /// trust, or ignore
    #[arg(global = true, long, value_name = "ask|trust|ignore", value_parser = mcp_json_flag, display_order = 25)]
    pub(crate) mcp_json: Option<McpJsonPolicy>,
    /// Start in this mode: normal, accept-edits (file edits in the workspace run without
    /// asking), or plan (read-only tools; the run ends with a plan file)
    #[arg(global = true, long, value_name = "normal|accept-edits|plan", value_parser = mode_flag, display_order = 30)]
    pub(crate) mode: Option<Mode>,
}

/// The config file's keys of this concern.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct ToolKeys {
    pub(crate) yes: Option<bool>,
    pub(crate) max_iterations: Option<u32>,
    /// Seconds before a bash command is stopped.
    pub(crate) bash_timeout: Option<u64>,
    /// Background jobs running at once.
    pub(crate) max_jobs: Option<u32>,
    /// Seconds a stopped background job has between SIGTERM and SIGKILL.
    pub(crate) job_stop_grace: Option<u64>,
    /// `[mcp_servers.NAME]` tables (read by `engine::mcp::config`).
    pub(crate) mcp_servers: Option<toml::Value>,
    /// Whether a workspace's `.mcp.json` is used: ask, trust, ignore.
    pub(crate) mcp_json: Option<FileWord<McpJsonPolicy>>,
    /// The model of the `task` tool's subagents (default: the main thread's).
    pub(crate) subagent_model: Option<String>,
    /// A subagent's iteration budget.
    pub(crate) subagent_max_iterations: Option<u32>,
    /// The working mode to start in: normal, accept-edits, plan.
    pub(crate) mode: Option<FileWord<Mode>>,
}

/// The effective settings of this concern.
#[derive(Debug, Clone)]
pub(crate) struct ToolSettings {
    pub(crate) approvals: ApprovalPolicy,
    pub(crate) max_iterations: u32,
    pub(crate) bash_timeout_secs: u64,
    /// Background jobs: how many at once, the grace period of a stop.
    pub(crate) jobs: crate::engine::jobs::JobLimits,
    /// The MCP servers of the config file (a workspace's `.mcp.json` is decided at launch).
    pub(crate) mcp_servers: Vec<ServerConfig>,
    pub(crate) mcp_json: McpJsonPolicy,
    /// The model of the `task` tool's subagents (None: the main thread's).
    pub(crate) subagent_model: Option<String>,
    pub(crate) subagent_max_iterations: u32,
    /// The mode to start in (None: a continued step's, else normal).
    pub(crate) mode: Option<Mode>,
}

/// Merge this concern's flags, env and file keys.
pub(crate) fn resolve(
    flags: ToolFlags,
    keys: ToolKeys,
    env: &Env,
) -> Result<ToolSettings, ConfigError> {
    const AT_LEAST_ONE: &str = "a whole number ≥ 1";
    let max_iterations = at_least_one("max_iterations", AT_LEAST_ONE, keys.max_iterations)?;
    let subagent_max_iterations = at_least_one(
        "subagent_max_iterations",
        AT_LEAST_ONE,
        keys.subagent_max_iterations,
    )?;
    let subagent_model = match keys.subagent_model {
        Some(m) if m.trim().is_empty() => {
            return Err(ConfigError::BadValue {
                key: "subagent_model",
                accepted: "a model name",
                got: "an empty string".into(),
            });
        }
        other => other.map(|m| m.trim().to_string()),
    };
    let mcp_json = file_word("mcp_json", keys.mcp_json)?;
    let max_jobs = at_least_one("max_jobs", AT_LEAST_ONE, keys.max_jobs)?;
    let mut jobs = crate::engine::jobs::JobLimits::default();
    if let Some(n) = max_jobs {
        jobs.max_running = usize::try_from(n).unwrap_or(usize::MAX);
    }
    if let Some(secs) = keys.job_stop_grace {
        jobs.grace = std::time::Duration::from_secs(secs);
    }
    let mode = file_word("mode", keys.mode)?;
    let mcp_servers = match &keys.mcp_servers {
        None => Vec::new(),
        Some(table) => {
            let lookup = |k: &str| env.get(k).map(str::to_string);
            crate::engine::mcp::config::from_toml(table, &lookup)?
        }
    };
    Ok(ToolSettings {
        approvals: if flags.yes || keys.yes.unwrap_or(false) {
            ApprovalPolicy::Auto
        } else {
            ApprovalPolicy::Ask
        },
        max_iterations: flags
            .max_iterations
            .or(max_iterations)
            .unwrap_or(DEFAULT_MAX_ITERATIONS),
        bash_timeout_secs: keys.bash_timeout.unwrap_or(DEFAULT_BASH_TIMEOUT_SECS),
        jobs,
        mcp_servers,
        mcp_json: flags.mcp_json.or(mcp_json).unwrap_or_default(),
        subagent_model,
        subagent_max_iterations: subagent_max_iterations
            .unwrap_or(crate::engine::subagent::DEFAULT_MAX_ITERATIONS),
        mode: flags.mode.or(mode),
    })
}
