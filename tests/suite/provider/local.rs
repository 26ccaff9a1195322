//! Local OpenAI-compatible servers at the provider level: the window each kind states (asked the
//! way the binary asks, base URL with `/v1`), llama.cpp's tokenizer, llama.cpp's refusal of an
//! oversized prompt, a tool call written as text, a `length` stop, and the models a server lists
//! (`/model`'s picker).

use std::time::Duration;

use flower_tui::engine::provider::ErrorKind;
use flower_tui::engine::provider::error::overflow_limit;
use flower_tui::engine::provider::openai::{OpenAiConfig, OpenAiProvider};
use flower_tui::engine::provider::probe::{OllamaBasis, Server, ServerKind, ServerWindow};
use flower_tui::engine::types::{Block, Message};
use serde_json::json;

use super::{KEY, request, run};
use crate::support::check::assert_contains;
use crate::support::fake::local::{self, LocalServer};
use crate::support::fake::{self, FakeServer, Reply, U};

/// What the server states for `model`, asked with a `/v1` base URL (fails after 10 s).
async fn window(server: &FakeServer, model: &str) -> Option<ServerWindow> {
    let client = fake::client();
    let base = format!("{}/v1", server.base_url());
    let ask = Server {
        client: &client,
        base_url: &base,
        api_key: "",
    };
    tokio::time::timeout(Duration::from_secs(10), ask.window(model))
        .await
        .expect("the probe took more than 10 s")
}

fn found(kind: ServerKind, window: u64) -> Option<ServerWindow> {
    Some(ServerWindow {
        kind,
        window,
        ollama: None,
    })
}

#[tokio::test]
async fn each_server_states_its_window_its_own_way() {
    let ollama = |num_ctx, loaded| LocalServer::Ollama {
        model: "qwen2.5-coder:7b".into(),
        num_ctx,
        loaded,
        trained: 32_768,
    };
    let ollama_window = |window, basis| {
        Some(ServerWindow {
            kind: ServerKind::Ollama,
            window,
            ollama: Some(basis),
        })
    };
    let table: Vec<(LocalServer, &str, Option<ServerWindow>)> = vec![
        (
            LocalServer::llama(8_192),
            "any",
            found(ServerKind::LlamaCpp, 8_192),
        ),
        (
            LocalServer::LlamaCpp {
                n_ctx: 4_096,
                top_level: true,
                chars_per_token: 3.5,
            },
            "any",
            found(ServerKind::LlamaCpp, 4_096),
        ),
        (
            ollama(Some(12_288), Some(16_384)),
            "qwen2.5-coder:7b",
            ollama_window(12_288, OllamaBasis::NumCtx),
        ),
        (
            ollama(None, Some(16_384)),
            "qwen2.5-coder:7b",
            ollama_window(16_384, OllamaBasis::Loaded),
        ),
        (
            ollama(None, None),
            "qwen2.5-coder:7b",
            ollama_window(4_096, OllamaBasis::Default),
        ),
        // A model Ollama does not have: it says nothing about it.
        (ollama(None, None), "llama3.2", None),
        (
            LocalServer::LmStudio {
                model: "qwen2.5-coder-7b-instruct".into(),
                loaded: Some(8_192),
                max: 32_768,
            },
            "qwen2.5-coder-7b-instruct",
            found(ServerKind::LmStudio, 8_192),
        ),
        (
            LocalServer::LmStudio {
                model: "qwen2.5-coder-7b-instruct".into(),
                loaded: None,
                max: 32_768,
            },
            "qwen2.5-coder-7b-instruct",
            // Not loaded: a first request loads it with LM Studio's default context.
            found(ServerKind::LmStudio, 4_096),
        ),
        (
            LocalServer::Vllm {
                model: "Qwen/Qwen2.5-Coder-7B-Instruct".into(),
                max_model_len: 16_384,
            },
            "Qwen/Qwen2.5-Coder-7B-Instruct",
            found(ServerKind::Vllm, 16_384),
        ),
    ];
    for (acting, model, want) in table {
        let server = FakeServer::start().await;
        server.act_as(acting.clone());
        assert_eq!(window(&server, model).await, want, "{acting:?}");
        // The questions go to the root, never to `/v1/v1/…`, and take no scripted reply.
        assert!(
            server
                .probes()
                .iter()
                .all(|(_, p)| !p.starts_with("/v1/v1")),
            "{:?}",
            server.probes()
        );
        assert!(server.recorded().is_empty());
    }
}

