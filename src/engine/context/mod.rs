//! Context accounting and the handoff thresholds — pure functions: where the handoff line and
//! the approach warning sit in a window (scaled for small windows, so that a handoff with a
//! written document comes before the window is reached), the output cap a window allows, the
//! warning about a session floor too large for the window, the due check, the window guessed
//! from a model's name, and where the window in force came from.

pub(crate) mod strategy;

use super::provider::known_windows::{self, Family};
use super::provider::probe::ServerKind;

/// The headroom kept below the window when none is configured.
pub(crate) const DEFAULT_HEADROOM: u64 = 50_000;
/// The handoff line never drops below this.
pub(crate) const MIN_AT: u64 = 10_000;
/// The approach warning never drops below this.
pub(crate) const MIN_WARN_AT: u64 = 1_000;
/// The warning comes this many tokens before the handoff line.
pub(crate) const WARN_BEFORE: u64 = 20_000;

/// The output cap of a request when none is configured (what [`Thresholds::new`] assumes).
pub(crate) const DEFAULT_OUTPUT_CAP: u32 = 16_384;
/// A request never asks for fewer output tokens than this (whatever the window).
pub(crate) const MIN_OUTPUT_CAP: u64 = 256;
/// The margin kept beside the writing reserve in a small window never exceeds this.
const MAX_SMALL_MARGIN: u64 = 8_192;

/// The output cap (`max_tokens`) of the requests in a window: the configured one, at most a
/// quarter of the window (a request asking for more output than the window can hold is refused
/// by some servers whatever its prompt), never below [`MIN_OUTPUT_CAP`].
pub(crate) fn output_cap(window: u64, configured: u32) -> u32 {
    let cap = (window / 4).max(MIN_OUTPUT_CAP);
    u32::try_from(u64::from(configured).min(cap)).unwrap_or(configured)
}

/// Which rule put the handoff line where it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LineRule {
    /// `max(10_000, W - H)`.
    Seed,
    /// The seed's line would leave less than the writing reserve below the window (a small
    /// window, or a headroom smaller than the reserve): the headroom is the reserve plus an
    /// eighth of the window (at most 8,192), so that the document is written before the window
    /// is reached.
    Scaled,
}

/// The handoff line and the rule that placed it, for a window, a headroom and the writing
/// reserve (the writing request's output cap, [`output_cap`]). The seed's line
/// `max(10_000, W - H)` holds while it stays below `W - reserve`; where it does not (with the
/// default headroom and output cap: every window up to about 13K, where the 10k floor is at or
/// above what the document needs free), the headroom scales with the window.
pub(crate) fn handoff_line(window: u64, headroom: u64, reserve: u64) -> (u64, LineRule) {
    let seed = MIN_AT.max(window.saturating_sub(headroom));
    if seed < window.saturating_sub(reserve) {
        return (seed, LineRule::Seed);
    }
    let margin = (window / 8).min(MAX_SMALL_MARGIN);
    (
        window.saturating_sub(reserve).saturating_sub(margin),
        LineRule::Scaled,
    )
}

/// The handoff line ([`handoff_line`]) when the requests ask for `max_tokens` of output.
pub(crate) fn handoff_at(window: u64, headroom: u64, max_tokens: u32) -> u64 {
    handoff_line(window, headroom, u64::from(output_cap(window, max_tokens))).0
}

/// The approach warning: `max(1_000, at - 20_000)`.
pub(crate) fn warn_at(at: u64) -> u64 {
    MIN_WARN_AT.max(at.saturating_sub(WARN_BEFORE))
}

/// The approach warning of a line the window scaled: an eighth of the window before it (at most
/// 20,000), so that it comes after the session's start and before the line.
fn scaled_warn_at(at: u64, window: u64) -> u64 {
    MIN_WARN_AT.max(at.saturating_sub(WARN_BEFORE.min(window / 8)))
}

/// The part of the window the session's floor (system prompt, tool specs, instructions) may take
/// before it is warned about.
pub(crate) const FLOOR_SHARE: u64 = 3;

