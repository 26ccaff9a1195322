//! Configuration: flags beat env, env beats the config file (SPEC §2).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::Parser;
use serde::Deserialize;

use crate::engine::context::{self, DEFAULT_HEADROOM, Thresholds, WindowSource};
use crate::engine::mcp::{McpJsonPolicy, ServerConfig};
use crate::engine::policy::{ApprovalPolicy, ContextPolicy, HandoffMode};
use crate::engine::secrets::{self, ApiKey};
use crate::engine::types::Effort;
use crate::engine::windows::LearnedWindows;
use crate::logging::LogLevel;

/// The demo model's window and headroom (SPEC §15).
pub const DEMO_WINDOW: u64 = 40_000;
pub const DEMO_HEADROOM: u64 = 10_000;
/// The demo's `max_tokens`, the writing reserve below its window (SPEC §6.16).
pub const DEMO_MAX_TOKENS: u32 = 4_096;
pub const DEFAULT_MAX_GENERATIONS: u32 = 8;
pub const DEFAULT_MAX_ITERATIONS: u32 = 200;
pub const DEFAULT_REVIEW_SECS: u64 = 15;
pub const DEFAULT_ANTHROPIC_MODEL: &str = "claude-sonnet-4-5";
pub const DEFAULT_OPENAI_MODEL: &str = "gpt-4.1";

/// The command line. Every flag also has a config-file key of the same name with `_` for `-`.
#[derive(Debug, Clone, Default, Parser)]
#[command(
    name = "flower-tui",
    version,
    about = "A terminal coding agent with visible, editable context handoffs"
)]
pub struct Cli {
    /// Run headless with this task (`-` reads it from stdin); print events as JSON lines
    #[arg(short = 'p', long = "print", value_name = "TASK")]
    pub prompt: Option<String>,
    /// Context window in tokens
    #[arg(long, value_name = "N", value_parser = parse_tokens, allow_negative_numbers = true)]
    pub window: Option<u64>,
    /// Tokens kept free below the window; the handoff line is max(10000, window - headroom)
    #[arg(long, value_name = "N", value_parser = parse_tokens, allow_negative_numbers = true)]
    pub headroom: Option<u64>,
    /// Use in-place compaction instead of handoff
    #[arg(long)]
    pub no_handoff: bool,
    /// Use the compact system prompt and tool descriptions (automatic for windows up to 32K)
    #[arg(long)]
    pub lean: bool,
    /// Handoffs allowed in one step before it stops
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..), allow_negative_numbers = true)]
    pub max_generations: Option<u32>,
    /// Model name
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,
    /// anthropic or openai
    #[arg(long, value_name = "anthropic|openai", value_parser = parse_provider)]
    pub provider: Option<ProviderKind>,
    /// Continue the last run's latest session
    #[arg(long = "continue")]
    pub continue_last: bool,
    /// Continue a session of this workspace: alone, pick one (TUI); with RUN_ID (or a unique
    /// prefix of it), continue that run's latest session (TUI and headless)
    #[arg(
        long,
        value_name = "RUN_ID",
        num_args = 0..=1,
        default_missing_value = "",
        conflicts_with = "continue_last"
    )]
    pub resume: Option<String>,
    /// Extended thinking (Anthropic) or reasoning effort (OpenAI): low, medium, high, or off
    #[arg(long, value_name = "low|medium|high", value_parser = parse_effort)]
    pub effort: Option<EffortSetting>,
    /// The workspace (default: the current directory)
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// The run directory (default: <data_dir>/flower/runs/<run-id>)
    #[arg(long, value_name = "DIR")]
    pub run_dir: Option<PathBuf>,
    /// Write no notes (handoff files, spills) into <workspace>/.flower
    #[arg(long)]
    pub no_workbench: bool,
    /// Side-editor review window before the successor starts: seconds, or off
    #[arg(long, value_name = "SECS|off", value_parser = parse_review, allow_negative_numbers = true)]
    pub review: Option<Review>,
    /// Step name (default: derived from the first task)
    #[arg(long, value_name = "NAME")]
    pub step: Option<String>,
    /// Approve tool calls without asking
    #[arg(long)]
    pub yes: bool,
    /// Headless output: json or text
    #[arg(long, value_name = "json|text", value_parser = parse_output)]
    pub output: Option<OutputFormat>,
    /// Use the built-in demo model (no API key needed)
    #[arg(long)]
    pub demo: bool,
    /// Print the effective endpoint, model, window, thresholds and masked key, then continue
    #[arg(short = 'v', long = "verbose")]
    pub verbose: bool,
    /// Iteration budget of one turn
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..), allow_negative_numbers = true)]
    pub max_iterations: Option<u32>,
    /// Headless: trigger a manual handoff after N completed turns' worth of model responses
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..), allow_negative_numbers = true)]
    pub handoff_after: Option<u32>,
    /// Theme name (dark or light, or a file in <config_dir>/flower/themes)
    #[arg(long, value_name = "NAME")]
    pub theme: Option<String>,
    /// Abandon and retry a request after this many seconds without a byte from the provider
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..))]
    pub stream_idle_timeout: Option<u64>,
    /// The log file's level under <data_dir>/flower/logs: off, error, warn, info, debug, trace
    #[arg(long, value_name = "LEVEL", value_parser = parse_log_level)]
    pub log_level: Option<LogLevel>,
    /// Write the handoff document beside the main thread (background) or stop it until the
    /// document is ready (blocking)
    #[arg(long, value_name = "background|blocking", value_parser = parse_handoff_mode)]
    pub handoff_mode: Option<HandoffMode>,
    /// The workspace's .mcp.json: ask (once per workspace; headless ignores an unapproved one),
    /// trust, or ignore
    #[arg(long, value_name = "ask|trust|ignore", value_parser = parse_mcp_json)]
    pub mcp_json: Option<McpJsonPolicy>,
}

