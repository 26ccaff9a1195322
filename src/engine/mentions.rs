//! `@path` in a user message attaches that workspace file (or directory listing) to the message,
//! so the model has it without a tool call: the first page `read_file` would return (numbered
//! lines), cut to a size cap that says so, under its path.
//!
//! A mention is `@` at the start of the message or after whitespace or `(`, followed by a path
//! (`@"a path with spaces"` quotes one); it only counts when that path exists inside the
//! workspace (so `@alice` and `me@example.com` stay text). A path outside the workspace is not
//! attached, and the front end is told why.
//!
//! An image (PNG, JPEG, GIF, WebP) is attached as an image the model sees, scaled and stored in
//! the run's image store: `@shot.png`, or a path a terminal pasted when the file was dropped on
//! it (quoted, with escaped spaces, or a `file://` URL; see [`crate::engine::images::pasted`]).
//! The user named the file, so it may lie outside the workspace. A model that takes no images
//! gets none, and the front end is told.
//!
//! A file the settings' `Read` deny rules keep from the model is not attached (the front end is
//! told which rule), nor listed in an attached folder.

use std::path::{Path, PathBuf};

use serde_json::json;

use super::images::{self, ImageRef};
use super::tools::{self, ToolCtx, names, paths};

/// Every attachment block starts with this (the replay of a conversation leaves them out).
pub(crate) const ATTACHMENT_OPEN: &str = "<attached path=\"";
/// At most this many mentions of one message are attached.
pub(crate) const MAX_MENTIONS: usize = 10;
/// One attachment holds at most this many characters.
pub(crate) const MAX_CHARS: usize = 40_000;
/// All attachments of one message hold at most this many characters.
pub(crate) const MAX_TOTAL_CHARS: usize = 100_000;
/// At most this many `@` tokens are looked up on disk (a pasted log full of `@` stays cheap).
const MAX_CANDIDATES: usize = 100;

/// One mention, attached or not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachment {
    /// As the user wrote it.
    pub path: String,
    /// The text block for the model; None when nothing was attached as text.
    pub block: Option<String>,
    /// The image for the model, when the path named one and it was attached.
    pub image: Option<ImageRef>,
    /// One line for the front end: `src/main.rs: 120 lines attached`, or why not.
    pub summary: String,
}

impl Attachment {
    /// Whether something was attached (text or an image).
    pub fn attached(&self) -> bool {
        self.block.is_some() || self.image.is_some()
    }
}

/// The paths mentioned in `text` that name something in the workspace, in order, once each.
pub(crate) fn mentioned(text: &str, workspace: &Path) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for raw in candidates(text, MAX_CANDIDATES) {
        let Some(path) = existing(&raw, workspace) else {
            continue;
        };
        if !out.contains(&path) {
            out.push(path);
        }
        if out.len() == MAX_MENTIONS {
            break;
        }
    }
    out
}

/// The first `max` `@…` tokens of `text`, quotes removed.
fn candidates(text: &str, max: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut prev: Option<char> = None;
    let mut chars = text.char_indices().peekable();
    while let Some((_, c)) = chars.next() {
        let starts = c == '@' && prev.is_none_or(|p| p.is_whitespace() || p == '(');
        prev = Some(c);
        if !starts {
            continue;
        }
        let mut token = String::new();
        if chars.peek().is_some_and(|(_, n)| *n == '"') {
            chars.next();
            for (_, n) in chars.by_ref() {
                if n == '"' {
                    break;
                }
                token.push(n);
            }
        } else {
            while let Some((_, n)) = chars.peek() {
                if n.is_whitespace() {
                    break;
                }
                token.push(*n);
                chars.next();
            }
        }
        prev = token.chars().last().or(prev);
        if !token.is_empty() {
            out.push(token);
            if out.len() == max {
                break;
            }
        }
    }
    out
}

/// The mention as a path that exists (trailing punctuation of the sentence dropped when only
/// the shorter path exists).
fn existing(raw: &str, workspace: &Path) -> Option<String> {
    let mut candidate = raw;
    loop {
        if !candidate.is_empty() && paths::resolve(workspace, candidate).exists() {
            return Some(candidate.to_string());
        }
        let shorter =
            candidate.strip_suffix(['.', ',', ';', ':', '!', '?', ')', ']', '\'', '"'])?;
        candidate = shorter;
    }
}