/// A warning when the floor every session starts with (system prompt, tool specs, project
/// instructions) takes more than a third of the window: little is left to work in, and each
/// successor starts that full again.
pub(crate) fn floor_warning(floor: u64, window: u64, lean: bool) -> Option<String> {
    if window == 0 || floor.saturating_mul(FLOOR_SHARE) <= window {
        return None;
    }
    let hint = if lean {
        "trim the project instructions (AGENTS.md), or use a larger window"
    } else {
        "use --lean (a compact prompt and tool descriptions), trim the project instructions \
         (AGENTS.md), or use a larger window"
    };
    Some(format!(
        "the session's own prompt (system prompt, tools, instructions) takes about {} of the {} \
         window ({}%), so every session starts with little room to work: {hint}",
        fmt_tokens(floor),
        fmt_window(window),
        floor.saturating_mul(100) / window
    ))
}

/// The thresholds of one window, computed once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Thresholds {
    pub window: u64,
    pub headroom: u64,
    pub at: u64,
    pub warn_at: u64,
}

impl Thresholds {
    /// The thresholds of a window whose requests ask for the default output cap.
    pub fn new(window: u64, headroom: u64) -> Self {
        Self::with_output(window, headroom, DEFAULT_OUTPUT_CAP)
    }

    /// The thresholds of a window whose requests ask for `max_tokens` of output (capped by the
    /// window, [`output_cap`]): that much is kept free for the handoff document.
    pub fn with_output(window: u64, headroom: u64, max_tokens: u32) -> Self {
        let reserve = u64::from(output_cap(window, max_tokens));
        let (at, rule) = handoff_line(window, headroom, reserve);
        let warn_at = match rule {
            LineRule::Seed => warn_at(at),
            LineRule::Scaled => scaled_warn_at(at, window),
        };
        Thresholds {
            window,
            headroom,
            at,
            warn_at,
        }
    }
}

/// What the due check needs to know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DueInput {
    pub enabled: bool,
    pub writing_turn: bool,
    pub ctx: u64,
    pub at: u64,
    pub has_session_id: bool,
}

/// The handoff is due when `enabled && !writing_turn && ctx >= at && session has an id`.
pub(crate) fn handoff_due(i: DueInput) -> bool {
    i.enabled && !i.writing_turn && i.ctx >= i.at && i.has_session_id
}

/// True when the name holds `1m` as a standalone token (`[1m]`, `-1m`, `1m`), not inside `21m` or `1mb`.
fn has_1m_token(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    let bytes = lower.as_bytes();
    let alnum = |i: Option<usize>| {
        i.and_then(|i| bytes.get(i))
            .is_some_and(u8::is_ascii_alphanumeric)
    };
    lower
        .match_indices("1m")
        .any(|(start, _)| !alnum(start.checked_sub(1)) && !alnum(Some(start + 2)))
}

/// Where a window guessed from the model name comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WindowGuess {
    /// A standalone `1m` token (`[1m]`, `-1m`): 1,000,000.
    Marker1m,
    /// A well-known family with the window its API accepts without opt-in.
    Table(Family),
    /// Unknown, but `haiku` is in the name: 200,000.
    Haiku,
    /// Unknown: 1,000,000.
    Unknown,
}

impl WindowGuess {
    pub fn window(self) -> u64 {
        match self {
            WindowGuess::Marker1m | WindowGuess::Unknown => 1_000_000,
            WindowGuess::Table(f) => f.window,
            WindowGuess::Haiku => 200_000,
        }
    }
}

/// The window guessed from the model name, with its reason: `1m` first, then the table of well-known families,
/// then `haiku`, else 1,000,000.
pub(crate) fn window_guess(model: &str) -> WindowGuess {
    if has_1m_token(model) {
        WindowGuess::Marker1m
    } else if let Some(f) = known_windows::family(model) {
        WindowGuess::Table(f)
    } else if model.to_ascii_lowercase().contains("haiku") {
        WindowGuess::Haiku
    } else {
        WindowGuess::Unknown
    }
}

/// The window guessed from the model name.
pub fn default_window(model: &str) -> u64 {
    window_guess(model).window()
}

/// The model name `default_window` looks at: the effective model, else `ANTHROPIC_MODEL`, else
/// `ANTHROPIC_DEFAULT_OPUS_MODEL`.
pub(crate) fn window_model_name<'a>(
    effective: Option<&'a str>,
    anthropic_model: Option<&'a str>,
    default_opus: Option<&'a str>,
) -> &'a str {
    effective
        .filter(|s| !s.is_empty())
        .or(anthropic_model.filter(|s| !s.is_empty()))
        .or(default_opus.filter(|s| !s.is_empty()))
        .unwrap_or("")
}

