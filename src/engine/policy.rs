//! What the engine is told to do, as types: which strategy keeps the context in bounds, whether
//! tool calls are pre-approved, the working mode (normal, accept edits, plan), and who drives the
//! engine.

use super::context::strategy::{CompactionStrategy, ContextStrategy, HandoffStrategy};

/// What replaces the model-visible history when the context fills up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ContextPolicy {
    /// Handoff to a fresh session (the default).
    #[default]
    Handoff,
    /// In-place compaction (`--no-handoff`).
    Compaction,
    /// Both, only when the config asks for it (`compaction = true`): the first due one acts.
    Both,
}

impl ContextPolicy {
    /// The strategies in force, in the order they are checked before a request (`max_tokens`:
    /// the requests' output cap, which the handoff line keeps free below the window).
    pub fn strategies(
        self,
        headroom: u64,
        max_tokens: u32,
    ) -> Vec<Box<dyn ContextStrategy + Send>> {
        let handoff = || -> Box<dyn ContextStrategy + Send> {
            Box::new(HandoffStrategy {
                enabled: true,
                headroom,
                max_tokens,
            })
        };
        match self {
            ContextPolicy::Handoff => vec![handoff()],
            ContextPolicy::Compaction => vec![Box::new(CompactionStrategy)],
            ContextPolicy::Both => vec![handoff(), Box::new(CompactionStrategy)],
        }
    }

    /// Whether the overflow path hands off (else it compacts).
    pub fn hands_off(self) -> bool {
        matches!(self, ContextPolicy::Handoff | ContextPolicy::Both)
    }

    /// For `-v`.
    pub fn describe(self) -> &'static str {
        match self {
            ContextPolicy::Handoff => "on",
            ContextPolicy::Compaction => "off (compaction)",
            ContextPolicy::Both => "on, with compaction",
        }
    }
}

/// How the handoff's writing turn runs beside the main thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HandoffMode {
    /// The writing request runs in the background on the same prefix while the main thread works
    /// on; the successor starts at the first message boundary after the review (the default).
    #[default]
    Background,
    /// The main thread stops at the handoff line until the document is written and reviewed.
    Blocking,
}

impl HandoffMode {
    /// `background` or `blocking`.
    pub fn as_str(self) -> &'static str {
        match self {
            HandoffMode::Background => "background",
            HandoffMode::Blocking => "blocking",
        }
    }

    /// The accepted spellings (for flags and config values).
    pub fn parse(s: &str) -> Option<HandoffMode> {
        match s.trim().to_ascii_lowercase().as_str() {
            "background" => Some(HandoffMode::Background),
            "blocking" => Some(HandoffMode::Blocking),
            _ => None,
        }
    }
}

/// Whether tool calls that need approval are approved without asking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalPolicy {
    /// Ask the user for each (or deny, when no one can be asked).
    #[default]
    Ask,
    /// `--yes`: approve every call inside the workspace. A path outside it is still asked for,
    /// call by call, or denied headless.
    Auto,
    /// Ask for the first call that needs approval, then approve like `Auto` (the demo shows one
    /// approval prompt, then plays on).
    AskOnce,
}

/// Whether a `bash` command that the sandbox confines is asked for like any other command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SandboxApproval {
    /// A confined command runs without asking: the sandbox keeps it to the workspace.
    #[default]
    Skip,
    /// Ask as if there were no sandbox (config `[sandbox] ask = true`).
    Ask,
}

/// The working mode: what the model is offered and what runs without asking. Shift-Tab in the
/// TUI cycles normal → accept edits → plan → normal; headless takes `--mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Every tool; edits and commands are asked for as the approval policy says.
    #[default]
    Normal,
    /// File edits (`write_file`, `edit_file`) inside the workspace run without asking; commands
    /// and paths outside the workspace are asked for as in normal mode.
    AcceptEdits,
    /// Planning: only tools that change nothing are offered (bash only inside the read-only
    /// sandbox), and the turn ends with the plan presented as a document.
    Plan,
}

impl Mode {
    /// The accepted spellings, for flags and config values.
    pub const ACCEPTED: &'static str = "normal, accept-edits, plan";

