//! What the engine is started with, grouped by concern: the provider and its limits, the model
//! settings in force at the start, the places it reads and writes, the prompt (full or lean), the
//! handoff's rules, the tools' limits and sandbox, the front end, how the run starts, the MCP
//! servers, the language servers and the hooks.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use crate::engine::context::{Thresholds, WindowSource};
use crate::engine::instructions::InstructionSources;
use crate::engine::ledger::RunDir;
use crate::engine::mask::MaskSettings;
use crate::engine::mcp::McpManager;
use crate::engine::policy::{
    ApprovalPolicy, CheckpointPolicy, ContextPolicy, FrontEnd, HandoffMode, SandboxApproval,
};
use crate::engine::prompt_style::PromptStyle;
use crate::engine::protocol::{Event, Op};
use crate::engine::provider::Provider;
use crate::engine::provider::retry::RetryPolicy;
use crate::engine::subagent::SubagentSettings;
use crate::engine::tools::sandbox::SandboxPolicy;
use crate::engine::types::Effort;

/// Everything the engine needs to start.
pub struct EngineParams {
    pub provider: ProviderParams,
    /// The model, effort and window at the start (`/model`, `/effort`, `/window` and a window
    /// learned from an overflow message change them while the engine runs).
    pub settings: ModelSettings,
    pub places: Places,
    /// The run directory the ledger and the transcripts are written to.
    pub run_dir: RunDir,
    pub prompt: PromptParams,
    pub handoff: HandoffParams,
    pub tools: ToolParams,
    /// The TUI (asks, reviews, replays) or headless.
    pub front_end: FrontEnd,
    pub start: StartParams,
    /// MCP servers whose tools are offered beside the built-in ones; `None`: none.
    pub mcp: Option<Arc<McpManager>>,
    /// The language servers (diagnostics after edits, the `diagnostics` tool); `None`: off.
    pub lsp: Option<Arc<crate::engine::lsp::LspManager>>,
    /// Events from outside the turn loop (MCP statuses and notices), passed on to the front end.
    pub side_events: Option<mpsc::UnboundedReceiver<Event>>,
    /// Old tool output in the main thread's requests: masked (default) or sent as it is.
    pub masking: MaskSettings,
    /// The custom slash commands and the skills loaded at the start.
    pub extensions: Extensions,
    /// The hooks in force and the workspace settings files waiting for approval.
    pub hooks: HookParams,
}

/// What the user and the workspace add: custom slash commands and skills, loaded once at the
/// start (the front end lists the same catalogs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extensions {
    pub commands: Arc<crate::engine::commands::Catalog>,
    pub skills: Arc<crate::engine::skills::SkillCatalog>,
}

/// What the settings files give a run: the hooks, the permission rules, and what waits for the
/// user's approval.
#[derive(Debug, Clone, Default)]
pub struct HookParams {
    /// The config file's hooks, then the user's settings file's, then the approved workspace
    /// files'.
    pub hooks: Vec<crate::engine::hooks::Hook>,
    /// The permission rules in force: the user's settings file's, the workspace files' `deny`
    /// and `ask`, and the `allow` of those approved.
    pub permissions: crate::engine::permissions::Permissions,
    /// Workspace settings files (and command grants) never approved (this version): asked about
    /// when the front end can ask, their hooks and rules added once approved.
    pub pending: Vec<crate::engine::hooks::Unapproved>,
    /// One-line notices about the hooks' configuration (bad entries, ignored files).
    pub notices: Vec<String>,
}

/// The provider and what every request to it is bounded by.
pub struct ProviderParams {
    pub client: Arc<dyn Provider>,
    pub max_tokens: u32,
    pub retry: RetryPolicy,
    /// The built-in demo model runs (its window stays when `/model` changes the name).
    pub demo: bool,
}

