//! The model's tools: `read_file`, `write_file`, `edit_file`, `bash`, `grep`, `glob`,
//! `list_dir`, the approval rule, one-line summaries for UIs, and the tool-result budget ([`Spiller`]).
//! The plan-mode tool, [`present_plan`], and the step's own tools, [`todo`] and [`recall`], keep
//! state in the engine: the session layer
//! offers and runs them (`session/step_ledger/memory.rs`, `session/tools_exec.rs`), with the argument checks and summaries of this
//! module. Every tool's name is in [`names`].
//!
//! Every tool answers with a [`ToolOutput`]; failures are `is_error` outputs carrying a message for the
//! model, never panics. Paths stay inside the workspace unless the user approved leaving it
//! ([`ToolCtx::allow_outside`]). Tool output is data: nothing here interprets it.

mod args;
mod bash;
mod denied;
mod edit_file;
mod glob;
mod grep;
pub(crate) mod lean_descriptions;
pub(crate) mod lifeline;
mod list_dir;
pub(crate) mod names;
pub(crate) mod paths;
pub mod present_plan;
mod read_file;
pub mod recall;
pub mod sandbox;
mod spill;
pub(crate) mod terminal;
pub mod todo;
pub mod web_fetch;
pub(crate) mod web_search;
mod write_file;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Map, Value};

use crate::engine::diff::FileDiff;
use crate::engine::images::{ImageRef, ImageStore};
use crate::engine::text;
use crate::engine::types::{INVALID_JSON_KEY, ToolSpec};
use args::Args;
pub(crate) use bash::{FrontTerminal, Live, OutputReader, spawn as spawn_shell};
pub(crate) use spill::{Spiller, preview as spill_preview};

pub use crate::engine::text_files::{FileAccess, TextFiles};
pub use denied::Denied;
pub(crate) use spill::SPILL_PREVIEW_CHARS;

/// The bash timeout when neither the call nor the configuration asks for another.
pub(crate) const DEFAULT_BASH_TIMEOUT: Duration = Duration::from_secs(120);
/// The longest timeout a bash call may ask for.
pub(crate) const MAX_BASH_TIMEOUT: Duration = Duration::from_secs(600);

/// The names of all built-in tools, in the order [`specs`] lists them.
pub(crate) const TOOL_NAMES: [&str; 8] = names::BUILT_IN;

/// What a tool call may touch and how long it may run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCtx {
    /// The workspace root: absolute and canonical.
    pub workspace: PathBuf,
    /// Where spilled results go: the engine passes `<workbench>/spill`, or `<run>/spill` with
    /// `--no-workbench`; `None` uses [`default_spill_dir`].
    pub spill_dir: Option<PathBuf>,
    /// The session whose results are spilled (names the spill files).
    pub session_id: String,
    /// The bash timeout unless a call asks for another (capped at [`MAX_BASH_TIMEOUT`]).
    pub bash_timeout: Duration,
    /// The user approved leaving the workspace for this call.
    pub allow_outside: bool,
    /// How `bash` commands are confined ([`sandbox`]).
    pub sandbox: sandbox::SandboxPolicy,
    /// Where the images `read_file` shows the model are stored (the run's image store); None:
    /// the model in use takes no images.
    pub images: Option<ImageStore>,
    /// What `web_fetch` may reach, and its page cache.
    pub web: web_fetch::WebAccess,
    /// Where `read_file`, `edit_file` and `write_file` read and write text: the disk, or the
    /// front end's own access (an editor's buffers).
    pub files: FileAccess,
    /// What the settings' deny rules forbid: paths kept from the model (refused or left out),
    /// calls refused where no approval is judged.
    pub denied: Denied,
}

impl ToolCtx {
    /// A context with the defaults: no spill dir, the default bash timeout, workspace only, no
    /// sandbox.
    pub fn new(workspace: impl Into<PathBuf>, session_id: impl Into<String>) -> Self {
        ToolCtx {
            workspace: workspace.into(),
            spill_dir: None,
            session_id: session_id.into(),
            bash_timeout: DEFAULT_BASH_TIMEOUT,
            allow_outside: false,
            sandbox: sandbox::SandboxPolicy::off(),
            images: Some(ImageStore::new(paths::default_image_dir())),
            web: web_fetch::WebAccess::default(),
            files: Default::default(),
            denied: Denied::default(),
        }
    }
}

