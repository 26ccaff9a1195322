//! The approval prompt above the input box and the queued messages above it: their lines for a
//! width (pure; the view slices and places them).

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::diff_view::{diff_lines, diff_stat};
use super::theme::Theme;
use super::wrap::{WrapMode, sanitize, str_width, truncate, wrap_spans, wrap_text};
use crate::engine::protocol::{AllowOffer, FileDiff};
use crate::tui::keymap::{self, Action, Context, short_label_for};

/// Rows the queued messages take at most (the last says how many more there are).
pub(crate) const QUEUE_MAX_ROWS: usize = 3;

fn raw(s: impl Into<String>, style: Style) -> Span<'static> {
    Span::styled(s.into(), style)
}

/// What the prompt is about, as the view draws it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PromptBody<'a> {
    /// The engine's one-line summary (`bash: cargo test`).
    pub(crate) summary: &'a str,
    /// The call leaves the workspace: approved call by call.
    pub(crate) outside_workspace: bool,
    /// `bash`: the whole command.
    pub(crate) command: Option<&'a str>,
    /// `edit_file` / `write_file`: the change.
    pub(crate) diff: Option<&'a FileDiff>,
    /// What "always" grants (None: not offered).
    pub(crate) always: Option<&'a AllowOffer>,
    /// The sandbox stopped the command, for this reason: the question is whether it runs once
    /// more outside the sandbox.
    pub(crate) unsandboxed: Option<&'a str>,
}

/// Whether the prompt answers keys now, and if not, why not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PromptKeys {
    /// `y` / `a` / `n` answer it.
    Live,
    /// It appeared (or the input changed) less than 400 ms ago.
    Settling,
    /// The input holds the user's own text: it answers nothing until that is sent or cleared.
    InputHasText,
    /// The focus is in the side editor.
    EditorFocused,
}

/// The prompt's body lines at `width` (the whole of it; the view scrolls): the whole command or
/// the whole diff (else the summary).
pub(crate) fn prompt_body_lines(
    body: &PromptBody<'_>,
    width: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let w = width.max(1);
    let mut lines = Vec::new();
    match (body.command, body.diff) {
        (Some(command), _) => {
            let text = sanitize(command);
            let mark = [raw("$ ", theme.dim)];
            let pad = [raw("  ", theme.dim)];
            lines.extend(wrap_text(
                text.trim_end(),
                theme.text,
                w,
                &mark,
                &pad,
                WrapMode::Chars,
            ));
        }
        (None, Some(diff)) => {
            lines.extend(wrap_spans(
                &[raw(
                    format!("{} · {}", sanitize(&diff.path), diff_stat(diff)),
                    theme.text,
                )],
                w,
                &[],
                &[],
                WrapMode::Words,
            ));
            lines.extend(diff_lines(diff, None, 0, w, theme));
        }
        (None, None) => {
            let text = sanitize(body.summary);
            lines.extend(wrap_text(
                text.trim_end(),
                theme.text,
                w,
                &[],
                &[],
                WrapMode::Chars,
            ));
        }
    }
    lines
}

/// The prompt's fixed lines under its body (never scrolled away): a warning when the call leaves
/// the workspace, and what "always" would allow.
pub(crate) fn prompt_note_lines(
    body: &PromptBody<'_>,
    width: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let w = width.max(1);
    let mut lines = Vec::new();
    let mut words = |text: String, style: Style| {
        lines.extend(wrap_spans(
            &[raw(text, style)],
            w,
            &[],
            &[],
            WrapMode::Words,
        ));
    };
    if let Some(reason) = body.unsandboxed {
        words(format!("⚠ {}", sanitize(reason)), theme.warning);
        words(
            "allowing runs this command once more, outside the sandbox, with all of your \
             rights; denying keeps the sandboxed result"
                .into(),
            theme.dim,
        );
        return lines;
    }
    if body.outside_workspace {
        words(
            "⚠ outside the workspace: approved call by call".into(),
            theme.warning,
        );
    }
    let always = match body.always {
        Some(offer) => format!(
            "{}: {}",
            keymap::label_for(Action::ApproveAlways),
            sanitize(&offer.label)
        ),
        None if body.outside_workspace => "always is not offered outside the workspace".into(),
        None => "always is not offered for this call".into(),
    };
    words(always, theme.dim);
    lines
}

