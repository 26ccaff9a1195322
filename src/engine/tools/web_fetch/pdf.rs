//! A fetched PDF's text. The PDF is never parsed in flower-tui's own process: a malformed file
//! can make the parser panic (which in the TUI would take the terminal down with it), spin, or
//! ask for gigabytes. The parsing runs in a child, flower-tui itself started again with the
//! hidden subcommand `pdf-text` ([`serve`]): the PDF on its stdin, its text on stdout, one page
//! after another separated by a form feed.
//!
//! The child runs in its own process group, dies with flower-tui (the parent-death signal and the
//! lifeline watcher, as `bash` commands do), gets an empty environment, has its address space
//! limited (`RLIMIT_AS`, set between fork and exec) and is killed with its group when it takes
//! longer than its time. What it writes is read up to [`MAX_TEXT_BYTES`]; the rest is dropped
//! and the text says so. Every way it can fail (encrypted, no text layer, malformed, a limit
//! reached) is said to the model in one plain sentence.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use reqwest::Url;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

use super::super::ToolError;
use super::super::lifeline::{self, GroupKiller};

/// The hidden subcommand that reads a PDF on stdin and writes its text on stdout.
pub const COMMAND: &str = "pdf-text";
/// How long the child may take for one PDF.
pub const PDF_TIME: Duration = Duration::from_secs(10);
/// The child's address space at most (`RLIMIT_AS`, the executable's own mapping included).
pub const PDF_MEMORY: u64 = 1024 * 1024 * 1024;
/// Text read from the child at most; a long text is then spilled like any long result.
pub const MAX_TEXT_BYTES: usize = 4 * 1024 * 1024;
/// The child's exit code for a PDF it read but could not take text from (its stderr says why).
const UNREADABLE: i32 = 3;
/// Error text kept from the child.
const MAX_ERROR_BYTES: usize = 4096;
/// Separates pages in the child's output.
const PAGE_BREAK: char = '\u{c}';

/// The program that extracts a PDF's text, and its limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PdfReader {
    /// The flower-tui executable to start with [`COMMAND`]; None is this very executable.
    pub program: Option<PathBuf>,
    /// The child is killed after this long.
    pub time: Duration,
    /// The child's address space limit, in bytes.
    pub memory: u64,
}

impl Default for PdfReader {
    fn default() -> Self {
        PdfReader {
            program: None,
            time: PDF_TIME,
            memory: PDF_MEMORY,
        }
    }
}

/// Whether `body` is a PDF by its first bytes: `%PDF-` within the first 1024 (readers accept
/// some junk before the header).
pub(super) fn sniff(body: &[u8]) -> bool {
    let head = body.get(..body.len().min(1024)).unwrap_or(body);
    head.windows(5).any(|w| w == b"%PDF-")
}

/// The text of the PDF `body` fetched from `url`, as the model gets it: a source line, then the
/// pages (each after a `--- page N ---` line); or why there is none.
pub(super) async fn text(
    url: &Url,
    body: Vec<u8>,
    reader: &PdfReader,
) -> Result<String, ToolError> {
    let out = extract(body, reader).await.map_err(|why| {
        ToolError(format!(
            "{url} is a PDF whose text cannot be read: {why}. Nothing else was kept."
        ))
    })?;
    let truncated = out.len() >= MAX_TEXT_BYTES;
    let text = String::from_utf8_lossy(&out);
    let pages: Vec<&str> = text.split(PAGE_BREAK).collect();
    if pages.iter().all(|p| p.trim().is_empty()) {
        return Err(ToolError(format!(
            "{url} is a PDF with no text to read ({} page{}, no text layer: a scanned document \
             or images only). web_fetch does not recognise text in images.",
            pages.len(),
            if pages.len() == 1 { "" } else { "s" }
        )));
    }
    let mut page = format!(
        "Source: {url} (PDF, {} page{})\n",
        pages.len(),
        if pages.len() == 1 { "" } else { "s" }
    );
    for (n, text) in pages.iter().enumerate() {
        page.push_str(&format!("\n--- page {} ---\n{}\n", n + 1, text.trim()));
    }
    if truncated {
        page.push_str(&format!(
            "\n(the text goes on: only its first {} MB was read)\n",
            MAX_TEXT_BYTES / (1024 * 1024)
        ));
    }
    Ok(page)
}

