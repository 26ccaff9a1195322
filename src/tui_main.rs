//! The interactive entry point: start the engine, run the full-screen TUI over it until the user
//! quits, let the engine finish its records, and say how to continue the session.

use std::io::Write;

use crate::config::{Config, SessionChoice};
use crate::engine::session;

/// Run the TUI until the user quits. Returns the process exit code.
pub(crate) async fn run(mut config: Config) -> i32 {
    // Held to the end: the demo's scratch directory goes when it is dropped.
    let _scratch = match crate::launch::prepare_demo(&mut config, true) {
        Ok(s) => s,
        Err(e) => return crate::launch::start_failed(&e),
    };
    let params = match crate::launch::engine_params(&config, true) {
        Ok(p) => p,
        Err(e) => return crate::launch::start_failed(&e),
    };
    let thresholds = params.settings.thresholds;
    let mcp = params.mcp.clone();
    let run_id = params.run_dir.run_id.clone();
    let extensions = params.extensions.clone();
    let handle = match session::spawn(params) {
        Ok(h) => h,
        Err(e) => return crate::launch::start_failed(&e),
    };
    if config.places.session == SessionChoice::Pick {
        // `--resume` alone: the engine lists this workspace's sessions; the TUI shows the list
        // as a picker and answers with `Op::Resume`.
        let _ = handle
            .ops
            .try_send(crate::engine::protocol::Op::ListSessions);
    }
    let (p, front, places) = (&config.provider, &config.front, &config.places);
    let demo = p.backend.is_demo();
    let banner = demo.then(|| crate::engine::demo::BANNER.to_string());
    let provider = p.backend.label().to_string();
    let release = mcp
        .clone()
        .map(|m| Box::new(move || m.release()) as Box<dyn FnOnce() + Send>);
    let result = crate::tui::run(crate::tui::TuiParams {
        on_first_frame: release,
        ops: handle.ops.clone(),
        events: handle.events,
        model: p.model.clone(),
        provider,
        demo,
        review: config.context.review.secs(),
        theme: front.theme.clone(),
        no_color: front.no_color,
        editor_cmd: front.editor.clone(),
        thresholds,
        window_source: config.context.window_source,
        banner,
        notify: front.notify,
        run_id,
        effort: p.effort,
        workspace: places.workspace.clone(),
        extensions,
        config_report: config.config_report(),
        mouse_capture: front.mouse_capture,
        history_file: front
            .history
            .then(|| crate::tui::history_file::path_for(&places.data_dir, &places.workspace)),
    })
    .await;
    // Let the engine finish its records (tool results, ledger) before the process exits.
    let _ = handle.ops.try_send(crate::engine::protocol::Op::Shutdown);
    let _ = tokio::time::timeout(std::time::Duration::from_secs(3), handle.task).await;
    // Servers are stopped however flower-tui exits; here, gently first.
    if let Some(mcp) = mcp {
        mcp.shutdown().await;
    }
    match result {
        Ok(outcome) => {
            // The alternate screen is gone with the transcript: the conversation goes to the
            // normal screen, so it stays in the scrollback, then how to come back.
            // Not `println!`: the terminal may be gone, and a failed write must not panic.
            let _ = write!(std::io::stdout(), "{}", scrollback(&outcome));
            if let Some(text) = farewell(&outcome, &config) {
                let _ = writeln!(std::io::stdout(), "{text}");
            }
            0
        }
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "flower-tui: {e:#}");
            1
        }
    }
}

/// At most this many lines of the conversation are printed on leaving (the newest).
const SCROLLBACK_LINES: usize = 2_000;

/// The conversation printed after the TUI left the alternate screen (its newest
/// [`SCROLLBACK_LINES`] lines), and the latest handoff document.
pub(crate) fn scrollback(outcome: &crate::tui::Outcome) -> String {
    let lines: Vec<&str> = outcome.conversation.trim_end().lines().collect();
    let mut out = String::new();
    if lines.len() > SCROLLBACK_LINES {
        out.push_str(&format!(
            "[… {} earlier lines: the session's transcript keeps them all]\n",
            lines.len() - SCROLLBACK_LINES
        ));
    }
    for line in lines
        .iter()
        .skip(lines.len().saturating_sub(SCROLLBACK_LINES))
    {
        out.push_str(line);
        out.push('\n');
    }
    if !out.is_empty() {
        out.push('\n');
    }
    if let Some(doc) = &outcome.latest_handoff {
        out.push_str(&format!("latest handoff: {}\n", doc.display()));
    }
    out
}

/// The lines printed after the TUI left the alternate screen: the session and the command that
/// continues it (with `--workspace` when it is not the current directory). None for the demo
/// (its scratch copy is gone) or when no session started.
pub(crate) fn farewell(outcome: &crate::tui::Outcome, config: &Config) -> Option<String> {
    let id = outcome.session_id.as_deref()?;
    if config.provider.backend.is_demo() {
        return None;
    }
    let here = std::env::current_dir()
        .ok()
        .and_then(|d| d.canonicalize().ok());
    let ws = &config.places.workspace;
    let ws = ws.canonicalize().unwrap_or_else(|_| ws.clone());
    let workspace = if here.as_deref() == Some(ws.as_path()) {
        String::new()
    } else {
        format!(" --workspace {}", shell_quote(&ws.display().to_string()))
    };
    let resume = match &outcome.run_id {
        Some(run) => format!("flower-tui --resume {}{workspace}", shell_quote(run)),
        None => format!("flower-tui --continue{workspace}"),
    };
    Some(format!(
        "flower-tui: session {id} (generation {})\n  continue it: {resume}\n  pick another: flower-tui --resume{workspace}",
        outcome.generation
    ))
}

/// `s` as one shell word.
fn shell_quote(s: &str) -> String {
    let plain = s
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+:@,=".contains(c));
    if plain && !s.is_empty() {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}
