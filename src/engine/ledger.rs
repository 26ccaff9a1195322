//! The run's ledger (`manifest.json`, SPEC §6.12) and the session transcripts (SPEC §10).

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::error::Error;
use super::fsutil::{atomic_write, new_id, now_unix, rfc3339};
use super::memory::StepMemory;
use super::protocol::DocumentSource;
use super::types::{Block, Message};

/// One generation of a step: one session from its start to its handoff (or to the end).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GenerationRecord {
    pub generation: u32,
    pub session_id: String,
    pub cost_usd: f64,
    pub num_turns: u32,
    /// The last main-thread ctx of this generation.
    pub context: u64,
    /// How the generation's session began (None in ledgers written before this was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<GenerationStart>,
}

/// How a generation's session began.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GenerationStart {
    /// The step's first session.
    First,
    /// A successor after a handoff.
    Handoff,
    /// `/new`: a fresh session with no handoff.
    New,
}

impl GenerationRecord {
    /// How it began; for an older ledger, guessed from the number (1 first, later a handoff).
    pub fn start(&self) -> GenerationStart {
        self.start.unwrap_or(if self.generation <= 1 {
            GenerationStart::First
        } else {
            GenerationStart::Handoff
        })
    }

    /// `gen 1`, `gen 2 · handoff`, `gen 3 · /new`: what `/cost` shows for the row.
    pub fn label(&self) -> String {
        match self.start() {
            GenerationStart::First => format!("gen {}", self.generation),
            GenerationStart::Handoff => format!("gen {} · handoff", self.generation),
            GenerationStart::New => format!("gen {} · /new", self.generation),
        }
    }
}

/// One handoff (or compaction) that replaced what the model sees.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HandoffRecord {
    /// The frozen file, or None with `--no-workbench`.
    pub path: Option<PathBuf>,
    pub degraded: bool,
    /// Why it was degraded, or what triggered it (`auto`, `manual`, `overflow`).
    pub reason: String,
    pub ctx_at_cut: u64,
    pub time: String,
    /// The session retired by this handoff and the generation that replaced it.
    pub retired_session: String,
    pub generation: u32,
    /// The sections of the document the successor read (parsed from the file as it was).
    #[serde(default)]
    pub sections: Vec<String>,
    /// The user changed the file during the review.
    #[serde(default)]
    pub edited: bool,
    /// Which path produced the document: written, rescued or degraded (SPEC §6.17).
    #[serde(default)]
    pub source: DocumentSource,
    /// Messages after the cut that the successor's briefing records (a background handoff's).
    #[serde(default)]
    pub tail: usize,
    /// What the retired session held when it was retired, and where its transcript is.
    #[serde(default)]
    pub held: Held,
}

/// Where a background handoff's document was cut (SPEC §6.16): the history's first `messages`
/// messages, the last of them holding `blocks` blocks then (a user message may grow after the cut
/// when later text joins it). The successor's briefing records everything after it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cut {
    pub messages: usize,
    pub blocks: usize,
}

impl Cut {
    /// The cut at the end of `messages`.
    pub fn at_end(messages: &[Message]) -> Cut {
        Cut {
            messages: messages.len(),
            blocks: messages.last().map_or(0, |m| m.content.len()),
        }
    }

    /// The history before the cut and after it: the part of a message that grew after the cut
    /// starts the tail. None when the history no longer holds the cut (it was replaced).
    pub fn split(self, messages: &[Message]) -> Option<(Vec<Message>, Vec<Message>)> {
        if self.messages == 0 {
            return Some((Vec::new(), messages.to_vec()));
        }
        let last = messages.get(self.messages - 1)?;
        if last.content.len() < self.blocks {
            return None;
        }
        let mut before: Vec<Message> = messages.iter().take(self.messages - 1).cloned().collect();
        before.push(Message {
            role: last.role,
            content: last.content.iter().take(self.blocks).cloned().collect(),
        });
        let mut after = Vec::new();
        let grown: Vec<Block> = last.content.iter().skip(self.blocks).cloned().collect();
        if !grown.is_empty() {
            after.push(Message {
                role: last.role,
                content: grown,
            });
        }
        after.extend(messages.iter().skip(self.messages).cloned());
        Some((before, after))
    }
}