/// Run the child on `body`: its stdout, or why it gave none (a clause).
async fn extract(body: Vec<u8>, reader: &PdfReader) -> Result<Vec<u8>, String> {
    let program = match &reader.program {
        Some(p) => p.clone(),
        None => std::env::current_exe()
            .map_err(|e| format!("flower-tui cannot find its own executable to read it ({e})"))?,
    };
    let mut cmd = tokio::process::Command::new(&program);
    cmd.arg(COMMAND)
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    lifeline::prepare(&mut cmd);
    limit_memory(&mut cmd, reader.memory);
    let mut child = lifeline::spawn_watched(cmd)
        .map_err(|e| format!("the PDF reader ({}) did not start: {e}", program.display()))?;
    let mut killer = GroupKiller::new(&child);
    let (Some(mut stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err("the PDF reader started without its pipes".into());
    };
    let feed = async move {
        // A child that stops reading (it failed early) closes the pipe: its exit says why.
        let _ = stdin.write_all(&body).await;
        drop(stdin);
    };
    let work = async {
        let ((), out, err, status) = tokio::join!(
            feed,
            read_capped(stdout, MAX_TEXT_BYTES),
            read_capped(stderr, MAX_ERROR_BYTES),
            child.wait()
        );
        (out, err, status)
    };
    let Ok((out, err, status)) = tokio::time::timeout(reader.time, work).await else {
        killer.kill();
        return Err(format!(
            "reading it took longer than {} s, the limit (the file may be malformed or \
             very large), so the reader was stopped",
            reader.time.as_secs_f64()
        ));
    };
    killer.disarm();
    let status = status.map_err(|e| format!("the PDF reader could not be waited for: {e}"))?;
    let err = String::from_utf8_lossy(&err);
    if status.success() {
        return Ok(out);
    }
    Err(failure(status, &err, reader.memory))
}

/// Why the child failed, from its exit and its stderr.
fn failure(status: ExitStatus, err: &str, memory: u64) -> String {
    let first = err
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
        .to_string();
    if status.code() == Some(UNREADABLE) {
        return first;
    }
    let mb = memory / (1024 * 1024);
    if err.contains("memory allocation of") || signal(status) == Some(libc::SIGABRT) {
        return format!(
            "reading it needed more than {mb} MB of memory, the limit (the file may be \
             malformed: a stream that unpacks to gigabytes), so the reader was stopped"
        );
    }
    if let Some(sig) = signal(status) {
        return format!("the PDF reader was killed by signal {sig}");
    }
    // A panic: the message after `panicked at …:`, without the backtrace hint.
    let why = err
        .lines()
        .skip_while(|l| !l.contains("panicked at"))
        .nth(1)
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .unwrap_or(first.as_str());
    format!(
        "the PDF reader failed on it ({}), so it is malformed or uses features the reader does \
         not support",
        crate::engine::text::one_line(why, 200)
    )
}

#[cfg(unix)]
fn signal(status: ExitStatus) -> Option<i32> {
    std::os::unix::process::ExitStatusExt::signal(&status)
}

#[cfg(not(unix))]
fn signal(_status: ExitStatus) -> Option<i32> {
    None
}

/// Limit the child's address space to `bytes` from its start (set between fork and exec), and
/// let it leave no core file.
fn limit_memory(cmd: &mut tokio::process::Command, bytes: u64) {
    #[cfg(unix)]
    {
        let limit = libc::rlimit {
            rlim_cur: bytes as libc::rlim_t,
            rlim_max: bytes as libc::rlim_t,
        };
        let none = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: the closure runs in the child between fork and exec, where only
        // async-signal-safe calls are allowed: two setrlimit calls on values made before the
        // fork, and an io::Error from a raw code, which does not allocate.
        unsafe {
            cmd.pre_exec(move || {
                if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0
                    || libc::setrlimit(libc::RLIMIT_CORE, &none) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
}

/// Everything `from` sends, keeping the first `cap` bytes (the rest is read and dropped, so the
/// writer never blocks on a full pipe).
async fn read_capped(mut from: impl AsyncRead + Unpin, cap: usize) -> Vec<u8> {
    let mut kept = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match from.read(&mut buf).await {
            Ok(0) | Err(_) => return kept,
            Ok(n) => {
                let room = cap.saturating_sub(kept.len());
                kept.extend_from_slice(buf.get(..n.min(room)).unwrap_or_default());
            }
        }
    }
}

/// The child's side, `flower-tui pdf-text`: read a PDF on stdin (at most the size `web_fetch`
/// takes), write its pages' text on stdout separated by form feeds. Exit code 0, or 3 with one
/// line on stderr saying why there is no text, or 2 when stdin or stdout fails. A panic in the
/// parser ends this process only (exit code 101).
pub fn serve() -> i32 {
    let mut body = Vec::new();
    let limit = super::MAX_BODY_BYTES as u64 + 1;
    if let Err(e) = std::io::stdin().lock().take(limit).read_to_end(&mut body) {
        eprintln!("reading the PDF from stdin failed: {e}");
        return 2;
    }
    if !sniff(&body) {
        eprintln!("it does not start as a PDF does (no `%PDF-` header)");
        return UNREADABLE;
    }
    let pages = match pdf_extract::extract_text_from_mem_by_pages(&body) {
        Ok(pages) => pages,
        Err(e) => {
            eprintln!("{}", describe(&e.to_string()));
            return UNREADABLE;
        }
    };
    let text = pages.join(&PAGE_BREAK.to_string());
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => 0,
        Err(_) => 2,
    }
}

/// The parser's error in words the model can act on.
fn describe(error: &str) -> String {
    let lower = error.to_ascii_lowercase();
    if lower.contains("password") || lower.contains("decrypt") || lower.contains("encrypt") {
        "it is encrypted (protected by a password), and web_fetch has no password to open it".into()
    } else {
        format!(
            "it is malformed ({})",
            crate::engine::text::one_line(error, 200)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pdf_is_known_by_its_header() {
        assert!(sniff(b"%PDF-1.4\n..."));
        assert!(sniff(b"\xef\xbb\xbf  %PDF-1.7"));
        assert!(!sniff(b"<html>%PDF"));
        assert!(!sniff(b""));
        let mut late = vec![b' '; 2000];
        late.extend_from_slice(b"%PDF-1.4");
        assert!(!sniff(&late));
    }

    #[test]
    fn errors_are_said_in_words() {
        assert!(describe("PDF error: invalid password for encrypted PDF").contains("encrypted"));
        assert!(
            describe("PDF error: failed parsing cross reference table: x")
                .starts_with("it is malformed (PDF error: failed parsing")
        );
    }
}
