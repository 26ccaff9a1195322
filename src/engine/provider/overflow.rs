//! Recognising a context-window overflow by the shape of the error, and the limit it states.
//!
//! Providers word the same failure in dozens of ways (`prompt is too long: 205030 tokens > 200000
//! maximum`, `This model's maximum context length is 8192 tokens…`, `request (13392 tokens) exceeds
//! the available context size (8192 tokens)`, `Prompt contains 40000 tokens…, too large for model with
//! 32768 maximum context length`, `Cannot truncate prompt with n_keep (15028) >= n_ctx (7424)`…).
//! Rather than a list that misses the next server, an error is an overflow when
//!
//! - its code or type names the context as exceeded (`context_length_exceeded`,
//!   `exceed_context_size_error`, `ContextWindowExceededError`, …), or
//! - its message says the prompt / input / messages are too long or longer than something, or
//! - one sentence joins a context noun (context length / size / window / limit, model length, token
//!   limit, tokens, `n_ctx`, a maximum prompt / input / sequence length, `max_seq_len`, input
//!   length) with an overflow verb or comparison (exceeds, overflows, too large / many, greater /
//!   longer than, `>`, `must be <=`, `only supports up to`, `should be [1, N]`, `… but the request
//!   contains …`), or
//! - it uses one of the canonical phrases (`maximum context length`, `reduce the length of the
//!   messages`, …), or
//! - it has the shape of a size compared with a maximum: exactly two numbers, a maximum / limit /
//!   context / window word and what was measured (the prompt, input, request, messages, tokens),
//!   whatever the words between (`request of 140000 tokens is over the 128000 token limit`), or
//! - it has that shape without numbers: what was measured, then a verb of going past, then a
//!   maximum / limit word (`Prompt exceeds max length`, `the input is over the allowed limit`).
//!
//! Shapes that look alike and are not overflows: rate limits (`tokens per minute`, TPM / RPM,
//! quota, `rate limit`, `please wait before trying again`), a cap on the *output* alone
//! (`max_tokens: 100000 > 64000, which is the maximum allowed number of output tokens`, `the
//! maximum tokens you requested exceed the model limit`) and a length in characters, bytes or of
//! one string (a field, the body), never in tokens. A 413 about bytes is handled by the caller,
//! which knows the status.

use std::sync::OnceLock;

use regex::{Regex, RegexBuilder};

