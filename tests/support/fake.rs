//! The fake model server every engine test talks to: a real loopback HTTP/1.1 server on
//! `127.0.0.1:0` that replays scripted replies byte for byte and records every request.
//!
//! ```ignore
//! let server = FakeServer::start().await;
//! server.push(fake::anthropic::text("Hello!", U::new(100, 5)));
//! let provider = AnthropicProvider::new(AnthropicConfig { base_url: server.base_url(), ..Default::default() });
//! // … run the request …
//! assert_eq!(server.requests()[0]["stream"], true);
//! ```
//!
//! Like the real services, it rejects (with 400 and their wording) a history whose tool calls are not
//! answered, or that holds tool blocks but defines no tools; such a rejection is answered instead of
//! the next scripted reply, which stays queued. One request per connection (`connection: close`).
//!
//! In chaos mode ([`FakeServer::set_chaos`], see [`chaos`]) a scripted stream reply may be answered
//! by a seeded fault instead, and then stays queued for the retry.
//!
//! Requests that run at the same time (a background handoff's writing request beside the main
//! thread's) are told apart by *routes*: [`FakeServer::push_writing`] queues a reply for the next
//! writing request only ([`is_writing`]); everything else takes the main queue. Every request is
//! counted in tokens and run through a prompt cache ([`cache`]); a [`Reply::Lazy`] reply is built
//! from those counts (`anthropic::text_counted`), and [`FakeServer::set_window`] makes the server
//! refuse, with the API's overflow wording, a body larger than a window.
//!
//! [`FakeServer::act_as`] makes it a local server ([`local`]): it answers the endpoints where
//! llama.cpp, Ollama, LM Studio and vLLM describe themselves, and refuses an oversized prompt as
//! llama.cpp does. Those questions are recorded apart ([`FakeServer::probes`]).

pub mod anthropic;
pub mod body;
pub mod cache;
pub mod chaos;
pub mod local;
pub mod openai;
mod wire;

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

use self::wire::serve;

/// An HTTP client for talking to the fake: the product's settings, but never through a proxy from
/// the environment (`HTTP_PROXY` would otherwise catch `127.0.0.1` too). Pass it as the provider
/// config's `http`.
pub fn client() -> reqwest::Client {
    // Installs the rustls crypto provider once, as the product does.
    let _ = flower_tui::engine::provider::http::http_client();
    reqwest::Client::builder()
        .no_proxy()
        .connect_timeout(flower_tui::engine::provider::http::CONNECT_TIMEOUT)
        .build()
        .expect("a plain HTTP client")
}

/// Usage numbers a scripted reply reports (mapped to each API's own fields).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct U {
    pub input: u64,
    pub output: u64,
    pub cache_creation: u64,
    pub cache_read: u64,
}

impl U {
    /// Plain input and output tokens, no cache.
    pub fn new(input: u64, output: u64) -> U {
        U {
            input,
            output,
            ..U::default()
        }
    }

    /// The same with cache numbers.
    pub fn cached(self, cache_creation: u64, cache_read: u64) -> U {
        U {
            cache_creation,
            cache_read,
            ..self
        }
    }
}

/// One scripted answer.
#[derive(Debug, Clone)]
pub enum Reply {
    /// Raw SSE body bytes (status 200, `text/event-stream`, chunked), sent in these chunks with an
    /// optional delay between chunks.
    Sse {
        chunks: Vec<Vec<u8>>,
        delay: Option<Duration>,
    },
    /// Any status, headers and body (e.g. 529 with JSON, 502 with HTML, 429 with `retry-after`).
    /// Without a `content-type` header one is guessed from the body.
    Status {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// Accept, send the stream's headers (and `prefix`, if any), then never finish: the server waits
    /// until the client closes the connection.
    Stall { prefix: Vec<u8> },
    /// Start a stream, send `bytes`, then close the connection without finishing the body.
    Cut { bytes: Vec<u8> },
    /// Start a stream, send `bytes`, then reset the connection (TCP RST).
    Reset { bytes: Vec<u8> },
    /// Send nothing at all (`head: None`) or the stream's headers and `head`, stay silent for
    /// `pause` (or until the client hangs up), then close without finishing the body.
    Pause {
        head: Option<Vec<u8>>,
        pause: Duration,
    },
    /// A reply built when the request arrives, from the request's body and its token counts (the
    /// prompt cache's reading of it).
    Lazy(Lazy),
    /// Nothing for `delay`, then `reply`.
    Delayed { delay: Duration, reply: Box<Reply> },
    /// Nothing until the test opens `gate`, then `reply` (or the client hangs up first).
    Gated { gate: Gate, reply: Box<Reply> },
}

/// A latch a test opens to let a [`Reply::Gated`] reply go.
#[derive(Debug, Clone, Default)]
pub struct Gate(Arc<(std::sync::atomic::AtomicBool, tokio::sync::Notify)>);

impl Gate {
    pub fn new() -> Gate {
        Gate::default()
    }

