//! The tools' names, defined once: the built-in tools, the step's own (`todo`, `recall`), the
//! subagent tool (`task`), the skill tool (`skill`) and the plan-mode tool (`present_plan`), which
//! of them change files, and which change nothing (what plan mode offers). Every
//! other place (the router, approvals, hooks' aliases, subagents, the events sent to the front
//! ends) names a tool through these.

/// Reads a file (or a page of it).
pub const READ_FILE: &str = "read_file";
/// Writes a whole file.
pub const WRITE_FILE: &str = "write_file";
/// Replaces text in a file.
pub const EDIT_FILE: &str = "edit_file";
/// Runs a shell command.
pub const BASH: &str = "bash";
/// Searches file contents.
pub const GREP: &str = "grep";
/// Finds files by pattern.
pub const GLOB: &str = "glob";
/// Lists a directory.
pub const LIST_DIR: &str = "list_dir";
/// Reads a background job's output, or lists the jobs.
pub const JOB_OUTPUT: &str = "job_output";
/// Stops a background job.
pub const JOB_STOP: &str = "job_stop";
/// The step's plan (the step's own tool).
pub const TODO: &str = "todo";
/// Searches the transcripts of the step's earlier generations (the step's own tool).
pub const RECALL: &str = "recall";
/// Starts a subagent.
pub const TASK: &str = "task";
/// Loads a skill.
pub const SKILL: &str = "skill";
/// Presents the plan written in plan mode (the plan-mode tool).
pub const PRESENT_PLAN: &str = "present_plan";
/// What the language servers report for a file (offered while they are on).
pub const DIAGNOSTICS: &str = "diagnostics";
/// Fetches a web page as Markdown (runs in the engine, asked for per host).
pub const WEB_FETCH: &str = "web_fetch";

/// The tools plan mode offers, whatever they read: none of them changes the workspace. `bash` is
/// not among them: plan mode offers it only where the read-only sandbox confines it. Every other
/// tool (the file writers, subagents, MCP servers' tools) is left out.
pub const CHANGE_NOTHING: [&str; 12] = [
    READ_FILE,
    JOB_OUTPUT,
    JOB_STOP,
    GREP,
    GLOB,
    LIST_DIR,
    WEB_FETCH,
    TODO,
    RECALL,
    SKILL,
    PRESENT_PLAN,
    DIAGNOSTICS,
];

/// The built-in tools, in the order [`super::specs`] lists them.
pub const BUILT_IN: [&str; 8] = [
    READ_FILE, WRITE_FILE, EDIT_FILE, BASH, GREP, GLOB, LIST_DIR, WEB_FETCH,
];

/// The file tools whose change an approval previews as a diff.
pub const FILE_WRITERS: [&str; 2] = [WRITE_FILE, EDIT_FILE];

/// Whether a call of `name` may change files in the workspace: the file writers and `bash` (a
/// command may write anything). Front ends refresh what they know of the files after one.
pub fn changes_files(name: &str) -> bool {
    name == BASH || writes_files(name)
}

/// The built-in tools that only read: what may read a loaded skill's files without asking.
pub const READERS: [&str; 4] = [READ_FILE, GREP, GLOB, LIST_DIR];

/// Whether `name` is one of the [`READERS`].
pub fn reads_only(name: &str) -> bool {
    READERS.contains(&name)
}

/// Whether `name` is one of the file writers ([`FILE_WRITERS`]).
pub fn writes_files(name: &str) -> bool {
    FILE_WRITERS.contains(&name)
}
