//! A server's supervisor task: start it, keep its tools current, note how it ends, stop it on
//! request. It reports through the manager's slot, checked against its generation.

use std::sync::Arc;

use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use super::super::client::{self, Handler};
use super::super::names;
use super::super::status::ServerState;
use super::{GIVE_UP_FACTOR, MAX_DESCRIPTION, STOP_GRACE, Shared, ToolEntry, secs};

/// A supervisor: start the server, keep its tools current, note how it ends, stop it on request.
pub(super) async fn supervise(
    shared: Arc<Shared>,
    idx: usize,
    generation: u64,
    mut stop: oneshot::Receiver<()>,
) {
    let Some(cfg) = shared.slots.get(idx).map(|s| s.config.clone()) else {
        return;
    };
    // Held until the front end's first frame is up (or a moment at the most).
    let mut gate = shared.gate.subscribe();
    tokio::select! {
        _ = tokio::time::timeout(super::GATE_WAIT, gate.wait_for(|open| *open)) => {}
        // Stopped while held (a quit before the first frame): nothing was spawned.
        _ = &mut stop => {
            shared.finish(idx, generation, ServerState::Stopped);
            return;
        }
    }
    let (list_tx, mut list_changed) = mpsc::unbounded_channel();
    let give_up = cfg.startup_timeout.saturating_mul(GIVE_UP_FACTOR);
    let mut warnings = Vec::new();
    let on_spawn: client::OnSpawn<'_> = Box::new(|group, diag| {
        if let Some(slot) = shared.slots.get(idx) {
            let mut s = slot.lock();
            s.groups.push((generation, group.clone()));
            s.diag = Some(diag.clone());
        }
    });
    let connecting = client::connect(
        &cfg,
        &shared.ctx,
        Handler::new(list_tx),
        on_spawn,
        &mut warnings,
    );
    let started = tokio::select! {
        r = tokio::time::timeout(give_up, connecting) => r,
        _ = &mut stop => {
            shared.finish(idx, generation, ServerState::Stopped);
            return;
        }
    };
    if !warnings.is_empty() {
        shared.update(idx, Some(generation), |s| s.warnings = warnings);
    }
    let (conn, tools) = match started {
        Ok(Ok(connected)) => connected,
        Ok(Err(failure)) => {
            shared.finish(idx, generation, ServerState::Failed { reason: failure.0 });
            return;
        }
        Err(_) => {
            let diag = shared
                .slots
                .get(idx)
                .and_then(|s| s.lock().diag.clone())
                .map(|d| d.describe())
                .unwrap_or_default();
            let reason = format!(
                "did not finish starting within {} ({GIVE_UP_FACTOR} × its startup_timeout){}",
                secs(give_up),
                client::clause(&diag)
            );
            shared.finish(idx, generation, ServerState::Failed { reason });
            return;
        }
    };
    let client::Connection {
        running,
        mut process,
    } = conn;
    let peer = running.peer().clone();
    shared.set_tools(idx, generation, peer.clone(), tools);
    let cancel = running.cancellation_token();
    let mut waiting = std::pin::pin!(running.waiting());
    loop {
        tokio::select! {
            _ = &mut waiting => {
                let reason = match process.as_mut() {
                    Some(p) => client::exit_reason(p, "").await,
                    None => None,
                };
                let reason = reason.unwrap_or_else(|| "closed the connection".to_string());
                shared.finish(idx, generation, ServerState::Failed { reason });
                return;
            }
            Some(()) = list_changed.recv() => {
                // A burst of notifications is one re-listing.
                while list_changed.try_recv().is_ok() {}
                let listed = tokio::time::timeout(cfg.startup_timeout, peer.list_all_tools()).await;
                match listed {
                    Ok(Ok(tools)) => shared.set_tools(idx, generation, peer.clone(), tools),
                    Ok(Err(e)) => shared.note_error(idx, generation, &format!("listing its tools again failed: {}", client::error_chain(&e))),
                    Err(_) => shared.note_error(idx, generation, "listing its tools again timed out"),
                }
            }
            _ = &mut stop => {
                cancel.cancel();
                let _ = tokio::time::timeout(STOP_GRACE, &mut waiting).await;
                if let Some(p) = process.as_mut() {
                    super::super::process::stop(&mut p.child, &p.group, STOP_GRACE).await;
                }
                shared.finish(idx, generation, ServerState::Stopped);
                return;
            }
        }
    }
}

