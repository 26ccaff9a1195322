//! Tests of the streamed message's view: what is streamed renders as the whole text would, across
//! every cut the controller makes, the highlight and document limits, and deltas and resizes.

use super::*;
use crate::tui::render::stream::StreamCommits;

fn dark() -> Theme {
    Theme::builtin("dark").unwrap()
}

/// Streams `doc` in pieces of `step` chars and checks, after every piece, that the stream view
/// shows exactly what rendering the whole text so far shows. Every `fresh`th check also draws a
/// new view from the commits (the path of a resize or a first frame).
fn check_streamed(doc: &str, step: usize, width: u16, theme: &Theme, fresh: usize) {
    let mut commits = StreamCommits::new();
    let mut view = StreamLines::new(width);
    let mut text = String::new();
    let chars: Vec<char> = doc.chars().collect();
    for (n, piece) in chars.chunks(step.max(1)).enumerate() {
        text.extend(piece);
        commits.advance(&text);
        view.update(&text, &commits, width, theme);
        let want = render_markdown(&text, usize::from(width), theme);
        assert_eq!(
            view.to_vec(),
            want,
            "streamed in {step}s at {width} cols, after {:?}",
            text
        );
        if fresh > 0 && n % fresh == 0 {
            let mut again = StreamLines::new(width);
            again.update(&text, &commits, width, theme);
            assert_eq!(again.to_vec(), want, "drawn fresh after {:?}", text);
        }
    }
}

/// Every prefix, at two widths and both themes, and in bigger deltas.
fn check(doc: &str) {
    for theme in [dark(), Theme::plain()] {
        check_streamed(doc, 1, 40, &theme, 7);
        check_streamed(doc, 1, 13, &theme, 0);
        check_streamed(doc, 5, 80, &theme, 3);
        check_streamed(doc, 23, 40, &theme, 1);
    }
}

#[test]
fn prose_and_lists_that_continue_across_blank_lines() {
    check(
        "Intro line\nstill intro\n\n- a\n\n- b\n\n  more b\n\n- c\nafter\n\nEnd para.\n\n1. one\n\n2. two\n\n10. ten\n\nDone\n",
    );
}

#[test]
fn a_list_continuing_across_the_commit_point_renders_as_one_list() {
    let doc = "Steps:\n\n1. first\n\n2. second\n\n3. third\n";
    check(doc);
    // The list is never cut: its items stay in the tail, numbered as one list.
    let commits = StreamCommits::of(doc);
    assert_eq!(commits.committed(), "Steps:\n\n".len());
    let mut view = StreamLines::new(40);
    view.update(doc, &commits, 40, &Theme::plain());
    let shown: Vec<String> = view.to_vec().iter().map(|l| l.to_string()).collect();
    assert_eq!(
        shown,
        ["Steps:", "", "1. first", "", "2. second", "", "3. third"]
    );
}

#[test]
fn code_fences_and_what_follows_them() {
    check(
        "Text:\n```rust\nfn main() {\n    let s = \"a\\nb\";\n    /* a block\n    comment */\n}\n```\nAfter\n\n```\nplain\n\n\nx\n```\n\n~~~python\ndef f():\n    return 1\n~~~\n\n````md\n```\nnot closed\n````\n",
    );
}

#[test]
fn a_fence_open_across_the_commit_point_still_highlights() {
    let theme = dark();
    // A block comment opened in the committed part and still open in the live last line.
    let doc = "Look:\n\n```rust\nfn f() {\n    /* one\n    two";
    check(doc);
    let commits = StreamCommits::of(doc);
    assert!(commits.open_fence().is_some());
    assert_eq!(commits.committed(), doc.rfind('\n').unwrap() + 1);
    let mut view = StreamLines::new(40);
    view.update(doc, &commits, 40, &theme);
    let lines = view.to_vec();
    assert_eq!(lines, render_markdown(doc, 40, &theme));
    // The live line is in the comment's colour, not the plain code colour.
    let last = lines.last().unwrap();
    let two = last
        .spans
        .iter()
        .find(|s| s.content.contains("two"))
        .unwrap();
    let plain = theme.code_bg;
    assert_ne!(two.style.fg, plain.fg, "{last:?}");
    let comment = lines[lines.len() - 2]
        .spans
        .iter()
        .find(|s| s.content.contains("one"))
        .unwrap();
    assert_eq!(
        two.style.fg, comment.style.fg,
        "both lines are in the comment"
    );
}

