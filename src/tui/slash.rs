//! Slash commands as data: the table drives parsing, the popup while typing `/…`, and `/help`.
//! The custom commands (Markdown files the engine expands) follow the built-in ones in the popup
//! and in `/help`, with their description and argument hint; a built-in name always means the
//! built-in command.

use crate::engine::commands::Catalog;

/// A slash command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SlashCommand {
    /// `/handoff [focus]`: a manual handoff.
    Handoff,
    /// `/edit-handoff`: reopen the latest handoff in the side editor.
    EditHandoff,
    /// `/new`: a fresh session without a handoff.
    New,
    /// `/window N`: a new context window.
    Window,
    /// `/cost`: cost and turns per generation.
    Cost,
    /// `/copy`: the last reply to the clipboard.
    Copy,
    /// `/pin TEXT`: pin a line for the rest of the step.
    Pin,
    /// `/pins [rm N | clear]`: list the pins, unpin.
    Pins,
    /// `/focus [TEXT]`: the standing focus of the step's handoffs; alone, clears it.
    Focus,
    /// `/mcp [restart NAME]`: the MCP servers and their state; restart one.
    Mcp,
    /// `/lsp`: the language servers, their state and the files they watch.
    Lsp,
    /// `/jobs [N | stop N]`: the background jobs; a job's last lines; stop one.
    Jobs,
    /// `/resume`: pick a session of this workspace to continue.
    Resume,
    /// `/model [NAME]`: the model of the next request.
    Model,
    /// `/effort low|medium|high|off`: extended thinking / reasoning effort.
    Effort,
    /// `/permissions [revoke N|all]`: what "always" allowed.
    Permissions,
    /// `/init [overwrite]`: draft an AGENTS.md for the repository.
    Init,
    /// `/undo [overwrite|skip]`: restore the files of the last turn that changed files.
    Undo,
    /// `/redo [overwrite|skip]`: reverse the last `/undo`.
    Redo,
    /// `/rewind`: pick a message of the step to go back to before.
    Rewind,
    /// `/skills`: the skills the model is offered.
    Skills,
    /// `/status`: the model, session, mode and context at a glance.
    Status,
    /// `/context`: what fills the context window (the engine answers).
    Context,
    /// `/memory`: what every generation of the step keeps (pins, focus, plan).
    Memory,
    /// `/config`: the settings this run started with.
    Config,
    /// `/export [PATH]`: the conversation as Markdown to a file.
    Export,
    /// `/hooks`: the hooks in force (the engine answers).
    Hooks,
    /// `/help`: commands and keys.
    Help,
    /// `/quit`.
    Quit,
}

/// One row of the command table.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CommandSpec {
    /// The command.
    pub(crate) cmd: SlashCommand,
    /// Without the slash.
    pub(crate) name: &'static str,
    /// Argument synopsis, empty when it takes none.
    pub(crate) args: &'static str,
    /// What it does, for `/help` and the popup.
    pub(crate) desc: &'static str,
}