    /// The mode after this one in the Shift-Tab cycle.
    pub fn next(self) -> Mode {
        match self {
            Mode::Normal => Mode::AcceptEdits,
            Mode::AcceptEdits => Mode::Plan,
            Mode::Plan => Mode::Normal,
        }
    }

    /// `normal`, `accept-edits`, `plan`.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Normal => "normal",
            Mode::AcceptEdits => "accept-edits",
            Mode::Plan => "plan",
        }
    }

    /// The words a front end shows for it (none for normal).
    pub fn label(self) -> Option<&'static str> {
        match self {
            Mode::Normal => None,
            Mode::AcceptEdits => Some("accept edits"),
            Mode::Plan => Some("plan mode"),
        }
    }

    /// A flag's or config value's word (case and surrounding blanks ignored).
    pub fn parse(s: &str) -> Option<Mode> {
        match s.trim().to_ascii_lowercase().as_str() {
            "normal" => Some(Mode::Normal),
            "accept-edits" | "accept_edits" => Some(Mode::AcceptEdits),
            "plan" => Some(Mode::Plan),
            _ => None,
        }
    }
}

/// Who drives the engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrontEnd {
    /// The TUI: it answers approvals and shows the history replayed by `--continue`. With `review`,
    /// the engine waits for `Op::ReviewDone` between freezing a handoff and starting its successor.
    Interactive { review: bool },
    /// Headless: no one to ask, so a call that needs approval and is not pre-approved is denied.
    Headless,
}

impl FrontEnd {
    /// Someone can answer an approval request.
    pub fn can_ask(self) -> bool {
        matches!(self, FrontEnd::Interactive { .. })
    }

    /// The engine waits for the review window.
    pub fn reviews(self) -> bool {
        matches!(self, FrontEnd::Interactive { review: true })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::context::strategy::StrategyKind;

    #[test]
    fn policies_pick_their_strategies() {
        let kinds = |p: ContextPolicy| -> Vec<StrategyKind> {
            p.strategies(50_000, 16_384)
                .iter()
                .map(|s| s.kind())
                .collect()
        };
        assert_eq!(kinds(ContextPolicy::Handoff), [StrategyKind::Handoff]);
        assert_eq!(kinds(ContextPolicy::Compaction), [StrategyKind::Compaction]);
        assert_eq!(
            kinds(ContextPolicy::Both),
            [StrategyKind::Handoff, StrategyKind::Compaction]
        );
        assert!(ContextPolicy::Both.hands_off() && !ContextPolicy::Compaction.hands_off());
        assert!(FrontEnd::Interactive { review: false }.can_ask());
        assert!(!FrontEnd::Interactive { review: false }.reviews());
        assert!(!FrontEnd::Headless.can_ask() && !FrontEnd::Headless.reviews());
    }

    #[test]
    fn modes_cycle_through_all_three_and_read_their_words() {
        let mut seen = vec![Mode::Normal];
        let mut m = Mode::Normal;
        for _ in 0..3 {
            m = m.next();
            seen.push(m);
        }
        assert_eq!(
            seen,
            [Mode::Normal, Mode::AcceptEdits, Mode::Plan, Mode::Normal]
        );
        for m in [Mode::Normal, Mode::AcceptEdits, Mode::Plan] {
            assert_eq!(Mode::parse(m.as_str()), Some(m));
            assert_eq!(
                serde_json::to_value(m).ok(),
                Some(serde_json::Value::from(m.as_str()))
            );
        }
        assert_eq!(Mode::parse(" PLAN "), Some(Mode::Plan));
        assert_eq!(Mode::parse("planning"), None);
        assert_eq!(Mode::Normal.label(), None);
    }
}

/// Whether turns take checkpoints of the workspace (`/undo`, `/redo` and a rewind's code part
/// need them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CheckpointPolicy {
    /// With the workspace's feed keeper: a process that watches the workspace between
    /// sessions, so a start builds on the last checkpoint instead of walking the tree.
    #[default]
    On,
    /// `checkpoint_keeper = false`: checkpoints, but no process outlives the session (each
    /// start walks the workspace once).
    OnWithoutKeeper,
    /// `--no-checkpoints` / `no_checkpoints = true`: no walk, no store; `/undo` says why.
    Off,
}
