//! The protocol's stdio: newline-delimited JSON-RPC on stdin and stdout, and nothing else on
//! stdout. At start the real stdout is kept (duplicated) for the protocol alone and file
//! descriptor 1 is pointed at stderr, so a stray print of ours or of a library, and the output of
//! any child that inherits descriptor 1, reaches the editor's log instead of corrupting the
//! stream.
//!
//! Lines are read on a thread of their own (a blocking read of stdin never holds the runtime at
//! exit); bytes that are not UTF-8 are replaced, so a bad line is answered with a parse error
//! instead of ending the connection.

use std::io::{self, BufRead, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use futures::{Sink, Stream};
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;

/// A line longer than this is cut (and so answered with a parse error): no editor sends one.
const MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// Take stdout for the protocol: returns it, and points descriptor 1 at stderr from now on.
pub(super) fn take_stdout() -> io::Result<std::fs::File> {
    let _ = io::stdout().flush();
    let out = io::stdout().as_raw_fd();
    let err = io::stderr().as_raw_fd();
    // SAFETY: `dup` and `dup2` on descriptors this process owns for its whole life; the
    // duplicate is owned by the returned file alone.
    let kept = unsafe { libc::dup(out) };
    if kept < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `kept` is a fresh descriptor nobody else owns.
    let kept = unsafe { OwnedFd::from_raw_fd(kept) };
    // SAFETY: as above; replacing descriptor 1 closes nothing anyone holds but the std handle,
    // which keeps writing to descriptor 1 (now stderr).
    if unsafe { libc::dup2(err, out) } < 0 {
        return Err(io::Error::last_os_error());
    }
    set_cloexec(&kept);
    Ok(std::fs::File::from(kept))
}

/// The protocol's descriptor is not inherited by the commands and servers the engine starts.
fn set_cloexec(fd: &OwnedFd) {
    // SAFETY: fcntl on a descriptor we own.
    unsafe {
        let flags = libc::fcntl(fd.as_raw_fd(), libc::F_GETFD);
        if flags >= 0 {
            libc::fcntl(fd.as_raw_fd(), libc::F_SETFD, flags | libc::FD_CLOEXEC);
        }
    }
}

/// The incoming lines of stdin, read on a thread of their own; the stream ends at EOF (or at a
/// read error, which is logged).
pub(super) fn stdin_lines() -> impl Stream<Item = io::Result<String>> + Send + 'static {
    let (tx, rx) = mpsc::channel::<String>(64);
    let spawned = std::thread::Builder::new()
        .name("acp-stdin".into())
        .spawn(move || read_lines(io::stdin().lock(), &tx));
    if let Err(e) = spawned {
        tracing::error!("acp: cannot start the stdin reader: {e}");
    }
    futures::stream::unfold(rx, |mut rx| async move {
        let line = rx.recv().await?;
        Some((Ok(line), rx))
    })
}

/// Send every line of `input` (without its newline, lossily decoded) until EOF or until nobody
/// listens.
fn read_lines(mut input: impl BufRead, tx: &mpsc::Sender<String>) {
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match read_line(&mut input, &mut buf) {
            Ok(0) => return,
            Ok(_) => {}
            Err(e) => {
                tracing::warn!("acp: reading stdin failed: {e}");
                return;
            }
        }
        while buf.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
            buf.pop();
        }
        if buf.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let line = String::from_utf8_lossy(&buf).into_owned();
        if tx.blocking_send(line).is_err() {
            return;
        }
    }
}

/// One line into `buf` (its newline included), at most [`MAX_LINE_BYTES`]: the rest of a longer
/// line is read and dropped. Returns the bytes read, 0 at EOF.
fn read_line(input: &mut impl BufRead, buf: &mut Vec<u8>) -> io::Result<usize> {
    let mut total = 0;
    loop {
        let (done, used) = {
            let chunk = input.fill_buf()?;
            if chunk.is_empty() {
                return Ok(total);
            }
            let (line, done) = match chunk.iter().position(|b| *b == b'\n') {
                Some(i) => (chunk.get(..=i).unwrap_or(chunk), true),
                None => (chunk, false),
            };
            let room = MAX_LINE_BYTES.saturating_sub(buf.len());
            buf.extend_from_slice(line.get(..line.len().min(room)).unwrap_or_default());
            (done, line.len())
        };
        input.consume(used);
        total += used;
        if done {
            return Ok(total);
        }
    }
}

/// The outgoing sink: each message is one line on the protocol's stdout, flushed.
pub(super) fn stdout_lines(
    out: std::fs::File,
) -> impl Sink<String, Error = io::Error> + Send + 'static {
    let writer = tokio::fs::File::from_std(out);
    futures::sink::unfold(writer, |mut w, line: String| async move {
        let mut bytes = line.into_bytes();
        bytes.push(b'\n');
        w.write_all(&bytes).await?;
        w.flush().await?;
        Ok::<_, io::Error>(w)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8]) -> Vec<String> {
        let (tx, mut rx) = mpsc::channel(16);
        read_lines(io::Cursor::new(input.to_vec()), &tx);
        drop(tx);
        let mut out = Vec::new();
        while let Ok(l) = rx.try_recv() {
            out.push(l);
        }
        out
    }

    #[test]
    fn lines_are_split_trimmed_and_decoded_lossily() {
        assert_eq!(
            lines(b"{\"a\":1}\r\n\n  \n{\"b\":\xff}\n{\"c\":3}"),
            ["{\"a\":1}", "{\"b\":\u{fffd}}", "{\"c\":3}"]
        );
    }

    #[test]
    fn a_huge_line_is_cut_and_the_next_one_still_read() {
        let mut input = vec![b'x'; MAX_LINE_BYTES + 10];
        input.extend_from_slice(b"\nnext\n");
        let got = lines(&input);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].len(), MAX_LINE_BYTES);
        assert_eq!(got[1], "next");
    }
}