/// The result of one tool call, as the model will see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutput {
    /// The text returned to the model.
    pub content: String,
    /// The call failed (bad arguments, I/O error, non-zero exit, timeout, …).
    pub is_error: bool,
    /// Where the full result was written when it was too large for the context.
    pub spilled: Option<PathBuf>,
    /// The change a file tool made, as a diff for front ends (the model gets `content` only).
    pub diff: Option<Box<FileDiff>>,
    /// `bash`: how the command ended (always set for a command that started). Boxed, as the
    /// diff and the sandbox's note are: a result is moved around a lot.
    pub exit: Option<Box<CommandExit>>,
    /// `bash`: the sandbox stopped (or may have stopped) the command; the content ends with
    /// the same note.
    pub sandbox: Option<Box<sandbox::SandboxStopped>>,
    /// Text the model gets after `content` that the front ends get through an event of its own
    /// (the language servers' diagnostics of the files the call changed).
    pub appendix: Option<Box<str>>,
    /// Images the model is shown with the result (`read_file` of an image), stored already.
    pub images: Vec<ImageRef>,
}

/// How a bash command ended, for front ends (the model reads the same in the result's last line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandExit {
    pub end: CommandEnd,
    pub elapsed_ms: u64,
    /// One line to show: `exit code 0`, `exit code 101`, `killed by signal 9`,
    /// `timed out after 30s`, `interrupted after 2.5s`.
    pub summary: String,
}

/// The ways a command ends: one of them, never two.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandEnd {
    /// It exited by itself with this code.
    Exited { code: i32 },
    /// A signal it did not get from us killed it.
    Killed { signal: i32 },
    /// It ran past its timeout: it and its process group were killed.
    TimedOut,
    /// The user stopped it (Esc): the output is what it printed until then.
    Interrupted,
    /// Its status could not be read.
    Unknown,
}

impl CommandExit {
    /// The exit code; None when the command was killed (signal, timeout, interrupt).
    pub fn code(&self) -> Option<i32> {
        match self.end {
            CommandEnd::Exited { code } => Some(code),
            _ => None,
        }
    }

    /// The signal that killed it, if one did (not a timeout's or an interrupt's).
    pub fn signal(&self) -> Option<i32> {
        match self.end {
            CommandEnd::Killed { signal } => Some(signal),
            _ => None,
        }
    }

    pub fn timed_out(&self) -> bool {
        self.end == CommandEnd::TimedOut
    }

    /// Stopped by the user (Esc).
    pub fn interrupted(&self) -> bool {
        self.end == CommandEnd::Interrupted
    }
}

/// On the wire: how it ended (`ended`: `exited`, `killed`, `timed_out`, `interrupted`,
/// `unknown`) beside the fields it always had (`code`, `signal`, `timed_out`, `interrupted`).
impl serde::Serialize for CommandExit {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let ended = match self.end {
            CommandEnd::Exited { .. } => "exited",
            CommandEnd::Killed { .. } => "killed",
            CommandEnd::TimedOut => "timed_out",
            CommandEnd::Interrupted => "interrupted",
            CommandEnd::Unknown => "unknown",
        };
        let mut st = s.serialize_struct("CommandExit", 7)?;
        st.serialize_field("ended", ended)?;
        st.serialize_field("code", &self.code())?;
        st.serialize_field("signal", &self.signal())?;
        st.serialize_field("timed_out", &self.timed_out())?;
        st.serialize_field("interrupted", &self.interrupted())?;
        st.serialize_field("elapsed_ms", &self.elapsed_ms)?;
        st.serialize_field("summary", &self.summary)?;
        st.end()
    }
}

impl ToolOutput {
    /// A successful result.
    pub fn ok(content: impl Into<String>) -> Self {
        ToolOutput {
            content: content.into(),
            is_error: false,
            spilled: None,
            diff: None,
            exit: None,
            sandbox: None,
            appendix: None,
            images: Vec::new(),
        }
    }