/// `--effort` as given: a level, or `off` (None).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EffortSetting(pub Option<Effort>);

fn parse_effort(s: &str) -> Result<EffortSetting, String> {
    Effort::parse(s).map(EffortSetting)
}

/// What `--resume` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResumeChoice {
    /// `--resume` alone: the TUI shows a picker of this workspace's sessions.
    Pick,
    /// `--resume RUN_ID`: continue that run.
    Run(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderKind {
    Anthropic,
    OpenAi,
}

impl ProviderKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::OpenAi => "openai",
        }
    }
}

/// What answers the model: the built-in demo, or a provider's API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// The built-in scripted model (SPEC §15).
    Demo,
    Api(ProviderKind),
}

impl Backend {
    pub fn is_demo(self) -> bool {
        self == Backend::Demo
    }

    /// `demo`, `anthropic` or `openai` (the status line's label).
    pub fn label(self) -> &'static str {
        match self {
            Backend::Demo => "demo",
            Backend::Api(p) => p.as_str(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Review {
    Off,
    Secs(u64),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutputFormat {
    #[default]
    Json,
    Text,
}

fn parse_tokens(s: &str) -> Result<u64, String> {
    let t = s.trim().replace('_', "");
    let (num, mult) = match t.chars().last() {
        Some('k' | 'K') => (&t[..t.len() - 1], 1_000.0),
        Some('m' | 'M') => (&t[..t.len() - 1], 1_000_000.0),
        _ => (t.as_str(), 1.0),
    };
    match num.parse::<f64>() {
        Ok(v) if v.is_finite() && (v * mult).round() >= 1.0 => Ok((v * mult).round() as u64),
        _ => Err(format!(
            "expected a positive token count like 200000 or 200k, got '{s}'"
        )),
    }
}

/// A token count in the config file: an integer, or a string the flag would accept (`"200k"`).
fn file_tokens<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    use serde::de::Error as _;
    const ACCEPTED: &str = "accepted values: a positive token count like 200000 or \"200k\"";
    match toml::Value::deserialize(d)? {
        toml::Value::Integer(n) if n > 0 => Ok(Some(n.unsigned_abs())),
        toml::Value::Integer(n) => Err(D::Error::custom(format!("{ACCEPTED} (got {n})"))),
        toml::Value::String(s) => parse_tokens(&s)
            .map(Some)
            .map_err(|_| D::Error::custom(format!("{ACCEPTED} (got \"{s}\")"))),
        other => Err(D::Error::custom(format!(
            "{ACCEPTED} (got {})",
            a_type(&other)
        ))),
    }
}

/// `a string`, `an array`: a TOML value's type with its article.
fn a_type(v: &toml::Value) -> String {
    let t = v.type_str();
    let article = if t.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {t}")
}

fn parse_provider(s: &str) -> Result<ProviderKind, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "anthropic" => Ok(ProviderKind::Anthropic),
        "openai" => Ok(ProviderKind::OpenAi),
        _ => Err(format!("accepted values: anthropic, openai (got '{s}')")),
    }
}

fn parse_review(s: &str) -> Result<Review, String> {
    let t = s.trim().to_ascii_lowercase();
    if t == "off" || t == "0" {
        return Ok(Review::Off);
    }
    t.trim_end_matches('s')
        .parse::<u64>()
        .map(Review::Secs)
        .map_err(|_| format!("accepted values: a number of seconds or off (got '{s}')"))
}

fn parse_log_level(s: &str) -> Result<LogLevel, String> {
    LogLevel::parse(s).ok_or_else(|| format!("accepted values: {} (got '{s}')", LogLevel::ACCEPTED))
}

fn parse_handoff_mode(s: &str) -> Result<HandoffMode, String> {
    HandoffMode::parse(s)
        .ok_or_else(|| format!("accepted values: background, blocking (got '{s}')"))
}

fn parse_mcp_json(s: &str) -> Result<McpJsonPolicy, String> {
    McpJsonPolicy::parse(s).ok_or_else(|| format!("accepted values: {}", McpJsonPolicy::ACCEPTED))
}

fn parse_output(s: &str) -> Result<OutputFormat, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "json" => Ok(OutputFormat::Json),
        "text" => Ok(OutputFormat::Text),
        _ => Err(format!("accepted values: json, text (got '{s}')")),
    }
}

