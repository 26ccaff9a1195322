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
pub mod cache;
pub mod chaos;
pub mod local;
pub mod openai;

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

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
    let last_user_text = body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .map(|m| match &m["content"] {
            Value::String(s) => s.clone(),
            Value::Array(blocks) => blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
            _ => String::new(),
        })
        .unwrap_or_default();
    last_user_text.contains("write a handoff document now")
}

impl Reply {
    /// An SSE body in one chunk.
    pub fn sse(bytes: impl Into<Vec<u8>>) -> Reply {
        Reply::Sse {
            chunks: vec![bytes.into()],
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

/// Counts an open connection for as long as it lives.
struct Active(Arc<Mutex<State>>);

impl Active {
    fn new(state: Arc<Mutex<State>>) -> Active {
        lock(&state).active += 1;
        Active(state)
    }
}

impl Drop for Active {
    fn drop(&mut self) {
        let mut s = lock(&self.0);
        s.active = s.active.saturating_sub(1);
    }
}

const MAX_HEAD: usize = 1 << 20;
const MAX_BODY: usize = 256 << 20;

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Read bytes until `buf` holds at least `n` bytes; false on EOF or error.
async fn fill(sock: &mut TcpStream, buf: &mut Vec<u8>, n: usize) -> bool {
    let mut tmp = [0u8; 16 * 1024];
    while buf.len() < n {
        match sock.read(&mut tmp).await {
            Ok(0) | Err(_) => return false,
            Ok(k) => buf.extend_from_slice(&tmp[..k]),
        }
    }
    true
}

/// Read whatever arrives next; false on EOF or error.
async fn more(sock: &mut TcpStream, buf: &mut Vec<u8>) -> bool {
    let want = buf.len() + 1;
    fill(sock, buf, want).await
}

/// Decode a chunked body that starts at `buf[0]`, reading more as needed.
async fn read_chunked(sock: &mut TcpStream, mut buf: Vec<u8>) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    let mut at = 0;
    loop {
        let line_end = loop {
            if let Some(i) = find(&buf[at..], b"\r\n") {
                break at + i;
            }
            if buf.len() > MAX_BODY || !more(sock, &mut buf).await {
                return None;
            }
        };
        let size_text = std::str::from_utf8(&buf[at..line_end]).ok()?;
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        at = line_end + 2;
        if size == 0 {
            return Some(body);
        }
        if body.len() + size > MAX_BODY || !fill(sock, &mut buf, at + size + 2).await {
            return None;
        }
        body.extend_from_slice(&buf[at..at + size]);
        at += size + 2;
    }
}

/// Read one request: (method, path, headers, body). `None` if the client went away or sent garbage.
async fn read_request(
    sock: &mut TcpStream,
) -> Option<(String, String, Vec<(String, String)>, Vec<u8>)> {
    let mut buf = Vec::new();
    let head_end = loop {
        if let Some(i) = find(&buf, b"\r\n\r\n") {
            break i;
        }
        if buf.len() > MAX_HEAD || !more(sock, &mut buf).await {
            return None;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split_whitespace();
    let method = first.next()?.to_owned();
    let path = first.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let rest = buf[head_end + 4..].to_vec();
    let header = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let body = if header("transfer-encoding")
        .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"))
    {
        read_chunked(sock, rest).await?
    } else {
        let len: usize = header("content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        if len > MAX_BODY {
            return None;
        }
        let mut rest = rest;
        if !fill(sock, &mut rest, len).await {
            return None;
        }
        rest.truncate(len);
        rest
    };
    Some((method, path, headers, body))
}

fn reason_phrase(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        413 => "Payload Too Large",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        529 => "Overloaded",
        _ => "Status",
    }
}

/// The head of every streamed answer; `request-id` as the Messages API sends it.
const STREAM_HEAD: &str = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\ncache-control: no-cache\r\nrequest-id: req_fake_0001\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n";

fn chunk(bytes: &[u8]) -> Vec<u8> {
    let mut out = format!("{:x}\r\n", bytes.len()).into_bytes();
    out.extend_from_slice(bytes);
    out.extend_from_slice(b"\r\n");
    out
}

/// The 400 a real service would answer for this request, if any.
fn validate(path: &str, body: &Value) -> Option<String> {
    if path.ends_with("/messages") {
        anthropic::validate(body)
    } else if path.ends_with("/chat/completions") {
        openai::validate(body)
    } else {
        None
    }
}

async fn serve(mut sock: TcpStream, state: Arc<Mutex<State>>) {
    let _active = Active::new(state.clone());
    let Some((method, path, headers, raw)) = read_request(&mut sock).await else {
        return;
    };
    let body = serde_json::from_slice(&raw)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&raw).into_owned()));
    if local::is_probe(&path) {
        let reply = {
            let mut s = lock(&state);
            s.probes.push((method.clone(), path.clone()));
            local::answer(s.local.as_ref(), &method, &path, &body)
        };
        let _ = respond(&mut sock, reply).await;
        let _ = sock.shutdown().await;
        return;
    }
    let rejection = validate(&path, &body);
    let arrived = std::time::Instant::now();
    let units = cache::units(&body);
    let (index, reply) = {
        let mut s = lock(&state);
        let protocol = chaos::Protocol::of_path(&path);
        let llama = s.local.as_ref().and_then(local::LocalServer::refuses_above);
        let rejection = rejection.or_else(|| {
            s.window.filter(|w| units.total > *w).map(|w| match llama {
                Some(_) => local::overflow_body(units.total, w),
                None => format!(
                    r#"{{"type":"error","error":{{"type":"invalid_request_error","message":"prompt is too long: {} tokens > {w} maximum"}}}}"#,
                    units.total
                ),
            })
        });
        let mut counted = cache::Counted::default();
        let mut reply = match rejection {
            Some(err) => Reply::status(400, err),
            None => {
                counted = s.cache.account(&units);
                let routed = s
                    .routes
                    .iter_mut()
                    .find(|(p, q)| !q.is_empty() && p(&body))
                    .and_then(|(_, q)| q.pop_front());
                routed
                    .or_else(|| s.keyed_reply(&body))
                    .or_else(|| s.replies.pop_front())
                    .unwrap_or_else(|| Reply::status(500, "no scripted reply"))
            }
        };
        reply = resolve(reply, &body, counted);
        let mut fault = None;
        if let Some((f, faulty)) = s.chaos.as_mut().and_then(|d| d.roll(&reply, protocol)) {
            s.replies.push_front(std::mem::replace(&mut reply, faulty));
            fault = Some(f);
        }
        s.requests.push(Recorded {
            method,
            path,
            headers,
            body,
            arrived,
            finished: None,
            fault,
            counted,
            tokens: units.total,
        });
        (s.requests.len() - 1, reply)
    };
    let reset = matches!(reply, Reply::Reset { .. });
    // Write errors mean the client went away: nothing to do.
    let _ = respond(&mut sock, reply).await;
    if let Some(r) = lock(&state).requests.get_mut(index) {
        r.finished = Some(std::time::Instant::now());
    }
    if !reset {
        let _ = sock.shutdown().await;
    }
}