/// The command table, in the order `/help` and the popup list them.
pub(crate) const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        cmd: SlashCommand::Handoff,
        name: "handoff",
        args: "[focus]",
        desc: "write a handoff document now and continue in a fresh session",
    },
    CommandSpec {
        cmd: SlashCommand::Handoff,
        name: "compact",
        args: "[focus]",
        desc: "as /handoff: hand off now, the successor starts from the document",
    },
    CommandSpec {
        cmd: SlashCommand::EditHandoff,
        name: "edit-handoff",
        args: "",
        desc: "open the latest handoff document in the side editor",
    },
    CommandSpec {
        cmd: SlashCommand::New,
        name: "new",
        args: "",
        desc: "start a fresh session without a handoff",
    },
    CommandSpec {
        cmd: SlashCommand::New,
        name: "clear",
        args: "",
        desc: "as /new: a fresh session without a handoff (the chat stays on screen)",
    },
    CommandSpec {
        cmd: SlashCommand::Window,
        name: "window",
        args: "[N]",
        desc: "show where the context window comes from, or set it (e.g. 200000 or 200K)",
    },
    CommandSpec {
        cmd: SlashCommand::Undo,
        name: "undo",
        args: "[overwrite|skip]",
        desc: "put back every file the last turn that changed files changed (again: further back)",
    },
    CommandSpec {
        cmd: SlashCommand::Redo,
        name: "redo",
        args: "[overwrite|skip]",
        desc: "reverse the last /undo",
    },
    CommandSpec {
        cmd: SlashCommand::Rewind,
        name: "rewind",
        args: "",
        desc: "go back to before a message of the step: code, conversation or both (Esc Esc)",
    },
    CommandSpec {
        cmd: SlashCommand::Cost,
        name: "cost",
        args: "",
        desc: "the cost and turns of each generation of the step, and the total (from the ledger)",
    },
    CommandSpec {
        cmd: SlashCommand::Resume,
        name: "resume",
        args: "",
        desc: "pick a session of this workspace and continue it",
    },
    CommandSpec {
        cmd: SlashCommand::Model,
        name: "model",
        args: "[NAME]",
        desc: "pick a model (the provider's and those known here), or switch to NAME, from the next request",
    },
    CommandSpec {
        cmd: SlashCommand::Effort,
        name: "effort",
        args: "low|medium|high|off",
        desc: "extended thinking (Anthropic) or reasoning effort (OpenAI) from the next turn",
    },
    CommandSpec {
        cmd: SlashCommand::Permissions,
        name: "permissions",
        args: "[revoke N|all]",
        desc: "list what \"always\" allowed this session, or take a grant back",
    },
    CommandSpec {
        cmd: SlashCommand::Init,
        name: "init",
        args: "[overwrite]",
        desc: "draft an AGENTS.md for this repository through the model",
    },
    CommandSpec {
        cmd: SlashCommand::Copy,
        name: "copy",
        args: "",
        desc: "copy the last reply to the clipboard (OSC 52)",
    },
    CommandSpec {
        cmd: SlashCommand::Pin,
        name: "pin",
        args: "TEXT",
        desc: "pin a line for the rest of the step: every successor reads it verbatim",
    },
    CommandSpec {
        cmd: SlashCommand::Pins,
        name: "pins",
        args: "[rm N|clear]",
        desc: "list the pins; rm N unpins number N, clear unpins all",
    },
    CommandSpec {
        cmd: SlashCommand::Focus,
        name: "focus",
        args: "[TEXT]",
        desc: "a focus every later handoff of the step keeps in view; alone, clears it",
    },
    CommandSpec {
        cmd: SlashCommand::Mcp,
        name: "mcp",
        args: "[restart NAME]",
        desc: "list the MCP servers with their state, or restart one",
    },
    CommandSpec {
        cmd: SlashCommand::Lsp,
        name: "lsp",
        args: "",
        desc: "list the language servers with their state and the files they watch",
    },
    CommandSpec {
        cmd: SlashCommand::Jobs,
        name: "jobs",
        args: "[N|stop N]",
        desc: "the background jobs, a list to view and stop them; N shows a job's last lines, stop N stops it",
    },
    CommandSpec {
        cmd: SlashCommand::Skills,
        name: "skills",
        args: "",
        desc: "list the skills the model may load, and the SKILL.md files that could not be",
    },
    CommandSpec {
        cmd: SlashCommand::Status,
        name: "status",
        args: "",
        desc: "the model, session, mode, context and run at a glance",
    },
    CommandSpec {
        cmd: SlashCommand::Context,
        name: "context",
        args: "",
        desc: "what fills the context window: prompt, tools, messages, results",
    },
    CommandSpec {
        cmd: SlashCommand::Memory,
        name: "memory",
        args: "",
        desc: "what every generation of the step keeps: pins, focus, plan",
    },
    CommandSpec {
        cmd: SlashCommand::Config,
        name: "config",
        args: "",
        desc: "the settings this run started with, and where they come from",
    },
    CommandSpec {
        cmd: SlashCommand::Export,
        name: "export",
        args: "[PATH]",
        desc: "write the conversation as Markdown to a file (in the workspace unless PATH says)",
    },
    CommandSpec {
        cmd: SlashCommand::Hooks,
        name: "hooks",
        args: "",
        desc: "the hooks in force and those waiting for your approval",
    },
    CommandSpec {
        cmd: SlashCommand::Help,
        name: "help",
        args: "",
        desc: "list commands and keys",
    },
    CommandSpec {
        cmd: SlashCommand::Quit,
        name: "quit",
        args: "",
        desc: "quit flower-tui",
    },
];

