//! `list_dir`: one directory's entries, directories first, with sizes; ignored entries marked;
//! those the settings deny reading left out and counted.

use std::collections::HashSet;
use std::ffi::OsString;
use std::fs;
use std::io;

use serde_json::json;

use super::args::Args;
use super::grep::walker;
use super::{Denied, ToolCtx, ToolOutput, ToolResult, paths};
use crate::engine::text::human_size;
use crate::engine::types::ToolSpec;

/// At most this many entries are listed.
const MAX_ENTRIES: usize = 1_000;

pub(super) fn spec() -> ToolSpec {
    ToolSpec {
        name: super::names::LIST_DIR.into(),
        description: "List one directory's entries: directories first (ending in `/`), then \
                      files with their sizes; symlinks show their target. Entries ignored by \
                      .gitignore (like target/ or node_modules/) are marked `(ignored)`. Default \
                      path: the workspace root."
            .into(),
        input_schema: json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Directory to list, relative to the workspace (or absolute). Default: the workspace root."}
            },
            "additionalProperties": false
        }),
    }
}

/// One line of the listing.
struct Entry {
    name: String,
    is_dir: bool,
    line: String,
}

pub(super) fn run(args: &Args, ctx: &ToolCtx) -> ToolResult {
    let dir = paths::check(ctx, args.opt_str("path")?.unwrap_or("."), false)?;
    let shown = paths::display(&ctx.workspace, &dir);
    let read = match fs::read_dir(&dir) {
        Ok(r) => r,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(paths::not_found(&ctx.workspace, &dir, "Directory").into());
        }
        Err(_) if dir.is_file() => {
            return Err(
                format!("{shown} is a file, not a directory. Use read_file to read it.").into(),
            );
        }
        Err(e) => return Err(format!("Cannot list {shown}: {e}").into()),
    };

    // What the ignore rules let through at depth 1; everything else in the directory is ignored.
    let kept: HashSet<OsString> = walker(&dir)
        .hidden(false)
        .max_depth(Some(1))
        .build()
        .flatten()
        .filter(|e| e.depth() == 1)
        .map(|e| e.file_name().to_os_string())
        .collect();

    let mut entries: Vec<Entry> = Vec::new();
    let mut unreadable = 0usize;
    let mut left_out = 0usize;
    for item in read {
        let Ok(item) = item else {
            unreadable += 1;
            continue;
        };
        if ctx.denied.reading(&item.path()).is_some() {
            left_out += 1;
            continue;
        }
        let name = item.file_name();
        let shown_name = name.to_string_lossy().into_owned();
        let ignored = if kept.contains(&name) {
            ""
        } else {
            "  (ignored)"
        };
        let Ok(meta) = item.path().symlink_metadata() else {
            unreadable += 1;
            continue;
        };
        let entry = if meta.file_type().is_symlink() {
            let target = fs::read_link(item.path())
                .map(|t| t.to_string_lossy().into_owned())
                .unwrap_or_else(|_| "?".into());
            let to_dir = item.path().is_dir();
            let slash = if to_dir { "/" } else { "" };
            Entry {
                line: format!("{shown_name}{slash} -> {target}{ignored}"),
                name: shown_name,
                is_dir: to_dir,
            }
        } else if meta.is_dir() {
            Entry {
                line: format!("{shown_name}/{ignored}"),
                name: shown_name,
                is_dir: true,
            }
        } else {
            Entry {
                line: format!("{shown_name}  ({}){ignored}", human_size(meta.len())),
                name: shown_name,
                is_dir: false,
            }
        };
        entries.push(entry);
    }
    entries.sort_by(|a, b| {
        b.is_dir
            .cmp(&a.is_dir)
            .then_with(|| a.name.to_lowercase().cmp(&b.name.to_lowercase()))
            .then_with(|| a.name.cmp(&b.name))
    });

    let dirs = entries.iter().filter(|e| e.is_dir).count();
    let files = entries.len() - dirs;
    let header = if shown == "." {
        "./".to_owned()
    } else {
        format!("{}/", shown.trim_end_matches('/'))
    };
    if entries.is_empty() && unreadable == 0 && left_out == 0 {
        return Ok(ToolOutput::ok(format!("{header} (empty directory)")));
    }
    let mut out = format!(
        "{header} ({dirs} director{}, {files} file{})\n",
        if dirs == 1 { "y" } else { "ies" },
        if files == 1 { "" } else { "s" }
    );
    for e in entries.iter().take(MAX_ENTRIES) {
        out.push_str(&e.line);
        out.push('\n');
    }
    if entries.len() > MAX_ENTRIES {
        out.push_str(&format!(
            "... and {} more entries (use glob to narrow down).\n",
            entries.len() - MAX_ENTRIES
        ));
    }
    if unreadable > 0 {
        out.push_str(&format!("({unreadable} entries could not be read.)\n"));
    }
    if left_out > 0 {
        out.push_str(&Denied::left_out(left_out));
    }
    Ok(ToolOutput::ok(out.trim_end().to_owned()))
}
