//! The hook events, what each event's hook reads on stdin (Claude Code's field names, so its hook
//! scripts run unchanged), and Claude Code's names of our tools.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::engine::tools::{ToolOutput, names, paths};

/// When a hook runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HookEvent {
    /// A session starts: at launch, on `--continue`/`/resume`, after `/new`, or as a handoff's
    /// successor.
    SessionStart,
    /// The user sent a message, before the model sees it.
    UserPromptSubmit,
    /// A tool call is about to run (before its approval).
    PreToolUse,
    /// A tool call has run.
    PostToolUse,
    /// The main thread's turn is about to end.
    Stop,
    /// A subagent is about to give its report.
    SubagentStop,
    /// A session ends.
    SessionEnd,
    /// flower-tui waits for the user (an approval prompt).
    Notification,
    /// A handoff is about to be written: a hook may refuse it or add focus text.
    PreHandoff,
    /// The handoff document is frozen on disk and not yet reviewed: a hook may edit the file.
    HandoffFrozen,
}

impl HookEvent {
    /// Every event, in the order of a session.
    pub const ALL: [HookEvent; 10] = [
        HookEvent::SessionStart,
        HookEvent::UserPromptSubmit,
        HookEvent::PreToolUse,
        HookEvent::PostToolUse,
        HookEvent::Stop,
        HookEvent::SubagentStop,
        HookEvent::SessionEnd,
        HookEvent::Notification,
        HookEvent::PreHandoff,
        HookEvent::HandoffFrozen,
    ];

    /// The name in config files and in `hook_event_name`.
    pub fn as_str(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "SessionStart",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::Stop => "Stop",
            HookEvent::SubagentStop => "SubagentStop",
            HookEvent::SessionEnd => "SessionEnd",
            HookEvent::Notification => "Notification",
            HookEvent::PreHandoff => "PreHandoff",
            HookEvent::HandoffFrozen => "HandoffFrozen",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        HookEvent::ALL.into_iter().find(|e| e.as_str() == name)
    }

    /// The accepted names, for errors.
    pub fn accepted() -> String {
        HookEvent::ALL.map(HookEvent::as_str).join(", ")
    }

    /// Who reads the reason when a hook blocks this event (exit code 2, `"decision": "block"`);
    /// `None` for events that cannot be blocked (their exit-2 stderr is shown to the user).
    pub fn blocks_for(self) -> Option<Audience> {
        match self {
            HookEvent::PreToolUse
            | HookEvent::PostToolUse
            | HookEvent::Stop
            | HookEvent::SubagentStop => Some(Audience::Model),
            HookEvent::UserPromptSubmit | HookEvent::PreHandoff => Some(Audience::User),
            HookEvent::SessionStart
            | HookEvent::SessionEnd
            | HookEvent::Notification
            | HookEvent::HandoffFrozen => None,
        }
    }

    /// Whether `hookSpecificOutput.additionalContext` means something for this event (context
    /// for the model; for `PreHandoff`, focus text).
    pub fn takes_context(self) -> bool {
        matches!(
            self,
            HookEvent::SessionStart
                | HookEvent::UserPromptSubmit
                | HookEvent::PreToolUse
                | HookEvent::PostToolUse
                | HookEvent::PreHandoff
        )
    }

    /// Whether a successful hook's plain stdout is context for the model (for `PreHandoff`: focus
    /// text for the document) rather than output to show.
    pub fn stdout_is_context(self) -> bool {
        matches!(
            self,
            HookEvent::SessionStart | HookEvent::UserPromptSubmit | HookEvent::PreHandoff
        )
    }
}

impl std::fmt::Display for HookEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Who a hook's message is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Audience {
    /// Given to the model (a tool result, a message that keeps the turn going).
    Model,
    /// Shown to the user only.
    User,
}

/// Why a session starts (`source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartSource {
    /// A new session at launch.
    Startup,
    /// `--continue` or `/resume`.
    Resume,
    /// `/new` (Claude Code's `/clear`).
    Clear,
    /// The successor of a handoff.
    Handoff,
}

impl StartSource {
    pub fn as_str(self) -> &'static str {
        match self {
            StartSource::Startup => "startup",
            StartSource::Resume => "resume",
            StartSource::Clear => "clear",
            StartSource::Handoff => "handoff",
        }
    }
}

/// Why a session ends (`reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndReason {
    /// The user quit.
    Exit,
    /// `/new`.
    Clear,
    /// A handoff retired it.
    Handoff,
    /// `/resume` left it, a headless run finished, or another reason.
    Other,
}

impl EndReason {
    pub fn as_str(self) -> &'static str {
        match self {
            EndReason::Exit => "prompt_input_exit",
            EndReason::Clear => "clear",
            EndReason::Handoff => "handoff",
            EndReason::Other => "other",
        }
    }
}