/// What the input box holds, as far as commands go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Parsed {
    /// A known command with its trimmed argument text (None when empty).
    Command {
        /// The command.
        cmd: SlashCommand,
        /// Its argument text, trimmed.
        arg: Option<String>,
    },
    /// A custom command (its name without the slash) with its trimmed argument text.
    Custom { name: String, args: String },
    /// `/something` that names no command.
    Unknown(String),
    /// Not a command: a message to send (also `/usr/bin/env is odd`, a path).
    Message,
}

/// The word after the slash, if the text is a command attempt: starts with `/`, and the first
/// word holds no further `/` (so an absolute path is a message).
fn command_word(text: &str) -> Option<(&str, &str)> {
    let rest = text.strip_prefix('/')?;
    let (word, arg) = match rest.find(char::is_whitespace) {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    if word.contains('/') {
        return None;
    }
    Some((word, arg))
}

/// Parse the input box text; `custom` are the custom commands.
pub(crate) fn parse(text: &str, custom: &Catalog) -> Parsed {
    let Some((word, arg)) = command_word(text) else {
        return Parsed::Message;
    };
    let arg = arg.trim();
    if let Some(spec) = COMMANDS.iter().find(|c| c.name == word) {
        return Parsed::Command {
            cmd: spec.cmd,
            arg: (!arg.is_empty()).then(|| arg.to_string()),
        };
    }
    match custom.get(word) {
        Some(c) => Parsed::Custom {
            name: c.name.clone(),
            args: arg.to_string(),
        },
        None => Parsed::Unknown(word.to_string()),
    }
}

/// One row of the popup: a built-in command or a custom one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PopupItem {
    /// Without the slash.
    pub(crate) name: String,
    /// Argument synopsis or hint, empty when it takes none.
    pub(crate) args: String,
    pub(crate) desc: String,
    /// The built-in command; `None` for a custom one.
    pub(crate) cmd: Option<SlashCommand>,
}

impl PopupItem {
    fn builtin(spec: &CommandSpec) -> PopupItem {
        PopupItem {
            name: spec.name.to_string(),
            args: spec.args.to_string(),
            desc: spec.desc.to_string(),
            cmd: Some(spec.cmd),
        }
    }

    fn custom(c: &crate::engine::commands::CustomCommand) -> PopupItem {
        PopupItem {
            name: c.name.clone(),
            args: c.argument_hint.clone().unwrap_or_default(),
            desc: format!("{} ({})", c.description, c.source.label()),
            cmd: None,
        }
    }

    /// `/name args` as the popup and `/help` show it.
    pub(crate) fn synopsis(&self) -> String {
        if self.args.is_empty() {
            format!("/{}", self.name)
        } else {
            format!("/{} {}", self.name, self.args)
        }
    }
}

/// The commands the popup lists for the text typed so far: only while the first word is being
/// typed (no whitespace yet), by prefix; the built-in ones first, then the custom ones.
pub(crate) fn popup_matches(text: &str, custom: &Catalog) -> Vec<PopupItem> {
    match command_word(text) {
        Some((word, "")) => COMMANDS
            .iter()
            .filter(|c| c.name.starts_with(word))
            .map(PopupItem::builtin)
            .chain(
                custom
                    .commands()
                    .filter(|c| c.name.starts_with(word))
                    .map(PopupItem::custom),
            )
            .collect(),
        _ => Vec::new(),
    }
}

/// `/handoff [focus]` as the popup and `/help` show it.
pub(crate) fn synopsis(spec: &CommandSpec) -> String {
    if spec.args.is_empty() {
        format!("/{}", spec.name)
    } else {
        format!("/{} {}", spec.name, spec.args)
    }
}

/// The smallest and largest window `/window` accepts.
pub(crate) const WINDOW_RANGE: (u64, u64) = (1_000, 100_000_000);

/// How `/window` is used.
const WINDOW_USAGE: &str = "usage: /window N (tokens, e.g. 200000 or 200K)";

/// Why the argument of `/window` was not taken (the text is what the user reads).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum WindowArgError {
    /// No argument.
    #[error("{usage}", usage = WINDOW_USAGE)]
    Missing,
    /// Not a number of tokens (as typed).
    #[error("/window: `{0}` is not a number of tokens; {usage}", usage = WINDOW_USAGE)]
    NotANumber(String),
    /// A number outside [`WINDOW_RANGE`].
    #[error("/window: {0} is out of range ({lo}..={hi} tokens)", lo = WINDOW_RANGE.0, hi = WINDOW_RANGE.1)]
    OutOfRange(u64),
}

