//! What the run was started with ([`RunContext`]), fixed until it ends: the provider, the places,
//! the prompt's parts, the handoff's rules, the tools' limits, the front end, the MCP servers, the
//! language servers, the context strategies, masking, the extensions, the background jobs, and the
//! sender of events. Also what it prepares for every new session: the workbench and the session's
//! system prompt.

use std::path::Path;
use std::sync::Arc;

use tokio::sync::mpsc;
use tokio::sync::oneshot;

use super::language_servers::LanguageServers;
use super::outbox::Outbox;
use super::params::{Extensions, HandoffParams, Places, PromptParams, ProviderParams, ToolParams};
use crate::engine::context::strategy::ContextStrategy;
use crate::engine::jobs::Jobs;
use crate::engine::mask::MaskSettings;
use crate::engine::mcp::McpManager;
use crate::engine::policy::FrontEnd;
use crate::engine::protocol::Event;
use crate::engine::sysprompt::{self, SessionPrompt};

/// What the run was started with: fixed until it ends, and the one way out for events.
pub(super) struct RunContext {
    pub(super) provider: ProviderParams,
    pub(super) places: Places,
    /// The base prompt and where the project instructions come from.
    pub(super) prompt: PromptParams,
    pub(super) handoff: HandoffParams,
    pub(super) tools: ToolParams,
    pub(super) front_end: FrontEnd,
    /// `--step NAME`, if given.
    pub(super) step: Option<String>,
    pub(super) mcp: Option<Arc<McpManager>>,
    /// The language servers (diagnostics after edits, the `diagnostics` tool).
    pub(super) lsp: LanguageServers,
    /// The main thread's background jobs: they live as long as the process (through handoffs).
    pub(super) jobs: Arc<Jobs>,
    /// The strategies in force, in order: handoff (default), compaction (`--no-handoff`), or
    /// both when the config asks for both explicitly.
    pub(super) strategies: Vec<Box<dyn ContextStrategy + Send>>,
    /// Old tool output in the main thread's requests: masked (default) or sent as it is.
    pub(super) masking: MaskSettings,
    /// The custom slash commands and the skills.
    pub(super) extensions: Extensions,
    /// What the settings' deny rules forbid, as the tools are given it (the main thread's file
    /// tools, an attachment's read, a subagent's calls); the deny rules never change in a run.
    pub(super) denied: crate::engine::tools::Denied,
    pub(super) events: mpsc::UnboundedSender<Event>,
}

/// How long `/model`'s picker waits for the provider's list of models.
const MODEL_LIST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

impl RunContext {
    /// Whether `name` is a tool of one of the MCP servers.
    pub(super) fn is_mcp(&self, name: &str) -> bool {
        self.mcp.is_some() && McpManager::is_mcp_tool(name)
    }

    /// `Op::ListModels`: the provider is asked for its models beside the engine (a slow server
    /// holds nothing up); `Event::Models` answers, with why not when it cannot say.
    pub(super) fn list_models(&self) {
        let (client, out) = (self.provider.client.clone(), self.outbox());
        tokio::spawn(async move {
            let asked = tokio::time::timeout(MODEL_LIST_TIMEOUT, client.models()).await;
            let (models, error) = match asked {
                Ok(Ok(models)) => (models, None),
                Ok(Err(e)) => (Vec::new(), Some(e.message)),
                Err(_) => (Vec::new(), Some("the server did not answer in time".into())),
            };
            out.emit(Event::Models { models, error });
        });
    }

    /// A sender of events for a part that speaks.
    pub(super) fn outbox(&self) -> Outbox {
        Outbox::new(self.events.clone())
    }

    /// What a new session needs before it starts: the workbench with its `.gitignore` (notes
    /// and spills stay out of git), and its system prompt — the base, the environment and the
    /// project instructions read from disk now (it stays as it is for the whole session). What
    /// cannot be prepared is said; the tools and the handoff store report their own failures.
    pub(super) fn prepare_session(&self) -> SessionPrompt {
        prepare(
            self.places.workbench.as_deref(),
            &self.prompt,
            &self.places.workspace,
            &self.outbox(),
        )
    }

    /// [`RunContext::prepare_session`] beside the engine, for a resumed session: in a large
    /// repository the environment's `git status` takes a while, and nothing but the session's
    /// next request needs its prompt (an undo does not). On a thread of its own, not the
    /// runtime's blocking pool, so that a process that ends meanwhile does not wait for it.
    pub(super) fn prepare_session_aside(&self) -> PromptAside {
        let (workbench, prompt) = (self.places.workbench.clone(), self.prompt.clone());
        let (workspace, out) = (self.places.workspace.clone(), self.outbox());
        let (tx, rx) = oneshot::channel();
        let prepare = move || prepare(workbench.as_deref(), &prompt, &workspace, &out);
        let spawned = std::thread::Builder::new()
            .name("session-prompt".into())
            .spawn(move || tx.send(prepare()));
        // No thread to be had: the receiver's closed channel makes the engine prepare it.
        let thread = spawned.map(|t| t.thread().id()).ok();
        PromptAside { made: rx, thread }
    }
}

/// A session's prompt being prepared on a thread of its own.
pub(super) struct PromptAside {
    pub(super) made: oneshot::Receiver<SessionPrompt>,
    /// The thread: its look at the environment is stopped if the prompt is never taken.
    pub(super) thread: Option<std::thread::ThreadId>,
}

/// What [`RunContext::prepare_session`] does, from the parts it needs.
fn prepare(
    workbench: Option<&Path>,
    prompt: &PromptParams,
    workspace: &Path,
    out: &Outbox,
) -> SessionPrompt {
    if let Some(dir) = workbench
        && let Err(e) = crate::engine::fsutil::ensure_workbench(dir)
    {
        out.emit(Event::Warning {
            message: format!("cannot prepare the workbench {}: {e}", dir.display()),
        });
    }
    let made = sysprompt::build(&prompt.system_prompt, workspace, &prompt.instructions);
    for f in &made.instructions {
        if let Some(e) = &f.error {
            out.emit(Event::Warning {
                message: format!("cannot read the instructions in {}: {e}", f.path.display()),
            });
        }
    }
    made
}
