//! The context windows well-known model families accept without opt-in, and the `[1m]`
//! marker that opts a Claude model into the 1M-token beta.
//!
//! A model id is matched after its routing prefixes are dropped (`anthropic/`, `openai/`,
//! `models/`, `accounts/fireworks/models/`, Bedrock's `us.anthropic.`) and in lower case, so
//! `openrouter`'s `anthropic/claude-sonnet-4.5`, Bedrock's `us.anthropic.claude-sonnet-4-5-20250929-v1:0`,
//! Vertex's `claude-sonnet-4-5@20250929` and Ollama's `qwen2.5-coder:32b` find their family. The
//! first matching row wins, so more specific rows come first. The numbers are the providers' own
//! (model pages and API references); for OpenAI's GPT-5 family it is the input limit (272,000 of
//! the 400,000 that include the output), since the window here bounds what is sent.

/// The `anthropic-beta` value that lets Claude Sonnet 4 / 4.5 take 1,000,000 tokens.
pub const CONTEXT_1M_BETA: &str = "context-1m-2025-08-07";

/// The marker a user appends to a Claude model name to ask for the 1M window.
pub(crate) const MARKER_1M: &str = "[1m]";

/// A family in the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Family {
    /// E.g. `Claude on the Anthropic API`.
    pub name: &'static str,
    /// `model table: <name>`, shown by `-v` and `/window`.
    pub source: &'static str,
    /// The window in tokens.
    pub window: u64,
}

