//! This process's claim on its step's name in the workspace, so two processes never append to
//! one transcript or review one document: the resumed step's name must be free, a new step takes
//! the first free `name-2`, `name-3`… when live processes hold its name.

use std::path::Path;

use crate::engine::error::{Error, ResumeError};
use crate::engine::handoff::live_path;
use crate::engine::handoff::workbench_locks::{self, StepClaim, TryLock};
use crate::engine::ledger::StepRecord;
use crate::engine::protocol::Event;

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
    match workbench_locks::claim_exact(wb, &rec.name) {
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

/// Claim `name` for a new step in `workbench`, or the first free `name-2`, `name-3`… when live
/// processes hold it: the name the step gets and the claim (none without a workbench, or when
/// the claim failed). What the user should hear about it is said through `say`.
pub(super) fn claim_step(
    workbench: Option<&Path>,
    name: String,
    mut say: impl FnMut(Event),
) -> (String, Option<StepClaim>) {
    let Some(wb) = workbench else {
        // Nothing is written to the workspace: nothing to share.
        return (name, None);
    };
    match workbench_locks::claim_step(wb, &name) {
        Ok(claim) => {
            if let Some(pid) = claim.lock.took_over {
                tracing::info!(step = %claim.name, pid, "took over a stale step claim");
            }
            if !claim.skipped.is_empty() {
                let users: Vec<String> = claim
                    .skipped
                    .iter()
                    .map(|(n, pid)| {
                        let pid = pid.map_or_else(|| "pid unknown".into(), |p| format!("pid {p}"));
                        if claim.skipped.len() == 1 {
                            pid
                        } else {
                            format!("{n}: {pid}")
                        }
                    })
                    .collect();
                say(Event::Notice {
                    message: format!(
                        "step {name} is in use by another flower-tui in this workspace ({}): \
                         this one works as step {} (handoff file {})",
                        users.join(", "),
                        claim.name,
                        live_path(wb, &claim.name).display()
                    ),
                });
            }
            (claim.name.clone(), Some(claim))
        }
        Err(e) => {
            say(Event::Warning {
                message: format!(
                    "cannot claim the step name {name} under {}: {e}; another flower-tui in \
                     this workspace could take the same name",
                    workbench_locks::locks_dir(wb).display()
                ),
            });
            (name, None)
        }
    }
}
