//! Session transcripts, `<run>/sessions/<session id>.jsonl`: an append-only JSON-lines file per
//! session (header, messages, kept events, in-place replacements), flushed line by line with keys
//! masked, and read back into the conversation for `--continue` (a line torn by a crash is
//! skipped and counted), with the last context the provider reported for it.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::engine::types::{Message, append_message};

/// The first line of every transcript.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionHeader {
    pub session_id: String,
    pub parent_session: Option<String>,
    pub generation: u32,
    pub step: String,
    pub model: String,
    pub provider: String,
    pub started: String,
    pub workspace: PathBuf,
    /// Set for a subagent's session: it was started by a `task` call of `parent_session`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent: Option<SubagentOf>,
}

/// What marks a transcript as a subagent's: the `task` call that started it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubagentOf {
    pub call_id: String,
    pub description: String,
}

/// One line of a transcript.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum TranscriptLine {
    Header(SessionHeader),
    /// A message that is now part of the conversation the model sees.
    Message {
        message: Message,
    },
    /// An engine event worth keeping (usage, tool results, handoff phases, errors, turn ends).
    Event {
        event: serde_json::Value,
    },
    /// The history was replaced in place (compaction): the messages from here on are the new history.
    Replaced {
        messages: Vec<Message>,
    },
}

/// An append-only JSONL transcript; every line is written and flushed as it happens.
#[derive(Debug)]
pub struct Transcript {
    path: PathBuf,
    file: Option<File>,
    /// The first write error.
    pub error: Option<String>,
    reported: bool,
}

impl Transcript {
    pub fn create(path: PathBuf, header: &SessionHeader) -> Transcript {
        let opened = path
            .parent()
            .map(fs::create_dir_all)
            .unwrap_or(Ok(()))
            .and_then(|_| OpenOptions::new().create(true).append(true).open(&path));
        let mut t = Transcript::from_opened(path, opened);
        t.append(&TranscriptLine::Header(header.clone()));
        t
    }

    /// Reopen an existing transcript to append to it (`--continue`): no new header.
    pub fn open_append(path: PathBuf) -> Transcript {
        // A crash may have left a torn last line: start on a fresh line so the next one survives.
        let torn = fs::read(&path)
            .map(|b| b.last().is_some_and(|c| *c != b'\n'))
            .unwrap_or(false);
        let opened = OpenOptions::new()
            .append(true)
            .open(&path)
            .and_then(|mut f| {
                if torn {
                    f.write_all(b"\n")?;
                }
                Ok(f)
            });
        Transcript::from_opened(path, opened)
    }

    fn from_opened(path: PathBuf, opened: io::Result<File>) -> Transcript {
        match opened {
            Ok(f) => Transcript {
                path,
                file: Some(f),
                error: None,
                reported: false,
            },
            Err(e) => Transcript {
                error: Some(format!("cannot open transcript {}: {e}", path.display())),
                path,
                file: None,
                reported: false,
            },
        }
    }

    /// The first write error, once: the engine shows it as a warning.
    pub fn take_error(&mut self) -> Option<String> {
        if self.reported {
            return None;
        }
        let e = self.error.clone()?;
        self.reported = true;
        Some(e)
    }

    /// A transcript that records nothing (benchmarks).
    pub fn disabled() -> Transcript {
        Transcript {
            path: PathBuf::new(),
            file: None,
            error: None,
            reported: false,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn append(&mut self, line: &TranscriptLine) {
        let Some(f) = self.file.as_mut() else { return };
        let mut bytes = match serde_json::to_string(line) {
            Ok(b) => crate::engine::secrets::redact(&b).into_owned().into_bytes(),
            Err(e) => {
                self.error.get_or_insert_with(|| e.to_string());
                return;
            }
        };
        bytes.push(b'\n');
        if let Err(e) = f.write_all(&bytes).and_then(|_| f.flush()) {
            self.error
                .get_or_insert_with(|| format!("transcript {}: {e}", self.path.display()));
        }
    }
}

/// A transcript read back (for `--continue`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LoadedTranscript {
    pub header: SessionHeader,
    /// The conversation, consecutive user messages merged (as the engine holds them, and as every
    /// provider accepts them).
    pub messages: Vec<Message>,
    /// Lines that could not be read (torn by a crash mid-write) and were skipped.
    pub torn: usize,
    /// The last context the provider reported for this history (its last kept `usage` event),
    /// None when there is none or the history was replaced after it.
    pub last_context: Option<LastContext>,
}

/// A context reading kept in a transcript.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LastContext {
    /// The tokens the provider counted.
    pub tokens: u64,
    /// How many messages of the conversation that reading covers (the rest came after it).
    pub messages: usize,
}

/// The context of a kept `usage` event: a provider's reading, not an estimate.
fn reported_context(event: &serde_json::Value) -> Option<u64> {
    (event["type"] == "usage" && event["estimated"] == false)
        .then(|| event["context"].as_u64())
        .flatten()
}

