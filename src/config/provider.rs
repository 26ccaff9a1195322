//! Who answers: the provider (Anthropic, an OpenAI-compatible server, or the built-in demo), its
//! key, model, endpoint, effort and request limits.
//!
//! The rules: the provider is the flag's, else the file's, else whichever key the environment
//! holds. With no provider configured the TUI plays the demo; headless must ask for `--demo`. A
//! local OpenAI-compatible server (Ollama, llama.cpp, vLLM) needs no key once `--provider openai`
//! is given with a base URL of its own. The model is flag > env > file > the provider's default;
//! the base URL env > file > the provider's public endpoint.

use clap::Args;
use serde::Deserialize;

use super::env::Env;
use super::error::{ConfigError, UrlProblem, UrlSetting};
use super::values::{Choice, FileWord, at_least_one, file_word, flag};
use crate::engine::secrets::ApiKey;
use crate::engine::types::Effort;

/// The demo's `max_tokens`: the reserve for writing the handoff document below its window.
pub(crate) const DEMO_MAX_TOKENS: u32 = 4_096;
pub(crate) const DEFAULT_MAX_TOKENS: u32 = 16_384;
pub(crate) const DEFAULT_ANTHROPIC_MODEL: &str = "claude-sonnet-4-5";
pub(crate) const DEFAULT_OPENAI_MODEL: &str = "gpt-4.1";
/// The demo model's name, unless one is named.
pub(crate) const DEMO_MODEL: &str = "flower-demo";
pub(crate) const DEFAULT_RETRY_BASE_MS: u64 = 1_000;
pub(crate) const DEFAULT_STREAM_IDLE_TIMEOUT_SECS: u64 = 120;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ProviderKind {
    Anthropic,
    OpenAi,
}

impl ProviderKind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::OpenAi => "openai",
        }
    }

    /// The variable holding this provider's key.
    fn key_var(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "ANTHROPIC_API_KEY",
            ProviderKind::OpenAi => "OPENAI_API_KEY",
        }
    }
}

impl Choice for ProviderKind {
    const ACCEPTED: &'static str = "anthropic, openai";

    fn from_word(word: &str) -> Option<Self> {
        match word.trim().to_ascii_lowercase().as_str() {
            "anthropic" => Some(ProviderKind::Anthropic),
            "openai" => Some(ProviderKind::OpenAi),
            _ => None,
        }
    }
}

/// What answers the model: the built-in demo, or a provider's API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Backend {
    /// The built-in scripted model: no key, a scratch copy of a tiny project.
    Demo,
    Api(ProviderKind),
}

impl Backend {
    pub(crate) fn is_demo(self) -> bool {
        self == Backend::Demo
    }

    /// `demo`, `anthropic` or `openai` (the status line's label).
    pub(crate) fn label(self) -> &'static str {
        match self {
            Backend::Demo => "demo",
            Backend::Api(p) => p.as_str(),
        }
    }
}

/// `--effort` / `effort` as given: a level, or off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EffortSetting {
    Off,
    Level(Effort),
}

impl EffortSetting {
    pub(crate) fn effort(self) -> Option<Effort> {
        match self {
            EffortSetting::Off => None,
            EffortSetting::Level(e) => Some(e),
        }
    }
}

impl Choice for EffortSetting {
    const ACCEPTED: &'static str = Effort::ACCEPTED;

    fn from_word(word: &str) -> Option<Self> {
        match Effort::parse(word).ok()? {
            None => Some(EffortSetting::Off),
            Some(e) => Some(EffortSetting::Level(e)),
        }
    }
}

