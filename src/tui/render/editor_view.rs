//! The side editor's look (SPEC §8): its title (file, unsaved mark, conflict, review countdown) and
//! the textarea styling that makes `## Doing`-style headings stand out.

use ratatui::widgets::{Block, BorderType, Borders};
use ratatui_textarea::TextArea;

use super::theme::Theme;

/// Markdown heading lines, highlighted in the editor.
pub const HEADING_PATTERN: &str = r"^#{1,6}\s.*";

/// The editor title, e.g. ` notes/handoff-x.md [+] · successor in 12s `. `countdown` is the review
/// window's seconds left (`None` when no review is running); `paused` once the user typed in it.
pub fn editor_title(
    path: &str,
    countdown: Option<u64>,
    paused: bool,
    dirty: bool,
    conflict: bool,
) -> String {
    let mut t = format!(" {path}");
    if dirty {
        t.push_str(" [+]");
    }
    if conflict {
        t.push_str(" · changed on disk");
    }
    match (countdown, paused) {
        (Some(_), true) => t.push_str(" · paused · ctrl-s save & continue · esc continue"),
        (Some(s), false) => t.push_str(&format!(" · successor in {s}s")),
        (None, _) => {}
    }
    t.push(' ');
    t
}

/// A bordered block for the editor with `title`, its border in the focus style when focused.
pub fn editor_block(title: &str, theme: &Theme, focused: bool) -> Block<'static> {
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

/// Styles the textarea: text, selection, a cursor only when focused, headings highlighted, and the
/// existing block's border (title kept) in the focus style when focused.
pub fn style_editor(area: &mut TextArea<'_>, theme: &Theme, focused: bool) {
    area.set_style(theme.text);
    area.set_selection_style(theme.selection);
    area.set_cursor_line_style(ratatui::style::Style::new());
    area.set_cursor_style(if focused { theme.cursor } else { theme.text });
    // The pattern is a constant known to compile; a failure would only lose the highlight.
    if area.set_search_pattern(HEADING_PATTERN).is_ok() {
        area.set_search_style(theme.editor_heading);
    }
    if let Some(block) = area.block().cloned() {
        let (border, kind) = if focused {
            (theme.border_focus, BorderType::Thick)
        } else {
            (theme.border, BorderType::Plain)
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
            editor_title("notes/h.md", None, false, false, false),
            " notes/h.md "
        );
        assert_eq!(
            editor_title("notes/h.md", Some(12), false, true, false),
            " notes/h.md [+] · successor in 12s "
        );
        assert_eq!(
            editor_title("notes/h.md", Some(3), true, true, true),
            " notes/h.md [+] · changed on disk · paused · ctrl-s save & continue · esc continue "
        );
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
            &editor_title("h.md", Some(9), false, false, false),
            &theme,
            true,
        ));
        style_editor(&mut ta, &theme, true);
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
        style_editor(&mut ta, &theme, false);
        let mut t = Terminal::new(TestBackend::new(1, 1)).unwrap();
        t.draw(|f| f.render_widget(&ta, f.area())).unwrap();
    }
}