/// The config file: every flag has a key. Unknown keys and wrong types are errors.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    /// A token count: `200000` or, as on the command line, `"200k"`.
    #[serde(default, deserialize_with = "file_tokens")]
    pub window: Option<u64>,
    #[serde(default, deserialize_with = "file_tokens")]
    pub headroom: Option<u64>,
    pub no_handoff: Option<bool>,
    pub lean: Option<bool>,
    /// Run compaction as well as handoff (both only when asked explicitly, SPEC §6.1).
    pub compaction: Option<bool>,
    pub max_generations: Option<u32>,
    pub model: Option<String>,
    pub provider: Option<String>,
    pub base_url: Option<String>,
    pub workspace: Option<PathBuf>,
    pub run_dir: Option<PathBuf>,
    pub no_workbench: Option<bool>,
    pub review: Option<toml::Value>,
    pub step: Option<String>,
    pub yes: Option<bool>,
    pub output: Option<String>,
    pub demo: Option<bool>,
    pub verbose: Option<bool>,
    pub max_iterations: Option<u32>,
    pub theme: Option<String>,
    pub max_tokens: Option<u32>,
    pub bash_timeout: Option<u64>,
    /// Base delay of the retry backoff in milliseconds (default 1000).
    pub retry_base_ms: Option<u64>,
    pub stream_idle_timeout: Option<u64>,
    pub log_level: Option<String>,
    pub handoff_mode: Option<String>,
    /// `[mcp_servers.NAME]` tables (see `engine::mcp::config`).
    pub mcp_servers: Option<toml::Value>,
    /// Whether a workspace's `.mcp.json` is used: ask, trust, ignore.
    pub mcp_json: Option<String>,
    /// The cap on the project instructions (AGENTS.md / CLAUDE.md files together), in bytes.
    pub instructions_max_bytes: Option<u64>,
    /// `low`, `medium`, `high` or `off`.
    pub effort: Option<String>,
    /// The model of the `task` tool's subagents (default: the main thread's).
    pub subagent_model: Option<String>,
    /// A subagent's iteration budget (default 50).
    pub subagent_max_iterations: Option<u32>,
    /// When a turn that took over 10 s ends: "bell", "osc9", "osc777" or "off".
    pub notify: Option<String>,
    /// Keep the input history across runs (per workspace, under the data dir).
    pub history: Option<bool>,
}

/// How the TUI says that a long turn ended (config key `notify`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Notify {
    /// The terminal bell (BEL).
    #[default]
    Bell,
    /// A desktop notification by OSC 9 (iTerm2, WezTerm, Windows Terminal, ghostty, kitty).
    Osc9,
    /// A desktop notification by OSC 777 (rxvt-unicode, foot, ghostty, VTE terminals).
    Osc777,
    /// Nothing.
    Off,
}

impl Notify {
    /// The accepted values, for error messages.
    pub const ACCEPTED: &'static str = "bell, osc9, osc777, off";

    /// Parse a config value.
    pub fn parse(s: &str) -> Option<Notify> {
        match s {
            "bell" => Some(Notify::Bell),
            "osc9" => Some(Notify::Osc9),
            "osc777" => Some(Notify::Osc777),
            "off" => Some(Notify::Off),
            _ => None,
        }
    }
}

/// A configuration error: one line naming the key and the accepted values; exit code 2.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

/// The environment, read once (so tests can pass their own).
#[derive(Debug, Clone, Default)]
pub struct Env(pub BTreeMap<String, String>);

impl Env {
    pub fn from_process() -> Self {
        Env(std::env::vars().collect())
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .get(key)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }
}

