//! Tests of the markdown renderer: blocks and inlines, lists, a half-streamed fence, code
//! wrapping, the highlight limit, tables, kept line breaks, and every width respected.

use super::*;
use ratatui::style::Color;

fn text(src: &str, width: usize) -> Vec<String> {
    render_markdown(src, width, &Theme::plain())
        .iter()
        .map(|l| l.to_string())
        .collect()
}

#[test]
fn blocks_and_inlines() {
    let md = "# Title\n\nSome *em* and **strong** and `code`.\n\n> quoted text\n\n---\n\nA [link](https://x.io) and <https://y.io>.";
    assert_eq!(
        text(md, 40),
        [
            "Title",
            "",
            "Some em and strong and code.",
            "",
            "▎ quoted text",
            "",
            "────────────────────────────────────────",
            "",
            "A link (https://x.io) and https://y.io.",
        ]
    );
}

#[test]
fn single_line_breaks_are_kept() {
    assert_eq!(
        text("Files changed:\nsrc/a.rs\nsrc/b.rs", 40),
        ["Files changed:", "src/a.rs", "src/b.rs"]
    );
    // Inside a list item, a quote and a heading's underline too; a line still wraps at words.
    assert_eq!(
        text("- first line\n  second line\n\n> quoted\n> again", 40),
        ["• first line", "  second line", "", "▎ quoted", "▎ again"]
    );
    assert_eq!(text("one two three\nfour", 8), ["one two", "three", "four"]);
    // A break inside a link's text: the URL still follows the link.
    assert_eq!(
        text("[see\nthis](https://x.io)", 40),
        ["see", "this (https://x.io)"]
    );
    // An HTML block keeps its lines.
    assert_eq!(
        text("<div>\n<p>x</p>\n</div>", 40),
        ["<div>", "<p>x</p>", "</div>"]
    );
}

#[test]
fn nested_and_numbered_lists() {
    let md = "- one\n- two\n  - inner a\n  - inner b\n    1. deep\n- three\n\n3. c\n4. d\n";
    assert_eq!(
        text(md, 40),
        [
            "• one",
            "• two",
            "  ◦ inner a",
            "  ◦ inner b",
            "    1. deep",
            "• three",
            "",
            "3. c",
            "4. d",
        ]
    );
    // Wrapped list items hang under their text.
    assert_eq!(
        text("- alpha beta gamma delta", 12),
        ["• alpha beta", "  gamma", "  delta"]
    );
    assert_eq!(
        text("- [x] done\n- [ ] todo", 20),
        ["• [x] done", "• [ ] todo"]
    );
}

#[test]
fn half_streamed_fence_is_code() {
    // Mid-stream: the fence is open, the last line is half written.
    let md = "Here:\n\n```rust\nfn main() {\n    let x";
    let lines = render_markdown(md, 40, &Theme::builtin("dark").unwrap());
    let t: Vec<String> = lines
        .iter()
        .map(|l| l.to_string().trim_end().to_string())
        .collect();
    assert_eq!(t, ["Here:", "", " fn main() {", "     let x"]);
    assert!(!t.iter().any(|l| l.contains("```")), "no raw fence shown");
    // Highlighted: the code line has several foreground colours, on the code background.
    let fgs: std::collections::HashSet<Color> =
        lines[2].spans.iter().filter_map(|s| s.style.fg).collect();
    assert!(fgs.len() >= 2, "{fgs:?}");
    let bg = Theme::builtin("dark").unwrap().code_bg.bg;
    assert!(lines[2].spans.iter().all(|s| s.style.bg == bg));
    assert_eq!(
        lines[2].width(),
        40,
        "code lines are padded across the width"
    );
    // Half a list and half an emphasis render as text, without panicking.
    assert_eq!(text("1. first\n2. sec", 40), ["1. first", "2. sec"]);
    assert_eq!(text("some **bol", 40), ["some **bol"]);
}

#[test]
fn code_wraps_by_character_and_keeps_indent() {
    let md = "```\nabcdefghijkl\n  x\n```";
    assert_eq!(text(md, 6), [" abcde", " fghij", " kl", "   x"]);
}

#[test]
fn big_documents_are_not_highlighted() {
    let filler = "word ".repeat(MAX_DOC_BYTES / 5 + 10);
    let md = format!("{filler}\n\n```rust\nfn main() {{}}\n```\n");
    let theme = Theme::builtin("dark").unwrap();
    let lines = render_markdown(&md, 80, &theme);
    let code = lines
        .iter()
        .find(|l| l.to_string().contains("fn main"))
        .unwrap();
    assert!(
        code.spans.iter().all(|s| s.style.fg == theme.code_bg.fg),
        "plain code style"
    );
}

#[test]
fn tables_align_or_wrap() {
    let md = "| name | n |\n|:-----|--:|\n| alpha | 1 |\n| b | 22 |\n";
    assert_eq!(
        text(md, 40),
        ["name  │  n", "──────┼───", "alpha │  1", "b     │ 22"]
    );
    let narrow = text(md, 6);
    assert!(
        narrow
            .iter()
            .all(|l| unicode_width::UnicodeWidthStr::width(l.as_str()) <= 6),
        "{narrow:?}"
    );
}

#[test]
fn every_width_is_respected() {
    let md = "# A heading that is long\n\n- item with `inline code` and a [link](http://example.com/a/b)\n  > quote inside\n\n```py\nprint('hello world')\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n";
    // A rule inside a list item at width 1 (found by proptest).
    assert_eq!(text("- ****\n", 1), ["─"]);
    for w in 1..60 {
        for l in render_markdown(md, w, &Theme::builtin("light").unwrap()) {
            assert!(l.width() <= w.max(1), "width {w}: {:?}", l.to_string());
        }
    }
}

proptest::proptest! {
    #[test]
    fn any_markdown_renders_within_width(
        src in "(#{1,3} |- |1\\. |> |```|`|\\*\\*|\\*|\\[x\\]\\(u\\)|\\| a \\||\n|[a-z]{1,8}| ){0,40}",
        width in 1usize..50,
    ) {
        for l in render_markdown(&src, width, &Theme::builtin("dark").unwrap()) {
            proptest::prop_assert!(l.width() <= width, "{:?}", l.to_string());
        }
    }
}
