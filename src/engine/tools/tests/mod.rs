//! Tests of the tools through the public router, on real temp directories.

mod files;
mod router;
mod search;

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{ToolCtx, ToolOutput, run};

/// A temp dir holding a canonical workspace `ws/` (so `..` from it stays inside the temp dir).
struct Ws {
    _tmp: tempfile::TempDir,
    outer: PathBuf,
    ctx: ToolCtx,
}

impl Ws {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let outer = fs::canonicalize(tmp.path()).unwrap();
        let root = outer.join("ws");
        fs::create_dir(&root).unwrap();
        Ws {
            _tmp: tmp,
            outer,
            ctx: ToolCtx::new(root, "test-session"),
        }
    }

    fn root(&self) -> &Path {
        &self.ctx.workspace
    }

    fn write(&self, rel: &str, content: impl AsRef<[u8]>) {
        let p = self.root().join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, content).unwrap();
    }

    fn read(&self, rel: &str) -> String {
        fs::read_to_string(self.root().join(rel)).unwrap()
    }

    async fn call(&self, tool: &str, input: Value) -> ToolOutput {
        run(tool, &input, &self.ctx).await
    }

    async fn ok(&self, tool: &str, input: Value) -> String {
        let out = self.call(tool, input).await;
        assert!(!out.is_error, "{tool} failed: {}", out.content);
        out.content
    }

    async fn err(&self, tool: &str, input: Value) -> String {
        let out = self.call(tool, input).await;
        assert!(out.is_error, "{tool} should have failed: {}", out.content);
        out.content
    }
}
