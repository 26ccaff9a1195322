//! A job's output: every byte goes to its file in the run directory (up to [`FILE_CAP`]), the
//! newest [`RING`] bytes stay in memory, and a few facts are kept as it streams (bytes, lines,
//! the first lines, the first URL printed). Memory is bounded whatever the job prints: a job
//! that prints gigabytes costs the ring, not the gigabytes.
//!
//! Reading is by byte offset: "what is new since the last read" is the range from a reader's
//! cursor to the end. A read shows at most [`SHOW_BYTES`] (the newest part, from a line start)
//! and says how much it left out and where the whole output is; a filtered read scans the file
//! line by line, then the part of the ring the file does not hold.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use regex::Regex;

use crate::engine::text::clean_terminal_output;

/// The newest output kept in memory.
pub(crate) const RING: usize = 64 * 1024;
/// A read shows at most this much.
pub(crate) const SHOW_BYTES: usize = 16 * 1024;
/// A read shows at most this many lines.
pub(crate) const SHOW_LINES: usize = 200;
/// The file keeps at most this much; later output is in the ring only.
pub(crate) const FILE_CAP: u64 = 256 * 1024 * 1024;
/// The first lines are kept from at most this much output.
const HEAD: usize = 4 * 1024;
/// URLs are looked for in this much output at most.
const URL_SCAN: u64 = 1024 * 1024;
/// A line longer than this is not scanned for a URL.
const SCAN_LINE: usize = 4 * 1024;

/// One job's output.
#[derive(Debug)]
pub(crate) struct OutputLog {
    path: PathBuf,
    file: Option<File>,
    file_len: u64,
    /// Why the file stopped growing (full, or a write failed).
    file_note: Option<String>,
    total: u64,
    lines: u64,
    /// Covers `[total - ring.len(), total)`.
    ring: VecDeque<u8>,
    head: Vec<u8>,
    url: Option<String>,
    /// The unfinished line being scanned for a URL.
    scan: Vec<u8>,
}

/// What a read found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Shown {
    /// The text, cleaned of terminal escapes.
    pub text: String,
    /// Bytes of the range the read did not show.
    pub skipped: u64,
    /// The end of the range read: the next cursor.
    pub to: u64,
}

impl OutputLog {
    /// A log writing to `path` (created now; a failure is kept and said, the ring still works).
    pub fn create(path: PathBuf) -> OutputLog {
        let (file, note) = match File::create(&path) {
            Ok(f) => (Some(f), None),
            Err(e) => (
                None,
                Some(format!("the output file could not be created: {e}")),
            ),
        };
        OutputLog {
            path,
            file,
            file_len: 0,
            file_note: note,
            total: 0,
            lines: 0,
            ring: VecDeque::with_capacity(RING),
            head: Vec::new(),
            url: None,
            scan: Vec::new(),
        }
    }

    /// A log of a job of an earlier process: its file as it is, nothing in memory.
    pub fn on_disk(path: PathBuf, total: u64, lines: u64, url: Option<String>) -> OutputLog {
        let file_len = std::fs::metadata(&path).map_or(0, |m| m.len());
        OutputLog {
            path,
            file: None,
            file_len,
            file_note: None,
            total: total.max(file_len),
            lines,
            ring: VecDeque::new(),
            head: Vec::new(),
            url,
            scan: Vec::new(),
        }
    }

    /// New bytes from the job.
    pub fn push(&mut self, data: &[u8]) {
        if data.is_empty() {
            return;
        }
        self.write_file(data);
        if self.head.len() < HEAD {
            let n = data.len().min(HEAD - self.head.len());
            self.head
                .extend_from_slice(data.get(..n).unwrap_or_default());
        }
        if self.url.is_none() && self.total < URL_SCAN {
            self.scan_urls(data);
        }
        self.total += data.len() as u64;
        self.lines += data.iter().filter(|&&b| b == b'\n').count() as u64;
        let keep = data.len().min(RING);
        let data = data.get(data.len() - keep..).unwrap_or_default();
        let overflow = (self.ring.len() + data.len()).saturating_sub(RING);
        self.ring.drain(..overflow);
        self.ring.extend(data);
    }