    /// A failed call, with a message for the model.
    pub fn error(content: impl Into<String>) -> Self {
        ToolOutput {
            content: content.into(),
            is_error: true,
            spilled: None,
            diff: None,
            exit: None,
            sandbox: None,
            appendix: None,
            images: Vec::new(),
        }
    }

    /// The same result with the diff of the change it made.
    pub fn with_diff(mut self, diff: Option<FileDiff>) -> Self {
        self.diff = diff.map(Box::new);
        self
    }
}

/// A tool call that failed: the message goes back to the model as an error result (it says what
/// was wrong and how to call the tool instead).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ToolError(pub String);

impl From<String> for ToolError {
    fn from(message: String) -> Self {
        ToolError(message)
    }
}

impl From<&str> for ToolError {
    fn from(message: &str) -> Self {
        ToolError(message.to_string())
    }
}

impl From<ToolError> for ToolOutput {
    fn from(e: ToolError) -> Self {
        ToolOutput::error(e.0)
    }
}

/// What a tool's body returns.
pub(crate) type ToolResult = Result<ToolOutput, ToolError>;

/// JSON schemas and descriptions of every tool, for the model.
pub fn specs() -> Vec<ToolSpec> {
    vec![
        read_file::spec(),
        write_file::spec(),
        edit_file::spec(),
        bash::spec(),
        grep::spec(),
        glob::spec(),
        list_dir::spec(),
        web_fetch::spec(),
    ]
}

/// Whether `name` is one of the tools.
pub fn is_known(name: &str) -> bool {
    TOOL_NAMES.contains(&name)
}

/// Whether the call's `path` argument resolves outside the workspace (the spill folder excepted for
/// `read_file`). Such a call needs the user's approval of that path every time.
pub fn touches_outside(name: &str, input: &Value, workspace: &Path) -> bool {
    match input.get("path").and_then(Value::as_str) {
        Some(raw) if !raw.trim().is_empty() => {
            let resolved = paths::resolve(workspace, raw);
            let inside = paths::is_within(&paths::canonical_or_self(workspace), &resolved);
            let spill = name == names::READ_FILE && paths::in_default_spill_dir(&resolved);
            !inside && !spill
        }
        _ => false,
    }
}

/// Whether a call leaves the workspace: [`touches_outside`], except `read_file` of a
/// file in `spill_dir`, this run's spill folder (the spill notices send the model there; with
/// `--no-workbench` it is in the run directory).
pub(crate) fn leaves_workspace(
    name: &str,
    input: &Value,
    workspace: &Path,
    spill_dir: Option<&Path>,
) -> bool {
    touches_outside(name, input, workspace) && !reads_spill(name, input, workspace, spill_dir)
}

/// `read_file` of a file in `spill_dir` (not the folder itself).
pub(crate) fn reads_spill(
    name: &str,
    input: &Value,
    workspace: &Path,
    spill_dir: Option<&Path>,
) -> bool {
    let (Some(dir), names::READ_FILE) = (spill_dir, name) else {
        return false;
    };
    input
        .get("path")
        .and_then(Value::as_str)
        .is_some_and(|raw| {
            let path = paths::resolve(workspace, raw);
            let dir = paths::canonical_or_self(dir);
            path != dir && paths::is_within(&dir, &path)
        })
}

/// Whether this call must be approved by the user: `bash`, `write_file`, `edit_file` and
/// `web_fetch` always; any other tool whose path argument resolves outside the workspace.
pub(crate) fn needs_approval(name: &str, input: &Value, workspace: &Path) -> bool {
    match name {
        names::BASH | names::WRITE_FILE | names::EDIT_FILE | names::WEB_FETCH => true,
        names::READ_FILE | names::GREP | names::GLOB | names::LIST_DIR => {
            touches_outside(name, input, workspace)
        }
        _ => false,
    }
}