/// Where the window in force came from (`-v` and `/window` say it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowSource {
    /// `--window` (or the `window` config key): it beats a learned window.
    Flag,
    /// Recorded from an earlier overflow message for this model.
    Learned,
    /// Asked from the server before the first request (a local server states its own window).
    Server { kind: ServerKind },
    /// The guess from the model's name ([`default_window`]): a family of the model table.
    ModelTable(Family),
    /// The guess from the model's name: a standalone `1m` token (`[1m]`, `-1m`).
    Marker1m,
    /// The guess from the model's name, for a name the table does not know ([`default_window`]).
    ModelName,
    /// The demo model's fixed window.
    Demo,
    /// `/window N` during the run (front ends label it; a learned window may still replace it).
    Command,
}

impl WindowSource {
    /// A window the user set: a learned one is recorded for later runs but does not replace it.
    pub fn is_pinned(self) -> bool {
        self == WindowSource::Flag
    }

    /// For `-v`.
    pub fn describe(self) -> &'static str {
        match self {
            WindowSource::Flag => "--window",
            WindowSource::Learned => "learned from an overflow message",
            WindowSource::Server { kind } => kind.describe(),
            WindowSource::ModelTable(f) => f.source,
            WindowSource::Marker1m => "1m marker in the model name",
            WindowSource::ModelName => "default for the model name",
            WindowSource::Demo => "demo",
            WindowSource::Command => "/window",
        }
    }
}

impl std::fmt::Display for WindowSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.describe())
    }
}

/// On the wire as the words [`WindowSource::describe`] says.
impl serde::Serialize for WindowSource {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.describe())
    }
}

/// The window in force and where it came from: `--window` beats a learned window beats the guess
/// from the name.
pub(crate) fn effective_window(
    flag: Option<u64>,
    learned: Option<u64>,
    model: &str,
) -> (u64, WindowSource) {
    match (flag, learned) {
        (Some(w), _) => (w, WindowSource::Flag),
        (None, Some(w)) => (w, WindowSource::Learned),
        (None, None) => {
            let guess = window_guess(model);
            let source = match guess {
                WindowGuess::Table(f) => WindowSource::ModelTable(f),
                WindowGuess::Marker1m => WindowSource::Marker1m,
                WindowGuess::Haiku | WindowGuess::Unknown => WindowSource::ModelName,
            };
            (guess.window(), source)
        }
    }
}

/// A token estimate for text appended since the last response: ~4 characters a token.
pub(crate) fn estimate_tokens(chars: usize) -> u64 {
    (chars as u64).div_ceil(4)
}

/// A token count with one decimal: `130.0K`, `20.0K`, `1.2M`, `950`.
pub(crate) fn fmt_tokens(n: u64) -> String {
    if n >= 1_000_000 {
        format!("{:.1}M", n as f64 / 1_000_000.0)
    } else if n >= 1_000 {
        format!("{:.1}K", n as f64 / 1_000.0)
    } else {
        n.to_string()
    }
}

