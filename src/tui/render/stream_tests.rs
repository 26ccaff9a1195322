//! Tests of the stream controller: where it cuts a message (between blocks, after each code line
//! of a fence) and where it stops cutting, scanned once and incrementally.

use super::*;

/// The committed segments of `text` as `(text, kind)`, kinds as `B` (blocks) or `F` (fence,
/// `F+` once closed).
fn cuts(text: &str) -> Vec<(&str, &'static str)> {
    StreamCommits::of(text)
        .segments()
        .iter()
        .map(|s| {
            let kind = match &s.kind {
                SegmentKind::Blocks => "B",
                SegmentKind::Fence(f) if f.closed => "F+",
                SegmentKind::Fence(_) => "F",
            };
            (&text[s.start..s.end], kind)
        })
        .collect()
}

#[test]
fn paragraphs_commit_when_the_next_block_starts() {
    assert_eq!(cuts("one\ntwo"), []);
    assert_eq!(cuts("one\n\n"), [], "the next block may still continue it");
    assert_eq!(cuts("one\n\ntwo\n"), [("one\n\n", "B")]);
    assert_eq!(
        cuts("one\n\ntwo\n\nthree"),
        [("one\n\n", "B")],
        "a line is classified once it is complete"
    );
    assert_eq!(cuts("one\n\ntwo\n\nthree\n"), [("one\n\ntwo\n\n", "B")]);
}

#[test]
fn lists_and_indented_lines_are_not_cut() {
    assert_eq!(cuts("- a\n\n- b\n\n  c\n\n1. d\n"), []);
    assert_eq!(cuts("- a\n\n- b\n\nafter\n"), [("- a\n\n- b\n\n", "B")]);
    assert_eq!(
        cuts("Steps:\n\n1. a\n\n2. b\n"),
        [("Steps:\n\n", "B")],
        "a list may start after a cut, not continue across one"
    );
    assert_eq!(cuts("> q\n\n- a\n"), [], "a quote may hold the list");
}

#[test]
fn fences_commit_line_by_line_and_close() {
    assert_eq!(
        cuts("Text:\n```rust\n"),
        [("Text:\n", "B"), ("```rust\n", "F")]
    );
    assert_eq!(
        cuts("Text:\n```rust\nlet a;\n\nlet b;\npartial"),
        [("Text:\n", "B"), ("```rust\nlet a;\n\nlet b;\n", "F")]
    );
    let c = StreamCommits::of("```rust\nlet a;\n");
    let f = c.open_fence().unwrap();
    assert_eq!((f.info.as_str(), f.indent), ("rust", 0));
    assert_eq!(
        cuts("```\na\n```\nnext\n"),
        [("```\na\n```\n", "F+")],
        "the line after a closing fence starts the tail"
    );
    assert_eq!(
        cuts("```\na\n```\nnext\n\nmore\n"),
        [("```\na\n```\n", "F+"), ("next\n\n", "B")]
    );
    assert_eq!(cuts("````\n```\n````\n"), [("````\n```\n````\n", "F+")]);
    assert!(StreamCommits::of("```\na\n```\n").open_fence().is_none());
}

#[test]
fn headings_and_fences_at_column_zero_close_what_was_open() {
    assert_eq!(cuts("- a\n# H\n"), [("- a\n", "B")]);
    assert_eq!(cuts("> q\n```\n"), [("> q\n", "B"), ("```\n", "F")]);
    assert_eq!(cuts("#hashtag\n"), [], "not a heading");
}

#[test]
fn fences_in_list_items_are_followed_but_not_cut() {
    let c = StreamCommits::of("1. Run:\n   ```sh\n   cargo test\n\n   ```\n2. next\n\nafter\n");
    assert_eq!(
        c.committed(),
        "1. Run:\n   ```sh\n   cargo test\n\n   ```\n2. next\n\n".len()
    );
    assert!(c.open_fence().is_none());
    // A blank line and a column-0 line inside a top-level fence are code, not a cut.
    let c = StreamCommits::of("```\ncode\n\nfoo\n");
    assert_eq!(c.segments().len(), 1);
    assert!(c.open_fence().is_some());
}

#[test]
fn what_it_cannot_follow_stops_the_cuts() {
    // HTML may run over blank lines.
    assert_eq!(cuts("a\n\n<div>\n\nb\n\nc\n"), [("a\n\n", "B")]);
    // A link definition applies to the text before it: every cut is undone.
    assert_eq!(cuts("a\n\nb [x]\n\n[x]: https://x.io\n\nc\n"), []);
    // An escape inside an open fence gives the fence back to the tail.
    assert_eq!(cuts("p\n\n```\na\nb\u{1b}\nc\n\nd\n"), [("p\n\n", "B")]);
    // A nested fence whose lines leave the item's indentation.
    assert_eq!(cuts("- a\n  ```\nx\n\ny\n"), []);
}

#[test]
fn scanning_is_incremental() {
    let text = "one\n\ntwo\n\n```rust\nlet a = 1;\nlet b = 2;\n```\nthree\n\nfour";
    let whole = StreamCommits::of(text);
    let mut by_char = StreamCommits::new();
    for (i, c) in text.char_indices() {
        by_char.advance(&text[..i + c.len_utf8()]);
    }
    assert_eq!(by_char, whole);
}

#[test]
fn a_typical_answer_commits_all_but_its_last_blocks() {
    let answer = "## Plan\n\nI read `src/lib.rs`. Two things:\n\n1. The parser keeps `\\r`.\n2. The test misses CRLF.\n\n   ```rust\n   assert_eq!(parse(\"a\\r\\n\"), [\"a\"]);\n   ```\n\nThe fix:\n\n```rust\nfn next_line(src: &str) -> Option<&str> {\n    let line = src.lines().next()?;\n    Some(line.strip_suffix('\\r').unwrap_or(line))\n}\n```\n\n> Note: Windows files only.\n\nThen I ran the tests and they";
    let c = StreamCommits::of(answer);
    let tail = &answer[c.committed()..];
    // The last complete block and the line being written (classified once it is complete).
    assert_eq!(
        tail,
        "> Note: Windows files only.\n\nThen I ran the tests and they"
    );
    // Mid-fence, the tail is the line being written.
    let cut = answer.find("    Some(line").unwrap() + 10;
    let c = StreamCommits::of(&answer[..cut]);
    assert!(c.open_fence().is_some());
    assert_eq!(&answer[c.committed()..cut], "    Some(l");
}
