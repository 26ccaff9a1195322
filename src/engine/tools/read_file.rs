//! `read_file`: numbered lines of a text file, one page at a time.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};

use serde_json::json;

use super::args::Args;
use super::{Denied, ToolCtx, ToolOutput, ToolResult, paths};
use crate::engine::images::Format;
use crate::engine::text::{BINARY_SNIFF_BYTES, looks_binary, numbered};
use crate::engine::types::ToolSpec;

/// Lines returned when the call names no limit.
pub(crate) const DEFAULT_LIMIT: usize = 2000;
/// Longer lines are cut to this many characters.
pub(crate) const MAX_LINE_CHARS: usize = 2000;
/// One page never exceeds this many characters; the rest is read with `offset`.
pub(crate) const MAX_OUTPUT_CHARS: usize = 100_000;

pub(super) fn spec() -> ToolSpec {
    ToolSpec {
        name: super::names::READ_FILE.into(),
        description: format!(
            "Read a text file. Returns its lines numbered like `cat -n` (line number, tab, text). \
             Reads up to {DEFAULT_LIMIT} lines from `offset` (1-based, default 1); a long file is \
             read page by page: the result says which `offset` continues it. Lines longer than \
             {MAX_LINE_CHARS} characters are cut. An image (PNG, JPEG, GIF, WebP) is returned as \
             an image you can see (scaled down when large); other binary files are refused. \
             Paths are relative to the workspace root. Read a file before editing it."
        ),
        input_schema: json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File to read, relative to the workspace (or absolute)."},
                "offset": {"type": "integer", "minimum": 1, "description": "First line to read, 1-based. Default 1."},
                "limit": {"type": "integer", "minimum": 1, "description": format!("How many lines to read. Default {DEFAULT_LIMIT}.")}
            },
            "required": ["path"],
            "additionalProperties": false
        }),
    }
}

pub(super) fn run(args: &Args, ctx: &ToolCtx) -> ToolResult {
    let raw = args.str("path")?;
    let offset = args.opt_u64("offset")?.unwrap_or(1).max(1) as usize;
    let limit = match args.opt_u64("limit")? {
        Some(0) => return Err("`read_file`: `limit` must be at least 1.".into()),
        Some(n) => n.min(usize::MAX as u64) as usize,
        None => DEFAULT_LIMIT,
    };
    let path = paths::check(ctx, raw, true)?;
    let shown = paths::display(&ctx.workspace, &path);
    if let Some(rule) = ctx.denied.reading(&path) {
        return Err(Denied::refusal(&shown, &rule).into());
    }
    let meta = match std::fs::metadata(&path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(paths::not_found(&ctx.workspace, &path, "File").into());
        }
        Err(e) => return Err(format!("Cannot read {shown}: {e}").into()),
    };
    if meta.is_dir() {
        return Err(format!(
            "{shown} is a directory, not a file. Use list_dir to see its entries."
        )
        .into());
    }
    if !meta.is_file() {
        return Err(format!(
            "{shown} is not a regular file (a device, socket or pipe); read_file only reads files."
        )
        .into());
    }
    let io_err = |e: io::Error| format!("Cannot read {shown}: {e}");
    let mut head = Vec::with_capacity(BINARY_SNIFF_BYTES);
    File::open(&path)
        .and_then(|f| f.take(BINARY_SNIFF_BYTES as u64).read_to_end(&mut head))
        .map_err(io_err)?;
    if let Some(format) = Format::sniff(&head) {
        return read_image(&path, &shown, format, ctx);
    }
    if looks_binary(&head) {
        return Err(format!(
            "{shown} is a binary file ({} bytes); read_file only shows text.",
            meta.len()
        )
        .into());
    }
    // The front end's text (an editor's unsaved buffer) when it offers one, else the disk's.
    let page = match ctx.files.read(&path) {
        Some(text) => read_page(io::Cursor::new(text.map_err(io_err)?), offset, limit),
        None => {
            let file = File::open(&path).map_err(io_err)?;
            read_page(BufReader::with_capacity(64 * 1024, file), offset, limit)
        }
    }
    .map_err(io_err)?;
    Ok(ToolOutput::ok(page.render(&shown, offset)))
}

/// An image file: stored (scaled) in the run's image store and shown to the model with a line
/// saying what it is; refused when the model in use takes no images.
fn read_image(path: &std::path::Path, shown: &str, format: Format, ctx: &ToolCtx) -> ToolResult {
    let Some(store) = &ctx.images else {
        return Err(format!(
            "{shown} is a {} image; the model in use takes no images, so read_file cannot show \
             it. Ask the user what it shows if you need that.",
            format.label()
        )
        .into());
    };
    let prepared = store
        .add_file(path, shown)
        .map_err(|e| format!("Cannot read the image {shown}: {e}"))?;
    let mut out = ToolOutput::ok(format!("Image {}.", prepared.describe()));
    out.images.push(prepared.image);
    Ok(out)
}

/// What one page read found.
struct Page {
    body: String,
    /// The last line included in `body` (0 when none).
    last_shown: usize,
    /// Lines in the whole file.
    total: usize,
    /// `body` hit [`MAX_OUTPUT_CHARS`] before `limit` lines.
    hit_char_cap: bool,
    invalid_utf8: bool,
}