#[test]
fn fences_inside_list_items() {
    check(
        "1. Run:\n   ```sh\n   cargo test\n\n   echo done\n   ```\n2. Then\n\n- ```rust\n  let x = 1;\n  ```\n\nAfter the list.\n\n- a\n ```\ncode\n\nfoo\n ```\n\n- b\n   ```\n  x\n```\nlast\n",
    );
}

#[test]
fn headings_quotes_and_tables() {
    check(
        "# Title\ntext\n## Sub\n- item\n# Next\n> quote\n# After quote\n\n> a\n> b\n\n> c\n\nplain\n> lazy\ncontinued\n\n| a | b |\n|---|:-:|\n| 1 | 2 |\n```\ncode after a table\n```\n\n| x |\n| - |\n\nTitle\n=====\n\n    indented code\n\n    more\n\nSub\n---\ntext\n***\n",
    );
}

#[test]
fn html_link_definitions_escapes_and_line_ends() {
    check("para\n\n<div>\nhi\n\n</div>\n\n```\ncode\n```\n\nafter html\n");
    check(
        "See [the docs][d] and [x].\n\n[d]: https://docs.rs\n\nMore\n\n- [x]: https://x.io\n\nend\n",
    );
    check("a\tb\n\n\u{1b}[31mred\u{1b}[0m\n\nmore\n```\nx\u{1b}\n```\nlast\n");
    check("```rust\nfn a() {\u{1b}\n}\n```\n\nafter\n");
    check("a\r\n\r\n```rust\r\nfn a() {}\r\n```\r\nb\r\n");
}

#[test]
fn inline_spans_unicode_and_odd_fences() {
    check("*a\nb* and `c\nd`\n\n**e**\n\n- [ ] todo\n- [x] done\n\n1) x\n2) y\n");
    check("Über 世界\n\n- ünïcode\n\n```\n→ arrow ✓\n```\n");
    check("```\n```\n\n```rust\n```\n\n``` a`b\nnot a fence\n```\n\n```rust\n");
    check("    ```\n    not a fence\n\n```\nx\n\n```\n\n   ```\n   three spaces\n   ```\n");
    // Found by the random documents below: an empty heading after a closed fence still gets
    // its blank line; a short unfinished line of spaces in a fence is not code.
    check("```rust\nclose */ }\n```\n#\n\n```\nfoo\n   \n    \nend\n```\n");
}

#[test]
fn a_code_block_crossing_the_highlight_limit_turns_plain_as_a_whole() {
    let theme = dark();
    let line = "let value = compute(alpha, beta); // a comment\n";
    let n = MAX_CODE_BYTES / line.len() + 3;
    let body = line.repeat(n);
    let doc = format!("Intro\n\n```rust\n{body}```\n\nafter\n");
    let mut commits = StreamCommits::new();
    let mut view = StreamLines::new(60);
    let mut text = String::new();
    let around = "Intro\n\n```rust\n".len() + MAX_CODE_BYTES - 10 * line.len();
    let mut checked = 0;
    for piece in doc.as_bytes().chunks(29) {
        text.push_str(std::str::from_utf8(piece).unwrap());
        commits.advance(&text);
        view.update(&text, &commits, 60, &theme);
        if text.len() >= around {
            assert_eq!(
                view.to_vec(),
                render_markdown(&text, 60, &theme),
                "at {}",
                text.len()
            );
            checked += 1;
        }
    }
    assert!(checked > 10);
    let lines = view.to_vec();
    let code = lines
        .iter()
        .find(|l| l.to_string().contains("compute"))
        .unwrap();
    assert!(
        code.spans.iter().all(|s| s.style.fg == theme.code_bg.fg),
        "a block over the limit is plain: {code:?}"
    );
}

