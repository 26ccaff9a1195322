//! The fake acting as a local OpenAI-compatible server: the endpoints where llama.cpp, Ollama, LM
//! Studio and vLLM describe themselves (`/props`, `/api/show`, `/api/ps`, `/api/v0/models`,
//! `/v1/models`, `/tokenize`), in their own shapes, and llama.cpp's refusal of a prompt larger than
//! its context. A server answers only its own endpoints; the others get the 404 it would send.
//! Requests to these paths never take a scripted reply and are recorded apart
//! ([`super::FakeServer::probes`]), so a test that scripts chat replies is not disturbed by the
//! questions asked at start.

use serde_json::{Value, json};

use super::Reply;
use super::openai::Stream;

/// The server the fake acts as.
#[derive(Debug, Clone, PartialEq)]
pub enum LocalServer {
    /// llama.cpp `llama-server` with a context of `n_ctx` tokens per slot. `top_level` puts
    /// `n_ctx` where older builds had it. `/tokenize` counts `chars_per_token` characters a token.
    LlamaCpp {
        n_ctx: u64,
        top_level: bool,
        chars_per_token: f64,
    },
    /// Ollama serving `model`: its Modelfile's `num_ctx` (if any), the context of the loaded
    /// model (if loaded), the context it was trained for.
    Ollama {
        model: String,
        num_ctx: Option<u64>,
        loaded: Option<u64>,
        trained: u64,
    },
    /// LM Studio with `model`: loaded with `loaded` tokens, or not loaded; its maximum.
    LmStudio {
        model: String,
        loaded: Option<u64>,
        max: u64,
    },
    /// vLLM serving `model` with `max_model_len`.
    Vllm { model: String, max_model_len: u64 },
}

impl LocalServer {
    /// llama.cpp with an `n_ctx` context (the current `/props` shape, 3.5 characters a token).
    pub fn llama(n_ctx: u64) -> LocalServer {
        LocalServer::LlamaCpp {
            n_ctx,
            top_level: false,
            chars_per_token: 3.5,
        }
    }

    /// The context above which the server refuses a prompt, if it refuses (llama.cpp does).
    pub fn refuses_above(&self) -> Option<u64> {
        match self {
            LocalServer::LlamaCpp { n_ctx, .. } => Some(*n_ctx),
            _ => None,
        }
    }
}

/// The paths where servers describe themselves.
pub fn is_probe(path: &str) -> bool {
    let path = path.split('?').next().unwrap_or(path);
    matches!(
        path,
        "/props" | "/api/show" | "/api/ps" | "/api/v0/models" | "/v1/models" | "/tokenize"
    )
}

/// A hosted API's list of models (Anthropic's shape).
pub fn model_list(models: &[String]) -> Reply {
    let data: Vec<Value> = models
        .iter()
        .map(|m| json!({"type": "model", "id": m, "display_name": m}))
        .collect();
    json_reply(json!({"data": data, "has_more": false}))
}

fn not_found() -> Reply {
    Reply::status(
        404,
        r#"{"error":{"code":404,"message":"File Not Found","type":"not_found_error"}}"#,
    )
}

fn json_reply(v: Value) -> Reply {
    Reply::status(200, v.to_string())
}

