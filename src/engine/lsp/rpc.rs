//! JSON-RPC 2.0 over a server's stdio: requests with ids and a time cap, notifications both
//! ways, and the server's own requests answered at once by the [`Incoming`] handler.
//!
//! Two tasks per connection: a writer (frames queued messages onto stdin) and a reader (frames
//! off stdout, matching responses to their requests and handing notifications over). When either
//! side ends, every request still waiting fails and [`Connection::closed`] completes. A body that
//! is not JSON, or JSON that is no message, is counted and skipped; framing that cannot be
//! followed ends the connection.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot, watch};

use super::framing;

/// What the client does with what the server sends on its own.
pub(crate) trait Incoming: Send + Sync + 'static {
    /// A notification (`textDocument/publishDiagnostics`, `$/progress`, logs).
    fn notification(&self, method: &str, params: Value);
    /// The answer to a request of the server's (`workspace/configuration`, ...): the result, or
    /// an error message (sent as "method not found").
    fn request(&self, method: &str, params: &Value) -> Result<Value, String>;
}

/// Why a request got no result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum RpcError {
    #[error("no answer within {0:.1?}")]
    Timeout(Duration),
    #[error("the connection closed: {0}")]
    Closed(String),
    #[error("the server answered with an error: {0}")]
    Server(String),
}

type Waiting = Arc<Mutex<HashMap<i64, oneshot::Sender<Result<Value, RpcError>>>>>;

/// One server's JSON-RPC connection.
pub(crate) struct Connection {
    out: mpsc::UnboundedSender<Vec<u8>>,
    waiting: Waiting,
    next_id: AtomicI64,
    /// Set once either side ended, with why.
    closed: watch::Receiver<Option<String>>,
    /// Bodies that were not JSON-RPC messages, and junk lines between frames.
    garbage: Arc<AtomicU64>,
}

