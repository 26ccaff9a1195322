//! From a resolved [`Config`] to a running engine: provider, run directory, system prompt.

use std::sync::Arc;
use std::time::Duration;

use crate::config::{Backend, Config, ProviderKind};
use crate::engine::demo::DemoProvider;
use crate::engine::error::{Error, ResumeError};
use crate::engine::ledger::RunDir;
use crate::engine::policy::{ApprovalPolicy, FrontEnd};
use crate::engine::provider::Provider;
use crate::engine::provider::anthropic::{AnthropicConfig, AnthropicProvider};
use crate::engine::provider::openai::{OpenAiConfig, OpenAiProvider};
use crate::engine::provider::retry::RetryPolicy;
use crate::engine::runs;
use crate::engine::session::{EngineParams, Resume};

const SYSTEM_PROMPT: &str = include_str!("../assets/system_prompt.md");

/// The system prompt for a workspace. Stable across a run, so the provider's prompt cache holds.
pub fn system_prompt(workspace: &std::path::Path) -> String {
    SYSTEM_PROMPT.replace("{workspace}", &workspace.display().to_string())
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

/// The demo works in a scratch copy of a tiny project, never the user's files, and approves its own
/// tool calls there.
pub fn prepare_demo(config: &mut Config) -> Result<(), Error> {
    if !config.backend.is_demo() {
        return Ok(());
    }
    config.workspace = crate::engine::demo::scratch_workspace().map_err(|e| {
        Error::io(
            "cannot create the demo workspace in",
            std::env::temp_dir(),
            e,
        )
    })?;
    config.approvals = ApprovalPolicy::Auto;
    Ok(())
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
    let (run_dir, resume) = if config.continue_last {
        let resume = match &config.run_dir {
            Some(dir) => Resume::at(RunDir::open(dir)),
            None => latest_to_continue(config, interactive)?,
        };
        (resume.run_dir.clone(), Some(resume))
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
        system_prompt: system_prompt(&config.workspace),
        workspace: config.workspace.clone(),
        workbench: config.workbench_dir(),
        run_dir,
        data_dir: config.data_dir.clone(),
        thresholds: config.thresholds(),
        window_source: config.window_source,
        context: config.context,
        max_generations: config.max_generations,
        max_iterations: config.max_iterations,
        approvals: config.approvals,
        front_end,
        step: config.step.clone(),
        retry: RetryPolicy {
            base_delay: Duration::from_millis(config.retry_base_ms),
            ..RetryPolicy::default()
        },
        max_tokens: config.max_tokens,
        bash_timeout: Duration::from_secs(config.bash_timeout_secs),
        resume,
        handoff_after: config.handoff_after,
        demo: config.backend.is_demo(),
    })
}
