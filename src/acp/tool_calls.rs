//! One engine tool call as the editor shows it: its kind (read, edit, execute, search, …), its
//! title (the engine's one-line summary), the files it touches as locations, and its content —
//! the diff of an edit (the changed regions, old and new), a command's output (live, then
//! whole), or the text the model was given; and the small builders of updates the other maps
//! share (a text chunk, a tool call's update).

use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, Diff, SessionUpdate, TextContent, ToolCallContent,
    ToolCallLocation, ToolCallUpdate, ToolCallUpdateFields, ToolKind,
};
use serde_json::Value;

use crate::engine::protocol::{FileDiff, LineKind};
use crate::engine::tools::names;

/// At most this much of a result's text is shown in the editor (the model got all of it).
const MAX_SHOWN_CHARS: usize = 20_000;

/// The kind of the engine tool `name`.
pub(super) fn kind(name: &str) -> ToolKind {
    match name {
        names::READ_FILE | names::LIST_DIR => ToolKind::Read,
        names::WRITE_FILE | names::EDIT_FILE => ToolKind::Edit,
        names::BASH => ToolKind::Execute,
        names::GREP | names::GLOB | names::RECALL => ToolKind::Search,
        names::TODO | names::PRESENT_PLAN | names::TASK => ToolKind::Think,
        // MCP tools, skills: what they do is theirs to say.
        _ => ToolKind::Other,
    }
}

/// The files a call names (its `path` argument, resolved against the workspace), with the line
/// a ranged read starts at.
pub(super) fn locations(workspace: &Path, input: &Value) -> Vec<ToolCallLocation> {
    let Some(raw) = input.get("path").and_then(Value::as_str) else {
        return Vec::new();
    };
    if raw.trim().is_empty() {
        return Vec::new();
    }
    let line = input
        .get("offset")
        .and_then(Value::as_u64)
        .and_then(|n| u32::try_from(n).ok());
    vec![ToolCallLocation::new(absolute(workspace, raw)).line(line)]
}

/// `raw` against the workspace, as the editor needs it (absolute).
pub(super) fn absolute(workspace: &Path, raw: &str) -> PathBuf {
    let p = Path::new(raw);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        workspace.join(p)
    }
}

/// A diff as the editor's diff content: the changed regions of the file before and after (the
/// hunks' context and changed lines, regions apart joined by a blank line), under the file's
/// absolute path. A new file has no old text.
pub(super) fn diff_content(workspace: &Path, diff: &FileDiff) -> ToolCallContent {
    let mut old = Vec::new();
    let mut new = Vec::new();
    for (i, hunk) in diff.hunks.iter().enumerate() {
        if i > 0 {
            old.push("");
            new.push("");
        }
        for line in &hunk.lines {
            match line.kind {
                LineKind::Context => {
                    old.push(line.text.as_str());
                    new.push(line.text.as_str());
                }
                LineKind::Removed => old.push(line.text.as_str()),
                LineKind::Added => new.push(line.text.as_str()),
            }
        }
    }
    let created = matches!(diff.change, crate::engine::protocol::FileChange::Created);
    let old_text = (!created).then(|| joined(&old));
    ToolCallContent::Diff(
        Diff::new(absolute(workspace, &diff.path), joined(&new)).old_text(old_text),
    )
}

fn joined(lines: &[&str]) -> String {
    let mut s = lines.join("\n");
    if !s.is_empty() {
        s.push('\n');
    }
    s
}

/// Text as tool call content, cut to what an editor pane should hold.
pub(super) fn text_content(text: &str) -> ToolCallContent {
    let shown = if text.chars().count() > MAX_SHOWN_CHARS {
        let head: String = text.chars().take(MAX_SHOWN_CHARS).collect();
        format!("{head}\n… (cut here; the model was given all of it)")
    } else {
        text.to_string()
    };
    ToolCallContent::from(ContentBlock::Text(TextContent::new(shown)))
}