/// The model, effort and window in force.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelSettings {
    pub model: String,
    /// `--effort`: extended thinking / reasoning effort (`/effort` changes it between turns).
    pub effort: Option<Effort>,
    pub thresholds: Thresholds,
    /// Where the window came from (`--window` beats a window learned from an overflow message).
    pub window_source: WindowSource,
}

/// Where the engine works and keeps its files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Places {
    pub workspace: PathBuf,
    /// `<workspace>/.flower`, or None with `--no-workbench`.
    pub workbench: Option<PathBuf>,
    /// Where learned windows, run directories and approvals live.
    pub data_dir: PathBuf,
    /// Whether turns take checkpoints of the workspace.
    pub checkpoints: CheckpointPolicy,
}

/// The session prompt's parts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptParams {
    /// The base system prompt. Each session sends it with the environment block and the project
    /// instructions appended ([`crate::engine::sysprompt`]).
    pub system_prompt: String,
    /// Where the project instructions come from (read again at the start of every session).
    pub instructions: InstructionSources,
    /// The full prompt and tool descriptions, or the lean ones of a small window.
    pub style: PromptStyle,
}

/// When and how the engine hands off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HandoffParams {
    /// Handoff, compaction, or both.
    pub context: ContextPolicy,
    /// The writing turn in the background (default) or blocking the main thread.
    pub mode: HandoffMode,
    pub max_generations: u32,
    /// Headless test hook: a manual handoff after this many main-thread responses.
    pub after: Option<u32>,
}

/// What a turn's tools may do and how long a turn may go on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolParams {
    pub max_iterations: u32,
    /// `--yes` or not.
    pub approvals: ApprovalPolicy,
    /// How `bash` commands are confined (`--sandbox`, `--sandbox-network`, `[sandbox]`).
    pub sandbox: SandboxPolicy,
    /// Whether a command the sandbox confines is still asked for.
    pub sandbox_approval: SandboxApproval,
    pub bash_timeout: Duration,
    /// Background jobs: how many at once, the grace period of a stop.
    pub jobs: crate::engine::jobs::JobLimits,
    /// How the `task` tool's subagents run (their model, their iteration budget).
    pub subagent: SubagentSettings,
    /// `--mode`: the working mode to start in; None keeps the one a continued step last
    /// recorded (normal for a new step).
    pub mode: Option<crate::engine::policy::Mode>,
    /// What `web_fetch` may reach (`[web] allow_private_hosts`), and its page cache.
    pub web: crate::engine::tools::web_fetch::WebAccess,
    /// Where the file tools read and write text: the disk (the default), or a front end's own
    /// access (an editor's unsaved buffers and undo history).
    pub files: crate::engine::tools::FileAccess,
    /// Where `bash` runs a command the sandbox would not confine: here (the default), or in the
    /// front end's terminal (an editor's).
    pub terminals: crate::engine::tools::terminal::TerminalAccess,
}

/// How the run starts.
#[derive(Debug, Clone, Default)]
pub struct StartParams {
    /// `--step NAME`: the step's name (else one is made from its first task).
    pub step: Option<String>,
    /// `--continue`: attach to the last run's latest session.
    pub resume: Option<Resume>,
    /// A first message the engine sends itself when it starts (the demo plays by itself); not
    /// used when continuing a run.
    pub autostart: Option<String>,
}

/// Where `--continue` attaches.
#[derive(Debug, Clone)]
pub struct Resume {
    pub run_dir: RunDir,
    /// What the front end should hear before the conversation goes on (e.g. that a newer run
    /// could not be read and this older one is continued instead).
    pub warnings: Vec<String>,
}

impl Resume {
    /// Continue the run in `run_dir`, with nothing to warn about.
    pub fn at(run_dir: RunDir) -> Resume {
        Resume {
            run_dir,
            warnings: Vec::new(),
        }
    }
}

/// The front end's side of the queue pair.
pub struct EngineHandle {
    pub ops: mpsc::Sender<Op>,
    pub events: mpsc::UnboundedReceiver<Event>,
    pub task: tokio::task::JoinHandle<()>,
}