/// The keys that answer a tool call's prompt, as (keys, what they do): `y once`, `a always` only
/// where "always" is offered, `n/esc deny`. The prompt and the footer both say these.
pub(crate) fn tool_approval_hints(always: bool) -> Vec<(String, &'static str)> {
    keymap::hints(&[Context::Approval])
        .into_iter()
        .filter(|h| always || h.action != Action::ApproveAlways)
        .map(|h| (h.keys, h.text))
        .collect()
}

/// The keys that answer the `.mcp.json` question: approve, decline, or leave it to the next
/// launch (Esc sends no answer there).
pub(crate) fn mcp_json_hints() -> Vec<(String, &'static str)> {
    let esc = keymap::Key {
        code: crossterm::event::KeyCode::Esc,
        mods: crossterm::event::KeyModifiers::NONE,
    };
    vec![
        (short_label_for(Action::ApproveOnce), "approve"),
        (short_label_for(Action::Deny), "decline"),
        (
            keymap::key_label(&esc).to_lowercase(),
            "ask at the next launch",
        ),
    ]
}

/// The keys line of a question with answers of its own (`hints`): the `.mcp.json` question, or
/// the one about files an undo would write over.
pub(crate) fn question_keys_line(
    hints: Vec<(String, &'static str)>,
    keys: PromptKeys,
    theme: &Theme,
) -> Line<'static> {
    let key_style = match keys {
        PromptKeys::Live => theme.key,
        PromptKeys::Settling => theme.dim,
        PromptKeys::InputHasText | PromptKeys::EditorFocused => {
            return prompt_keys_line(keys, false, false, theme);
        }
    };
    Line::from(key_spans(hints, key_style, theme))
}

/// The keys that answer the question about files an undo, redo or rewind would write over.
pub(crate) fn overwrite_hints() -> Vec<(String, &'static str)> {
    let esc = keymap::Key {
        code: crossterm::event::KeyCode::Esc,
        mods: crossterm::event::KeyModifiers::NONE,
    };
    vec![
        (short_label_for(Action::ApproveOnce), "overwrite"),
        (short_label_for(Action::Deny), "skip them"),
        (keymap::key_label(&esc).to_lowercase(), "cancel"),
    ]
}

/// `keys what · keys what · …`: the keys in `key_style`, what they do in the text style.
fn key_spans(
    items: impl IntoIterator<Item = (String, &'static str)>,
    key_style: Style,
    theme: &Theme,
) -> Vec<Span<'static>> {
    let mut spans = Vec::new();
    for (keys, text) in items {
        if !spans.is_empty() {
            spans.push(raw("  ·  ", theme.dim));
        }
        spans.push(raw(keys, key_style));
        spans.push(raw(format!(" {text}"), theme.text));
    }
    spans
}

/// The prompt's last row: its keys (`always` when "always" is offered), or why it does not take
/// them yet.
pub(crate) fn prompt_keys_line(
    keys: PromptKeys,
    always: bool,
    scrollable: bool,
    theme: &Theme,
) -> Line<'static> {
    match keys {
        PromptKeys::Live | PromptKeys::Settling => {
            let key_style = if keys == PromptKeys::Live {
                theme.key
            } else {
                theme.dim
            };
            let mut spans = key_spans(tool_approval_hints(always), key_style, theme);
            if scrollable {
                spans.push(raw("  ·  ", theme.dim));
                spans.push(raw(
                    format!(
                        "{}/{}",
                        short_label_for(Action::ApprovalUp),
                        short_label_for(Action::ApprovalDown)
                    ),
                    key_style,
                ));
                spans.push(raw(" scroll", theme.text));
            }
            Line::from(spans)
        }
        PromptKeys::InputHasText => Line::from(vec![raw(
            format!(
                "your text stays in the input: send or clear it ({}) to answer",
                short_label_for(Action::ClearOrQuit)
            ),
            theme.warning,
        )]),
        PromptKeys::EditorFocused => Line::from(vec![raw(
            format!(
                "{} moves to the input to answer",
                short_label_for(Action::ToggleFocus)
            ),
            theme.warning,
        )]),
    }
}

