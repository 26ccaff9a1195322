//! From a resolved [`Config`] to a running engine: provider, run directory, system prompt.

use std::sync::Arc;
use std::time::Duration;

use crate::config::{Backend, Config, ProviderKind, ResumeChoice};
use crate::engine::demo::DemoProvider;
use crate::engine::error::{Error, ResumeError};
use crate::engine::handoff::reopen;
use crate::engine::instructions::InstructionSources;
use crate::engine::ledger::RunDir;
use crate::engine::mcp::McpManager;
use crate::engine::policy::{ApprovalPolicy, FrontEnd};
use crate::engine::protocol::Event;
use crate::engine::provider::Provider;
use crate::engine::provider::anthropic::{AnthropicConfig, AnthropicProvider};
use crate::engine::provider::openai::{OpenAiConfig, OpenAiProvider};
use crate::engine::provider::retry::RetryPolicy;
use crate::engine::runs;
use crate::engine::session::{EngineParams, Resume};
use crate::engine::sessions;

/// The system prompt for a workspace (full or lean, by the window and `--lean`). Stable across a
/// run, so the provider's prompt cache holds.
pub fn system_prompt(config: &Config) -> String {
    config.prompt_style().base_prompt(&config.workspace)
}

/// The first line of a run's log: what it runs with (the key never, not even masked).
pub fn log_start(config: &Config, log: &std::path::Path) {
    tracing::info!(
        version = env!("CARGO_PKG_VERSION"),
        pid = std::process::id(),
        mode = if config.prompt.is_some() { "headless" } else { "tui" },
        backend = config.backend.label(),
        model = %config.model,
        endpoint = %if config.backend.is_demo() { "(in-process)" } else { config.base_url.as_str() },
        window = config.window,
        window_source = config.window_source.describe(),
        headroom = config.headroom,
        context = config.context.describe(),
        workspace = %config.workspace.display(),
        log = %log.display(),
        "flower-tui started"
    );
}

/// Say why the run cannot start (one line, keys masked); the exit code: 2 when the flags ask for
/// something the disk refuses (a taken run directory or step), else 1.
pub fn start_failed(e: &Error) -> i32 {
    eprintln!(
        "flower-tui: {}",
        crate::engine::secrets::redact(&e.to_string())
    );
    e.exit_code()
}

/// The provider the config names (the demo when asked or when nothing is configured).
pub fn build_provider(config: &Config) -> Result<Arc<dyn Provider>, Error> {
    let Backend::Api(kind) = config.backend else {
        return Ok(Arc::new(DemoProvider::new()));
    };
    let key = match (&config.api_key, kind) {
        (Some(k), _) => k.expose().to_string(),
        // A local OpenAI-compatible server: no Authorization header.
        (None, ProviderKind::OpenAi) => String::new(),
        (None, ProviderKind::Anthropic) => return Err(Error::NoApiKey),
    };
    crate::engine::secrets::register(&key);
    match kind {
        ProviderKind::OpenAi => Ok(Arc::new(OpenAiProvider::new(OpenAiConfig {
            base_url: config.base_url.clone(),
            api_key: key,
            ..Default::default()
        }))),
        ProviderKind::Anthropic => Ok(Arc::new(AnthropicProvider::new(AnthropicConfig {
            base_url: config.base_url.clone(),
            api_key: key,
            ..Default::default()
        }))),
    }
}

/// The demo works in a scratch copy of a tiny project, never the user's files; the copy is
/// removed when the returned guard is dropped (keep it until the run ends). Headless it approves
/// its own calls there; in the TUI it asks once (the first edit, with its diff) and then plays on.
pub fn prepare_demo(
    config: &mut Config,
    interactive: bool,
) -> Result<Option<crate::engine::demo::Scratch>, Error> {
    if !config.backend.is_demo() {
        return Ok(None);
    }
    let scratch = crate::engine::demo::Scratch::create().map_err(|e| {
        Error::io(
            "cannot create the demo workspace in",
            std::env::temp_dir(),
            e,
        )
    })?;
    config.workspace = scratch.path().to_path_buf();
    config.approvals = if interactive {
        ApprovalPolicy::AskOnce
    } else {
        ApprovalPolicy::Auto
    };
    Ok(Some(scratch))
}