    fn write_file(&mut self, data: &[u8]) {
        let Some(file) = self.file.as_mut() else {
            return;
        };
        let room = FILE_CAP.saturating_sub(self.file_len);
        let n = usize::try_from(room).unwrap_or(usize::MAX).min(data.len());
        if let Err(e) = file.write_all(data.get(..n).unwrap_or_default()) {
            self.file = None;
            self.file_note = Some(format!("writing the output file failed: {e}"));
            return;
        }
        self.file_len += n as u64;
        if n < data.len() {
            self.file = None;
            self.file_note = Some(format!(
                "the output file keeps the first {} MiB; later output is kept in memory only \
                 (its last {} KiB)",
                FILE_CAP / (1024 * 1024),
                RING / 1024
            ));
        }
    }

    fn scan_urls(&mut self, data: &[u8]) {
        for &b in data {
            if b == b'\n' {
                let line = String::from_utf8_lossy(&self.scan).into_owned();
                self.scan.clear();
                if let Some(url) = find_url(&line) {
                    self.url = Some(url);
                    return;
                }
            } else if self.scan.len() < SCAN_LINE {
                self.scan.push(b);
            }
        }
    }

    /// Bytes held in memory.
    #[cfg(test)]
    pub fn held(&self) -> usize {
        self.ring.len() + self.head.len() + self.scan.len()
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn total(&self) -> u64 {
        self.total
    }

    pub fn lines(&self) -> u64 {
        self.lines
    }

    pub fn url(&self) -> Option<&str> {
        self.url.as_deref()
    }

    pub fn file_note(&self) -> Option<&str> {
        self.file_note.as_deref()
    }

    /// The first lines the job printed (at most `n`, each at most 300 characters).
    pub fn first_lines(&self, n: usize) -> Vec<String> {
        let text = clean_terminal_output(&String::from_utf8_lossy(&self.head));
        text.lines()
            .filter(|l| !l.trim().is_empty())
            .take(n)
            .map(|l| crate::engine::text::truncate_chars(l, 300))
            .collect()
    }

    /// Where a reader who saw the [`OutputLog::first_lines`]`(n)` goes on: just past the `n`th
    /// non-empty line, or the end of the output when it holds no more than those.
    pub fn after_first_lines(&self, n: usize) -> u64 {
        let mut seen = 0;
        let mut at = 0usize;
        for line in self.head.split_inclusive(|&b| b == b'\n') {
            if seen == n {
                return at as u64;
            }
            at += line.len();
            if !clean_terminal_output(&String::from_utf8_lossy(line))
                .trim()
                .is_empty()
            {
                seen += 1;
            }
        }
        // The head read to its end: the whole output, unless it was cut at its cap.
        if at as u64 >= self.total {
            self.total
        } else {
            at as u64
        }
    }

    /// The last `n` non-empty lines (from memory, or the file's end for an earlier process's job).
    pub fn last_lines(&self, n: usize) -> Vec<String> {
        let bytes = if self.ring.is_empty() {
            read_file_tail(&self.path, self.file_len, 8 * 1024).unwrap_or_default()
        } else {
            let (a, b) = self.ring.as_slices();
            let tail = [a, b].concat();
            let from = tail.len().saturating_sub(8 * 1024);
            tail.get(from..).unwrap_or_default().to_vec()
        };
        let text = clean_terminal_output(&String::from_utf8_lossy(&bytes));
        let lines: Vec<String> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| crate::engine::text::truncate_chars(l, 300))
            .collect();
        let from = lines.len().saturating_sub(n);
        lines.get(from..).unwrap_or_default().to_vec()
    }

    /// The output from byte `from` to the end: its newest part up to [`SHOW_BYTES`] and
    /// [`SHOW_LINES`] lines, starting at a line.
    pub fn since(&self, from: u64) -> Shown {
        let from = from.min(self.total);
        let ring_start = self.total - self.ring.len() as u64;
        let mut bytes: Vec<u8> = if from >= ring_start {
            let skip = usize::try_from(from - ring_start).unwrap_or(usize::MAX);
            self.ring.iter().skip(skip).copied().collect()
        } else if self.ring.is_empty() {
            // An earlier process's job: its file.
            read_range(&self.path, from, self.file_len).unwrap_or_default()
        } else {
            self.ring.iter().copied().collect()
        };
        let available = bytes.len() as u64;
        let mut skipped = (self.total - from).saturating_sub(available);
        if bytes.len() > SHOW_BYTES {
            let cut = bytes.len() - SHOW_BYTES;
            let cut = line_start_after(&bytes, cut);
            bytes.drain(..cut);
            skipped += cut as u64;
        }
        let text = clean_terminal_output(&String::from_utf8_lossy(&bytes));
        let lines: Vec<&str> = text.lines().collect();
        let (text, more) = if lines.len() > SHOW_LINES {
            let cut = lines.len() - SHOW_LINES;
            let dropped: usize = lines.iter().take(cut).map(|l| l.len() + 1).sum();
            (lines.get(cut..).unwrap_or_default().join("\n"), dropped)
        } else {
            (text.trim_end_matches('\n').to_string(), 0)
        };
        Shown {
            text,
            skipped: skipped + more as u64,
            to: self.total,
        }
    }

