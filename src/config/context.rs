//! The context window and what happens at its handoff line: the window and headroom (so the
//! thresholds), handoff or compaction, how many handoffs a step allows, whether the handoff
//! document is written beside the main thread or stops it, how long the side editor's review
//! lasts, the cap on the project instructions, and the masking of old tool output (on or off, and
//! the recent window it never touches).
//!
//! The prompt sessions get (full, or lean with `--lean` or in a small window) is decided here too.
//!
//! The rules: the window is the flag's (or the file's), else (asked at start, `server_window`) the
//! one a local server states, else one learned from an earlier overflow
//! of the same model, else the model's known window; the demo has its own small window and
//! headroom. Handoff is the default; `--no-handoff` compacts instead; the `compaction` key adds
//! compaction to handoff (both only when asked for explicitly).

use std::path::Path;

use clap::Args;
use serde::{Deserialize, Deserializer};

use super::env::Env;
use super::error::ConfigError;
use super::values::{Choice, FileWord, at_least_one, file_tokens, file_word, flag, parse_tokens};
use crate::engine::context::{self, DEFAULT_HEADROOM, Thresholds, WindowSource};
use crate::engine::learned_windows::LearnedWindows;
use crate::engine::mask::{MaskMode, MaskSettings};
use crate::engine::policy::{ContextPolicy, HandoffMode};
use crate::engine::prompt_style::PromptStyle;

/// The demo model's window and headroom: small, so its session crosses the handoff line soon.
pub(crate) const DEMO_WINDOW: u64 = 40_000;
pub(crate) const DEMO_HEADROOM: u64 = 10_000;
pub(crate) const DEFAULT_MAX_GENERATIONS: u32 = 8;
pub(crate) const DEFAULT_REVIEW_SECS: u64 = 15;

/// The side editor's review window before the successor starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Review {
    Off,
    Secs(u64),
}

impl Review {
    /// The window in seconds; None when off.
    pub(crate) fn secs(self) -> Option<u64> {
        match self {
            Review::Off => None,
            Review::Secs(s) => Some(s),
        }
    }
}

impl Choice for Review {
    const ACCEPTED: &'static str = "a number of seconds or off";
    const FILE_ACCEPTED: &'static str = "a number of seconds or \"off\"";

    fn from_word(word: &str) -> Option<Self> {
        let t = word.trim().to_ascii_lowercase();
        if t == "off" || t == "0" {
            return Some(Review::Off);
        }
        t.trim_end_matches('s')
            .parse::<u64>()
            .ok()
            .map(Review::Secs)
    }

    /// In the file also a number: 0 is off. Any other type is refused by its name.
    fn from_file<'de, D: Deserializer<'de>>(d: D) -> Result<FileWord<Self>, D::Error> {
        Ok(match toml::Value::deserialize(d)? {
            toml::Value::Integer(0) => FileWord::Valid(Review::Off),
            toml::Value::Integer(n) if n > 0 => FileWord::Valid(Review::Secs(n.unsigned_abs())),
            toml::Value::String(s) => match Review::from_word(&s) {
                Some(r) => FileWord::Valid(r),
                None => FileWord::Invalid(s),
            },
            other => FileWord::Invalid(other.type_str().to_string()),
        })
    }
}

impl Choice for HandoffMode {
    const ACCEPTED: &'static str = "background, blocking";

    fn from_word(word: &str) -> Option<Self> {
        HandoffMode::parse(word)
    }
}

impl Choice for MaskMode {
    const ACCEPTED: &'static str = "on, off";

    fn from_word(word: &str) -> Option<Self> {
        match word.trim().to_ascii_lowercase().as_str() {
            "on" => Some(MaskMode::On),
            "off" => Some(MaskMode::Off),
            _ => None,
        }
    }
}

