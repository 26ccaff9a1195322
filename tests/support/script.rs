//! The model's side of a scripted session: the replies the loopback fake gives, in the order the
//! requests come, each reporting the context (input tokens) it stands at.
//!
//! ```ignore
//! h.server.script().at(31_000).tool("list_dir", "{}").at(31_500).text(DOC);
//! ```
//!
//! A reply reports `at` input tokens (1,000 until said otherwise) and 10 output tokens
//! ([`Script::usage`] sets both). Tool calls get the ids `t1`, `t2`, … in the order they are
//! scripted on their server. Replies speak the Messages API unless the script is
//! [`Script::openai`]. [`Script::writing`], [`Script::held`] and [`Script::after`] say how the
//! next reply is queued: for the handoff's writing request, held by a gate, after a pause.

use std::fmt::Display;
use std::time::Duration;

use super::fake::{FakeServer, Gate, Reply, U, anthropic as a, openai as o};

/// The input tokens a reply reports until [`Script::at`] says otherwise.
pub const START: u64 = 1_000;

/// A handoff document with all five sections, as a model writes it.
pub const DOC: &str = "Here is the handoff.\n\n## Doing\nRefactoring the parser.\n\n## Decided\n- Keep the old API: callers depend on it.\n\n## Dead ends\n- Regex parsing: breaks on nested quotes.\n\n## Next\nRun the parser tests.\n\n## Scene\n- src/parser.rs\n";

/// A five-section document marked with `marker` in every section.
pub fn doc(marker: &str) -> String {
    format!(
        "## Doing\nWork of {marker}.\n## Decided\n- {marker} decided this.\n## Dead ends\n(empty)\n\
         ## Next\nContinue {marker}.\n## Scene\n- src/{marker}.rs\n"
    )
}

/// The queue of replies of one server, with the usage the next one reports.
pub struct Script<'a> {
    server: &'a FakeServer,
    usage: U,
    openai: bool,
    next: Next,
}

/// How the next reply is queued: on the writing route, held by a gate, after a pause.
#[derive(Default)]
struct Next {
    writing: bool,
    gate: Option<Gate>,
    pause: Option<Duration>,
}

impl FakeServer {
    /// Script this server's replies (see [`Script`]).
    pub fn script(&self) -> Script<'_> {
        Script {
            server: self,
            usage: U::new(START, 10),
            openai: false,
            next: Next::default(),
        }
    }
}