impl Connection {
    /// Start the reader and writer tasks over `reader`/`writer`.
    pub(crate) fn start<R, W>(reader: R, writer: W, incoming: Arc<dyn Incoming>) -> Connection
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (out, out_rx) = mpsc::unbounded_channel();
        let (closed_tx, closed) = watch::channel(None);
        let closed_tx = Arc::new(closed_tx);
        let waiting: Waiting = Arc::default();
        let garbage = Arc::new(AtomicU64::new(0));
        tokio::spawn(write_loop(writer, out_rx, closed_tx.clone()));
        let read_loop = ReadLoop {
            out: out.clone(),
            waiting: waiting.clone(),
            incoming,
            garbage: garbage.clone(),
            closed: closed_tx,
        };
        tokio::spawn(read_loop.run(reader_of(reader)));
        Connection {
            out,
            waiting,
            next_id: AtomicI64::new(1),
            closed,
            garbage,
        }
    }

    /// Send a request and wait at most `cap` for its result.
    pub(crate) async fn request(
        &self,
        method: &str,
        params: Value,
        cap: Duration,
    ) -> Result<Value, RpcError> {
        if let Some(why) = self.closed.borrow().clone() {
            return Err(RpcError::Closed(why));
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        lock(&self.waiting).insert(id, tx);
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let answer = tokio::time::timeout(cap, rx).await;
        lock(&self.waiting).remove(&id);
        match answer {
            Ok(Ok(result)) => result,
            Ok(Err(_)) => Err(RpcError::Closed("the reader stopped".into())),
            Err(_) => Err(RpcError::Timeout(cap)),
        }
    }

    /// Send a notification (nothing comes back).
    pub(crate) fn notify(&self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    fn send(&self, message: &Value) {
        let _ = self
            .out
            .send(framing::encode(message.to_string().as_bytes()));
    }

    /// Completes (with why) once the connection is gone.
    pub(crate) async fn closed(&self) -> String {
        let mut rx = self.closed.clone();
        match rx.wait_for(Option::is_some).await {
            Ok(why) => why.clone().unwrap_or_default(),
            Err(_) => "the connection ended".into(),
        }
    }

    /// How many bodies or lines were not JSON-RPC so far.
    pub(crate) fn garbage(&self) -> u64 {
        self.garbage.load(Ordering::Relaxed)
    }
}

fn reader_of<R: AsyncRead + Unpin>(r: R) -> BufReader<R> {
    BufReader::with_capacity(64 * 1024, r)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn close(tx: &watch::Sender<Option<String>>, why: String) {
    tx.send_if_modified(|c| {
        if c.is_none() {
            *c = Some(why);
            true
        } else {
            false
        }
    });
}

async fn write_loop<W: AsyncWrite + Unpin>(
    mut w: W,
    mut rx: mpsc::UnboundedReceiver<Vec<u8>>,
    closed: Arc<watch::Sender<Option<String>>>,
) {
    while let Some(bytes) = rx.recv().await {
        let written = async {
            w.write_all(&bytes).await?;
            w.flush().await
        };
        if let Err(e) = written.await {
            close(&closed, format!("writing to the server failed: {e}"));
            return;
        }
    }
}

struct ReadLoop {
    out: mpsc::UnboundedSender<Vec<u8>>,
    waiting: Waiting,
    incoming: Arc<dyn Incoming>,
    garbage: Arc<AtomicU64>,
    closed: Arc<watch::Sender<Option<String>>>,
}

impl ReadLoop {
    async fn run<R: AsyncRead + Unpin>(self, mut r: BufReader<R>) {
        let why = loop {
            match framing::read_frame(&mut r).await {
                Ok(Some(frame)) => {
                    self.garbage
                        .fetch_add(frame.junk_lines as u64, Ordering::Relaxed);
                    self.dispatch(&frame.body);
                }
                Ok(None) => break "the server closed its output".to_string(),
                Err(e) => break format!("unreadable output: {e}"),
            }
        };
        close(&self.closed, why.clone());
        for (_, tx) in lock(&self.waiting).drain() {
            let _ = tx.send(Err(RpcError::Closed(why.clone())));
        }
    }

    fn dispatch(&self, body: &[u8]) {
        let Ok(Value::Object(msg)) = serde_json::from_slice::<Value>(body) else {
            self.garbage.fetch_add(1, Ordering::Relaxed);
            return;
        };
        let method = msg.get("method").and_then(Value::as_str);
        let id = msg.get("id").filter(|v| !v.is_null());
        let params = msg.get("params").cloned().unwrap_or(Value::Null);
        match (method, id) {
            (Some(method), Some(id)) => {
                let reply = match self.incoming.request(method, &params) {
                    Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
                    Err(message) => json!({"jsonrpc": "2.0", "id": id,
                        "error": {"code": -32601, "message": message}}),
                };
                let _ = self.out.send(framing::encode(reply.to_string().as_bytes()));
            }
            (Some(method), None) => self.incoming.notification(method, params),
            (None, Some(id)) => {
                let Some(tx) = id.as_i64().and_then(|id| lock(&self.waiting).remove(&id)) else {
                    return;
                };
                let result = match msg.get("error") {
                    Some(e) => Err(RpcError::Server(
                        e.get("message")
                            .and_then(Value::as_str)
                            .unwrap_or("(no message)")
                            .chars()
                            .take(300)
                            .collect(),
                    )),
                    None => Ok(msg.get("result").cloned().unwrap_or(Value::Null)),
                };
                let _ = tx.send(result);
            }
            (None, None) => {
                self.garbage.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::duplex;

    #[derive(Default)]
    struct Seen(Mutex<Vec<String>>);

    impl Incoming for Seen {
        fn notification(&self, method: &str, _params: Value) {
            lock(&self.0).push(method.to_string());
        }
        fn request(&self, method: &str, _params: &Value) -> Result<Value, String> {
            match method {
                "workspace/configuration" => Ok(json!([null])),
                _ => Err(format!("{method} is not supported")),
            }
        }
    }

    async fn next_body<R: AsyncRead + Unpin>(r: &mut BufReader<R>) -> Value {
        let f = framing::read_frame(r).await.unwrap().unwrap();
        serde_json::from_slice(&f.body).unwrap()
    }

    #[tokio::test]
    async fn requests_match_their_answers_and_server_requests_are_answered() {
        let (client_io, server_io) = duplex(1 << 16);
        let (cr, cw) = tokio::io::split(client_io);
        let (sr, mut sw) = tokio::io::split(server_io);
        let seen = Arc::new(Seen::default());
        let conn = Arc::new(Connection::start(cr, cw, seen.clone()));
        let mut sr = BufReader::new(sr);
        let c = conn.clone();
        let asked = tokio::spawn(async move {
            c.request("initialize", json!({}), Duration::from_secs(5))
                .await
        });
        let req = next_body(&mut sr).await;
        assert_eq!(req["method"], "initialize");
        // Garbage, a notification, a request of the server's, then the answer.
        sw.write_all(&framing::encode(b"not json")).await.unwrap();
        sw.write_all(&framing::encode(
            br#"{"jsonrpc":"2.0","method":"window/logMessage","params":{}}"#,
        ))
        .await
        .unwrap();
        sw.write_all(&framing::encode(
            br#"{"jsonrpc":"2.0","id":"s1","method":"workspace/configuration","params":{"items":[{}]}}"#,
        ))
        .await
        .unwrap();
        let answer = format!(
            r#"{{"jsonrpc":"2.0","id":{},"result":{{"ok":true}}}}"#,
            req["id"]
        );
        sw.write_all(&framing::encode(answer.as_bytes()))
            .await
            .unwrap();
        assert_eq!(asked.await.unwrap(), Ok(json!({"ok": true})));
        let reply = next_body(&mut sr).await;
        assert_eq!(
            (reply["id"].clone(), reply["result"].clone()),
            (json!("s1"), json!([null]))
        );
        assert_eq!(lock(&seen.0).as_slice(), ["window/logMessage"]);
        assert_eq!(conn.garbage(), 1);
        // The server goes away: waiting requests fail, and `closed` says why.
        let c = conn.clone();
        let pending = tokio::spawn(async move {
            c.request("shutdown", Value::Null, Duration::from_secs(5))
                .await
        });
        let _ = next_body(&mut sr).await;
        // The server's end goes away whole (the duplex reports the end only then).
        drop(sw);
        drop(sr);
        assert!(matches!(pending.await.unwrap(), Err(RpcError::Closed(_))));
        assert_eq!(conn.closed().await, "the server closed its output");
    }

    #[tokio::test]
    async fn a_silent_server_times_a_request_out() {
        let (client_io, _server_io) = duplex(1 << 16);
        let (cr, cw) = tokio::io::split(client_io);
        let conn = Connection::start(cr, cw, Arc::new(Seen::default()));
        let got = conn
            .request("initialize", json!({}), Duration::from_millis(50))
            .await;
        assert_eq!(got, Err(RpcError::Timeout(Duration::from_millis(50))));
    }
}
