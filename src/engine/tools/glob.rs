//! `glob`: files whose paths match a glob pattern, newest first (those the settings deny reading
//! left out and counted).

use std::sync::atomic::AtomicBool;
use std::time::SystemTime;

use globset::GlobBuilder;
use serde_json::json;

use super::args::Args;
use super::grep::{files, walker};
use super::{Denied, ToolCtx, ToolOutput, ToolResult, paths};
use crate::engine::types::ToolSpec;

/// At most this many paths are listed.
const MAX_RESULTS: usize = 500;

pub(super) fn spec() -> ToolSpec {
    ToolSpec {
        name: super::names::GLOB.into(),
        description: format!(
            "Find files by name pattern. `**` matches any number of directories, `*` any \
             characters except `/`, `{{a,b}}` alternatives: \"src/**/*.rs\", \"**/test_*.py\". A \
             pattern without `/` matches file names at any depth (\"*.toml\"). Patterns are \
             relative to `path` (default: the workspace root). Skips files ignored by .gitignore \
             and hidden ones. Returns paths relative to the workspace, most recently modified \
             first, at most {MAX_RESULTS}."
        ),
        input_schema: json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "Glob pattern, e.g. \"**/*.rs\"."},
                "path": {"type": "string", "description": "Directory to search in. Default: the workspace root."}
            },
            "required": ["pattern"],
            "additionalProperties": false
        }),
    }
}

pub(super) fn run(args: &Args, ctx: &ToolCtx, cancel: &AtomicBool) -> ToolResult {
    let raw_pattern = args.str("pattern")?;
    let pattern = raw_pattern.trim().trim_start_matches("./");
    if pattern.is_empty() {
        return Err("`glob`: the pattern is empty.".into());
    }
    let root = paths::check(ctx, args.opt_str("path")?.unwrap_or("."), false)?;
    let shown_root = paths::display(&ctx.workspace, &root);
    if !root.is_dir() {
        return Err(if root.exists() {
            format!("{shown_root} is a file; glob needs a directory as `path`.")
        } else {
            paths::not_found(&ctx.workspace, &root, "Directory")
        }
        .into());
    }
    let matcher = GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map_err(|e| format!("Invalid glob pattern `{raw_pattern}`: {e}"))?
        .compile_matcher();
    let names_only = !pattern.contains('/');

    let mut found: Vec<(SystemTime, String)> = Vec::new();
    let mut left_out = 0usize;
    for entry in files(walker(&root).build(), cancel) {
        let entry = entry?;
        let path = entry.path();
        let hit = if names_only {
            path.file_name().is_some_and(|n| matcher.is_match(n))
        } else {
            path.strip_prefix(&root)
                .is_ok_and(|rel| matcher.is_match(rel))
        };
        if hit && ctx.denied.reading(path).is_some() {
            left_out += 1;
        } else if hit {
            let mtime = entry
                .metadata()
                .ok()
                .and_then(|m| m.modified().ok())
                .unwrap_or(SystemTime::UNIX_EPOCH);
            found.push((mtime, paths::display(&ctx.workspace, path)));
        }
    }
    let left_out = if left_out > 0 {
        format!("\n{}", Denied::left_out(left_out))
    } else {
        String::new()
    };
    if found.is_empty() {
        return Ok(ToolOutput::ok(format!(
            "No files match `{raw_pattern}` in {}.{left_out}",
            paths::in_prose(&shown_root)
        )));
    }
    found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let total = found.len();
    let mut out: Vec<String> = found
        .into_iter()
        .take(MAX_RESULTS)
        .map(|(_, p)| p)
        .collect();
    if total > MAX_RESULTS {
        out.push(format!(
            "\n(Showing the {MAX_RESULTS} most recently modified of {total} matches; use a more \
             specific pattern or path.)"
        ));
    }
    Ok(ToolOutput::ok(format!("{}{left_out}", out.join("\n"))))
}
