//! The language servers as the session uses them (the servers themselves are
//! [`crate::engine::lsp`]'s): what to note before a call, the comparison after it (the engine
//! runs it while it listens for ops, then tells the front end and appends the report to the
//! model's result), the `diagnostics` tool while a server's program is found, `/lsp`, the errors
//! still open for a handoff's `Touched` section, and the servers' shutdown when the engine stops.
//! Off (`--no-lsp`, or no runtime), each of these does nothing.

use std::future::Future;
use std::sync::Arc;

use serde_json::Value;

use crate::engine::checkpoint::{Checkpoints, SnapshotId};
use crate::engine::lsp::{CallWatch, ChangeReport, LspManager, OpenProblems};
use crate::engine::protocol::Event;
use crate::engine::tools::{ToolOutput, names};
use crate::engine::types::ToolSpec;

/// A call's two checkpoints, with their store (what changed across the call).
pub(super) type CallCheckpoints = (Checkpoints, SnapshotId, SnapshotId);

/// The run's language servers, if they are on.
pub(super) struct LanguageServers {
    manager: Option<Arc<LspManager>>,
}

impl LanguageServers {
    pub(super) fn new(manager: Option<Arc<LspManager>>) -> LanguageServers {
        LanguageServers { manager }
    }

    /// Before a call runs: what the servers must know to compare after it (None: they are off).
    pub(super) fn watch(&self, name: &str, input: &Value) -> Option<CallWatch> {
        Some(self.manager.as_ref()?.before_call(name, input))
    }

    /// After a call: what the servers say about the files it changed, compared with before
    /// (None: no changed file has a server). Holds no borrow, so the engine can listen for
    /// ops meanwhile.
    pub(super) fn after_call(
        &self,
        watch: CallWatch,
        checkpoints: Option<CallCheckpoints>,
    ) -> impl Future<Output = Option<ChangeReport>> + use<> {
        let manager = self.manager.clone();
        async move { manager?.after_call(watch, checkpoints).await }
    }

    /// The `diagnostics` tool's spec, while a server's program is found.
    pub(super) fn tool_spec(&self) -> Option<ToolSpec> {
        self.manager
            .as_ref()
            .filter(|l| l.any_found())
            .map(|_| crate::engine::lsp::tool_spec())
    }

    /// Whether a call of `name` is the `diagnostics` tool's, and the servers are on to run it.
    pub(super) fn runs(&self, name: &str) -> bool {
        name == names::DIAGNOSTICS && self.manager.is_some()
    }

    /// The `diagnostics` tool's call (the servers are on: [`LanguageServers::runs`]).
    pub(super) fn diagnostics(&self, input: &Value) -> impl Future<Output = ToolOutput> + use<> {
        let (manager, input) = (self.manager.clone(), input.clone());
        async move {
            match manager {
                Some(m) => m.diagnostics_tool(&input).await,
                None => ToolOutput::error("the language servers are off"),
            }
        }
    }

    /// `/lsp`: the servers in words.
    pub(super) fn status(&self) -> Event {
        let message = self.manager.as_ref().map_or_else(
            || "Language servers are off (--no-lsp, or no runtime)".to_string(),
            |l| l.report(),
        );
        Event::Notice { message }
    }

    /// The latest problems of every file the servers have open (None: they are off).
    pub(super) fn open_problems(&self) -> Option<OpenProblems> {
        self.manager.as_ref().map(|l| l.open_problems())
    }

    /// Stop the servers (when the engine stops).
    pub(super) async fn shutdown(&self) {
        if let Some(manager) = &self.manager {
            manager.shutdown().await;
        }
    }
}

/// What a call's report adds: its text after the call's own result, for the model (`out`'s
/// appendix), and the event for the front end. None when it says nothing.
pub(super) fn told(
    report: Option<ChangeReport>,
    turn: Option<crate::engine::protocol::TurnId>,
    id: &str,
    out: &mut ToolOutput,
) -> Option<Event> {
    let report = report.filter(|r| !r.is_empty())?;
    out.appendix = Some(report.text().into());
    Some(Event::Diagnostics {
        turn,
        id: id.to_string(),
        report,
    })
}
