//! Reading a local server's own description of itself: which context window is in force for the
//! model (pure: JSON in, a number out). The HTTP side is in the parent module.
//!
//! - llama.cpp `GET /props`: `default_generation_settings.n_ctx` (the context of one slot, which
//!   is what one request gets), or the top-level `n_ctx` of older builds.
//! - Ollama `POST /api/show` (+ `GET /api/ps`): a request through the OpenAI-compatible endpoint
//!   carries no `num_ctx`, so the context in force is the model's own `num_ctx` parameter when its
//!   Modelfile sets one; else the server's default, which only the loaded model shows (`/api/ps`
//!   `context_length`, from `OLLAMA_CONTEXT_LENGTH` or the memory-based default); else, for a model
//!   not loaded yet, [`OLLAMA_DEFAULT_CTX`]. Ollama never gives a model more than it was trained
//!   for (`model_info.<arch>.context_length`), so that caps every answer. Ollama cuts an
//!   oversized prompt silently instead of refusing it, so a guess too large is the costly error:
//!   when nothing better is known the smaller default is taken.
//! - LM Studio `GET /api/v0/models`: the entry of the model, `loaded_context_length` when it is
//!   loaded (or loading); a model not loaded yet is loaded on the first request with LM Studio's
//!   default context, 4,096 ([`LMSTUDIO_DEFAULT_CTX`]), never more than its `max_context_length`.
//! - vLLM `GET /v1/models`: the entry of the model (or the only one served), `max_model_len`.

use serde_json::Value;

/// The context Ollama gives a model that is not loaded and sets no `num_ctx`: the smallest of the
/// defaults it chooses by the machine's memory (4,096 below 24 GiB of VRAM; 32K and 256K above).
pub const OLLAMA_DEFAULT_CTX: u64 = 4_096;

/// The context LM Studio loads a model with on its first request (just-in-time loading does not
/// use the per-model settings of the app).
pub const LMSTUDIO_DEFAULT_CTX: u64 = 4_096;

/// A positive integer (servers write some counts as floats).
fn count(v: Option<&Value>) -> Option<u64> {
    let v = v?;
    v.as_u64()
        .or_else(|| {
            v.as_f64()
                .filter(|f| f.is_finite() && *f >= 1.0)
                .map(|f| f as u64)
        })
        .filter(|n| *n > 0)
}

/// llama.cpp `/props`: the context of one slot.
pub fn llamacpp_props(props: &Value) -> Option<u64> {
    count(props.pointer("/default_generation_settings/n_ctx")).or_else(|| count(props.get("n_ctx")))
}

/// The `num_ctx` line of Ollama's `parameters` text (`num_ctx    8192`), if any.
fn ollama_num_ctx(parameters: &str) -> Option<u64> {
    parameters.lines().find_map(|line| {
        let mut words = line.split_whitespace();
        match (words.next(), words.next()) {
            (Some("num_ctx"), Some(n)) => {
                n.trim_matches('"').parse::<u64>().ok().filter(|n| *n > 0)
            }
            _ => None,
        }
    })
}

/// The context the model was trained for: `model_info.<general.architecture>.context_length`, or
/// the one `*.context_length` key when the architecture is not named.
fn ollama_trained(show: &Value) -> Option<u64> {
    let info = show.get("model_info")?.as_object()?;
    if let Some(arch) = info.get("general.architecture").and_then(Value::as_str)
        && let Some(n) = count(info.get(&format!("{arch}.context_length")))
    {
        return Some(n);
    }
    let mut found = info
        .iter()
        .filter(|(k, _)| k.ends_with(".context_length"))
        .filter_map(|(_, v)| count(Some(v)));
    match (found.next(), found.next()) {
        (Some(n), None) => Some(n),
        _ => None,
    }
}

/// Ollama's spelling of a model: a name without a tag is `:latest`.
fn ollama_name(name: &str) -> String {
    let name = name.trim();
    let last = name.rsplit('/').next().unwrap_or(name);
    if last.contains(':') {
        name.to_string()
    } else {
        format!("{name}:latest")
    }
}

/// Where Ollama's answer came from (for the log).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OllamaBasis {
    /// The model's `num_ctx` parameter.
    NumCtx,
    /// The loaded model's context (`/api/ps`).
    Loaded,
    /// Not loaded and no `num_ctx`: [`OLLAMA_DEFAULT_CTX`].
    Default,
}

/// Whether `show` is an answer of Ollama's `/api/show` (and not some other server's JSON).
pub fn is_ollama_show(show: &Value) -> bool {
    show.is_object()
        && [
            "model_info",
            "modelfile",
            "parameters",
            "template",
            "details",
        ]
        .iter()
        .filter(|k| show.get(**k).is_some())
        .count()
            >= 2
}

