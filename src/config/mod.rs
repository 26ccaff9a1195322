//! The configuration of a run: flags beat the environment, the environment beats the config file,
//! the file beats the defaults. [`load`] reads all three once at start and returns the effective
//! [`Config`], or one line saying what is wrong (exit code 2).
//!
//! The settings are grouped by concern, and each concern's module holds all of it: its flags, its
//! config-file keys, its effective settings and the rule that merges them.
//!
//! - [`provider`]: who answers (provider or demo, key, model, base URL, effort, request limits)
//! - [`context`]: the window, thresholds, handoff or compaction, generations, review, handoff mode
//! - [`places`]: workspace, workbench, run directory, step, data/config dirs, which session
//! - [`tools`]: approvals, iteration budget, bash timeout, MCP servers, subagents
//! - [`sandbox`]: the `bash` tool's OS sandbox (mode, network, writable paths, asking)
//! - [`front`]: headless output, `-v`, theme, colour, editor, notifications, history, log level
//! - [`hooks`]: the config file's `[[hooks.EVENT]]` tables (a bad entry is a notice)
//! - [`lsp`]: language servers (`--no-lsp`, `[lsp.NAME]` tables)
//! - [`web`]: the hosts `web_fetch` may reach on private addresses, the provider's web search
//!
//! Around them: [`cli`] flattens the flag groups into the command line, [`file`] reads the config
//! file into the key groups, [`settings`] merges every concern into [`Config`], [`report`] is the
//! `-v` report, [`values`] reads one value (the [`values::Choice`] enums, token counts),
//! [`env`] is the environment and the two directories, [`error`] is every way it can go wrong.
//!
//! # Adding a key
//!
//! Pick the concern it belongs to, then, in that concern's module:
//!
//! 1. a file key: a field in its `…Keys` struct, with the same name added to [`file::KEYS`] (a
//!    test fails until both agree);
//! 2. a flag, if it has one: a field in its `…Flags` struct, with the next free `display_order`;
//! 3. the effective value: a field in its settings struct, set in its `resolve` (flag, then env,
//!    then file, then the default);
//! 4. a value that is one of a few words: an enum that implements [`values::Choice`]; the flag's
//!    value parser is `flag::<T>`, the key's field is `Option<FileWord<T>>`, and `resolve` reads
//!    it with `file_word("key", keys.key)?` — the error messages come with it;
//! 5. a value with a rule of its own: check it in `resolve` and return a [`ConfigError`] variant
//!    (`BadValue` names the key and the accepted values).
//!
//! A concern that grows past 20 settings splits into two.

pub(crate) mod cli;
pub(crate) mod context;
pub(crate) mod env;
pub(crate) mod error;
pub(crate) mod file;
pub(crate) mod front;
pub(crate) mod hooks;
pub(crate) mod lsp;
pub(crate) mod places;
pub(crate) mod provider;
pub(crate) mod report;
pub(crate) mod sandbox;
pub(crate) mod settings;
pub(crate) mod tools;
pub(crate) mod values;
pub(crate) mod web;

use clap::Parser;

pub(crate) use self::cli::Cli;
pub(crate) use self::context::Review;
pub(crate) use self::env::Env;
pub(crate) use self::error::ConfigError;
pub(crate) use self::front::{Notify, OutputFormat};
pub(crate) use self::places::SessionChoice;
pub(crate) use self::provider::{Backend, ProviderKind};
pub(crate) use self::settings::Config;

/// Parse argv, read env and the config file: the whole start-up configuration.
pub(crate) fn load(args: impl IntoIterator<Item = String>, env: &Env) -> Result<Config, LoadError> {
    let cli = Cli::try_parse_from(args)?;
    let file = match env::config_path(env) {
        Some(p) => file::load_file(&p)?,
        None => file::FileConfig::default(),
    };
    Ok(settings::resolve(cli, env, file)?)
}

/// Why the configuration could not be loaded (or `--help`/`--version` was asked for).
#[derive(Debug, thiserror::Error)]
pub(crate) enum LoadError {
    /// Help, version or a bad flag (clap renders it).
    #[error(transparent)]
    Clap(#[from] clap::Error),
    #[error(transparent)]
    Config(#[from] ConfigError),
}

impl LoadError {
    /// The one line to print, and the exit code: 0 for help and version (printed on stdout), else
    /// 2 (on stderr).
    pub(crate) fn report(&self) -> (String, i32) {
        use clap::error::ErrorKind as K;
        match self {
            LoadError::Clap(e) => match e.kind() {
                K::DisplayHelp
                | K::DisplayVersion
                | K::DisplayHelpOnMissingArgumentOrSubcommand => (e.to_string(), 0),
                _ => {
                    let full = e.to_string();
                    let line = full
                        .lines()
                        .find(|l| !l.trim().is_empty())
                        .unwrap_or("invalid arguments")
                        .trim();
                    let line = line.strip_prefix("error: ").unwrap_or(line);
                    (format!("flower-tui: {line}"), 2)
                }
            },
            LoadError::Config(e) => (format!("flower-tui: {e}"), 2),
        }
    }
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
