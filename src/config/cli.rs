//! The command line: `-p TASK` picks headless mode, every other flag belongs to one concern's
//! group (flattened here, so the command line itself is flat). A flag's place in `--help` is its
//! `display_order`; a new flag takes the next number after the highest (`--help` and `--version`
//! come after all of them by themselves). `flower-tui acp` serves editors instead of opening the
//! TUI; every flag is global, so it is taken after `acp` too (`flower-tui acp --window 200k`).

use clap::Parser;

use super::context::ContextFlags;
use super::front::FrontFlags;
use super::lsp::LspFlags;
use super::places::PlaceFlags;
use super::provider::ProviderFlags;
use super::sandbox::SandboxFlags;
use super::tools::ToolFlags;

/// The command line. Every flag also has a config-file key of the same name with `_` for `-`.
#[derive(Debug, Clone, Default, Parser)]
#[command(
    name = "flower-tui",
    version,
    about = "A terminal coding agent with visible, editable context handoffs"
)]
pub(crate) struct Cli {
    /// Run headless with this task (`-` reads it from stdin); print events as JSON lines
    #[arg(short = 'p', long = "print", value_name = "TASK", display_order = 0)]
    pub(crate) prompt: Option<String>,
    #[command(flatten)]
    pub(crate) provider: ProviderFlags,
    #[command(flatten)]
    pub(crate) context: ContextFlags,
    #[command(flatten)]
    pub(crate) places: PlaceFlags,
    #[command(flatten)]
    pub(crate) tools: ToolFlags,
    #[command(flatten)]
    pub(crate) front: FrontFlags,
    #[command(flatten)]
    pub(crate) sandbox: SandboxFlags,
    #[command(flatten)]
    pub(crate) lsp: LspFlags,
    #[command(subcommand)]
    pub(crate) command: Option<Command>,
}

/// What to run instead of the TUI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::Subcommand)]
pub(crate) enum Command {
    /// Serve the Agent Client Protocol on stdin and stdout, for editors (Zed, JetBrains IDEs,
    /// Neovim); the flags apply to every session the editor opens
    Acp,
    /// Read a PDF on stdin and write its text on stdout: the child process `web_fetch` starts
    /// for a PDF (a malformed file can crash or hang the parser, never flower-tui). Not in
    /// `--help`; taken only as the first argument, before any configuration is read.
    #[command(name = "pdf-text", hide = true)]
    PdfText,
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn every_flag_has_its_own_place_in_the_help() {
        let cmd = Cli::command();
        let mut places: Vec<(usize, String)> = cmd
            .get_arguments()
            .map(|a| (a.get_display_order(), a.get_id().to_string()))
            .collect();
        places.sort();
        let orders: Vec<usize> = places.iter().map(|p| p.0).collect();
        let expected: Vec<usize> = (0..orders.len()).collect();
        assert_eq!(orders, expected, "{places:?}");
        assert_eq!(places.first().map(|p| p.1.as_str()), Some("prompt"));
    }

    #[test]
    fn the_pdf_reader_is_a_hidden_subcommand() {
        let name = crate::engine::tools::web_fetch::pdf::COMMAND;
        let cli = Cli::try_parse_from(["flower-tui", name]).unwrap();
        assert_eq!(cli.command, Some(Command::PdfText));
        let help = Cli::command().render_help().to_string();
        assert!(help.contains("acp"), "{help}");
        assert!(!help.contains(name), "{help}");
    }
}
