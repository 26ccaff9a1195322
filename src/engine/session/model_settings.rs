//! The model settings in force ([`ModelSettings`]) and what changes them: `/model` (the window
//! follows the model unless `--window` pinned it, or the demo's is in force), `/effort`, and a
//! window stated by an overflow message (learned for the model from then on; recorded for later
//! runs only while `--window` is in force). Also the output cap a window allows and the
//! thresholds that keep it free, and the line the ledger keeps of each change.

use std::path::Path;

use super::params::ModelSettings;
use crate::engine::context::{self, Thresholds};
use crate::engine::learned_windows::LearnedWindows;
use crate::engine::ledger::{SettingChange, now_stamp};
use crate::engine::policy::Mode;
use crate::engine::protocol::Event;

/// What became of a window an overflow message stated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum WindowLesson {
    /// `--window` beats it: recorded for later runs only; the warning says so.
    Pinned { warning: String },
    /// The model's window from now on; `unrecorded`: why later runs will not know it.
    Learned {
        unrecorded: Option<String>,
        notice: String,
    },
}

impl ModelSettings {
    /// The model, effort and window in force, for the front end.
    pub(super) fn event(&self) -> Event {
        Event::Model {
            model: self.model.clone(),
            effort: self.effort,
            thresholds: self.thresholds,
            window_source: self.window_source,
        }
    }

    /// The output cap (`max_tokens`) requests ask for in the window in force, of the
    /// `configured` one.
    pub(super) fn output_cap(&self, configured: u32) -> u32 {
        context::output_cap(self.thresholds.window, configured)
    }

    /// The thresholds of `window` with these settings' headroom and the `configured` output cap.
    pub(super) fn thresholds_for(&self, window: u64, configured: u32) -> Thresholds {
        Thresholds::with_output(window, self.thresholds.headroom, configured)
    }

    /// The ledger's line for these settings in `generation`, in `mode`.
    pub(super) fn change(&self, generation: u32, mode: Mode) -> SettingChange {
        SettingChange {
            time: now_stamp(),
            generation,
            model: self.model.clone(),
            effort: self.effort,
            window: self.thresholds.window,
            mode,
        }
    }

    /// `/model NAME`: the next request goes to `model`; the window follows it (as learned in
    /// `data_dir`) unless `--window` pinned it or the `demo`'s is in force.
    pub(super) fn switch_model(
        &mut self,
        model: &str,
        data_dir: &Path,
        demo: bool,
        configured: u32,
    ) {
        self.model = model.to_string();
        if !self.window_source.is_pinned() && !demo {
            let learned = LearnedWindows::in_data_dir(data_dir).get(model);
            let (window, source) = context::effective_window(None, learned, model);
            self.thresholds = self.thresholds_for(window, configured);
            self.window_source = source;
        }
    }

    /// A window of `limit` tokens stated by an overflow message, recorded in `data_dir` for the
    /// model; None when it is the window in force or too small to be one.
    pub(super) fn learn_window(
        &mut self,
        limit: u64,
        data_dir: &Path,
        configured: u32,
    ) -> Option<WindowLesson> {
        if limit == self.thresholds.window || limit < 1_000 {
            return None;
        }
        let learned = LearnedWindows::in_data_dir(data_dir);
        if self.window_source.is_pinned() {
            // `--window` beats a learned window: record it for later runs only.
            let _ = learned.record(&self.model, limit);
            return Some(WindowLesson::Pinned {
                warning: format!(
                    "the provider says {} holds {limit} tokens, but --window {} is in force",
                    self.model, self.thresholds.window
                ),
            });
        }
        let unrecorded = learned
            .record(&self.model, limit)
            .err()
            .map(|err| format!("could not record the learned window: {err}"));
        self.thresholds = self.thresholds_for(limit, configured);
        let notice = format!(
            "the provider says {} holds {} tokens: using that window from now on (recorded in {})",
            self.model,
            limit,
            learned.path().display()
        );
        Some(WindowLesson::Learned { unrecorded, notice })
    }
}
