//! The overflow classifier against the wordings real providers and servers send, each in the body
//! shape that service uses, through the same path a live error takes (`classify` → kind, then
//! `overflow_limit` on the message). Sources are the public issue trackers and docs of each service
//! (the `search` tool's issues corpus); numbers are as reported there.

use super::*;
use crate::engine::provider::ErrorKind;
use crate::engine::provider::error::classify;

fn anthropic(ty: &str, msg: &str) -> String {
    serde_json::json!({"type": "error", "error": {"type": ty, "message": msg}}).to_string()
}

fn openai(msg: &str, ty: &str, code: Option<&str>) -> String {
    serde_json::json!({"error": {"message": msg, "type": ty, "param": "messages", "code": code}})
        .to_string()
}

fn google(code: u16, msg: &str, status: &str) -> String {
    serde_json::json!([{"error": {"code": code, "message": msg, "status": status}}]).to_string()
}

/// vLLM, sglang, Mistral: the message at the top level.
fn top(msg: &str, ty: &str) -> String {
    serde_json::json!({"object": "error", "message": msg, "type": ty, "param": null, "code": 400})
        .to_string()
}

/// Ollama, LM Studio, TGI: `{"error": "<text>"}`.
fn plain(msg: &str) -> String {
    serde_json::json!({"error": msg}).to_string()
}

/// One row: who says it, the status, the body, and the expected verdict and window.
struct Row {
    source: &'static str,
    status: u16,
    body: String,
    overflow: bool,
    limit: Option<u64>,
}

fn row(source: &'static str, status: u16, body: String, limit: Option<u64>) -> Row {
    Row {
        source,
        status,
        body,
        overflow: true,
        limit,
    }
}

fn not(source: &'static str, status: u16, body: String) -> Row {
    Row {
        source,
        status,
        body,
        overflow: false,
        limit: None,
    }
}