/// The flags of this concern (their place in `--help` is `display_order`).
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct ProviderFlags {
    /// Model name
    #[arg(global = true, long, value_name = "NAME", display_order = 5)]
    pub(crate) model: Option<String>,
    /// anthropic or openai
    #[arg(global = true, long, value_name = "anthropic|openai", value_parser = flag::<ProviderKind>, display_order = 6)]
    pub(crate) provider: Option<ProviderKind>,
    /// Extended thinking (Anthropic) or reasoning effort (OpenAI): low, medium, high, or off
    #[arg(global = true, long, value_name = "low|medium|high", value_parser = flag::<EffortSetting>, display_order = 9)]
    pub(crate) effort: Option<EffortSetting>,
    /// Use the built-in demo model (no API key needed)
    #[arg(global = true, long, display_order = 17)]
    pub(crate) demo: bool,
    /// Abandon and retry a request after this many seconds without a byte from the provider
    #[arg(global = true, long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..), display_order = 22)]
    pub(crate) stream_idle_timeout: Option<u64>,
}

/// The config file's keys of this concern.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct ProviderKeys {
    pub(crate) model: Option<String>,
    pub(crate) provider: Option<FileWord<ProviderKind>>,
    pub(crate) base_url: Option<String>,
    pub(crate) demo: Option<bool>,
    /// `low`, `medium`, `high` or `off`.
    pub(crate) effort: Option<FileWord<EffortSetting>>,
    pub(crate) max_tokens: Option<u32>,
    /// Base delay of the retry backoff in milliseconds.
    pub(crate) retry_base_ms: Option<u64>,
    pub(crate) stream_idle_timeout: Option<u64>,
}

/// The effective settings of this concern.
#[derive(Debug, Clone)]
pub(crate) struct ProviderSettings {
    pub(crate) backend: Backend,
    pub(crate) model: String,
    pub(crate) base_url: String,
    pub(crate) api_key: Option<ApiKey>,
    pub(crate) max_tokens: u32,
    pub(crate) effort: Option<Effort>,
    pub(crate) retry_base_ms: u64,
    /// Seconds without a byte from the provider before a try is abandoned and retried.
    pub(crate) stream_idle_timeout_secs: u64,
}

/// Merge this concern's flags, env and file keys. `headless`: a task was given with `-p`, so no
/// provider means an error rather than the demo.
pub(crate) fn resolve(
    flags: ProviderFlags,
    keys: ProviderKeys,
    env: &Env,
    headless: bool,
) -> Result<ProviderSettings, ConfigError> {
    let file_provider = file_word("provider", keys.provider)?;
    let file_effort = file_word("effort", keys.effort)?;
    let max_tokens = at_least_one("max_tokens", "a whole number ≥ 1", keys.max_tokens)?;
    if let Some(url) = &keys.base_url {
        check_base_url(url).map_err(|problem| ConfigError::BadUrl {
            at: UrlSetting::FileKey,
            problem,
        })?;
    }
    let stream_idle_timeout = at_least_one(
        "stream_idle_timeout",
        "a whole number of seconds ≥ 1",
        keys.stream_idle_timeout,
    )?;
    let asked = Asked {
        provider: flags.provider.or(file_provider),
        demo: flags.demo || keys.demo.unwrap_or(false),
        own_base_url: keys.base_url.is_some(),
        headless,
    };
    let account = resolve_account(&asked, env)?;
    let model = resolve_model(flags.model, keys.model, env, &account);
    let base_url = resolve_base_url(env, keys.base_url, account.provider)?;
    let backend = match account.provider {
        Some(p) if !account.demo => Backend::Api(p),
        _ => Backend::Demo,
    };
    Ok(ProviderSettings {
        backend,
        model,
        base_url,
        api_key: account.api_key.map(ApiKey::new),
        // The demo's 40,000-token window keeps room to work on past its handoff line.
        max_tokens: max_tokens.unwrap_or(if account.demo {
            DEMO_MAX_TOKENS
        } else {
            DEFAULT_MAX_TOKENS
        }),
        effort: flags.effort.or(file_effort).and_then(EffortSetting::effort),
        retry_base_ms: keys.retry_base_ms.unwrap_or(DEFAULT_RETRY_BASE_MS),
        stream_idle_timeout_secs: flags
            .stream_idle_timeout
            .or(stream_idle_timeout)
            .unwrap_or(DEFAULT_STREAM_IDLE_TIMEOUT_SECS),
    })
}

