//! An MCP server built with rmcp's server side, for the fault tests and the round-trip bench. It runs
//! as a real child process: the test binary runs itself (see `suite::mcp::mcp_test_server_entry`),
//! reading JSON-RPC on stdin and writing it on the descriptor it is given (3 under libtest, whose own
//! output owns stdout; 1 in the bench).
//!
//! Its tools misbehave on request: `crash` exits mid-call, `hang` never answers, `garbage` writes a
//! line that is not JSON instead of an answer, `big` returns N bytes, `env` shows its environment,
//! `read_file` and `bash` are named like flower-tui's built-ins. `FLOWER_MCP_TEST_START` chooses how
//! it starts: `normal`, `crash` (exit 3 before the handshake), `slow:<ms>` (wait before serving).

use std::io::Write;
use std::os::fd::{FromRawFd, OwnedFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Map, Value, json};

/// The environment variable that makes the test binary act as this server.
pub const SERVER_ENV: &str = "FLOWER_MCP_TEST_SERVER";
/// How it starts (see the module doc).
pub const START_ENV: &str = "FLOWER_MCP_TEST_START";

#[derive(Clone)]
struct Faults {
    /// A raw handle on the output, for `garbage` (one `write` per line, atomic on a pipe).
    raw_out: Arc<std::sync::Mutex<std::fs::File>>,
    /// `add_tool` was called: list `added` too.
    added: Arc<AtomicBool>,
}

fn schema(props: Value, required: &[&str]) -> Map<String, Value> {
    let v = json!({"type": "object", "properties": props, "required": required});
    v.as_object().cloned().unwrap_or_default()
}

fn tools(added: bool) -> Vec<Tool> {
    let mut t = vec![
        Tool::new(
            "echo",
            "Returns its text argument.",
            schema(json!({"text": {"type": "string"}}), &["text"]),
        ),
        Tool::new(
            "noop",
            "Returns `ok` at once (for the round-trip bench).",
            schema(json!({}), &[]),
        ),
        Tool::new(
            "crash",
            "Exits the server with status 3 while answering.",
            schema(json!({}), &[]),
        ),
        Tool::new("hang", "Never answers.", schema(json!({}), &[])),
        Tool::new(
            "garbage",
            "Writes a line that is not JSON instead of an answer.",
            schema(json!({}), &[]),
        ),
        Tool::new(
            "big",
            "Returns `bytes` bytes of text.",
            schema(json!({"bytes": {"type": "integer"}}), &["bytes"]),
        ),
        Tool::new(
            "env",
            "Returns the server's environment as a JSON object.",
            schema(json!({}), &[]),
        ),
        Tool::new("fail", "Returns an error result.", schema(json!({}), &[])),
        Tool::new(
            "refuse",
            "Answers with a JSON-RPC error.",
            schema(json!({}), &[]),
        ),
        Tool::new("image", "Returns a tiny image.", schema(json!({}), &[])),
        Tool::new(
            "sleep",
            "Answers after `ms` milliseconds.",
            schema(json!({"ms": {"type": "integer"}}), &["ms"]),
        ),
        Tool::new(
            "add_tool",
            "Adds a tool `added` and says the list changed.",
            schema(json!({}), &[]),
        ),
        Tool::new(
            "read_file",
            "A server tool named like flower-tui's built-in.",
            schema(json!({"path": {"type": "string"}}), &[]),
        ),
        Tool::new("bash", "Another built-in name.", schema(json!({}), &[])),
        Tool::new(
            "dotted.name v2",
            "A name the model APIs refuse.",
            Map::new(),
        ),
    ];
    if added {
        t.push(Tool::new(
            "added",
            "Listed after add_tool.",
            schema(json!({}), &[]),
        ));
    }
    t
}

fn done(blocks: Vec<ContentBlock>) -> Result<CallToolResponse, ErrorData> {
    Ok(CallToolResponse::Complete(CallToolResult::success(blocks)))
}

impl ServerHandler for Faults {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools(
            self.added.load(Ordering::SeqCst),
        )))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        match request.name.as_ref() {
            "echo" => done(vec![ContentBlock::text(
                args.get("text").and_then(Value::as_str).unwrap_or_default(),
            )]),
            "noop" | "added" => done(vec![ContentBlock::text("ok")]),
            "crash" => {
                eprintln!("crashing on purpose in the middle of a call");
                std::process::exit(3);
            }
            "hang" => std::future::pending().await,
            "garbage" => {
                if let Ok(mut out) = self.raw_out.lock() {
                    let _ = out.write_all(b"this line is not JSON-RPC\n");
                }
                std::future::pending().await
            }
            "big" => {
                let n = args.get("bytes").and_then(Value::as_u64).unwrap_or(0) as usize;
                let text: String = "0123456789abcdef".chars().cycle().take(n).collect();
                done(vec![ContentBlock::text(text)])
            }
            "env" => {
                let env: Map<String, Value> = std::env::vars()
                    .map(|(k, v)| (k, Value::String(v)))
                    .collect();
                done(vec![ContentBlock::text(Value::Object(env).to_string())])
            }
            "fail" => Ok(CallToolResponse::Complete(CallToolResult::error(vec![
                ContentBlock::text("the tool failed on purpose"),
            ]))),
            "refuse" => Err(ErrorData::invalid_params("refused on purpose", None)),
            "image" => done(vec![
                ContentBlock::text("here:"),
                ContentBlock::image("iVBORw0KGgo=", "image/png"),
            ]),
            "sleep" => {
                let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(0);
                tokio::time::sleep(Duration::from_millis(ms)).await;
                done(vec![ContentBlock::text("slept")])
            }
            "add_tool" => {
                self.added.store(true, Ordering::SeqCst);
                let _ = context.peer.notify_tool_list_changed().await;
                done(vec![ContentBlock::text("added")])
            }
            "read_file" => done(vec![ContentBlock::text("the server's own read_file")]),
            "bash" => done(vec![ContentBlock::text("the server's own bash")]),
            "dotted.name v2" => done(vec![ContentBlock::text("dotted")]),
            other => Err(ErrorData::invalid_params(format!("no tool {other}"), None)),
        }
    }
}

/// Serve on stdin and descriptor `out_fd` until the client goes away.
pub fn run(out_fd: i32) {
    let start = std::env::var(START_ENV).unwrap_or_default();
    if start == "crash" {
        eprintln!("boom on start");
        std::process::exit(3);
    }
    if let Some(ms) = start.strip_prefix("slow:").and_then(|m| m.parse().ok()) {
        std::thread::sleep(Duration::from_millis(ms));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async move {
        // SAFETY: the descriptors are this process's stdin and the output it was started with;
        // nothing else in the process uses them.
        let (stdin, out) = unsafe { (OwnedFd::from_raw_fd(0), OwnedFd::from_raw_fd(out_fd)) };
        let raw = std::fs::File::from(out.try_clone().expect("dup"));
        let reader =
            tokio::net::unix::pipe::Receiver::from_owned_fd(stdin).expect("stdin is a pipe");
        let writer = tokio::net::unix::pipe::Sender::from_owned_fd(out).expect("output is a pipe");
        let handler = Faults {
            raw_out: Arc::new(std::sync::Mutex::new(raw)),
            added: Arc::new(AtomicBool::new(false)),
        };
        let running = handler.serve((reader, writer)).await.expect("handshake");
        let _ = running.waiting().await;
    });
    std::process::exit(0);
}
