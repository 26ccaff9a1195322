//! The context gauge: a bar of `ctx / W` with ticks at `warn_at`, `at` and `W`, coloured by
//! zone, and a label such as `130.0K/200K · 20.0K to handoff`. While masking keeps old tool
//! output out of the requests, the widest label says how much: `… · 48.2K masked`.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::theme::Theme;
use super::wrap::str_width;
use crate::engine::context::{fmt_tokens, fmt_window};

/// What the gauge is showing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum GaugeMode {
    /// Context accounting as usual.
    #[default]
    Normal,
    /// The handoff document is being written.
    Writing,
}

/// The numbers behind the gauge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct GaugeModel {
    /// Tokens in context now.
    pub(crate) context: u64,
    /// The window `W` (hard limit).
    pub(crate) window: u64,
    /// The handoff line.
    pub(crate) at: u64,
    /// The approach warning.
    pub(crate) warn_at: u64,
    /// True when `context` is an estimate (shown with `~`).
    pub(crate) estimated: bool,
    /// Normal or writing a handoff.
    pub(crate) mode: GaugeMode,
    /// Tokens that masking old tool output kept out of the last request (0: none, not shown).
    pub(crate) masked: u64,
}

/// The gauge's colour zone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Zone {
    /// Below `warn_at`.
    Ok,
    /// From `warn_at` to `at`.
    Warn,
    /// From `at` to `W`.
    Due,
    /// At or over `W`.
    Over,
}

/// A bar narrower than this gives up its label (or shortens it) first.
const MIN_BAR: usize = 10;

impl GaugeModel {
    /// The zone `context` is in.
    pub(crate) fn zone(&self) -> Zone {
        if self.window > 0 && self.context >= self.window {
            Zone::Over
        } else if self.context >= self.at {
            Zone::Due
        } else if self.context >= self.warn_at {
            Zone::Warn
        } else {
            Zone::Ok
        }
    }

    fn zone_style(&self, theme: &Theme) -> Style {
        match self.zone() {
            Zone::Ok => theme.gauge_ok,
            Zone::Warn => theme.gauge_warn,
            Zone::Due => theme.gauge_due,
            Zone::Over => theme.gauge_over,
        }
    }

    fn tilde(&self) -> &'static str {
        if self.estimated { "~" } else { "" }
    }

    /// `130.0K/200K` (with `~` when estimated).
    fn amount(&self) -> String {
        format!(
            "{}{}/{}",
            self.tilde(),
            fmt_tokens(self.context),
            fmt_window(self.window)
        )
    }

    /// The label's tail: long (`20.0K to handoff`) or short (`20.0K left`).
    fn suffix(&self, long: bool) -> String {
        match (self.mode, self.zone(), long) {
            (GaugeMode::Writing, _, true) => "writing handoff…".into(),
            (GaugeMode::Writing, _, false) => "writing…".into(),
            (_, Zone::Over, true) => "over the window".into(),
            (_, Zone::Over, false) => "over".into(),
            (_, Zone::Due, true) => "handoff due".into(),
            (_, Zone::Due, false) => "due".into(),
            (_, _, long) => {
                let left = fmt_tokens(self.at.saturating_sub(self.context));
                let what = if long { "to handoff" } else { "left" };
                format!("{}{left} {what}", self.tilde())
            }
        }
    }

    /// The fraction of the window in use, 0.0–1.0.
    fn fraction(&self, v: u64) -> f64 {
        if self.window == 0 {
            return if v > 0 { 1.0 } else { 0.0 };
        }
        (v as f64 / self.window as f64).clamp(0.0, 1.0)
    }

    /// Label variants, longest first: (amount part, suffix part, columns reserved for it). The
    /// reservation fits any context at this window, so the bar keeps its length (and its ticks their
    /// columns) while the numbers change.
    fn variants(&self) -> Vec<(String, Option<String>, usize)> {
        let pct = (self.fraction(self.context) * 100.0).round() as u64;
        // `~999.9K/` + the window: the widest amount fmt_tokens can produce.
        let amount_w = 8 + str_width(&fmt_window(self.window));
        let reserve = |amount: &str, suffix: Option<&String>, suffix_w: usize| {
            let actual = str_width(&joined(amount, suffix.map(String::as_str)));
            let template = amount_w + if suffix.is_some() { 3 + suffix_w } else { 0 };
            actual.max(template)
        };
        let (amount, long, short) = (self.amount(), self.suffix(true), self.suffix(false));
        let pct_label = format!("{}{pct}%", self.tilde());
        let mut variants = Vec::with_capacity(5);
        if self.masked > 0 {
            // `· 999.9K masked` beside the long suffix: 3 + 13 columns more.
            let with_masked = format!("{long} · {} masked", fmt_tokens(self.masked));
            let reserved = reserve(&amount, Some(&with_masked), 18 + 3 + 13);
            variants.push((amount.clone(), Some(with_masked), reserved));
        }
        variants.extend([
            (
                amount.clone(),
                Some(long.clone()),
                reserve(&amount, Some(&long), 18),
            ),
            (
                amount.clone(),
                Some(short.clone()),
                reserve(&amount, Some(&short), 12),
            ),
            (amount.clone(), None, reserve(&amount, None, 0)),
            (pct_label.clone(), None, str_width(&pct_label).max(5)),
        ]);
        variants
    }
}