/// Build a lazy reply (also inside a gate or a delay) for the request that arrived.
fn resolve(reply: Reply, body: &Value, counted: cache::Counted) -> Reply {
    match reply {
        Reply::Lazy(l) => (l.0)(body, counted),
        Reply::Gated { gate, reply } => Reply::Gated {
            gate,
            reply: Box::new(resolve(*reply, body, counted)),
        },
        Reply::Delayed { delay, reply } => Reply::Delayed {
            delay,
            reply: Box::new(resolve(*reply, body, counted)),
        },
        other => other,
    }
}

/// A body [`is_writing`] holds true for: finds the writing route among the routes.
static WRITING_PROBE: std::sync::LazyLock<Value> = std::sync::LazyLock::new(
    || serde_json::json!({"messages": [{"role": "user", "content": "write a handoff document now"}]}),
);

async fn respond(sock: &mut TcpStream, reply: Reply) -> std::io::Result<()> {
    match reply {
        Reply::Delayed { delay, reply } => {
            tokio::time::sleep(delay).await;
            Box::pin(respond(sock, *reply)).await?;
        }
        Reply::Gated { gate, reply } => {
            let mut tmp = [0u8; 1024];
            let hung_up = async { while !matches!(sock.read(&mut tmp).await, Ok(0) | Err(_)) {} };
            tokio::select! {
                () = gate.opened() => {}
                () = hung_up => return Ok(()),
            }
            Box::pin(respond(sock, *reply)).await?;
        }
        // Built when the request arrived; a builder returning another builder is not one.
        Reply::Lazy(_) => {
            let body = "a lazy reply built a lazy reply";
            let head = format!(
                "HTTP/1.1 500 Internal Server Error\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            sock.write_all(head.as_bytes()).await?;
            sock.write_all(body.as_bytes()).await?;
        }
        Reply::Status {
            status,
            headers,
            body,
        } => {
            let mut head = format!("HTTP/1.1 {status} {}\r\n", reason_phrase(status));
            if !headers
                .iter()
                .any(|(k, _)| k.eq_ignore_ascii_case("content-type"))
            {
                let t = body.trim_start();
                let ct = if t.starts_with('{') || t.starts_with('[') {
                    "application/json"
                } else if t.starts_with('<') {
                    "text/html; charset=utf-8"
                } else {
                    "text/plain; charset=utf-8"
                };
                head.push_str(&format!("content-type: {ct}\r\n"));
            }
            for (k, v) in &headers {
                head.push_str(&format!("{k}: {v}\r\n"));
            }
            head.push_str(&format!(
                "content-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            ));
            sock.write_all(head.as_bytes()).await?;
            sock.write_all(body.as_bytes()).await?;
        }
        Reply::Sse { chunks, delay } => {
            sock.write_all(STREAM_HEAD.as_bytes()).await?;
            for (i, c) in chunks.iter().filter(|c| !c.is_empty()).enumerate() {
                if let (Some(d), true) = (delay, i > 0) {
                    tokio::time::sleep(d).await;
                }
                sock.write_all(&chunk(c)).await?;
                sock.flush().await?;
            }
            sock.write_all(b"0\r\n\r\n").await?;
        }
        Reply::Stall { prefix } => {
            sock.write_all(STREAM_HEAD.as_bytes()).await?;
            if !prefix.is_empty() {
                sock.write_all(&chunk(&prefix)).await?;
            }
            sock.flush().await?;
            // Wait for the client to hang up.
            let mut tmp = [0u8; 1024];
            while !matches!(sock.read(&mut tmp).await, Ok(0) | Err(_)) {}
        }
        Reply::Cut { bytes } => {
            sock.write_all(STREAM_HEAD.as_bytes()).await?;
            if !bytes.is_empty() {
                sock.write_all(&chunk(&bytes)).await?;
            }
            sock.flush().await?;
        }
        Reply::Reset { bytes } => {
            sock.write_all(STREAM_HEAD.as_bytes()).await?;
            if !bytes.is_empty() {
                sock.write_all(&chunk(&bytes)).await?;
            }
            sock.flush().await?;
            // Closing with SO_LINGER 0 sends a reset instead of a clean FIN.
            sock.set_zero_linger()?;
        }
        Reply::Pause { head, pause } => {
            if let Some(bytes) = head {
                sock.write_all(STREAM_HEAD.as_bytes()).await?;
                if !bytes.is_empty() {
                    sock.write_all(&chunk(&bytes)).await?;
                }
                sock.flush().await?;
            }
            // Silent for `pause`, or until the client gives up and hangs up.
            let mut tmp = [0u8; 1024];
            let hung_up = async { while !matches!(sock.read(&mut tmp).await, Ok(0) | Err(_)) {} };
            let _ = tokio::time::timeout(pause, hung_up).await;
        }
    }
    sock.flush().await
}