/// The queued messages, one row each (at most [`QUEUE_MAX_ROWS`]), the newest last, with the
/// keys that edit and drop it on the first row when `hint`.
pub(crate) fn queued_lines(
    queue: &[&str],
    width: usize,
    hint: bool,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let w = width.max(1);
    let shown = if queue.len() > QUEUE_MAX_ROWS {
        QUEUE_MAX_ROWS - 1
    } else {
        queue.len()
    };
    let skip = queue.len() - shown;
    let mut lines = Vec::new();
    if skip > 0 {
        lines.push(Line::from(raw(
            truncate(&format!("  ⋯ {skip} more queued"), w),
            theme.dim,
        )));
    }
    let keys = format!(
        "  {} edits · {} drops",
        short_label_for(Action::HistoryPrev),
        short_label_for(Action::Abort)
    );
    let n = queue.len();
    for (i, text) in queue.iter().enumerate().skip(skip) {
        let first_line = sanitize(text).lines().next().unwrap_or("").to_string();
        let more = text.lines().count() > 1;
        let mark = "⋯ queued  ";
        let tail = if hint && i + 1 == n {
            keys.as_str()
        } else {
            ""
        };
        let room = w.saturating_sub(str_width(mark) + str_width(tail));
        let body = if more {
            format!("{first_line} …")
        } else {
            first_line
        };
        let mut spans = vec![
            raw(mark, theme.dim),
            raw(truncate(&body, room.max(1)), theme.user),
        ];
        if !tail.is_empty() && room > 4 {
            spans.push(raw(tail, theme.dim));
        }
        let line = Line::from(spans);
        lines.push(if line.width() > w {
            Line::from(raw(truncate(&line.to_string(), w), theme.dim))
        } else {
            line
        });
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::render::wrap::line_texts as text;

    #[test]
    fn queued_rows_fold_the_oldest_into_a_count() {
        let t = Theme::plain();
        assert_eq!(
            text(&queued_lines(&["one", "two\nlines"], 60, true, &t)),
            ["⋯ queued  one", "⋯ queued  two …  up edits · esc drops"]
        );
        let many = ["a", "b", "c", "d", "e"];
        assert_eq!(
            text(&queued_lines(&many, 40, false, &t)),
            ["  ⋯ 3 more queued", "⋯ queued  d", "⋯ queued  e"]
        );
        for w in [1, 5, 12] {
            for l in queued_lines(&many, w, true, &t) {
                assert!(l.width() <= w, "{w}: {l}");
            }
        }
    }

    #[test]
    fn prompt_keys_say_why_they_wait() {
        let t = Theme::plain();
        let live = prompt_keys_line(PromptKeys::Live, true, true, &t).to_string();
        assert_eq!(
            live,
            "y once  ·  a always  ·  n/esc deny  ·  up/down scroll"
        );
        // Where "always" is not offered, its key is not either.
        let once = prompt_keys_line(PromptKeys::Live, false, false, &t).to_string();
        assert_eq!(once, "y once  ·  n/esc deny");
        assert_eq!(
            question_keys_line(mcp_json_hints(), PromptKeys::Live, &t).to_string(),
            "y approve  ·  n decline  ·  esc ask at the next launch"
        );
        assert_eq!(
            question_keys_line(overwrite_hints(), PromptKeys::Live, &t).to_string(),
            "y overwrite  ·  n skip them  ·  esc cancel"
        );
        let text = prompt_keys_line(PromptKeys::InputHasText, false, false, &t).to_string();
        assert!(text.contains("ctrl-c"), "{text}");
        let body = PromptBody {
            summary: "bash: ls /etc",
            outside_workspace: true,
            command: Some("ls /etc\n  | wc -l"),
            diff: None,
            always: None,
            unsandboxed: None,
        };
        let lines = text_of(&prompt_body_lines(&body, 80, &t));
        assert_eq!(lines, ["$ ls /etc", "    | wc -l"]);
        let notes = text_of(&prompt_note_lines(&body, 80, &t));
        assert_eq!(
            notes,
            [
                "⚠ outside the workspace: approved call by call",
                "always is not offered outside the workspace"
            ]
        );
    }

    fn text_of(lines: &[Line<'_>]) -> Vec<String> {
        text(lines)
    }
}
