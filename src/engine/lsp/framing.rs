//! The base protocol's framing: each message is a `Content-Length: N` header block (other
//! headers ignored), an empty line, then N bytes of JSON.
//!
//! The reader is strict where a mistake would desynchronise the stream (a length that is not a
//! number, a body over [`MAX_BODY`], a header line over [`MAX_HEADER_LINE`]) and lenient where it
//! costs nothing: lines that are not headers before a message starts (a server that prints a
//! banner or logs to stdout) are skipped and counted, up to [`MAX_JUNK_LINES`] in a row.

use std::io;

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt};

/// A body larger than this ends the connection (no server sends a diagnostics list this big).
pub(crate) const MAX_BODY: usize = 64 * 1024 * 1024;
/// A header line longer than this is garbage.
const MAX_HEADER_LINE: usize = 8 * 1024;
/// Non-header lines tolerated in a row before a message.
const MAX_JUNK_LINES: usize = 1_000;

/// One frame: `Content-Length` header and the body.
pub(crate) fn encode(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

/// What was read: a body, and how many junk lines came before it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Frame {
    pub body: Vec<u8>,
    pub junk_lines: usize,
}

/// The next message's body; None at a clean end of the stream (between messages).
pub(crate) async fn read_frame<R: AsyncBufRead + Unpin>(r: &mut R) -> io::Result<Option<Frame>> {
    let mut length: Option<usize> = None;
    let mut junk_lines = 0usize;
    let mut in_headers = false;
    loop {
        let Some(line) = read_line(r).await? else {
            return if in_headers {
                Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the stream ended inside a message's headers",
                ))
            } else {
                Ok(None)
            };
        };
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            if let Some(n) = length {
                let mut body = vec![0u8; n];
                r.read_exact(&mut body).await?;
                return Ok(Some(Frame { body, junk_lines }));
            }
            if in_headers {
                return Err(bad("a message without a Content-Length header"));
            }
            continue;
        }
        match text.split_once(':') {
            Some((name, value)) if is_header_name(name) => {
                in_headers = true;
                if name.eq_ignore_ascii_case("content-length") {
                    let n: usize = value
                        .trim()
                        .parse()
                        .map_err(|_| bad(&format!("Content-Length is not a number: {value:?}")))?;
                    if n > MAX_BODY {
                        return Err(bad(&format!("a message of {n} bytes (at most {MAX_BODY})")));
                    }
                    length = Some(n);
                }
            }
            _ if in_headers => return Err(bad(&format!("not a header: {:?}", sample(text)))),
            _ => {
                junk_lines += 1;
                if junk_lines > MAX_JUNK_LINES {
                    return Err(bad("no message header in over 1000 lines"));
                }
            }
        }
    }
}

/// A header name: a token of letters, digits and `-`.
fn is_header_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

/// The next line, `\n` included; None at the end of the stream with nothing read.
async fn read_line<R: AsyncBufRead + Unpin>(r: &mut R) -> io::Result<Option<Vec<u8>>> {
    let mut line = Vec::new();
    loop {
        let buf = r.fill_buf().await?;
        if buf.is_empty() {
            return Ok((!line.is_empty()).then_some(line));
        }
        let (take, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        line.extend_from_slice(buf.get(..take).unwrap_or_default());
        r.consume(take);
        if line.len() > MAX_HEADER_LINE {
            return Err(bad("a header line over 8 KiB"));
        }
        if done {
            return Ok(Some(line));
        }
    }
}

fn sample(text: &str) -> String {
    text.chars().take(80).collect()
}

fn bad(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn frames(bytes: &[u8]) -> Vec<io::Result<Option<Frame>>> {
        let mut r = tokio::io::BufReader::with_capacity(7, bytes);
        let mut out = Vec::new();
        loop {
            let f = read_frame(&mut r).await;
            let stop = !matches!(f, Ok(Some(_)));
            out.push(f);
            if stop {
                return out;
            }
        }
    }

    fn body(f: &io::Result<Option<Frame>>) -> Option<String> {
        match f {
            Ok(Some(f)) => Some(String::from_utf8(f.body.clone()).unwrap()),
            _ => None,
        }
    }

    #[tokio::test]
    async fn reads_back_what_it_writes_across_small_reads() {
        let mut bytes = encode(br#"{"a":1}"#);
        bytes.extend(b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n");
        bytes.extend(b"content-length: 2\r\n\r\n{}");
        let got = frames(&bytes).await;
        assert_eq!(body(&got[0]).as_deref(), Some(r#"{"a":1}"#));
        assert_eq!(body(&got[1]).as_deref(), Some("{}"));
        assert!(matches!(got[2], Ok(None)));
    }

    #[tokio::test]
    async fn a_banner_before_a_message_is_skipped_and_counted() {
        let mut bytes = b"Starting server v1.2\nlistening on stdio\n".to_vec();
        bytes.extend(encode(b"[]"));
        let got = frames(&bytes).await;
        match &got[0] {
            Ok(Some(f)) => assert_eq!((f.body.as_slice(), f.junk_lines), (&b"[]"[..], 2)),
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn what_would_desynchronise_the_stream_is_an_error() {
        for bytes in [
            &b"Content-Length: ten\r\n\r\n"[..],
            b"Content-Length: 999999999999\r\n\r\n",
            b"Content-Type: x\r\n\r\n{}",
            b"Content-Length: 2\r\ngarbage here\r\n\r\n{}",
            b"Content-Length: 10\r\n\r\n{}",
            b"Content-Length: 2\r\n",
        ] {
            let got = frames(bytes).await;
            assert!(
                got.last().unwrap().is_err(),
                "{:?}",
                String::from_utf8_lossy(bytes)
            );
        }
        let long = vec![b'x'; 10_000];
        assert!(frames(&long).await.last().unwrap().is_err());
        let junk = "junk\n".repeat(1_001);
        assert!(frames(junk.as_bytes()).await.last().unwrap().is_err());
    }
}
