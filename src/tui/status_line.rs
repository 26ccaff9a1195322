//! The figures the status line shows: the context gauge (usage, the window's thresholds, the
//! masked tokens, whether a handoff is being written) and the labels (model, provider, effort,
//! where the window came from). Session, usage and model events change them through here.

use crate::engine::context::{Thresholds, WindowSource};
use crate::engine::protocol::Effort;

use super::render::gauge::{GaugeMode, GaugeModel};

/// Labels for the status line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Labels {
    /// The model name.
    pub(crate) model: String,
    /// The provider label.
    pub(crate) provider: String,
    /// The built-in demo model runs.
    pub(crate) demo: bool,
    /// Where the context window came from (`-v` says the same), for `/window`.
    pub(crate) window_source: WindowSource,
    /// The reasoning effort in force (`--effort`, `/effort`).
    pub(crate) effort: Option<Effort>,
}

/// The gauge, the thresholds it is drawn against, and the labels.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StatusLine {
    /// The context gauge.
    gauge: GaugeModel,
    /// The thresholds of the window in force.
    thresholds: Thresholds,
    /// The labels.
    labels: Labels,
}

impl StatusLine {
    /// An empty gauge against `thresholds`, with `labels`.
    pub(crate) fn new(thresholds: Thresholds, labels: Labels) -> Self {
        StatusLine {
            gauge: GaugeModel {
                context: 0,
                window: thresholds.window,
                at: thresholds.at,
                warn_at: thresholds.warn_at,
                estimated: false,
                mode: GaugeMode::Normal,
                masked: 0,
            },
            thresholds,
            labels,
        }
    }

    /// The gauge, to draw.
    pub(crate) fn gauge(&self) -> &GaugeModel {
        &self.gauge
    }

    /// The labels.
    pub(crate) fn labels(&self) -> &Labels {
        &self.labels
    }

    /// The thresholds of the window in force.
    pub(crate) fn thresholds(&self) -> Thresholds {
        self.thresholds
    }

    /// The model as the status line names it: with its effort, when one is set.
    pub(crate) fn model_label(&self) -> String {
        match self.labels.effort {
            Some(e) => format!("{} · {}", self.labels.model, e.as_str()),
            None => self.labels.model.clone(),
        }
    }

    /// The thresholds of a (possibly new) window; the gauge keeps in step.
    fn set_thresholds(&mut self, t: Thresholds) {
        self.thresholds = t;
        self.gauge.window = t.window;
        self.gauge.at = t.at;
        self.gauge.warn_at = t.warn_at;
    }

    /// The gauge shows a handoff being written (or not).
    pub(crate) fn set_writing(&mut self, writing: bool) {
        self.gauge.mode = if writing {
            GaugeMode::Writing
        } else {
            GaugeMode::Normal
        };
    }

    /// A session started: its model and window, and nothing used yet.
    pub(crate) fn session_started(
        &mut self,
        model: String,
        provider: String,
        demo: bool,
        thresholds: Thresholds,
    ) {
        self.labels.model = model;
        self.labels.provider = provider;
        self.labels.demo = demo;
        self.set_thresholds(thresholds);
        self.gauge.context = 0;
        self.gauge.estimated = false;
    }

    /// The context in use, and the window it is measured against.
    pub(crate) fn usage(&mut self, context: u64, thresholds: Thresholds, estimated: bool) {
        self.gauge.context = context;
        self.gauge.estimated = estimated;
        if thresholds != self.thresholds {
            self.set_thresholds(thresholds);
        }
    }

    /// Tokens masked out of the context (old tool results).
    pub(crate) fn masked(&mut self, tokens: u64) {
        self.gauge.masked = tokens;
    }

    /// The window was learned from an overflow.
    pub(crate) fn window_learned(&mut self, thresholds: Thresholds) {
        self.labels.window_source = WindowSource::Learned;
        self.set_thresholds(thresholds);
    }

    /// `/window N` asked for a window (the engine's next usage carries its thresholds).
    pub(crate) fn window_asked(&mut self) {
        self.labels.window_source = WindowSource::Command;
    }

    /// The model and effort in force now; false when they were already in force.
    pub(crate) fn model_set(
        &mut self,
        model: String,
        effort: Option<Effort>,
        thresholds: Thresholds,
        window_source: WindowSource,
    ) -> bool {
        let changed = self.labels.model != model || self.labels.effort != effort;
        self.labels.model = model;
        self.labels.effort = effort;
        self.labels.window_source = window_source;
        self.set_thresholds(thresholds);
        changed
    }
}