/// The flags of this concern (their place in `--help` is `display_order`).
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct ContextFlags {
    /// Context window in tokens
    #[arg(global = true, long, value_name = "N", value_parser = parse_tokens, allow_negative_numbers = true, display_order = 1)]
    pub(crate) window: Option<u64>,
    /// Tokens kept free below the window; the handoff line is max(10000, window - headroom),
    /// scaled in a small window
    #[arg(global = true, long, value_name = "N", value_parser = parse_tokens, allow_negative_numbers = true, display_order = 2)]
    pub(crate) headroom: Option<u64>,
    /// Use in-place compaction instead of handoff
    #[arg(global = true, long, display_order = 3)]
    pub(crate) no_handoff: bool,
    /// Handoffs allowed in one step before it stops
    #[arg(global = true, long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..), allow_negative_numbers = true, display_order = 4)]
    pub(crate) max_generations: Option<u32>,
    /// Use the compact system prompt and tool descriptions (automatic for windows up to 32K)
    #[arg(global = true, long, display_order = 26)]
    pub(crate) lean: bool,
    /// Side-editor review window before the successor starts: seconds, or off
    #[arg(global = true, long, value_name = "SECS|off", value_parser = flag::<Review>, allow_negative_numbers = true, display_order = 13)]
    pub(crate) review: Option<Review>,
    /// Headless: trigger a manual handoff after N completed turns' worth of model responses
    #[arg(global = true, long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..), allow_negative_numbers = true, display_order = 20)]
    pub(crate) handoff_after: Option<u32>,
    /// Write the handoff document beside the main thread (background) or stop it until the
    /// document is ready (blocking)
    #[arg(global = true, long, value_name = "background|blocking", value_parser = flag::<HandoffMode>, display_order = 24)]
    pub(crate) handoff_mode: Option<HandoffMode>,
}

/// The config file's keys of this concern.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct ContextKeys {
    /// A token count: `200000` or, as on the command line, `"200k"`.
    #[serde(default, deserialize_with = "file_tokens")]
    pub(crate) window: Option<u64>,
    #[serde(default, deserialize_with = "file_tokens")]
    pub(crate) headroom: Option<u64>,
    pub(crate) no_handoff: Option<bool>,
    /// The compact prompt whatever the window.
    pub(crate) lean: Option<bool>,
    /// Run compaction as well as handoff.
    pub(crate) compaction: Option<bool>,
    pub(crate) max_generations: Option<u32>,
    /// Seconds (0 is off) or `"off"`.
    pub(crate) review: Option<FileWord<Review>>,
    pub(crate) handoff_mode: Option<FileWord<HandoffMode>>,
    /// The cap on the project instructions (AGENTS.md / CLAUDE.md files together), in bytes.
    pub(crate) instructions_max_bytes: Option<u64>,
    /// `"on"` or `"off"`: old tool output in the main thread's requests is masked.
    pub(crate) mask_tool_results: Option<FileWord<MaskMode>>,
    /// The newest tokens of the history that masking never touches: as `window`.
    #[serde(default, deserialize_with = "file_tokens")]
    pub(crate) mask_recent_tokens: Option<u64>,
}

/// The effective settings of this concern.
#[derive(Debug, Clone)]
pub(crate) struct ContextSettings {
    pub(crate) window: u64,
    pub(crate) window_source: WindowSource,
    pub(crate) headroom: u64,
    /// The requests' output cap as configured (`max_tokens`): the line keeps it free.
    pub(crate) max_tokens: u32,
    /// `--lean`: the compact prompt whatever the window ([`ContextSettings::prompt_style`]).
    pub(crate) lean: bool,
    pub(crate) policy: ContextPolicy,
    pub(crate) max_generations: u32,
    /// The handoff's writing turn beside the main thread or blocking it.
    pub(crate) handoff_mode: HandoffMode,
    pub(crate) review: Review,
    /// Headless: a manual handoff after this many completed turns.
    pub(crate) handoff_after: Option<u32>,
    pub(crate) instructions_max_bytes: usize,
    /// How old tool output is masked in the main thread's requests.
    pub(crate) masking: MaskSettings,
}

impl ContextSettings {
    /// The thresholds of the window, keeping the requests' output cap free below it.
    pub(crate) fn thresholds(&self) -> Thresholds {
        Thresholds::with_output(self.window, self.headroom, self.max_tokens)
    }

