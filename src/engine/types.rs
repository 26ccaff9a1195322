//! Conversation types shared by the providers, the tools and the session loop.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::images::ImageRef;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
}

/// One content block of a message, in the Anthropic shape; the OpenAI adapter maps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Block {
    Text {
        text: String,
    },
    Thinking {
        thinking: String,
        #[serde(default, skip_serializing_if = "String::is_empty")]
        signature: String,
    },
    ToolUse {
        id: String,
        name: String,
        input: Value,
        /// The model wrote this call as text (a JSON object in its reply) and it was read as a
        /// call (`provider::text_calls`); kept in the transcript, shown with the call.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        from_text: bool,
    },
    ToolResult {
        tool_use_id: String,
        content: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
    /// An image shown to the model: the stored file ([`crate::engine::images`]), never its
    /// bytes. `tool_use_id` names the call that returned it (`read_file` of an image), whose
    /// result carries it; None: the user attached it.
    Image {
        image: ImageRef,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool_use_id: Option<String>,
    },
    /// A tool the provider ran on its side (Anthropic's web search), kept to be sent back as it
    /// came.
    ServerToolUse {
        id: String,
        name: String,
        input: Value,
    },
    /// What a server-side web search found, as the provider sent it (sent back unchanged).
    WebSearchToolResult {
        tool_use_id: String,
        content: Value,
    },
}

impl Block {
    /// Rough size in characters of the block (for estimates; an image by its tokens).
    pub fn char_len(&self) -> usize {
        match self {
            Block::Text { text } => text.len(),
            Block::Thinking { thinking, .. } => thinking.len(),
            Block::ToolUse { name, input, .. } => name.len() + input.to_string().len(),
            Block::ToolResult { content, .. } => content.len(),
            Block::Image { image, .. } => {
                usize::try_from(image.tokens()).unwrap_or(usize::MAX / 8) * CHARS_PER_IMAGE_TOKEN
            }
            Block::ServerToolUse { name, input, .. } => name.len() + input.to_string().len(),
            Block::WebSearchToolResult { content, .. } => content.to_string().len(),
        }
    }

    pub fn text(s: impl Into<String>) -> Self {
        Block::Text { text: s.into() }
    }

    /// An image the user attached.
    pub fn image(image: ImageRef) -> Self {
        Block::Image {
            image,
            tool_use_id: None,
        }
    }
}

/// The characters an image counts as in estimates: its tokens at the default ratio, so the
/// gauge adds `width × height / 750` for it.
const CHARS_PER_IMAGE_TOKEN: usize = 4;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: Vec<Block>,
}

impl Message {
    pub fn user(text: impl Into<String>) -> Self {
        Message {
            role: Role::User,
            content: vec![Block::text(text)],
        }
    }

    pub fn assistant(text: impl Into<String>) -> Self {
        Message {
            role: Role::Assistant,
            content: vec![Block::text(text)],
        }
    }

    /// All text blocks joined, in order.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for b in &self.content {
            if let Block::Text { text } = b {
                out.push_str(text);
            }
        }
        out
    }

    /// The `tool_use` blocks of this message.
    pub fn tool_uses(&self) -> impl Iterator<Item = (&str, &str, &Value)> {
        self.content.iter().filter_map(|b| match b {
            Block::ToolUse {
                id, name, input, ..
            } => Some((id.as_str(), name.as_str(), input)),
            _ => None,
        })
    }

    pub fn has_tool_use(&self) -> bool {
        self.tool_uses().next().is_some()
    }

    pub fn has_tool_result(&self) -> bool {
        self.content
            .iter()
            .any(|b| matches!(b, Block::ToolResult { .. }))
    }

    /// Rough size in characters of everything in the message (for estimates).
    pub fn char_len(&self) -> usize {
        self.content.iter().map(Block::char_len).sum()
    }

    /// The images of this message, in order.
    pub fn images(&self) -> impl Iterator<Item = &ImageRef> {
        self.content.iter().filter_map(|b| match b {
            Block::Image { image, .. } => Some(image),
            _ => None,
        })
    }
}

/// Token usage as a provider reports it for one response.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_creation_input_tokens: u64,
    pub cache_read_input_tokens: u64,
}

