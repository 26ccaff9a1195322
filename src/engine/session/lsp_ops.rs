//! What the language servers add to a turn, delegated to [`crate::engine::lsp::LspManager`]: the
//! diagnostics of the files a call changed (an event for the front end, an appendix for the
//! model), the `diagnostics` tool while a server is found, `/lsp`, and their shutdown.

use super::Engine;
use crate::engine::checkpoint::CallSpan;
use crate::engine::lsp::CallWatch;
use crate::engine::protocol::Event;
use crate::engine::tools::ToolOutput;
use crate::engine::types::ToolSpec;

impl Engine {
    /// Before a call runs: what the servers must know to compare after it (None: they are off).
    pub(super) fn lsp_watch(&self, name: &str, input: &serde_json::Value) -> Option<CallWatch> {
        Some(self.run.lsp.as_ref()?.before_call(name, input))
    }

    /// What the servers say about the files a call changed: told to the front end, and appended
    /// to the result for the model. False when the user stopped the turn meanwhile.
    pub(super) async fn diagnose(
        &mut self,
        id: &str,
        watch: CallWatch,
        span: Option<CallSpan>,
        out: &mut ToolOutput,
    ) -> bool {
        let Some(lsp) = self.run.lsp.clone() else {
            return true;
        };
        let checkpoints = span.and_then(|s| Some((self.checkpoint_store()?, s.before, s.after?)));
        let Some(report) = self.abortable(lsp.after_call(watch, checkpoints)).await else {
            return false;
        };
        if let Some(report) = report.filter(|r| !r.is_empty()) {
            out.appendix = Some(report.text());
            self.emit_logged(Event::Diagnostics {
                turn: self.turn_id(),
                id: id.to_string(),
                report,
            });
        }
        true
    }

    /// The `diagnostics` tool's spec, while a server's program is found.
    pub(super) fn lsp_tool(&self) -> Option<ToolSpec> {
        self.run
            .lsp
            .as_ref()
            .filter(|l| l.any_found())
            .map(|_| crate::engine::lsp::tool_spec())
    }

    /// Run the `diagnostics` tool (None: the user stopped the turn).
    pub(super) async fn run_diagnostics(
        &mut self,
        input: &serde_json::Value,
    ) -> Option<ToolOutput> {
        let lsp = self.run.lsp.clone()?;
        self.abortable(async move { lsp.diagnostics_tool(input).await })
            .await
    }

    /// `/lsp`: the language servers in words.
    pub(crate) fn lsp_status(&self) -> Event {
        let message = self.run.lsp.as_ref().map_or_else(
            || "Language servers are off (--no-lsp, or no runtime)".to_string(),
            |l| l.report(),
        );
        Event::Notice { message }
    }

    /// Stop the servers (when the engine stops).
    pub(super) async fn lsp_shutdown(&mut self) {
        if let Some(lsp) = self.run.lsp.clone() {
            lsp.shutdown().await;
        }
    }
}
