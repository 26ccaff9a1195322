//! The side editor's look: its title (review countdown, conflict, unsaved mark, file, then why a
//! degraded document is degraded or the standing focus) and
//! the textarea styling that makes `## Doing`-style headings stand out. Also the editing keys
//! both textareas (the input box and the side editor) share: the textarea's own, except that
//! Ctrl-U deletes to the start of the line as in readline and Ctrl-Z undoes.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::style::Style;
use ratatui::widgets::{Block, BorderType, Borders};
use ratatui_textarea::TextArea;
use unicode_segmentation::UnicodeSegmentation as _;
use unicode_width::UnicodeWidthStr;

use super::theme::Theme;
use super::wrap::{cluster_width, str_width};
use crate::tui::keymap::{Action, short_label_for};

/// A key typed into a textarea: Ctrl-U deletes from the cursor to the start of its line (as in
/// readline and every shell; at the line's start it does nothing), Ctrl-Z undoes the last edit; any other key is the textarea's own.
/// False when nothing changed.
pub(crate) fn edit_key(area: &mut TextArea<'_>, key: KeyEvent) -> bool {
    let ctrl_only =
        key.modifiers & (KeyModifiers::CONTROL | KeyModifiers::ALT) == KeyModifiers::CONTROL;
    match key.code {
        // At the start of a line there is nothing before the cursor on it: the line break
        // above stays.
        KeyCode::Char('u') if ctrl_only => area.cursor().1 > 0 && area.delete_line_by_head(),
        KeyCode::Char('z') if ctrl_only => area.undo(),
        _ => area.input(key),
    }
}

/// Markdown heading lines, highlighted in the editor.
pub(crate) const HEADING_PATTERN: &str = r"^#{1,6}\s.*";

/// The path is left out of the title when fewer columns than this are left for it.
const MIN_PATH_COLUMNS: usize = 8;

/// What a paused review says (`paused · ctrl-s save & continue · esc continue`), and its short
/// form when the title is narrow.
fn paused_text(short: bool) -> String {
    let (save, done) = (
        short_label_for(Action::Save),
        short_label_for(Action::EditorEscape),
    );
    if short {
        format!("paused · {save}/{done} continue")
    } else {
        format!("paused · {save} save & continue · {done} continue")
    }
}

/// `path` cut from the left to at most `max` columns (`…otes/h.md`); empty when `max` is too
/// small to show anything useful.
fn shorten_left(path: &str, max: usize) -> String {
    if str_width(path) <= max {
        return path.to_string();
    }
    if max < MIN_PATH_COLUMNS {
        return String::new();
    }
    let mut kept = Vec::new();
    let mut used = 1; // the `…`
    for g in path.graphemes(true).rev() {
        let w = cluster_width(g);
        if used + w > max {
            break;
        }
        used += w;
        kept.push(g);
    }
    std::iter::once("…").chain(kept.into_iter().rev()).collect()
}

/// The editor title for `width` columns (the border row between the corners), state first so a
/// narrow editor still shows it: ` successor in 12s · [+] …/notes/handoff-x.md `. `countdown` is
/// the review window's seconds left (`None` when no review is running), `paused` once the user
/// typed in it; `[+]` marks unsaved edits; the path is shortened from the left to the columns
/// left, or left out.
pub(crate) fn editor_title(
    path: &str,
    countdown: Option<u64>,
    paused: bool,
    dirty: bool,
    conflict: bool,
    width: u16,
) -> String {
    let width = usize::from(width);
    let build = |paused_text: &str| {
        let mut head: Vec<String> = Vec::new();
        match (countdown, paused) {
            (Some(_), true) => head.push(paused_text.to_string()),
            (Some(s), false) => head.push(format!("successor in {s}s")),
            (None, _) => {}
        }
        if conflict {
            head.push("changed on disk".into());
        }
        if dirty {
            head.push("[+]".into());
        }
        head
    };
    let mut head = build(&paused_text(false));
    if head.join(" · ").width() + 2 > width {
        head = build(&paused_text(true));
    }
    let head_text = head.join(" · ");
    // The dirty mark reads as part of the file: `[+] notes/h.md`.
    let sep = match head.last().map(String::as_str) {
        Some("[+]") => " ",
        Some(_) => " · ",
        None => "",
    };
    let room = width.saturating_sub(head_text.width() + sep.width() + 2);
    match shorten_left(path, room) {
        // Nothing else to show: the path, clipped by the border.
        short if short.is_empty() && head.is_empty() => format!(" {path} "),
        short if short.is_empty() => format!(" {head_text} "),
        short => format!(" {head_text}{sep}{short} "),
    }
}

/// Columns a tag takes at most in the title.
const TAG_TITLE_COLUMNS: usize = 40;

/// What the title says after the file: why a document under review is degraded, else the
/// step's standing focus. None when there is neither.
pub(crate) fn title_tag(degraded: Option<&str>, focus: Option<&str>) -> Option<String> {
    let one_line = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    match (degraded.map(one_line), focus.map(one_line)) {
        (Some(why), _) if !why.is_empty() => Some(format!("DEGRADED: {why}")),
        (_, Some(focus)) if !focus.is_empty() => Some(format!("focus: {focus}")),
        _ => None,
    }
}

