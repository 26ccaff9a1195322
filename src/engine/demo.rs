//! The built-in demo model: a scripted provider that plays a short coding session in a
//! scratch copy of a tiny project, reporting growing usage so the gauge crosses its ticks, writes a
//! real handoff document, and continues in the next generation. It goes through the same engine.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use super::provider::{BoxFuture, DeltaSink, Provider, ProviderError};
use super::tools::names;
use super::types::{Block, Delta, ModelRequest, ModelResponse, Role, ToolChoice, Usage};

/// The banner shown when the demo runs.
pub(crate) const BANNER: &str = "Demo mode: a built-in scripted model is playing a short session in a scratch \
copy of a tiny project (your files are not touched). To use a real model, set ANTHROPIC_API_KEY (or \
OPENAI_API_KEY with --provider openai) and run flower-tui again.";

const README: &str =
    "# calc\n\nA tiny shell calculator. `sh test.sh` runs the checks.\n\nTODO: add `mul`.\n";
const CALC: &str = "#!/bin/sh\n# usage: calc.sh OP A B\nop=$1; a=$2; b=$3\ncase \"$op\" in\n  add) echo $((a - b)) ;;\n  sub) echo $((a - b)) ;;\n  *) echo \"unknown op: $op\" >&2; exit 2 ;;\nesac\n";
const TEST: &str = "#!/bin/sh\nfail=0\ncheck() { got=$(sh calc.sh \"$1\" \"$2\" \"$3\"); [ \"$got\" = \"$4\" ] && echo \"ok   $1 $2 $3 = $4\" || { echo \"FAIL $1 $2 $3: got $got, want $4\"; fail=1; }; }\ncheck add 2 3 5\ncheck sub 7 4 3\nexit $fail\n";

/// The message the demo types itself when the TUI starts, so it plays without a keystroke.
pub const FIRST_MESSAGE: &str = "The checks in this little calculator fail. Fix them, then add the `mul` operation the README asks for.";

/// What the scratch directories' names start with (only such a directory is ever removed).
const SCRATCH_PREFIX: &str = "flower-demo-";

/// The demo's scratch copy of the tiny project: created in the temp dir, removed (with whatever
/// the session wrote into it) when this is dropped, so a demo leaves nothing behind.
#[derive(Debug)]
pub struct Scratch {
    dir: PathBuf,
}