/// The effective settings of a run.
#[derive(Debug, Clone)]
pub struct Config {
    pub prompt: Option<String>,
    pub backend: Backend,
    pub model: String,
    pub base_url: String,
    pub api_key: Option<ApiKey>,
    pub window: u64,
    pub window_source: WindowSource,
    pub headroom: u64,
    /// `--lean`: the compact prompt whatever the window ([`Config::prompt_style`]).
    pub lean: bool,
    pub context: ContextPolicy,
    pub max_generations: u32,
    pub max_iterations: u32,
    pub continue_last: bool,
    pub workspace: PathBuf,
    pub run_dir: Option<PathBuf>,
    pub data_dir: PathBuf,
    pub workbench: bool,
    pub review: Option<u64>,
    pub step: Option<String>,
    pub approvals: ApprovalPolicy,
    pub output: OutputFormat,
    pub verbose: bool,
    pub handoff_after: Option<u32>,
    pub theme: String,
    pub no_color: bool,
    pub editor: Option<String>,
    pub max_tokens: u32,
    pub bash_timeout_secs: u64,
    pub retry_base_ms: u64,
    /// Seconds without a byte before a try is abandoned (SPEC §3, default 120).
    pub stream_idle_timeout_secs: u64,
    pub log_level: LogLevel,
    /// How a long turn's end is signalled.
    pub notify: Notify,
    /// Whether the input history is kept across runs.
    pub history: bool,
    /// The handoff's writing turn beside the main thread or blocking it (SPEC §6.16).
    pub handoff_mode: HandoffMode,
    /// The MCP servers of the config file (a workspace's `.mcp.json` is decided at launch).
    pub mcp_servers: Vec<ServerConfig>,
    pub mcp_json: McpJsonPolicy,
    /// `<config_dir>/flower`: the config file and the user's own `AGENTS.md`.
    pub config_dir: Option<PathBuf>,
    pub instructions_max_bytes: usize,
    /// `--resume [RUN_ID]`.
    pub resume: Option<ResumeChoice>,
    /// `--effort` / `effort`.
    pub effort: Option<Effort>,
    /// `subagent_model`: the model of the `task` tool's subagents (None: the main thread's).
    pub subagent_model: Option<String>,
    /// `subagent_max_iterations`: each subagent's iteration budget.
    pub subagent_max_iterations: u32,
}

impl Config {
    pub fn thresholds(&self) -> Thresholds {
        Thresholds::with_output(self.window, self.headroom, self.max_tokens)
    }

    /// The prompt the sessions get: lean when asked or in a small window.
    pub fn prompt_style(&self) -> crate::engine::lean::PromptStyle {
        crate::engine::lean::PromptStyle::choose(self.lean, self.window)
    }

    /// `<workspace>/.flower`, or None with `--no-workbench`.
    pub fn workbench_dir(&self) -> Option<PathBuf> {
        self.workbench.then(|| self.workspace.join(".flower"))
    }

    /// The `-v` report: endpoint, model, window, thresholds, masked key. Never the key itself.
    pub fn verbose_report(&self) -> String {
        let t = self.thresholds();
        let provider = match self.backend {
            Backend::Demo => "demo (built-in scripted model)",
            Backend::Api(p) => p.as_str(),
        };
        format!(
            "provider: {provider}\nendpoint: {}\nmodel: {}\nwindow: {} ({})\nheadroom: {}\nat: {}\nwarn_at: {}\napi key: {}\nhandoff: {} ({})\nworkspace: {}\nlog: {} ({})\nmcp servers: {}\nprompt: {}",
            if self.backend.is_demo() {
                "(in-process)"
            } else {
                self.base_url.as_str()
            },
            self.model,
            t.window,
            self.window_source.describe(),
            t.headroom,
            t.at,
            t.warn_at,
            mask_key(self.api_key.as_ref().map(ApiKey::expose)),
            self.context.describe(),
            self.handoff_mode.as_str(),
            self.workspace.display(),
            self.log_level,
            crate::logging::log_dir(&self.data_dir).display(),
            mcp_summary(&self.mcp_servers),
            self.prompt_style().as_str(),
        )
    }
}

/// The key masked to its first 4 characters: `sk-a****`.
pub fn mask_key(key: Option<&str>) -> String {
    match key {
        None => "(none)".into(),
        Some(k) => secrets::mask(k),
    }
}

/// `<config_dir>/flower/config.toml`.
pub fn config_path(env: &Env) -> Option<PathBuf> {
    if let Some(dir) = env.get("XDG_CONFIG_HOME") {
        return Some(PathBuf::from(dir).join("flower/config.toml"));
    }
    dirs::config_dir().map(|d| d.join("flower/config.toml"))
}

/// `<data_dir>/flower`.
pub fn data_dir(env: &Env) -> PathBuf {
    if let Some(dir) = env.get("XDG_DATA_HOME") {
        return PathBuf::from(dir).join("flower");
    }
    dirs::data_dir()
        .unwrap_or_else(std::env::temp_dir)
        .join("flower")
}

/// Read and check the config file; a missing file is an empty config.
pub fn load_file(path: &Path) -> Result<FileConfig, ConfigError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(FileConfig::default()),
        Err(e) => {
            return Err(ConfigError(format!(
                "config {}: cannot read: {e}",
                path.display()
            )));
        }
    };
    toml::from_str(&text).map_err(|e| {
        let msg = e.message().replace('\n', " ");
        let path = path.display();
        match e.span().and_then(|span| key_at(&text, span.start)) {
            Some(KeyAt::Table(k)) if !k.is_empty() => ConfigError(format!(
                "config {path}: key `{k}` is written as a table ([{k}]) but takes a value \
                 (write `{k} = …` at the top of the file): {msg}"
            )),
            Some(KeyAt::Value(k)) if !k.is_empty() && !msg.contains(&format!("`{k}`")) => {
                ConfigError(format!("config {path}: key `{k}`: {msg}"))
            }
            _ => ConfigError(format!("config {path}: {msg}")),
        }
    })
}

