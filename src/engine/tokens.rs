//! Token estimates calibrated per model. Between two responses the engine counts what it appends in
//! characters and estimates the tokens; a fixed 4 characters a token is right for English prose
//! on the big hosted models and wrong by a factor of two or more for code, JSON and other
//! tokenizers (a message estimated at 6.5K tokens was counted as 15.2K by a local server). So
//! the ratio is learned: every main-thread response reports how many prompt tokens the provider
//! counted for the characters sent, and a server with a tokenizer endpoint counts a sample text
//! exactly at start. Each count moves the ratio part of the way (a smoothed average); counts too
//! small to say much, or implausible ones, are ignored. The ratio is kept per model in
//! `<data_dir>/tokens.json`, beside the learned windows, so the next run starts calibrated.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::fsutil::atomic_write_unsynced;

/// Characters a token before anything was learned.
pub const DEFAULT_CHARS_PER_TOKEN: f64 = 4.0;
/// A count of fewer tokens than this teaches nothing (a chat template's own tokens dominate it).
pub const MIN_SAMPLE_TOKENS: u64 = 200;
/// Ratios outside this range are not a tokenizer's (a provider reporting made-up usage).
const PLAUSIBLE: std::ops::RangeInclusive<f64> = 1.0..=8.0;
/// How far one count moves the ratio.
const WEIGHT: f64 = 0.3;
/// The store is rewritten when the ratio moved by more than this fraction since it was saved.
const SAVE_CHANGE: f64 = 0.02;

/// A model's characters-per-token ratio and how many counts it was learned from.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Ratio {
    pub chars_per_token: f64,
    pub samples: u32,
}

impl Default for Ratio {
    fn default() -> Self {
        Ratio {
            chars_per_token: DEFAULT_CHARS_PER_TOKEN,
            samples: 0,
        }
    }
}

impl Ratio {
    /// The tokens of `chars` characters (rounded up).
    pub fn estimate(&self, chars: usize) -> u64 {
        let ratio = if PLAUSIBLE.contains(&self.chars_per_token) {
            self.chars_per_token
        } else {
            DEFAULT_CHARS_PER_TOKEN
        };
        (chars as f64 / ratio).ceil() as u64
    }

    /// Learn from a count: `tokens` for `chars` characters. The first count replaces the
    /// default; later ones move the ratio by [`WEIGHT`]. Returns whether the count was used.
    pub fn observe(&mut self, chars: usize, tokens: u64) -> bool {
        if tokens < MIN_SAMPLE_TOKENS {
            return false;
        }
        let seen = chars as f64 / tokens as f64;
        if !PLAUSIBLE.contains(&seen) {
            return false;
        }
        self.chars_per_token = if self.samples == 0 {
            seen
        } else {
            (1.0 - WEIGHT) * self.chars_per_token + WEIGHT * seen
        };
        self.samples = self.samples.saturating_add(1);
        true
    }
}

/// The ratio store of a data dir (`<data_dir>/flower`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenRatios {
    path: PathBuf,
}

impl TokenRatios {
    /// The store under `data_dir`.
    pub fn in_data_dir(data_dir: &Path) -> Self {
        TokenRatios {
            path: data_dir.join("tokens.json"),
        }
    }

    /// `<data_dir>/tokens.json`.
    #[cfg(test)]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The ratio learned for `model`, if any (a missing or unreadable store knows none).
    pub fn get(&self, model: &str) -> Option<Ratio> {
        self.load()
            .get(model)
            .copied()
            .filter(|r| PLAUSIBLE.contains(&r.chars_per_token))
    }

    /// Record `ratio` for `model` (other models' entries are kept).
    pub fn record(&self, model: &str, ratio: Ratio) -> io::Result<()> {
        let mut map = self.load();
        map.insert(model.to_string(), ratio);
        let json = serde_json::to_vec_pretty(&map).map_err(io::Error::other)?;
        atomic_write_unsynced(&self.path, &json)
    }

    fn load(&self) -> BTreeMap<String, Ratio> {
        std::fs::read_to_string(&self.path)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default()
    }
}

/// The estimator of one model: its learned ratio, which counts keep learning and the store keeps.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimator {
    store: TokenRatios,
    model: String,
    ratio: Ratio,
    /// The ratio as last saved.
    saved: f64,
}

impl Estimator {
    /// The estimator of `model`, starting from what the store knows.
    pub fn load(data_dir: &Path, model: &str) -> Estimator {
        let store = TokenRatios::in_data_dir(data_dir);
        let ratio = store.get(model).unwrap_or_default();
        Estimator {
            store,
            model: model.to_string(),
            saved: ratio.chars_per_token,
            ratio,
        }
    }