/// One line for UIs and approval prompts: `bash: cargo test`, `edit_file: src/main.rs`,
/// `read_file: a.rs:10-40`.
pub(crate) fn summary(name: &str, input: &Value) -> String {
    let one_line = |s: &str| text::one_line(s, 100);
    if input.get(INVALID_JSON_KEY).is_some() {
        return format!("{}: (invalid JSON arguments)", one_line(name));
    }
    match name {
        todo::NAME => return todo::summary(input),
        recall::NAME => return recall::summary(input),
        names::PRESENT_PLAN => return present_plan::summary(input),
        names::WEB_FETCH => {
            return match web_fetch::summary(input) {
                Some(url) => format!("{name}: {url}"),
                None => name.to_string(),
            };
        }
        _ => {}
    }
    let s = |k: &str| input.get(k).and_then(Value::as_str).map(one_line);
    let n = |k: &str| input.get(k).and_then(args::as_u64);
    let path = s("path");
    let detail = match name {
        names::BASH => input.get("command").and_then(Value::as_str).map(|c| {
            let first = c.trim().lines().next().unwrap_or("");
            let mut line = one_line(first);
            if c.trim().lines().nth(1).is_some() {
                line.push_str(" …");
            }
            if input.get("run_in_background").and_then(Value::as_bool) == Some(true) {
                line.push_str(" (background)");
            }
            line
        }),
        names::JOB_OUTPUT | names::JOB_STOP => input.get("id").map(|id| match id {
            Value::String(s) => format!("#{}", one_line(s.trim_start_matches('#'))),
            other => format!("#{other}"),
        }),
        names::READ_FILE => path.map(|p| match (n("offset"), n("limit")) {
            (None, None) => p,
            (off, Some(limit)) => {
                let start = off.unwrap_or(1).max(1);
                format!("{p}:{start}-{}", start.saturating_add(limit.max(1) - 1))
            }
            (Some(off), None) => format!("{p}:{}-", off.max(1)),
        }),
        names::WRITE_FILE | names::EDIT_FILE => path,
        names::GREP => s("pattern").map(|pat| {
            let mut line = format!("/{pat}/");
            if let Some(p) = &path {
                line.push_str(&format!(" in {p}"));
            }
            if let Some(g) = s("glob") {
                line.push_str(&format!(" ({g})"));
            }
            line
        }),
        names::GLOB => s("pattern").map(|pat| match &path {
            Some(p) => format!("{pat} in {p}"),
            None => pat,
        }),
        names::LIST_DIR => Some(path.unwrap_or_else(|| ".".into())),
        // A subagent (`engine::subagent`): what it was asked to do, in the model's words.
        names::TASK => s("description"),
        // An MCP tool: its arguments, so an approval shows what it is asked to do.
        _ if name.starts_with("mcp__") => match input {
            Value::Object(m) if m.is_empty() => None,
            Value::Null => None,
            other => Some(one_line(&other.to_string())),
        },
        _ => None,
    };
    match detail {
        Some(d) if !d.is_empty() => format!("{}: {d}", one_line(name)),
        _ => one_line(name),
    }
}

/// Run a tool. Never panics; every failure is an `is_error` output with a clear message for the
/// model. Cancel-safe: dropping the future kills a running bash command and its process group, and
/// stops a running search.
pub async fn run(name: &str, input: &Value, ctx: &ToolCtx) -> ToolOutput {
    let mut ignore = |_: String| {};
    let live = Live {
        on_output: &mut ignore,
        interrupt: None,
        terminal: None,
    };
    run_live(name, input, ctx, live).await
}

/// [`run`], with a running command's output streamed to `live.on_output` and `live.interrupt` to
/// stop it keeping its output (only `bash` streams or stops this way; other tools ignore both).
pub(crate) async fn run_live(
    name: &str,
    input: &Value,
    ctx: &ToolCtx,
    live: Live<'_>,
) -> ToolOutput {
    let map = match validate(name, input) {
        Ok(map) => map,
        Err(e) => return ToolOutput::from(e),
    };
    if name == names::BASH {
        return bash::run(&Args::new(name, map), ctx, live)
            .await
            .unwrap_or_else(ToolOutput::from);
    }
    if name == names::WEB_FETCH {
        return web_fetch::run(&Args::new(name, map), ctx)
            .await
            .unwrap_or_else(ToolOutput::from);
    }
    let cancel = CancelOnDrop(Arc::new(AtomicBool::new(false)));
    let flag = Arc::clone(&cancel.0);
    let (name, map, ctx) = (name.to_owned(), map.clone(), ctx.clone());
    let task = tokio::task::spawn_blocking(move || {
        run_blocking(&Args::new(&name, &map), &ctx, &flag).unwrap_or_else(ToolOutput::from)
    });
    let out = match task.await {
        Ok(out) => out,
        Err(e) => ToolOutput::error(format!("the tool failed unexpectedly: {e}")),
    };
    drop(cancel);
    out
}