/// What the line an error points at names: a `key = value` or a `[table]` header.
enum KeyAt {
    Value(String),
    Table(String),
}

/// The key on the line holding byte `pos` of `text`.
fn key_at(text: &str, pos: usize) -> Option<KeyAt> {
    let head = text.get(..pos.min(text.len()))?;
    let start = head.rfind('\n').map_or(0, |i| i + 1);
    let line = text.get(start..)?.lines().next()?.trim();
    if let Some(header) = line.strip_prefix('[') {
        let name = header.trim_start_matches('[');
        let name = name.split(']').next()?.trim();
        return Some(KeyAt::Table(name.trim_matches('"').to_string()));
    }
    let (k, _) = line.split_once('=')?;
    Some(KeyAt::Value(k.trim().to_string()))
}

fn key_err(key: &str, accepted: &str, got: &str) -> ConfigError {
    ConfigError(format!(
        "config key `{key}`: accepted values: {accepted} (got {got})"
    ))
}

/// The config file's values that need checking beyond their TOML type.
struct FileValues {
    effort: Option<EffortSetting>,
    provider: Option<ProviderKind>,
    output: Option<OutputFormat>,
    review: Option<Review>,
    log_level: Option<LogLevel>,
    notify: Option<Notify>,
    handoff_mode: Option<HandoffMode>,
    mcp_json: Option<McpJsonPolicy>,
}

/// Check the file's values: a wrong one is an error naming its key and the accepted values.
fn check_file(file: &FileConfig) -> Result<FileValues, ConfigError> {
    let provider = match file.provider.as_deref() {
        None => None,
        Some(p) => {
            Some(parse_provider(p).map_err(|_| key_err("provider", "anthropic, openai", p))?)
        }
    };
    let output = match file.output.as_deref() {
        None => None,
        Some(o) => Some(parse_output(o).map_err(|_| key_err("output", "json, text", o))?),
    };
    const REVIEW: &str = "a number of seconds or \"off\"";
    let review = match &file.review {
        None => None,
        Some(toml::Value::Integer(0)) => Some(Review::Off),
        Some(toml::Value::Integer(n)) if *n > 0 => Some(Review::Secs(n.unsigned_abs())),
        Some(toml::Value::String(s)) => {
            Some(parse_review(s).map_err(|_| key_err("review", REVIEW, s))?)
        }
        Some(v) => return Err(key_err("review", REVIEW, v.type_str())),
    };
    let log_level = match file.log_level.as_deref() {
        None => None,
        Some(l) => {
            Some(LogLevel::parse(l).ok_or_else(|| key_err("log_level", LogLevel::ACCEPTED, l))?)
        }
    };
    let notify = match file.notify.as_deref() {
        None => None,
        Some(n) => Some(Notify::parse(n).ok_or_else(|| key_err("notify", Notify::ACCEPTED, n))?),
    };
    let handoff_mode = match file.handoff_mode.as_deref() {
        None => None,
        Some(m) => Some(
            HandoffMode::parse(m)
                .ok_or_else(|| key_err("handoff_mode", "background, blocking", m))?,
        ),
    };
    let effort = match file.effort.as_deref() {
        None => None,
        Some(e) => Some(parse_effort(e).map_err(|_| key_err("effort", Effort::ACCEPTED, e))?),
    };
    if file.max_generations == Some(0) {
        return Err(key_err("max_generations", "a whole number ≥ 1", "0"));
    }
    if file.max_iterations == Some(0) {
        return Err(key_err("max_iterations", "a whole number ≥ 1", "0"));
    }
    if file.subagent_max_iterations == Some(0) {
        return Err(key_err(
            "subagent_max_iterations",
            "a whole number ≥ 1",
            "0",
        ));
    }
    if file
        .subagent_model
        .as_deref()
        .is_some_and(|m| m.trim().is_empty())
    {
        return Err(key_err("subagent_model", "a model name", "an empty string"));
    }
    if file.max_tokens == Some(0) {
        return Err(key_err("max_tokens", "a whole number ≥ 1", "0"));
    }
    if let Some(url) = &file.base_url {
        check_base_url(url).map_err(|why| {
            ConfigError(format!(
                "config key `base_url`: {why}; accepted values: {BASE_URL_ACCEPTED}"
            ))
        })?;
    }
    if file.stream_idle_timeout == Some(0) {
        return Err(key_err(
            "stream_idle_timeout",
            "a whole number of seconds ≥ 1",
            "0",
        ));
    }
    let mcp_json = match file.mcp_json.as_deref() {
        None => None,
        Some(m) => Some(
            McpJsonPolicy::parse(m)
                .ok_or_else(|| key_err("mcp_json", McpJsonPolicy::ACCEPTED, m))?,
        ),
    };
    Ok(FileValues {
        effort,
        provider,
        output,
        review,
        log_level,
        notify,
        handoff_mode,
        mcp_json,
    })
}

