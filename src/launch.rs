//! From a resolved [`Config`] to a running engine: provider, run directory, system prompt.

use std::sync::Arc;
use std::time::Duration;

use crate::config::{Config, ProviderKind};
use crate::engine::demo::DemoProvider;
use crate::engine::ledger::RunDir;
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

/// The provider the config names (the demo when asked or when nothing is configured).
pub fn build_provider(config: &Config) -> Result<Arc<dyn Provider>, String> {
    if config.demo {
        return Ok(Arc::new(DemoProvider::new()));
    }
    let key = match (&config.api_key, config.provider) {
        (Some(k), _) => k.expose().to_string(),
        // A local OpenAI-compatible server: no Authorization header.
        (None, Some(ProviderKind::OpenAi)) => String::new(),
        (None, _) => return Err("no API key configured".to_string()),
    };
    crate::engine::secrets::register(&key);
    match config.provider {
        Some(ProviderKind::OpenAi) => Ok(Arc::new(OpenAiProvider::new(OpenAiConfig {
            base_url: config.base_url.clone(),
            api_key: key,
            ..Default::default()
        }))),
        _ => Ok(Arc::new(AnthropicProvider::new(AnthropicConfig {
            base_url: config.base_url.clone(),
            api_key: key,
            ..Default::default()
        }))),
    }
}

/// The demo works in a scratch copy of a tiny project, never the user's files, and approves its own
/// tool calls there.
pub fn prepare_demo(config: &mut Config) -> Result<(), String> {
    if !config.demo {
        return Ok(());
    }
    config.workspace = crate::engine::demo::scratch_workspace()
        .map_err(|e| format!("cannot create the demo workspace: {e}"))?;
    config.yes = true;
    Ok(())
}

/// Everything the engine needs, with the run directory created (or found, for `--continue`).
pub fn engine_params(config: &Config, interactive: bool) -> Result<EngineParams, String> {
    let provider = build_provider(config)?;
    let (run_dir, resume) = if config.continue_last {
        let base = config.data_dir.clone();
        let run = match &config.run_dir {
            Some(dir) => RunDir::open(dir),
            None => RunDir::latest(&base, &config.workspace).ok_or_else(|| {
                format!(
                    "--continue: no earlier run for {} under {}",
                    config.workspace.display(),
                    base.join("runs").display()
                )
            })?,
        };
        (run.clone(), Some(Resume { run_dir: run }))
    } else {
        let run = RunDir::create(&config.data_dir, config.run_dir.as_deref())
            .map_err(|e| format!("cannot create the run directory: {e}"))?;
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
        window_pinned: config.window_source == "--window",
        handoff: config.handoff,
        compaction: config.compaction,
        max_generations: config.max_generations,
        max_iterations: config.max_iterations,
        review: interactive && config.review.is_some(),
        auto_approve: config.yes,
        interactive,
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
        demo: config.demo,
    })
}
