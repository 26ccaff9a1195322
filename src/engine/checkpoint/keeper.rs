//! The feed keeper's side (`flower-tui checkpoint-feed`, started by `feed::spawn`): one process
//! per store that watches the workspace between sessions and tells each session what changed
//! since the checkpoint it builds on (the protocol and the session's side are in `feed`).
//!
//! Its life:
//! 1. It reads its configuration on stdin and takes `<store>/feed.lock` (a second keeper of the
//!    same store leaves at once).
//! 2. Its *baseline*: a full walk that watches each folder before listing it, logged as a
//!    checkpoint (taken beside the sessions' checkpoints, not under the store's lock; again under
//!    it should a clean-up have run meanwhile); then `<store>/feed-base` names it with number 0, and the
//!    socket `<store>/feed.sock` appears (bound under another name, renamed into place), so a
//!    session that connects finds a base to build on.
//! 3. It waits on its inotify queue, its socket and its sessions (one `poll`). Each question is
//!    answered after the queue is read; a folder reported new is watched (and what it holds,
//!    by the same rules as a walk) before the answer goes out, so the session's walk of that
//!    folder comes after its watches exist.
//! 4. It leaves when it cannot say what changed any more (see `feed`), after [`feed::KEEPER_IDLE`]
//!    with no session connected, or when its socket is removed or replaced; each start and end
//!    is a line in `<store>/feed.log`.

use std::collections::HashMap;
use std::fs::{self, OpenOptions, TryLockError};
use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::feed::{self, Answer, KeeperConfig, Persisted};
use super::path::RelPath;
use super::update::Base;
use super::walk::{self, Plan};
use super::watch::Watcher;
use super::{Checkpoints, Limits, Options};
use crate::engine::fsutil::{now_unix, rfc3339};

/// More paths than this reported since the keeper started: it leaves (sessions walk) rather
/// than hold them all.
const MAX_CHANGED: usize = 200_000;
/// How often the keeper looks at its socket and its idle time when nothing happens.
const TICK_MS: i32 = 1000;

/// The hidden subcommand's body: the configuration on stdin, then the keeper's life. Returns
/// the process's exit code.
pub fn serve() -> i32 {
    let mut text = Vec::new();
    if io::stdin()
        .lock()
        .take(1 << 20)
        .read_to_end(&mut text)
        .is_err()
    {
        return 2;
    }
    let Ok(config) = serde_json::from_slice::<KeeperConfig>(&text) else {
        return 2;
    };
    let options = Options {
        limits: Limits {
            max_file_bytes: config.max_file_bytes,
            max_checkpoint_bytes: config.max_checkpoint_bytes,
            max_entries: config.max_entries,
        },
        excluded: config.excluded.iter().map(|p| feed::path_of(p)).collect(),
        watch: true,
        ..Options::default()
    };
    let data_dir = feed::path_of(&config.data_dir);
    let store = match Checkpoints::open(&data_dir, &feed::path_of(&config.workspace), options) {
        Ok(store) => store,
        Err(_) => return 1,
    };
    let idle = Duration::from_secs(config.idle_secs);
    match store.keep_feed(idle) {
        Ok(()) => 0,
        Err(why) => {
            note(
                store.store_dir(),
                &format!("keeper {} left: {why}", std::process::id()),
            );
            1
        }
    }
}