fn table() -> Vec<Row> {
    vec![
        // Anthropic (and Vertex AI / Bedrock, which pass its wording on)
        row("anthropic", 400, anthropic("invalid_request_error", "prompt is too long: 205030 tokens > 200000 maximum"), Some(200_000)),
        row("anthropic", 400, anthropic("invalid_request_error", "input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000, decrease input length or `max_tokens` and try again"), Some(200_000)),
        row("anthropic 413", 413, anthropic("invalid_request_error", "Request size exceeds model context window"), None),
        row("vertex anthropic", 400, anthropic("invalid_request_error", "prompt is too long: 209353 tokens > 199999 maximum"), Some(199_999)),
        row("bedrock converse", 400, serde_json::json!({"message": "The model returned the following errors: prompt is too long: 200049 tokens > 200000 maximum"}).to_string(), Some(200_000)),
        row("bedrock", 400, serde_json::json!({"message": "Input is too long for requested model."}).to_string(), None),
        // OpenAI Chat, Azure OpenAI, DeepSeek, Groq, Cerebras, OpenRouter
        row("openai chat", 400, openai("This model's maximum context length is 128000 tokens. However, your messages resulted in 204308 tokens. Please reduce the length of the messages.", "invalid_request_error", Some("context_length_exceeded")), Some(128_000)),
        row("openai chat (completion)", 400, openai("This model's maximum context length is 8192 tokens. However, you requested 8554 tokens (7554 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.", "invalid_request_error", Some("context_length_exceeded")), Some(8192)),
        row("openai responses", 400, openai("Your input exceeds the context window of this model. Please adjust your input and try again.", "invalid_request_error", Some("context_length_exceeded")), None),
        row("openai gpt-5", 400, openai("Input tokens exceed the configured limit of 272000 tokens.", "invalid_request_error", None), Some(272_000)),
        row("azure openai", 400, openai("This model's maximum context length is 16385 tokens. However, your messages resulted in 17112 tokens. Please reduce the length of the messages.", "invalid_request_error", Some("context_length_exceeded")), Some(16_385)),
        row("deepseek", 400, openai("This model's maximum context length is 131072 tokens. However, you requested 131134 tokens (122942 in the messages, 8192 in the completion). Please reduce the length of the messages or completion.", "invalid_request_error", Some("invalid_request_error")), Some(131_072)),
        row("groq (code only)", 400, openai("Please reduce the length of the messages or completion.", "invalid_request_error", Some("context_length_exceeded")), None),
        row("cerebras", 400, serde_json::json!({"message": "Please reduce the length of the messages or completion. Current length is 42328 while limit is 40000", "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}).to_string(), Some(40_000)),
        row("openrouter", 400, serde_json::json!({"error": {"message": "This endpoint's maximum context length is 131072 tokens. However, you requested about 138956 tokens (7884 of text input, 131072 in the output). Please reduce the length of either one, or use the \"middle-out\" transform to compress your prompt automatically.", "code": 400}}).to_string(), Some(131_072)),
        row("kimi", 400, openai("Your request exceeded model token limit: 262144 (requested: 300000)", "invalid_request_error", None), Some(262_144)),
        row("perplexity", 400, openai("The total length of all messages is too long.", "invalid_message", None), None),
        // Google Gemini and Vertex AI
        row("gemini", 400, google(400, "The input token count (1054016) exceeds the maximum number of tokens allowed (1048576).", "INVALID_ARGUMENT"), Some(1_048_576)),
        row("vertex gemini", 400, serde_json::json!({"error": {"code": 400, "message": "The input token count (134123) exceeds the maximum number of tokens allowed (131072).", "status": "INVALID_ARGUMENT"}}).to_string(), Some(131_072)),
        // Mistral
        row("mistral", 400, top("Prompt contains 321774 tokens and 0 draft tokens, too large for model with 262144 maximum context length", "invalid_request_error"), Some(262_144)),
        // vLLM, old and new, and sglang
        row("vllm v0", 400, top("This model's maximum context length is 16384 tokens. However, you requested 19591 tokens (9591 in the messages, 10000 in the completion). Please reduce the length of the messages or completion.", "BadRequestError"), Some(16_384)),
        row("vllm v1 decoder", 400, top("The decoder prompt (length 17772) is longer than the maximum model length of 16384. Make sure that `max_model_len` is no smaller than the number of text tokens.", "BadRequestError"), Some(16_384)),
        row("vllm v1 prompt", 400, top("Prompt length of 5016 is longer than the maximum model length of 4096.", "BadRequestError"), Some(4096)),
        row("vllm 0.15", 400, openai("This model's maximum context length is 2048 tokens. However, your request has 8 input tokens plus 2045 'max_tokens'. Please reduce one or the other. (parameter=input_tokens, max_tokens, value=(8, 2045))", "BadRequestError", None), Some(2048)),
        row("vllm output+input", 400, openai("This model's maximum context length is 262144 tokens. However, you requested 128000 output tokens and your prompt contains at least 134145 input tokens, for a total of at least 262145 tokens. Please reduce the length of the input prompt or the number of requested output tokens. (parameter=input_tokens, value=134145)", "BadRequestError", None), Some(262_144)),
        row("sglang", 400, top("The input (8231 tokens) is longer than the model's context length (8192 tokens).", "BadRequestError"), Some(8192)),
        // llama.cpp server (and llama-cpp-python)
        row("llama.cpp typed", 400, serde_json::json!({"error": {"code": 400, "message": "the request exceeds the available context size. try increasing the context size or enable context shift", "type": "exceed_context_size_error", "n_prompt_tokens": 14429, "n_ctx": 8192}}).to_string(), Some(8192)),
        row("llama.cpp counts", 400, serde_json::json!({"error": {"code": 400, "message": "request (4390 tokens) exceeds the available context size (4096 tokens), try increasing it", "type": "exceed_context_size_error", "n_prompt_tokens": 4390, "n_ctx": 4096}}).to_string(), Some(4096)),
        row("llama.cpp old 500", 500, serde_json::json!({"error": {"code": 500, "message": "Context size has been exceeded.", "type": "server_error"}}).to_string(), None),
        row("llama-cpp-python", 400, plain("Requested tokens (2285) exceed context window of 2048"), Some(2048)),
        // Ollama
        row("ollama", 400, plain("The prompt is too long: 450028, model maximum context length: 262144"), Some(262_144)),
        row("ollama old", 400, plain("prompt too long; exceeded max context length by 4 tokens"), None),
        row("ollama embed", 400, plain("the input length exceeds the context length"), None),
        // LM Studio
        row("lm studio", 400, plain("Trying to keep the first 15857 tokens when context the overflows. However, the model is loaded with context length of only 4096 tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input"), Some(4096)),
        row("lm studio n_keep", 400, plain("Cannot truncate prompt with n_keep (15028) >= n_ctx (7424)"), Some(7424)),
        // TGI and Together (which runs it)
        row("tgi", 422, serde_json::json!({"error": "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 2048. Given: 1244 `inputs` tokens and 1000 `max_new_tokens`", "error_type": "validation"}).to_string(), Some(2048)),
        row("tgi input", 422, serde_json::json!({"error": "Input validation error: `inputs` must have less than 1024 tokens. Given: 1168", "error_type": "validation"}).to_string(), Some(1024)),
        row("together", 400, openai("Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4097. Given: 80125 `inputs` tokens and 4096 `max_new_tokens`", "invalid_request_error", None), Some(4097)),
        // A maximum prompt / input / sequence length in words (xAI, TensorRT-LLM, DeepInfra)
        row("xai", 400, serde_json::json!({"code": "Client specified an invalid argument", "error": "This model's maximum prompt length is 131072 but the request contains 136973 tokens."}).to_string(), Some(131_072)),
        row("tensorrt-llm (triton)", 400, plain("Cannot process new request: Prompt length (5056) exceeds maximum sequence length (2048)"), Some(2048)),
        row("deepinfra via openrouter", 400, serde_json::json!({"error": {"message": "Provider returned error", "code": 400, "metadata": {"raw": "Requested input length 39818 exceeds maximum input length 32767 (via DeepInfra)", "provider_name": "DeepInfra"}}}).to_string(), Some(32_767)),
        // Vertex AI (Gemini), DashScope (Qwen), GLM behind an OpenAI-compatible gateway, an
        // unnamed gateway's `max_seq_len`
        row("vertex gemini", 400, google(400, "Unable to submit request because the input token count is 1251952 but model only supports up to 1048576. Reduce the input token count and try again. You can also use the CountTokens API to calculate prompt token count and billable characters.", "INVALID_ARGUMENT"), Some(1_048_576)),
        row("gemini (no count)", 400, google(400, "The input token count exceeds the maximum number of tokens allowed (1048576).", "INVALID_ARGUMENT"), Some(1_048_576)),
        row("dashscope qwen", 400, serde_json::json!({"error": {"code": "invalid_parameter_error", "message": "<400> InternalError.Algo.InvalidParameter: Range of input length should be [1, 983616]", "param": null, "type": "invalid_request_error"}}).to_string(), Some(983_616)),
        row("glm gateway", 400, serde_json::json!({"code": 20015, "message": "number of input tokens (204703) has exceeded max_prompt_tokens (202752) limit.", "data": null}).to_string(), Some(202_752)),
        row("max_seq_len gateway", 400, openai("length of prompt_tokens (163280) must be less than max_seq_len (32768).", "invalid_request_error", None), Some(32_768)),
        // More servers and gateways: sglang and vLLM in other versions, Together, NVIDIA NIM,
        // Bedrock-hosted OpenAI-style models, GitHub Copilot, Cohere
        row("sglang requested", 400, top("Requested token count exceeds the model's maximum context length of 4096 tokens. You requested a total of 4320 tokens: 1320 tokens from the input messages and 3000 tokens for the completion. Please reduce the number of tokens in the input messages or the completion to fit within the limit.", "BadRequestError"), Some(4096)),
        row("vllm multimodal", 400, top("The prompt (total length 25938) is too long to fit into the model (context length 4096). Make sure that `max_model_len` is no smaller than the number of text tokens plus multimodal tokens.", "BadRequestError"), Some(4096)),
        row("vllm scheduler", 400, top("Input prompt (32889 tokens) is too long and exceeds limit of 2048", "BadRequestError"), Some(2048)),
        row("vllm max_tokens vs input", 400, openai("'max_tokens' or 'max_completion_tokens' is too large: 64000. This model's maximum context length is 64001 tokens and your request has 24235 input tokens (64000 > 64001 - 24235). None", "BadRequestError", None), Some(64_001)),
        row("together", 400, openai("The input (516368 tokens) is longer than the model's context length (262144 tokens).", "invalid_request_error", None), Some(262_144)),
        row("nvidia nim", 400, openai("You passed 170753 input tokens and requested 32000 output tokens. However, the model's context length is only 202752 tokens, resulting in a maximum input length of 170752 tokens. Please reduce the length of the input prompt. (parameter=input_tokens, value=170753)", "BadRequestError", None), Some(202_752)),
        row("bedrock mantle", 400, serde_json::json!({"message": "Mantle streaming error: This model's maximum context length is 202752 tokens. However, you requested 65536 output tokens and your prompt contains at least 137217 input tokens, for a total of at least 202753 tokens. Please reduce the length of the input prompt or the number of requested output tokens. (parameter=input_tokens, value=137217)"}).to_string(), Some(202_752)),
        row("github copilot", 400, openai("prompt token count of 93854 exceeds the limit of 90000", "", None), Some(90_000)),
        row("cohere", 400, serde_json::json!({"message": "too many tokens: total number of tokens (prompt and prediction) cannot exceed 2048 - received 6354. Try using a shorter prompt or a smaller max_tokens value."}).to_string(), Some(2048)),
        row("openai (old, exceeded)", 400, openai("This model's maximum context length has been exceeded. Please reduce the length of the messages.", "invalid_request_error", None), None),
        // Azure AI Foundry and GitHub Models: a request too large, counted in tokens
        row("azure ai foundry 413", 413, serde_json::json!({"error": {"code": "tokens_limit_reached", "message": "Request body too large for gpt-5-mini model. Max size: 4000 tokens.", "details": "Request body too large for gpt-5-mini model. Max size: 4000 tokens."}}).to_string(), Some(4000)),
        // LiteLLM proxy, MiniMax, z.ai: only a class name or a code
        row("litellm", 400, openai("litellm.ContextWindowExceededError: litellm.BadRequestError: ContextWindowExceededError: OpenAIException - Input tokens exceed the configured limit of 272000 tokens.", "None", Some("400")), Some(272_000)),
        row("minimax", 400, openai("invalid params, context window exceeds limit", "invalid_request_error", None), None),
        row("z.ai", 400, openai("Request failed", "invalid_request_error", Some("model_context_window_exceeded")), None),
        // Not overflows: rate limits and quotas (even when they count tokens against a limit) …
        not("openai tpm 429", 429, openai("Request too large for gpt-4o in organization org-VDAWofJASuLH0vVz8o9tiQZr on tokens per min (TPM): Limit 30000, Requested 30601. The input or output tokens must be reduced in order to run successfully.", "tokens", Some("rate_limit_exceeded"))),
        not("groq tpm 413", 413, openai("Request too large for model `llama-3.3-70b-versatile` in organization `org_01jp8byqwpfx9sp1m0dbhb6a1e` service tier `on_demand` on tokens per minute (TPM): Limit 6000, Requested 14810, please reduce your message size and try again.", "tokens", Some("rate_limit_exceeded"))),
        not("groq tpm 429", 429, openai("Rate limit reached for model `llama-3.1-8b-instant` in organization `org_01j5b4pz9jff492fq686vypsx6` service tier `on_demand` on tokens per minute (TPM): Limit 6000, Used 5034, Requested 1443. Please try again in 4.77s.", "tokens", Some("rate_limit_exceeded"))),
        not("anthropic itpm 429", 429, anthropic("rate_limit_error", "This request would exceed the rate limit for your organization of 40,000 input tokens per minute. For details, refer to: https://docs.anthropic.com/en/api/rate-limits. Please reduce the prompt length or the maximum tokens requested, or try again later.")),
        not("anthropic itpm proxied as 400", 400, openai("This request would exceed the rate limit for your organization of 20,000 input tokens per minute. Please reduce the prompt length or the maximum tokens requested, or try again later.", "invalid_request_error", Some("rate_limit_error"))),
        not("azure 429", 429, serde_json::json!({"error": {"code": "429", "message": "Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-05-01-preview have exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry after 86400 seconds."}}).to_string()),
        not("gemini quota 429", 429, google(429, "You exceeded your current quota, please check your plan and billing details. * Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_input_token_count, limit: 250000, model: gemini-2.5-flash", "RESOURCE_EXHAUSTED")),
        not("bedrock throttle 429", 429, serde_json::json!({"message": "Too many tokens, please wait before trying again."}).to_string()),
        not("bedrock throttle relayed as 400", 400, serde_json::json!({"message": "Too many tokens, please wait before trying again."}).to_string()),
        // … a 413 about bytes …
        not("anthropic 413 bytes", 413, anthropic("request_too_large", "Request exceeds the maximum size")),
        not("nginx 413", 413, "<html>\r\n<head><title>413 Request Entity Too Large</title></head>\r\n<body>\r\n<center><h1>413 Request Entity Too Large</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n".to_owned()),
        not("bedrock body size", 400, serde_json::json!({"message": "1 validation error detected: Value at 'body' failed to satisfy constraint: Member must have length less than or equal to 25000000"}).to_string()),
        // … and a cap on the output alone, or one long string.
        not("anthropic max_tokens", 400, anthropic("invalid_request_error", "max_tokens: 128000 > 64000, which is the maximum allowed number of output tokens for claude-sonnet-4-20250514")),
        not("groq max_tokens", 400, openai("max_tokens must be less than or equal to 16384, the maximum value for max_tokens is less than the context_window for this model", "invalid_request_error", None)),
        not("openai max_tokens too large", 400, serde_json::json!({"error": {"message": "max_tokens is too large: 8192. This model supports at most 4096 completion tokens, whereas you provided 8192.", "type": "invalid_request_error", "param": "max_tokens", "code": null}}).to_string()),
        not("deepseek max_tokens range", 400, openai("Invalid max_tokens value, the valid range of max_tokens is [1, 8192]", "invalid_request_error", Some("invalid_request_error"))),
        not("dashscope max_tokens range", 400, serde_json::json!({"error": {"code": "invalid_parameter_error", "message": "<400> InternalError.Algo.InvalidParameter: Range of max_tokens should be [1, 8192]", "type": "invalid_request_error"}}).to_string()),
        not("bedrock converse maximum tokens", 400, serde_json::json!({"message": "The maximum tokens you requested exceeds the model limit of 32768"}).to_string()),
        not("bedrock maximum tokens", 400, serde_json::json!({"message": "The maximum tokens you requested exceed the model limit of 4096. Try again with a maximum tokens value lower than 4096."}).to_string()),
        not("doubao max_tokens", 400, serde_json::json!({"error": {"code": "InvalidParameter", "message": "The parameter max_tokens specified in the request is not valid: integer above maximum value, expected a value <= 32768, but got 64000 instead.", "param": "max_tokens", "type": "BadRequest"}}).to_string()),
        not("gemini body size 413", 413, serde_json::json!({"error": {"message": "Maximum request body size 1048576 exceeded, actual body size 1056562", "code": 413, "status": "Request Entity Too Large"}}).to_string()),
        not("openai string too long", 400, openai("Invalid 'messages[1].content': string too long. Expected a string with maximum length 10485760, but got a string with length 15000000 instead.", "invalid_request_error", Some("string_above_max_length"))),
    ]
}

#[test]
fn real_wordings_get_their_verdict_and_their_window() {
    let rows = table();
    let overflows = rows.iter().filter(|r| r.overflow).count();
    assert!(overflows >= 30, "{overflows} overflow wordings");
    assert!(rows.len() - overflows >= 6);
    let mut wrong = Vec::new();
    for r in &rows {
        let e = classify(r.status, &r.body, None);
        let overflow = e.kind == ErrorKind::ContextWindowExceeded;
        let limit = overflow.then(|| overflow_limit(&e.message)).flatten();
        if overflow != r.overflow || limit != r.limit {
            wrong.push(format!(
                "{} ({}): got {:?} limit {limit:?}, want overflow={} limit {:?}: {}",
                r.source, r.status, e.kind, r.overflow, r.limit, e.message
            ));
        }
        if overflow {
            assert!(!e.retryable, "{}", r.source);
        }
    }
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
}

#[test]
fn rate_limits_stay_retryable_rate_limits() {
    for r in table().iter().filter(|r| !r.overflow && r.status == 429) {
        let e = classify(r.status, &r.body, None);
        assert_eq!(e.kind, ErrorKind::RateLimited, "{}", r.source);
    }
    // Groq sends its tokens-per-minute limit as a 413: still a rate limit, by its code.
    let groq = table().into_iter().find(|r| r.source == "groq tpm 413");
    let e = groq.map(|r| classify(r.status, &r.body, None).kind);
    assert_eq!(e, Some(ErrorKind::RateLimited));
}

#[test]
fn the_shape_generalises_to_wordings_not_in_the_table() {
    // Made-up but plausible servers: the rules, not a list, recognise them.
    for text in [
        "Conversation is longer than the 32k context of this deployment",
        "error: prompt tokens (40960) exceed n_ctx_train (32768)",
        "Input exceeds the model's maximum context (8192 tokens)",
        "context_overflow: shorten the history",
        "Your request exceeded the maximum input length.",
        "This model supports at most 1048576 input tokens.",
        "prompt (9000 tokens) is greater than the max sequence length (8192)",
        "The input is too large for this model.",
    ] {
        assert!(is_overflow(&[text]), "{text}");
    }
    for text in [
        "Rate limit exceeded: 40000 input tokens per minute",
        "quota exceeded for input tokens",
        "max_output_tokens must be <= 8192",
        "Invalid 'tools[0].name': string too long",
        "Input exceeds maximum input length of 1048576 characters.",
        "The input is too large: 20000000 characters.",
        "model not found",
    ] {
        assert!(!is_overflow(&[text]), "{text}");
    }
}

#[test]
fn limits_need_a_marker_or_exactly_two_numbers() {
    assert_eq!(
        overflow_limit("prompt tokens (40960) exceed n_ctx_train (32768)"),
        Some(32_768)
    );
    assert_eq!(
        overflow_limit("prompt too long; exceeded max context length by 4 tokens"),
        None
    );
    assert_eq!(overflow_limit("1200 1300 1400 tokens"), None);
    assert_eq!(
        overflow_limit("131,072 tokens allowed (131_072)"),
        Some(131_072)
    );
}

#[test]
fn two_numbers_compared_with_a_maximum_are_an_overflow_and_the_maximum_is_the_window() {
    // The prompt's size against a maximum, in words no row of the table uses: recognised by
    // their shape (two numbers, a maximum / limit / context word), the window read from them.
    for (text, limit) in [
        (
            "This model's maximum context length is 16385 tokens. However, your messages \
             resulted in 17000 tokens. Please reduce the length of the messages.",
            16_385,
        ),
        (
            "prompt is too long: 205030 tokens > 200000 maximum",
            200_000,
        ),
        (
            "input length 40000 exceeds maximum allowed length 32768",
            32_768,
        ),
        (
            "the number of tokens in the prompt (9000) exceeds the limit (8192)",
            8_192,
        ),
        (
            "Prompt has 70000 tokens, which is more than the model's limit of 65536",
            65_536,
        ),
        (
            "request of 140000 tokens is over the 128000 token limit",
            128_000,
        ),
        (
            "Token count 33000 is larger than the maximum sequence length 32768",
            32_768,
        ),
    ] {
        assert!(is_overflow(&[text]), "{text}");
        assert_eq!(overflow_limit(text), Some(limit), "{text}");
    }
    // Near misses: two numbers and a limit, but a rate, or the output alone.
    for text in [
        "Rate limit reached for gpt-4o on tokens per min (TPM): Limit 30000, Used 29000, \
         Requested 2000.",
        "Limit 30000 tokens, requested 32000 tokens; please wait before trying again.",
        "max_tokens is too large: 8192. This model supports at most 4096 completion tokens, \
         whereas you provided 8192.",
        "max_tokens (64000) exceeds the maximum allowed (32768) for this model",
        "The maximum tokens you requested (9000) exceeds the model limit of 4096",
        "Input length 2000000 exceeds maximum allowed length 1048576 characters",
    ] {
        assert!(!is_overflow(&[text]), "{text}");
    }
}

#[test]
fn wordings_without_numbers_are_overflows_by_their_shape() {
    // What was measured, a verb of going past, a maximum: no number needed.
    for text in [
        "Prompt exceeds max length",
        "The input exceeds the maximum allowed length.",
        "messages exceed the limit of this model",
        "Request is over the allowed limit for this model",
        "Your prompt goes beyond the maximum the model accepts",
        "conversation history surpasses the permitted maximum",
    ] {
        assert!(is_overflow(&[text]), "{text}");
    }
    // A rate limit, the output, one field, the body or bytes: never.
    for text in [
        "Rate limit exceeded",
        "Requests exceed the rate limit, please slow down",
        "You exceeded your current quota",
        "Prompt exceeds max length: 20 requests per minute allowed",
        "Request body exceeds max length",
        "Request exceeds max length of 1048576 bytes",
        "Input exceeds maximum input length of 1048576 characters.",
        "max_tokens exceeds the maximum allowed",
        "The output exceeds the max length",
        "Field 'name' exceeds max length",
    ] {
        assert!(!is_overflow(&[text]), "{text}");
    }
}

#[test]
fn a_400_that_says_the_prompt_exceeds_max_length_is_a_context_overflow() {
    let body = r#"{"error": {"code": "1261", "message": "Prompt exceeds max length"}}"#;
    assert_eq!(
        classify(400, body, None).kind,
        ErrorKind::ContextWindowExceeded
    );
    let rate = r#"{"error": {"code": "1302", "message": "Rate limit reached for requests"}}"#;
    assert_eq!(classify(429, rate, None).kind, ErrorKind::RateLimited);
}
