//! Which session the TUI talks to: the run it belongs to (what `--resume RUN_ID` continues), the
//! session the engine talks in now, and its generation (printed on quit, and named by the
//! near-handoff notice).

/// The run, the session and its generation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SessionInfo {
    /// The run this session belongs to.
    run_id: Option<String>,
    /// The session the engine talks in now.
    session_id: Option<String>,
    /// The current generation.
    generation: u32,
}

impl SessionInfo {
    /// The first generation of run `run_id`, before its session started.
    pub(crate) fn new(run_id: Option<String>) -> Self {
        SessionInfo {
            run_id,
            session_id: None,
            generation: 1,
        }
    }

    /// The run this session belongs to.
    pub(crate) fn run_id(&self) -> Option<&str> {
        self.run_id.as_deref()
    }

    /// The session the engine talks in now.
    pub(crate) fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    /// The current generation.
    pub(crate) fn generation(&self) -> u32 {
        self.generation
    }

    /// A session started (a new one, or a successor).
    pub(crate) fn started(&mut self, session_id: String, generation: u32) {
        self.session_id = Some(session_id);
        self.generation = generation;
    }

    /// Run `run_id` is continued: true when it is another run than the one shown.
    pub(crate) fn resumed(&mut self, run_id: &str) -> bool {
        let another = self.run_id.as_deref().is_some_and(|r| r != run_id);
        self.run_id = Some(run_id.to_string());
        another
    }
}