/// llama.cpp's answers.
fn llama(path: &str, body: &Value, n_ctx: u64, top_level: bool, ratio: f64) -> Reply {
    match path {
        "/props" if top_level => json_reply(json!({
            "n_ctx": n_ctx, "model_path": "/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            "total_slots": 1})),
        "/props" => json_reply(json!({
            "default_generation_settings": {"n_ctx": n_ctx, "params": {"n_predict": -1, "temperature": 0.8}},
            "total_slots": 1,
            "model_path": "/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            "chat_template": "{%- for message in messages %}…{%- endfor %}",
            "build_info": "b11434-fake"})),
        "/v1/models" => json_reply(json!({"object": "list", "data": [{
            "id": "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", "object": "model", "owned_by": "llamacpp",
            "meta": {"n_ctx_train": 32768, "n_vocab": 151936}}]})),
        "/tokenize" => {
            let chars = body["content"].as_str().map_or(0, str::len);
            let n = (chars as f64 / ratio).ceil() as usize;
            json_reply(json!({"tokens": vec![0; n]}))
        }
        _ => not_found(),
    }
}

/// The answer of the server the fake acts as to a probe path (a 404 when it acts as none).
pub fn answer(server: Option<&LocalServer>, method: &str, path: &str, body: &Value) -> Reply {
    let path = path.split('?').next().unwrap_or(path);
    match server {
        None => not_found(),
        Some(LocalServer::LlamaCpp {
            n_ctx,
            top_level,
            chars_per_token,
        }) => llama(path, body, *n_ctx, *top_level, *chars_per_token),
        Some(LocalServer::Ollama {
            model,
            num_ctx,
            loaded,
            trained,
        }) => match (method, path) {
            ("POST", "/api/show") => {
                let asked = body["model"].as_str().or(body["name"].as_str());
                if asked != Some(model.as_str()) {
                    return Reply::status(
                        404,
                        format!(r#"{{"error":"model '{}' not found"}}"#, asked.unwrap_or("")),
                    );
                }
                let parameters = num_ctx.map_or_else(
                    || "stop                           \"<|im_end|>\"".to_string(),
                    |n| format!("num_ctx                        {n}\nstop                           \"<|im_end|>\""),
                );
                json_reply(json!({
                    "modelfile": "# Modelfile generated by \"ollama show\"\nFROM /root/.ollama/models/blobs/sha256-60e0\n",
                    "parameters": parameters,
                    "template": "{{- if .Messages }}…{{- end }}",
                    "details": {"format": "gguf", "family": "qwen2", "parameter_size": "7.6B", "quantization_level": "Q4_K_M"},
                    "model_info": {"general.architecture": "qwen2", "qwen2.context_length": trained, "qwen2.block_count": 28},
                    "capabilities": ["completion", "tools", "insert"]
                }))
            }
            ("GET", "/api/ps") => {
                let models: Vec<Value> = loaded
                    .iter()
                    .map(|n| json!({"name": model, "model": model, "size": 6_654_289_920_u64, "context_length": n}))
                    .collect();
                json_reply(json!({"models": models}))
            }
            ("GET", "/v1/models") => json_reply(
                json!({"object": "list", "data": [{"id": model, "object": "model", "owned_by": "library"}]}),
            ),
            _ => Reply::status(404, "404 page not found"),
        },
        Some(LocalServer::LmStudio { model, loaded, max }) => match path {
            "/api/v0/models" => {
                let mut entry = json!({"id": model, "object": "model", "type": "llm",
                    "publisher": "lmstudio-community", "arch": "qwen2", "compatibility_type": "gguf",
                    "quantization": "Q4_K_M", "state": if loaded.is_some() { "loaded" } else { "not-loaded" },
                    "max_context_length": max});
                if let Some(n) = loaded {
                    entry["loaded_context_length"] = json!(n);
                }
                json_reply(json!({"object": "list", "data": [entry]}))
            }
            "/v1/models" => json_reply(
                json!({"object": "list", "data": [{"id": model, "object": "model", "owned_by": "organization_owner"}]}),
            ),
            _ => Reply::status(200, r#"{"error":"Unexpected endpoint or method."}"#),
        },
        Some(LocalServer::Vllm {
            model,
            max_model_len,
        }) => match path {
            "/v1/models" => json_reply(json!({"object": "list", "data": [{
                "id": model, "object": "model", "created": 1_733_000_000, "owned_by": "vllm",
                "root": model, "parent": null, "max_model_len": max_model_len,
                "permission": [{"id": "modelperm-1", "object": "model_permission"}]}]})),
            _ => Reply::status(404, r#"{"detail":"Not Found"}"#),
        },
    }
}

/// llama.cpp's refusal of a prompt of `n_prompt` tokens in a context of `n_ctx`, byte for byte.
pub fn overflow_body(n_prompt: u64, n_ctx: u64) -> String {
    format!(
        r#"{{"error":{{"code":400,"message":"request ({n_prompt} tokens) exceeds the available context size ({n_ctx} tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":{n_prompt},"n_ctx":{n_ctx}}}}}"#
    )
}

/// A reply built from what the fake counted for the request: `build` gets a stream whose usage
/// is the counted prompt and `output` tokens written.
pub fn counted(output: u64, build: impl Fn(Stream) -> Stream + Send + Sync + 'static) -> Reply {
    Reply::lazy(move |_, c| {
        let usage = super::anthropic::counted_usage(c, output);
        build(Stream::new(usage)).reply()
    })
}

/// A reply that writes until a context of `n_ctx` tokens is full: `finish_reason: "length"`, the
/// prompt as counted and the rest of the context written.
pub fn fills(n_ctx: u64, text: &str) -> Reply {
    let text = text.to_owned();
    Reply::lazy(move |_, c| {
        let written = n_ctx.saturating_sub(c.total());
        let usage = super::anthropic::counted_usage(c, written);
        Stream::new(usage)
            .text(&text)
            .finish_reason("length")
            .reply()
    })
}
