//! The session's own events in the reducer: a session starting and the context it holds (the
//! gauge and its thresholds, a window learned from an overflow), compaction, the model and effort
//! in force, a resumed run, and the engine's answers to the commands that ask it: the "always"
//! grants and the settings files' rules of `/permissions`, the project instructions a session read, `/init` over an existing
//! file, `/cost`, the session picker, `@path` attachments.

use std::path::Path;

use crate::engine::context::{Thresholds, WindowSource, fmt_tokens, fmt_window};
use crate::engine::ledger::SubagentRecord;
use crate::engine::protocol::{
    Allowance, ApprovalPolicy, CostRow, Effort, Event, InstructionFile, ListedRule, SessionSummary,
};

use super::input::human_bytes;
use super::session_picker::SessionPicker;
use super::state::{AppState, Picker};

/// Apply one event of the session (not of a turn).
pub(super) fn on_session_event(state: &mut AppState, ev: Event) {
    match ev {
        Event::SessionStarted {
            session_id,
            generation,
            model,
            provider,
            thresholds,
            demo,
            ..
        } => {
            state
                .status
                .session_started(model, provider, demo, thresholds);
            state.session.started(session_id, generation);
        }
        Event::Usage {
            context,
            thresholds,
            estimated,
            masked_tokens,
            ..
        } => {
            state.status.masked(masked_tokens);
            state.status.usage(context, thresholds, estimated);
        }
        // The engine's notice that follows says what was learned and where it is recorded.
        Event::WindowLearned { thresholds, .. } => {
            state.status.window_learned(thresholds);
        }
        Event::Compaction {
            before,
            after,
            trigger,
        } => state.chat.notice(format!(
            "Context compacted ({trigger}): {} → {}",
            fmt_tokens(before),
            fmt_tokens(after)
        )),
        Event::Model {
            model,
            effort,
            thresholds,
            window_source,
        } => on_model(state, model, effort, thresholds, window_source),
        Event::Resumed {
            run_id,
            generation,
            messages,
            latest_handoff,
            ..
        } => {
            // Another run (or the same one, continued): its step's pins, plan and focus follow
            // in their own events; what was shown of the run left behind goes. Its latest handoff
            // document is what `/edit-handoff` and Ctrl-E open now.
            state.memory = Default::default();
            state.editor.set_latest_handoff(latest_handoff);
            on_resumed(state, run_id, generation, messages)
        }
        Event::Sessions {
            current_run,
            sessions,
        } => on_sessions(state, current_run, sessions),
        Event::Permissions {
            policy,
            allowances,
            sandbox,
            rules,
        } => on_permissions(state, policy, allowances, &sandbox, &rules),
        Event::SessionPrompt { instructions, .. } => on_session_prompt(state, &instructions),
        Event::InitExists { path, .. } => on_init_exists(state, &path),
        Event::Cost {
            step,
            rows,
            subagents,
            total_usd,
            num_turns,
            web_searches,
        } => {
            on_cost(state, &step, &rows, &subagents, total_usd, num_turns);
            if web_searches > 0 {
                state
                    .chat
                    .notice(crate::engine::pricing::web_search_line(web_searches));
            }
        }
        Event::Attachment {
            attached, summary, ..
        } => on_attachment(state, attached, summary),
        _ => {}
    }
}

/// `/permissions`, `/permissions revoke …`: the grants in force, numbered for revoking.
fn on_permissions(
    state: &mut AppState,
    policy: ApprovalPolicy,
    allowances: Vec<Allowance>,
    sandbox: &str,
    rules: &[ListedRule],
) {
    let mut lines = vec![match policy {
        ApprovalPolicy::Ask => {
            "Approvals: asked for each tool call that writes or runs".to_string()
        }
        ApprovalPolicy::Auto => {
            "Approvals: --yes (every call inside the workspace is allowed)".to_string()
        }
        ApprovalPolicy::AskOnce => {
            "Approvals: the first call was asked for, the rest are allowed (the demo)".to_string()
        }
    }];
    lines.push(format!("Sandbox of commands: {sandbox}"));
    if allowances.is_empty() {
        lines.push("Nothing is always allowed in this session.".into());
    } else {
        lines.push("Always allowed in this session:".into());
        for (i, a) in allowances.iter().enumerate() {
            lines.push(format!("  {}. {}", i + 1, a.label));
        }
        lines.push("/permissions revoke N (or all) takes one back".into());
    }
    if rules.is_empty() {
        lines.push("No permission rules in the settings files.".into());
    } else {
        lines.push(
            "Permission rules of the settings files (deny wins, then ask, then allow):".into(),
        );
        for r in rules {
            let from = r
                .source
                .as_deref()
                .map(|p| format!("  ({})", p.display()))
                .unwrap_or_default();
            lines.push(format!("  {:5} {}{from}", r.kind, r.rule));
        }
    }
    state.questions.set_allowances(allowances);
    state.chat.notice(lines.join("\n"));
}