    /// The prompt the sessions get: lean when asked or in a small window.
    pub(crate) fn prompt_style(&self) -> PromptStyle {
        PromptStyle::choose(self.lean, self.window)
    }
}

/// What resolving the window needs from the other concerns.
pub(crate) struct WindowInputs<'a> {
    pub(crate) model: &'a str,
    pub(crate) demo: bool,
    pub(crate) data_dir: &'a Path,
    /// The requests' configured output cap.
    pub(crate) max_tokens: u32,
}

/// Merge this concern's flags, env and file keys.
pub(crate) fn resolve(
    flags: ContextFlags,
    keys: ContextKeys,
    env: &Env,
    inputs: WindowInputs<'_>,
) -> Result<ContextSettings, ConfigError> {
    let review = file_word("review", keys.review)?;
    let handoff_mode = file_word("handoff_mode", keys.handoff_mode)?;
    let masking = masking(
        file_word("mask_tool_results", keys.mask_tool_results)?,
        keys.mask_recent_tokens,
    );
    let max_generations = at_least_one(
        "max_generations",
        "a whole number ≥ 1",
        keys.max_generations,
    )?;
    let (window, window_source, headroom_default) =
        resolve_window(flags.window.or(keys.window), env, &inputs);
    let no_handoff = flags.no_handoff || keys.no_handoff.unwrap_or(false);
    let policy = match (no_handoff, keys.compaction.unwrap_or(false)) {
        (true, _) => ContextPolicy::Compaction,
        (false, true) => ContextPolicy::Both,
        (false, false) => ContextPolicy::Handoff,
    };
    Ok(ContextSettings {
        window,
        window_source,
        headroom: flags.headroom.or(keys.headroom).unwrap_or(headroom_default),
        max_tokens: inputs.max_tokens,
        lean: flags.lean || keys.lean.unwrap_or(false),
        policy,
        max_generations: flags
            .max_generations
            .or(max_generations)
            .unwrap_or(DEFAULT_MAX_GENERATIONS),
        handoff_mode: flags.handoff_mode.or(handoff_mode).unwrap_or_default(),
        review: flags
            .review
            .or(review)
            .unwrap_or(Review::Secs(DEFAULT_REVIEW_SECS)),
        handoff_after: flags.handoff_after,
        instructions_max_bytes: keys
            .instructions_max_bytes
            .map_or(crate::engine::instructions::DEFAULT_MAX_BYTES, |n| {
                usize::try_from(n).unwrap_or(usize::MAX)
            }),
        masking,
    })
}

/// The masking the keys ask for; what they leave unset is the default's. Off is off whatever the
/// recent window.
fn masking(mode: Option<MaskMode>, recent_tokens: Option<u64>) -> MaskSettings {
    let default = MaskSettings::default();
    match mode.unwrap_or(default.mode) {
        MaskMode::Off => MaskSettings::OFF,
        MaskMode::On => MaskSettings {
            recent_tokens: recent_tokens.unwrap_or(default.recent_tokens),
            ..default
        },
    }
}

/// The window, where it came from, and the headroom used when none is configured.
fn resolve_window(
    given: Option<u64>,
    env: &Env,
    inputs: &WindowInputs<'_>,
) -> (u64, WindowSource, u64) {
    if inputs.demo && given.is_none() {
        return (DEMO_WINDOW, WindowSource::Demo, DEMO_HEADROOM);
    }
    let name = context::window_model_name(
        Some(inputs.model),
        env.get("ANTHROPIC_MODEL"),
        env.get("ANTHROPIC_DEFAULT_OPUS_MODEL"),
    );
    let learned = LearnedWindows::in_data_dir(inputs.data_dir).get(inputs.model);
    let (window, source) = context::effective_window(given, learned, name);
    let headroom = if inputs.demo {
        DEMO_HEADROOM
    } else {
        DEFAULT_HEADROOM
    };
    (window, source, headroom)
}

#[cfg(test)]
#[path = "masking_tests.rs"]
mod masking_tests;
