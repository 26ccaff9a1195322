//! The log file: `tracing` events of this crate, one line each, appended to
//! `<data_dir>/flower/logs/flower-<date>.log` (UTC date; files older than [`KEEP_DAYS`] days are
//! removed at start). Nothing is ever written to the terminal: the TUI owns it. Every line passes
//! through [`secrets::redact`] before it reaches the disk.

use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::layer::SubscriberExt;

use crate::engine::error::Error;
use crate::engine::fsutil::{civil, now_unix};
use crate::engine::secrets;

/// Log files older than this many days are removed when a new run starts.
pub(crate) const KEEP_DAYS: u64 = 14;

/// How much goes to the log file (`--log-level`, `log_level`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum LogLevel {
    /// No log file at all.
    Off,
    Error,
    Warn,
    /// Turns, requests, retries, handoff phases, errors (the default).
    #[default]
    Info,
    /// Also tool calls and results, approvals, every event's details.
    Debug,
    Trace,
}

impl LogLevel {
    /// The accepted words, for error messages.
    pub(crate) const ACCEPTED: &'static str = "off, error, warn, info, debug, trace";

    pub(crate) fn parse(s: &str) -> Option<LogLevel> {
        Some(match s.trim().to_ascii_lowercase().as_str() {
            "off" | "none" => LogLevel::Off,
            "error" => LogLevel::Error,
            "warn" | "warning" => LogLevel::Warn,
            "info" => LogLevel::Info,
            "debug" => LogLevel::Debug,
            "trace" => LogLevel::Trace,
            _ => return None,
        })
    }

    fn filter(self) -> LevelFilter {
        match self {
            LogLevel::Off => LevelFilter::OFF,
            LogLevel::Error => LevelFilter::ERROR,
            LogLevel::Warn => LevelFilter::WARN,
            LogLevel::Info => LevelFilter::INFO,
            LogLevel::Debug => LevelFilter::DEBUG,
            LogLevel::Trace => LevelFilter::TRACE,
        }
    }
}

impl fmt::Display for LogLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LogLevel::Off => "off",
            LogLevel::Error => "error",
            LogLevel::Warn => "warn",
            LogLevel::Info => "info",
            LogLevel::Debug => "debug",
            LogLevel::Trace => "trace",
        })
    }
}

/// `<data_dir>/logs` (`data_dir` is `<data_dir>/flower`).
pub(crate) fn log_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("logs")
}

/// Today's log file: `<data_dir>/logs/flower-YYYY-MM-DD.log` (UTC).
pub(crate) fn log_path(data_dir: &Path, now_secs: u64) -> PathBuf {
    let (y, m, d, ..) = civil(now_secs);
    log_dir(data_dir).join(format!("flower-{y:04}-{m:02}-{d:02}.log"))
}

/// Appends whole lines, secrets masked, from any thread (and, `O_APPEND`, from any process).
struct LogSink {
    file: Mutex<File>,
    pid: u32,
}

impl<'a> MakeWriter<'a> for LogSink {
    type Writer = LineWriter<'a>;

    fn make_writer(&'a self) -> Self::Writer {
        LineWriter { sink: self }
    }
}

/// One event's text: the formatter hands it over in one `write`.
struct LineWriter<'a> {
    sink: &'a LogSink,
}

impl Write for LineWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        let line = format!("{} {}", self.sink.pid, secrets::redact(&text));
        let mut file = self
            .sink
            .file
            .lock()
            .map_err(|_| io::Error::other("log file lock poisoned"))?;
        file.write_all(line.as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Start logging to today's file under `data_dir` at `level`; returns the file, or None when the
/// level is `off`. Call once, before the TUI takes the terminal. Also logs panics (then the
/// previous panic hook runs, so the terminal is still restored).
pub(crate) fn init(data_dir: &Path, level: LogLevel) -> Result<Option<PathBuf>, Error> {
    if level == LogLevel::Off {
        return Ok(None);
    }
    let now = now_unix().0;
    let path = log_path(data_dir, now);
    let dir = log_dir(data_dir);
    fs::create_dir_all(&dir).map_err(|e| Error::io("cannot create the log folder", &dir, e))?;
    prune(
        &dir,
        SystemTime::now(),
        Duration::from_secs(KEEP_DAYS * 86_400),
    );
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|e| Error::io("cannot open the log file", &path, e))?;
    let sink = LogSink {
        file: Mutex::new(file),
        pid: std::process::id(),
    };
    let layer = tracing_subscriber::fmt::layer()
        .with_ansi(false)
        .with_target(true)
        .with_writer(sink);
    // Only this crate's events: the HTTP stack's own tracing stays out of the file.
    let filter = Targets::new().with_target("flower_tui", level.filter());
    let subscriber = tracing_subscriber::registry().with(layer).with(filter);
    if tracing::subscriber::set_global_default(subscriber).is_err() {
        // Already logging (a second init in one process): keep the first.
        return Ok(Some(path));
    }
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        tracing::error!(target: "flower_tui::panic", "{info}");
        previous(info);
    }));
    Ok(Some(path))
}

/// Remove `flower-*.log` files in `dir` last written more than `keep` before `now`.
pub(crate) fn prune(dir: &Path, now: SystemTime, keep: Duration) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if !(name.starts_with("flower-") && name.ends_with(".log")) {
            continue;
        }
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| now.duration_since(t).ok())
            .is_some_and(|age| age > keep);
        if old {
            let _ = fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_parse_and_print() {
        for word in ["off", "error", "warn", "info", "debug", "trace"] {
            let level = LogLevel::parse(word).unwrap();
            assert_eq!(level.to_string(), word);
            assert!(LogLevel::ACCEPTED.contains(word));
        }
        assert_eq!(LogLevel::parse(" INFO "), Some(LogLevel::Info));
        assert_eq!(LogLevel::parse("loud"), None);
        assert_eq!(LogLevel::default(), LogLevel::Info);
    }

    #[test]
    fn one_file_a_day_and_old_ones_go() {
        let dir = tempfile::tempdir().unwrap();
        let p = log_path(dir.path(), 1_795_959_605);
        assert_eq!(p, dir.path().join("logs/flower-2026-11-29.log"));
        let logs = log_dir(dir.path());
        fs::create_dir_all(&logs).unwrap();
        fs::write(logs.join("flower-2026-01-01.log"), "old").unwrap();
        fs::write(logs.join("notes.txt"), "not a log").unwrap();
        let later = SystemTime::now() + Duration::from_secs(30 * 86_400);
        prune(&logs, later, Duration::from_secs(14 * 86_400));
        assert!(!logs.join("flower-2026-01-01.log").exists());
        assert!(logs.join("notes.txt").exists(), "only our logs are pruned");
        fs::write(logs.join("flower-2026-01-02.log"), "recent").unwrap();
        prune(&logs, SystemTime::now(), Duration::from_secs(14 * 86_400));
        assert!(logs.join("flower-2026-01-02.log").exists());
    }

    #[test]
    fn lines_are_masked_and_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.log");
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .unwrap();
        let sink = LogSink {
            file: Mutex::new(file),
            pid: 42,
        };
        secrets::register("sk-logging-test-SECRET-0123456789");
        sink.make_writer()
            .write_all(b"request failed: key sk-logging-test-SECRET-0123456789 rejected\n")
            .unwrap();
        let text = fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("42 request failed: key "), "{text}");
        assert!(!text.contains("SECRET"), "{text}");
        assert!(text.ends_with("rejected\n"));
    }
}
