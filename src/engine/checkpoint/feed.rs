//! The change feed that outlives a session: a keeper process (see `keeper`) holds the inotify
//! watches of one store's workspace between sessions, so a new process learns what changed since
//! the last checkpoint any process took, instead of walking the whole tree again.
//!
//! - **The keeper** is `flower-tui checkpoint-feed`, started in its own session (`setsid`) by the
//!   first full walk that finds none answering, its configuration on its stdin. It walks the
//!   workspace once, watching each folder before listing it, takes a checkpoint of its own from
//!   that walk (its *baseline*), then answers on `<store>/feed.sock` (the store is owner-only).
//!   At most one per store (`<store>/feed.lock`).
//! - **Sequence numbers.** Each time the keeper reads its queue it numbers what it read; a path
//!   is kept with the number it was last reported under. A question names the number the
//!   asker's checkpoint was built at and gets every path reported after it, and the number now.
//!   The keeper reads its queue before it answers, and the kernel queues an event inside the
//!   system call that made the change, so every change finished before the question is in the
//!   answer.
//! - **The base on disk** (`<store>/feed-base`): the last checkpoint built from the keeper's
//!   feed, the keeper it came from and the number it was built at. A new process builds its first
//!   checkpoint from it when the same keeper still answers and the base is less than 12 hours
//!   old; otherwise it walks.
//! - **When the keeper cannot say** (its queue overflowed, a watch could not be added, a
//!   `.gitignore` changed what is covered, too many paths changed, the workspace moved), it
//!   answers so and leaves; the next checkpoint walks and starts a new one. It also leaves after
//!   [`KEEPER_IDLE`] with no session connected, and at once when its socket is removed or
//!   replaced (the store was deleted).
//! - Only the binary itself starts a keeper: [`set_keeper_program`] is called by its `main`, so
//!   a library test never spawns its own test binary.

use std::io::{self, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::index::Reader;
use super::path::RelPath;
use super::snapshot::Skipped;
use super::update::Base;
use super::{ObjectId, SnapshotId};
use crate::engine::fsutil::now_unix;

/// A keeper with no session connected leaves after this long.
pub const KEEPER_IDLE: Duration = Duration::from_secs(3600);
/// The keeper's scheduling niceness: background work.
const KEEPER_NICE: libc::c_int = 10;
/// `ioprio_set`'s "this process" and its idle class (`IOPRIO_CLASS_IDLE << 13`).
#[cfg(target_os = "linux")]
const IOPRIO_WHO_PROCESS: libc::c_int = 1;
#[cfg(target_os = "linux")]
const IOPRIO_IDLE: libc::c_int = 3 << 13;
/// The hidden subcommand a keeper runs as.
pub const COMMAND: &str = "checkpoint-feed";
/// The most a question waits for its answer (the keeper may be watching a new folder tree).
const ANSWER_WAIT: Duration = Duration::from_secs(20);
/// The longest socket path `connect` takes (`sun_path` less its NUL).
const MAX_SOCKET_PATH: usize = 107;
const MAGIC: &[u8; 4] = b"FKP1";

static PROGRAM: OnceLock<PathBuf> = OnceLock::new();

/// Let checkpoints start keepers by running `program` (flower-tui's own executable).
pub fn set_keeper_program(program: PathBuf) {
    let _ = PROGRAM.set(program);
}

pub(crate) fn keeper_program() -> Option<&'static Path> {
    PROGRAM.get().map(PathBuf::as_path)
}

pub(crate) fn socket_path(store: &Path) -> Option<PathBuf> {
    let path = store.join("feed.sock");
    (path.as_os_str().len() <= MAX_SOCKET_PATH).then_some(path)
}

/// What a keeper says.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Answer {
    pub instance: [u8; 16],
    /// The number of the keeper's last read of its queue.
    pub seq: u64,
    /// Why it cannot say what changed (it leaves after answering), if it cannot.
    pub unsure: Option<String>,
    pub dirty: Vec<RelPath>,
    pub new_dirs: Vec<RelPath>,
}

impl Answer {
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64 + (self.dirty.len() + self.new_dirs.len()) * 40);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&self.instance);
        out.extend_from_slice(&self.seq.to_le_bytes());
        let unsure = self.unsure.as_deref().unwrap_or_default().as_bytes();
        put(&mut out, unsure);
        for list in [&self.dirty, &self.new_dirs] {
            out.extend_from_slice(&u32::try_from(list.len()).unwrap_or(u32::MAX).to_le_bytes());
            for p in list {
                put(&mut out, p.as_bytes());
            }
        }
        let mut framed = u32::try_from(out.len())
            .unwrap_or(u32::MAX)
            .to_le_bytes()
            .to_vec();
        framed.extend_from_slice(&out);
        framed
    }

    /// Read one answer from `r` (its length first).
    pub(crate) fn read(r: &mut impl Read) -> io::Result<Answer> {
        let mut len = [0u8; 4];
        r.read_exact(&mut len)?;
        let len = usize::try_from(u32::from_le_bytes(len)).unwrap_or(usize::MAX);
        let mut body = Vec::new();
        r.take(len as u64).read_to_end(&mut body)?;
        if body.len() != len {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        decode(&body).ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "a bad answer"))
    }
}

