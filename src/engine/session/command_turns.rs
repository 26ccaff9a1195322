//! The turns a command starts, besides a typed message: `/init`, a custom slash command, and a
//! presented plan carried out.
//!
//! `/init` drafts `<workspace>/AGENTS.md` through the model, unless it exists and the user has
//! not agreed to replace it (then the front end is told, and asks).
//!
//! A custom slash command's body is expanded with what the user typed after its name; each of
//! its `` !`command` `` lines then runs as a `bash` call of this turn, asked for and confined
//! exactly as the model's calls are (a tool cell in the TUI, a `tool_call` and `tool_result` in
//! headless output), and its output takes the line's place. A command that was not run (denied,
//! or no one to ask) leaves a note saying so instead of output. The expanded text is then the
//! user's message, with its `@path` mentions attached as a typed message's are. For this turn
//! only: the command's `model` is the model of its requests, and its `allowed-tools` are granted
//! as "always" grants (what was granted before stays). Both are put back when the turn ends,
//! however it ends.
//!
//! A presented plan is carried out here (the file, read back, is the next message) or in a fresh
//! session (the file is the successor's briefing, recorded in the ledger like a handoff). The
//! mode goes back to normal first; nothing to implement ends the turn unchanged with a notice.
//! The message that carries it out here is the user's prompt in the engine's words: the
//! `UserPromptSubmit` hooks see it and `/rewind` offers it, as a typed message. A custom
//! command's expansion is offered by `/rewind` as the command the user typed.
//!
//! Also here: the one-line notices of what could not be loaded at the start.

use serde_json::json;

use super::Engine;
use super::approval_state::ApprovalState;
use super::params::{Extensions, ModelSettings};
use super::planning::implement_here_message;
use super::turn::Sent;
use crate::engine::approvals::AllowRule;
use crate::engine::commands::ShadowedBy;
use crate::engine::policy::Mode;
use crate::engine::protocol::{Event, ExitReason, PlanChoice, TurnId, TurnKind};
use crate::engine::tools::names;

/// The last line of a `bash` result that exited 0: not repeated in the message.
const OK_EXIT: &str = "[exit code 0]";
/// The task an `/init` turn names its step after.
const INIT_TASK: &str = "Draft AGENTS.md for the repository (/init)";
const INIT_PROMPT: &str = include_str!("../../../assets/init_prompt.md");

/// The `/init` prompt for `path`.
fn init_prompt(path: &std::path::Path, exists: bool) -> String {
    let existing = if exists {
        " An AGENTS.md exists already and the user agreed to replace it: read it first and keep \
         what is still true."
    } else {
        ""
    };
    INIT_PROMPT
        .replace("{path}", &path.display().to_string())
        .replace("{existing}", existing)
}

/// The notices of the start: command and skill files that could not be loaded (one line each,
/// naming the file), and commands not offered because a built-in or another command has their
/// name (naming both files).
pub(super) fn load_notices(ext: &Extensions) -> Vec<String> {
    let mut out: Vec<String> = ext
        .commands
        .notices()
        .iter()
        .map(ToString::to_string)
        .collect();
    for s in ext.commands.shadowed() {
        out.push(match &s.by {
            ShadowedBy::Builtin => format!(
                "{}: /{} is a built-in command; this custom command is not offered (rename the file)",
                s.path.display(),
                s.name
            ),
            ShadowedBy::Command(winner) => format!(
                "{}: /{} is not offered: {} has the same name and wins (the workspace's commands \
                 win over the user's, .flower/ over .claude/)",
                s.path.display(),
                s.name,
                winner.display()
            ),
        });
    }
    out.extend(ext.skills.notices().iter().map(ToString::to_string));
    out
}

/// What a command's turn changed for itself, to put back at its end.
struct Borrowed {
    /// The model in force before, when the command named its own.
    model: Option<(String, String)>,
    /// Grants the command added (not those the session had already).
    rules: Vec<AllowRule>,
}

impl Borrowed {
    /// Put back what the command changed: the model (unless `/model` chose another meanwhile)
    /// and the grants it added.
    fn give_back(self, settings: &mut ModelSettings, approvals: &mut ApprovalState) {
        if let Some((before, used)) = self.model
            && settings.model == used
        {
            settings.model = before;
        }
        approvals.take_back(&self.rules);
    }
}