/// Read every mention of `text` for the model, within the caps: the images it names first.
pub(crate) async fn attach(text: &str, ctx: &ToolCtx) -> Vec<Attachment> {
    let mut left = MAX_TOTAL_CHARS;
    let mut out = Vec::new();
    let mut seen: Vec<PathBuf> = Vec::new();
    for pasted in images::pasted::image_paths(text, &ctx.workspace) {
        if images::is_image_file(&pasted.path) {
            seen.push(paths::canonical_or_self(&pasted.path));
            out.push(attach_image(pasted.written, pasted.path, ctx).await);
        }
    }
    for path in mentioned(text, &ctx.workspace) {
        let resolved = paths::resolve(&ctx.workspace, &path);
        if resolved.is_file() && images::is_image_file(&resolved) {
            if !seen.contains(&paths::canonical_or_self(&resolved)) {
                out.push(attach_image(path, resolved, ctx).await);
            }
            continue;
        }
        if tools::touches_outside(names::READ_FILE, &json!({ "path": path }), &ctx.workspace) {
            out.push(Attachment {
                summary: format!("{path}: not attached, it is outside the workspace"),
                path,
                block: None,
                image: None,
            });
            continue;
        }
        let dir = resolved.is_dir();
        let (tool, what) = if dir {
            (names::LIST_DIR, "listing")
        } else {
            (names::READ_FILE, "lines")
        };
        let result = tools::run(tool, &json!({ "path": path }), ctx).await;
        if result.is_error {
            out.push(Attachment {
                summary: format!(
                    "{path}: not attached: {}",
                    result.content.lines().next().unwrap_or("")
                ),
                path,
                block: None,
                image: None,
            });
            continue;
        }
        let content = crate::engine::secrets::redact(&result.content).into_owned();
        let cap = MAX_CHARS.min(left);
        let (kept, cut) = cut_chars(&content, cap);
        left -= kept.chars().count();
        // read_file numbers its lines and says when it shows a page of a longer file.
        let page = kept
            .rsplit_once("(showing lines ")
            .and_then(|(_, rest)| rest.split_once(';'))
            .map(|(range, _)| range.to_string());
        let lines = kept
            .lines()
            .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
            .count();
        let mut block = format!("{ATTACHMENT_OPEN}{path}\">\n{}", kept.trim_end());
        if cut {
            block.push_str(&format!(
                "\n[attachment cut at {cap} characters; read the rest with {}]",
                if dir {
                    "list_dir"
                } else {
                    "read_file and an offset"
                }
            ));
        }
        block.push_str("\n</attached>");
        let summary = match (dir, cut, page) {
            (true, _, _) => format!("{path}: directory {what} attached"),
            (false, false, None) => format!("{path}: {lines} {what} attached"),
            (false, false, Some(range)) => format!("{path}: lines {range} attached"),
            (false, true, _) => format!("{path}: the first {lines} {what} attached (cut)"),
        };
        out.push(Attachment {
            path,
            block: Some(block),
            image: None,
            summary,
        });
    }
    out
}

/// The image at `file` (written `written` in the message), scaled and stored off the engine's
/// thread; its summary is the chip a front end shows (`[image: shot.png 1280×720]`).
async fn attach_image(written: String, file: PathBuf, ctx: &ToolCtx) -> Attachment {
    let not = |why: String| Attachment {
        summary: format!("{written}: not attached: {why}"),
        path: written.clone(),
        block: None,
        image: None,
    };
    if let Some(rule) = ctx.denied.reading(&paths::canonical_or_self(&file)) {
        return not(format!("denied by the permission rule `{rule}`"));
    }
    let Some(store) = ctx.images.clone() else {
        return not("the model in use takes no images".into());
    };
    let source = written.clone();
    let added = tokio::task::spawn_blocking(move || store.add_file(&file, &source)).await;
    match added {
        Ok(Ok(prepared)) => Attachment {
            summary: prepared.image.chip(),
            path: written,
            block: None,
            image: Some(prepared.image),
        },
        Ok(Err(e)) => not(e.to_string()),
        Err(e) => not(format!("it could not be read ({e})")),
    }
}