/// How a row matches a normalised model id.
#[derive(Debug, Clone, Copy)]
enum Pattern {
    /// The id starts with this.
    Prefix(&'static str),
    /// The id holds this between non-alphanumeric characters (or the ends).
    Token(&'static str),
}

macro_rules! row {
    ($p:expr, $name:literal, $window:expr) => {
        (
            $p,
            Family {
                name: $name,
                source: concat!("model table: ", $name),
                window: $window,
            },
        )
    };
}

use Pattern::{Prefix, Token};

/// The table, most specific first.
const TABLE: &[(Pattern, Family)] = &[
    // Anthropic: every current Claude model takes 200,000 without the 1M beta.
    row!(Token("claude"), "Claude on the Anthropic API", 200_000),
    // OpenAI
    row!(Prefix("gpt-5"), "OpenAI GPT-5, its input limit", 272_000),
    row!(Prefix("codex-mini"), "OpenAI codex-mini", 200_000),
    row!(Prefix("gpt-4.1"), "OpenAI GPT-4.1", 1_047_576),
    row!(Prefix("gpt-4o"), "OpenAI GPT-4o", 128_000),
    row!(Prefix("chatgpt-4o"), "OpenAI GPT-4o", 128_000),
    row!(Prefix("gpt-4-turbo"), "OpenAI GPT-4 Turbo", 128_000),
    row!(Prefix("gpt-4-32k"), "OpenAI GPT-4 32k", 32_768),
    row!(Prefix("gpt-3.5-turbo"), "OpenAI GPT-3.5 Turbo", 16_385),
    row!(Prefix("gpt-oss"), "OpenAI gpt-oss", 131_072),
    row!(Prefix("o1-mini"), "OpenAI o1-mini", 128_000),
    row!(Token("o1"), "OpenAI o-series", 200_000),
    row!(Token("o3"), "OpenAI o-series", 200_000),
    row!(Token("o3-mini"), "OpenAI o-series", 200_000),
    row!(Token("o3-pro"), "OpenAI o-series", 200_000),
    row!(Token("o4-mini"), "OpenAI o-series", 200_000),
    // Google
    row!(Prefix("gemini-1.5-pro"), "Google Gemini 1.5 Pro", 2_097_152),
    row!(
        Prefix("gemini-1.5-flash"),
        "Google Gemini 1.5 Flash",
        1_048_576
    ),
    row!(Prefix("gemini-2"), "Google Gemini 2.x", 1_048_576),
    row!(Prefix("gemini-3"), "Google Gemini 3", 1_048_576),
    row!(Prefix("gemma-3"), "Google Gemma 3", 131_072),
    row!(Prefix("gemma3"), "Google Gemma 3", 131_072),
    row!(Prefix("gemma-2"), "Google Gemma 2", 8_192),
    row!(Prefix("gemma2"), "Google Gemma 2", 8_192),
    // Meta Llama 3.x (3.0 held 8,192; 3.1 and later 131,072)
    row!(Prefix("llama-3.1"), "Meta Llama 3.1 and later", 131_072),
    row!(Prefix("llama3.1"), "Meta Llama 3.1 and later", 131_072),
    row!(Prefix("llama-3.2"), "Meta Llama 3.1 and later", 131_072),
    row!(Prefix("llama3.2"), "Meta Llama 3.1 and later", 131_072),
    row!(Prefix("llama-3.3"), "Meta Llama 3.1 and later", 131_072),
    row!(Prefix("llama3.3"), "Meta Llama 3.1 and later", 131_072),
    row!(
        Prefix("meta-llama-3.1"),
        "Meta Llama 3.1 and later",
        131_072
    ),
    row!(Prefix("llama3-1"), "Meta Llama 3.1 and later", 131_072),
    row!(Prefix("llama3-2"), "Meta Llama 3.1 and later", 131_072),
    row!(Prefix("llama3-3"), "Meta Llama 3.1 and later", 131_072),
    row!(Prefix("llama-3-"), "Meta Llama 3", 8_192),
    row!(Prefix("llama3-"), "Meta Llama 3", 8_192),
    row!(Prefix("llama3:"), "Meta Llama 3", 8_192),
    row!(Prefix("meta-llama-3-"), "Meta Llama 3", 8_192),
    // Qwen (native windows; YaRN extensions are an opt-in of the server)
    row!(Prefix("qwen3-coder"), "Qwen3-Coder", 262_144),
    row!(Prefix("qwen3"), "Qwen3", 32_768),
    row!(Prefix("qwen2.5"), "Qwen2.5", 32_768),
    // DeepSeek
    row!(Prefix("deepseek-chat"), "DeepSeek V3 API", 131_072),
    row!(Prefix("deepseek-reasoner"), "DeepSeek R1 API", 131_072),
    row!(Prefix("deepseek-v3"), "DeepSeek V3", 131_072),
    row!(Prefix("deepseek-r1"), "DeepSeek R1", 131_072),
    row!(Prefix("deepseek-coder-v2"), "DeepSeek Coder V2", 131_072),
    // Mistral
    row!(Prefix("codestral"), "Mistral Codestral", 256_000),
    row!(Prefix("devstral"), "Mistral Devstral", 131_072),
    row!(Prefix("mistral-large"), "Mistral Large", 131_072),
    row!(Prefix("mistral-medium"), "Mistral Medium", 131_072),
    row!(Prefix("mistral-small"), "Mistral Small", 131_072),
    row!(Prefix("open-mistral-nemo"), "Mistral NeMo", 131_072),
    row!(Prefix("mistral-nemo"), "Mistral NeMo", 131_072),
    row!(Prefix("mixtral-8x22b"), "Mixtral 8x22B", 65_536),
    row!(Prefix("open-mixtral-8x22b"), "Mixtral 8x22B", 65_536),
    row!(Prefix("mixtral"), "Mixtral 8x7B", 32_768),
    row!(Prefix("open-mixtral"), "Mixtral 8x7B", 32_768),
    // Others often served through OpenAI-compatible endpoints
    row!(Prefix("kimi-k2"), "Moonshot Kimi K2", 131_072),
    row!(Prefix("grok-4"), "xAI Grok 4", 256_000),
    row!(Prefix("grok-code"), "xAI Grok Code", 256_000),
    row!(Prefix("grok-3"), "xAI Grok 3", 131_072),
    row!(Prefix("phi-4"), "Microsoft Phi-4", 16_384),
    row!(Prefix("phi4"), "Microsoft Phi-4", 16_384),
];

/// Routing prefixes some gateways put before the model id.
const ROUTES: &[&str] = &[
    "accounts/fireworks/models/",
    "models/",
    "anthropic/",
    "openai/",
    "google/",
    "meta-llama/",
    "mistralai/",
    "deepseek-ai/",
    "deepseek/",
    "qwen/",
    "moonshotai/",
    "x-ai/",
    "microsoft/",
];

/// The id in lower case, without routing prefixes and Bedrock's region and vendor parts.
fn normalise(model: &str) -> String {
    let mut id = model.trim().to_ascii_lowercase();
    loop {
        let before = id.len();
        for r in ROUTES {
            if let Some(rest) = id.strip_prefix(r) {
                id = rest.to_owned();
            }
        }
        // Bedrock: `us.anthropic.claude-…`, `anthropic.claude-…`, `meta.llama3-1-…`
        if let Some((head, rest)) = id.split_once('.')
            && matches!(
                head,
                "us" | "eu" | "apac" | "global" | "anthropic" | "meta" | "mistral"
            )
        {
            id = rest.to_owned();
        }
        if id.len() == before {
            return id;
        }
    }
}

fn is_boundary(c: Option<char>) -> bool {
    c.is_none_or(|c| !c.is_ascii_alphanumeric())
}

fn matches(p: Pattern, id: &str) -> bool {
    match p {
        Prefix(s) => id.starts_with(s),
        Token(s) => id.match_indices(s).any(|(i, _)| {
            is_boundary(id.get(..i).and_then(|h| h.chars().next_back()))
                && is_boundary(id.get(i + s.len()..).and_then(|t| t.chars().next()))
        }),
    }
}

/// The family of a well-known model, if the table knows it.
pub(crate) fn family(model: &str) -> Option<Family> {
    let id = normalise(model);
    TABLE
        .iter()
        .find(|(p, _)| matches(*p, &id))
        .map(|(_, f)| *f)
}

/// `model` without a `[1m]` marker (any case), and whether it had one. The marker is how a user asks
/// for the 1M window; the API only knows the plain id and the beta header.
pub(crate) fn strip_1m_marker(model: &str) -> (&str, bool) {
    let lower = model.to_ascii_lowercase();
    match lower.rfind(MARKER_1M) {
        Some(i) if i + MARKER_1M.len() == lower.len() => {
            (model.get(..i).unwrap_or(model).trim_end(), true)
        }
        _ => (model, false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(model: &str) -> Option<u64> {
        family(model).map(|f| f.window)
    }

    #[test]
    fn families_are_found_through_gateway_and_cloud_spellings() {
        let cases: &[(&str, Option<u64>)] = &[
            ("claude-sonnet-4-5", Some(200_000)),
            ("claude-sonnet-4-5-20250929", Some(200_000)),
            ("claude-opus-4-1", Some(200_000)),
            ("claude-3-5-haiku-latest", Some(200_000)),
            ("anthropic/claude-sonnet-4.5", Some(200_000)),
            (
                "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
                Some(200_000),
            ),
            ("anthropic.claude-3-5-sonnet-20240620-v1:0", Some(200_000)),
            ("claude-sonnet-4-5@20250929", Some(200_000)),
            ("gpt-5", Some(272_000)),
            ("gpt-5-codex", Some(272_000)),
            ("openai/gpt-5-mini", Some(272_000)),
            ("gpt-4.1-mini", Some(1_047_576)),
            ("gpt-4o-mini-2024-07-18", Some(128_000)),
            ("gpt-3.5-turbo", Some(16_385)),
            ("gpt-oss:20b", Some(131_072)),
            ("openai/gpt-oss-120b", Some(131_072)),
            ("o3", Some(200_000)),
            ("o4-mini-2025-04-16", Some(200_000)),
            ("o1-mini", Some(128_000)),
            ("gemini-2.5-pro", Some(1_048_576)),
            ("models/gemini-1.5-pro-002", Some(2_097_152)),
            ("google/gemma-3-27b-it", Some(131_072)),
            ("llama3.1:8b", Some(131_072)),
            ("meta-llama/Llama-3.3-70B-Instruct", Some(131_072)),
            ("llama3:8b", Some(8_192)),
            ("meta.llama3-1-70b-instruct-v1:0", Some(131_072)),
            ("meta.llama3-70b-instruct-v1:0", Some(8_192)),
            ("qwen2.5-coder:32b", Some(32_768)),
            ("Qwen/Qwen3-Coder-480B-A35B-Instruct", Some(262_144)),
            ("qwen3:30b-a3b", Some(32_768)),
            ("deepseek-chat", Some(131_072)),
            ("deepseek-ai/DeepSeek-R1", Some(131_072)),
            ("accounts/fireworks/models/deepseek-v3", Some(131_072)),
            ("codestral-latest", Some(256_000)),
            ("mistral-large-latest", Some(131_072)),
            ("mixtral-8x22b-instruct", Some(65_536)),
            ("grok-4", Some(256_000)),
            // Not in the table: the general rule for unknown models decides.
            ("my-finetune", None),
            ("flower-demo", None),
            ("falcon3", None),
            ("co3-model", None),
        ];
        for (model, want) in cases {
            assert_eq!(window(model), *want, "{model}");
        }
    }

    #[test]
    fn the_1m_marker_is_stripped_only_at_the_end() {
        assert_eq!(
            strip_1m_marker("claude-sonnet-4-5[1m]"),
            ("claude-sonnet-4-5", true)
        );
        assert_eq!(
            strip_1m_marker("claude-sonnet-4-5[1M]"),
            ("claude-sonnet-4-5", true)
        );
        assert_eq!(
            strip_1m_marker("claude-sonnet-4-5"),
            ("claude-sonnet-4-5", false)
        );
        assert_eq!(strip_1m_marker("a[1m]b"), ("a[1m]b", false));
        assert_eq!(strip_1m_marker("[1m]"), ("", true));
    }
}