/// A result as the model is given it: secrets masked, then through the tool-result budget (a
/// result too large for the context is spilled and previewed). Every tool result goes through
/// here, the main thread's and a subagent's alike.
pub(crate) fn for_model(
    name: &str,
    mut out: ToolOutput,
    ctx: &ToolCtx,
    spiller: &mut Spiller,
) -> ToolOutput {
    if let std::borrow::Cow::Owned(clean) = crate::engine::secrets::redact(&out.content) {
        out.content = clean;
    }
    spiller.apply(name, out, ctx)
}

/// What an approval prompt shows before a file tool runs: the diff the call would make (nothing
/// is written). `Ok(None)` for other tools; an error when the call would fail anyway (the engine
/// returns it without asking). Blocking: it reads the file.
pub(crate) fn preview(
    name: &str,
    input: &Value,
    ctx: &ToolCtx,
) -> Result<Option<FileDiff>, ToolError> {
    let map = validate(name, input)?;
    let args = Args::new(name, map);
    // Reading to show the change is not leaving the workspace: the approval decides that.
    let ctx = ToolCtx {
        allow_outside: true,
        ..ctx.clone()
    };
    match name {
        names::EDIT_FILE => edit_file::preview(&args, &ctx).map(Some),
        names::WRITE_FILE => write_file::preview(&args, &ctx),
        _ => Ok(None),
    }
}

/// The tools that do blocking file-system work (run on tokio's blocking pool).
fn run_blocking(args: &Args, ctx: &ToolCtx, cancel: &AtomicBool) -> ToolResult {
    match args.tool() {
        names::READ_FILE => read_file::run(args, ctx),
        names::WRITE_FILE => write_file::run(args, ctx),
        names::EDIT_FILE => edit_file::run(args, ctx),
        names::GREP => grep::run(args, ctx, cancel),
        names::GLOB => glob::run(args, ctx, cancel),
        names::LIST_DIR => list_dir::run(args, ctx),
        other => Err(unknown_tool(other).into()),
    }
}

/// Sets its flag when dropped, so a blocking search stops when the caller gives up on it.
pub(crate) struct CancelOnDrop(pub(crate) Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Checks the tool name and that the arguments are a JSON object the model meant to send.
fn validate<'a>(name: &str, input: &'a Value) -> Result<&'a Map<String, Value>, ToolError> {
    if !is_known(name) {
        return Err(ToolError(unknown_tool(name)));
    }
    arguments(name, input)
}

/// Checks that the arguments are a JSON object the model meant to send (null counts as `{}`).
pub(crate) fn arguments<'a>(
    name: &str,
    input: &'a Value,
) -> Result<&'a Map<String, Value>, ToolError> {
    if let Some(raw) = input.get(INVALID_JSON_KEY) {
        let raw = match raw {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        return Err(ToolError(format!(
            "The arguments for `{name}` were not valid JSON, so the tool did not run. \
             Send the call again with a single JSON object matching the tool's schema. \
             The raw arguments received were:\n{}",
            text::truncate_chars(&raw, 2_000)
        )));
    }
    match input {
        Value::Object(map) => Ok(map),
        Value::Null => {
            static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
            Ok(EMPTY.get_or_init(Map::new))
        }
        other => Err(ToolError(format!(
            "The arguments for `{name}` must be a JSON object, got: {}",
            text::truncate_chars(&other.to_string(), 500)
        ))),
    }
}

fn unknown_tool(name: &str) -> String {
    unknown_tool_among(name, &TOOL_NAMES)
}

/// The error for a call of a tool that is not among `offered` (the names the request listed).
pub(crate) fn unknown_tool_among<S: AsRef<str>>(name: &str, offered: &[S]) -> String {
    let names: Vec<&str> = offered.iter().map(AsRef::as_ref).collect();
    format!(
        "Unknown tool `{}`. The available tools are: {}.",
        text::one_line(name, 100),
        names.join(", ")
    )
}

#[cfg(test)]
mod tests;