/// How a handoff was asked for (`trigger`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandoffTrigger {
    /// `/handoff`.
    Manual,
    /// The context crossed the handoff line, or a request overflowed.
    Auto,
}

impl HandoffTrigger {
    pub fn as_str(self) -> &'static str {
        match self {
            HandoffTrigger::Manual => "manual",
            HandoffTrigger::Auto => "auto",
        }
    }
}

/// The approval mode the session is in (`permission_mode`, Claude Code's words).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PermissionMode {
    #[default]
    Default,
    AcceptEdits,
    Plan,
    /// `--yes`.
    BypassPermissions,
}

impl PermissionMode {
    pub fn as_str(self) -> &'static str {
        match self {
            PermissionMode::Default => "default",
            PermissionMode::AcceptEdits => "acceptEdits",
            PermissionMode::Plan => "plan",
            PermissionMode::BypassPermissions => "bypassPermissions",
        }
    }
}

/// A tool call as hooks see it: our tool name and the arguments the model gave.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub input: Value,
}

/// What happened, with what each event's hook reads.
#[derive(Debug, Clone, PartialEq)]
pub enum HookInput {
    SessionStart {
        source: StartSource,
    },
    UserPromptSubmit {
        prompt: String,
    },
    PreToolUse {
        call: ToolCall,
    },
    PostToolUse {
        call: ToolCall,
        /// See [`tool_response`].
        response: Value,
    },
    Stop {
        /// The turn already goes on because a Stop hook blocked its end once.
        stop_hook_active: bool,
    },
    SubagentStop {
        stop_hook_active: bool,
        /// The subagent's id (its `task` call).
        agent_id: String,
    },
    SessionEnd {
        reason: EndReason,
    },
    Notification {
        message: String,
    },
    PreHandoff {
        trigger: HandoffTrigger,
        /// The focus the user gave `/handoff`, if any.
        focus: Option<String>,
    },
    HandoffFrozen {
        trigger: HandoffTrigger,
        /// The frozen document (absolute).
        path: PathBuf,
        step: String,
        generation: u32,
    },
}

impl HookInput {
    pub fn event(&self) -> HookEvent {
        match self {
            HookInput::SessionStart { .. } => HookEvent::SessionStart,
            HookInput::UserPromptSubmit { .. } => HookEvent::UserPromptSubmit,
            HookInput::PreToolUse { .. } => HookEvent::PreToolUse,
            HookInput::PostToolUse { .. } => HookEvent::PostToolUse,
            HookInput::Stop { .. } => HookEvent::Stop,
            HookInput::SubagentStop { .. } => HookEvent::SubagentStop,
            HookInput::SessionEnd { .. } => HookEvent::SessionEnd,
            HookInput::Notification { .. } => HookEvent::Notification,
            HookInput::PreHandoff { .. } => HookEvent::PreHandoff,
            HookInput::HandoffFrozen { .. } => HookEvent::HandoffFrozen,
        }
    }

    /// What a matcher is tested against: the tool's names (Claude Code's, where it has one, and
    /// ours), the session's `source`, the `notification_type`, the handoff's `trigger`. Empty for
    /// events without a matcher: every hook of the event runs.
    pub fn match_subjects(&self) -> Vec<&str> {
        match self {
            HookInput::PreToolUse { call } | HookInput::PostToolUse { call, .. } => {
                let mut names: Vec<&str> = claude_name(&call.name).into_iter().collect();
                names.push(&call.name);
                names
            }
            HookInput::SessionStart { source } => vec![source.as_str()],
            HookInput::Notification { .. } => vec![NOTIFICATION_TYPE],
            HookInput::PreHandoff { trigger, .. } | HookInput::HandoffFrozen { trigger, .. } => {
                vec![trigger.as_str()]
            }
            _ => Vec::new(),
        }
    }