/// Lower case, backticks gone, whitespace runs as one space.
fn normalise(text: &str) -> String {
    text.to_lowercase()
        .replace('`', "")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

fn build(pattern: &str) -> Option<Regex> {
    RegexBuilder::new(pattern)
        .case_insensitive(true)
        .build()
        .ok()
}

/// The compiled patterns (once per process). A pattern that fails to compile is left out rather than
/// panicking; the table tests would show it.
struct Patterns {
    rate_limit: Option<Regex>,
    output_cap: Option<Regex>,
    input_subject: Option<Regex>,
    code: Option<Regex>,
    too_long: Option<Regex>,
    noun: Option<Regex>,
    verb: Option<Regex>,
    bytes: Option<Regex>,
    chars: Option<Regex>,
    tokens: Option<Regex>,
    limits: Vec<Regex>,
    number: Option<Regex>,
    maximum: Option<Regex>,
    measured: Option<Regex>,
    past_a_maximum: Option<Regex>,
}

/// Phrases that are overflow statements wherever they appear.
const CANONICAL: &[&str] = &[
    "maximum context length",
    "max context length",
    "context length exceeded",
    "context window exceeded",
    "context limit exceeded",
    "reduce the length of the messages",
    "too many total text bytes",
    "exceeds the context window",
];

fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| {
        const N: &str = r"(\d[\d,_]*)";
        Patterns {
            rate_limit: build(
                r"rate[\s_-]?limit|ratelimit|\bper\s+(?:second|sec|minute|min|hour|day)\b|\b(?:tokens|requests)\s+per\b|\b(?:i|o)?(?:tpm|rpm|tpd|rpd)\b|quota|too many requests|resource[\s_]exhausted|resource has been exhausted|throttl|\bplease\s+wait\b|\bwait\s+before\s+(?:trying|retrying|sending)\b|\btry\s+again\s+(?:later|in\s+\d)",
            ),
            output_cap: build(
                r"\bmax_(?:completion_|new_|output_)?tokens\b|\bmaxoutputtokens\b|\b(?:output|completion) tokens\b|\bmax(?:imum)?\s+tokens\b",
            ),
            input_subject: build(
                r"\b(?:input|inputs|prompt|messages|conversation|context length|request has|requested \d)",
            ),
            code: build(
                r"\b\w*context\w*(?:exceed|overflow)\w*\b|\b\w*(?:exceed|overflow)\w*context\w*\b|\b(?:prompt|input)_too_long\b",
            ),
            // The subject is too long or too large, directly (a parenthesis or up to three words
            // between).
            too_long: build(
                r"\b(?:prompt|input|inputs|messages?|conversation|context)\b(?:\s*\([^)]*\))?(?:\s+[\w'-]+){0,3}?\s+(?:is\s+|are\s+|was\s+)?(?:too\s+long|longer\s+than|too\s+large|larger\s+than)\b",
            ),
            noun: build(
                r"\bcontext(?:\s+(?:length|size|window|limit))?\b|\bmax(?:imum)?\s+(?:model\s+length|context)|\bmodel(?:'s)?\s+length\b|\btoken\s+limit\b|\bn_ctx\w*|\btokens?\b|\bmaximum\s+number\s+of\s+tokens\b|\bmax(?:imum)?\s+(?:allowed\s+|supported\s+)?(?:prompt|input|sequence|seq|request)\s+(?:length|len|tokens)\b|\bmax_(?:seq|model|input|prompt|position)_\w+|\b(?:input|prompt)\s+length\b",
            ),
            verb: build(
                r"\bexceed(?:s|ed|ing)?\b|\boverflow(?:s|ed|ing)?\b|\btoo\s+(?:long|large|big|many)\b|\b(?:longer|larger|greater|more)\s+than\b|>=?|\bmust\s+be\s+<=?|\bmust\s+(?:be|have)\s+less\s+than\b|\b(?:is|of)\s+only\b|\bbut\s+(?:the\s+|your\s+|this\s+)?(?:request|prompt|input|messages?|conversation)\s+(?:contains|has|had|is|was|includes)\b|\bonly\s+supports?\b|\bsupports?\s+(?:only\s+)?(?:up\s+to|at\s+most)\b|\bshould\s+be\s+(?:in\s+)?\[",
            ),
            bytes: build(
                r"\bbytes?\b|\bpayload\b|\bentity\b|\b\d+\s*(?:kb|mb|gb|kib|mib)\b|\bmaximum size\b|\bbody\b",
            ),
            chars: build(r"\b(?:characters?|chars|bytes?|string)\b"),
            tokens: build(r"\btokens?\b|\bcontext\b|\bn_ctx"),
            limits: [
                // llama.cpp / LM Studio: `n_ctx (7424)`, `n_ctx = 8192`, `"n_ctx":8192`, `n_ctx_slot = 131072`
                format!(r#"\bn_ctx\w*"?\s*(?:[:=]\s*|\(\s*){N}"#),
                // `205030 tokens > 200000 maximum`, `188240 + 21333 > 200000`
                format!(r">\s*=?\s*{N}"),
                // Mistral: `too large for model with 32768 maximum context length`
                format!(r"{N}\s*(?:tokens?\s+)?maximum\b"),
                // OpenAI and friends, vLLM, Ollama: `maximum context length is 8192`, `maximum model
                // length of 32768`, `model maximum context length: 262144`
                format!(r"\bmax(?:imum)?\s+(?:model\s+)?(?:context\s+)?length\s*(?:is|of|:)?\s*{N}"),
                // Gemini: `maximum number of tokens allowed (1048575)`
                format!(r"\btokens allowed\s*\(?\s*{N}"),
                // `context length of only 4096`, `available context size (8192 tokens)`,
                // `context window of 128000`, `the model's context length (4096 tokens)`
                format!(
                    r"\bcontext(?:\s+(?:length|size|window))?\s*(?:is\s+|of\s+)?(?:only\s+)?\(?\s*{N}"
                ),
                // `limit is 40000`, `configured limit of 272000`, `model token limit: 262144`,
                // `exceeds limit of 8192`
                format!(r"\blimit\s*(?:is\s+|of\s+|:\s*)?{N}"),
                // TGI: `must be <= 2048`, `must have less than 1024 tokens`
                format!(r"\bmust\s+be\s+<=?\s*{N}"),
                format!(r"\bless\s+than\s+(?:or\s+equal\s+to\s+)?{N}"),
                // xAI, TensorRT-LLM, DeepInfra: `maximum prompt length is 131072`, `maximum
                // sequence length (2048)`, `maximum input length 32767`
                format!(
                    r"\bmax(?:imum)?\s+(?:allowed\s+|supported\s+)?(?:prompt|input|sequence|seq|request)\s+(?:length|len|tokens)\s*(?:is\s+|of\s+|:\s*)?\(?\s*{N}"
                ),
                // `must be less than max_seq_len (32768)`, `exceeded max_prompt_tokens (202752)`
                format!(r"\bmax_(?:seq|model|input|prompt)_\w*\s*(?:[:=]\s*|\(\s*|of\s+)?{N}"),
                // Vertex AI: `but model only supports up to 1048576`; `supports at most 1048576`
                format!(r"\bsupports?\s+(?:only\s+)?(?:up\s+to|at\s+most)\s+{N}"),
                // Azure AI Foundry, GitHub Models: `Request body too large for gpt-5-mini model.
                // Max size: 4000 tokens.`
                format!(r"\bmax(?:imum)?\s+size\s*(?:is\s+|of\s+|:\s*)?{N}\s*tokens\b"),
                // DashScope (Qwen): `Range of input length should be [1, 983616]`
                r"\blength\s+should\s+be\s+(?:in\s+)?\[\s*\d+\s*,\s*(\d[\d_]*)\s*\]".to_string(),
            ]
            .iter()
            .filter_map(|p| build(p))
            .collect(),
            number: build(r"\d[\d,_]*"),
            maximum: build(
                r"\b(?:max(?:imum)?|limit|limits|allowed|context|window|capacity|n_ctx\w*)\b",
            ),
            measured: build(r"\b(?:prompt|input|inputs|request|messages?|conversation|tokens?)\b"),
            // The subject, a verb of going past, a maximum: in one clause, in that order.
            past_a_maximum: build(
                r"\b(?:prompts?|inputs?|messages?|conversation|context|history|request)\b[^.;!?]{0,40}?\b(?:exceed(?:s|ed|ing)?|surpass(?:es|ed|ing)?|(?:is|are|goes|went)\s+(?:over|above|beyond)|over|above|beyond)\b[^.;!?]{0,30}?\b(?:max(?:imum)?|limit|allowed|permitted)\b",
            ),
        }
    })
}

