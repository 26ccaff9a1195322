//! The interactive entry point: start the engine, then the full-screen TUI over it.

use crate::config::Config;
use crate::engine::session;

/// Run the TUI until the user quits. Returns the process exit code.
pub async fn run(mut config: Config) -> i32 {
    // Held to the end: the demo's scratch directory goes when it is dropped.
    let _scratch = match crate::launch::prepare_demo(&mut config, true) {
        Ok(s) => s,
        Err(e) => return crate::launch::start_failed(&e),
    };
    let params = match crate::launch::engine_params(&config, true) {
        Ok(p) => p,
        Err(e) => return crate::launch::start_failed(&e),
    };
    let thresholds = params.thresholds;
    let mcp = params.mcp.clone();
    let handle = match session::spawn(params) {
        Ok(h) => h,
        Err(e) => return crate::launch::start_failed(&e),
    };
    if config.resume == Some(crate::config::ResumeChoice::Pick) {
        // `--resume` alone: the engine lists this workspace's sessions; the TUI shows the list
        // as a picker and answers with `Op::Resume`.
        let _ = handle
            .ops
            .try_send(crate::engine::protocol::Op::ListSessions);
    }
    let demo = config.backend.is_demo();
    let banner = demo.then(|| crate::engine::demo::BANNER.to_string());
    let provider = config.backend.label().to_string();
    let result = crate::tui::run(crate::tui::TuiParams {
        ops: handle.ops.clone(),
        events: handle.events,
        model: config.model.clone(),
        provider,
        demo,
        review: config.review,
        theme: config.theme.clone(),
        no_color: config.no_color,
        editor_cmd: config.editor.clone(),
        thresholds,
        window_source: config.window_source.describe().to_string(),
        banner,
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
        Ok(()) => 0,
        Err(e) => {
            eprintln!("flower-tui: {e:#}");
            1
        }
    }
}
