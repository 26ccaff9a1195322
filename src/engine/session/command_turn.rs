//! A custom slash command's turn. The command's body is expanded with what the user typed after
//! its name; each of its `` !`command` `` lines then runs as a `bash` call of this turn, asked
//! for and confined exactly as the model's calls are (a tool cell in the TUI, a `tool_call` and
//! `tool_result` in headless output), and its output takes the line's place. A command that was
//! not run (denied, or no one to ask) leaves a note saying so instead of output. The expanded
//! text is then the user's message, with its `@path` mentions attached as a typed message's are.
//!
//! For this turn only: the command's `model` is the model of its requests, and its
//! `allowed-tools` are granted as "always" grants (what was granted before stays). Both are put
//! back when the turn ends, however it ends.
//!
//! Also here: the one-line notices of what could not be loaded at the start.

use serde_json::json;

use super::{Engine, Extensions};
use crate::engine::approvals::AllowRule;
use crate::engine::commands::{ShadowedBy, allowed};
use crate::engine::protocol::{Event, ExitReason, Origin, TurnId, TurnKind};
use crate::engine::tools::names;

/// The last line of a `bash` result that exited 0: not repeated in the message.
const OK_EXIT: &str = "[exit code 0]";

/// The notices of the start: command and skill files that could not be loaded (one line each,
/// naming the file), and commands a built-in's name keeps from being offered.
pub(super) fn load_notices(ext: &Extensions) -> Vec<String> {
    let mut out: Vec<String> = ext
        .commands
        .notices()
        .iter()
        .map(ToString::to_string)
        .collect();
    for s in ext.commands.shadowed() {
        if s.by == ShadowedBy::Builtin {
            out.push(format!(
                "{}: /{} is a built-in command; this custom command is not offered (rename the file)",
                s.path.display(),
                s.name
            ));
        }
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

impl Engine {
    /// `Op::Command`: run the custom command `name` with `args`.
    pub(crate) async fn command_turn(&mut self, id: TurnId, name: String, args: String) {
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
        let borrowed = self.borrow_for_command(command.model.as_deref(), &command.allowed_tools);
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
            if stop || self.inbox.shutdown {
                stopped = true;
                break;
            }
        }
        if stopped {
            self.give_back(borrowed);
            self.checkpoint_after_turn().await;
            self.finish_turn(turn, ExitReason::Interrupted);
            return;
        }
        // One output per command, so the fill cannot miss; the text as expanded otherwise.
        let text = expansion
            .clone()
            .fill(&outputs)
            .unwrap_or_else(|_| expansion.text().to_string());
        let text = crate::engine::secrets::redact(&text).into_owned();
        self.send_message(turn, Origin::User, text).await;
        self.give_back(borrowed);
    }

    /// The command's model and grants, in force from now until [`Self::give_back`].
    fn borrow_for_command(&mut self, model: Option<&str>, allowed: &[String]) -> Borrowed {
        let model = model.filter(|m| *m != self.settings.model).map(|m| {
            let before = std::mem::replace(&mut self.settings.model, m.to_string());
            self.emit(Event::Notice {
                message: format!("this command's turn uses the model {m}"),
            });
            (before, m.to_string())
        });
        let grants = allowed::grants(allowed);
        if !grants.ignored.is_empty() {
            self.emit(Event::Notice {
                message: format!(
                    "allowed-tools not granted (still asked for): {}",
                    grants.ignored.join(", ")
                ),
            });
        }
        let held: Vec<AllowRule> = self
            .approvals
            .granted
            .list()
            .into_iter()
            .map(|a| a.rule)
            .collect();
        let rules: Vec<AllowRule> = grants
            .rules
            .into_iter()
            .filter(|r| !held.contains(r))
            .collect();
        self.approvals.granted.grant(&rules);
        Borrowed { model, rules }
    }

    /// Put back what [`Self::borrow_for_command`] changed: the model (unless `/model` chose
    /// another meanwhile) and the grants the command added.
    fn give_back(&mut self, borrowed: Borrowed) {
        if let Some((before, used)) = borrowed.model
            && self.settings.model == used
        {
            self.settings.model = before;
        }
        for rule in &borrowed.rules {
            self.approvals.granted.revoke(rule);
        }
    }
}