/// A window size, round where it is round: `200K`, `1M`, `40K`, `8.2K`.
pub(crate) fn fmt_window(n: u64) -> String {
    if n >= 1_000_000 && n.is_multiple_of(1_000_000) {
        format!("{}M", n / 1_000_000)
    } else if (1_000..1_000_000).contains(&n) && n.is_multiple_of(1_000) {
        format!("{}K", n / 1_000)
    } else {
        fmt_tokens(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_table() {
        // (window, headroom, max_tokens, at, warn_at): the seed's line where it leaves the
        // writing reserve free below the window.
        let table = [
            (200_000, 50_000, 16_384, 150_000, 130_000),
            (1_000_000, 50_000, 16_384, 950_000, 930_000),
            (40_000, 10_000, 4_096, 30_000, 10_000), // the demo's window
            (55_000, 50_000, 16_384, 10_000, 1_000), // 10k floor, warn floor
            (32_768, 50_000, 16_384, 10_000, 1_000), // 10k floor; 8,192 reserve: 24.6K free
            (16_384, 50_000, 16_384, 10_000, 1_000), // 10k floor; 4,096 reserve: 12.3K free
            (25_000, 5_000, 1_024, 20_000, 1_000),
        ];
        for (w, h, out, at, warn) in table {
            let t = Thresholds::with_output(w, h, out);
            assert_eq!((t.at, t.warn_at), (at, warn), "window {w} headroom {h}");
        }
        assert_eq!(
            Thresholds::new(200_000, 50_000),
            Thresholds::with_output(200_000, 50_000, DEFAULT_OUTPUT_CAP)
        );
    }

    /// Small windows, default headroom and output cap. The seed's line (10,000) is at or above
    /// `W - reserve` here, so a pressure handoff could never write its document before the
    /// window: the headroom becomes the reserve (a quarter of the window: the writing request's
    /// output cap) plus an eighth of the window (the writing prompt, ~750 tokens, and the step
    /// that crossed the line). At 8K that is a line at 5.1K: the writing request then holds at
    /// most about 5.1K of history + 0.75K of prompt + 2K of document, under 8.2K; the main
    /// thread works on until 6.1K (the hard limit, `W - reserve`). The warning comes an eighth of
    /// the window before the line, above a lean session's floor.
    #[test]
    fn small_windows_scale_the_headroom() {
        // (window, at, warn_at, output cap, rule)
        let table: [(u64, u64, u64, u64, LineRule); 9] = [
            (4_096, 2_560, 2_048, 1_024, LineRule::Scaled),
            (8_192, 5_120, 4_096, 2_048, LineRule::Scaled),
            (10_000, 6_250, 5_000, 2_500, LineRule::Scaled),
            (12_000, 7_500, 6_000, 3_000, LineRule::Scaled),
            (13_333, 8_334, 6_668, 3_333, LineRule::Scaled),
            (13_334, 10_000, 1_000, 3_333, LineRule::Seed), // 10,000 < 13,334 - 3,333
            (16_384, 10_000, 1_000, 4_096, LineRule::Seed),
            (32_768, 10_000, 1_000, 8_192, LineRule::Seed),
            (65_536, 15_536, 1_000, 16_384, LineRule::Seed),
        ];
        for (w, at, warn, cap, rule) in table {
            let t = Thresholds::with_output(w, DEFAULT_HEADROOM, DEFAULT_OUTPUT_CAP);
            let reserve = u64::from(output_cap(w, DEFAULT_OUTPUT_CAP));
            assert_eq!(
                (
                    t.at,
                    t.warn_at,
                    reserve,
                    handoff_line(w, DEFAULT_HEADROOM, reserve).1
                ),
                (at, warn, cap, rule),
                "window {w}"
            );
            // The point of it: the document has the reserve free below the window, and the
            // warning comes before the line.
            assert!(t.at + reserve <= w, "window {w}");
            assert!(t.warn_at < t.at, "window {w}");
        }
    }

    #[test]
    fn a_headroom_smaller_than_the_reserve_is_scaled_too() {
        // 195,000 would leave 5,000 free for a 16,384-token document.
        let t = Thresholds::with_output(200_000, 5_000, 16_384);
        assert_eq!((t.at, t.warn_at), (175_424, 155_424));
        // A smaller output cap needs less room: the seed's line holds.
        let t = Thresholds::with_output(200_000, 5_000, 4_000);
        assert_eq!(t.at, 195_000);
        // No headroom at all.
        let t = Thresholds::with_output(40_000, 0, 16_384);
        assert_eq!(t.at, 25_000);
    }

    #[test]
    fn the_output_cap_follows_the_window() {
        let table = [
            (200_000, 16_384, 16_384),
            (32_768, 16_384, 8_192),
            (8_192, 16_384, 2_048),
            (8_192, 1_000, 1_000),
            (100, 16_384, 256),
            (100, 100, 100),
        ];
        for (w, configured, cap) in table {
            assert_eq!(output_cap(w, configured), cap, "window {w}");
        }
    }

    #[test]
    fn a_floor_over_a_third_of_the_window_is_warned_about() {
        // (floor, window, warned)
        let table = [
            (2_700, 8_192, false),
            (2_731, 8_192, true),
            (4_000, 8_192, true),
            (3_000, 200_000, false),
            (1, 0, false),
        ];
        for (floor, w, warned) in table {
            let got = floor_warning(floor, w, false);
            assert_eq!(got.is_some(), warned, "floor {floor} window {w}: {got:?}");
        }
        let text = floor_warning(4_000, 8_192, false).unwrap_or_default();
        assert!(
            text.contains("4.0K") && text.contains("8.2K") && text.contains("48%"),
            "{text}"
        );
        assert!(text.contains("--lean"), "{text}");
        let lean = floor_warning(4_000, 8_192, true).unwrap_or_default();
        assert!(
            !lean.contains("--lean") && lean.contains("AGENTS.md"),
            "{lean}"
        );
    }

    #[test]
    fn due_table() {
        let base = DueInput {
            enabled: true,
            writing_turn: false,
            ctx: 150_000,
            at: 150_000,
            has_session_id: true,
        };
        assert!(handoff_due(base));
        assert!(!handoff_due(DueInput {
            ctx: 149_999,
            ..base
        }));
        assert!(!handoff_due(DueInput {
            enabled: false,
            ..base
        }));
        assert!(
            !handoff_due(DueInput {
                writing_turn: true,
                ..base
            }),
            "the writing turn is exempt"
        );
        assert!(!handoff_due(DueInput {
            has_session_id: false,
            ..base
        }));
        // The 10k floor: a window of 20K still hands off at 10k, not at 0.
        let at = handoff_at(20_000, 50_000, DEFAULT_OUTPUT_CAP);
        assert!(!handoff_due(DueInput {
            ctx: 9_999,
            at,
            ..base
        }));
        assert!(handoff_due(DueInput {
            ctx: 10_000,
            at,
            ..base
        }));
    }

    #[test]
    fn default_window_by_name() {
        assert_eq!(default_window("claude-haiku-4-5"), 200_000);
        assert_eq!(default_window("claude-haiku[1m]"), 1_000_000);
        assert_eq!(default_window("claude-sonnet-4-5-1m"), 1_000_000);
        // Claude on the Anthropic API: 200,000 unless the 1M beta is asked for with `[1m]`.
        assert_eq!(default_window("claude-opus-4-1"), 200_000);
        assert_eq!(default_window("claude-sonnet-4-5"), 200_000);
        assert_eq!(default_window("claude-sonnet-4-5[1m]"), 1_000_000);
        assert_eq!(default_window("gpt-4o"), 128_000);
        assert_eq!(default_window("some-local-model"), 1_000_000);
        assert_eq!(
            effective_window(None, None, "claude-sonnet-4-5")
                .1
                .describe(),
            "model table: Claude on the Anthropic API"
        );
        assert_eq!(
            effective_window(None, None, "x[1m]").1,
            WindowSource::Marker1m
        );
        assert_eq!(
            effective_window(None, None, "x").1.describe(),
            "default for the model name"
        );
        assert_eq!(
            default_window("haiku-21m"),
            200_000,
            "21m is not a 1m token"
        );
        assert_eq!(default_window("HAIKU"), 200_000);
        assert_eq!(default_window(""), 1_000_000);
    }

    #[test]
    fn window_precedence() {
        assert_eq!(
            effective_window(Some(1), Some(2), "haiku"),
            (1, WindowSource::Flag)
        );
        assert_eq!(
            effective_window(None, Some(2), "haiku"),
            (2, WindowSource::Learned)
        );
        assert_eq!(
            effective_window(None, None, "haiku"),
            (200_000, WindowSource::ModelName)
        );
        assert!(WindowSource::Flag.is_pinned() && !WindowSource::Learned.is_pinned());
        let server = WindowSource::Server {
            kind: ServerKind::LlamaCpp,
        };
        assert!(!server.is_pinned());
        assert_eq!(server.describe(), "the server (llama.cpp /props)");
        assert_eq!(window_model_name(None, Some("a"), Some("b")), "a");
        assert_eq!(window_model_name(Some(""), None, Some("b")), "b");
    }

    #[test]
    fn token_format() {
        assert_eq!(fmt_tokens(130_000), "130.0K");
        assert_eq!(fmt_tokens(20_000), "20.0K");
        assert_eq!(fmt_tokens(1_500), "1.5K");
        assert_eq!(fmt_tokens(1_250_000), "1.2M");
        assert_eq!(fmt_tokens(999), "999");
        assert_eq!(fmt_window(200_000), "200K");
        assert_eq!(fmt_window(1_000_000), "1M");
        assert_eq!(fmt_window(8_192), "8.2K");
    }
}
