//! Context accounting and the handoff thresholds — pure functions.

pub(crate) mod strategy;

use super::provider::known_windows::{self, Family};

/// The headroom kept below the window when none is configured.
pub(crate) const DEFAULT_HEADROOM: u64 = 50_000;
/// The handoff line never drops below this.
pub(crate) const MIN_AT: u64 = 10_000;
/// The approach warning never drops below this.
pub(crate) const MIN_WARN_AT: u64 = 1_000;
/// The warning comes this many tokens before the handoff line.
pub(crate) const WARN_BEFORE: u64 = 20_000;

/// The handoff line: `max(10_000, W - H)`.
pub(crate) fn handoff_at(window: u64, headroom: u64) -> u64 {
    MIN_AT.max(window.saturating_sub(headroom))
}

/// The approach warning: `max(1_000, at - 20_000)`.
pub fn warn_at(at: u64) -> u64 {
    MIN_WARN_AT.max(at.saturating_sub(WARN_BEFORE))
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
    pub fn new(window: u64, headroom: u64) -> Self {
        let at = handoff_at(window, headroom);
        Thresholds {
            window,
            headroom,
            at,
            warn_at: warn_at(at),
        }
    }

    /// A warning when the handoff line (10k floor) is at or above the window itself: the session
    /// would hit the window before a handoff is ever due.
    pub fn line_warning(&self) -> Option<String> {
        (self.at >= self.window).then(|| {
            format!(
                "the handoff line ({}) is at or above the window ({}): the context would hit \
                 the window before a handoff is due. Raise --window (the line never drops below \
                 {}) or lower --headroom",
                fmt_tokens(self.at),
                fmt_window(self.window),
                fmt_tokens(MIN_AT)
            )
        })
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
    /// The guess from the model's name ([`default_window`]): a family of the model table.
    ModelTable(Family),
    /// The guess from the model's name: a standalone `1m` token (`[1m]`, `-1m`).
    Marker1m,
    /// The guess from the model's name, for a name the table does not know ([`default_window`]).
    ModelName,
    /// The demo model's fixed window.
    Demo,
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
            WindowSource::ModelTable(f) => f.source,
            WindowSource::Marker1m => "1m marker in the model name",
            WindowSource::ModelName => "default for the model name",
            WindowSource::Demo => "demo",
        }
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
        // (window, headroom, at, warn_at)
        let table = [
            (200_000, 50_000, 150_000, 130_000),
            (1_000_000, 50_000, 950_000, 930_000),
            (40_000, 10_000, 30_000, 10_000),
            (55_000, 50_000, 10_000, 1_000), // 10k floor, warn floor
            (8_000, 50_000, 10_000, 1_000),  // window below headroom
            (25_000, 5_000, 20_000, 1_000),
        ];
        for (w, h, at, warn) in table {
            let t = Thresholds::new(w, h);
            assert_eq!((t.at, t.warn_at), (at, warn), "window {w} headroom {h}");
        }
    }

    #[test]
    fn a_line_at_or_above_the_window_is_warned_about() {
        // (window, headroom, warned)
        let table = [
            (200_000, 50_000, false),
            (10_001, 50_000, false), // the floor, just below the window
            (10_000, 50_000, true),  // the floor is the window
            (8_000, 50_000, true),   // the floor is above the window
            (40_000, 0, true),       // no headroom: the line is the window
        ];
        for (w, h, warned) in table {
            let got = Thresholds::new(w, h).line_warning();
            assert_eq!(got.is_some(), warned, "window {w} headroom {h}: {got:?}");
        }
        let text = Thresholds::new(8_000, 50_000)
            .line_warning()
            .unwrap_or_default();
        assert!(
            text.contains("10.0K") && text.contains("8K") && text.contains("--window"),
            "{text}"
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
        // The 10k floor: a tiny window still hands off at 10k, not at 0.
        let at = handoff_at(12_000, 50_000);
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
