//! The background jobs as the TUI knows them: the engine's last list (the status line counts the
//! running ones) and the `/jobs` listing made from it (command, age, state, output size).

use crate::engine::jobs::JobInfo;

/// The jobs, as the engine last listed them.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct JobsView {
    jobs: Vec<JobInfo>,
    /// `/jobs` asked for the list: the next one is shown in the chat.
    pub(crate) listing: bool,
}

impl JobsView {
    /// How many run now (the status line shows it when any does).
    pub(crate) fn running(&self) -> usize {
        self.jobs.iter().filter(|j| j.state.is_running()).count()
    }

    /// The engine's new list.
    pub(crate) fn update(&mut self, jobs: Vec<JobInfo>) {
        self.jobs = jobs;
    }

    /// The `/jobs` listing.
    pub(crate) fn report(&self) -> String {
        if self.jobs.is_empty() {
            return "No background jobs. The model starts one with bash's run_in_background."
                .to_string();
        }
        let mut lines = vec!["Background jobs:".to_string()];
        let now = crate::engine::fsutil::now_unix().0;
        for j in &self.jobs {
            let age = crate::engine::jobs::age(now.saturating_sub(j.started_unix));
            let mut line = format!(
                "  #{} · {} · {age} · {} · {}",
                j.id,
                j.state.describe(),
                crate::engine::jobs::size(j.bytes),
                crate::engine::text::one_line(&j.command, 80)
            );
            if let Some(url) = &j.url {
                line.push_str(&format!(" · {url}"));
            }
            lines.push(line);
        }
        lines.push("/jobs N shows a job's last lines; /jobs stop N stops it".to_string());
        lines.join("\n")
    }
}
