//! How a run shows itself: headless output (JSON lines or the answer as text), `-v`, the TUI's
//! theme, colour and editor, how a long turn's end is signalled, whether the input history is
//! kept, whether the TUI captures the mouse from its start, and the log file's level.
//!
//! The rules: `NO_COLOR` turns colour off; the editor is `$VISUAL`, else `$EDITOR`.

use clap::Args;
use serde::Deserialize;

use super::env::Env;
use super::error::ConfigError;
use super::values::{Choice, FileWord, file_word, flag};
use crate::logging::LogLevel;

pub(crate) const DEFAULT_THEME: &str = "dark";

/// What headless mode prints on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum OutputFormat {
    /// Every event as a JSON line.
    #[default]
    Json,
    /// Only the answer.
    Text,
}

impl Choice for OutputFormat {
    const ACCEPTED: &'static str = "json, text";

    fn from_word(word: &str) -> Option<Self> {
        match word.trim().to_ascii_lowercase().as_str() {
            "json" => Some(OutputFormat::Json),
            "text" => Some(OutputFormat::Text),
            _ => None,
        }
    }
}

/// How the TUI says that a long turn ended or a tool call waits for approval (config key
/// `notify`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Notify {
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

impl Choice for Notify {
    const ACCEPTED: &'static str = "bell, osc9, osc777, off";

    fn from_word(word: &str) -> Option<Self> {
        match word {
            "bell" => Some(Notify::Bell),
            "osc9" => Some(Notify::Osc9),
            "osc777" => Some(Notify::Osc777),
            "off" => Some(Notify::Off),
            _ => None,
        }
    }
}

impl Choice for LogLevel {
    const ACCEPTED: &'static str = LogLevel::ACCEPTED;

    fn from_word(word: &str) -> Option<Self> {
        LogLevel::parse(word)
    }
}

/// The flags of this concern (their place in `--help` is `display_order`).
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct FrontFlags {
    /// Headless output: json or text
    #[arg(global = true, long, value_name = "json|text", value_parser = flag::<OutputFormat>, display_order = 16)]
    pub(crate) output: Option<OutputFormat>,
    /// Print the effective endpoint, model, window, thresholds and masked key, then continue
    #[arg(global = true, short = 'v', long = "verbose", display_order = 18)]
    pub(crate) verbose: bool,
    /// Theme name (dark or light, or a file in <config_dir>/flower/themes)
    #[arg(global = true, long, value_name = "NAME", display_order = 21)]
    pub(crate) theme: Option<String>,
    /// The log file's level under <data_dir>/flower/logs: off, error, warn, info, debug, trace
    #[arg(global = true, long, value_name = "LEVEL", value_parser = flag::<LogLevel>, display_order = 23)]
    pub(crate) log_level: Option<LogLevel>,
}

/// The config file's keys of this concern.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct FrontKeys {
    pub(crate) output: Option<FileWord<OutputFormat>>,
    pub(crate) verbose: Option<bool>,
    pub(crate) theme: Option<String>,
    pub(crate) log_level: Option<FileWord<LogLevel>>,
    /// When a turn that took over 10 s ends: "bell", "osc9", "osc777" or "off".
    pub(crate) notify: Option<FileWord<Notify>>,
    /// Keep the input history across runs (per workspace, under the data dir).
    pub(crate) history: Option<bool>,
    /// The TUI captures the mouse from its start (Alt-M toggles it); off: the terminal selects.
    pub(crate) mouse_capture: Option<bool>,
}

/// The effective settings of this concern.
#[derive(Debug, Clone)]
pub(crate) struct FrontSettings {
    pub(crate) output: OutputFormat,
    pub(crate) verbose: bool,
    pub(crate) theme: String,
    pub(crate) no_color: bool,
    /// `$VISUAL` or `$EDITOR`.
    pub(crate) editor: Option<String>,
    pub(crate) log_level: LogLevel,
    /// How a long turn's end is signalled.
    pub(crate) notify: Notify,
    /// Whether the input history is kept across runs.
    pub(crate) history: bool,
    /// Whether the TUI captures the mouse from its start.
    pub(crate) mouse_capture: bool,
}

/// Merge this concern's flags, env and file keys.
pub(crate) fn resolve(
    flags: FrontFlags,
    keys: FrontKeys,
    env: &Env,
) -> Result<FrontSettings, ConfigError> {
    let output = file_word("output", keys.output)?;
    let log_level = file_word("log_level", keys.log_level)?;
    let notify = file_word("notify", keys.notify)?;
    Ok(FrontSettings {
        output: flags.output.or(output).unwrap_or_default(),
        verbose: flags.verbose || keys.verbose.unwrap_or(false),
        theme: flags
            .theme
            .or(keys.theme)
            .unwrap_or_else(|| DEFAULT_THEME.into()),
        no_color: env.get("NO_COLOR").is_some(),
        editor: env.get("VISUAL").or(env.get("EDITOR")).map(str::to_string),
        log_level: flags.log_level.or(log_level).unwrap_or_default(),
        notify: notify.unwrap_or_default(),
        history: keys.history.unwrap_or(true),
        mouse_capture: keys.mouse_capture.unwrap_or(false),
    })
}