    /// The tokens of `chars` characters.
    pub fn estimate(&self, chars: usize) -> u64 {
        self.ratio.estimate(chars)
    }

    /// The ratio in use.
    #[cfg(test)]
    pub fn ratio(&self) -> Ratio {
        self.ratio
    }

    /// Learn from a count; the store is rewritten when the ratio moved noticeably (or on the
    /// first count). Returns whether the count was used; a store that cannot be written is an
    /// error, the ratio is learned anyway.
    pub fn observe(&mut self, chars: usize, tokens: u64) -> io::Result<bool> {
        let first = self.ratio.samples == 0;
        if !self.ratio.observe(chars, tokens) {
            return Ok(false);
        }
        let moved = (self.ratio.chars_per_token - self.saved).abs() > SAVE_CHANGE * self.saved;
        if first || moved {
            self.saved = self.ratio.chars_per_token;
            self.store.record(&self.model, self.ratio)?;
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_is_four_characters_a_token() {
        let r = Ratio::default();
        assert_eq!(r.estimate(0), 0);
        assert_eq!(r.estimate(1), 1);
        assert_eq!(r.estimate(4_000), 1_000);
        assert_eq!(r.estimate(4_001), 1_001);
        assert_eq!(
            r.estimate(4_001),
            crate::engine::context::estimate_tokens(4_001)
        );
    }

    #[test]
    fn counts_move_the_ratio_and_noise_is_ignored() {
        let mut r = Ratio::default();
        // (chars, tokens, used, ratio after)
        let table = [
            (1_000, 100, false, 4.0),     // too small to say
            (100_000, 1_000, false, 4.0), // 100 a token: no tokenizer does that
            (500, 1_000, false, 4.0),     // half a character a token: neither
            (26_000, 10_000, true, 2.6),  // the first count replaces the default
            (30_000, 10_000, true, 2.72), // then 30% of the way to 3.0
        ];
        for (chars, tokens, used, after) in table {
            assert_eq!(r.observe(chars, tokens), used, "{chars}/{tokens}");
            assert!(
                (r.chars_per_token - after).abs() < 1e-9,
                "{chars}/{tokens}: {}",
                r.chars_per_token
            );
        }
        assert_eq!(r.samples, 2);
        // A message of 15,200 tokens at 2.72 characters a token is estimated near its count, where
        // four characters a token said 10,336.
        assert!(
            r.estimate(41_344).abs_diff(15_200) <= 1,
            "{}",
            r.estimate(41_344)
        );
        assert_eq!(Ratio::default().estimate(41_344), 10_336);
    }

    #[test]
    fn the_store_keeps_a_ratio_per_model_and_survives_a_broken_file() {
        let dir = tempfile::tempdir().unwrap();
        let store = TokenRatios::in_data_dir(dir.path());
        assert_eq!(store.path(), dir.path().join("tokens.json"));
        assert_eq!(store.get("m"), None);
        let mut e = Estimator::load(dir.path(), "m");
        assert!(e.observe(30_000, 10_000).unwrap());
        assert_eq!(store.get("m").map(|r| r.samples), Some(1));
        // A small move is not written; a large one is.
        assert!(e.observe(30_300, 10_000).unwrap());
        assert_eq!(store.get("m").map(|r| r.samples), Some(1));
        assert!(e.observe(20_000, 10_000).unwrap());
        let saved = store.get("m").unwrap();
        assert_eq!(saved.samples, 3);
        assert!((saved.chars_per_token - e.ratio().chars_per_token).abs() < 1e-9);
        // Another model is apart, and a new estimator starts where the store is.
        assert_eq!(store.get("n"), None);
        assert_eq!(Estimator::load(dir.path(), "m").ratio(), saved);
        assert_eq!(Estimator::load(dir.path(), "n").ratio(), Ratio::default());
        std::fs::write(store.path(), "{not json").unwrap();
        assert_eq!(store.get("m"), None, "a broken store knows nothing");
        std::fs::write(
            store.path(),
            r#"{"m": {"chars_per_token": 0.01, "samples": 9}}"#,
        )
        .unwrap();
        assert_eq!(store.get("m"), None, "an implausible ratio is not used");
    }

    #[test]
    fn an_unwritable_store_still_learns() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("file");
        std::fs::write(&file, "x").unwrap();
        // The data dir is a file: the store cannot be written.
        let mut e = Estimator::load(&file, "m");
        assert!(e.observe(30_000, 10_000).is_err());
        assert!((e.ratio().chars_per_token - 3.0).abs() < 1e-9);
    }
}
