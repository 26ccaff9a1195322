//! From a resolved [`Config`] to a running engine: provider, run directory, system prompt.

use std::sync::Arc;
use std::time::Duration;

use crate::config::{Backend, Config, ProviderKind};
use crate::engine::demo::DemoProvider;
use crate::engine::error::{Error, ResumeError};
use crate::engine::handoff::reopen;
use crate::engine::ledger::RunDir;
use crate::engine::policy::{ApprovalPolicy, FrontEnd};
use crate::engine::provider::Provider;
use crate::engine::provider::anthropic::{AnthropicConfig, AnthropicProvider};
use crate::engine::provider::openai::{OpenAiConfig, OpenAiProvider};
use crate::engine::provider::retry::RetryPolicy;
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
    // A review an earlier process left open (SPEC §6.15) is reopened by `--continue` and by a
    // plain interactive start; headless `-p` has no one to review it and starts fresh.
    let reopen = || {
        let wb = config.workbench_dir();
        reopen::frozen_run(&config.data_dir, &config.workspace, wb.as_deref()).map(|f| f.run)
    };
    let plain_reopens = interactive && config.run_dir.is_none();
    let (run_dir, resume) = if config.continue_last {
        let base = config.data_dir.clone();
        let run = match &config.run_dir {
            Some(dir) => RunDir::open(dir),
            None => reopen()
                .or_else(|| RunDir::latest(&base, &config.workspace))
                .ok_or_else(|| ResumeError::NoEarlierRun {
                    workspace: config.workspace.clone(),
                    runs: base.join("runs"),
                })?,
        };
        (run.clone(), Some(Resume { run_dir: run }))
    } else if plain_reopens && let Some(run) = reopen() {
        (run.clone(), Some(Resume { run_dir: run }))
    } else {
        let run = RunDir::create(&config.data_dir, config.run_dir.as_deref())?;
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
        bash_timeout: Duration::from_secs(config.bash_timeout_secs),
        resume,
        handoff_after: config.handoff_after,
        demo: config.backend.is_demo(),
    })
}