const BASE_URL_ACCEPTED: &str = "an absolute http(s) URL like https://api.anthropic.com";

/// Why `url` cannot be a provider's base URL, if it cannot.
fn check_base_url(url: &str) -> Result<(), String> {
    match reqwest::Url::parse(url.trim()) {
        Ok(u) if !matches!(u.scheme(), "http" | "https") => {
            Err(format!("'{url}' is not an http(s) URL"))
        }
        Ok(u) if u.host_str().is_none_or(str::is_empty) => Err(format!("'{url}' has no host")),
        Ok(_) => Ok(()),
        Err(e) => Err(format!("'{url}' is not an absolute URL ({e})")),
    }
}

/// Which provider, with which key, or the demo.
struct Account {
    /// The provider named (flag > file) or implied by the env's key; it picks the model and URL
    /// defaults even for the demo.
    provider: Option<ProviderKind>,
    api_key: Option<String>,
    demo: bool,
}

/// Provider: flag > file > whichever key the env has. No provider configured: the TUI falls back
/// to the demo; headless must ask for `--demo`.
fn resolve_account(
    cli: &Cli,
    env: &Env,
    file: &FileConfig,
    file_provider: Option<ProviderKind>,
) -> Result<Account, ConfigError> {
    let explicit = cli.provider.or(file_provider);
    let provider = explicit.or_else(|| {
        if env.get("ANTHROPIC_API_KEY").is_some() {
            Some(ProviderKind::Anthropic)
        } else if env.get("OPENAI_API_KEY").is_some() {
            Some(ProviderKind::OpenAi)
        } else {
            None
        }
    });
    let api_key = match provider {
        Some(ProviderKind::Anthropic) => env.get("ANTHROPIC_API_KEY").map(str::to_string),
        Some(ProviderKind::OpenAi) => env.get("OPENAI_API_KEY").map(str::to_string),
        None => None,
    };
    // A local OpenAI-compatible server (Ollama, llama.cpp, vLLM, LM Studio) needs no key: the
    // provider chosen explicitly with a base URL of its own is configured enough.
    let keyless_local = explicit == Some(ProviderKind::OpenAi)
        && (env.get("OPENAI_BASE_URL").is_some() || file.base_url.is_some());
    let configured = api_key.is_some() || keyless_local;
    let demo = cli.demo || file.demo.unwrap_or(false) || (!configured && cli.prompt.is_none());
    if !demo && !configured {
        let which = match provider {
            Some(ProviderKind::OpenAi) => "OPENAI_API_KEY",
            Some(ProviderKind::Anthropic) => "ANTHROPIC_API_KEY",
            None => "ANTHROPIC_API_KEY (or OPENAI_API_KEY with --provider openai)",
        };
        return Err(ConfigError(format!(
            "no API key configured: set {which}, or pass --demo to use the built-in demo model"
        )));
    }
    Ok(Account {
        provider,
        api_key: if demo { None } else { api_key },
        demo,
    })
}

/// Model: flag > env > file > the provider's default (the demo's own unless one is named).
fn resolve_model(cli: &Cli, env: &Env, file: &FileConfig, account: &Account) -> String {
    if account.demo && cli.model.is_none() && file.model.is_none() {
        return "flower-demo".to_string();
    }
    let env_model = match account.provider {
        Some(ProviderKind::OpenAi) => env.get("OPENAI_MODEL"),
        _ => env.get("ANTHROPIC_MODEL"),
    };
    cli.model
        .clone()
        .or(env_model.map(str::to_string))
        .or(file.model.clone())
        .unwrap_or_else(|| match account.provider {
            Some(ProviderKind::OpenAi) => DEFAULT_OPENAI_MODEL.to_string(),
            _ => env
                .get("ANTHROPIC_DEFAULT_OPUS_MODEL")
                .unwrap_or(DEFAULT_ANTHROPIC_MODEL)
                .to_string(),
        })
}

/// Base URL: env beats file beats the provider's public endpoint. A bad env value is an error
/// naming the variable (the file's was checked with the file).
fn resolve_base_url(
    env: &Env,
    file: &FileConfig,
    provider: Option<ProviderKind>,
) -> Result<String, ConfigError> {
    let (var, public) = match provider {
        Some(ProviderKind::OpenAi) => ("OPENAI_BASE_URL", "https://api.openai.com"),
        _ => ("ANTHROPIC_BASE_URL", "https://api.anthropic.com"),
    };
    if let Some(url) = env.get(var) {
        check_base_url(url).map_err(|why| {
            ConfigError(format!(
                "{var}: {why}; accepted values: {BASE_URL_ACCEPTED}"
            ))
        })?;
        return Ok(url.to_string());
    }
    Ok(file.base_url.clone().unwrap_or_else(|| public.to_string()))
}

