//! `/jobs` as the user sees it: the overlay the view draws over the chat. The list has a row per
//! job (id, state, age, output size, command, and the URL it printed), the chosen one
//! highlighted, a job asked to stop shown as stopping until the engine lists it ended, and a note
//! under the rows when a key did nothing; a job's output (its last lines, the newest at the
//! bottom, scrolled a line at a time) shows in place of the list. Where the overlay stands is
//! `jobs_view`.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Block, Clear, Paragraph, Widget};

use crate::engine::jobs::{JobInfo, JobState, age, size};
use crate::engine::text::one_line;

use super::jobs_view::{JobsOverlay, JobsView, Output};
use super::keymap::{Action, label_for};
use super::render::theme::Theme;
use super::render::wrap::{sanitize, truncate};

/// A state in a few characters: `running`, `exit 7`, `killed 9`, `stopped`, `gone`.
fn short_state(state: JobState, stopping: bool) -> String {
    match state {
        JobState::Running if stopping => "stopping".into(),
        JobState::Running => "running".into(),
        JobState::Exited { code } => format!("exit {code}"),
        JobState::Killed { signal } => format!("killed {signal}"),
        JobState::Stopped => "stopped".into(),
        JobState::Unknown => "ended".into(),
        JobState::Gone => "gone".into(),
    }
}

/// One row: `#2   running   1m 05s   2.3 MiB  npm run dev · http://localhost:5173/`; the age is
/// since its start, at `now_unix`.
pub(crate) fn row(j: &JobInfo, stopping: bool, now_unix: u64, width: usize) -> String {
    let since = age(now_unix.saturating_sub(j.started_unix));
    let mut text = format!(
        "#{:<3} {:<9} {:>7}  {:>9}  {}",
        j.id,
        short_state(j.state, stopping),
        since,
        size(j.bytes),
        sanitize(&one_line(&j.command, 200))
    );
    if let Some(url) = &j.url {
        text.push_str(&format!(" · {}", sanitize(url)));
    }
    truncate(&text, width)
}

/// The overlay's keys, for its title.
fn keys() -> String {
    format!(
        "{}/{} choose · {} output · {} stop · {} closes",
        label_for(Action::JobsPrev),
        label_for(Action::JobsNext),
        label_for(Action::JobsOutput),
        label_for(Action::JobsStop),
        label_for(Action::JobsClose)
    )
}

/// The overlay centred over `area`; ages at `now_unix`.
pub(crate) fn draw(view: &JobsView, area: Rect, buf: &mut Buffer, theme: &Theme, now_unix: u64) {
    let Some(o) = view.overlay() else { return };
    if area.width < 20 || area.height < 5 {
        return;
    }
    match &o.output {
        Some(out) => draw_output(view, out, area, buf, theme),
        None => draw_list(view, o, area, buf, theme, now_unix),
    }
}

/// A bordered box over `rect`, cleared; the area inside.
fn frame(rect: Rect, title: String, buf: &mut Buffer, theme: &Theme) -> Rect {
    Clear.render(rect, buf);
    let block = Block::bordered()
        .title(title)
        .border_style(theme.border_focus);
    let inner = block.inner(rect);
    block.render(rect, buf);
    inner
}

fn centred(area: Rect, width: u16, height: u16) -> Rect {
    Rect::new(
        area.x + area.width.saturating_sub(width) / 2,
        area.y + area.height.saturating_sub(height) / 2,
        width,
        height,
    )
}

fn draw_list(
    view: &JobsView,
    o: &JobsOverlay,
    area: Rect,
    buf: &mut Buffer,
    theme: &Theme,
    now_unix: u64,
) {
    let jobs = view.jobs();
    let note = o.note.as_deref();
    let header = usize::from(!jobs.is_empty());
    let wanted = jobs.len().max(1) + header + usize::from(note.is_some());
    let width = area.width.saturating_sub(4).min(120);
    let height = u16::try_from(wanted)
        .unwrap_or(u16::MAX)
        .min(area.height.saturating_sub(4))
        .max(1)
        + 2;
    let title = format!(" background jobs · {} ", keys());
    let inner = frame(centred(area, width, height), title, buf, theme);
    let room = usize::from(inner.width);
    let rows = usize::from(inner.height).saturating_sub(header + usize::from(note.is_some()));
    let head = format!(
        "{:<4} {:<9} {:>7}  {:>9}  command",
        "id", "state", "age", "output"
    );
    let mut lines = Vec::new();
    if header > 0 {
        lines.push(Line::styled(truncate(&head, room), theme.dim));
    }
    lines.extend(if jobs.is_empty() {
        vec![Line::styled(
            truncate(
                "No background jobs. The model starts one with bash's run_in_background.",
                room,
            ),
            theme.dim,
        )]
    } else {
        let first = o.selected.saturating_sub(rows.saturating_sub(1));
        jobs.iter()
            .enumerate()
            .skip(first)
            .take(rows)
            .map(|(i, j)| {
                let stopping = o.stopping.contains(&j.id);
                let style = if i == o.selected {
                    theme.selection
                } else if j.state.is_running() {
                    Style::default()
                } else {
                    theme.dim
                };
                Line::styled(row(j, stopping, now_unix, room), style)
            })
            .collect()
    });
    if let Some(n) = note {
        lines.push(Line::styled(truncate(&sanitize(n), room), theme.dim));
    }
    Paragraph::new(lines).render(inner, buf);
}

fn draw_output(view: &JobsView, out: &Output, area: Rect, buf: &mut Buffer, theme: &Theme) {
    let job = view.jobs().iter().find(|j| j.id == out.id);
    let what = job.map_or_else(String::new, |j| {
        format!(
            " · {} · {}",
            j.state.describe(),
            one_line(&sanitize(&j.command), 60)
        )
    });
    let title = format!(
        " job #{}{what} · {}/{} scroll · {} stop · {} back ",
        out.id,
        label_for(Action::JobsPrev),
        label_for(Action::JobsNext),
        label_for(Action::JobsStop),
        label_for(Action::JobsClose)
    );
    let width = area.width.saturating_sub(4).min(120);
    let height = area.height.saturating_sub(2).max(3);
    let inner = frame(centred(area, width, height), title, buf, theme);
    let room = usize::from(inner.width);
    let lines: Vec<Line> = match &out.text {
        None => vec![Line::styled("reading its output…", theme.dim)],
        Some(text) => {
            let all: Vec<&str> = text.lines().collect();
            let end = all.len().saturating_sub(out.scroll);
            let start = end.saturating_sub(usize::from(inner.height));
            all.get(start..end)
                .unwrap_or_default()
                .iter()
                .map(|l| Line::raw(truncate(&sanitize(l), room)))
                .collect()
        }
    };
    Paragraph::new(lines).render(inner, buf);
}