fn hit(re: &Option<Regex>, text: &str) -> bool {
    re.as_ref().is_some_and(|r| r.is_match(text))
}

/// Whether a (normalised) text is about a rate limit or quota.
fn is_rate_limit(lower: &str) -> bool {
    hit(&patterns().rate_limit, lower)
}

/// Whether a (normalised) text complains about the output cap alone, not the input.
fn is_output_cap_only(lower: &str) -> bool {
    let p = patterns();
    hit(&p.output_cap, lower) && !hit(&p.input_subject, lower)
}

/// A sentence joins a context noun with an overflow verb.
fn noun_meets_verb(lower: &str) -> bool {
    let p = patterns();
    let (Some(noun), Some(verb)) = (p.noun.as_ref(), p.verb.as_ref()) else {
        return false;
    };
    // `. ` ends a sentence; a decimal point does not. A sentence that measures in characters or
    // bytes and never in tokens is about one string or the body, not the context.
    lower
        .split(". ")
        .flat_map(|s| s.split("; "))
        .filter(|s| !hit(&p.chars, s) || hit(&p.tokens, s))
        .any(|s| noun.is_match(s) && verb.is_match(s))
}

/// The numbers of a (normalised) text that can be sizes (100 and more).
fn sizes(lower: &str) -> Vec<u64> {
    patterns().number.as_ref().map_or_else(Vec::new, |re| {
        re.find_iter(lower)
            .filter_map(|m| parse_number(m.as_str()))
            .filter(|n| *n >= 100)
            .collect()
    })
}