/// The project instructions a new session read, in one line (nothing when there are none).
fn on_session_prompt(state: &mut AppState, files: &[InstructionFile]) {
    if files.is_empty() {
        return;
    }
    let parts: Vec<String> = files
        .iter()
        .map(|f| {
            let name = short(&f.path);
            match &f.error {
                Some(e) => format!("{name} (unreadable: {e})"),
                None if f.included < f.bytes => format!(
                    "{name} ({} of {}: cut by the cap)",
                    human_bytes(f.included),
                    human_bytes(f.bytes)
                ),
                None => format!("{name} ({})", human_bytes(f.bytes)),
            }
        })
        .collect();
    state
        .chat
        .notice(format!("Project instructions: {}", parts.join(" · ")));
}

/// The last two components of a path: `sub/AGENTS.md`.
fn short(path: &Path) -> String {
    let parts: Vec<String> = path
        .components()
        .rev()
        .take(2)
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    parts.into_iter().rev().collect::<Vec<_>>().join("/")
}

/// `/init` found an `AGENTS.md`: say how to replace it.
fn on_init_exists(state: &mut AppState, path: &Path) {
    state.chat.notice(format!(
        "{} exists already: nothing was changed. /init overwrite drafts a new one in its place",
        path.display()
    ));
}

/// `/cost`: the ledger's figures, a row per generation and the total.
fn on_cost(
    state: &mut AppState,
    step: &str,
    rows: &[CostRow],
    subagents: &[SubagentRecord],
    total_usd: f64,
    num_turns: u32,
) {
    if rows.is_empty() {
        return state.chat.notice("No cost yet (no session has started)");
    }
    let mut lines = vec![format!("Cost of step {step}:")];
    let width = rows
        .iter()
        .map(|r| r.label.chars().count())
        .max()
        .unwrap_or(0);
    for r in rows {
        let label = format!("{:<width$}", r.label);
        lines.push(format!(
            "  {label}  ${:.4} · {} turn{} · ctx {}{}",
            r.cost_usd,
            r.num_turns,
            if r.num_turns == 1 { "" } else { "s" },
            fmt_tokens(r.context),
            if r.current { " (now)" } else { "" },
        ));
        if r.subagents_usd > 0.0 {
            lines.push(format!(
                "  {:<width$}    of which subagents ${:.4}",
                "", r.subagents_usd
            ));
        }
    }
    lines.push(format!(
        "  {:<width$}  ${total_usd:.4} · {num_turns} turn{}",
        "total",
        if num_turns == 1 { "" } else { "s" }
    ));
    if !subagents.is_empty() {
        lines.push(format!("  subagents ({}):", subagents.len()));
        for a in subagents {
            lines.push(format!(
                "    {}: ${:.4} · {} tool call{} · {}",
                a.description,
                a.cost_usd,
                a.tool_calls,
                if a.tool_calls == 1 { "" } else { "s" },
                a.outcome
            ));
        }
    }
    state.chat.notice(lines.join("\n"));
}

/// `/resume`, `--resume`: the picker opens (or the chat says there is nothing to pick).
fn on_sessions(state: &mut AppState, current_run: String, sessions: Vec<SessionSummary>) {
    state.picker = SessionPicker::new(current_run, sessions).map(Picker::Sessions);
    if state.picker.is_none() {
        state
            .chat
            .notice("No earlier session in this workspace to resume");
    }
}

/// Another run is continued: what was shown of the run left behind goes; its replay follows.
fn on_resumed(state: &mut AppState, run_id: String, generation: u32, messages: usize) {
    // Continuing at start (`--continue`, `--resume ID`) names the run this process opened: the
    // replay goes under the banner. Another run picked later replaces what the chat showed.
    let another = state.session.resumed(&run_id);
    if another {
        state.input.clear_queue();
    }
    state.chat.resumed(another);
    state.picker = None;
    state.questions.clear();
    state.chat.notice(format!(
        "Continuing run {run_id} at generation {generation} ({messages} message{})",
        if messages == 1 { "" } else { "s" }
    ));
}

/// `/model`, `/effort`: what is in force now.
fn on_model(
    state: &mut AppState,
    model: String,
    effort: Option<Effort>,
    thresholds: Thresholds,
    window_source: WindowSource,
) {
    let changed = state
        .status
        .model_set(model.clone(), effort, thresholds, window_source);
    let effort = effort.map_or("off".to_string(), |e| e.as_str().to_string());
    state.chat.notice(format!(
        "{}Model {model} · effort {effort} · window {} ({window_source}), from the next request",
        if changed { "" } else { "Unchanged: " },
        fmt_window(thresholds.window)
    ));
}

/// An `@path` of a sent message: attached, or why not.
fn on_attachment(state: &mut AppState, attached: bool, summary: String) {
    if attached && summary.starts_with("[image: ") {
        // An image shows as its chip: `[image: shot.png 1280×720]`.
        state.chat.notice(summary);
    } else if attached {
        state.chat.notice(format!("attached {summary}"));
    } else {
        // The summary says "PATH: not attached…" and why.
        state.chat.error(summary);
    }
}