#[tokio::test]
async fn a_server_that_says_nothing_costs_the_deadline_and_a_closed_port_nothing() {
    // Not a local server: every question answered 404.
    let server = FakeServer::start().await;
    assert_eq!(window(&server, "m").await, None);
    assert_eq!(server.probes().len(), 5, "{:?}", server.probes());
    // A server that accepts and never answers: the deadline ends the wait.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = silent.local_addr().unwrap();
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((sock, _)) = silent.accept().await {
            open.push(sock);
        }
    });
    let client = fake::client();
    let base = format!("http://{addr}/v1");
    let ask = Server {
        client: &client,
        base_url: &base,
        api_key: KEY,
    };
    let answer = tokio::time::timeout(Duration::from_secs(10), ask.window("m")).await;
    assert_eq!(answer.ok(), Some(None));
    held.abort();
    // A port nobody listens on: refused.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let base = format!("http://{closed}/v1");
    let ask = Server {
        client: &client,
        base_url: &base,
        api_key: "",
    };
    assert_eq!(ask.window("m").await, None);
}

#[tokio::test]
async fn llama_cpp_counts_tokens_and_others_do_not() {
    let server = FakeServer::start().await;
    server.act_as(LocalServer::LlamaCpp {
        n_ctx: 8_192,
        top_level: false,
        chars_per_token: 2.5,
    });
    let client = fake::client();
    let base = server.base_url();
    let ask = Server {
        client: &client,
        base_url: &base,
        api_key: "",
    };
    assert_eq!(ask.count_tokens(&"x".repeat(1_000)).await, Some(400));
    let sent = server.probes();
    assert_eq!(sent, vec![("POST".to_string(), "/tokenize".to_string())]);
    let vllm = FakeServer::start().await;
    vllm.act_as(LocalServer::Vllm {
        model: "m".into(),
        max_model_len: 8_192,
    });
    let base = vllm.base_url();
    let ask = Server {
        client: &client,
        base_url: &base,
        api_key: "",
    };
    assert_eq!(ask.count_tokens("some text").await, None);
}

fn openai(server: &FakeServer) -> OpenAiProvider {
    OpenAiProvider::new(OpenAiConfig {
        base_url: format!("{}/v1", server.base_url()),
        api_key: String::new(),
        http: Some(fake::client()),
        ..Default::default()
    })
}

#[tokio::test]
async fn llama_cpp_refuses_an_oversized_prompt_and_the_window_is_learned_from_it() {
    let server = FakeServer::start().await;
    server
        .script()
        .reply(Reply::status(400, local::overflow_body(6_034, 4_096)));
    let (r, _) = run(&openai(&server), &request(vec![Message::user("hi")])).await;
    let e = r.unwrap_err();
    assert_eq!(
        (e.kind, e.retryable),
        (ErrorKind::ContextWindowExceeded, false)
    );
    assert_contains(
        &e.message,
        "request (6034 tokens) exceeds the available context size (4096 tokens)",
    );
    assert_eq!(overflow_limit(&e.message), Some(4_096), "{}", e.message);
    // Acting as llama.cpp, the fake refuses by itself with the same body.
    let server = FakeServer::start().await;
    server.act_as(LocalServer::llama(20));
    server.push(fake::openai::text("never sent", U::new(1, 1)));
    let (r, _) = run(&openai(&server), &request(vec![Message::user("hi")])).await;
    let e = r.unwrap_err();
    assert_eq!(e.kind, ErrorKind::ContextWindowExceeded);
    assert_eq!(overflow_limit(&e.message), Some(20), "{}", e.message);
}