/// The run `--continue` attaches to without `--run-dir`: the workspace's newest. When the newest
/// one's ledger cannot be read, headless stops with an error naming the file and the flags that
/// continue the run before it; the TUI continues that run after saying so.
fn latest_to_continue(config: &Config, interactive: bool) -> Result<Resume, ResumeError> {
    let found = runs::latest_run(&config.data_dir, &config.workspace);
    let Some(bad) = found.skipped.first() else {
        return found
            .run
            .map(Resume::at)
            .ok_or_else(|| ResumeError::NoEarlierRun {
                workspace: config.workspace.clone(),
                runs: config.data_dir.join("runs"),
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
pub fn engine_params(config: &Config, interactive: bool) -> Result<EngineParams, Error> {
    let front_end = if interactive {
        FrontEnd::Interactive {
            review: config.review.is_some(),
        }
    } else {
        FrontEnd::Headless
    };
    let provider = build_provider(config)?;
    let chosen = match &config.resume {
        Some(ResumeChoice::Run(id)) => {
            Some(sessions::find(&config.data_dir, &config.workspace, id)?)
        }
        _ => None,
    };
    // A review an earlier process left open (SPEC §6.15) is reopened by `--continue` and by a
    // plain interactive start; headless `-p` has no one to review it and starts fresh.
    let reopen = || {
        let wb = config.workbench_dir();
        reopen::frozen_run(&config.data_dir, &config.workspace, wb.as_deref()).map(|f| f.run)
    };
    let plain_reopens = interactive && config.run_dir.is_none();
    let mcp = start_mcp(config, interactive);
    let (run_dir, resume) = if let Some(run) = chosen {
        (run.clone(), Some(Resume::at(run)))
    } else if config.continue_last {
        // A review left open comes first; else the newest run, said when it cannot be read.
        let resume = match (&config.run_dir, reopen()) {
            (Some(dir), _) => Resume::at(RunDir::open(dir)),
            (None, Some(run)) => Resume::at(run),
            (None, None) => latest_to_continue(config, interactive)?,
        };
        (resume.run_dir.clone(), Some(resume))
    } else if plain_reopens && let Some(run) = reopen() {
        (run.clone(), Some(Resume::at(run)))
    } else {
        let run = RunDir::create_or_join(
            &config.data_dir,
            config.run_dir.as_deref(),
            config.step.as_deref(),
            &config.workspace,
        )?;
        (run, None)
    };
    Ok(EngineParams {
        provider,
        model: config.model.clone(),
        system_prompt: system_prompt(config),
        instructions: InstructionSources {
            user_dir: config.config_dir.clone(),
            max_bytes: config.instructions_max_bytes,
        },
        workspace: config.workspace.clone(),
        workbench: config.workbench_dir(),
        run_dir,
        data_dir: config.data_dir.clone(),
        thresholds: config.thresholds(),
        window_source: config.window_source,
        context: config.context,
        handoff_mode: config.handoff_mode,
        max_generations: config.max_generations,
        max_iterations: config.max_iterations,
        approvals: config.approvals,
        front_end,
        step: config.step.clone(),
        retry: RetryPolicy {
            base_delay: Duration::from_millis(config.retry_base_ms),
            idle_timeout: Duration::from_secs(config.stream_idle_timeout_secs),
            ..RetryPolicy::default()
        },
        max_tokens: config.max_tokens,
        effort: config.effort,
        bash_timeout: Duration::from_secs(config.bash_timeout_secs),
        resume,
        handoff_after: config.handoff_after,
        // The demo plays by itself in the TUI (headless has its task); never when continuing.
        autostart: (interactive && config.backend.is_demo())
            .then(|| crate::engine::demo::FIRST_MESSAGE.to_string()),
        demo: config.backend.is_demo(),
        mcp: mcp.manager,
        side_events: mcp.events,
        subagent: crate::engine::subagent::SubagentSettings {
            model: config.subagent_model.clone(),
            max_iterations: config.subagent_max_iterations,
        },
        prompt_style: config.prompt_style(),
    })
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
    let store = mcp::ApprovalStore::new(&config.data_dir);
    let mut notices = Vec::new();
    // A `.mcp.json` never approved: the TUI asks (its servers are held until it does).
    let mut pending = None;
    let project = match mcp::project_servers(&config.workspace, config.mcp_json, &store, &lookup) {
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
    let (servers, skipped) = mcp::config::merge(config.mcp_servers.clone(), project);
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
    let (status_tx, mut status_rx) = tokio::sync::mpsc::unbounded_channel();
    let params = mcp::ManagerParams {
        servers,
        workspace: config.workspace.clone(),
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
    tokio::spawn(async move {
        let mut told: Vec<String> = Vec::new();
        while let Some(status) = status_rx.recv().await {
            tracing::info!(server = %status.name, "mcp server {}", status.state);
            let mut worth = Vec::new();
            if let mcp::ServerState::Failed { reason } = &status.state {
                worth.push(format!("MCP server `{}` failed: {reason}", status.name));
            }
            for w in &status.warnings {
                worth.push(format!("MCP server `{}`: {w}", status.name));
            }
            for message in worth {
                // Each distinct notice once (a status repeats its warnings).
                if !told.contains(&message) {
                    told.push(message.clone());
                    let _ = tx.send(Event::Notice { message });
                }
            }
            if tx.send(Event::McpStatus(status)).is_err() {
                break;
            }
        }
    });
    McpLaunch {
        manager: Some(Arc::new(manager)),
        events: Some(rx),
    }
}

/// The next delivery of `sig` (a signal the front end listens to); never, when it could not be
/// set up or its stream ended.
pub async fn recv_signal(sig: &mut Option<tokio::signal::unix::Signal>) {
    let fired = match sig {
        Some(s) => s.recv().await.is_some(),
        None => false,
    };
    if !fired {
        std::future::pending::<()>().await;
    }
}