/// [`editor_title`] with a tag at its end (` · focus: the parser bug `, see [`title_tag`]), cut
/// to fit; the path gives up its room first.
pub(crate) fn editor_title_tagged(
    path: &str,
    countdown: Option<u64>,
    paused: bool,
    dirty: bool,
    conflict: bool,
    tag: Option<&str>,
    width: u16,
) -> String {
    let Some(full) = tag.filter(|t| !t.trim().is_empty()) else {
        return editor_title(path, countdown, paused, dirty, conflict, width);
    };
    let w = usize::from(width);
    let label = super::wrap::truncate(full, TAG_TITLE_COLUMNS.min(w / 2).max(MIN_PATH_COLUMNS));
    let rest = u16::try_from(w.saturating_sub(label.width() + 3)).unwrap_or(u16::MAX);
    let with_path = editor_title(path, countdown, paused, dirty, conflict, rest);
    let with_path = with_path.trim();
    // The review's state alone (an empty path leaves it out).
    let state = editor_title("", countdown, paused, dirty, conflict, width);
    let state = state.trim();
    if with_path != state && with_path.width() + label.width() + 5 <= w {
        return format!(" {with_path} · {label} ");
    }
    // No room for the path: the state first, the focus in what is left, or not at all.
    let sep = if state.is_empty() {
        2
    } else {
        state.width() + 5
    };
    let left = w.saturating_sub(sep);
    if left < MIN_PATH_COLUMNS {
        return editor_title(path, countdown, paused, dirty, conflict, width);
    }
    let label = super::wrap::truncate(full, left);
    if state.is_empty() {
        format!(" {label} ")
    } else {
        format!(" {state} · {label} ")
    }
}

/// A bordered block for the editor with `title`, its border in the focus style when focused.
pub(crate) fn editor_block(title: &str, theme: &Theme, focused: bool) -> Block<'static> {
    let (border, kind) = if focused {
        (theme.border_focus, BorderType::Thick)
    } else {
        (theme.border, BorderType::Plain)
    };
    Block::default()
        .borders(Borders::ALL)
        .border_type(kind)
        .border_style(border)
        .title(title.to_string())
        .title_style(if focused {
            theme.border_focus
        } else {
            theme.dim
        })
}

/// How the textareas look, taken from the theme once: the reducer styles the input and the side
/// editor with it when the focus moves (the style lives inside the textarea it edits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TextAreaStyles {
    /// Text.
    pub(crate) text: Style,
    /// The input's placeholder.
    pub(crate) placeholder: Style,
    /// The cursor of the focused textarea.
    pub(crate) cursor: Style,
    /// Selected text.
    pub(crate) selection: Style,
    /// Markdown headings in the side editor.
    pub(crate) heading: Style,
    /// The border of a focused textarea that has a block.
    pub(crate) border_focus: Style,
    /// The border of an unfocused textarea that has a block.
    pub(crate) border: Style,
}

impl TextAreaStyles {
    /// The textarea styles of `theme`.
    pub(crate) fn from_theme(theme: &Theme) -> Self {
        TextAreaStyles {
            text: theme.text,
            placeholder: theme.dim,
            cursor: theme.cursor,
            selection: theme.selection,
            heading: theme.editor_heading,
            border_focus: theme.border_focus,
            border: theme.border,
        }
    }
}

/// Styles the input box: text, placeholder, and a cursor only when focused.
pub(crate) fn style_input(area: &mut TextArea<'_>, styles: &TextAreaStyles, focused: bool) {
    area.set_style(styles.text);
    area.set_placeholder_style(styles.placeholder);
    area.set_cursor_style(if focused {
        styles.cursor
    } else {
        Style::default()
    });
}