impl Scratch {
    /// Create the scratch project in a fresh temp dir.
    pub fn create() -> std::io::Result<Scratch> {
        let dir = std::env::temp_dir().join(format!("{SCRATCH_PREFIX}{}", super::fsutil::new_id()));
        std::fs::create_dir_all(&dir)?;
        let scratch = Scratch { dir };
        write(&scratch.dir, "README.md", README)?;
        write(&scratch.dir, "calc.sh", CALC)?;
        write(&scratch.dir, "test.sh", TEST)?;
        Ok(scratch)
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        // Never anything but a scratch directory of ours in the temp dir.
        let ours = self.dir.parent() == Some(std::env::temp_dir().as_path())
            && self
                .dir
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(SCRATCH_PREFIX));
        if ours {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

fn write(dir: &Path, name: &str, text: &str) -> std::io::Result<()> {
    std::fs::write(dir.join(name), text)
}

/// One scripted reply: some text, then at most one tool call.
struct Step {
    text: &'static str,
    tool: Option<(&'static str, Value)>,
}

fn gen1() -> Vec<Step> {
    vec![
        Step {
            text: "I'll start by looking around the project.",
            tool: Some((names::LIST_DIR, json!({}))),
        },
        Step {
            text: "Let me read the README to see what this is.",
            tool: Some((names::READ_FILE, json!({"path": "README.md"}))),
        },
        Step {
            text: "Now the calculator itself.",
            tool: Some((names::READ_FILE, json!({"path": "calc.sh"}))),
        },
        Step {
            text: "And the checks it has to pass.",
            tool: Some((names::READ_FILE, json!({"path": "test.sh"}))),
        },
        Step {
            text: "The `add` branch subtracts: `$((a - b))`, so `check add 2 3 5` gets -1. Fixing it (this edit waits for your approval, with its diff):",
            tool: Some((
                names::EDIT_FILE,
                json!({"path": "calc.sh", "old_string": "  add) echo $((a - b)) ;;", "new_string": "  add) echo $((a + b)) ;;"}),
            )),
        },
        Step {
            text: "Running the checks.",
            tool: Some((names::BASH, json!({"command": "sh test.sh"}))),
        },
        Step {
            text: "Both checks pass. The README also asks for a `mul` operation; let me read its TODO again.",
            tool: Some((names::READ_FILE, json!({"path": "README.md"}))),
        },
        Step {
            text: "While the handoff document is written in the background, I'll check the edge cases. First, a missing operand:",
            tool: Some((
                names::BASH,
                json!({"command": "sh calc.sh add 2; echo \"exit $?\""}),
            )),
        },
        Step {
            text: "An unknown operation should fail clearly:",
            tool: Some((
                names::BASH,
                json!({"command": "sh calc.sh pow 2 3; echo \"exit $?\""}),
            )),
        },
    ]
}

/// After the edge cases, the first generation re-runs the checks until its successor takes over
/// (at most this many times), each run a little slower than a plain step.
const RECHECKS: usize = 6;
/// Tokens the first generation's last re-check reports: just under the demo's 40,000-token
/// window, so at or past its hard limit (the window minus the writing reserve). Before the next
/// request the main thread waits there for the handoff document and its review, and the
/// successor continues the turn: the first generation never ends its turn before the turnover,
/// however long the review takes.
const WALL_TOKENS: u64 = 39_000;

fn recheck() -> Step {
    Step {
        text: "Re-running the checks while the handoff is reviewed (the next generation adds `mul`).",
        tool: Some((names::BASH, json!({"command": "sleep 2; sh test.sh"}))),
    }
}

/// Tokens each step after the handoff line adds (small: the work goes on below the hard limit).
const AFTER_LINE_TOKENS: u64 = 600;
/// Steps of the first generation before its usage reaches the handoff line.
const BEFORE_LINE_STEPS: u64 = 6;

fn gen2() -> Vec<Step> {
    vec![
        Step {
            text: "Picking up from the handoff: the `add` fix is done; next is `mul`. Checking the current file first.",
            tool: Some((names::READ_FILE, json!({"path": "calc.sh"}))),
        },
        Step {
            text: "Adding the `mul` branch.",
            tool: Some((
                names::EDIT_FILE,
                json!({"path": "calc.sh", "old_string": "  sub) echo $((a - b)) ;;", "new_string": "  sub) echo $((a - b)) ;;\n  mul) echo $((a * b)) ;;"}),
            )),
        },
        Step {
            text: "And a check for it.",
            tool: Some((
                names::EDIT_FILE,
                json!({"path": "test.sh", "old_string": "check sub 7 4 3", "new_string": "check sub 7 4 3\ncheck mul 6 7 42"}),
            )),
        },
        Step {
            text: "Running the checks.",
            tool: Some((names::BASH, json!({"command": "sh test.sh"}))),
        },
        Step {
            text: "All three checks pass.\n\n**Done:**\n- fixed `add` (it subtracted) — in the previous generation\n- added `mul` with a check\n\nThis was the built-in demo. Set `ANTHROPIC_API_KEY` (or `OPENAI_API_KEY`) to work with a real model.",
            tool: None,
        },
    ]
}

const HANDOFF_DOC: &str = "## Doing\nAdding a `mul` operation to calc.sh, as the README's TODO asks; the `add` bug is already fixed.\n\n## Decided\n- Fixed `add` in place (`$((a + b))`) rather than rewriting calc.sh: the script is small and the other branches are fine.\n- Every operation gets a check in test.sh, so `sh test.sh` stays the single source of truth.\n\n## Dead ends\n- None yet. (`sh test.sh` exits non-zero on any failure, so read its output rather than the exit code alone.)\n\n## Next\nAdd a `mul) echo $((a * b)) ;;` branch to calc.sh and `check mul 6 7 42` to test.sh, then run `sh test.sh`.\n\n## Scene\n- calc.sh — the calculator (case on the operation)\n- test.sh — the checks\n- README.md — the TODO list\n";

/// The demo provider.
#[derive(Debug, Default)]
pub struct DemoProvider {
    /// Delay between streamed chunks.
    pub pace: Duration,
}

impl DemoProvider {
    pub fn new() -> Self {
        DemoProvider {
            pace: Duration::from_millis(35),
        }
    }

    fn reply(&self, req: &ModelRequest) -> (String, Option<(String, Value)>, Usage) {
        let first = req.messages.first().map(|m| m.text()).unwrap_or_default();
        let successor = first.contains("handoff");
        let last_user = req
            .messages
            .iter()
            .rev()
            .find(|m| m.role == Role::User)
            .map(|m| m.text())
            .unwrap_or_default();
        let assistant_turns = req
            .messages
            .iter()
            .filter(|m| m.role == Role::Assistant)
            .count();
        // The writing turn (tool use off, handoff prompt last) or a summary request (no tools).
        if req.tool_choice == ToolChoice::None && last_user.to_lowercase().contains("handoff") {
            return (HANDOFF_DOC.to_string(), None, usage(31_500, 420));
        }
        if req.tools.is_empty() {
            return (
                "Summary: the demo fixed `add` in calc.sh and is adding `mul`.".into(),
                None,
                usage(3_000, 60),
            );
        }
        let (script, base) = if successor {
            (gen2(), 6_500)
        } else {
            let mut s = gen1();
            s.extend((0..RECHECKS).map(|_| recheck()));
            s.push(Step {
                text: "That is as far as this generation goes: the handoff document says what is left (`mul`), and the next generation picks it up.",
                tool: None,
            });
            (s, 4_200)
        };
        let turns = assistant_turns as u64;
        let last_recheck = (gen1().len() + RECHECKS - 1) as u64;
        let used = if successor {
            base + 4_300 * turns
        } else if turns >= last_recheck {
            WALL_TOKENS
        } else {
            base + 4_300 * turns.min(BEFORE_LINE_STEPS)
                + AFTER_LINE_TOKENS * turns.saturating_sub(BEFORE_LINE_STEPS)
        };
        match script.into_iter().nth(assistant_turns) {
            Some(step) => (
                step.text.to_string(),
                step.tool.map(|(n, v)| (n.to_string(), v)),
                usage(used, 180),
            ),
            None => (
                "This is the built-in demo model, so that is the end of its script. Set ANTHROPIC_API_KEY \
                 (or OPENAI_API_KEY with --provider openai) to work with a real model."
                    .into(),
                None,
                usage(used, 60),
            ),
        }
    }
}

fn usage(input: u64, output: u64) -> Usage {
    Usage {
        input_tokens: 900,
        cache_read_input_tokens: input.saturating_sub(900),
        cache_creation_input_tokens: 0,
        output_tokens: output,
    }
}

impl Provider for DemoProvider {
    fn name(&self) -> &str {
        "demo"
    }

    fn endpoint(&self) -> String {
        "(built-in demo model)".into()
    }

    fn stream<'a>(
        &'a self,
        req: &'a ModelRequest,
        sink: DeltaSink<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, ProviderError>> {
        Box::pin(async move {
            let (text, tool, usage) = self.reply(req);
            tokio::time::sleep(self.pace * 4).await;
            let mut start = 0;
            let bytes: Vec<(usize, char)> = text.char_indices().collect();
            while start < bytes.len() {
                let end = (start + 12).min(bytes.len());
                let at = |i: usize| bytes.get(i).map_or(text.len(), |&(b, _)| b);
                let (from, to) = (at(start), at(end));
                sink(Delta::Text(text[from..to].to_string()));
                start = end;
                tokio::time::sleep(self.pace).await;
            }
            let mut content = vec![Block::text(text)];
            let mut stop = "end_turn".to_string();
            if let Some((name, input)) = tool {
                let id = format!("toolu_demo_{}", super::fsutil::new_id());
                sink(Delta::ToolUseStart {
                    id: id.clone(),
                    name: name.clone(),
                });
                content.push(Block::ToolUse {
                    id,
                    name,
                    input,
                    from_text: false,
                });
                stop = "tool_use".into();
            }
            Ok(ModelResponse {
                content,
                usage,
                stop_reason: Some(stop),
                web_search_requests: 0,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The usage the demo reports for the first generation's request after `turns` replies.
    fn first_generation_usage(turns: usize) -> u64 {
        let mut messages = vec![super::super::types::Message::user(FIRST_MESSAGE)];
        for _ in 0..turns {
            messages.push(super::super::types::Message::assistant("step"));
            messages.push(super::super::types::Message::user("result"));
        }
        let req = ModelRequest {
            model: "flower-demo".into(),
            system: String::new(),
            messages,
            tools: crate::engine::tools::specs(),
            tool_choice: ToolChoice::Auto,
            max_tokens: 4_096,
            effort: None,
        };
        DemoProvider::new().reply(&req).2.context()
    }

    #[test]
    fn the_first_generation_waits_at_its_hard_limit_before_its_script_ends() {
        // The demo's window and writing reserve: the hard limit at 40,000 - 4,096.
        let hard_limit = 40_000 - 4_096;
        let last_recheck = gen1().len() + RECHECKS - 1;
        // The line (30,000) is crossed by the seventh reply; the work goes on below the hard
        // limit while the document is written and reviewed...
        assert!(first_generation_usage(5) < 30_000);
        assert!(first_generation_usage(6) >= 30_000);
        for turns in 6..last_recheck {
            assert!(first_generation_usage(turns) < hard_limit, "{turns}");
        }
        // ...and the last re-check reaches it: the next request waits for the turnover, so the
        // closing line of the first generation's script is never reached by a slow review.
        assert!(first_generation_usage(last_recheck) >= hard_limit);
        assert!(first_generation_usage(last_recheck) < 40_000);
    }

    #[test]
    fn the_scratch_copy_goes_when_dropped_and_nothing_else_is_ever_removed() {
        let scratch = Scratch::create().unwrap();
        let dir = scratch.path().to_path_buf();
        assert!(dir.join("calc.sh").is_file() && dir.join("test.sh").is_file());
        std::fs::create_dir_all(dir.join(".flower/notes")).unwrap();
        std::fs::write(dir.join(".flower/notes/handoff-x.md"), "doc").unwrap();
        drop(scratch);
        assert!(!dir.exists());
        // A guard that points anywhere else leaves it alone.
        let keep = tempfile::tempdir().unwrap();
        drop(Scratch {
            dir: keep.path().to_path_buf(),
        });
        assert!(keep.path().exists());
    }
}
