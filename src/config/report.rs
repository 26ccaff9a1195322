//! The `-v` report: the effective provider, endpoint, model, window and thresholds, the handoff
//! mode, workspace, log, MCP servers, language servers (found on `PATH` or not), the sandbox of commands and which prompt (full or lean) the
//! sessions get, and the API key masked to its first four characters (never the key itself).

use super::provider::Backend;
use super::settings::Config;
use crate::engine::mcp::ServerConfig;
use crate::engine::secrets::{self, ApiKey};
use crate::engine::tools::sandbox;

impl Config {
    /// The `-v` report, one `name: value` line each.
    pub(crate) fn verbose_report(&self) -> String {
        let (p, ctx) = (&self.provider, &self.context);
        let t = ctx.thresholds();
        let (provider, endpoint) = match p.backend {
            Backend::Demo => ("demo (built-in scripted model)", "(in-process)"),
            Backend::Api(kind) => (kind.as_str(), p.base_url.as_str()),
        };
        let lines = [
            format!("provider: {provider}"),
            format!("endpoint: {endpoint}"),
            format!("model: {}", p.model),
            format!("window: {} ({})", t.window, ctx.window_source.describe()),
            format!("headroom: {}", t.headroom),
            format!("at: {}", t.at),
            format!("warn_at: {}", t.warn_at),
            format!(
                "api key: {}",
                mask_key(p.api_key.as_ref().map(ApiKey::expose))
            ),
            format!(
                "handoff: {} ({})",
                ctx.policy.describe(),
                ctx.handoff_mode.as_str()
            ),
            format!("workspace: {}", self.places.workspace.display()),
            format!(
                "log: {} ({})",
                self.front.log_level,
                crate::logging::log_dir(&self.places.data_dir).display()
            ),
            format!("mcp servers: {}", mcp_summary(&self.tools.mcp_servers)),
            format!(
                "language servers: {}",
                crate::engine::lsp::describe(
                    &self.lsp.servers,
                    std::env::var("PATH").ok().as_deref(),
                    self.lsp.off
                )
            ),
            format!(
                "sandbox: {}",
                sandbox::describe(&self.sandbox.policy, &sandbox::Support::current())
            ),
            format!("prompt: {}", ctx.prompt_style().as_str()),
            format!("checkpoints: {}", self.checkpoints_summary()),
        ];
        lines.join("\n")
    }

    /// Whether checkpoints are taken, and whether the workspace's feed keeper answers.
    fn checkpoints_summary(&self) -> String {
        use crate::engine::policy::CheckpointPolicy;
        match self.places.checkpoints {
            CheckpointPolicy::Off => "off".into(),
            CheckpointPolicy::OnWithoutKeeper => {
                "on, no feed keeper (checkpoint_keeper = false: each start walks the workspace)"
                    .into()
            }
            CheckpointPolicy::On => format!(
                "on, {}",
                crate::engine::checkpoint::describe_keeper(
                    &self.places.data_dir,
                    &self.places.workspace
                )
            ),
        }
    }

    /// `/config` in the TUI: where the settings come from, then the `-v` report and the front
    /// end's own settings.
    pub(crate) fn config_report(&self) -> String {
        let file = super::env::config_path(&super::env::Env::from_process()).map_or(
            "(no config directory)".to_string(),
            |p| {
                let state = if p.exists() { "" } else { " (not present)" };
                format!("{}{state}", p.display())
            },
        );
        let f = &self.front;
        let review = self
            .context
            .review
            .secs()
            .map_or("off".to_string(), |s| format!("{s} s"));
        [
            "Settings this run started with (flags > environment > config file):".to_string(),
            format!("config file: {file}"),
            self.verbose_report(),
            format!("review window: {review}"),
            format!("theme: {}", f.theme),
            format!("notify: {:?}", f.notify).to_lowercase(),
            format!("input history kept: {}", f.history),
            format!("mouse captured at start: {}", f.mouse_capture),
        ]
        .join("\n")
    }
}

/// The key masked to its first 4 characters: `sk-a****`.
pub(crate) fn mask_key(key: Option<&str>) -> String {
    match key {
        None => "(none)".into(),
        Some(k) => secrets::mask(k),
    }
}

/// `name (command or URL), …` for `-v`, or `(none in the config file)`.
fn mcp_summary(servers: &[ServerConfig]) -> String {
    if servers.is_empty() {
        return "(none in the config file)".into();
    }
    servers
        .iter()
        .map(|s| {
            let off = if s.enabled { "" } else { ", disabled" };
            format!("{} ({}{off})", s.name, s.transport.summary())
        })
        .collect::<Vec<_>>()
        .join(", ")
}
