//! The `diagnostics` tool: what the language servers say about one file now, or about every file
//! of this run they have open (the files the session read or changed), errors first.

use serde_json::{Value, json};

use super::manager::LspManager;
use super::report::listing;
use crate::engine::tools::{ToolOutput, names};
use crate::engine::types::ToolSpec;

/// The tool as the model is offered it (only while language servers are on).
pub fn spec() -> ToolSpec {
    ToolSpec {
        name: names::DIAGNOSTICS.into(),
        description: "The errors and warnings language servers (pyright/pylsp, \
                      typescript-language-server, rust-analyzer, gopls, clangd) report for a \
                      file as it is on disk now, or, without `path`, for every file this session \
                      read or changed. Edits already report the problems they introduce; use \
                      this to check a file again or to see the whole state."
            .into(),
        input_schema: json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "The file, relative to the workspace (or absolute). Default: every file this session read or changed."}
            },
            "additionalProperties": false
        }),
    }
}

impl LspManager {
    /// Run the `diagnostics` tool.
    pub async fn diagnostics_tool(&self, input: &Value) -> ToolOutput {
        let raw = input
            .get("path")
            .and_then(Value::as_str)
            .filter(|p| !p.trim().is_empty());
        let paths = match raw {
            Some(raw) => {
                let path = crate::engine::tools::paths::resolve(self.workspace(), raw);
                if !path.is_file() {
                    return ToolOutput::error(format!("{raw}: no such file"));
                }
                if self.server_for(&path).is_none() {
                    return ToolOutput::ok(format!(
                        "{raw}: no language server handles this file ({})",
                        self.summary()
                    ));
                }
                vec![path]
            }
            None => self.open_files(),
        };
        let (files, notes) = self.refresh(&paths).await;
        let found: Vec<_> = paths.iter().flat_map(|p| self.problems_of(p)).collect();
        ToolOutput::ok(listing(&files, &found, &notes))
    }
}