impl Page {
    fn render(self, shown: &str, offset: usize) -> String {
        if self.total == 0 {
            return format!("({shown} is empty.)");
        }
        if offset > self.total {
            return format!(
                "(offset {offset} is past the end of {shown}, which has {} lines.)",
                self.total
            );
        }
        let mut out = String::with_capacity(self.body.len() + 200);
        if self.invalid_utf8 {
            out.push_str(
                "(Note: this file is not valid UTF-8; invalid bytes are shown as \u{fffd}.)\n",
            );
        }
        out.push_str(&self.body);
        if self.last_shown < self.total {
            let why = if self.hit_char_cap {
                "output limit reached; "
            } else {
                ""
            };
            out.push_str(&format!(
                "\n({why}showing lines {offset}-{} of {}; continue with offset={}.)",
                self.last_shown,
                self.total,
                self.last_shown + 1
            ));
        }
        out
    }
}

fn read_page(mut reader: impl BufRead, offset: usize, limit: usize) -> io::Result<Page> {
    let keep = MAX_LINE_CHARS * 4 + 4;
    let mut buf = Vec::new();
    let mut page = Page {
        body: String::new(),
        last_shown: 0,
        total: 0,
        hit_char_cap: false,
        invalid_utf8: false,
    };
    let mut collecting = true;
    loop {
        let want = if collecting && page.total + 1 >= offset {
            keep
        } else {
            0
        };
        let Some(len) = next_line(&mut reader, &mut buf, want)? else {
            break;
        };
        page.total += 1;
        let n = page.total;
        if !collecting || n < offset {
            continue;
        }
        if n >= offset.saturating_add(limit) {
            collecting = false;
            continue;
        }
        let (text, invalid) = decode_line(&buf, len > buf.len());
        page.invalid_utf8 |= invalid;
        let line = cut_line(&text, len);
        let formatted = numbered(n, &line);
        if page.body.len() + formatted.len() > MAX_OUTPUT_CHARS && page.last_shown >= offset {
            page.hit_char_cap = true;
            collecting = false;
            continue;
        }
        page.body.push_str(&formatted);
        page.last_shown = n;
    }
    Ok(page)
}

/// Reads one line (without its `\n`), keeping at most `keep` bytes of it in `buf`. Returns the
/// line's full length in bytes, or `None` at the end of the input.
fn next_line(
    reader: &mut impl BufRead,
    buf: &mut Vec<u8>,
    keep: usize,
) -> io::Result<Option<usize>> {
    buf.clear();
    let mut len = 0usize;
    let mut any = false;
    loop {
        let chunk = match reader.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok(any.then_some(len));
        }
        any = true;
        let (part, found, used) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (chunk.get(..i).unwrap_or(chunk), true, i + 1),
            None => (chunk, false, chunk.len()),
        };
        if buf.len() < keep {
            let room = keep - buf.len();
            buf.extend(part.iter().take(room));
        }
        len += part.len();
        reader.consume(used);
        if found {
            return Ok(Some(len));
        }
    }
}

/// Decodes a line; an incomplete character at the end of a cut line is not an encoding error.
fn decode_line(bytes: &[u8], was_cut: bool) -> (String, bool) {
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    match std::str::from_utf8(bytes) {
        Ok(s) => (s.to_owned(), false),
        Err(e) if was_cut && e.error_len().is_none() => (
            String::from_utf8_lossy(bytes.get(..e.valid_up_to()).unwrap_or(bytes)).into_owned(),
            false,
        ),
        Err(_) => (String::from_utf8_lossy(bytes).into_owned(), true),
    }
}

fn cut_line(text: &str, full_len: usize) -> String {
    match text.char_indices().nth(MAX_LINE_CHARS) {
        Some((idx, _)) => format!(
            "{}… [line truncated: {full_len} bytes in all]",
            &text[..idx]
        ),
        None if full_len > text.len() + 1 => {
            format!("{text}… [line truncated: {full_len} bytes in all]")
        }
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn page(input: &str, offset: usize, limit: usize) -> Page {
        read_page(Cursor::new(input.as_bytes().to_vec()), offset, limit).unwrap()
    }

    #[test]
    fn numbers_and_pages() {
        let p = page("a\nb\nc\n", 1, 2000);
        assert_eq!(p.body, "     1\ta\n     2\tb\n     3\tc\n");
        assert_eq!(p.total, 3);
        let out = page("a\nb\nc\nd", 2, 2).render("f", 2);
        assert_eq!(
            out,
            "     2\tb\n     3\tc\n\n(showing lines 2-3 of 4; continue with offset=4.)"
        );
        assert_eq!(page("", 1, 10).render("f", 1), "(f is empty.)");
        assert!(page("a\n", 5, 10).render("f", 5).contains("past the end"));
        assert_eq!(page("x\r\ny\r\n", 1, 10).body, "     1\tx\n     2\ty\n");
    }

    #[test]
    fn long_lines_are_cut_and_output_is_capped() {
        let long = "é".repeat(5000);
        let p = page(&format!("{long}\nshort\n"), 1, 10);
        assert!(p.body.contains("… [line truncated: 10000 bytes in all]"));
        assert!(!p.invalid_utf8);
        assert!(p.body.contains("     2\tshort"));
        // 200 lines of 1,000 characters: the page stops before 100,000 characters.
        let line = "x".repeat(1000);
        let input: String = (0..200).map(|_| format!("{line}\n")).collect();
        let p = page(&input, 1, 2000);
        assert!(p.hit_char_cap && p.body.len() <= MAX_OUTPUT_CHARS);
        let out = p.render("big", 1);
        assert!(
            out.contains(
                "output limit reached; showing lines 1-99 of 200; continue with offset=100."
            ),
            "{}",
            &out[out.len() - 120..]
        );
    }

    #[test]
    fn invalid_utf8_is_flagged() {
        let p = read_page(Cursor::new(b"ok\n\xff\xfebad\n".to_vec()), 1, 10).unwrap();
        assert!(p.invalid_utf8);
        assert!(p.body.contains("\u{fffd}\u{fffd}bad"));
    }
}
