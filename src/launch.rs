//! From a resolved [`Config`] to a running engine: the provider, the run directory (new, joined,
//! continued or reopened), the system prompt, the MCP servers, the language servers, the hooks,
//! and the demo's scratch workspace.
//! Shared by headless mode and the TUI.

use std::sync::Arc;
use std::time::Duration;

use crate::config::places::Places;
use crate::config::{Backend, Config, ProviderKind, Review, SessionChoice};
use crate::engine::demo::DemoProvider;
use crate::engine::error::{Error, ResumeError};
use crate::engine::handoff::reopen;
use crate::engine::hooks::Unapproved;
use crate::engine::instructions::InstructionSources;
use crate::engine::ledger::{self, RunDir};
use crate::engine::mcp::McpManager;
use crate::engine::policy::{ApprovalPolicy, FrontEnd};
use crate::engine::protocol::Event;
use crate::engine::provider::Provider;
use crate::engine::provider::anthropic::{AnthropicConfig, AnthropicProvider};
use crate::engine::provider::openai::{OpenAiConfig, OpenAiProvider};
use crate::engine::provider::retry::RetryPolicy;
use crate::engine::session::{
    EngineParams, Extensions, HandoffParams, HookParams, ModelSettings, PromptParams,
    ProviderParams, Resume, StartParams, ToolParams,
};

/// The system prompt for a workspace (full or lean, by the window and `--lean`). Stable across a
/// run, so the provider's prompt cache holds.
pub(crate) fn system_prompt(config: &Config) -> String {
    config
        .context
        .prompt_style()
        .base_prompt(&config.places.workspace)
}

/// The first line of a run's log: what it runs with (the key never, not even masked).
pub(crate) fn log_start(config: &Config, log: &std::path::Path) {
    let (p, ctx) = (&config.provider, &config.context);
    tracing::info!(
        version = env!("CARGO_PKG_VERSION"),
        pid = std::process::id(),
        mode = if config.acp {
            "acp"
        } else if config.prompt.is_some() {
            "headless"
        } else {
            "tui"
        },
        backend = p.backend.label(),
        model = %p.model,
        endpoint = %if p.backend.is_demo() { "(in-process)" } else { p.base_url.as_str() },
        window = ctx.window,
        window_source = ctx.window_source.describe(),
        headroom = ctx.headroom,
        context = ctx.policy.describe(),
        workspace = %config.places.workspace.display(),
        log = %log.display(),
        "flower-tui started"
    );
}

/// Say why the run cannot start (one line, keys masked); the exit code: 2 when the flags ask for
/// something the disk refuses (a taken run directory or step), else 1.
pub(crate) fn start_failed(e: &Error) -> i32 {
    eprintln!(
        "flower-tui: {}",
        crate::engine::secrets::redact(&e.to_string())
    );
    e.exit_code()
}

/// The provider the config names (the demo when asked or when nothing is configured).
pub(crate) fn build_provider(config: &Config) -> Result<Arc<dyn Provider>, Error> {
    let p = &config.provider;
    let Backend::Api(kind) = p.backend else {
        return Ok(Arc::new(DemoProvider::new()));
    };
    let key = match (&p.api_key, kind) {
        (Some(k), _) => k.expose().to_string(),
        // A local OpenAI-compatible server: no Authorization header.
        (None, ProviderKind::OpenAi) => String::new(),
        (None, ProviderKind::Anthropic) => return Err(Error::NoApiKey),
    };
    crate::engine::secrets::register_provider_key(&key);
    match kind {
        ProviderKind::OpenAi => Ok(Arc::new(OpenAiProvider::new(OpenAiConfig {
            base_url: p.base_url.clone(),
            api_key: key,
            ..Default::default()
        }))),
        ProviderKind::Anthropic => Ok(Arc::new(AnthropicProvider::new(AnthropicConfig {
            base_url: p.base_url.clone(),
            api_key: key,
            web_search: config.web.web_search,
            ..Default::default()
        }))),
    }
}

/// The demo works in a scratch copy of a tiny project, never the user's files; the copy is
/// removed when the returned guard is dropped (keep it until the run ends). Headless it approves
/// its own calls there; in the TUI it asks once (the first edit, with its diff) and then plays on.
pub(crate) fn prepare_demo(
    config: &mut Config,
    interactive: bool,
) -> Result<Option<crate::engine::demo::Scratch>, Error> {
    if !config.provider.backend.is_demo() {
        return Ok(None);
    }
    let scratch = crate::engine::demo::Scratch::create().map_err(|e| {
        Error::io(
            "cannot create the demo workspace in",
            std::env::temp_dir(),
            e,
        )
    })?;
    config.places.workspace = scratch.path().to_path_buf();
    config.tools.approvals = if interactive {
        ApprovalPolicy::AskOnce
    } else {
        ApprovalPolicy::Auto
    };
    Ok(Some(scratch))
}

