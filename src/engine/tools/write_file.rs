//! `write_file`: create or overwrite a file, atomically.

use std::fs;
use std::io;
use std::path::Path;

use serde_json::json;

use super::args::Args;
use super::{ToolCtx, ToolOutput, ToolResult, paths};
use crate::engine::fsutil::atomic_write;
use crate::engine::types::ToolSpec;

pub(super) fn spec() -> ToolSpec {
    ToolSpec {
        name: "write_file".into(),
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

pub(super) fn run(args: &Args, ctx: &ToolCtx) -> ToolResult {
    let raw = args.str("path")?;
    let content = args.str("content")?;
    let path = paths::check(ctx, raw, false)?;
    let shown = paths::display(&ctx.workspace, &path);
    let old = match fs::metadata(&path) {
        Ok(m) if m.is_dir() => {
            return Err(format!("{shown} is a directory; write_file needs a file path.").into());
        }
        Ok(m) => Some(m),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(format!("Cannot write {shown}: {e}").into()),
    };
    write_keeping_mode(&path, content.as_bytes(), old.as_ref())
        .map_err(|e| format!("Cannot write {shown}: {e}"))?;
    let verb = if old.is_some() {
        "Overwrote"
    } else {
        "Created"
    };
    Ok(ToolOutput::ok(format!(
        "{verb} {shown} ({} bytes, {} lines).",
        content.len(),
        line_count(content)
    )))
}

/// Lines as an editor counts them: a final line without `\n` still counts.
pub(crate) fn line_count(s: &str) -> usize {
    if s.is_empty() {
        0
    } else {
        s.matches('\n').count() + usize::from(!s.ends_with('\n'))
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