/// The window Ollama gives `model`: see the module header for the order.
pub fn ollama_window(show: &Value, ps: Option<&Value>, model: &str) -> Option<(u64, OllamaBasis)> {
    if !is_ollama_show(show) {
        return None;
    }
    let num_ctx = show
        .get("parameters")
        .and_then(Value::as_str)
        .and_then(ollama_num_ctx);
    let want = ollama_name(model);
    let loaded = ps
        .and_then(|ps| ps.get("models")?.as_array())
        .and_then(|models| {
            models.iter().find(|m| {
                ["name", "model"].iter().any(|k| {
                    m.get(*k)
                        .and_then(Value::as_str)
                        .is_some_and(|n| ollama_name(n) == want)
                })
            })
        })
        .and_then(|m| count(m.get("context_length")));
    let (n, basis) = match (num_ctx, loaded) {
        (Some(n), _) => (n, OllamaBasis::NumCtx),
        (None, Some(n)) => (n, OllamaBasis::Loaded),
        (None, None) => (OLLAMA_DEFAULT_CTX, OllamaBasis::Default),
    };
    let n = ollama_trained(show).map_or(n, |t| n.min(t));
    Some((n, basis))
}

/// The `data` entries of an OpenAI-style model list.
fn entries(list: &Value) -> &[Value] {
    list.get("data")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn id_is(entry: &Value, model: &str) -> bool {
    entry
        .get("id")
        .and_then(Value::as_str)
        .is_some_and(|id| id.eq_ignore_ascii_case(model.trim()))
}

/// LM Studio `/api/v0/models`: the model's loaded context, else the context a first request
/// loads it with (see the module header).
pub fn lmstudio_window(models: &Value, model: &str) -> Option<u64> {
    let entry = entries(models).iter().find(|e| id_is(e, model))?;
    let max = count(entry.get("max_context_length"));
    match count(entry.get("loaded_context_length")) {
        Some(n) => Some(n),
        None => max.map(|m| m.min(LMSTUDIO_DEFAULT_CTX)),
    }
}

/// vLLM `/v1/models`: `max_model_len` of the model, or of the only model served (vLLM serves one
/// model, sometimes under a name other than the one asked for).
pub fn vllm_window(models: &Value, model: &str) -> Option<u64> {
    let list = entries(models);
    let named = list.iter().find(|e| {
        id_is(e, model)
            || e.get("root")
                .and_then(Value::as_str)
                .is_some_and(|r| r.eq_ignore_ascii_case(model.trim()))
    });
    let with_len: Vec<&Value> = list
        .iter()
        .filter(|e| e.get("max_model_len").is_some())
        .collect();
    let entry = match (named, with_len.as_slice()) {
        (Some(e), _) => e,
        (None, [only]) => *only,
        _ => return None,
    };
    count(entry.get("max_model_len"))
}

/// llama.cpp `POST /tokenize`: the number of tokens in its answer.
pub fn token_count(answer: &Value) -> Option<u64> {
    answer
        .get("tokens")
        .and_then(Value::as_array)
        .map(|t| t.len() as u64)
        .filter(|n| *n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn llamacpp_props_shapes() {
        let table: &[(Value, Option<u64>)] = &[
            (
                json!({"default_generation_settings": {"n_ctx": 8192, "params": {}}, "total_slots": 1}),
                Some(8192),
            ),
            (json!({"n_ctx": 4096, "model_path": "m.gguf"}), Some(4096)),
            (
                json!({"default_generation_settings": {"n_ctx": 2048}, "n_ctx": 4096}),
                Some(2048),
            ),
            (json!({"default_generation_settings": {"n_ctx": 0}}), None),
            (
                json!({"default_generation_settings": {"n_ctx": "8192"}}),
                None,
            ),
            (
                json!({"error": {"code": 404, "message": "File Not Found"}}),
                None,
            ),
            (json!([1, 2]), None),
        ];
        for (props, want) in table {
            assert_eq!(llamacpp_props(props), *want, "{props}");
        }
    }

    fn show(parameters: Option<&str>, trained: Option<u64>) -> Value {
        let mut v = json!({
            "modelfile": "FROM /models/blob\n",
            "template": "{{ .Prompt }}",
            "details": {"family": "qwen2", "parameter_size": "7.6B"},
            "model_info": {"general.architecture": "qwen2", "qwen2.block_count": 28}
        });
        if let Some(p) = parameters {
            v["parameters"] = json!(p);
        }
        if let Some(t) = trained {
            v["model_info"]["qwen2.context_length"] = json!(t);
        }
        v
    }

    #[test]
    fn ollama_takes_num_ctx_then_the_loaded_context_then_the_default_capped_by_training() {
        let ps = json!({"models": [
            {"name": "qwen2.5-coder:7b", "model": "qwen2.5-coder:7b", "context_length": 16384},
            {"name": "llama3.2:latest", "model": "llama3.2:latest", "context_length": 8192}
        ]});
        let params =
            "num_ctx                        12288\nstop                           \"<|im_end|>\"";
        // (model, /api/show, /api/ps, expected)
        type Row<'a> = (
            &'a str,
            Value,
            Option<&'a Value>,
            Option<(u64, OllamaBasis)>,
        );
        let table: &[Row] = &[
            (
                "qwen2.5-coder:7b",
                show(Some(params), Some(32768)),
                Some(&ps),
                Some((12288, OllamaBasis::NumCtx)),
            ),
            (
                "qwen2.5-coder:7b",
                show(None, Some(32768)),
                Some(&ps),
                Some((16384, OllamaBasis::Loaded)),
            ),
            (
                "qwen2.5-coder:7b",
                show(None, Some(32768)),
                None,
                Some((4096, OllamaBasis::Default)),
            ),
            // A name without a tag is `:latest`.
            (
                "llama3.2",
                show(None, Some(131072)),
                Some(&ps),
                Some((8192, OllamaBasis::Loaded)),
            ),
            // Another model loaded: the default.
            (
                "mistral",
                show(None, Some(32768)),
                Some(&ps),
                Some((4096, OllamaBasis::Default)),
            ),
            // Never more than the model was trained for.
            (
                "qwen2.5-coder:7b",
                show(Some("num_ctx 65536"), Some(32768)),
                None,
                Some((32768, OllamaBasis::NumCtx)),
            ),
            (
                "tiny",
                show(None, Some(2048)),
                None,
                Some((2048, OllamaBasis::Default)),
            ),
            // No training context known: the number in force.
            (
                "qwen2.5-coder:7b",
                show(Some("num_ctx 8192"), None),
                None,
                Some((8192, OllamaBasis::NumCtx)),
            ),
            // Not Ollama's answer.
            ("m", json!({"error": "model 'm' not found"}), None, None),
            (
                "m",
                json!({"default_generation_settings": {"n_ctx": 8192}}),
                None,
                None,
            ),
        ];
        for (model, show, ps, want) in table {
            assert_eq!(ollama_window(show, *ps, model), *want, "{model} {show}");
        }
    }

    #[test]
    fn ollama_trained_context_without_an_architecture_name() {
        let v = json!({"modelfile": "x", "model_info": {"llama.context_length": 8192}});
        assert_eq!(ollama_trained(&v), Some(8192));
        let two = json!({"model_info": {"a.context_length": 1, "b.context_length": 2}});
        assert_eq!(ollama_trained(&two), None, "ambiguous");
    }

    #[test]
    fn lmstudio_loaded_else_the_default_load() {
        let list = json!({"object": "list", "data": [
            {"id": "qwen2.5-coder-7b-instruct", "object": "model", "type": "llm", "state": "loaded",
             "max_context_length": 32768, "loaded_context_length": 8192},
            {"id": "devstral-small-2505-mlx", "object": "model", "type": "llm", "state": "loading",
             "max_context_length": 131072, "loaded_context_length": 4096},
            {"id": "meta-llama-3.1-8b-instruct", "object": "model", "type": "llm", "state": "not-loaded",
             "max_context_length": 131072},
            {"id": "tiny", "state": "not-loaded", "max_context_length": 2048},
            {"id": "broken", "state": "loaded"}
        ]});
        let table: &[(&str, Option<u64>)] = &[
            ("qwen2.5-coder-7b-instruct", Some(8192)),
            ("Qwen2.5-Coder-7B-Instruct", Some(8192)),
            ("devstral-small-2505-mlx", Some(4096)),
            ("meta-llama-3.1-8b-instruct", Some(4096)),
            ("tiny", Some(2048)),
            ("broken", None),
            ("absent", None),
        ];
        for (model, want) in table {
            assert_eq!(lmstudio_window(&list, model), *want, "{model}");
        }
        assert_eq!(lmstudio_window(&json!({"data": "x"}), "m"), None);
    }

    #[test]
    fn vllm_named_or_only_model() {
        let one = json!({"object": "list", "data": [
            {"id": "Qwen/Qwen2.5-Coder-7B-Instruct", "object": "model", "owned_by": "vllm",
             "root": "Qwen/Qwen2.5-Coder-7B-Instruct", "parent": null, "max_model_len": 32768}
        ]});
        assert_eq!(
            vllm_window(&one, "Qwen/Qwen2.5-Coder-7B-Instruct"),
            Some(32768)
        );
        assert_eq!(vllm_window(&one, "served-under-another-name"), Some(32768));
        let two = json!({"data": [
            {"id": "base", "root": "org/base", "max_model_len": 8192},
            {"id": "lora", "root": "org/base", "parent": "base", "max_model_len": 8192},
            {"id": "other", "max_model_len": 4096}
        ]});
        assert_eq!(vllm_window(&two, "other"), Some(4096));
        assert_eq!(vllm_window(&two, "org/base"), Some(8192));
        assert_eq!(
            vllm_window(&two, "unknown"),
            None,
            "several served, none named"
        );
        // llama.cpp and Ollama list models without `max_model_len`.
        let llama =
            json!({"object": "list", "data": [{"id": "m.gguf", "meta": {"n_ctx_train": 32768}}]});
        assert_eq!(vllm_window(&llama, "m.gguf"), None);
    }

    #[test]
    fn tokenize_answers() {
        assert_eq!(token_count(&json!({"tokens": [1, 2, 3]})), Some(3));
        assert_eq!(token_count(&json!({"tokens": []})), None);
        assert_eq!(token_count(&json!({"error": "x"})), None);
    }
}