/// A size compared with a maximum, whatever the words: exactly two sizes, a maximum word and
/// what was measured (rate limits and output caps are excluded before).
fn two_sizes_against_a_maximum(lower: &str) -> bool {
    let p = patterns();
    sizes(lower).len() == 2 && hit(&p.maximum, lower) && hit(&p.measured, lower)
}

/// The verdict for one normalised text (rate limits already excluded).
fn text_says_overflow(lower: &str) -> bool {
    let p = patterns();
    if hit(&p.code, lower) {
        return true;
    }
    if is_output_cap_only(lower) {
        return false;
    }
    // A length in characters or bytes (and never in tokens) is one string or the body.
    let measures_text = hit(&p.chars, lower) && !hit(&p.tokens, lower);
    CANONICAL.iter().any(|c| lower.contains(c))
        || (hit(&p.too_long, lower) && !measures_text)
        || noun_meets_verb(lower)
        || (two_sizes_against_a_maximum(lower) && !measures_text)
        || (hit(&p.past_a_maximum, lower) && !measures_text && !hit(&p.bytes, lower))
}

/// Whether any of `texts` (status body, message, error type or code) says the context window overflowed.
/// Case-insensitive; a text about a rate limit or quota anywhere makes it not an overflow.
pub fn is_overflow(texts: &[&str]) -> bool {
    let lowered: Vec<String> = texts.iter().map(|t| normalise(t)).collect();
    if lowered.iter().any(|t| is_rate_limit(t)) {
        return false;
    }
    lowered.iter().any(|t| text_says_overflow(t))
}

/// Whether an error speaks of bytes (payload, entity, MB) and never of tokens or the context: the
/// shape of a 413 that a shorter context would not fix.
pub(crate) fn is_about_bytes_only(texts: &[&str]) -> bool {
    let p = patterns();
    let lowered: Vec<String> = texts.iter().map(|t| normalise(t)).collect();
    lowered.iter().any(|t| hit(&p.bytes, t)) && !lowered.iter().any(|t| hit(&p.tokens, t))
}

fn parse_number(digits: &str) -> Option<u64> {
    let d: String = digits.chars().filter(char::is_ascii_digit).collect();
    d.parse::<u64>().ok().filter(|n| *n > 0)
}

/// The context window an overflow message states, e.g. `200000` from `… 205030 tokens > 200000
/// maximum`: the number a limit word marks, else the smaller of exactly two numbers.
pub fn overflow_limit(text: &str) -> Option<u64> {
    let p = patterns();
    let lower = normalise(text);
    let marked = p.limits.iter().find_map(|re| {
        let caps = re.captures(&lower)?;
        parse_number(caps.get(1)?.as_str())
    });
    if marked.is_some() {
        return marked;
    }
    match sizes(&lower).as_slice() {
        [a, b] => Some((*a).min(*b)),
        _ => None,
    }
}

#[cfg(test)]
#[path = "overflow_tests.rs"]
mod tests;