    /// What a filtered read needs, taken under the table's lock; [`FilterSource::matching`] then
    /// reads the file without it.
    pub fn filter_source(&self, from: u64) -> FilterSource {
        let ring_start = self.total - self.ring.len() as u64;
        // The ring's part past the file's end (all of it once the file stopped growing).
        let beyond = self.file_len.max(ring_start).max(from);
        let skip = usize::try_from(beyond - ring_start).unwrap_or(usize::MAX);
        FilterSource {
            path: self.path.clone(),
            from,
            file_end: self.file_len,
            ring_from: beyond,
            ring: self.ring.iter().skip(skip).copied().collect(),
            to: self.total,
        }
    }
}

/// A filtered read's sources: the file up to `file_end`, then the ring's bytes from `ring_from`.
#[derive(Debug)]
pub(crate) struct FilterSource {
    path: PathBuf,
    from: u64,
    file_end: u64,
    ring_from: u64,
    ring: Vec<u8>,
    to: u64,
}

impl FilterSource {
    /// The lines matching `re` (the newest [`SHOW_LINES`]), how many matched, and the next cursor.
    /// Blocking: it reads the file.
    pub fn matching(self, re: &Regex) -> (Vec<String>, usize, u64) {
        let mut found: VecDeque<String> = VecDeque::new();
        let mut count = 0usize;
        let mut keep = |line: &str| {
            let line = clean_terminal_output(line);
            if re.is_match(&line) {
                count += 1;
                if found.len() == SHOW_LINES {
                    found.pop_front();
                }
                found.push_back(crate::engine::text::truncate_chars(&line, 500));
            }
        };
        if self.from < self.file_end
            && let Ok(mut f) = File::open(&self.path)
            && f.seek(SeekFrom::Start(self.from)).is_ok()
        {
            let reader = BufReader::new(f.take(self.file_end - self.from));
            for line in reader.split(b'\n').map_while(Result::ok) {
                keep(&String::from_utf8_lossy(&line));
            }
        }
        let gap = self.ring_from > self.file_end;
        let ring = String::from_utf8_lossy(&self.ring);
        for (i, line) in ring.split('\n').enumerate() {
            // A line cut at the ring's start is not a whole line.
            if i == 0 && gap {
                continue;
            }
            keep(line);
        }
        (found.into(), count, self.to)
    }
}

/// The index of the first byte after the first newline at or after `at` (or `at`).
fn line_start_after(bytes: &[u8], at: usize) -> usize {
    bytes
        .get(at..)
        .and_then(|rest| rest.iter().position(|&b| b == b'\n'))
        .map_or(at, |i| at + i + 1)
}

fn read_range(path: &Path, from: u64, to: u64) -> io::Result<Vec<u8>> {
    let start = from.max(to.saturating_sub(SHOW_BYTES as u64 * 2));
    let mut f = File::open(path)?;
    f.seek(SeekFrom::Start(start))?;
    let mut out = Vec::new();
    f.take(to - start).read_to_end(&mut out)?;
    Ok(out)
}

fn read_file_tail(path: &Path, len: u64, n: u64) -> io::Result<Vec<u8>> {
    read_range(path, len.saturating_sub(n), len)
}

