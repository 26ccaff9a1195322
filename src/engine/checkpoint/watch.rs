//! The change feed: which paths of the workspace may have changed since the last checkpoint, so
//! the next one looks at those alone instead of walking the whole tree (see `update`).
//!
//! - **What is watched.** Every directory a full walk covers gets an inotify watch just before the
//!   walk lists it, so nothing written after the listing goes unreported; ignored directories
//!   (`target/`, `node_modules/`), `.git` and the excluded paths are never watched. A directory
//!   that appears later (created, or moved in) is reported as *new*: the next checkpoint walks it
//!   whole, adding its watches before listing it, which covers what was written in it before its
//!   watch existed.
//! - **The barrier.** The kernel queues an event inside the system call that made the change,
//!   before that call returns; the queue is read only when a checkpoint is taken, after the call
//!   that changed files has ended. So every change a finished call made is in the queue when it
//!   is read: no event can arrive late. A change still being made (a process left running) is in
//!   this checkpoint or the next, as with a walk.
//! - **When the feed is not trusted** (the checkpoint walks instead, then starts a new feed): the
//!   kernel's queue overflowed (`fs.inotify.max_queued_events` events between two checkpoints),
//!   a watch could not be added (`fs.inotify.max_user_watches`: then no feed for the rest of the
//!   session), the workspace itself moved or went away, an event names a watch we do not know,
//!   the workspace is on a network file system (changes made by other machines are not
//!   reported), or inotify is not there (other systems than Linux).
//! - **Not seen by inotify**: writes through a shared memory mapping that is never closed, and
//!   writes through a hard link that lies outside the workspace. A later walk (each start, and
//!   every overflow) catches them.
//!
//! Reported paths are "look here again": a path reported for nothing (a file made and removed,
//! a watch whose directory moved) costs one `lstat`, never a wrong checkpoint.

use std::collections::BTreeSet;
use std::path::Path;

use super::path::RelPath;

/// What the feed reported since it was last read.
#[derive(Debug, Default)]
pub(crate) struct Drained {
    /// Paths whose entry may have changed (created, written, removed, renamed, chmod-ed).
    pub dirty: BTreeSet<RelPath>,
    /// Directories that appeared: walked whole by the next checkpoint.
    pub new_dirs: BTreeSet<RelPath>,
    /// Why the feed cannot say what changed (the checkpoint walks), if it cannot.
    pub unsure: Option<&'static str>,
}

#[cfg(target_os = "linux")]
pub(crate) use linux::Watcher;

#[cfg(not(target_os = "linux"))]
pub(crate) use other::Watcher;