fn put(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&u32::try_from(bytes.len()).unwrap_or(u32::MAX).to_le_bytes());
    out.extend_from_slice(bytes);
}

fn decode(body: &[u8]) -> Option<Answer> {
    let mut r = Reader(body.strip_prefix(MAGIC.as_slice())?);
    let instance: [u8; 16] = r.array()?;
    let seq = u64::from_le_bytes(r.array()?);
    let unsure = r.bytes()?;
    let mut lists = [Vec::new(), Vec::new()];
    for list in &mut lists {
        let n = u32::from_le_bytes(r.array()?);
        for _ in 0..n {
            list.push(RelPath::from_wire(r.bytes()?)?);
        }
    }
    if !r.0.is_empty() {
        return None;
    }
    let [dirty, new_dirs] = lists;
    Some(Answer {
        instance,
        seq,
        unsure: (!unsure.is_empty()).then(|| String::from_utf8_lossy(unsure).into_owned()),
        dirty,
        new_dirs,
    })
}

/// A question: "what was reported after `since`?" (`u64::MAX`: nothing, just the number now).
pub(crate) fn question(since: u64) -> [u8; 9] {
    let mut q = [b'C'; 9];
    q[1..].copy_from_slice(&since.to_le_bytes());
    q
}

/// Whether the feed keeper of `workspace`'s store under `data_dir` answers, for people.
pub fn describe_keeper(data_dir: &Path, workspace: &Path) -> String {
    let ws = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
    let store = data_dir.join("checkpoints").join(super::store_name(&ws));
    if Link::connect(&store).is_err() {
        return "no feed keeper answers (the first checkpoint walks the workspace and starts one)"
            .into();
    }
    let log = std::fs::read_to_string(store.join("feed.log")).unwrap_or_default();
    match log.lines().rev().find(|l| l.contains(" watches ")) {
        Some(line) => format!("the feed keeper answers ({line})"),
        None => "the feed keeper answers".into(),
    }
}

/// One session's connection to its store's keeper (held open: a keeper with a session
/// connected does not leave).
#[derive(Debug)]
pub(crate) struct Link {
    stream: UnixStream,
    pub instance: [u8; 16],
    /// The number the session's last checkpoint was built at.
    pub since: u64,
}

impl Link {
    /// Connect to the keeper of `store`, learning who it is and its number now.
    pub(crate) fn connect(store: &Path) -> io::Result<Link> {
        let path = socket_path(store).ok_or(io::ErrorKind::InvalidFilename)?;
        let stream = UnixStream::connect(path)?;
        stream.set_read_timeout(Some(ANSWER_WAIT))?;
        stream.set_write_timeout(Some(ANSWER_WAIT))?;
        let mut link = Link {
            stream,
            instance: [0; 16],
            since: 0,
        };
        let now = link.ask(u64::MAX)?;
        if let Some(why) = now.unsure {
            return Err(io::Error::other(why));
        }
        link.instance = now.instance;
        link.since = now.seq;
        Ok(link)
    }

    /// What was reported after `since`.
    pub(crate) fn ask(&mut self, since: u64) -> io::Result<Answer> {
        self.stream.write_all(&question(since))?;
        Answer::read(&mut self.stream)
    }
}

/// The last checkpoint built from a keeper's feed, as a new process finds it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Persisted {
    pub instance: String,
    pub seq: u64,
    pub root: SnapshotId,
    pub files: usize,
    pub bytes: u64,
    pub entries: usize,
    pub skipped: Vec<Skipped>,
    /// Seconds since the epoch when it was taken.
    pub at: u64,
}

impl Persisted {
    pub(crate) fn new(instance: [u8; 16], seq: u64, base: &Base) -> Persisted {
        Persisted {
            instance: hex(&instance),
            seq,
            root: SnapshotId(base.root),
            files: base.files,
            bytes: base.bytes,
            entries: base.entries,
            skipped: base.skipped.clone(),
            at: now_unix().0,
        }
    }

    pub(crate) fn base(&self) -> Base {
        Base {
            root: self.root.0,
            files: self.files,
            bytes: self.bytes,
            entries: self.entries,
            skipped: self.skipped.clone(),
        }
    }

