//! A real local web server for `web_fetch`: HTTP/1.1 on `127.0.0.1:0`, a fixed page per path,
//! one request per connection, and a count of every connection it accepted (a refused fetch must
//! leave it at zero). An endless page has no length and sends its body again and again until
//! the client hangs up.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// One page: status, extra headers, body.
#[derive(Clone)]
pub struct Page {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// Endless: the body is sent again after each pause, without a length, until the client
    /// hangs up.
    pub endless: Option<std::time::Duration>,
}

impl Page {
    pub fn html(body: &str) -> Page {
        Page {
            status: 200,
            headers: vec![("content-type".into(), "text/html; charset=utf-8".into())],
            body: body.as_bytes().to_vec(),
            endless: None,
        }
    }

    /// An HTML page that never ends: `chunk` again after every `pause`.
    pub fn endless(chunk: &str, pause: std::time::Duration) -> Page {
        Page {
            endless: Some(pause),
            ..Page::html(chunk)
        }
    }

    pub fn redirect(to: &str) -> Page {
        Page {
            status: 302,
            headers: vec![("location".into(), to.into())],
            body: Vec::new(),
            endless: None,
        }
    }

    pub fn typed(ctype: &str, body: &[u8]) -> Page {
        Page {
            status: 200,
            headers: vec![("content-type".into(), ctype.into())],
            body: body.to_vec(),
            endless: None,
        }
    }
}

pub struct PageServer {
    pub port: u16,
    connections: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl PageServer {
    pub async fn start(pages: Vec<(&str, Page)>) -> PageServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let pages: Arc<HashMap<String, Page>> = Arc::new(
            pages
                .into_iter()
                .map(|(p, page)| (p.to_string(), page))
                .collect(),
        );
        let connections = Arc::new(AtomicUsize::new(0));
        let count = connections.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((mut sock, _)) = listener.accept().await else {
                    return;
                };
                count.fetch_add(1, Ordering::SeqCst);
                let pages = pages.clone();
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    let mut chunk = [0u8; 4096];
                    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                        match sock.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                    }
                    let head = String::from_utf8_lossy(&buf);
                    let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
                    let page = pages.get(&path).cloned().unwrap_or(Page {
                        status: 404,
                        headers: vec![("content-type".into(), "text/plain".into())],
                        body: b"not found".to_vec(),
                        endless: None,
                    });
                    let mut out = format!("HTTP/1.1 {} X\r\n", page.status);
                    for (k, v) in &page.headers {
                        out.push_str(&format!("{k}: {v}\r\n"));
                    }
                    if let Some(pause) = page.endless {
                        out.push_str("connection: close\r\n\r\n");
                        let _ = sock.write_all(out.as_bytes()).await;
                        while sock.write_all(&page.body).await.is_ok() {
                            tokio::time::sleep(pause).await;
                        }
                        return;
                    }
                    out.push_str(&format!(
                        "content-length: {}\r\nconnection: close\r\n\r\n",
                        page.body.len()
                    ));
                    let _ = sock.write_all(out.as_bytes()).await;
                    let _ = sock.write_all(&page.body).await;
                    let _ = sock.shutdown().await;
                });
            }
        });
        PageServer {
            port,
            connections,
            task,
        }
    }

    /// Connections accepted so far.
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }
}

impl Drop for PageServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}
