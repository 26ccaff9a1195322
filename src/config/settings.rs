//! The effective settings of a run, one group per concern, and how they are merged: each concern
//! resolves its own flags, environment and file keys (flag > env > file > default), in an order
//! that lets a later one use what an earlier one decided (the demo, the model, the data dir).

use super::cli::Cli;
use super::context::{self, ContextSettings, WindowInputs};
use super::env::Env;
use super::error::ConfigError;
use super::file::FileConfig;
use super::front::{self, FrontSettings};
use super::hooks::{self, HookSettings};
use super::lsp::{self, LspSettings};
use super::places::{self, Places};
use super::provider::{self, ProviderSettings};
use super::sandbox::{self, SandboxSettings};
use super::tools::{self, ToolSettings};
use super::web::{self, WebSettings};

/// The effective settings of a run.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    /// `-p TASK`: run headless with this task.
    pub(crate) prompt: Option<String>,
    /// `flower-tui acp`: serve the Agent Client Protocol on stdio.
    pub(crate) acp: bool,
    pub(crate) provider: ProviderSettings,
    pub(crate) context: ContextSettings,
    pub(crate) places: Places,
    pub(crate) tools: ToolSettings,
    pub(crate) front: FrontSettings,
    pub(crate) sandbox: SandboxSettings,
    pub(crate) web: WebSettings,
    pub(crate) hooks: HookSettings,
    pub(crate) lsp: LspSettings,
}

/// Merge flags, env and file into the effective config.
pub(crate) fn resolve(cli: Cli, env: &Env, file: FileConfig) -> Result<Config, ConfigError> {
    let acp = cli.command == Some(super::cli::Command::Acp);
    if cli.command == Some(super::cli::Command::PdfText) {
        return Err(ConfigError::BadValue {
            key: "pdf-text",
            accepted: "`flower-tui pdf-text` alone, without flags (the PDF reader web_fetch starts)",
            got: "flags before it".into(),
        });
    }
    // Neither asks a terminal: both need a provider (or `--demo`) named up front.
    let headless = cli.prompt.is_some() || acp;
    let provider = provider::resolve(cli.provider, file.provider, env, headless)?;
    let demo = provider.backend.is_demo();
    let places = places::resolve(cli.places, file.places, env, demo)?;
    let inputs = WindowInputs {
        model: &provider.model,
        demo,
        data_dir: &places.data_dir,
        max_tokens: provider.max_tokens,
    };
    let context = context::resolve(cli.context, file.context, env, inputs)?;
    let tools = tools::resolve(cli.tools, file.tools, env)?;
    let front = front::resolve(cli.front, file.front, env)?;
    let sandbox = sandbox::resolve(cli.sandbox, file.sandbox, env)?;
    let web = web::resolve(file.web)?;
    let hooks = hooks::resolve(file.hooks, env);
    let lsp = lsp::resolve(cli.lsp, file.lsp)?;
    Ok(Config {
        prompt: cli.prompt,
        acp,
        provider,
        context,
        places,
        tools,
        front,
        sandbox,
        web,
        hooks,
        lsp,
    })
}