impl Checkpoints {
    /// Be this store's feed keeper until there is a reason to leave (Ok: a quiet one).
    pub(crate) fn keep_feed(&self, idle: Duration) -> Result<(), String> {
        let dir = self.store_dir().to_path_buf();
        let sock = feed::socket_path(&dir).ok_or("the store's path is too long for a socket")?;
        let lock = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(dir.join("feed.lock"))
            .map_err(|e| format!("feed.lock: {e}"))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => return Ok(()),
            Err(TryLockError::Error(e)) => return Err(format!("feed.lock: {e}")),
        }
        // The baseline is walked without the store's lock, so the sessions' checkpoints do not
        // wait for it. Only a clean-up could hurt it (deleting an old object the walk reused
        // meanwhile): if one ran, the walk is taken again under the lock.
        let pruned = || {
            fs::metadata(dir.join("pruned"))
                .and_then(|m| m.modified())
                .ok()
        };
        let before = pruned();
        let walk = || {
            self.walk("feed keeper's baseline", "a feed keeper starts", true)
                .map_err(|e| e.to_string())
        };
        let mut taken = walk()?;
        let store = self.lock().map_err(|e| e.to_string())?;
        if pruned() != before {
            taken = walk()?;
        }
        drop(store);
        let (snap, watcher) = taken;
        // The walk's lists are freed: give their pages back while the keeper waits.
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        // SAFETY: malloc_trim only returns free heap pages to the system.
        unsafe {
            libc::malloc_trim(0);
        }
        let watcher = watcher.ok_or("the workspace cannot be watched")?;
        if watcher.broken() {
            return Err("a folder could not be watched".into());
        }
        let instance = feed::new_instance();
        Persisted::new(instance, 0, &Base::of(&snap)).save(&dir);
        let listener = bind(&sock).map_err(|e| format!("{}: {e}", sock.display()))?;
        let ino = fs::symlink_metadata(&sock)
            .map_err(|e| e.to_string())?
            .ino();
        note(
            &dir,
            &format!(
                "keeper {} watches {} folders",
                std::process::id(),
                watcher.watched()
            ),
        );
        let mut keeper = Keeper {
            ws: self.workspace().to_path_buf(),
            store: self.clone(),
            watcher,
            instance,
            seq: 0,
            changed: HashMap::new(),
            new_dirs: HashMap::new(),
            dying: None,
        };
        let why = keeper.run(&listener, &sock, ino, idle);
        if fs::symlink_metadata(&sock).is_ok_and(|m| m.ino() == ino) {
            let _ = fs::remove_file(&sock);
        }
        note(&dir, &format!("keeper {} left: {why}", std::process::id()));
        Ok(())
    }
}