    /// Let every reply waiting on it go (and every later one at once).
    pub fn open(&self) {
        self.0.0.store(true, std::sync::atomic::Ordering::SeqCst);
        self.0.1.notify_waiters();
    }

    async fn opened(&self) {
        loop {
            let notified = self.0.1.notified();
            if self.0.0.load(std::sync::atomic::Ordering::SeqCst) {
                return;
            }
            notified.await;
        }
    }
}

/// The builder of a [`Reply::Lazy`].
#[derive(Clone)]
pub struct Lazy(pub Arc<LazyFn>);

/// What builds a lazy reply: the request's body and its token counts in, the reply out.
pub type LazyFn = dyn Fn(&Value, cache::Counted) -> Reply + Send + Sync;

impl std::fmt::Debug for Lazy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Lazy(..)")
    }
}

/// The writing turn of a handoff: tool use off and the handoff prompt last.
pub fn is_writing(body: &Value) -> bool {
    body::last_user_text(body).contains("write a handoff document now")
}

impl Reply {
    /// An SSE body in one chunk.
    pub fn sse(bytes: impl Into<Vec<u8>>) -> Reply {
        Reply::Sse {
            chunks: vec![bytes.into()],
            delay: None,
        }
    }

    /// An SSE body of these chunks (one event each, as the APIs flush them), with no pause.
    pub fn stream(chunks: Vec<Vec<u8>>) -> Reply {
        Reply::Sse {
            chunks,
            delay: None,
        }
    }

    /// An SSE body cut into chunks of `size` bytes (splitting events, lines and UTF-8 characters).
    pub fn sse_in_chunks(bytes: &[u8], size: usize) -> Reply {
        Reply::Sse {
            chunks: bytes.chunks(size.max(1)).map(<[u8]>::to_vec).collect(),
            delay: None,
        }
    }

    /// A status with a body and no extra headers.
    pub fn status(status: u16, body: impl Into<String>) -> Reply {
        Reply::Status {
            status,
            headers: Vec::new(),
            body: body.into(),
        }
    }

    /// An HTML error page such as a proxy or CDN sends.
    pub fn html(status: u16, title: &str) -> Reply {
        Reply::status(
            status,
            format!(
                "<!DOCTYPE html>\n<html>\n<head><title>{title}</title></head>\n<body>\n<center><h1>{title}</h1></center>\n<hr><center>nginx</center>\n</body>\n</html>\n"
            ),
        )
    }

    /// The same reply with an extra response header (for `Status`; ignored otherwise).
    pub fn with_header(mut self, name: &str, value: &str) -> Reply {
        if let Reply::Status { headers, .. } = &mut self {
            headers.push((name.to_owned(), value.to_owned()));
        }
        self
    }

    /// The same SSE reply with a pause between chunks.
    pub fn with_delay(mut self, d: Duration) -> Reply {
        if let Reply::Sse { delay, .. } = &mut self {
            *delay = Some(d);
        }
        self
    }

    /// A reply built from the request and its token counts when it arrives.
    pub fn lazy(f: impl Fn(&Value, cache::Counted) -> Reply + Send + Sync + 'static) -> Reply {
        Reply::Lazy(Lazy(Arc::new(f)))
    }

    /// This reply once `gate` opens.
    pub fn gated(self, gate: &Gate) -> Reply {
        Reply::Gated {
            gate: gate.clone(),
            reply: Box::new(self),
        }
    }

    /// This reply after `d`: nothing is sent for that long, then the reply as it is (a model
    /// that takes its time before the first token).
    pub fn after(self, d: Duration) -> Reply {
        Reply::Delayed {
            delay: d,
            reply: Box::new(self),
        }
    }

    /// All the SSE bytes of this reply joined (empty for non-SSE replies).
    pub fn body_bytes(&self) -> Vec<u8> {
        match self {
            Reply::Sse { chunks, .. } => chunks.concat(),
            Reply::Stall { prefix } => prefix.clone(),
            Reply::Cut { bytes } | Reply::Reset { bytes } => bytes.clone(),
            Reply::Pause { head, .. } => head.clone().unwrap_or_default(),
            Reply::Status { body, .. } => body.clone().into_bytes(),
            Reply::Lazy(_) => Vec::new(),
            Reply::Delayed { reply, .. } | Reply::Gated { reply, .. } => reply.body_bytes(),
        }
    }
}