/// The run `--continue` attaches to without `--run-dir`: the workspace's newest. When the newest
/// one's ledger cannot be read, headless stops with an error naming the file and the flags that
/// continue the run before it; the TUI continues that run after saying so.
fn latest_to_continue(places: &Places, interactive: bool) -> Result<Resume, ResumeError> {
    let found = ledger::latest_run(&places.data_dir, &places.workspace);
    let Some(bad) = found.skipped.first() else {
        return found
            .run
            .map(Resume::at)
            .ok_or_else(|| ResumeError::NoEarlierRun {
                workspace: places.workspace.clone(),
                runs: places.data_dir.join("runs"),
            });
    };
    match found.run {
        Some(run) if interactive => {
            let more = match found.skipped.len() - 1 {
                0 => String::new(),
                n => format!("; so are {n} more recent one(s)"),
            };
            let warning = format!(
                "the newest run's manifest {} is unreadable ({}){more}: continuing the older run \
                 {} instead",
                bad.manifest.display(),
                bad.reason,
                run.root.display()
            );
            Ok(Resume {
                run_dir: run,
                warnings: vec![warning],
            })
        }
        next => Err(ResumeError::NewestUnreadable {
            manifest: bad.manifest.clone(),
            reason: bad.reason.clone(),
            next: next.map(|r| r.root),
        }),
    }
}

/// Everything the engine needs, with the run directory created (or found, for `--continue`).
pub(crate) fn engine_params(config: &Config, interactive: bool) -> Result<EngineParams, Error> {
    let (p, ctx, places, tools) = (
        &config.provider,
        &config.context,
        &config.places,
        &config.tools,
    );
    let front_end = if interactive {
        FrontEnd::Interactive {
            review: ctx.review != Review::Off,
        }
    } else {
        FrontEnd::Headless
    };
    let provider = build_provider(config)?;
    let chosen = match &places.session {
        SessionChoice::Resume(id) => Some(ledger::run_list::find(
            &places.data_dir,
            &places.workspace,
            id,
        )?),
        SessionChoice::New | SessionChoice::Continue | SessionChoice::Pick => None,
    };
    let mcp = start_mcp(config, interactive);
    let (lsp, lsp_events) = start_lsp(config);
    let (extensions, waiting) = load_extensions(config);
    let (run_dir, resume) = match chosen {
        Some(run) => (run.clone(), Some(Resume::at(run))),
        None => run_to_use(places, interactive)?,
    };
    Ok(EngineParams {
        provider: ProviderParams {
            client: provider,
            max_tokens: p.max_tokens,
            retry: RetryPolicy {
                base_delay: Duration::from_millis(p.retry_base_ms),
                idle_timeout: Duration::from_secs(p.stream_idle_timeout_secs),
                ..RetryPolicy::default()
            },
            demo: p.backend.is_demo(),
        },
        settings: ModelSettings {
            model: p.model.clone(),
            effort: p.effort,
            thresholds: ctx.thresholds(),
            window_source: ctx.window_source,
        },
        places: crate::engine::session::Places {
            workspace: places.workspace.clone(),
            workbench: places.workbench_dir(),
            data_dir: places.data_dir.clone(),
            checkpoints: places.checkpoints,
        },
        run_dir,
        prompt: PromptParams {
            system_prompt: system_prompt(config),
            instructions: InstructionSources {
                user_dir: places.config_dir.clone(),
                home: dirs::home_dir(),
                max_bytes: ctx.instructions_max_bytes,
            },
            style: ctx.prompt_style(),
        },
        handoff: HandoffParams {
            context: ctx.policy,
            mode: ctx.handoff_mode,
            max_generations: ctx.max_generations,
            after: ctx.handoff_after,
        },
        tools: ToolParams {
            max_iterations: tools.max_iterations,
            approvals: tools.approvals,
            sandbox: config.sandbox.policy.clone(),
            sandbox_approval: config.sandbox.approval,
            bash_timeout: Duration::from_secs(tools.bash_timeout_secs),
            jobs: tools.jobs,
            subagent: crate::engine::subagent::SubagentSettings {
                model: tools.subagent_model.clone(),
                max_iterations: tools.subagent_max_iterations,
            },
            mode: tools.mode,
            web: crate::engine::tools::web_fetch::WebAccess::new(
                config.web.allow_private_hosts.clone(),
            ),
            files: Default::default(),
            terminals: Default::default(),
        },
        front_end,
        hooks: hook_params(config, waiting),
        start: StartParams {
            step: places.step.clone(),
            resume,
            // The demo plays by itself in the TUI (headless has its task); never when
            // continuing.
            autostart: (interactive && p.backend.is_demo())
                .then(|| crate::engine::demo::FIRST_MESSAGE.to_string()),
        },
        mcp: mcp.manager,
        lsp,
        side_events: merge_events(mcp.events, lsp_events),
        masking: ctx.masking,
        extensions,
    })
}