/// Bind the socket under a name of its own, then rename it into place.
fn bind(sock: &Path) -> io::Result<UnixListener> {
    let mut tmp = sock.as_os_str().to_os_string();
    tmp.push(format!(".{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    let _ = fs::remove_file(&tmp);
    let listener = UnixListener::bind(&tmp)?;
    fs::rename(&tmp, sock)?;
    listener.set_nonblocking(true)?;
    Ok(listener)
}

/// One line in `<store>/feed.log`.
fn note(dir: &Path, line: &str) {
    let text = format!("{} {line}\n", rfc3339(now_unix().0));
    let _ = OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("feed.log"))
        .and_then(|mut f| f.write_all(text.as_bytes()));
}

struct Keeper {
    ws: PathBuf,
    store: Checkpoints,
    watcher: Arc<Watcher>,
    instance: [u8; 16],
    /// The number of the last read of the queue that reported anything.
    seq: u64,
    /// Each path reported, with the number it was last reported under.
    changed: HashMap<RelPath, u64>,
    new_dirs: HashMap<RelPath, u64>,
    /// Why the feed can no longer be trusted (every answer says so, then the keeper leaves).
    dying: Option<String>,
}

impl Keeper {
    /// Serve until there is a reason to leave; returns it.
    fn run(&mut self, listener: &UnixListener, sock: &Path, ino: u64, idle: Duration) -> String {
        let lock = fs::symlink_metadata(sock.with_file_name("feed.lock")).map_or(0, |m| m.ino());
        let mut sessions: Vec<UnixStream> = Vec::new();
        let mut alone_since = Instant::now();
        loop {
            let mut fds: Vec<libc::pollfd> = [self.watcher.fd(), listener.as_raw_fd()]
                .into_iter()
                .chain(sessions.iter().map(AsRawFd::as_raw_fd))
                .map(|fd| libc::pollfd {
                    fd,
                    events: libc::POLLIN,
                    revents: 0,
                })
                .collect();
            let len = libc::nfds_t::try_from(fds.len()).unwrap_or(libc::nfds_t::MAX);
            // SAFETY: `fds` is a live, properly initialised array of `len` pollfd structures.
            let ready = unsafe { libc::poll(fds.as_mut_ptr(), len, TICK_MS) };
            if ready < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return format!("poll: {e}");
            }
            if fds.first().is_some_and(|f| f.revents != 0) {
                self.absorb();
            }
            let mut gone = Vec::new();
            for (k, f) in fds.iter().skip(2).enumerate() {
                if f.revents != 0
                    && let Some(session) = sessions.get_mut(k)
                    && !self.answer(session)
                {
                    gone.push(k);
                }
            }
            for k in gone.into_iter().rev() {
                sessions.swap_remove(k);
            }
            if fds.get(1).is_some_and(|f| f.revents != 0) {
                while let Ok((session, _)) = listener.accept() {
                    if session.set_nonblocking(false).is_ok()
                        && session
                            .set_read_timeout(Some(Duration::from_secs(5)))
                            .is_ok()
                        && session
                            .set_write_timeout(Some(Duration::from_secs(20)))
                            .is_ok()
                    {
                        sessions.push(session);
                    }
                }
            }
            if let Some(why) = &self.dying {
                return why.clone();
            }
            if !sessions.is_empty() {
                alone_since = Instant::now();
            } else if alone_since.elapsed() >= idle {
                return format!("no session for {} s", idle.as_secs());
            }
            if !fs::symlink_metadata(sock).is_ok_and(|m| m.ino() == ino) {
                return "its socket was removed or replaced".into();
            }
            // A store or workspace deleted while the keeper was starting (its socket made
            // after the deletion passed): nothing to keep.
            if !fs::symlink_metadata(sock.with_file_name("feed.lock"))
                .is_ok_and(|m| m.ino() == lock)
            {
                return "its lock file was removed".into();
            }
            if !self.ws.is_dir() {
                return "the workspace itself went away".into();
            }
        }
    }

    /// Answer one question from `session`; false when it left (or asked nonsense).
    fn answer(&mut self, session: &mut UnixStream) -> bool {
        let mut q = [0u8; 9];
        if session.read_exact(&mut q).is_err() || q[0] != b'C' {
            return false;
        }
        let mut since = [0u8; 8];
        since.copy_from_slice(&q[1..]);
        let since = u64::from_le_bytes(since);
        self.absorb();
        let after = |map: &HashMap<RelPath, u64>| -> Vec<RelPath> {
            map.iter()
                .filter(|(_, seq)| since != u64::MAX && **seq > since)
                .map(|(p, _)| p.clone())
                .collect()
        };
        let answer = Answer {
            instance: self.instance,
            seq: self.seq,
            unsure: self.dying.clone(),
            dirty: after(&self.changed),
            new_dirs: after(&self.new_dirs),
        };
        session.write_all(&answer.encode()).is_ok()
    }

    /// Read the queue, numbering what it reported.
    fn absorb(&mut self) {
        if self.dying.is_some() {
            return;
        }
        let fed = self.watcher.drain();
        if let Some(why) = fed.unsure {
            self.dying = Some(why.into());
            return;
        }
        if fed.dirty.is_empty() && fed.new_dirs.is_empty() {
            return;
        }
        self.seq += 1;
        for dir in fed.new_dirs {
            self.watch_tree(&dir);
            self.new_dirs.insert(dir, self.seq);
        }
        for path in fed.dirty {
            if path.name() == b".gitignore" || path.name() == b".git" {
                self.dying = Some(format!("{path} changed what may be covered"));
            }
            self.changed.insert(path, self.seq);
        }
        if self.watcher.broken() {
            self.dying = Some("a new folder could not be watched".into());
        } else if self.changed.len() + self.new_dirs.len() > MAX_CHANGED {
            self.dying = Some(format!("more than {MAX_CHANGED} paths changed"));
        }
    }

    /// Watch the new folder `top` and the folders it holds (each before it is listed), by the
    /// rules a walk keeps.
    fn watch_tree(&self, top: &RelPath) {
        let plan = Arc::new(Subtree {
            ws: self.ws.clone(),
            top: top.clone(),
            watcher: self.watcher.clone(),
        });
        let i = &self.store.inner;
        walk::scan_planned(&i.rules, i.limits.max_entries, 1, plan);
    }
}

/// The folders at and below `top`, each watched before it is listed; the folders on the way to
/// it are listed, nothing else.
struct Subtree {
    ws: PathBuf,
    top: RelPath,
    watcher: Arc<Watcher>,
}

impl Plan for Subtree {
    fn admit(&self, rel: &RelPath, is_dir: bool) -> bool {
        if !is_dir {
            return false;
        }
        if rel.is_within(&self.top) {
            self.watcher.add(&rel.on(&self.ws), rel);
            return true;
        }
        self.top.is_within(rel)
    }

    fn descend(&self, rel: &RelPath) -> bool {
        rel.is_within(&self.top) || self.top.is_within(rel)
    }
}