/// Which provider, with which key, or the demo.
struct Account {
    /// The provider named (flag > file) or implied by the env's key; it picks the model and URL
    /// defaults even for the demo.
    provider: Option<ProviderKind>,
    api_key: Option<String>,
    demo: bool,
}

/// What the flags and the file ask of the account.
struct Asked {
    /// The provider named (flag > file).
    provider: Option<ProviderKind>,
    /// `--demo` or `demo = true`.
    demo: bool,
    /// The file names a base URL.
    own_base_url: bool,
    /// A task was given with `-p`.
    headless: bool,
}

fn resolve_account(asked: &Asked, env: &Env) -> Result<Account, ConfigError> {
    let explicit = asked.provider;
    let provider = explicit.or_else(|| {
        [ProviderKind::Anthropic, ProviderKind::OpenAi]
            .into_iter()
            .find(|p| env.get(p.key_var()).is_some())
    });
    let api_key = provider.and_then(|p| env.get(p.key_var()).map(str::to_string));
    // A local OpenAI-compatible server needs no key: the provider chosen explicitly with a base
    // URL of its own is configured enough.
    let keyless_local = explicit == Some(ProviderKind::OpenAi)
        && (env.get("OPENAI_BASE_URL").is_some() || asked.own_base_url);
    let configured = api_key.is_some() || keyless_local;
    let demo = asked.demo || (!configured && !asked.headless);
    if !demo && !configured {
        return Err(ConfigError::NoApiKey {
            set: match provider {
                Some(p) => p.key_var(),
                None => "ANTHROPIC_API_KEY (or OPENAI_API_KEY with --provider openai)",
            },
        });
    }
    Ok(Account {
        provider,
        api_key: if demo { None } else { api_key },
        demo,
    })
}

/// Model: flag > env > file > the provider's default (the demo's own unless one is named).
fn resolve_model(
    flag: Option<String>,
    key: Option<String>,
    env: &Env,
    account: &Account,
) -> String {
    if account.demo && flag.is_none() && key.is_none() {
        return DEMO_MODEL.to_string();
    }
    let env_model = match account.provider {
        Some(ProviderKind::OpenAi) => env.get("OPENAI_MODEL"),
        _ => env.get("ANTHROPIC_MODEL"),
    };
    flag.or(env_model.map(str::to_string))
        .or(key)
        .unwrap_or_else(|| match account.provider {
            Some(ProviderKind::OpenAi) => DEFAULT_OPENAI_MODEL.to_string(),
            _ => env
                .get("ANTHROPIC_DEFAULT_OPUS_MODEL")
                .unwrap_or(DEFAULT_ANTHROPIC_MODEL)
                .to_string(),
        })
}

/// Base URL: env beats file beats the provider's public endpoint. A bad env value is an error
/// naming the variable (the file's was checked with the file's other keys).
fn resolve_base_url(
    env: &Env,
    key: Option<String>,
    provider: Option<ProviderKind>,
) -> Result<String, ConfigError> {
    let (var, public) = match provider {
        Some(ProviderKind::OpenAi) => ("OPENAI_BASE_URL", "https://api.openai.com"),
        _ => ("ANTHROPIC_BASE_URL", "https://api.anthropic.com"),
    };
    if let Some(url) = env.get(var) {
        check_base_url(url).map_err(|problem| ConfigError::BadUrl {
            at: UrlSetting::Env(var),
            problem,
        })?;
        return Ok(url.to_string());
    }
    Ok(key.unwrap_or_else(|| public.to_string()))
}

/// Why `url` cannot be a provider's base URL, if it cannot.
fn check_base_url(url: &str) -> Result<(), UrlProblem> {
    match reqwest::Url::parse(url.trim()) {
        Ok(u) if !matches!(u.scheme(), "http" | "https") => {
            Err(UrlProblem::NotHttp { url: url.into() })
        }
        Ok(u) if u.host_str().is_none_or(str::is_empty) => {
            Err(UrlProblem::NoHost { url: url.into() })
        }
        Ok(_) => Ok(()),
        Err(e) => Err(UrlProblem::NotAbsolute {
            url: url.into(),
            reason: e.to_string(),
        }),
    }
}