/// The custom slash commands and the skills of this user and workspace, read now (a built-in
/// command's name is never taken by a custom one).
pub(crate) fn load_extensions(config: &Config) -> (Extensions, Option<Unapproved>) {
    use crate::engine::hooks::project::{self, CommandGrants};
    use crate::engine::{commands, skills};
    let places = &config.places;
    let builtins: Vec<&str> = crate::tui::slash::COMMANDS.iter().map(|c| c.name).collect();
    let mut commands = commands::load(
        &commands::CommandDirs {
            config_dir: places.config_dir.clone(),
            // A workspace that is the home folder: its `.claude/commands` are the workspace's.
            home: dirs::home_dir().filter(|h| !same_dir(h, &places.workspace)),
            workspace: places.workspace.clone(),
        },
        &builtins,
    );
    let store = crate::engine::mcp::ApprovalStore::new(&places.data_dir);
    let lines = commands.workspace_grants();
    let waiting =
        match project::command_grants(&places.workspace, lines, config.tools.mcp_json, &store) {
            Ok(()) => None,
            Err(CommandGrants::Held(why)) => {
                commands.hold_workspace_grants(Some(why));
                None
            }
            Err(CommandGrants::Ask(waiting)) => {
                commands.hold_workspace_grants(None);
                Some(*waiting)
            }
        };
    let skills = skills::load(&skills::SkillDirs {
        config_dir: places.config_dir.clone(),
        home: dirs::home_dir(),
        workspace: places.workspace.clone(),
    });
    let extensions = Extensions {
        commands: Arc::new(commands),
        skills: Arc::new(skills),
    };
    (extensions, waiting)
}

/// The run directory of a start that names no run: `--continue` takes a review an earlier process
/// left open, else `--run-dir`'s run, else the workspace's newest. A plain interactive start
/// reopens such a review too; headless `-p` has no one to review it and starts fresh, in a new
/// run or the one `--run-dir` names.
fn run_to_use(places: &Places, interactive: bool) -> Result<(RunDir, Option<Resume>), Error> {
    let reopen = || {
        let wb = places.workbench_dir();
        reopen::frozen_run(&places.data_dir, &places.workspace, wb.as_deref())
    };
    if places.session == SessionChoice::Continue {
        let resume = match (&places.run_dir, reopen()) {
            (Some(dir), _) => {
                // Recorded where `--resume` looks (a run made before the index existed too).
                let run = RunDir::open(dir);
                run.remember(&places.data_dir);
                Resume::at(run)
            }
            (None, Some(run)) => Resume::at(run),
            (None, None) => latest_to_continue(places, interactive)?,
        };
        return Ok((resume.run_dir.clone(), Some(resume)));
    }
    if interactive
        && places.run_dir.is_none()
        && let Some(run) = reopen()
    {
        return Ok((run.clone(), Some(Resume::at(run))));
    }
    let run = RunDir::create_or_join(
        &places.data_dir,
        places.run_dir.as_deref(),
        places.step.as_deref(),
        &places.workspace,
    )?;
    Ok((run, None))
}

