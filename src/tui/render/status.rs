//! The status line: the context gauge, the model, a `DEMO` badge, the working mode when it is not
//! normal (`plan mode`, `accept edits`), and key hints (data from the shell).
//! When the row is narrow, hints go first, then the provider, then the model; the gauge stays. A
//! first hint that is news (how many hooks ran quietly) goes after the provider.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::gauge::{GaugeModel, gauge_min_width, render_gauge};
use super::theme::Theme;
use super::wrap::{str_width, truncate};

/// Everything the status line shows.
pub(crate) struct StatusModel<'a> {
    /// The context gauge.
    pub(crate) gauge: &'a GaugeModel,
    /// The model name.
    pub(crate) model: &'a str,
    /// The provider label (`anthropic`, `openai`, ...).
    pub(crate) provider: &'a str,
    /// The built-in demo model is running: shows a `DEMO` badge.
    pub(crate) demo: bool,
    /// The working mode's words when it is not normal: a badge kept however narrow the row.
    pub(crate) mode: Option<&'a str>,
    /// Key hints as `(key, what)`, most important first.
    pub(crate) hints: &'a [(&'a str, &'a str)],
    /// The first hint is news (the folded hooks' count): it outlasts the provider label.
    pub(crate) news: bool,
    /// `2 jobs` while background jobs run (shown with the model).
    pub(crate) jobs: Option<&'a str>,
}

const DEMO: &str = " DEMO ";

/// The right-hand part with the first `hints` hints; provider and model optional.
fn right_spans<'a>(
    s: &StatusModel<'a>,
    theme: &Theme,
    model: bool,
    provider: bool,
    hints: usize,
) -> Vec<Span<'a>> {
    let mut spans: Vec<Span<'a>> = Vec::new();
    let gap = |spans: &mut Vec<Span<'a>>| {
        if !spans.is_empty() {
            spans.push(Span::styled("  ", theme.status_bg));
        }
    };
    if model && !s.model.is_empty() {
        spans.push(Span::styled(s.model, theme.status_bg.patch(theme.text)));
        if provider && !s.provider.is_empty() && !s.demo {
            spans.push(Span::styled(" · ", theme.status_bg.patch(theme.dim)));
            spans.push(Span::styled(s.provider, theme.status_bg.patch(theme.dim)));
        }
    }
    if let (true, Some(jobs)) = (model, s.jobs) {
        gap(&mut spans);
        spans.push(Span::styled(jobs, theme.status_bg.patch(theme.key)));
    }
    if s.demo {
        gap(&mut spans);
        spans.push(Span::styled(DEMO, theme.badge));
    }
    if let Some(mode) = s.mode {
        gap(&mut spans);
        spans.push(Span::styled(format!(" {mode} "), theme.badge));
    }
    for (key, what) in s.hints.iter().take(hints) {
        gap(&mut spans);
        spans.push(Span::styled(*key, theme.status_bg.patch(theme.key)));
        spans.push(Span::styled(" ", theme.status_bg));
        spans.push(Span::styled(*what, theme.status_bg.patch(theme.dim)));
    }
    spans
}

