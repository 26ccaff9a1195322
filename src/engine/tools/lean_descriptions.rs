//! Compact tool descriptions for small windows (the lean prompt): each tool the engine offers keeps
//! its name and parameters, with a one-line description and no per-parameter prose. A tool this
//! table does not know (an MCP server's) keeps its own description.

use serde_json::Value;

use crate::engine::types::ToolSpec;

/// The one-line description of each built-in tool in the lean prompt.
const LEAN: &[(&str, &str)] = &[
    (
        "read_file",
        "Read a text file as numbered lines (`offset`, `limit` page through it).",
    ),
    (
        "write_file",
        "Create or overwrite a file with `content` (prefer edit_file for changes).",
    ),
    (
        "edit_file",
        "Replace `old_string` (exact, unique; copy it without line numbers) with `new_string`.",
    ),
    (
        "bash",
        "Run a command with `bash -c` in the workspace; returns output and exit code.",
    ),
    (
        "grep",
        "Search file contents with a regex; returns `path:line:text` (`glob` limits files).",
    ),
    (
        "glob",
        "Find files by pattern, e.g. \"src/**/*.rs\"; newest first.",
    ),
    ("list_dir", "List a directory's entries."),
    (
        "web_fetch",
        "Fetch a web page (`url`, http or https) as Markdown.",
    ),
    (
        "todo",
        "Keep the plan of a longer task: send the whole list; status pending, in_progress or done.",
    ),
    (
        "recall",
        "Search your predecessors' transcripts for a detail the briefing lacks.",
    ),
    (
        "task",
        "Start a subagent with its own context: `prompt` must say everything; it returns a report.",
    ),
];

/// The lean description of a tool, if the table has one.
pub fn description(name: &str) -> Option<&'static str> {
    LEAN.iter().find(|(n, _)| *n == name).map(|(_, d)| *d)
}

/// Drop every `description` inside a JSON schema (names, types and limits stay).
fn strip_descriptions(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            // A property may be *named* `description`: only a string under a schema is prose.
            if map.get("description").is_some_and(Value::is_string) {
                map.remove("description");
            }
            for v in map.values_mut() {
                strip_descriptions(v);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(strip_descriptions),
        _ => {}
    }
}

/// The specs with lean descriptions for the tools the table knows.
pub fn compact(specs: &mut [ToolSpec]) {
    for spec in specs {
        if let Some(d) = description(&spec.name) {
            spec.description = d.to_string();
            strip_descriptions(&mut spec.input_schema);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_built_in_tool_has_a_lean_line() {
        for spec in crate::engine::tools::specs() {
            assert!(description(&spec.name).is_some(), "{}", spec.name);
        }
        for name in ["todo", "recall", "task"] {
            assert!(description(name).is_some(), "{name}");
        }
    }

    #[test]
    fn compact_keeps_names_and_parameters_and_leaves_unknown_tools() {
        let mut specs = crate::engine::tools::specs();
        specs.push(ToolSpec {
            name: "mcp__x__y".into(),
            description: "An MCP tool.".into(),
            input_schema: json!({"type": "object", "properties": {"a": {"type": "string", "description": "kept"}}}),
        });
        let before = specs.clone();
        compact(&mut specs);
        let size = |s: &[ToolSpec]| serde_json::to_string(s).map_or(0, |t| t.len());
        assert!(
            size(&specs) * 2 < size(&before),
            "{} vs {}",
            size(&specs),
            size(&before)
        );
        for (lean, full) in specs.iter().zip(&before) {
            assert_eq!(lean.name, full.name);
            assert_eq!(
                lean.input_schema["properties"]
                    .as_object()
                    .map(|p| p.keys().collect::<Vec<_>>()),
                full.input_schema["properties"]
                    .as_object()
                    .map(|p| p.keys().collect::<Vec<_>>()),
                "{}",
                lean.name
            );
            assert_eq!(lean.input_schema["required"], full.input_schema["required"]);
        }
        let read = specs.iter().find(|s| s.name == "read_file");
        assert_eq!(
            read.map(|s| s.input_schema["properties"]["path"].clone()),
            Some(json!({"type": "string"}))
        );
        assert_eq!(
            specs.last(),
            before.last(),
            "an MCP tool keeps its own words"
        );
    }

    #[test]
    fn a_property_named_description_stays() {
        let mut schema = json!({"type": "object", "description": "prose",
            "properties": {"description": {"type": "string", "description": "prose"}}});
        strip_descriptions(&mut schema);
        assert_eq!(
            schema,
            json!({"type": "object", "properties": {"description": {"type": "string"}}})
        );
    }
}