/// The window, where it came from, and the headroom used when none is configured.
fn resolve_window(
    flag: Option<u64>,
    env: &Env,
    model: &str,
    demo: bool,
    data_dir: &Path,
) -> (u64, WindowSource, u64) {
    if demo && flag.is_none() {
        return (DEMO_WINDOW, WindowSource::Demo, DEMO_HEADROOM);
    }
    let name = context::window_model_name(
        Some(model),
        env.get("ANTHROPIC_MODEL"),
        env.get("ANTHROPIC_DEFAULT_OPUS_MODEL"),
    );
    let learned = LearnedWindows::in_data_dir(data_dir).get(model);
    let (window, source) = context::effective_window(flag, learned, name);
    let headroom = if demo {
        DEMO_HEADROOM
    } else {
        DEFAULT_HEADROOM
    };
    (window, source, headroom)
}

/// The workspace: flag > file > the current directory; it must be a directory.
fn resolve_workspace(cli: &Cli, file: &FileConfig) -> Result<PathBuf, ConfigError> {
    let workspace = cli
        .workspace
        .clone()
        .or(file.workspace.clone())
        .unwrap_or_else(|| PathBuf::from("."));
    let workspace = workspace
        .canonicalize()
        .map_err(|e| ConfigError(format!("--workspace {}: {e}", workspace.display())))?;
    if !workspace.is_dir() {
        return Err(ConfigError(format!(
            "--workspace {}: not a directory",
            workspace.display()
        )));
    }
    Ok(workspace)
}

/// `<workspace>/.flower` must be a directory (or not exist yet): a file there is named as such.
fn check_workbench(workspace: &Path) -> Result<(), ConfigError> {
    let dir = workspace.join(".flower");
    match std::fs::metadata(&dir) {
        Ok(m) if !m.is_dir() => Err(ConfigError(format!(
            "{} is a file, not a directory: flower-tui keeps its notes and spill files there; \
             move the file away, or pass --no-workbench",
            dir.display()
        ))),
        _ => Ok(()),
    }
}

/// `--run-dir` must be a directory when it exists.
fn check_run_dir(dir: &Path) -> Result<(), ConfigError> {
    match std::fs::metadata(dir) {
        Ok(m) if !m.is_dir() => Err(ConfigError(format!(
            "--run-dir {}: not a directory",
            dir.display()
        ))),
        _ => Ok(()),
    }
}

/// Handoff by default; `--no-handoff` compacts instead; `compaction = true` adds compaction.
fn context_policy(cli: &Cli, file: &FileConfig) -> ContextPolicy {
    let no_handoff = cli.no_handoff || file.no_handoff.unwrap_or(false);
    match (no_handoff, file.compaction.unwrap_or(false)) {
        (true, _) => ContextPolicy::Compaction,
        (false, true) => ContextPolicy::Both,
        (false, false) => ContextPolicy::Handoff,
    }
}