impl Engine {
    /// `/init`: draft `<workspace>/AGENTS.md` through the model, unless it exists and the user
    /// has not agreed to replace it (`overwrite`).
    pub(in crate::engine::session) async fn init_turn(&mut self, id: TurnId, overwrite: bool) {
        let path = self.run.places.workspace.join("AGENTS.md");
        let exists = std::fs::symlink_metadata(&path).is_ok();
        if exists && !overwrite {
            self.turn_ends_at_once(id, TurnKind::Init, Event::InitExists { turn: id, path });
            return;
        }
        let prompt = init_prompt(&path, exists);
        let turn = self.open_turn(id, TurnKind::Init, INIT_TASK);
        self.send_message(turn, Sent::Engine, prompt).await;
    }

    /// `Op::Command`: run the custom command `name` with `args`.
    pub(in crate::engine::session) async fn command_turn(
        &mut self,
        id: TurnId,
        name: String,
        args: String,
    ) {
        let args = args.trim().to_string();
        let typed = if args.is_empty() {
            format!("/{name}")
        } else {
            format!("/{name} {args}")
        };
        let Some(command) = self.run.extensions.commands.get(&name).cloned() else {
            let message = format!("unknown command /{name}: no custom command has that name");
            self.turn_ends_at_once(id, TurnKind::Message, Event::Warning { message });
            return;
        };
        let turn = self.open_turn(id, TurnKind::Message, &typed);
        // The command's model and grants, in force until the turn ends.
        let model = command
            .model
            .as_deref()
            .filter(|m| *m != self.settings.model)
            .map(|m| {
                let before = std::mem::replace(&mut self.settings.model, m.to_string());
                self.emit(Event::Notice {
                    message: format!("this command's turn uses the model {m}"),
                });
                (before, m.to_string())
            });
        let rules = self.approvals.lend(&command.allowed_tools);
        let borrowed = Borrowed { model, rules };
        let expansion = command.expand(&args);
        let mut outputs = Vec::new();
        let mut stopped = false;
        for (n, line) in expansion.commands().into_iter().enumerate() {
            let call = format!("command-{}-{}", id.0, n + 1);
            let input = json!({ "command": line });
            let (out, stop) = self.run_call(&call, names::BASH, &input, false).await;
            let ran = out.exit.is_some();
            let text = if ran {
                // A command that succeeded is its output; another keeps its exit line.
                let content = out.content.trim_end();
                content
                    .strip_suffix(OK_EXIT)
                    .unwrap_or(content)
                    .trim_end()
                    .to_string()
            } else {
                format!(
                    "[`{line}` was not run: {}]",
                    crate::engine::text::one_line(&out.content, 300)
                )
            };
            self.deliver(&call, names::BASH, out);
            outputs.push(text);
            if stop || self.shutting_down() {
                stopped = true;
                break;
            }
        }
        if stopped {
            borrowed.give_back(&mut self.settings, &mut self.approvals);
            self.finish_turn(turn, ExitReason::Interrupted).await;
            return;
        }
        // One output per command, so the fill cannot miss; the text as expanded otherwise.
        let text = expansion
            .clone()
            .fill(&outputs)
            .unwrap_or_else(|_| expansion.text().to_string());
        let text = crate::engine::secrets::redact(&text).into_owned();
        self.send_message(turn, Sent::Command { typed }, text).await;
        borrowed.give_back(&mut self.settings, &mut self.approvals);
    }

    /// `Op::ImplementPlan`: the latest plan, read back from its file, carried out here or in a
    /// fresh session. The mode goes back to normal first. Nothing to implement (no plan, a file
    /// gone or empty, a plan that restates its prompt) ends the turn unchanged with a notice.
    pub(in crate::engine::session) async fn implement_plan(
        &mut self,
        id: TurnId,
        choice: PlanChoice,
    ) {
        let (presented, text) = match self.planning.to_implement() {
            Ok(ok) => ok,
            Err(why) => {
                let message = format!("Plan not implemented: {why}.");
                self.turn_ends_at_once(id, TurnKind::Message, Event::Notice { message });
                return;
            }
        };
        self.set_mode(Mode::Normal);
        match choice {
            PlanChoice::Here => {
                let message = implement_here_message(&presented, &text);
                let task = format!("Implement the plan {}", presented.path().display());
                let turn = self.open_turn(id, TurnKind::Message, &task);
                self.send_message(turn, Sent::Chosen, message).await;
            }
            // The file is read back once more under the document lock by the turnover.
            PlanChoice::FreshSession => self.implement_fresh(id, presented).await,
        }
    }
}