    pub(crate) fn age(&self) -> Duration {
        Duration::from_secs(now_unix().0.saturating_sub(self.at))
    }

    pub(crate) fn of(&self, instance: &[u8; 16]) -> bool {
        self.instance == hex(instance)
    }

    pub(crate) fn load(store: &Path) -> Option<Persisted> {
        let bytes = std::fs::read(store.join("feed-base")).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// Write it in place of the last (whole or not at all). A failure costs the next process a
    /// walk, nothing else.
    pub(crate) fn save(&self, store: &Path) {
        if let Ok(text) = serde_json::to_vec(self)
            && let Err(e) =
                crate::engine::fsutil::atomic_write_unsynced(&store.join("feed-base"), &text)
        {
            tracing::debug!("checkpoint feed: the base was not saved: {e}");
        }
    }
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A new keeper's name: unique per start (time, process and a hash of both).
pub(crate) fn new_instance() -> [u8; 16] {
    let (secs, nanos) = now_unix();
    let seed = format!("{secs}.{nanos}.{}", std::process::id());
    let id = ObjectId::of(seed.as_bytes());
    let mut out = [0u8; 16];
    out.copy_from_slice(id.raw().get(..16).unwrap_or(&[0; 16]));
    out
}

/// What a keeper is told on its stdin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct KeeperConfig {
    pub data_dir: Vec<u8>,
    pub workspace: Vec<u8>,
    pub excluded: Vec<Vec<u8>>,
    pub max_file_bytes: u64,
    pub max_checkpoint_bytes: u64,
    pub max_entries: usize,
    pub idle_secs: u64,
}

pub(crate) fn path_of(bytes: &[u8]) -> PathBuf {
    PathBuf::from(std::ffi::OsStr::from_bytes(bytes))
}

/// Start a keeper with `config`, in its own session, not waited for here (a thread reaps it).
pub(crate) fn spawn(program: &Path, config: &KeeperConfig) -> io::Result<()> {
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};
    let text = serde_json::to_vec(config).map_err(io::Error::other)?;
    let mut cmd = Command::new(program);
    cmd.arg(COMMAND)
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: `setsid`, `setpriority`, `sched_setscheduler` and the `ioprio_set` system call are
    // async-signal-safe. The first makes the child a session leader, so a signal to the session's
    // process group (a terminal's hangup, a lifeline) passes it by; the others give the CPU and
    // the disk to everything else first (the keeper's walk runs when the machine is idle).
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() < 0 {
                return Err(io::Error::last_os_error());
            }
            libc::setpriority(libc::PRIO_PROCESS, 0, KEEPER_NICE);
            #[cfg(target_os = "linux")]
            {
                let param = libc::sched_param { sched_priority: 0 };
                libc::sched_setscheduler(0, libc::SCHED_IDLE, &param);
                libc::syscall(libc::SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, IOPRIO_IDLE);
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn()?;
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(&text);
    }
    std::thread::Builder::new()
        .name("feed-keeper-reaper".into())
        .spawn(move || {
            let _ = child.wait();
        })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_round_trip_and_damage_is_refused() {
        let answer = Answer {
            instance: [7; 16],
            seq: 42,
            unsure: None,
            dirty: vec![
                RelPath::parse("a/b").unwrap(),
                RelPath::from_bytes(b"caf\xe9\nx".to_vec()),
            ],
            new_dirs: vec![RelPath::parse("a").unwrap()],
        };
        let bytes = answer.encode();
        assert_eq!(Answer::read(&mut bytes.as_slice()).unwrap(), answer);
        let unsure = Answer {
            unsure: Some("the change feed overflowed".into()),
            ..Answer::default()
        };
        assert_eq!(
            Answer::read(&mut unsure.encode().as_slice()).unwrap(),
            unsure
        );
        let outside = Answer {
            dirty: vec![RelPath::from_bytes(b"a/../../etc".to_vec())],
            ..Answer::default()
        };
        assert!(Answer::read(&mut outside.encode().as_slice()).is_err());
        for cut in [3, 10, bytes.len() - 1] {
            assert!(
                Answer::read(&mut bytes.get(..cut).unwrap()).is_err(),
                "{cut}"
            );
        }
        let mut bad = bytes.clone();
        bad[4] = b'X';
        assert!(Answer::read(&mut bad.as_slice()).is_err());
    }

    #[test]
    fn a_long_store_path_gets_no_socket() {
        assert!(socket_path(Path::new("/tmp/store")).is_some());
        assert!(socket_path(&Path::new("/tmp").join("s".repeat(120))).is_none());
    }
}