fn joined(amount: &str, suffix: Option<&str>) -> String {
    match suffix {
        Some(s) => format!("{amount} · {s}"),
        None => amount.to_string(),
    }
}

/// The full label, e.g. `130.0K/200K · 20.0K to handoff`, `~131.2K/200K · handoff due`,
/// `152.0K/200K · writing handoff…`.
#[cfg(test)]
pub(crate) fn gauge_label(g: &GaugeModel) -> String {
    let (amount, suffix, _) = g.variants().swap_remove(0);
    joined(&amount, suffix.as_deref())
}

/// The longest label variant at most `width` columns wide (empty if none fits).
#[cfg(test)]
pub(crate) fn gauge_label_fit(g: &GaugeModel, width: usize) -> String {
    g.variants()
        .into_iter()
        .map(|(a, s, _)| joined(&a, s.as_deref()))
        .find(|l| str_width(l) <= width)
        .unwrap_or_default()
}

/// The width the gauge needs to show its full label (`long`) or its short label beside a usable bar.
pub(crate) fn gauge_min_width(g: &GaugeModel, long: bool) -> usize {
    let variants = g.variants();
    let skip = usize::from(g.masked > 0) + usize::from(!long);
    let reserved = variants.get(skip).map_or(0, |v| v.2);
    reserved + 1 + MIN_BAR
}

/// Draws the gauge on the first row of `area`: the bar, then the label (shortened, then dropped, as
/// the width shrinks).
pub(crate) fn render_gauge(g: &GaugeModel, area: Rect, buf: &mut Buffer, theme: &Theme) {
    let area = area.intersection(buf.area);
    if area.is_empty() {
        return;
    }
    let w = usize::from(area.width);
    let label = g
        .variants()
        .into_iter()
        .find(|(_, _, r)| r + 1 + MIN_BAR <= w);
    let label_w = label.as_ref().map_or(0, |(_, _, r)| r + 1);
    let bar_w = w - label_w;
    draw_bar(g, area.x, area.y, bar_w, buf, theme);
    if let Some((amount, suffix, _)) = label {
        let zone = g.zone_style(theme);
        let suffix_style = match (g.mode, g.zone()) {
            (GaugeMode::Writing, _) => theme.accent,
            (_, Zone::Ok) => theme.dim,
            _ => zone,
        };
        let mut spans = vec![Span::styled(amount, theme.text)];
        if let Some(s) = suffix {
            spans.push(Span::styled(" · ", theme.dim));
            spans.push(Span::styled(s, suffix_style));
        }
        let x = area.x + bar_w as u16 + 1;
        buf.set_line(x, area.y, &Line::from(spans), (label_w - 1) as u16);
    }
}

const EIGHTHS: [&str; 8] = [" ", "▏", "▎", "▍", "▌", "▋", "▊", "▉"];

fn draw_bar(g: &GaugeModel, x: u16, y: u16, n: usize, buf: &mut Buffer, theme: &Theme) {
    if n == 0 {
        return;
    }
    let fill = g.zone_style(theme);
    let eighths = (g.fraction(g.context) * n as f64 * 8.0).round() as usize;
    let (full, rem) = (eighths / 8, eighths % 8);
    for i in 0..n {
        let (sym, style) = if i < full {
            ("█", fill)
        } else if i == full && rem > 0 {
            (EIGHTHS.get(rem).copied().unwrap_or("█"), fill)
        } else {
            ("░", theme.gauge_empty)
        };
        if let Some(c) = buf.cell_mut((x + i as u16, y)) {
            c.set_symbol(sym).set_style(style);
        }
    }
    let tick_col = |v: u64| ((g.fraction(v) * n as f64).floor() as usize).min(n - 1);
    let ticks = [
        (tick_col(g.warn_at), "│"),
        (tick_col(g.at), "┃"),
        (n - 1, "┃"),
    ];
    for (col, sym) in ticks {
        let mut style = theme.tick;
        if col < full
            && let Some(bg) = fill.fg
        {
            style = style.bg(bg);
        }
        if let Some(c) = buf.cell_mut((x + col as u16, y)) {
            c.set_symbol(sym).set_style(style);
        }
    }
}

#[cfg(test)]
#[path = "gauge_tests.rs"]
mod tests;