/// What a retired generation held (SPEC §6.12, issue 11): shown on the chat's generation divider
/// and kept with its handoff in the ledger.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Held {
    /// Messages in its history.
    pub messages: usize,
    /// Tool calls in its history.
    pub tool_calls: usize,
    /// Its context when it was retired (the last response's ctx plus what was appended since).
    pub tokens: u64,
    /// Its transcript (`<run>/sessions/<id>.jsonl`), which `recall` searches.
    pub transcript: Option<PathBuf>,
}

/// A handoff frozen but not turned over yet (SPEC §6.15): its review is open, or the process died
/// during it (a signal, a closed terminal, `kill -9`). The next start in the workspace reopens the
/// review from this record; the turnover replaces it with a [`HandoffRecord`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FrozenHandoff {
    /// The live file, once written (None with `--no-workbench` or when the write failed).
    pub path: Option<PathBuf>,
    /// The freeze is done (the file written, or its write failed and `path` is None): from here on
    /// the file, with the user's edits, is the document. Before, the freeze may not have happened
    /// and is repeated from `markdown`.
    pub written: bool,
    /// The document as frozen (masked): what the successor reads if the file is gone.
    pub markdown: String,
    pub degraded: bool,
    /// As in [`HandoffRecord::reason`].
    pub reason: String,
    pub ctx_at_cut: u64,
    /// When it was frozen.
    pub time: String,
    /// The session the turnover retires and the generation that replaces it.
    pub retired_session: String,
    pub generation: u32,
    /// The user messages of the request in progress at the cut, verbatim, oldest first.
    pub request: Vec<String>,
    /// The process that froze it.
    pub pid: u32,
    /// Unsaved side-editor edits a signal kept beside the file, offered when the review reopens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unsaved: Option<PathBuf>,
    /// Which path produced the document.
    #[serde(default)]
    pub source: DocumentSource,
    /// A rescued document was written from a history with parts elided (the briefing says so).
    #[serde(default)]
    pub reduced: bool,
    /// A background handoff's cut: the successor's briefing records the session after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut: Option<Cut>,
}

/// The ledger of one step.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    pub name: String,
    /// The step's original task (the first user message).
    pub task: String,
    /// Always the latest successor: `--continue` attaches here.
    pub session_id: String,
    /// Failed tries only; a handoff does not count.
    pub attempts: u32,
    /// Session ids ended by handoff, in order.
    pub retired: Vec<String>,
    /// The last main-thread ctx.
    pub context: u64,
    pub window: u64,
    pub generations: u32,
    /// Cumulative across retries and handoffs.
    pub cost_usd: f64,
    pub num_turns: u32,
    pub per_generation: Vec<GenerationRecord>,
    pub errors: Vec<String>,
    pub handoffs: Vec<HandoffRecord>,
    /// Compactions (`--no-handoff`): the replace generation advanced without a new session.
    #[serde(default)]
    pub compactions: u32,
    /// Files the tools wrote or edited, for a degraded handoff's scene.
    #[serde(default)]
    pub touched: Vec<String>,
    /// The process that claimed this step's name in a shared run directory before its first
    /// session (`--run-dir` with a new `--step`); cleared when the step starts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claimed_by: Option<u32>,
    /// A handoff frozen and not yet turned over (its review is open or was interrupted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frozen: Option<FrozenHandoff>,
    /// The pins, the plan and the standing focus, carried into every successor's briefing.
    #[serde(default, skip_serializing_if = "StepMemory::is_empty")]
    pub memory: StepMemory,
    /// `/model` and `/effort` changes, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub settings: Vec<SettingChange>,
    /// The subagents (`task` calls) of the step, in the order they ended; their cost is in
    /// `cost_usd` and in their parent's generation too.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subagents: Vec<SubagentRecord>,
}

