//! `session/list`: the workspace's runs from the ledger, newest first, as the editor's sessions.
//! A run's id is its session id: the one `session/load` continues, and the one the terminal's
//! `flower-tui --resume RUN_ID` takes, so a run goes from the terminal to the editor and back.

use std::path::Path;

use agent_client_protocol::v1::schema::SessionInfo;

use crate::engine::ledger::run_list;

/// The runs of `workspace` as sessions.
pub(super) fn list(data_dir: &Path, workspace: &Path) -> Vec<SessionInfo> {
    let workspace = workspace
        .canonicalize()
        .unwrap_or_else(|_| workspace.to_path_buf());
    run_list::list(data_dir, &workspace)
        .into_iter()
        .map(|run| {
            let title = if run.first_message.trim().is_empty() {
                run.step.clone()
            } else {
                run.first_message.clone()
            };
            SessionInfo::new(run.run_id.clone(), workspace.clone())
                .title(title)
                .updated_at(run.updated)
        })
        .collect()
}

/// A run held open by this process's editor session (`<run>/editor.lock`, `flock`): a second
/// `flower-tui acp` that loads the same run while this one lives is refused, so two engines never
/// append to one transcript. The kernel drops the lock when the process dies, so it is never
/// stale. (The terminal's `--resume` does not take it.)
pub(super) struct Claim {
    _file: std::fs::File,
}

impl Claim {
    /// Claim the run at `root`; Err says which process holds it.
    pub(super) fn take(root: &Path, run_id: &str) -> Result<Claim, String> {
        use std::io::{Read, Seek, Write};
        use std::os::fd::AsRawFd;
        let path = root.join("editor.lock");
        let opened = std::fs::create_dir_all(root).and_then(|()| {
            std::fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .read(true)
                .write(true)
                .open(&path)
        });
        let mut file = opened.map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        // SAFETY: flock on a descriptor we own (it lives as long as `file`).
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc != 0 {
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            let holder = holder.trim();
            let by = if holder.is_empty() {
                "another process".to_string()
            } else {
                format!("process {holder}")
            };
            return Err(format!(
                "run {run_id} is open in another flower-tui acp ({by}): close it there first \
                 (nothing was changed; its ledger keeps everything)"
            ));
        }
        let _ = file.set_len(0);
        let _ = file.rewind();
        let _ = write!(file, "{}", std::process::id());
        let _ = file.flush();
        Ok(Claim { _file: file })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claimed_run_is_refused_until_released() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("run-1");
        let first = Claim::take(&root, "run-1").unwrap();
        // A second open file description contends for the lock as another process would.
        let refused = Claim::take(&root, "run-1").err().unwrap();
        assert!(
            refused.contains("run run-1 is open in another flower-tui acp"),
            "{refused}"
        );
        assert!(
            refused.contains(&format!("process {}", std::process::id())),
            "{refused}"
        );
        drop(first);
        assert!(Claim::take(&root, "run-1").is_ok());
    }
}