fn width(spans: &[Span<'_>]) -> usize {
    spans.iter().map(|s| str_width(&s.content)).sum()
}

/// Extra bar cells the gauge keeps beyond its minimum at 80 columns and up.
const READABLE_BAR: usize = 16;

/// Draws the status line on the first row of `area` (its background fills the whole area).
pub(crate) fn render_status(s: &StatusModel, area: Rect, buf: &mut Buffer, theme: &Theme) {
    let area = area.intersection(buf.area);
    if area.is_empty() {
        return;
    }
    buf.set_style(area, theme.status_bg);
    let w = usize::from(area.width);
    // The gauge keeps room for its label (+1: its left margin); the right side shrinks to make room.
    // From 80 columns up the bar keeps a readable length (its ticks must be told apart): key
    // hints give way first; `/help` lists them all.
    let readable_bar = if w >= 80 { READABLE_BAR } else { 0 };
    let min_gauge = if w >= 100 {
        gauge_min_width(s.gauge, true) + 1 + readable_bar
    } else if w >= 60 {
        gauge_min_width(s.gauge, false) + 1 + readable_bar
    } else {
        w / 2
    };
    // Hints go first (from the last), then the provider, then the model. A first hint that is
    // news goes after the provider.
    let first = usize::from(s.news && !s.hints.is_empty());
    let candidates = (first..=s.hints.len())
        .rev()
        .map(|h| (true, true, h))
        .chain([(true, false, first), (true, false, 0), (false, false, 0)]);
    let mut choice = None;
    for (model, provider, hints) in candidates {
        let spans = right_spans(s, theme, model, provider, hints);
        let rw = width(&spans);
        if rw == 0 || rw + 2 + min_gauge <= w {
            choice = Some(spans);
            break;
        }
    }
    let right = match choice {
        Some(r) => r,
        // Not even the badges fit beside the gauge: keep the mode's badge, else the demo's.
        None => match s.mode {
            Some(mode) if w > str_width(mode) + 4 => {
                vec![Span::styled(format!(" {mode} "), theme.badge)]
            }
            _ if s.demo && w > str_width(DEMO) + 2 => vec![Span::styled(DEMO, theme.badge)],
            _ => Vec::new(),
        },
    };
    let rw = width(&right);
    let gauge_w = if rw == 0 { w } else { w.saturating_sub(rw + 2) };
    // One space of margin on the left when there is room.
    let (gx, gw) = if gauge_w > 20 {
        (area.x + 1, gauge_w - 1)
    } else {
        (area.x, gauge_w)
    };
    render_gauge(s.gauge, Rect::new(gx, area.y, gw as u16, 1), buf, theme);
    if rw > 0 {
        let x = area.x + (w - rw) as u16;
        buf.set_line(x, area.y, &Line::from(right), rw as u16);
    } else if gauge_w == 0 && !s.model.is_empty() {
        buf.set_stringn(area.x, area.y, truncate(s.model, w), w, theme.status_bg);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::render::gauge::GaugeMode;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    const HINTS: &[(&str, &str)] = &[("enter", "send"), ("ctrl-o", "editor"), ("ctrl-c", "quit")];

    fn draw(w: u16, h: u16, demo: bool, theme: &Theme) -> Terminal<TestBackend> {
        draw_in(w, h, demo, None, theme)
    }

    fn draw_in(
        w: u16,
        h: u16,
        demo: bool,
        mode: Option<&str>,
        theme: &Theme,
    ) -> Terminal<TestBackend> {
        let g = GaugeModel {
            context: 130_000,
            window: 200_000,
            at: 150_000,
            warn_at: 130_000,
            estimated: false,
            mode: GaugeMode::Normal,
            masked: 0,
        };
        let s = StatusModel {
            gauge: &g,
            model: "claude-sonnet-4-5",
            provider: "anthropic",
            demo,
            mode,
            hints: HINTS,
            news: false,
            jobs: None,
        };
        let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
        t.draw(|f| render_status(&s, f.area(), f.buffer_mut(), theme))
            .unwrap();
        t
    }

    #[test]
    fn status_snapshots() {
        let dark = Theme::builtin("dark").unwrap();
        insta::assert_snapshot!("status_160", draw(160, 1, false, &dark).backend());
        insta::assert_snapshot!("status_120_demo", draw(120, 1, true, &dark).backend());
        insta::assert_snapshot!("status_80", draw(80, 1, false, &dark).backend());
        insta::assert_snapshot!("status_40_demo", draw(40, 1, true, &dark).backend());
        insta::assert_debug_snapshot!(
            "status_100_demo_styled",
            draw(100, 1, true, &dark).backend().buffer()
        );
        insta::assert_snapshot!(
            "status_80_plain",
            draw(80, 1, true, &Theme::plain()).backend()
        );
        for (w, h) in [(0, 0), (1, 1), (5, 1), (20, 5), (250, 2)] {
            draw(w, h, true, &dark);
        }
    }

    #[test]
    fn a_first_hint_that_is_news_outlasts_the_provider() {
        let dark = Theme::builtin("dark").unwrap();
        let g = GaugeModel {
            context: 1_000,
            window: 200_000,
            at: 150_000,
            warn_at: 130_000,
            estimated: false,
            mode: GaugeMode::Normal,
            masked: 0,
        };
        let hints = [("alt-h", "1 hook(s) ran quietly"), ("enter", "send")];
        let row = |news: bool| {
            let s = StatusModel {
                gauge: &g,
                model: "claude-sonnet-4-5",
                provider: "anthropic",
                demo: false,
                mode: None,
                hints: &hints,
                news,
                jobs: None,
            };
            let mut t = Terminal::new(TestBackend::new(120, 1)).unwrap();
            t.draw(|f| render_status(&s, f.area(), f.buffer_mut(), &dark))
                .unwrap();
            format!("{}", t.backend())
        };
        let (plain, news) = (row(false), row(true));
        assert!(
            plain.contains("anthropic") && !plain.contains("quietly"),
            "{plain}"
        );
        assert!(news.contains("1 hook(s) ran quietly"), "{news}");
        assert!(
            news.contains("claude-sonnet-4-5") && !news.contains("anthropic"),
            "{news}"
        );
    }

    #[test]
    fn the_mode_shows_as_a_badge_that_stays_when_the_row_is_narrow() {
        let dark = Theme::builtin("dark").unwrap();
        let plan = Some("plan mode");
        insta::assert_snapshot!(
            "status_120_plan",
            draw_in(120, 1, false, plan, &dark).backend()
        );
        insta::assert_snapshot!(
            "status_80_accept_edits",
            draw_in(80, 1, false, Some("accept edits"), &dark).backend()
        );
        insta::assert_snapshot!(
            "status_40_plan_demo",
            draw_in(40, 1, true, plan, &dark).backend()
        );
        for (w, h) in [(0, 0), (1, 1), (5, 1), (12, 1)] {
            draw_in(w, h, true, plan, &dark);
        }
    }
}
