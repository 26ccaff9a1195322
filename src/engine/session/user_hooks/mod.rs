//! The user's hooks at the points of a session, in Claude Code's protocol, as one part:
//! `SessionStart` before a session's first request (startup, resume, `/new`, a handoff's
//! successor), `UserPromptSubmit` before a user turn (may drop the prompt or add context),
//! `PreToolUse` before a call's approval (may deny it, allow it unasked or force the question),
//! `PostToolUse` after it ran, `Stop` when a turn would end (may keep it going, a few times at
//! most), `SubagentStop` after a `task` reported, `SessionEnd`, `Notification` when an approval
//! waits, `PreHandoff` before a handoff's writing turn (may refuse it or add focus text) and
//! `HandoffFrozen` once the document is on disk and before its review (it may edit the file; the
//! successor reads the file back).
//!
//! The part ([`Hooks`]) keeps its own state; its verbs ([`points`]) work through the narrow
//! context the engine lends it ([`HookCx`]). Hooks run off the engine task, awaited beside the
//! op channel like every other wait: Esc or shutdown drops the batch, which kills the hooks with
//! their process groups. A background handoff's `PreHandoff` and `HandoffFrozen` hooks are not
//! awaited here: the handoff takes their batch and runs it as one of its tasks. Each hook that
//! ran is told to the front end (`Event::Hook`); a workspace settings file never approved is
//! asked about once (the TUI) or left unused with a notice (headless).

mod engine_side;
mod gates;
mod points;
mod state;

pub(super) use gates::{Gate, StopGate, ToolGate, frozen_input, pre_handoff_input};
pub(super) use points::{
    announce, batch, handoff_verdict, notify, opening, pre_handoff, report, run_for_handoff,
    session_end, session_start, stop, subagent_stop,
};
pub(super) use state::Hooks;