/// Rebuild the conversation of a transcript (for `--continue`).
pub fn load_transcript(path: &Path) -> io::Result<(SessionHeader, Vec<Message>)> {
    read_transcript(path).map(|t| (t.header, t.messages))
}

/// Rebuild the conversation of a transcript, counting the lines it had to skip.
pub(crate) fn read_transcript(path: &Path) -> io::Result<LoadedTranscript> {
    let named = |e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", path.display()));
    let f = File::open(path).map_err(named)?;
    let mut header = None;
    let mut messages = Vec::new();
    let mut torn = 0;
    let mut last_context = None;
    for line in BufReader::new(f).split(b'\n') {
        let line = line.map_err(named)?;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        // A torn line (a crash mid-write) is skipped and counted, not fatal.
        let Ok(parsed) = serde_json::from_slice::<TranscriptLine>(&line) else {
            torn += 1;
            continue;
        };
        match parsed {
            TranscriptLine::Header(h) => header = Some(h),
            TranscriptLine::Message { message } => append_message(&mut messages, message),
            TranscriptLine::Replaced { messages: m } => {
                last_context = None;
                messages.clear();
                for message in m {
                    append_message(&mut messages, message);
                }
            }
            TranscriptLine::Event { event } => {
                if let Some(tokens) = reported_context(&event) {
                    last_context = Some(LastContext {
                        tokens,
                        messages: messages.len(),
                    });
                }
            }
        }
    }
    let header = header.ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{}: no session header", path.display()),
        )
    })?;
    Ok(LoadedTranscript {
        header,
        messages,
        torn,
        last_context,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::ledger::now_stamp;
    use crate::engine::types::Role;

    fn header(id: &str) -> SessionHeader {
        SessionHeader {
            session_id: id.into(),
            parent_session: None,
            generation: 1,
            step: "s".into(),
            model: "m".into(),
            provider: "p".into(),
            started: now_stamp(),
            workspace: PathBuf::from("/w"),
            subagent: None,
        }
    }

    #[test]
    fn transcript_round_trip_and_torn_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sessions/a.jsonl");
        let mut t = Transcript::create(path.clone(), &header("a"));
        t.append(&TranscriptLine::Message {
            message: Message::user("hi"),
        });
        t.append(&TranscriptLine::Message {
            message: Message::assistant("hello"),
        });
        drop(t);
        // A crash mid-line leaves a torn tail.
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"{\"type\":\"message\",\"mess").unwrap();
        let (h, msgs) = load_transcript(&path).unwrap();
        assert_eq!(h.session_id, "a");
        assert_eq!(msgs, vec![Message::user("hi"), Message::assistant("hello")]);
        // Resuming after the crash: the next line is not glued to the torn one.
        let mut t = Transcript::open_append(path.clone());
        t.append(&TranscriptLine::Message {
            message: Message::user("after"),
        });
        drop(t);
        let loaded = read_transcript(&path).unwrap();
        assert_eq!(loaded.messages.len(), 3);
        assert_eq!(loaded.torn, 1, "the torn line is counted");
        // "after" follows the assistant's "hello": nothing to merge.
        assert_eq!(loaded.messages.last(), Some(&Message::user("after")));
    }

    #[test]
    fn consecutive_user_messages_merge_and_torn_lines_count_anywhere() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sessions/b.jsonl");
        let mut t = Transcript::create(path.clone(), &header("b"));
        for m in [
            Message::user("first, then interrupted"),
            Message::user("second"),
            Message::assistant("answer"),
            Message::user("third"),
        ] {
            t.append(&TranscriptLine::Message { message: m });
        }
        drop(t);
        // A torn line in the middle (a crash, then a resume that went on), and bytes that are not
        // UTF-8: both are skipped and counted, neither stops the load.
        let text = fs::read(&path).unwrap();
        let mut damaged = Vec::new();
        for (i, line) in text.split_inclusive(|b| *b == b'\n').enumerate() {
            damaged.extend_from_slice(line);
            if i == 2 {
                damaged.extend_from_slice(b"{\"type\":\"message\",\"mes\n\xff\xfe torn\n");
            }
        }
        fs::write(&path, damaged).unwrap();
        let loaded = read_transcript(&path).unwrap();
        assert_eq!(loaded.torn, 2);
        assert_eq!(loaded.messages.len(), 3, "{:?}", loaded.messages);
        assert_eq!(loaded.messages[0].role, Role::User);
        assert_eq!(loaded.messages[0].content.len(), 2);
        assert_eq!(
            loaded.messages[0].content,
            vec![
                crate::engine::types::Block::text("first, then interrupted"),
                crate::engine::types::Block::text("second")
            ]
        );
        assert_eq!(loaded.messages[2], Message::user("third"));
    }

    #[test]
    fn unwritable_transcript_reports_error() {
        let dir = tempfile::tempdir().unwrap();
        let blocker = dir.path().join("file");
        fs::write(&blocker, "x").unwrap();
        let t = Transcript::create(blocker.join("sub/a.jsonl"), &header("a"));
        assert!(t.error.is_some());
    }
}