/// A request the server received.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    /// Header names in lower case, in the order received.
    pub headers: Vec<(String, String)>,
    /// The body parsed as JSON (a JSON string holding the raw text when it was not JSON).
    pub body: Value,
    /// When the request had been read in full.
    pub arrived: std::time::Instant,
    /// When the reply's last byte was written (None while it is being sent, or for a stall).
    pub finished: Option<std::time::Instant>,
    /// The fault chaos mode answered with instead of the scripted reply.
    pub fault: Option<chaos::Fault>,
    /// Its tokens as the prompt cache read them (zero for a rejected request).
    pub counted: cache::Counted,
    /// Its tokens in all.
    pub tokens: u64,
}

impl Recorded {
    /// The first header named `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Which requests a routed queue answers.
type Route = Arc<dyn Fn(&Value) -> bool + Send + Sync>;

#[derive(Default)]
struct State {
    replies: VecDeque<Reply>,
    /// Replies for requests whose first user message holds a key ([`FakeServer::push_for`]).
    keyed: Vec<(String, VecDeque<Reply>)>,
    /// Queues for the requests a route matches, checked before the main queue.
    routes: Vec<(Route, VecDeque<Reply>)>,
    requests: Vec<Recorded>,
    active: usize,
    chaos: Option<chaos::Dice>,
    cache: cache::PromptCache,
    /// Bodies over this many tokens are refused as overflows.
    window: Option<u64>,
    /// The local server the fake acts as, if any.
    local: Option<local::LocalServer>,
    /// The questions a client asked the server about itself: (method, path).
    probes: Vec<(String, String)>,
    /// Tool-call ids handed out by [`FakeServer::next_tool_id`].
    tool_ids: usize,
    /// The models `GET /v1/models` lists, as a hosted API does ([`FakeServer::list_models`]).
    models: Option<Vec<String>>,
}

/// The loopback server. Dropping it stops accepting connections.
pub struct FakeServer {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    task: JoinHandle<()>,
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|p| p.into_inner())
}

impl FakeServer {
    /// Bind `127.0.0.1:0` and start serving (inside a tokio runtime).
    pub async fn start() -> FakeServer {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local addr");
        let state = Arc::new(Mutex::new(State::default()));
        let shared = state.clone();
        let task = tokio::spawn(async move {
            while let Ok((sock, _)) = listener.accept().await {
                tokio::spawn(serve(sock, shared.clone()));
            }
        });
        FakeServer { addr, state, task }
    }

    /// `http://127.0.0.1:PORT`
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Queue the next reply (FIFO). With nothing queued the server answers 500 `no scripted reply`.
    pub fn push(&self, r: Reply) {
        lock(&self.state).replies.push_back(r);
    }

    /// A fresh tool-call id for a scripted reply: `t1`, `t2`, … in the order they are asked for.
    pub fn next_tool_id(&self) -> String {
        let mut s = lock(&self.state);
        s.tool_ids += 1;
        format!("t{}", s.tool_ids)
    }

    /// Queue several replies in order.
    pub fn push_all(&self, rs: impl IntoIterator<Item = Reply>) {
        lock(&self.state).replies.extend(rs);
    }

    /// Queue a reply for the requests whose first user message contains `key` (FIFO per key):
    /// concurrent conversations (subagents) each get their own script, whatever order their
    /// requests arrive in. Such a request takes the plain queue once its key's replies are used.
    pub fn push_for(&self, key: &str, r: Reply) {
        let mut s = lock(&self.state);
        match s.keyed.iter_mut().find(|(k, _)| k == key) {
            Some((_, q)) => q.push_back(r),
            None => s.keyed.push((key.to_owned(), VecDeque::from([r]))),
        }
    }

    /// Scripted replies not used yet for `key`.
    pub fn pending_for(&self, key: &str) -> usize {
        lock(&self.state)
            .keyed
            .iter()
            .find(|(k, _)| k == key)
            .map_or(0, |(_, q)| q.len())
    }

    /// Queue a reply for the next request `route` matches (ahead of the main queue). Routes are
    /// kept per predicate instance: call it once per reply with a shared `Arc` to queue several.
    pub fn push_when(&self, route: Arc<dyn Fn(&Value) -> bool + Send + Sync>, r: Reply) {
        let mut s = lock(&self.state);
        match s.routes.iter_mut().find(|(p, _)| Arc::ptr_eq(p, &route)) {
            Some((_, q)) => q.push_back(r),
            None => s.routes.push((route, VecDeque::from([r]))),
        }
    }