#[test]
fn a_message_crossing_the_document_limit_turns_plain() {
    let theme = dark();
    let section = "Some prose here.\n\n```rust\nfn f() -> u32 { 1 }\n```\n\n";
    let doc = section.repeat(MAX_DOC_BYTES / section.len() + 4);
    let mut commits = StreamCommits::new();
    let mut view = StreamLines::new(60);
    let mut text = String::new();
    let mut checked = 0;
    for piece in doc.as_bytes().chunks(61) {
        text.push_str(std::str::from_utf8(piece).unwrap());
        commits.advance(&text);
        view.update(&text, &commits, 60, &theme);
        let near = text.len().abs_diff(MAX_DOC_BYTES) < 400;
        if near || text.len() == doc.len() {
            assert_eq!(
                view.to_vec(),
                render_markdown(&text, 60, &theme),
                "at {}",
                text.len()
            );
            checked += 1;
        }
    }
    assert!(checked > 5);
}

#[test]
fn deltas_in_the_tail_do_not_redraw_the_committed_part() {
    let theme = dark();
    let mut text = "# Title\n\nA paragraph.\n\n```rust\nlet x = 1;\n```\n\n".repeat(40);
    let mut commits = StreamCommits::of(&text);
    let mut view = StreamLines::new(60);
    view.update(&text, &commits, 60, &theme);
    let first = view.drawn();
    assert_eq!(first, commits.committed());
    for k in 0..100 {
        text.push_str(&format!("word{k} "));
        commits.advance(&text);
        view.update(&text, &commits, 60, &theme);
    }
    assert_eq!(view.drawn(), first, "only the tail was drawn");
    assert_eq!(view.to_vec(), render_markdown(&text, 60, &theme));
    // A code block streaming line by line draws each line once.
    text.push_str("\n\n```rust\n");
    for k in 0..50 {
        text.push_str(&format!("let v{k} = {k};\n"));
        commits.advance(&text);
        view.update(&text, &commits, 60, &theme);
    }
    assert_eq!(view.drawn(), commits.committed());
    assert_eq!(view.to_vec(), render_markdown(&text, 60, &theme));
}

#[test]
fn a_resize_redraws_the_committed_part() {
    let theme = dark();
    let doc = "A paragraph long enough to wrap at twenty columns.\n\n```rust\nlet x = 1;\n";
    let commits = StreamCommits::of(doc);
    let mut view = StreamLines::new(80);
    view.update(doc, &commits, 80, &theme);
    view.update(doc, &commits, 20, &theme);
    assert_eq!(view.to_vec(), render_markdown(doc, 20, &theme));
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(96))]
    /// Documents made of tricky lines, streamed in random pieces: the view always equals the
    /// whole-text render.
    #[test]
    fn random_documents_stream_exactly(
        picks in proptest::collection::vec(0usize..LINES.len(), 1..40),
        step in 1usize..30,
        width in 8u16..60,
    ) {
        let doc: String = picks.iter().filter_map(|&i| LINES.get(i)).copied().collect();
        check_streamed(&doc, step, width, &dark(), 5);
    }
}

const LINES: &[&str] = &[
    "\n",
    "\n",
    "plain text line\n",
    "more *emphasis* and `code`\n",
    "- item\n",
    "  continued item\n",
    "1. numbered\n",
    "2) other\n",
    "> quote\n",
    "```rust\n",
    "```\n",
    "~~~\n",
    "   ```sh\n",
    " ```\n",
    "    indented\n",
    "fn main() { /* open\n",
    "close */ }\n",
    "# Heading\n",
    "## Sub heading\n",
    "Setext\n",
    "===\n",
    "---\n",
    "| a | b |\n",
    "|---|---|\n",
    "[ref]: https://x.io\n",
    "see [ref] here\n",
    "<div>\n",
    "tab\there\n",
    "- ```\n",
    "日本語の行\n",
    "10. ```sh\n",
    "> ```\n",
    "> code in a quote\n",
    "<!-- comment\n",
    "~~~~\n",
    "hard break  \n",
    "* * *\n",
    "+ plus item\n",
    "   - nested item\n",
    "\t- tab item\n",
    "<https://auto.link> and ![img](x.png)\n",
    "    ```\n",
    "``` rust\n",
    "```rust `x`\n",
    "-\n",
    "1.\n",
    "# \n",
    "####### seven\n",
    "   \n",
    "  ",
    "`",
    "```",
    "[",
    "]: x",
];