/// Why a feed cannot be started for `ws`, if it cannot.
fn unwatchable(ws: &Path) -> Option<&'static str> {
    #[cfg(target_os = "linux")]
    {
        if linux::on_network_fs(ws) {
            return Some("the workspace is on a network file system");
        }
        None
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = ws;
        Some("no change feed on this system")
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use std::collections::HashMap;
    use std::ffi::CString;
    use std::io;
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    use std::path::Path;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicBool, Ordering};

    use inotify::{EventMask, Inotify, WatchMask, Watches};

    use super::{Drained, RelPath, unwatchable};

    /// Events read per `read` call.
    const BUFFER: usize = 64 * 1024;

    /// One feed: an inotify instance and the directory each of its watches stands for.
    #[derive(Debug)]
    pub(crate) struct Watcher {
        inotify: Mutex<Inotify>,
        state: Mutex<State>,
        /// A watch could not be added: what this feed reports is not the whole workspace.
        broken: AtomicBool,
        /// The reason was the system's limit on watches: a new feed would fail the same way.
        limit: AtomicBool,
    }

    #[derive(Debug)]
    struct State {
        watches: Watches,
        dirs: HashMap<i32, RelPath>,
    }

    fn mask() -> WatchMask {
        WatchMask::MODIFY
            | WatchMask::ATTRIB
            | WatchMask::CLOSE_WRITE
            | WatchMask::CREATE
            | WatchMask::DELETE
            | WatchMask::MOVED_FROM
            | WatchMask::MOVED_TO
            | WatchMask::DELETE_SELF
            | WatchMask::MOVE_SELF
            | WatchMask::ONLYDIR
            | WatchMask::DONT_FOLLOW
    }

    impl Watcher {
        /// A new feed for `ws` (no watch yet), or why there is none.
        pub(crate) fn start(ws: &Path) -> Result<Watcher, String> {
            if let Some(why) = unwatchable(ws) {
                return Err(why.into());
            }
            let inotify = Inotify::init().map_err(|e| format!("inotify: {e}"))?;
            let watches = inotify.watches();
            Ok(Watcher {
                inotify: Mutex::new(inotify),
                state: Mutex::new(State {
                    watches,
                    dirs: HashMap::new(),
                }),
                broken: AtomicBool::new(false),
                limit: AtomicBool::new(false),
            })
        }

        /// Watch the directory `abs` (`rel` in the workspace) before it is listed.
        pub(crate) fn add(&self, abs: &Path, rel: &RelPath) {
            let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
            match state.watches.add(abs, mask()) {
                Ok(wd) => {
                    state.dirs.insert(wd.get_watch_descriptor_id(), rel.clone());
                }
                // Gone since it was seen: its parent's watch reports it if it comes back.
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => {
                    if e.raw_os_error() == Some(libc::ENOSPC) {
                        self.limit.store(true, Ordering::Relaxed);
                    }
                    tracing::debug!("checkpoint feed: cannot watch {}: {e}", abs.display());
                    self.broken.store(true, Ordering::Relaxed);
                }
            }
        }

        /// The inotify instance's descriptor, to wait on (its reads are the feed's own).
        pub(crate) fn fd(&self) -> std::os::fd::RawFd {
            use std::os::fd::AsRawFd;
            self.inotify
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .as_raw_fd()
        }

        /// A watch could not be added: the feed does not cover the workspace.
        pub(crate) fn broken(&self) -> bool {
            self.broken.load(Ordering::Relaxed)
        }

        /// The system's limit on watches was reached.
        pub(crate) fn at_limit(&self) -> bool {
            self.limit.load(Ordering::Relaxed)
        }

        /// How many directories are watched.
        pub(crate) fn watched(&self) -> usize {
            let state = self.state.lock().unwrap_or_else(|p| p.into_inner());
            state.dirs.len()
        }

        /// Everything queued since the last read.
        pub(crate) fn drain(&self) -> Drained {
            let mut out = Drained::default();
            if self.broken() {
                out.unsure = Some("a directory could not be watched");
                return out;
            }
            let mut inotify = self.inotify.lock().unwrap_or_else(|p| p.into_inner());
            let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
            let mut buffer = vec![0u8; BUFFER];
            loop {
                let events = match inotify.read_events(&mut buffer) {
                    Ok(events) => events,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) => {
                        tracing::debug!("checkpoint feed: {e}");
                        out.unsure = Some("the change feed could not be read");
                        break;
                    }
                };
                for event in events {
                    let name = event.name.map(|n| n.as_bytes().to_vec());
                    let wd = event.wd.get_watch_descriptor_id();
                    state.note(wd, event.mask, name, &mut out);
                }
            }
            out
        }
    }

    impl State {
        fn note(&mut self, wd: i32, mask: EventMask, name: Option<Vec<u8>>, out: &mut Drained) {
            if mask.contains(EventMask::Q_OVERFLOW) {
                out.unsure = Some("the change feed overflowed");
                return;
            }
            if mask.contains(EventMask::UNMOUNT) {
                out.unsure = Some("a file system under the workspace was unmounted");
                return;
            }
            let Some(dir) = self.dirs.get(&wd).cloned() else {
                out.unsure = Some("the change feed named an unknown watch");
                return;
            };
            if mask.contains(EventMask::IGNORED) {
                // The watch is gone (its directory removed): the parent's watch reported it.
                self.dirs.remove(&wd);
                if dir.is_root() {
                    out.unsure = Some("the workspace itself went away");
                }
                return;
            }
            match name {
                Some(name) => {
                    let path = dir.join(&name);
                    let appeared = mask.intersects(EventMask::CREATE | EventMask::MOVED_TO);
                    if appeared && mask.contains(EventMask::ISDIR) {
                        out.new_dirs.insert(path.clone());
                    }
                    out.dirty.insert(path);
                }
                None if dir.is_root()
                    && mask.intersects(EventMask::DELETE_SELF | EventMask::MOVE_SELF) =>
                {
                    out.unsure = Some("the workspace itself moved or went away");
                }
                // The directory itself: its own entry is its parent's to report.
                None => {
                    out.dirty.insert(dir);
                }
            }
        }
    }

    /// Whether `ws` lies on a file system whose changes other machines can make unseen.
    pub(super) fn on_network_fs(ws: &Path) -> bool {
        const NETWORK: &[i64] = &[
            0x6969,      // NFS
            0x517b,      // SMB
            0xff53_4d42, // CIFS
            0xfe53_4d42, // SMB2
            0x6573_5546, // FUSE (sshfs and the like)
            0x0102_1997, // 9P
            0x00c3_6400, // Ceph
            0x5346_414f, // AFS
            0x0bd0_0bd0, // Lustre
            0x4750_4653, // GPFS
        ];
        let Ok(c) = CString::new(ws.as_os_str().to_os_string().into_vec()) else {
            return true;
        };
        let mut st: libc::statfs = unsafe { std::mem::zeroed() };
        // SAFETY: `c` is a NUL-terminated path and `st` a properly sized, writable buffer.
        if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
            return true;
        }
        #[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
        let kind = i64::from(st.f_type as i64) & 0xffff_ffff;
        NETWORK.contains(&kind)
    }
}

#[cfg(not(target_os = "linux"))]
mod other {
    use std::path::Path;

    use super::{Drained, RelPath, unwatchable};

    /// No change feed on this system: every checkpoint walks.
    #[derive(Debug)]
    pub(crate) struct Watcher;

    impl Watcher {
        pub(crate) fn start(ws: &Path) -> Result<Watcher, String> {
            Err(unwatchable(ws).unwrap_or("no change feed").into())
        }
        pub(crate) fn add(&self, _abs: &Path, _rel: &RelPath) {}
        pub(crate) fn fd(&self) -> i32 {
            -1
        }
        pub(crate) fn broken(&self) -> bool {
            true
        }
        pub(crate) fn at_limit(&self) -> bool {
            false
        }
        pub(crate) fn watched(&self) -> usize {
            0
        }
        pub(crate) fn drain(&self) -> Drained {
            Drained {
                unsure: Some("no change feed on this system"),
                ..Drained::default()
            }
        }
    }
}