/// One subagent: the child session a `task` call started (SPEC §4), linked to its transcript.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SubagentRecord {
    /// The child's own session; its transcript is `sessions/<session_id>.jsonl`.
    pub session_id: String,
    /// The main-thread session whose `task` call started it.
    pub parent_session: String,
    /// The id of that `task` call.
    pub call_id: String,
    pub description: String,
    pub model: String,
    pub started: String,
    /// How it ended (`completed`, `context_full`, `overflow`, `interrupted`, …).
    pub outcome: String,
    /// Its responses' usage, summed.
    pub usage: super::types::Usage,
    /// Its last context reading (its own window; never the main thread's).
    pub context: u64,
    pub cost_usd: f64,
    pub tool_calls: u32,
    pub elapsed_ms: u64,
    /// The transcript, relative to the run directory.
    pub transcript: PathBuf,
}

/// A model or effort change during a step (`/model`, `/effort`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SettingChange {
    pub time: String,
    /// The generation it happened in.
    pub generation: u32,
    /// The model and effort in force from then on, and the window that follows from them.
    pub model: String,
    pub effort: Option<crate::engine::types::Effort>,
    pub window: u64,
}

impl StepRecord {
    /// The generation record of the current session, created when missing.
    #[expect(
        clippy::indexing_slicing,
        reason = "idx comes from position() over this vector or from the push just before it"
    )]
    pub fn current_generation(&mut self) -> &mut GenerationRecord {
        let idx = match self
            .per_generation
            .iter()
            .position(|g| g.session_id == self.session_id)
        {
            Some(i) => i,
            None => {
                self.per_generation.push(GenerationRecord {
                    generation: self.generations.max(1),
                    session_id: self.session_id.clone(),
                    ..Default::default()
                });
                self.per_generation.len() - 1
            }
        };
        &mut self.per_generation[idx]
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub run_id: String,
    pub created: String,
    pub workspace: PathBuf,
    pub provider: String,
    pub model: String,
    pub steps: Vec<StepRecord>,
}

impl Manifest {
    /// Read a ledger; every error names the file.
    pub fn load(path: &Path) -> io::Result<Manifest> {
        let text = fs::read_to_string(path)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        serde_json::from_str(&text).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{}: {e}", path.display()),
            )
        })
    }

    /// Rewrite atomically (temp file, fsync, rename).
    pub fn save(&self, path: &Path) -> io::Result<()> {
        let json = serde_json::to_string_pretty(self).map_err(io::Error::other)?;
        // Tasks, errors and reasons may quote a key: the ledger holds it masked.
        atomic_write(path, super::secrets::redact(&json).as_bytes())
    }

    /// Rewrite atomically without the fsyncs (`fsutil::atomic_write_unsynced`): a kill never
    /// loses it, a power cut may.
    pub fn save_unsynced(&self, path: &Path) -> io::Result<()> {
        let json = serde_json::to_vec_pretty(self).map_err(io::Error::other)?;
        super::fsutil::atomic_write_unsynced(path, &json)
    }
}

/// A run directory: `manifest.json` and `sessions/`.
#[derive(Debug, Clone)]
pub struct RunDir {
    pub root: PathBuf,
    pub run_id: String,
}

impl RunDir {
    /// `<data_dir>/runs/<run-id>`, or the given directory (which must not hold a run already: its
    /// ledger would be overwritten; `--continue` opens it instead, [`super::runs::join`] adds a
    /// step to it).
    pub fn create(data_dir: &Path, explicit: Option<&Path>) -> Result<RunDir, Error> {
        let run_id = new_id();
        let root = match explicit {
            Some(p) => p.to_path_buf(),
            None => data_dir.join("runs").join(&run_id),
        };
        if root.join("manifest.json").exists() {
            return Err(Error::RunDirTaken { path: root });
        }
        fs::create_dir_all(root.join("sessions"))
            .map_err(|e| Error::io("cannot create the run directory", &root, e))?;
        Ok(RunDir { root, run_id })
    }