/// The config file's hooks, then the user's `~/.claude/settings.json` hooks and rules (theirs),
/// then those of the workspace's settings files: used when approved (or trusted), held for the
/// front end's question when never approved, else left out with a notice; their `deny` and
/// `ask` rules apply at once. The same policy as `.mcp.json` decides. `commands`: the workspace
/// command files' `allowed-tools`, when they wait for the same question.
fn hook_params(config: &Config, commands: Option<Unapproved>) -> HookParams {
    use crate::engine::hooks::{WorkspaceHooks, user_file, workspace_settings};
    let places = &config.places;
    let mut params = HookParams {
        hooks: config.hooks.hooks.clone(),
        notices: config.hooks.notices.clone(),
        ..HookParams::default()
    };
    let home = dirs::home_dir();
    // A workspace that is the home folder: its `.claude/settings.json` is read as the
    // workspace's (approved before it applies), never trusted as the user's.
    let home_is_workspace = home
        .as_deref()
        .is_some_and(|h| same_dir(h, &places.workspace));
    if let Some(home) = home.as_ref().filter(|_| !home_is_workspace) {
        let user = user_file::user_settings(home, &places.workspace);
        params.hooks.extend(user.hooks);
        params.permissions.extend(user.permissions);
        params.notices.extend(user.notices);
    }
    let store = crate::engine::mcp::ApprovalStore::new(&places.data_dir);
    let found = workspace_settings(
        &places.workspace,
        home.as_deref(),
        config.tools.mcp_json,
        &store,
    );
    params.permissions.extend(found.restrict);
    params.notices.extend(found.notices);
    for decided in found.files {
        params.notices.extend(decided.notice());
        match decided {
            WorkspaceHooks::Use {
                hooks,
                allow,
                notices,
                ..
            } => {
                params.hooks.extend(hooks);
                params.permissions.extend(allow);
                params
                    .notices
                    .extend(notices.iter().map(ToString::to_string));
            }
            WorkspaceHooks::NeedsApproval {
                file,
                hooks,
                allow,
                notices,
            } => {
                params.pending.push(Unapproved {
                    file,
                    hooks,
                    allow,
                    command_grants: Vec::new(),
                });
                params
                    .notices
                    .extend(notices.iter().map(ToString::to_string));
            }
            WorkspaceHooks::Ignored { .. } | WorkspaceHooks::Invalid(_) => {}
        }
    }
    params.pending.extend(commands);
    params
}

/// The language servers of a launch, started one by one as files of their languages are touched
/// (none with `--no-lsp`, or outside a runtime), and the front end's events for their notices.
fn start_lsp(
    config: &Config,
) -> (
    Option<Arc<crate::engine::lsp::LspManager>>,
    Option<tokio::sync::mpsc::UnboundedReceiver<Event>>,
) {
    use crate::engine::lsp::{LspManager, LspParams};
    if config.lsp.off || tokio::runtime::Handle::try_current().is_err() {
        return (None, None);
    }
    let (tx, mut notices) = tokio::sync::mpsc::unbounded_channel::<String>();
    let (events, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Some(message) = notices.recv().await {
            if events.send(Event::Notice { message }).is_err() {
                break;
            }
        }
    });
    let mut params = LspParams::new(
        config.lsp.servers.clone(),
        config.places.workspace.clone(),
        std::env::vars().collect(),
    );
    params.notices = Some(tx);
    (Some(Arc::new(LspManager::new(params))), Some(rx))
}

/// One stream of side events from two.
fn merge_events(
    a: Option<tokio::sync::mpsc::UnboundedReceiver<Event>>,
    b: Option<tokio::sync::mpsc::UnboundedReceiver<Event>>,
) -> Option<tokio::sync::mpsc::UnboundedReceiver<Event>> {
    let (a, b) = match (a, b) {
        (Some(a), Some(b)) => (a, b),
        (a, b) => return a.or(b),
    };
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    for mut from in [a, b] {
        let tx = tx.clone();
        tokio::spawn(async move {
            while let Some(ev) = from.recv().await {
                if tx.send(ev).is_err() {
                    break;
                }
            }
        });
    }
    Some(rx)
}

fn same_dir(a: &std::path::Path, b: &std::path::Path) -> bool {
    let canonical =
        |p: &std::path::Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    canonical(a) == canonical(b)
}

/// The MCP servers of a launch and what the front end should hear about them.
struct McpLaunch {
    manager: Option<Arc<McpManager>>,
    events: Option<tokio::sync::mpsc::UnboundedReceiver<Event>>,
}