    /// The JSON object the hook reads on stdin.
    pub fn stdin_json(&self, session: &HookSession) -> Value {
        let mut obj = Map::new();
        obj.insert("session_id".into(), json!(session.session_id));
        obj.insert(
            "transcript_path".into(),
            json!(session.transcript_path.to_string_lossy()),
        );
        obj.insert("cwd".into(), json!(session.workspace.to_string_lossy()));
        obj.insert(
            "permission_mode".into(),
            json!(session.permission_mode.as_str()),
        );
        obj.insert("hook_event_name".into(), json!(self.event().as_str()));
        let mut put = |k: &str, v: Value| {
            obj.insert(k.to_string(), v);
        };
        match self {
            HookInput::SessionStart { source } => put("source", json!(source.as_str())),
            HookInput::UserPromptSubmit { prompt } => put("prompt", json!(prompt)),
            HookInput::PreToolUse { call } => {
                put("tool_name", json!(hook_tool_name(&call.name)));
                put("tool_input", tool_input(call, &session.workspace));
                put("tool_use_id", json!(call.id));
            }
            HookInput::PostToolUse { call, response } => {
                put("tool_name", json!(hook_tool_name(&call.name)));
                put("tool_input", tool_input(call, &session.workspace));
                put("tool_response", response.clone());
                put("tool_use_id", json!(call.id));
            }
            HookInput::Stop { stop_hook_active } => {
                put("stop_hook_active", json!(stop_hook_active));
            }
            HookInput::SubagentStop {
                stop_hook_active,
                agent_id,
            } => {
                put("stop_hook_active", json!(stop_hook_active));
                put("agent_id", json!(agent_id));
            }
            HookInput::SessionEnd { reason } => put("reason", json!(reason.as_str())),
            HookInput::Notification { message } => {
                put("message", json!(message));
                put("notification_type", json!(NOTIFICATION_TYPE));
            }
            HookInput::PreHandoff { trigger, focus } => {
                put("trigger", json!(trigger.as_str()));
                put("focus", json!(focus));
            }
            HookInput::HandoffFrozen {
                trigger,
                path,
                step,
                generation,
            } => {
                put("trigger", json!(trigger.as_str()));
                put("handoff_path", json!(path.to_string_lossy()));
                put("step", json!(step));
                put("generation", json!(generation));
            }
        }
        Value::Object(obj)
    }
}

/// The one kind of notification flower-tui sends: an approval waits for the user.
const NOTIFICATION_TYPE: &str = "permission_prompt";

/// The session a hook runs for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookSession {
    pub session_id: String,
    /// The session's transcript (JSON lines).
    pub transcript_path: PathBuf,
    /// The workspace root: the hook's working directory and `CLAUDE_PROJECT_DIR`.
    pub workspace: PathBuf,
    pub permission_mode: PermissionMode,
}

/// Claude Code's tool names and ours (`task` is the subagent tool of `engine::subagent`, `skill`
/// the tool of `engine::skills`). An MCP tool is `mcp__server__tool` in both.
const CLAUDE_NAMES: [(&str, &str); 11] = [
    ("Bash", names::BASH),
    ("Edit", names::EDIT_FILE),
    ("Write", names::WRITE_FILE),
    ("Read", names::READ_FILE),
    ("Grep", names::GREP),
    ("Glob", names::GLOB),
    ("LS", names::LIST_DIR),
    ("Task", names::TASK),
    ("TodoWrite", names::TODO),
    ("Skill", names::SKILL),
    ("WebFetch", names::WEB_FETCH),
];

/// Claude Code's name of one of our tools, where it has one.
pub fn claude_name(ours: &str) -> Option<&'static str> {
    CLAUDE_NAMES
        .iter()
        .find(|(_, o)| *o == ours)
        .map(|(claude, _)| *claude)
}

/// Our name of a tool Claude Code names `claude` (`Bash` → `bash`).
pub fn our_name(claude: &str) -> Option<&'static str> {
    CLAUDE_NAMES
        .iter()
        .find(|(c, _)| *c == claude)
        .map(|(_, ours)| *ours)
}

/// `tool_name` on stdin: Claude Code's name where one exists, so its scripts' checks hold.
fn hook_tool_name(ours: &str) -> &str {
    claude_name(ours).unwrap_or(ours)
}

/// `tool_input` on stdin: the arguments as the model gave them, and for a tool with a `path`,
/// `file_path` as Claude Code's tools name it (absolute), so scripts reading either work.
fn tool_input(call: &ToolCall, workspace: &Path) -> Value {
    let mut input = call.input.clone();
    if let Value::Object(map) = &mut input
        && !map.contains_key("file_path")
        && let Some(raw) = map.get("path").and_then(Value::as_str)
        && matches!(
            call.name.as_str(),
            names::READ_FILE | names::WRITE_FILE | names::EDIT_FILE
        )
    {
        let abs = paths::resolve(workspace, raw);
        map.insert("file_path".into(), json!(abs.to_string_lossy()));
    }
    input
}

/// `tool_response` for a [`HookInput::PostToolUse`]: the result the model got, whether it failed,
/// and for a command its exit code, with `stdout` as Claude Code's `Bash` names the output.
pub fn tool_response(name: &str, out: &ToolOutput) -> Value {
    let mut obj = Map::new();
    obj.insert("content".into(), json!(out.content));
    obj.insert("is_error".into(), json!(out.is_error));
    obj.insert("success".into(), json!(!out.is_error));
    if let Some(exit) = &out.exit {
        obj.insert("exit_code".into(), json!(exit.code()));
        obj.insert("interrupted".into(), json!(exit.interrupted()));
        obj.insert("timed_out".into(), json!(exit.timed_out()));
    }
    if name == names::BASH {
        obj.insert("stdout".into(), json!(out.content));
        obj.insert("stderr".into(), json!(""));
    }
    if let Some(path) = &out.spilled {
        obj.insert("spilled".into(), json!(path.to_string_lossy()));
    }
    Value::Object(obj)
}