#[tokio::test]
async fn a_tool_call_written_as_text_comes_back_as_a_call() {
    let server = FakeServer::start().await;
    let call = "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"src/lib.rs\"}}\n</tool_call>";
    server.push(fake::openai::text(call, U::new(500, 20)));
    server.push(fake::openai::text(
        "I would call {\"name\": \"read_file\", \"arguments\": {}} next.",
        U::new(500, 20),
    ));
    let p = openai(&server);
    let (r, _) = run(&p, &request(vec![Message::user("read lib")])).await;
    let r = r.unwrap();
    assert_eq!(r.stop_reason.as_deref(), Some("tool_use"));
    match r.content.as_slice() {
        [
            Block::ToolUse {
                name,
                input,
                from_text,
                ..
            },
        ] => {
            assert_eq!(
                (name.as_str(), input),
                ("read_file", &json!({"path": "src/lib.rs"}))
            );
            assert!(*from_text);
        }
        other => panic!("{other:?}"),
    }
    // Prose with JSON in it stays prose.
    let (r, _) = run(&p, &request(vec![Message::user("plan")])).await;
    let r = r.unwrap();
    assert_eq!(r.stop_reason.as_deref(), Some("end_turn"));
    assert!(!r.message().has_tool_use());
}

#[tokio::test]
async fn a_length_stop_is_reported_as_such() {
    let server = FakeServer::start().await;
    server.push(
        fake::openai::Stream::new(U::new(7_000, 1_192))
            .text("cut off mid-")
            .finish_reason("length")
            .reply(),
    );
    let (r, _) = run(&openai(&server), &request(vec![Message::user("go")])).await;
    let r = r.unwrap();
    // The provider reports the stop; the engine, which knows the window, decides what it is.
    assert_eq!(r.stop_reason.as_deref(), Some("max_tokens"));
    assert_eq!(r.usage.context(), 8_192);
}

/// `/model`'s list: an OpenAI-compatible server (Ollama here) and Anthropic's API list their
/// models at `/v1/models`; a server with no list is an error that says what it answered.
#[tokio::test]
async fn providers_list_the_models_their_server_offers() {
    use flower_tui::engine::provider::Provider;
    use flower_tui::engine::provider::anthropic::{AnthropicConfig, AnthropicProvider};
    let server = FakeServer::start().await;
    server.act_as(LocalServer::Ollama {
        model: "qwen2.5-coder:7b".into(),
        num_ctx: None,
        loaded: None,
        trained: 32_768,
    });
    let openai = OpenAiProvider::new(OpenAiConfig {
        base_url: format!("{}/v1", server.base_url()),
        api_key: KEY.into(),
        http: Some(fake::client()),
        ..Default::default()
    });
    assert_eq!(openai.models().await.unwrap(), ["qwen2.5-coder:7b"]);

    let hosted = FakeServer::start().await;
    let anthropic = |server: &FakeServer| {
        AnthropicProvider::new(AnthropicConfig {
            base_url: server.base_url(),
            api_key: KEY.into(),
            http: Some(fake::client()),
            ..Default::default()
        })
    };
    let e = anthropic(&hosted).models().await.unwrap_err();
    assert!(!e.message.contains(KEY), "{}", e.message);
    assert_eq!(e.status, Some(404), "{e:?}");
    hosted.list_models(&["claude-opus-4-5", "claude-haiku-4-5"]);
    assert_eq!(
        anthropic(&hosted).models().await.unwrap(),
        ["claude-opus-4-5", "claude-haiku-4-5"]
    );
    let asked = hosted.probes();
    assert_eq!(
        asked.last().map(|(m, p)| (m.as_str(), p.as_str())),
        Some(("GET", "/v1/models?limit=1000"))
    );
}
