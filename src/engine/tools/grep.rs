//! `grep`: a regular expression over the workspace's files, respecting `.gitignore`; files the
//! settings deny reading are left out (counted, never shown).

use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use ignore::overrides::OverrideBuilder;
use ignore::{DirEntry, WalkBuilder};
use regex::RegexBuilder;
use serde_json::json;

use super::args::Args;
use super::{Denied, ToolCtx, ToolOutput, ToolResult, paths};
use crate::engine::files::walk_rules;
use crate::engine::text::{looks_binary, truncate_chars};
use crate::engine::types::ToolSpec;

/// Matches returned when the call names no `max_results`.
const DEFAULT_MAX_RESULTS: u64 = 200;
/// The most matches a call may ask for.
const MAX_RESULTS_CAP: u64 = 5_000;
/// A matching line is shown up to this many characters.
const MAX_MATCH_CHARS: usize = 300;
/// Files larger than this are skipped.
const MAX_FILE_BYTES: u64 = 20 * 1024 * 1024;

pub(super) fn spec() -> ToolSpec {
    ToolSpec {
        name: super::names::GREP.into(),
        description: format!(
            "Search file contents with a regular expression (Rust regex syntax, like ripgrep). \
             Searches the workspace, or `path` (a directory or a file), skipping files ignored by \
             .gitignore, hidden files and directories, and binary files. Returns matching lines \
             as `path:line:text`, at most `max_results` (default {DEFAULT_MAX_RESULTS}). Use \
             `glob` to limit the files searched, e.g. \"*.rs\" or \"src/**/*.ts\"."
        ),
        input_schema: json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "Regular expression to search for."},
                "path": {"type": "string", "description": "Directory or file to search. Default: the workspace root."},
                "glob": {"type": "string", "description": "Only search files matching this glob (gitignore style: \"*.rs\" matches at any depth)."},
                "case_insensitive": {"type": "boolean", "description": "Ignore case. Default false."},
                "max_results": {"type": "integer", "minimum": 1, "description": format!("Most matching lines to return. Default {DEFAULT_MAX_RESULTS}.")}
            },
            "required": ["pattern"],
            "additionalProperties": false
        }),
    }
}

/// A walker over `root` with the rules every search tool shares: `.gitignore` (also outside a git
/// repository), no hidden entries, sorted by name.
pub(super) fn walker(root: &Path) -> WalkBuilder {
    let mut b = walk_rules(root);
    b.sort_by_file_name(|a, b| a.cmp(b));
    b
}

/// The files of a walk in its order (entries it could not read and directories skipped); an
/// `Err` with the message for the model as soon as `cancel` is set.
pub(super) fn files<'a>(
    walk: ignore::Walk,
    cancel: &'a AtomicBool,
) -> impl Iterator<Item = Result<DirEntry, &'static str>> + 'a {
    walk.filter_map(move |entry| {
        if cancel.load(Ordering::Relaxed) {
            return Some(Err("The search was cancelled."));
        }
        let entry = entry.ok()?;
        entry
            .file_type()
            .is_some_and(|t| t.is_file())
            .then_some(Ok(entry))
    })
}

pub(super) fn run(args: &Args, ctx: &ToolCtx, cancel: &AtomicBool) -> ToolResult {
    let pattern = args.str("pattern")?;
    let root_raw = args.opt_str("path")?.unwrap_or(".");
    let glob = args.opt_str("glob")?;
    let case_insensitive = args.opt_bool("case_insensitive")?.unwrap_or(false);
    let max = args
        .opt_u64("max_results")?
        .unwrap_or(DEFAULT_MAX_RESULTS)
        .clamp(1, MAX_RESULTS_CAP) as usize;
    let regex = RegexBuilder::new(pattern)
        .case_insensitive(case_insensitive)
        .size_limit(50 * 1024 * 1024)
        .build()
        .map_err(|e| format!("Invalid regular expression `{pattern}`: {e}"))?;
    let root = paths::check(ctx, root_raw, false)?;
    let shown_root = paths::in_prose(&paths::display(&ctx.workspace, &root));
    if !root.exists() {
        return Err(paths::not_found(&ctx.workspace, &root, "Path").into());
    }
    let mut builder = walker(&root);
    if let Some(g) = glob {
        let mut ob = OverrideBuilder::new(&root);
        ob.add(g).map_err(|e| format!("Invalid glob `{g}`: {e}"))?;
        let ov = ob.build().map_err(|e| format!("Invalid glob `{g}`: {e}"))?;
        builder.overrides(ov);
    }

    let mut lines = Vec::new();
    let mut files_with_matches = 0usize;
    let mut truncated = false;
    let mut skipped_large = 0usize;
    let mut left_out = 0usize;
    for entry in files(builder.build(), cancel) {
        let entry = entry?;
        let path = entry.path();
        if ctx.denied.reading(path).is_some() {
            left_out += 1;
            continue;
        }
        if entry
            .metadata()
            .map(|m| m.len() > MAX_FILE_BYTES)
            .unwrap_or(false)
        {
            skipped_large += 1;
            continue;
        }
        let Some(text) = read_text(path) else {
            continue;
        };
        let shown = paths::display(&ctx.workspace, path);
        let before = lines.len();
        for (i, line) in text.split('\n').enumerate() {
            let line = line.strip_suffix('\r').unwrap_or(line);
            if !regex.is_match(line) {
                continue;
            }
            if lines.len() == max {
                truncated = true;
                break;
            }
            lines.push(format!(
                "{shown}:{}:{}",
                i + 1,
                truncate_chars(line, MAX_MATCH_CHARS)
            ));
        }
        if lines.len() > before {
            files_with_matches += 1;
        }
        if truncated {
            break;
        }
    }

    let mut out = String::new();
    if lines.is_empty() {
        out.push_str(&format!("No matches for /{pattern}/ in {shown_root}"));
        if let Some(g) = glob {
            out.push_str(&format!(" (files matching {g})"));
        }
        out.push('.');
    } else {
        out.push_str(&lines.join("\n"));
        out.push_str("\n\n");
        if truncated {
            out.push_str(&format!(
                "(Showing the first {max} matches; there are more. Narrow the pattern, path or \
                 glob, or raise max_results.)"
            ));
        } else {
            let s = |n: usize| if n == 1 { "" } else { "s" };
            out.push_str(&format!(
                "({} match{} in {files_with_matches} file{}.)",
                lines.len(),
                if lines.len() == 1 { "" } else { "es" },
                s(files_with_matches)
            ));
        }
    }
    if skipped_large > 0 {
        out.push_str(&format!(
            "\n({skipped_large} file(s) over {} MiB were skipped.)",
            MAX_FILE_BYTES / (1024 * 1024)
        ));
    }
    if left_out > 0 {
        out.push('\n');
        out.push_str(&Denied::left_out(left_out));
    }
    Ok(ToolOutput::ok(out))
}

/// The file's text, or `None` when it is binary or unreadable.
fn read_text(path: &Path) -> Option<String> {
    let mut bytes = Vec::new();
    File::open(path).ok()?.read_to_end(&mut bytes).ok()?;
    if looks_binary(&bytes) {
        return None;
    }
    Some(match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}