/// Merge flags, env and file into the effective config.
pub fn resolve(cli: Cli, env: &Env, file: FileConfig) -> Result<Config, ConfigError> {
    let checked = check_file(&file)?;
    let mcp_servers = mcp_servers(&file, env)?;
    let account = resolve_account(&cli, env, &file, checked.provider)?;
    let model = resolve_model(&cli, env, &file, &account);
    let base_url = resolve_base_url(env, &file, account.provider)?;
    let data_dir = data_dir(env);
    let (window, window_source, headroom_default) = resolve_window(
        cli.window.or(file.window),
        env,
        &model,
        account.demo,
        &data_dir,
    );
    let workspace = resolve_workspace(&cli, &file)?;
    let workbench = !(cli.no_workbench || file.no_workbench.unwrap_or(false));
    // (The demo works in a scratch copy, never in this workspace.)
    if workbench && !account.demo {
        check_workbench(&workspace)?;
    }
    let run_dir = cli.run_dir.clone().or(file.run_dir.clone());
    if let Some(dir) = &run_dir {
        check_run_dir(dir)?;
    }
    let review = match cli.review.or(checked.review) {
        Some(Review::Off) => None,
        Some(Review::Secs(s)) => Some(s),
        None => Some(DEFAULT_REVIEW_SECS),
    };
    let backend = match account.provider {
        Some(p) if !account.demo => Backend::Api(p),
        _ => Backend::Demo,
    };
    let approvals = if cli.yes || file.yes.unwrap_or(false) {
        ApprovalPolicy::Auto
    } else {
        ApprovalPolicy::Ask
    };
    Ok(Config {
        context: context_policy(&cli, &file),
        prompt: cli.prompt,
        backend,
        model,
        base_url,
        api_key: account.api_key.map(ApiKey::new),
        window,
        window_source,
        headroom: cli.headroom.or(file.headroom).unwrap_or(headroom_default),
        max_generations: cli
            .max_generations
            .or(file.max_generations)
            .unwrap_or(DEFAULT_MAX_GENERATIONS),
        max_iterations: cli
            .max_iterations
            .or(file.max_iterations)
            .unwrap_or(DEFAULT_MAX_ITERATIONS),
        continue_last: cli.continue_last,
        workspace,
        run_dir,
        data_dir,
        workbench,
        review,
        step: cli.step.or(file.step),
        approvals,
        output: cli.output.or(checked.output).unwrap_or_default(),
        verbose: cli.verbose || file.verbose.unwrap_or(false),
        handoff_after: cli.handoff_after,
        theme: cli.theme.or(file.theme).unwrap_or_else(|| "dark".into()),
        lean: cli.lean || file.lean.unwrap_or(false),
        no_color: env.get("NO_COLOR").is_some(),
        editor: env.get("VISUAL").or(env.get("EDITOR")).map(str::to_string),
        // The demo's 40,000-token window keeps room to work on past its handoff line.
        max_tokens: file.max_tokens.unwrap_or(if account.demo {
            DEMO_MAX_TOKENS
        } else {
            16_384
        }),
        bash_timeout_secs: file.bash_timeout.unwrap_or(120),
        retry_base_ms: file.retry_base_ms.unwrap_or(1_000),
        stream_idle_timeout_secs: cli
            .stream_idle_timeout
            .or(file.stream_idle_timeout)
            .unwrap_or(120),
        log_level: cli.log_level.or(checked.log_level).unwrap_or_default(),
        notify: checked.notify.unwrap_or_default(),
        history: file.history.unwrap_or(true),
        handoff_mode: cli
            .handoff_mode
            .or(checked.handoff_mode)
            .unwrap_or_default(),
        mcp_servers,
        mcp_json: cli.mcp_json.or(checked.mcp_json).unwrap_or_default(),
        config_dir: config_path(env).and_then(|p| p.parent().map(Path::to_path_buf)),
        resume: cli.resume.map(|id| match id.trim() {
            "" => ResumeChoice::Pick,
            id => ResumeChoice::Run(id.to_string()),
        }),
        effort: cli.effort.or(checked.effort).and_then(|e| e.0),
        subagent_model: file.subagent_model.map(|m| m.trim().to_string()),
        subagent_max_iterations: file
            .subagent_max_iterations
            .unwrap_or(crate::engine::subagent::DEFAULT_MAX_ITERATIONS),
        instructions_max_bytes: file
            .instructions_max_bytes
            .map_or(crate::engine::instructions::DEFAULT_MAX_BYTES, |n| {
                usize::try_from(n).unwrap_or(usize::MAX)
            }),
    })
}

/// `name (command or URL), …` for `-v`, or `(none)`.
fn mcp_summary(servers: &[ServerConfig]) -> String {
    if servers.is_empty() {
        return "(none in the config file)".into();
    }
    servers
        .iter()
        .map(|s| {
            let off = if s.enabled { "" } else { ", disabled" };
            format!("{} ({}{off})", s.name, s.transport.summary())
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The file's `[mcp_servers]`, `${VAR}` expanded from `env`; an error names the key.
fn mcp_servers(file: &FileConfig, env: &Env) -> Result<Vec<ServerConfig>, ConfigError> {
    let Some(table) = &file.mcp_servers else {
        return Ok(Vec::new());
    };
    let lookup = |k: &str| env.get(k).map(str::to_string);
    crate::engine::mcp::config::from_toml(table, &lookup)
        .map_err(|e| ConfigError(format!("config {e}")))
}

/// Parse argv, read env and the config file: the whole start-up configuration.
pub fn load(args: impl IntoIterator<Item = String>, env: &Env) -> Result<Config, LoadError> {
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => return Err(LoadError::Clap(e)),
    };
    let file = match config_path(env) {
        Some(p) => load_file(&p).map_err(LoadError::Config)?,
        None => FileConfig::default(),
    };
    resolve(cli, env, file).map_err(LoadError::Config)
}

/// Why the configuration could not be loaded (or `--help`/`--version` was asked for).
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// Help, version or a bad flag (clap renders it).
    #[error(transparent)]
    Clap(#[from] clap::Error),
    #[error(transparent)]
    Config(#[from] ConfigError),
}

impl LoadError {
    /// The one line to print, and the exit code.
    pub fn report(&self) -> (String, i32) {
        match self {
            LoadError::Clap(e) => {
                use clap::error::ErrorKind as K;
                match e.kind() {
                    K::DisplayHelp
                    | K::DisplayVersion
                    | K::DisplayHelpOnMissingArgumentOrSubcommand => (e.to_string(), 0),
                    _ => {
                        let full = e.to_string();
                        let line = full
                            .lines()
                            .find(|l| !l.trim().is_empty())
                            .unwrap_or("invalid arguments")
                            .trim()
                            .to_string();
                        let line = line.strip_prefix("error: ").unwrap_or(&line).to_string();
                        (format!("flower-tui: {line}"), 2)
                    }
                }
            }
            LoadError::Config(e) => (format!("flower-tui: {e}"), 2),
        }
    }
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