/// Start the config file's MCP servers and, once approved, the workspace's `.mcp.json` ones, in
/// the background: nothing here waits for a server. Notices (an unapproved or broken `.mcp.json`,
/// a server that failed, variables not passed) and every status change go to the front end.
fn start_mcp(config: &Config, interactive: bool) -> McpLaunch {
    use crate::engine::mcp::{self, ProjectServers};
    let none = McpLaunch {
        manager: None,
        events: None,
    };
    if tokio::runtime::Handle::try_current().is_err() {
        return none;
    }
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let lookup = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let (places, tools) = (&config.places, &config.tools);
    let store = mcp::ApprovalStore::new(&places.data_dir);
    let mut notices = Vec::new();
    // A `.mcp.json` never approved: the TUI asks (its servers are held until it does).
    let mut pending = None;
    let project = match mcp::project_servers(&places.workspace, tools.mcp_json, &store, &lookup) {
        ProjectServers::Absent => Vec::new(),
        ProjectServers::Use(servers) => servers,
        ProjectServers::NeedsApproval { file, servers } if interactive => {
            pending = Some(mcp::ProjectApproval {
                path: file.path.clone(),
                sha256: mcp::approval::sha256_hex(&file.bytes),
            });
            servers
        }
        ProjectServers::NeedsApproval { file, .. } => {
            notices.push(mcp::headless_notice(&file));
            Vec::new()
        }
        ProjectServers::Ignored(n) | ProjectServers::Invalid(n) => {
            notices.push(n);
            Vec::new()
        }
    };
    let (servers, skipped) = mcp::config::merge(tools.mcp_servers.clone(), project);
    notices.extend(skipped);
    // Every server of the file may have been shadowed by config.toml: then nothing to ask.
    if !servers.iter().any(|s| s.origin == mcp::Origin::McpJson) {
        pending = None;
    }
    for message in notices {
        let _ = tx.send(Event::Notice { message });
    }
    if servers.is_empty() {
        return McpLaunch {
            manager: None,
            events: Some(rx),
        };
    }
    for server in &servers {
        for value in server.transport.secret_values() {
            crate::engine::secrets::register(value);
        }
    }
    let (status_tx, status_rx) = tokio::sync::mpsc::unbounded_channel();
    let params = mcp::ManagerParams {
        servers,
        workspace: places.workspace.clone(),
        env: std::env::vars().collect(),
        status_tx: Some(status_tx),
        project: pending,
    };
    // The TUI's first frame must not wait for the servers' spawns: it releases them once drawn.
    let manager = if interactive {
        McpManager::start_held(params)
    } else {
        McpManager::start(params)
    };
    if let Some((project, servers)) = manager.pending_project() {
        let _ = tx.send(Event::McpJsonApproval {
            path: project.path,
            sha256: project.sha256,
            servers,
        });
    }
    tokio::spawn(forward_statuses(status_rx, tx));
    McpLaunch {
        manager: Some(Arc::new(manager)),
        events: Some(rx),
    }
}

/// Pass each server status on to the front end, after a notice for a failure or a warning (each
/// distinct notice once: a status repeats its warnings). Ends when the front end is gone.
async fn forward_statuses(
    mut status_rx: tokio::sync::mpsc::UnboundedReceiver<crate::engine::mcp::ServerStatus>,
    tx: tokio::sync::mpsc::UnboundedSender<Event>,
) {
    let mut told: Vec<String> = Vec::new();
    while let Some(status) = status_rx.recv().await {
        tracing::info!(server = %status.name, "mcp server {}", status.state);
        let mut worth = Vec::new();
        if let crate::engine::mcp::ServerState::Failed { reason } = &status.state {
            worth.push(format!("MCP server `{}` failed: {reason}", status.name));
        }
        for w in &status.warnings {
            worth.push(format!("MCP server `{}`: {w}", status.name));
        }
        for message in worth {
            if !told.contains(&message) {
                told.push(message.clone());
                let _ = tx.send(Event::Notice { message });
            }
        }
        if tx.send(Event::McpStatus(status)).is_err() {
            break;
        }
    }
}

/// The next delivery of `sig` (a signal the front end listens to); never, when it could not be
/// set up or its stream ended.
pub(crate) async fn recv_signal(sig: &mut Option<tokio::signal::unix::Signal>) {
    let fired = match sig {
        Some(s) => s.recv().await.is_some(),
        None => false,
    };
    if !fired {
        std::future::pending::<()>().await;
    }
}

/// The signals that stop a front end with no terminal of its own (headless, ACP): the first to
/// arrive, with its name and number.
pub(crate) struct StopSignals {
    term: Option<tokio::signal::unix::Signal>,
    hup: Option<tokio::signal::unix::Signal>,
    int: Option<tokio::signal::unix::Signal>,
}

impl StopSignals {
    pub(crate) fn new() -> StopSignals {
        use tokio::signal::unix::{SignalKind, signal};
        StopSignals {
            term: signal(SignalKind::terminate()).ok(),
            hup: signal(SignalKind::hangup()).ok(),
            int: signal(SignalKind::interrupt()).ok(),
        }
    }

    pub(crate) async fn next(&mut self) -> (&'static str, i32) {
        tokio::select! {
            _ = recv_signal(&mut self.term) => ("SIGTERM", 15),
            _ = recv_signal(&mut self.hup) => ("SIGHUP", 1),
            _ = recv_signal(&mut self.int) => ("SIGINT", 2),
        }
    }
}
