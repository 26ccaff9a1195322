//! `write_file`: create or overwrite a file, atomically.

use std::fs;
use std::io;
use std::path::Path;

use serde_json::json;

use super::args::Args;
use super::{ToolCtx, ToolError, ToolOutput, ToolResult, paths};
use crate::engine::diff::{DiffLimits, FileDiff, MAX_DIFF_BYTES};
use crate::engine::fsutil::atomic_write;
use crate::engine::text::looks_binary;
use crate::engine::types::ToolSpec;

pub(super) fn spec() -> ToolSpec {
    ToolSpec {
        name: super::names::WRITE_FILE.into(),
        description: "Create a file, or overwrite an existing one, with the given content. \
                      Parent directories are created. The write is atomic. Prefer edit_file for \
                      changing part of an existing file; read a file before overwriting it."
            .into(),
        input_schema: json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File to write, relative to the workspace (or absolute)."},
                "content": {"type": "string", "description": "The complete new content of the file."}
            },
            "required": ["path", "content"],
            "additionalProperties": false
        }),
    }
}

/// A write worked out but not yet done.
struct WritePlan<'a> {
    path: std::path::PathBuf,
    shown: String,
    content: &'a str,
    /// The file's metadata when it exists.
    old: Option<fs::Metadata>,
}

fn plan<'a>(args: &'a Args, ctx: &ToolCtx) -> Result<WritePlan<'a>, ToolError> {
    let raw = args.str("path")?;
    let content = args.str("content")?;
    let path = paths::check_write(ctx, raw)?;
    let shown = paths::display(&ctx.workspace, &path);
    let old = match fs::metadata(&path) {
        Ok(m) if m.is_dir() => {
            return Err(format!("{shown} is a directory; write_file needs a file path.").into());
        }
        Ok(m) => Some(m),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(format!("Cannot write {shown}: {e}").into()),
    };
    Ok(WritePlan {
        path,
        shown,
        content,
        old,
    })
}

impl WritePlan<'_> {
    /// The diff against what is on disk now; None when the old file is not text one can diff (or
    /// too large to read for a diff).
    fn diff(&self, limits: DiffLimits) -> Option<FileDiff> {
        let Some(meta) = &self.old else {
            return Some(FileDiff::new(&self.shown, None, self.content, limits));
        };
        if !meta.is_file() || meta.len() > MAX_DIFF_BYTES as u64 {
            return None;
        }
        let bytes = fs::read(&self.path).ok()?;
        if looks_binary(&bytes) {
            return None;
        }
        let before = String::from_utf8(bytes).ok()?;
        Some(FileDiff::new(
            &self.shown,
            Some(&before),
            self.content,
            limits,
        ))
    }
}

/// The diff the call would make, for the approval prompt (None: the old file is not text).
pub(super) fn preview(args: &Args, ctx: &ToolCtx) -> Result<Option<FileDiff>, ToolError> {
    Ok(plan(args, ctx)?.diff(DiffLimits::PREVIEW))
}

pub(super) fn run(args: &Args, ctx: &ToolCtx) -> ToolResult {
    let p = plan(args, ctx)?;
    let shown = &p.shown;
    let diff = p.diff(DiffLimits::RESULT);
    write_text(ctx, &p.path, p.content, p.old.as_ref())
        .map_err(|e| format!("Cannot write {shown}: {e}"))?;
    let verb = if p.old.is_some() {
        "Overwrote"
    } else {
        "Created"
    };
    Ok(ToolOutput::ok(format!(
        "{verb} {shown} ({} bytes, {} lines).",
        p.content.len(),
        line_count(p.content)
    ))
    .with_diff(diff))
}

/// Lines as an editor counts them: a final line without `\n` still counts.
pub(crate) fn line_count(s: &str) -> usize {
    if s.is_empty() {
        0
    } else {
        s.matches('\n').count() + usize::from(!s.ends_with('\n'))
    }
}

/// Write `text` through the front end's file access when it offers one (its parent directories
/// made first, as on the disk), else [`write_keeping_mode`].
pub(crate) fn write_text(
    ctx: &ToolCtx,
    path: &Path,
    text: &str,
    old: Option<&fs::Metadata>,
) -> io::Result<()> {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent)?;
    }
    match ctx.files.write(path, text) {
        Some(written) => written,
        None => write_keeping_mode(path, text.as_bytes(), old),
    }
}

/// [`atomic_write`], then gives the new file the old one's permissions (an executable script stays
/// executable).
pub(crate) fn write_keeping_mode(
    path: &Path,
    bytes: &[u8],
    old: Option<&fs::Metadata>,
) -> io::Result<()> {
    atomic_write(path, bytes)?;
    if let Some(m) = old {
        fs::set_permissions(path, m.permissions())?;
    }
    Ok(())
}