/// A command's output as content: in a fenced block, so the editor shows it as is.
pub(super) fn output_content(output: &str) -> ToolCallContent {
    let fence = if output.contains("```") {
        "````"
    } else {
        "```"
    };
    text_content(&format!("{fence}\n{}\n{fence}", output.trim_end()))
}

/// A text chunk of the reply.
pub(super) fn agent_text(text: &str) -> SessionUpdate {
    SessionUpdate::AgentMessageChunk(chunk(text))
}

/// Text as a chunk of a message.
pub(super) fn chunk(text: &str) -> ContentChunk {
    ContentChunk::new(ContentBlock::Text(TextContent::new(text)))
}

/// An update of the tool call `id`.
pub(super) fn tool_update(id: &str, fields: ToolCallUpdateFields) -> SessionUpdate {
    SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(id.to_string(), fields))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::diff::{DiffLimits, FileDiff};
    use serde_json::json;

    #[test]
    fn kinds_follow_what_the_tool_does() {
        assert_eq!(kind("read_file"), ToolKind::Read);
        assert_eq!(kind("edit_file"), ToolKind::Edit);
        assert_eq!(kind("write_file"), ToolKind::Edit);
        assert_eq!(kind("bash"), ToolKind::Execute);
        assert_eq!(kind("grep"), ToolKind::Search);
        assert_eq!(kind("todo"), ToolKind::Think);
        assert_eq!(kind("mcp__git__status"), ToolKind::Other);
    }

    #[test]
    fn a_path_argument_is_an_absolute_location_with_its_first_line() {
        let ws = Path::new("/w");
        let at = locations(ws, &json!({"path": "src/a.rs", "offset": 40}));
        assert_eq!(at, [ToolCallLocation::new("/w/src/a.rs").line(40)]);
        let abs = locations(ws, &json!({"path": "/etc/hosts"}));
        assert_eq!(abs, [ToolCallLocation::new("/etc/hosts")]);
        assert!(locations(ws, &json!({"command": "ls"})).is_empty());
    }

    #[test]
    fn an_edit_becomes_the_old_and_new_text_of_its_regions() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\n";
        let new = "a\nB\nc\nd\ne\nf\ng\nh\ni\nj\nK\nl\n";
        let diff = FileDiff::new("src/x.txt", Some(old), new, DiffLimits::RESULT);
        let ToolCallContent::Diff(d) = diff_content(Path::new("/w"), &diff) else {
            panic!("not a diff");
        };
        assert_eq!(d.path, PathBuf::from("/w/src/x.txt"));
        let old_text = d.old_text.unwrap();
        assert!(old_text.contains("a\nb\nc\n"), "{old_text}");
        assert!(old_text.contains("\nk\n"), "{old_text}");
        assert!(d.new_text.contains("a\nB\nc\n") && d.new_text.contains("\nK\n"));
        assert!(!d.new_text.contains("\nb\n"));
    }

    #[test]
    fn a_new_file_has_no_old_text() {
        let diff = FileDiff::new("n.txt", None, "one\ntwo\n", DiffLimits::RESULT);
        let ToolCallContent::Diff(d) = diff_content(Path::new("/w"), &diff) else {
            panic!("not a diff");
        };
        assert_eq!(d.old_text, None);
        assert_eq!(d.new_text, "one\ntwo\n");
    }

    #[test]
    fn long_text_is_cut_and_says_so_and_output_is_fenced() {
        let long = "x".repeat(MAX_SHOWN_CHARS + 5);
        let ToolCallContent::Content(c) = text_content(&long) else {
            panic!("not text");
        };
        let ContentBlock::Text(t) = c.content else {
            panic!("not text");
        };
        assert!(t.text.ends_with("the model was given all of it)"));
        let ToolCallContent::Content(c) = output_content("ok\n") else {
            panic!("not text");
        };
        let ContentBlock::Text(t) = c.content else {
            panic!("not text");
        };
        assert_eq!(t.text, "```\nok\n```");
    }
}