/// Parse the argument of `/window`: `200000`, `200_000`, `200,000`, `200K`, `1M`.
pub(crate) fn parse_window(arg: Option<&str>) -> Result<u64, WindowArgError> {
    let Some(raw) = arg.map(str::trim).filter(|s| !s.is_empty()) else {
        return Err(WindowArgError::Missing);
    };
    let cleaned: String = raw.chars().filter(|c| *c != '_' && *c != ',').collect();
    let lower = cleaned.to_ascii_lowercase();
    let (digits, mult) = if let Some(d) = lower.strip_suffix('k') {
        (d, 1_000)
    } else if let Some(d) = lower.strip_suffix('m') {
        (d, 1_000_000)
    } else {
        (lower.as_str(), 1)
    };
    let value = digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .ok_or_else(|| WindowArgError::NotANumber(raw.to_string()))?;
    let (lo, hi) = WINDOW_RANGE;
    if !(lo..=hi).contains(&value) {
        return Err(WindowArgError::OutOfRange(value));
    }
    Ok(value)
}

/// The command section of `/help`: the built-in commands, then the custom ones.
pub(crate) fn help_lines(custom: &Catalog) -> Vec<String> {
    let mut out = vec!["commands:".to_string()];
    for spec in COMMANDS {
        out.push(format!("  {:<22} {}", synopsis(spec), spec.desc));
    }
    if !custom.is_empty() {
        out.push("custom commands:".to_string());
        for item in custom.commands().map(PopupItem::custom) {
            out.push(format!("  {:<22} {}", item.synopsis(), item.desc));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_table() {
        let cases: &[(&str, Parsed)] = &[
            ("hello", Parsed::Message),
            ("/usr/bin/env is odd", Parsed::Message),
            (
                "/handoff",
                Parsed::Command {
                    cmd: SlashCommand::Handoff,
                    arg: None,
                },
            ),
            (
                "/handoff  the parser bug ",
                Parsed::Command {
                    cmd: SlashCommand::Handoff,
                    arg: Some("the parser bug".into()),
                },
            ),
            (
                "/window 200K",
                Parsed::Command {
                    cmd: SlashCommand::Window,
                    arg: Some("200K".into()),
                },
            ),
            (
                "/quit",
                Parsed::Command {
                    cmd: SlashCommand::Quit,
                    arg: None,
                },
            ),
            ("/nope x", Parsed::Unknown("nope".into())),
            ("/", Parsed::Unknown(String::new())),
        ];
        for (text, want) in cases {
            assert_eq!(&parse(text, &Catalog::default()), want, "{text}");
        }
    }

    #[test]
    fn popup_lists_prefix_matches_only_while_typing_the_word() {
        let names = |t: &str| {
            popup_matches(t, &Catalog::default())
                .into_iter()
                .map(|c| c.name)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            names("/"),
            COMMANDS.iter().map(|c| c.name).collect::<Vec<_>>()
        );
        assert_eq!(names("/h"), ["handoff", "hooks", "help"]);
        assert_eq!(names("/e"), ["edit-handoff", "effort", "export"]);
        assert_eq!(
            names("/c"),
            ["compact", "clear", "cost", "copy", "context", "config"]
        );
        assert!(names("/handoff x").is_empty());
        assert!(names("hi").is_empty());
        assert!(names("/zz").is_empty());
    }

    #[test]
    fn window_argument() {
        assert_eq!(parse_window(Some("200000")), Ok(200_000));
        assert_eq!(parse_window(Some("200_000")), Ok(200_000));
        assert_eq!(parse_window(Some("200K")), Ok(200_000));
        assert_eq!(parse_window(Some("1m")), Ok(1_000_000));
        assert!(
            parse_window(Some("abc"))
                .unwrap_err()
                .to_string()
                .contains("`abc` is not a number")
        );
        assert!(
            parse_window(None)
                .unwrap_err()
                .to_string()
                .starts_with("usage")
        );
        assert!(
            parse_window(Some("5"))
                .unwrap_err()
                .to_string()
                .contains("out of range")
        );
        assert!(parse_window(Some("99999999999999999999")).is_err());
    }

    #[test]
    fn help_lists_every_command() {
        let help = help_lines(&Catalog::default()).join("\n");
        for spec in COMMANDS {
            assert!(help.contains(&synopsis(spec)));
        }
    }
}