    /// [`RunDir::create`], or — when `explicit` holds a run already — join it with the new `step`
    /// ([`super::runs::join`]).
    pub fn create_or_join(
        data_dir: &Path,
        explicit: Option<&Path>,
        step: Option<&str>,
        workspace: &Path,
    ) -> Result<RunDir, Error> {
        match explicit {
            Some(dir) if dir.join("manifest.json").exists() => {
                super::runs::join(dir, step, workspace)
            }
            _ => RunDir::create(data_dir, explicit),
        }
    }

    /// Open an existing run directory.
    pub fn open(root: &Path) -> RunDir {
        let run_id = root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        RunDir {
            root: root.to_path_buf(),
            run_id,
        }
    }

    pub fn manifest_path(&self) -> PathBuf {
        self.root.join("manifest.json")
    }

    pub fn transcript_path(&self, session_id: &str) -> PathBuf {
        self.root
            .join("sessions")
            .join(format!("{session_id}.jsonl"))
    }

    /// The most recently modified run under `<data_dir>/runs` that has a readable manifest for
    /// `workspace` ([`super::runs::latest_run`] also says which newer ones could not be read).
    pub fn latest(data_dir: &Path, workspace: &Path) -> Option<RunDir> {
        super::runs::latest_run(data_dir, workspace).run
    }
}

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
            Ok(b) => super::secrets::redact(&b).into_owned().into_bytes(),
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
pub struct LoadedTranscript {
    pub header: SessionHeader,
    /// The conversation, consecutive user messages merged (as the engine holds them, and as every
    /// provider accepts them).
    pub messages: Vec<Message>,
    /// Lines that could not be read (torn by a crash mid-write) and were skipped.
    pub torn: usize,
}

/// Rebuild the conversation of a transcript (for `--continue`).
pub fn load_transcript(path: &Path) -> io::Result<(SessionHeader, Vec<Message>)> {
    read_transcript(path).map(|t| (t.header, t.messages))
}

/// Rebuild the conversation of a transcript, counting the lines it had to skip.
pub fn read_transcript(path: &Path) -> io::Result<LoadedTranscript> {
    let named = |e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", path.display()));
    let f = File::open(path).map_err(named)?;
    let mut header = None;
    let mut messages = Vec::new();
    let mut torn = 0;
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
            TranscriptLine::Message { message } => {
                super::session::append_message(&mut messages, message)
            }
            TranscriptLine::Replaced { messages: m } => {
                messages.clear();
                for message in m {
                    super::session::append_message(&mut messages, message);
                }
            }
            TranscriptLine::Event { .. } => {}
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
    })
}

/// Now, as the ledger writes it.
pub fn now_stamp() -> String {
    rfc3339(now_unix().0)
}

#[cfg(test)]
mod tests {
    use super::*;
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
    fn manifest_save_load_and_latest() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::create(dir.path(), None).unwrap();
        let mut m = Manifest {
            run_id: run.run_id.clone(),
            ..Default::default()
        };
        m.steps.push(StepRecord {
            name: "x".into(),
            session_id: "s1".into(),
            generations: 1,
            ..Default::default()
        });
        m.steps[0].current_generation().cost_usd = 0.5;
        m.save(&run.manifest_path()).unwrap();
        assert_eq!(Manifest::load(&run.manifest_path()).unwrap(), m);
        assert!(RunDir::latest(dir.path(), Path::new("/elsewhere")).is_none());
        m.workspace = PathBuf::from("/w");
        m.save(&run.manifest_path()).unwrap();
        assert_eq!(
            RunDir::latest(dir.path(), Path::new("/w")).unwrap().root,
            run.root
        );
        // A directory that holds a run is not silently reused.
        assert!(RunDir::create(dir.path(), Some(&run.root)).is_err());
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