/// Styles the side editor's textarea: text, selection, a cursor only when focused, headings
/// highlighted, and the existing block's border (title kept) in the focus style when focused.
pub(crate) fn style_editor(area: &mut TextArea<'_>, styles: &TextAreaStyles, focused: bool) {
    area.set_style(styles.text);
    area.set_selection_style(styles.selection);
    area.set_cursor_line_style(Style::new());
    area.set_cursor_style(if focused { styles.cursor } else { styles.text });
    // The pattern is a constant known to compile; a failure would only lose the highlight.
    if area.set_search_pattern(HEADING_PATTERN).is_ok() {
        area.set_search_style(styles.heading);
    }
    if let Some(block) = area.block().cloned() {
        let (border, kind) = if focused {
            (styles.border_focus, BorderType::Thick)
        } else {
            (styles.border, BorderType::Plain)
        };
        area.set_block(block.border_style(border).border_type(kind));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use ratatui::style::Modifier;

    #[test]
    fn titles() {
        assert_eq!(
            editor_title("notes/h.md", None, false, false, false, 40),
            " notes/h.md "
        );
        assert_eq!(
            editor_title("notes/h.md", Some(12), false, true, false, 40),
            " successor in 12s · [+] notes/h.md "
        );
        assert_eq!(
            editor_title("notes/h.md", Some(3), true, true, true, 100),
            " paused · ctrl-s save & continue · esc continue · changed on disk · [+] notes/h.md "
        );
        assert_eq!(
            editor_title("notes/h.md", None, false, true, true, 40),
            " changed on disk · [+] notes/h.md "
        );
    }

    #[test]
    fn narrow_titles_keep_the_state_and_cut_the_path_from_the_left() {
        let path = "…/.flower/notes/handoff-fix-macos-build.md";
        // A 100-column terminal: the editor is 50 wide, 48 columns between the corners.
        let t = editor_title(path, Some(12), false, false, false, 48);
        assert_eq!(t, " successor in 12s · …handoff-fix-macos-build.md ");
        assert_eq!(t.width(), 48);
        let t = editor_title(path, Some(12), true, true, false, 48);
        assert_eq!(t, " paused · ctrl-s/esc continue · [+] …s-build.md ");
        assert_eq!(t.width(), 48);
        assert_eq!(
            editor_title(path, Some(7), false, true, false, 24),
            " successor in 7s · [+] ",
            "no room for the path: the state stays"
        );
        assert_eq!(
            editor_title("h.md", None, false, false, false, 2),
            " h.md ",
            "nothing else to show: the path, clipped by the border"
        );
        assert_eq!(shorten_left("abcdef", 6), "abcdef");
        assert_eq!(shorten_left("notes/handoff.md", 10), "…andoff.md");
        assert_eq!(shorten_left("notes/handoff.md", 7), "");
    }

    #[test]
    fn titles_with_the_standing_focus() {
        let t = |focus: Option<&str>, width: u16| {
            let tag = title_tag(None, focus);
            editor_title_tagged(
                "notes/h.md",
                Some(12),
                false,
                false,
                false,
                tag.as_deref(),
                width,
            )
        };
        assert_eq!(
            t(None, 60),
            editor_title("notes/h.md", Some(12), false, false, false, 60)
        );
        assert_eq!(t(Some("  \n "), 60), t(None, 60), "a blank focus is none");
        assert_eq!(
            t(Some("the parser\nbug"), 60),
            " successor in 12s · notes/h.md · focus: the parser bug "
        );
        // Narrower: the path goes first, then the focus is cut; the countdown always stays.
        let narrow = t(Some("the nested quotes bug in lex()"), 48);
        assert_eq!(narrow, " successor in 12s · focus: the nested quotes b… ");
        assert_eq!(narrow.width(), 48);
        let tiny = t(Some("the nested quotes bug in lex()"), 26);
        assert_eq!(tiny, " successor in 12s ", "the countdown before the focus");
        assert_eq!(
            editor_title_tagged("h.md", None, false, false, false, Some("focus: parser"), 60),
            " h.md · focus: parser "
        );
    }

    #[test]
    fn a_degraded_document_says_why_in_the_title() {
        let why = "the document restated its instructions (words from the prompt: doing 100%)";
        assert_eq!(
            title_tag(Some(why), Some("the parser")).as_deref(),
            Some(format!("DEGRADED: {why}").as_str()),
            "the reason before the focus"
        );
        assert_eq!(
            title_tag(Some(" \n"), Some("the\nparser")).as_deref(),
            Some("focus: the parser")
        );
        assert_eq!(title_tag(None, None), None);
        let tag = title_tag(Some(why), None);
        let t = editor_title_tagged(
            "notes/h.md",
            Some(12),
            false,
            false,
            false,
            tag.as_deref(),
            78,
        );
        assert_eq!(
            t,
            " successor in 12s · notes/h.md · DEGRADED: the document restated its in… "
        );
        assert!(t.width() <= 78, "{t}");
    }

    #[test]
    fn headings_are_highlighted() {
        let theme = Theme::plain();
        let mut ta = TextArea::new(vec![
            "# Handoff".to_string(),
            "## Doing".to_string(),
            "plain #text".to_string(),
        ]);
        ta.set_block(editor_block(
            &editor_title("h.md", Some(9), false, false, false, 38),
            &theme,
            true,
        ));
        style_editor(&mut ta, &TextAreaStyles::from_theme(&theme), true);
        let mut t = Terminal::new(TestBackend::new(40, 6)).unwrap();
        t.draw(|f| f.render_widget(&ta, f.area())).unwrap();
        let buf = t.backend().buffer();
        // Row 1 is the first text row inside the border; row 2 holds `## Doing`.
        let bold = |x: u16, y: u16| buf[(x, y)].modifier.contains(Modifier::BOLD);
        assert!(
            bold(3, 2) && bold(8, 2),
            "`## Doing` is in the heading style"
        );
        assert!(!bold(3, 3), "a plain line is not");
        insta::assert_snapshot!("editor_40x6", t.backend());
        style_editor(&mut ta, &TextAreaStyles::from_theme(&theme), false);
        let mut t = Terminal::new(TestBackend::new(1, 1)).unwrap();
        t.draw(|f| f.render_widget(&ta, f.area())).unwrap();
    }
}