/// At most `max` characters of `s` (at a line end when there is one), and whether it was cut.
fn cut_chars(s: &str, max: usize) -> (&str, bool) {
    match s.char_indices().nth(max) {
        None => (s, false),
        Some((end, _)) => {
            let head = s.get(..end).unwrap_or_default();
            let at = head.rfind('\n').map_or(head.len(), |i| i + 1);
            (head.get(..at).unwrap_or(head), true)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ws(files: &[(&str, &str)]) -> (tempfile::TempDir, ToolCtx) {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap().join("ws");
        for (f, text) in files {
            let p = root.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        (tmp, ToolCtx::new(root, "s"))
    }

    #[test]
    fn mentions_are_paths_that_exist() {
        let (_t, ctx) = ws(&[("src/main.rs", "fn main() {}\n"), ("my notes.md", "n\n")]);
        let w = &ctx.workspace;
        assert_eq!(mentioned("look at @src/main.rs.", w), ["src/main.rs"]);
        assert_eq!(
            mentioned("(@src/main.rs) and @\"my notes.md\", twice @src/main.rs", w),
            ["src/main.rs", "my notes.md"]
        );
        assert_eq!(
            mentioned("mail me@example.com or @alice about @src/", w),
            ["src/"]
        );
        assert!(mentioned("@nothing/here and @", w).is_empty());
        let many: String = (0..20).map(|_| "@src/main.rs ").collect();
        assert_eq!(mentioned(&many, w).len(), 1);
        // A 10 MB paste full of `@`: only the first tokens are looked up, and quickly.
        let paste = "@x ".repeat(3_500_000);
        let t = std::time::Instant::now();
        assert!(mentioned(&paste, w).is_empty());
        assert!(
            t.elapsed() < std::time::Duration::from_secs(5),
            "{:?}",
            t.elapsed()
        );
    }

    #[tokio::test]
    async fn files_and_directories_are_attached_within_the_caps() {
        let big: String = (0..30_000)
            .map(|i| format!("line {i} {}\n", "x".repeat(40)))
            .collect();
        let long: String = (0..3_000).map(|i| format!("row {i}\n")).collect();
        let (t, ctx) = ws(&[
            ("a.rs", "fn a() {}\n"),
            ("big.txt", &big),
            ("d/x.rs", "x\n"),
            ("long.txt", &long),
        ]);
        std::fs::write(t.path().join("outside.txt"), "secret\n").unwrap();
        let got = attach("see @a.rs @d and @big.txt and @../outside.txt", &ctx).await;
        assert_eq!(got.len(), 4);
        let a = got[0].block.as_deref().unwrap();
        assert!(
            a.starts_with("<attached path=\"a.rs\">\n     1\tfn a() {}\n"),
            "{a}"
        );
        assert!(a.ends_with("</attached>"));
        assert_eq!(got[0].summary, "a.rs: 1 lines attached");
        assert!(got[1].block.as_deref().unwrap().contains("x.rs"));
        assert_eq!(got[1].summary, "d: directory listing attached");
        let b = got[2].block.as_deref().unwrap();
        assert!(b.chars().count() < MAX_CHARS + 200, "{}", b.len());
        assert!(b.contains("[attachment cut at 40000 characters"));
        assert!(
            got[2].summary.ends_with("attached (cut)"),
            "{}",
            got[2].summary
        );
        assert_eq!(got[3].block, None);
        assert_eq!(
            got[3].summary,
            "../outside.txt: not attached, it is outside the workspace"
        );
        // A long file of short lines: read_file's first page, and the page says where it ends.
        let got = attach("@long.txt", &ctx).await;
        assert_eq!(got[0].summary, "long.txt: lines 1-2000 of 3000 attached");
        assert!(
            got[0]
                .block
                .as_deref()
                .unwrap()
                .contains("continue with offset=2001")
        );
    }
}
