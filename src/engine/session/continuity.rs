//! Continuity across processes: the step name this process claims in the workspace,
//! and the review of a handoff an earlier process froze but never turned over.

use std::path::Path;

use super::Engine;
use super::lifecycle::BlockingStage;
use crate::engine::error::{Error, ResumeError};
use crate::engine::handoff::live_path;
use crate::engine::handoff::lock::{self, StepClaim, TryLock};
use crate::engine::ledger::StepRecord;
use crate::engine::protocol::{Event, HandoffPhase};

impl Engine {
    /// `--continue`: the resumed step keeps its name, so it must be free. A live process working
    /// on it (the same session, most likely) is a clear refusal: two processes must not append to
    /// one transcript or review one document.
    pub(super) fn claim_resumed(
        workbench: Option<&Path>,
        rec: Option<&StepRecord>,
    ) -> Result<Option<StepClaim>, Error> {
        let (Some(rec), Some(wb)) = (rec, workbench) else {
            return Ok(None);
        };
        match lock::claim_exact(wb, &rec.name) {
            Ok(TryLock::Acquired(lock)) => Ok(Some(StepClaim {
                lock,
                name: rec.name.clone(),
                skipped: Vec::new(),
            })),
            Ok(TryLock::Held { pid }) => Err(ResumeError::StepInUse {
                step: rec.name.clone(),
                pid,
            }
            .into()),
            Err(e) => {
                // Without a claim the document lock still orders the writes.
                tracing::warn!(step = %rec.name, "cannot claim the step name: {e}");
                Ok(None)
            }
        }
    }

    /// Claim `name` for a new step, or the first free `name-2`, `name-3`… when live processes
    /// hold it, and say so. Returns the name the step gets.
    pub(super) fn claim_step(&mut self, name: String) -> String {
        let Some(wb) = self.run.places.workbench.clone() else {
            // Nothing is written to the workspace: nothing to share.
            return name;
        };
        match lock::claim_step(&wb, &name) {
            Ok(claim) => {
                if let Some(pid) = claim.lock.took_over {
                    tracing::info!(step = %claim.name, pid, "took over a stale step claim");
                }
                if !claim.skipped.is_empty() {
                    let users: Vec<String> = claim
                        .skipped
                        .iter()
                        .map(|(n, pid)| {
                            let pid =
                                pid.map_or_else(|| "pid unknown".into(), |p| format!("pid {p}"));
                            if claim.skipped.len() == 1 {
                                pid
                            } else {
                                format!("{n}: {pid}")
                            }
                        })
                        .collect();
                    self.emit(Event::Notice {
                        message: format!(
                            "step {name} is in use by another flower-tui in this workspace ({}): \
                             this one works as step {} (handoff file {})",
                            users.join(", "),
                            claim.name,
                            live_path(&wb, &claim.name).display()
                        ),
                    });
                }
                let chosen = claim.name.clone();
                self.ledger.claim = Some(claim);
                chosen
            }
            Err(e) => {
                self.emit(Event::Warning {
                    message: format!(
                        "cannot claim the step name {name} under {}: {e}; another flower-tui in \
                         this workspace could take the same name",
                        lock::locks_dir(&wb).display()
                    ),
                });
                name
            }
        }
    }

    /// At a resumed start: a handoff the ledger holds as frozen but not turned over is reviewed
    /// again (and then turned over), never skipped in silence.
    pub(super) async fn reopen_frozen(&mut self) {
        let Some(frozen) = self.ledger.rec().and_then(|r| r.frozen.clone()) else {
            return;
        };
        if frozen.retired_session != self.s.id {
            // Only the session that froze it can hand it over; the ledger moved on since.
            self.emit(Event::Warning {
                message: format!(
                    "the ledger holds a handoff frozen by session {} but continues session {}: \
                     it is left as it is ({})",
                    frozen.retired_session,
                    self.s.id,
                    frozen
                        .file
                        .path()
                        .map_or("not on disk".to_string(), |p| p.display().to_string())
                ),
            });
            self.ledger.record(|rec| rec.frozen = None);
            self.save_manifest();
            return;
        }
        let id = self.handoff.begin_blocking(BlockingStage::Turnover);
        // Killed before the file was written: write it now (the user has not seen it yet).
        let frozen = if frozen.file.written() {
            frozen
        } else {
            self.write_frozen(frozen)
        };
        let unsaved = frozen.unsaved.clone().filter(|p| p.is_file());
        let what = match frozen.file.path() {
            Some(p) => p.display().to_string(),
            None => "(not on disk)".to_string(),
        };
        let mut message = format!(
            "The handoff of step {} to generation {} ({what}), frozen at {}, was never turned \
             over: the process reviewing it ended. Reviewing it again.",
            self.ledger.step_name(),
            frozen.generation,
            frozen.time
        );
        if let Some(u) = &unsaved {
            message.push_str(&format!(
                " Unsaved edits from that review were kept in {}.",
                u.display()
            ));
        }
        self.emit(Event::Notice { message });
        self.emit_logged(Event::Handoff(HandoffPhase::Reopened {
            handoff: id,
            path: frozen.file.path().map(Path::to_path_buf),
            frozen_at: frozen.time.clone(),
            unsaved,
        }));
        let request = frozen.request.len();
        let turnover = self.review_and_commit(id, frozen).await;
        self.handoff.end();
        if turnover == super::turnover::Turnover::Done && request > 0 {
            self.emit(Event::Notice {
                message: format!(
                    "The successor has the request that was in progress ({request} message{}): \
                     send a message (e.g. \"go on\") to continue it.",
                    if request == 1 { "" } else { "s" }
                ),
            });
        }
    }
}