    /// Queue a reply for the next handoff writing request ([`is_writing`]).
    pub fn push_writing(&self, r: Reply) {
        let mut s = lock(&self.state);
        match s.routes.iter_mut().find(|(p, _)| p(&WRITING_PROBE)) {
            Some((_, q)) => q.push_back(r),
            None => {
                let route: Route = Arc::new(is_writing);
                s.routes.push((route, VecDeque::from([r])));
            }
        }
    }

    /// Refuse bodies over `window` tokens (counted as [`cache::units`] does) with the Messages
    /// API's overflow error, which states both numbers. None: no limit.
    pub fn set_window(&self, window: Option<u64>) {
        lock(&self.state).window = window;
    }

    /// Act as a local server: answer its self-description endpoints, and (llama.cpp) refuse a
    /// prompt larger than its context with its own error body.
    /// Answer `GET /v1/models` with these models, as Anthropic's API does.
    pub fn list_models(&self, models: &[&str]) {
        lock(&self.state).models = Some(models.iter().map(|m| m.to_string()).collect());
    }

    pub fn act_as(&self, server: local::LocalServer) {
        let mut s = lock(&self.state);
        if let Some(n) = server.refuses_above() {
            s.window = Some(n);
        }
        s.local = Some(server);
    }

    /// The questions asked about the server (method and path), in order.
    pub fn probes(&self) -> Vec<(String, String)> {
        lock(&self.state).probes.clone()
    }

    /// Answer scripted stream replies with seeded faults from now on (the reply stays queued).
    pub fn set_chaos(&self, c: chaos::Chaos) {
        lock(&self.state).chaos = Some(chaos::Dice::new(c));
    }

    /// Back to plain replies.
    pub fn clear_chaos(&self) {
        lock(&self.state).chaos = None;
    }

    /// Every fault injected, in request order.
    pub fn faults(&self) -> Vec<chaos::Fault> {
        lock(&self.state)
            .requests
            .iter()
            .filter_map(|r| r.fault.clone())
            .collect()
    }

    /// Drop the scripted replies not used yet (a turn that gave up leaves its rest behind); returns
    /// how many there were.
    pub fn drop_pending(&self) -> usize {
        let mut s = lock(&self.state);
        let n = s.replies.len();
        s.replies.clear();
        n
    }

    /// Scripted replies not used yet (routed ones too).
    pub fn pending(&self) -> usize {
        let s = lock(&self.state);
        s.replies.len()
            + s.routes.iter().map(|(_, q)| q.len()).sum::<usize>()
            + s.keyed.iter().map(|(_, q)| q.len()).sum::<usize>()
    }

    /// Forget the recorded requests (long benchmarks keep memory flat).
    pub fn clear_requests(&self) {
        lock(&self.state).requests.clear();
    }

    /// Every request body received, in order (rejected ones too).
    pub fn requests(&self) -> Vec<Value> {
        lock(&self.state)
            .requests
            .iter()
            .map(|r| r.body.clone())
            .collect()
    }

    /// Every request received, in full.
    pub fn recorded(&self) -> Vec<Recorded> {
        lock(&self.state).requests.clone()
    }

    /// The paths of every request, in order.
    pub fn request_paths(&self) -> Vec<String> {
        lock(&self.state)
            .requests
            .iter()
            .map(|r| r.path.clone())
            .collect()
    }

    /// The headers of every request, in order (names in lower case).
    pub fn request_headers(&self) -> Vec<Vec<(String, String)>> {
        lock(&self.state)
            .requests
            .iter()
            .map(|r| r.headers.clone())
            .collect()
    }

    /// Connections currently open (a stalled stream stays open until the client goes away).
    pub fn active_connections(&self) -> usize {
        lock(&self.state).active
    }

    /// Wait until no connection is open; false if that did not happen within `timeout`.
    pub async fn wait_idle(&self, timeout: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + timeout;
        while self.active_connections() > 0 {
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        true
    }
}

impl State {
    /// The next reply routed to this request by its first user message, if any.
    fn keyed_reply(&mut self, body: &Value) -> Option<Reply> {
        let first = body["messages"]
            .as_array()?
            .iter()
            .find(|m| m["role"] == "user")?
            .to_string();
        self.keyed
            .iter_mut()
            .find(|(k, q)| !q.is_empty() && first.contains(k.as_str()))
            .and_then(|(_, q)| q.pop_front())
    }
}

/// A body [`is_writing`] holds true for: finds the writing route among the routes.
static WRITING_PROBE: std::sync::LazyLock<Value> = std::sync::LazyLock::new(
    || serde_json::json!({"messages": [{"role": "user", "content": "write a handoff document now"}]}),
);