impl Usage {
    /// What the model saw plus what it wrote: the context (`ctx`) the gauge and the handoff
    /// line measure.
    pub fn context(&self) -> u64 {
        self.input_tokens
            + self.cache_creation_input_tokens
            + self.cache_read_input_tokens
            + self.output_tokens
    }
}

/// Summing the usage of several responses (a subagent's whole run).
impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, o: Usage) {
        self.input_tokens = self.input_tokens.saturating_add(o.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(o.output_tokens);
        self.cache_creation_input_tokens = self
            .cache_creation_input_tokens
            .saturating_add(o.cache_creation_input_tokens);
        self.cache_read_input_tokens = self
            .cache_read_input_tokens
            .saturating_add(o.cache_read_input_tokens);
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum ToolChoice {
    #[default]
    Auto,
    /// Tool use switched off for this request; the tool list is still sent.
    None,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ModelRequest {
    pub model: String,
    pub system: String,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolSpec>,
    pub tool_choice: ToolChoice,
    pub max_tokens: u32,
    /// How hard the model should think (`--effort`, `/effort`): Anthropic extended thinking with a
    /// budget, OpenAI `reasoning_effort`. None: the provider's default (no thinking requested).
    pub effort: Option<Effort>,
}

/// Reasoning effort (`--effort low|medium|high`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Effort {
    Low,
    Medium,
    High,
}

impl Effort {
    /// The words `--effort` accepts.
    pub const ACCEPTED: &'static str = "low, medium, high (or off)";

    /// `low`, `medium`, `high`; `off` (or `none`) is `Ok(None)`.
    pub fn parse(s: &str) -> Result<Option<Effort>, UnknownEffort> {
        match s.trim().to_ascii_lowercase().as_str() {
            "low" => Ok(Some(Effort::Low)),
            "medium" | "med" => Ok(Some(Effort::Medium)),
            "high" => Ok(Some(Effort::High)),
            "off" | "none" => Ok(None),
            _ => Err(UnknownEffort(s.to_string())),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Effort::Low => "low",
            Effort::Medium => "medium",
            Effort::High => "high",
        }
    }

    /// Anthropic's `thinking.budget_tokens` for this effort (the API's floor is 1,024).
    pub fn thinking_budget(self) -> u32 {
        match self {
            Effort::Low => 4_000,
            Effort::Medium => 10_000,
            Effort::High => 20_000,
        }
    }
}

/// A word [`Effort::parse`] does not know (the word as given).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("accepted values: {accepted} (got '{got}')", accepted = Effort::ACCEPTED, got = .0)]
pub struct UnknownEffort(pub String);

/// What a reply keeps for its answer beyond the thinking budget (`max_tokens` must exceed the
/// budget: it is raised to `budget + THINKING_ANSWER_ROOM` when it is lower).
pub(crate) const THINKING_ANSWER_ROOM: u32 = 4_096;

impl std::fmt::Display for Effort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A piece of a streamed response, forwarded to the UI as it arrives.
#[derive(Debug, Clone, PartialEq)]
pub enum Delta {
    Text(String),
    Thinking(String),
    ToolUseStart {
        id: String,
        name: String,
    },
    /// Bytes arrived from the server (the response headers, an event, a `ping`, an SSE comment):
    /// nothing to show, but the stream is alive (the stream's idle timeout starts again).
    Alive,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelResponse {
    pub content: Vec<Block>,
    pub usage: Usage,
    pub stop_reason: Option<String>,
    /// Web searches the provider ran on its side for this response (billed per search).
    pub web_search_requests: u64,
}

impl ModelResponse {
    pub fn message(&self) -> Message {
        Message {
            role: Role::Assistant,
            content: self.content.clone(),
        }
    }

    pub fn text(&self) -> String {
        self.message().text()
    }
}

/// A provider that could not parse a tool call's arguments as a JSON object stores the raw text under
/// this key, so the history stays valid and the tool router can answer with a clear error.
pub const INVALID_JSON_KEY: &str = "_flower_invalid_json";

/// Append `msg` to a history; a user message after a user message joins it (the API wants roles to
/// alternate).
pub(crate) fn append_message(messages: &mut Vec<Message>, msg: Message) {
    match messages.last_mut() {
        Some(last) if msg.role == Role::User && last.role == Role::User => {
            last.content.extend(msg.content)
        }
        _ => messages.push(msg),
    }
}
