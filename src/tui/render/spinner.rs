//! The spinner line: `⠹ writing handoff… 7s · esc to cancel`. The frame comes from the elapsed time
//! passed in, so drawing is pure and the app can schedule exactly the next frame.

use std::time::Duration;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::theme::Theme;
use super::wrap::{str_width, truncate};

/// Braille frames, one every [`FRAME_MS`].
pub(crate) const FRAMES: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
/// Milliseconds a frame stays up.
pub(crate) const FRAME_MS: u64 = 80;

/// The frame shown after `elapsed`.
pub(crate) fn frame(elapsed: Duration) -> &'static str {
    let n = (elapsed.as_millis() / u128::from(FRAME_MS)) % FRAMES.len() as u128;
    FRAMES.get(n as usize).copied().unwrap_or("⠋")
}

/// How long until the frame changes (to schedule the next redraw).
pub(crate) fn next_frame_in(elapsed: Duration) -> Duration {
    let into = (elapsed.as_millis() % u128::from(FRAME_MS)) as u64;
    Duration::from_millis(FRAME_MS - into)
}

/// `7s`, `1m 05s`, `1h 02m`.
pub(crate) fn fmt_elapsed(d: Duration) -> String {
    let s = d.as_secs();
    if s < 60 {
        format!("{s}s")
    } else if s < 3600 {
        format!("{}m {:02}s", s / 60, s % 60)
    } else {
        format!("{}h {:02}m", s / 3600, (s % 3600) / 60)
    }
}

/// The whole spinner line as text, e.g. `⠹ writing handoff… 7s · esc to cancel` (no hint part when
/// `hint` is empty).
#[cfg(test)]
pub(crate) fn spinner_text(label: &str, elapsed: Duration, hint: &str) -> String {
    let mut s = format!("{} {label} {}", frame(elapsed), fmt_elapsed(elapsed));
    if !hint.is_empty() {
        s.push_str(" · ");
        s.push_str(hint);
    }
    s
}

/// Draws the spinner line on the first row of `area`; the hint, then the time, give way when narrow.
pub(crate) fn render_spinner(
    label: &str,
    elapsed: Duration,
    hint: &str,
    area: Rect,
    buf: &mut Buffer,
    theme: &Theme,
) {
    let area = area.intersection(buf.area);
    if area.is_empty() {
        return;
    }
    let w = usize::from(area.width);
    let time = fmt_elapsed(elapsed);
    let base = 2 + str_width(label);
    let with_time = base + 1 + str_width(&time);
    let with_hint = with_time + 3 + str_width(hint);
    let mut spans = vec![
        Span::styled(frame(elapsed), theme.spinner),
        Span::styled(" ", theme.text),
    ];
    if with_time <= w {
        spans.push(Span::styled(label.to_string(), theme.text));
        spans.push(Span::styled(format!(" {time}"), theme.dim));
        if !hint.is_empty() && with_hint <= w {
            spans.push(Span::styled(" · ", theme.dim));
            spans.push(Span::styled(hint.to_string(), theme.dim));
        }
    } else {
        spans.push(Span::styled(
            truncate(label, w.saturating_sub(2)),
            theme.text,
        ));
    }
    buf.set_line(area.x, area.y, &Line::from(spans), area.width);
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    #[test]
    fn frames_follow_time() {
        assert_eq!(frame(Duration::ZERO), "⠋");
        assert_eq!(frame(Duration::from_millis(79)), "⠋");
        assert_eq!(frame(Duration::from_millis(160)), "⠹");
        assert_eq!(
            frame(Duration::from_millis(800)),
            "⠋",
            "wraps after 10 frames"
        );
        assert_eq!(
            next_frame_in(Duration::from_millis(1030)),
            Duration::from_millis(10)
        );
        assert_eq!(
            spinner_text(
                "writing handoff…",
                Duration::from_millis(7_400),
                "esc to cancel"
            ),
            "⠹ writing handoff… 7s · esc to cancel"
        );
        assert_eq!(
            spinner_text("thinking", Duration::from_secs(65), ""),
            "⠹ thinking 1m 05s"
        );
        assert_eq!(fmt_elapsed(Duration::from_secs(3720)), "1h 02m");
    }

    fn draw(w: u16, h: u16) -> Terminal<TestBackend> {
        let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
        t.draw(|f| {
            render_spinner(
                "writing handoff…",
                Duration::from_millis(7_400),
                "esc to cancel",
                f.area(),
                f.buffer_mut(),
                &Theme::builtin("dark").unwrap(),
            )
        })
        .unwrap();
        t
    }

    #[test]
    fn spinner_snapshots() {
        insta::assert_snapshot!("spinner_60", draw(60, 1).backend());
        insta::assert_snapshot!("spinner_24", draw(24, 1).backend());
        insta::assert_snapshot!("spinner_10", draw(10, 1).backend());
        insta::assert_debug_snapshot!("spinner_60_styled", draw(60, 1).backend().buffer());
        for (w, h) in [(0, 0), (1, 1), (0, 3), (20, 5)] {
            draw(w, h);
        }
    }
}
