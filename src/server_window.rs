//! Before the first request, a local OpenAI-compatible server is asked for the window it gives the
//! model (llama.cpp, Ollama, LM Studio, vLLM: `engine::provider::probe`); its answer becomes the
//! window in force, shown by `-v` and `/window` as the server's. A server with a tokenizer
//! (llama.cpp) also counts a sample of the session's own prompt, which calibrates the token
//! estimates before the first usage report.
//!
//! Which window wins: `--window` (the user's word; the server is not even asked), then the
//! server's answer, then a window learned from an earlier overflow, then the guess from the
//! model's name. The server's answer beats a learned window because it is the state of the
//! server now, while a learned window is what some earlier run was told — often by a server
//! since restarted with another context size or another model under the same name. The two agree
//! whenever both are current (an overflow message states the same context the server reports).
//! During the run an overflow still teaches the window: it is newer than the answer at start.
//!
//! Not asked: the demo, the Anthropic API, the hosted OpenAI-compatible APIs (they answer none of
//! these questions; asking would cost a round trip at every start). A server that answers nothing
//! costs at most the probe's deadline (1.5 s); one that refuses the connection costs nothing.

use crate::config::{Backend, Config, ProviderKind};
use crate::engine::context::WindowSource;
use crate::engine::prompt_style::PromptStyle;
use crate::engine::provider::probe::{self, Server};
use crate::engine::tokens::Estimator;

/// The text a tokenizer counts to calibrate the estimates: the full base prompt and tool specs
/// (prose and JSON, like the requests).
fn calibration_sample(config: &Config) -> String {
    let tools = serde_json::to_string(&crate::engine::tools::specs()).unwrap_or_default();
    format!(
        "{}\n{tools}",
        PromptStyle::Full.base_prompt(&config.places.workspace)
    )
}

/// Ask the configured server for its window (and its tokenizer for a count); a window the server
/// states replaces a learned or guessed one in `config`.
pub(crate) async fn ask(config: &mut Config) {
    let p = &config.provider;
    if p.backend != Backend::Api(ProviderKind::OpenAi)
        || config.context.window_source.is_pinned()
        || probe::is_hosted(&p.base_url)
    {
        return;
    }
    let client = crate::engine::provider::http::http_client();
    let key = p
        .api_key
        .as_ref()
        .map(|k| k.expose().to_string())
        .unwrap_or_default();
    let server = Server {
        client: &client,
        base_url: &p.base_url,
        api_key: &key,
    };
    let sample = calibration_sample(config);
    let (window, count) = tokio::join!(server.window(&p.model), server.count_tokens(&sample));
    if let Some(found) = window {
        config.context.window = found.window;
        config.context.window_source = WindowSource::Server { kind: found.kind };
    }
    if let Some(tokens) = count {
        // A store that cannot be written only means the estimates start uncalibrated.
        let _ = Estimator::load(&config.places.data_dir, &config.provider.model)
            .observe(sample.len(), tokens);
    }
}
