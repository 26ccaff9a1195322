//! The fake's side of the wire: one connection read as an HTTP/1.1 request (chunked bodies
//! too), checked as the real service would, answered from the queues, and the reply written byte
//! for byte (streamed in chunks, delayed, gated, cut or hung as scripted).

use super::*;

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

pub(super) async fn serve(mut sock: TcpStream, state: Arc<Mutex<State>>) {
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
            match &s.models {
                Some(models) if path.starts_with("/v1/models") => local::model_list(models),
                _ => local::answer(s.local.as_ref(), &method, &path, &body),
            }
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