/// The first URL in `line`: `http(s)://…`, or a bare `localhost:PORT`, `127.0.0.1:PORT`,
/// `0.0.0.0:PORT` (made `http://`).
pub(crate) fn find_url(line: &str) -> Option<String> {
    static URL: OnceLock<Option<Regex>> = OnceLock::new();
    let re = URL
        .get_or_init(|| {
            Regex::new(
                r"(https?://[^\s'\x22<>`)\]]+)|\b((?:localhost|127\.0\.0\.1|0\.0\.0\.0|\[::\]):\d{2,5})\b",
            )
            .ok()
        })
        .as_ref()?;
    let line = clean_terminal_output(line);
    let caps = re.captures(&line)?;
    if let Some(m) = caps.get(1) {
        return Some(m.as_str().trim_end_matches(['.', ',', ';']).to_string());
    }
    caps.get(2).map(|m| format!("http://{}", m.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log() -> (tempfile::TempDir, OutputLog) {
        let dir = tempfile::tempdir().unwrap();
        let log = OutputLog::create(dir.path().join("1.log"));
        (dir, log)
    }

    #[test]
    fn new_output_since_a_cursor_and_the_facts_kept() {
        let (_d, mut log) = log();
        log.push(b"starting\n  Local:   http://localhost:5173/\n");
        assert_eq!(log.url(), Some("http://localhost:5173/"));
        let first = log.since(0);
        assert_eq!(first.text, "starting\n  Local:   http://localhost:5173/");
        assert_eq!(first.skipped, 0);
        log.push(b"GET / 200\n");
        let next = log.since(first.to);
        assert_eq!(next.text, "GET / 200");
        assert_eq!(log.since(next.to).text, "");
        assert_eq!(log.lines(), 3);
        assert_eq!(log.first_lines(1), ["starting"]);
        assert_eq!(log.last_lines(1), ["GET / 200"]);
        let on_disk = std::fs::read_to_string(log.path()).unwrap();
        assert!(on_disk.ends_with("GET / 200\n"), "{on_disk}");
    }

    #[test]
    fn a_reader_of_the_first_lines_goes_on_after_them() {
        let (_d, mut log) = log();
        log.push(b"one\n\n\x1b[32mtwo\x1b[0m\n");
        assert_eq!(log.after_first_lines(5), log.total(), "all of it shown");
        log.push(b"three\nfour\n");
        assert_eq!(log.first_lines(2), ["one", "two"]);
        let at = log.after_first_lines(2);
        assert_eq!(log.since(at).text, "three\nfour");
        assert_eq!(log.since(log.after_first_lines(0)).text.lines().count(), 5);
    }

    #[test]
    fn a_flood_keeps_the_ring_and_shows_the_newest_part() {
        let (_d, mut log) = log();
        let line = b"0123456789abcdefghijklmnopqrstuvwxyz\n";
        for _ in 0..100_000 {
            log.push(line);
        }
        assert!(log.ring.len() <= RING);
        assert_eq!(log.total(), 100_000 * line.len() as u64);
        let shown = log.since(0);
        assert!(shown.text.len() <= SHOW_BYTES, "{}", shown.text.len());
        assert!(shown.text.lines().count() <= SHOW_LINES);
        assert!(shown.skipped > 3_000_000, "{}", shown.skipped);
        assert!(shown.text.starts_with("0123"), "from a line start");
        assert_eq!(
            std::fs::metadata(log.path()).unwrap().len(),
            log.total(),
            "the file has it all"
        );
    }

    #[test]
    fn a_filter_reads_the_file_and_the_ring() {
        let (_d, mut log) = log();
        for i in 0..5000 {
            log.push(format!("line {i}{}\n", if i % 1000 == 7 { " ERROR" } else { "" }).as_bytes());
        }
        let re = Regex::new("ERROR").unwrap();
        let (found, count, to) = log.filter_source(0).matching(&re);
        assert_eq!(count, 5);
        assert_eq!(found.first().map(String::as_str), Some("line 7 ERROR"));
        assert_eq!(to, log.total());
        let (found, _, _) = log.filter_source(to).matching(&re);
        assert!(found.is_empty());
    }

    #[test]
    fn urls_are_found_in_the_usual_shapes() {
        assert_eq!(
            find_url("  ➜  Local:   \x1b[36mhttp://localhost:\x1b[1m5173\x1b[22m/\x1b[39m"),
            Some("http://localhost:5173/".into())
        );
        assert_eq!(
            find_url("Serving HTTP on 0.0.0.0 port 8000 (http://0.0.0.0:8000/) ..."),
            Some("http://0.0.0.0:8000/".into())
        );
        assert_eq!(
            find_url("listening on 127.0.0.1:3000"),
            Some("http://127.0.0.1:3000".into())
        );
        assert_eq!(find_url("compiled 12 files in 3.2s"), None);
    }
}