impl Script<'_> {
    /// The replies from here on report `input` tokens of context.
    pub fn at(&mut self, input: u64) -> &mut Self {
        self.usage.input = input;
        self
    }

    /// The replies from here on report `usage`.
    pub fn usage(&mut self, usage: U) -> &mut Self {
        self.usage = usage;
        self
    }

    /// The replies from here on speak OpenAI's Chat Completions stream.
    pub fn openai(&mut self) -> &mut Self {
        self.openai = true;
        self
    }

    /// The model answers with `text`, and the turn ends.
    pub fn text(&mut self, text: &str) -> &mut Self {
        let reply = if self.openai {
            o::text(text, self.usage)
        } else {
            a::text(text, self.usage)
        };
        self.reply(reply)
    }

    /// The model calls `name` with `input` (JSON, or any text: it is sent as written).
    pub fn tool(&mut self, name: &str, input: impl Display) -> &mut Self {
        self.tools(&[(name, input)])
    }

    /// The model calls `name` under the id `id` (the ids handed out count it).
    pub fn call(&mut self, id: &str, name: &str, input: impl Display) -> &mut Self {
        let _ = self.server.next_tool_id();
        let reply = if self.openai {
            o::tool_calls(&[(id, name, &input.to_string())], self.usage)
        } else {
            a::tool_use(id, name, &input.to_string(), self.usage)
        };
        self.reply(reply)
    }

    /// The model lists the directory `n` times, one call a reply, under the ids `t0`, `t1`, …; the
    /// first reply at `from`, each next one `step` further.
    pub fn listings(&mut self, n: u64, from: u64, step: u64) -> &mut Self {
        for i in 0..n {
            self.at(from + i * step)
                .call(&format!("t{i}"), "list_dir", "{}");
        }
        self
    }

    /// The model calls these tools at once, in one reply.
    pub fn tools(&mut self, calls: &[(&str, impl Display)]) -> &mut Self {
        self.text_and_tools("", calls)
    }

    /// The model says `text` (nothing when empty), then calls these tools in the same reply.
    pub fn text_and_tools(&mut self, text: &str, calls: &[(&str, impl Display)]) -> &mut Self {
        let calls: Vec<(String, &str, String)> = calls
            .iter()
            .map(|(name, input)| (self.server.next_tool_id(), *name, input.to_string()))
            .collect();
        // The two APIs' stream builders have the same methods.
        macro_rules! build {
            ($stream:path) => {{
                let mut s = $stream(self.usage);
                if !text.is_empty() {
                    s = s.text(text);
                }
                for (id, name, input) in &calls {
                    s = s.tool(id, name, input);
                }
                s.reply()
            }};
        }
        let reply = if self.openai {
            build!(o::Stream::new)
        } else {
            build!(a::Stream::new)
        };
        self.reply(reply)
    }

    /// The model's turn fills the context past the line of a 40,000 window with 10,000 headroom
    /// (a `list_dir` at 31,000), and its writing turn answers `doc` (at 31,500).
    pub fn over_the_line(&mut self, doc: &str) -> &mut Self {
        self.at(31_000).tool("list_dir", "{}").at(31_500).text(doc)
    }

    /// The model reads `a.log` with `cat` at 31,000, over the line of a 40,000 window, and the
    /// request that follows (the handoff's writing) is refused as too long: 42,000 tokens against
    /// 40,000.
    pub fn writing_overflows(&mut self) -> &mut Self {
        self.at(31_000)
            .tool("bash", r#"{"command":"cat a.log"}"#)
            .reply(a::too_long(42_000, 40_000))
    }

    /// The next request is refused as too long (41,000 tokens against 40,000); then as
    /// [`Script::rescued`].
    pub fn overflows_then_rescued(&mut self, doc: &str, then: &str) -> &mut Self {
        self.reply(a::too_long(41_000, 40_000)).rescued(doc, then)
    }

    /// The rescue, on a shortened copy of the conversation, answers `doc` (at 9,000), and the
    /// successor says `then` (at 4,000).
    pub fn rescued(&mut self, doc: &str, then: &str) -> &mut Self {
        self.at(9_000).text(doc).at(4_000).text(then)
    }

    /// The next reply answers the handoff's writing request (the writing route), whatever the
    /// main thread asks meanwhile.
    pub fn writing(&mut self) -> &mut Self {
        self.next.writing = true;
        self
    }

    /// The next reply waits until `gate` opens.
    pub fn held(&mut self, gate: &Gate) -> &mut Self {
        self.next.gate = Some(gate.clone());
        self
    }

    /// The next reply comes after `pause` of silence.
    pub fn after(&mut self, pause: Duration) -> &mut Self {
        self.next.pause = Some(pause);
        self
    }

    /// Two answers that show whether a conversation carried over: "Remember the number 7431.",
    /// then (at 1,500) "It was 7431.".
    pub fn a_number_to_remember(&mut self) -> &mut Self {
        self.text("Remember the number 7431.")
            .at(1_500)
            .text("It was 7431.")
    }

    /// The replies of a run handed off after its first turn (`--handoff-after 1`): the turn
    /// lists the directory (at 2,000), the writing answers a short document (at 2,500), and the
    /// successor says it finished (at 1,500).
    pub fn handed_off_after_one_turn(&mut self) -> &mut Self {
        self.at(2_000)
            .tool("list_dir", "{}")
            .at(2_500)
            .text("## Doing\nListing.\n## Next\nFinish.\n")
            .at(1_500)
            .text("finished in generation 2")
    }

    /// Any reply, as built.
    pub fn reply(&mut self, reply: Reply) -> &mut Self {
        let next = std::mem::take(&mut self.next);
        let reply = match next.pause {
            Some(pause) => reply.after(pause),
            None => reply,
        };
        let reply = match &next.gate {
            Some(gate) => reply.gated(gate),
            None => reply,
        };
        if next.writing {
            self.server.push_writing(reply);
        } else {
            self.server.push(reply);
        }
        self
    }
}