/// The model's view of a server's tools: API-safe names, a description, an object schema. A name
/// the server lists twice is offered once.
pub(super) fn tool_entries(server: &str, tools: Vec<rmcp::model::Tool>) -> Vec<ToolEntry> {
    let mut out: Vec<ToolEntry> = Vec::with_capacity(tools.len());
    for t in tools {
        let qualified = names::qualified(server, &t.name);
        if out.iter().any(|e| e.qualified == qualified) {
            continue;
        }
        let mut description = t
            .description
            .as_deref()
            .map(str::to_string)
            .or_else(|| t.title.clone())
            .filter(|d| !d.trim().is_empty())
            .unwrap_or_else(|| format!("Tool `{}` of MCP server `{server}`.", t.name));
        // Descriptions go into every request: a server cannot fill the context with them.
        if description.chars().count() > MAX_DESCRIPTION {
            description = description.chars().take(MAX_DESCRIPTION).collect();
            description.push('…');
        }
        let mut schema = (*t.input_schema).clone();
        // Both model APIs want an object schema.
        schema
            .entry("type")
            .or_insert_with(|| Value::String("object".into()));
        if schema.get("type").and_then(Value::as_str) == Some("object")
            && !schema.contains_key("properties")
        {
            schema.insert("properties".into(), Value::Object(Default::default()));
        }
        out.push(ToolEntry {
            qualified,
            tool: t.name.to_string(),
            description,
            schema: Value::Object(schema),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    use rmcp::model::Tool;
    use serde_json::json;

    fn tool(name: &str, description: Option<&str>, schema: Value) -> Tool {
        Tool::new_with_raw(
            name.to_string(),
            description.map(|d| d.to_string().into()),
            schema.as_object().cloned().unwrap(),
        )
    }

    #[test]
    fn entries_are_api_safe_described_object_schemas() {
        let long = "d".repeat(5000);
        let entries = tool_entries(
            "srv",
            vec![
                tool(
                    "plain",
                    Some("Does things."),
                    json!({"type": "object", "properties": {"a": {}}}),
                ),
                tool("no.desc", None, json!({})),
                tool("long", Some(&long), json!({"type": "object"})),
                tool("plain", Some("a duplicate"), json!({})),
            ],
        );
        let names: Vec<&str> = entries.iter().map(|e| e.qualified.as_str()).collect();
        assert_eq!(names.len(), 3);
        assert_eq!(names[0], "mcp__srv__plain");
        assert!(names[1].starts_with("mcp__srv__no_desc_"));
        assert_eq!(entries[0].description, "Does things.");
        assert_eq!(
            entries[0].schema,
            json!({"type": "object", "properties": {"a": {}}})
        );
        assert_eq!(
            entries[1].description,
            "Tool `no.desc` of MCP server `srv`."
        );
        assert_eq!(
            entries[1].schema,
            json!({"type": "object", "properties": {}})
        );
        assert_eq!(entries[1].tool, "no.desc");
        assert_eq!(entries[2].description.chars().count(), MAX_DESCRIPTION + 1);
        assert!(entries[2].description.ends_with('…'));
    }

    #[test]
    fn durations_read_as_seconds() {
        assert_eq!(secs(Duration::from_secs(10)), "10 s");
        assert_eq!(secs(Duration::from_millis(500)), "0.5 s");
        assert_eq!(secs(Duration::from_millis(1800)), "1.8 s");
    }
}
