//! The hooks part's own state: the hooks in force, the workspace settings files waiting for the
//! user's approval (with the hooks they would add), the configuration's notices not yet given,
//! whether `SessionStart` is due, and how often `Stop` hooks kept the running turn going.

use crate::engine::hooks::{
    Hook, HookBatch, HookEvent, HookInput, HookSession, HookSet, StartSource, Unapproved,
};
use crate::engine::session::HookParams;

/// How many times in one turn `Stop` hooks may keep the turn going; then it ends anyway (a hook
/// that blocks every stop would otherwise loop for ever).
pub(super) const MAX_STOP_CONTINUES: u32 = 3;

/// The session's hooks: those in force, the settings files waiting for approval, and what is due.
#[derive(Debug, Default)]
pub(in crate::engine::session) struct Hooks {
    set: HookSet,
    /// Settings files (and command grants) never approved (this version), with what they add.
    pending: Vec<Unapproved>,
    /// Notices about the configuration, given once the front end listens.
    notices: Vec<String>,
    /// `SessionStart` is due before the current session's next request.
    start: Option<StartSource>,
    /// How many times `Stop` hooks kept this turn going.
    stop_continues: u32,
}

impl Hooks {
    /// The hooks a run starts with; a resumed run owes its session a `SessionStart` (resume).
    pub(in crate::engine::session) fn new(params: HookParams, resumed: bool) -> Hooks {
        Hooks {
            set: HookSet::new(params.hooks),
            pending: params.pending,
            notices: params.notices,
            start: resumed.then_some(StartSource::Resume),
            stop_continues: 0,
        }
    }

    /// `SessionStart` (from `source`) is due before the current session's next request.
    pub(in crate::engine::session) fn start_due(&mut self, source: StartSource) {
        self.start = Some(source);
    }

    /// The `SessionStart` that is due, if one is (it is due no more).
    pub(super) fn take_start(&mut self) -> Option<StartSource> {
        self.start.take()
    }

    /// Whether any hook listens for `event`.
    pub(super) fn has(&self, event: HookEvent) -> bool {
        self.set.has(event)
    }

    /// The batch of hooks `input` runs for `session` (started when awaited), or None when none
    /// matches.
    pub(super) fn batch(&self, input: &HookInput, session: &HookSession) -> Option<HookBatch> {
        let batch = self.set.run(input, session);
        (!batch.is_empty()).then_some(batch)
    }

    /// `/hooks`: the hooks in force, one a line with the file that configured it, and the
    /// settings files waiting for approval.
    pub(in crate::engine::session) fn report(&self) -> String {
        use crate::engine::hooks::config::HookSource;
        use crate::engine::hooks::note::describe;
        let hooks = self.set.hooks();
        let mut lines = vec![if hooks.is_empty() {
            "No hooks run (config.toml's [[hooks]], an approved .claude/settings.json)".to_string()
        } else {
            format!("Hooks in force ({})", hooks.len())
        }];
        for h in hooks {
            let from = match &h.source {
                HookSource::ConfigFile => "config.toml".to_string(),
                HookSource::Settings(p) => p.display().to_string(),
            };
            lines.push(format!("  {} · {from}", describe(h)));
        }
        for waiting in &self.pending {
            lines.push(format!(
                "Waiting for your approval ({} hooks, {} other lines): {}",
                waiting.hooks.len(),
                waiting.lines().len().saturating_sub(waiting.hooks.len()),
                waiting.file.path.display()
            ));
        }
        lines.join("\n")
    }

    /// The configuration's notices, once (the front end listens now).
    pub(super) fn take_notices(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notices)
    }

    /// The settings files waiting for the user's approval.
    pub(super) fn pending(&self) -> &[Unapproved] {
        &self.pending
    }

    /// The settings files waiting for approval, taken (nobody can be asked).
    pub(super) fn take_pending(&mut self) -> Vec<Unapproved> {
        std::mem::take(&mut self.pending)
    }

    /// The settings file with this digest, taken from those waiting (the user answered).
    pub(super) fn answered(&mut self, sha256: &str) -> Option<Unapproved> {
        let at = self.pending.iter().position(|u| u.file.sha256 == sha256)?;
        Some(self.pending.remove(at))
    }

    /// Approved hooks run from now on, after those in force.
    pub(super) fn add(&mut self, hooks: Vec<Hook>) {
        let mut all = self.set.hooks().to_vec();
        all.extend(hooks);
        self.set = HookSet::new(all);
    }

    /// A turn opens: its `Stop` hooks may keep it going again.
    pub(super) fn turn_opened(&mut self) {
        self.stop_continues = 0;
    }

    /// `Stop` hooks already kept this turn going.
    pub(super) fn stop_active(&self) -> bool {
        self.stop_continues > 0
    }

    /// `Stop` hooks want to keep the turn going: true (counted) while they still may.
    pub(super) fn may_continue(&mut self) -> bool {
        if self.stop_continues >= MAX_STOP_CONTINUES {
            return false;
        }
        self.stop_continues += 1;
        true
    }
}
