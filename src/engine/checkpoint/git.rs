//! Git's own store as a source of contents: a file whose `lstat` is what git's index recorded for
//! it holds the blob the index names (git's own rule for `git status`), so a checkpoint names that
//! blob (see [`ObjectId::git`]) instead of reading and copying the file. This is what makes the
//! first checkpoint of a large repository cheap.
//!
//! - *The index* (`.git/index`, versions 2 to 4) is read here, never written, and streamed: read
//!   through once to check it, then once for its entries, never held whole. An entry is used
//!   only when it is merged (stage 0), not marked assume-valid, skip-worktree or intent-to-add,
//!   not "racily clean" (changed in the same clock tick as the index was written, which git too
//!   checks by content), and its recorded size, times and inode equal the file's. A split index,
//!   a SHA-256 repository, an entry longer than 64 KiB or anything unexpected: no entries, and
//!   files are read as before.
//! - *Blobs* are read back with `git cat-file` when a restore or a line count needs them, and
//!   checked against their id. The `git` binary is needed only then.
//! - *A file read anyway* (its `lstat` changed) whose bytes are still the blob it was keeps the
//!   blob's id, so touching a file or changing its mode is not a change of contents.
//! - *What git may lose*: a blob only the index named (staged, then staged again, never
//!   committed) can be removed by `git gc` after two weeks. A checkpoint naming it then cannot
//!   restore that file: the restore says the content is missing, as for a damaged store.

use std::collections::HashMap;
use std::fs;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::object_id::ObjectId;
#[cfg(test)]
use super::path::RelPath;

/// The repository holding a workspace.
#[derive(Debug, Clone)]
pub(crate) struct Repo {
    /// Its git directory (a worktree's own, for a linked worktree).
    pub git_dir: PathBuf,
    /// The workspace's path inside the work tree, `/`-terminated (empty at its root).
    prefix: Vec<u8>,
}

/// One merged entry of the index: what git recorded of the file, and its blob.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Entry {
    ctime: (u32, u32),
    mtime: (u32, u32),
    ino: u32,
    size: u32,
    pub blob: [u8; 20],
}

/// What `lstat` says of a file, as far as git's index records it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Seen {
    pub size: u64,
    pub ino: u64,
    pub mtime: (i64, u32),
    pub ctime: (i64, u32),
}

/// The usable entries of an index, sorted by path (relative to the workspace).
#[cfg(test)]
#[derive(Debug, Default)]
pub(crate) struct Index {
    entries: Vec<(Vec<u8>, Entry)>,
}

impl Repo {
    /// The repository whose work tree holds `ws`, if any (and it is one this module reads).
    pub(crate) fn find(ws: &Path) -> Option<Repo> {
        let top = ws
            .ancestors()
            .find(|d| fs::symlink_metadata(d.join(".git")).is_ok())?;
        let dot = top.join(".git");
        let git_dir = if dot.is_dir() {
            dot
        } else {
            let text = fs::read_to_string(&dot).ok()?;
            let target = text.strip_prefix("gitdir:")?.trim();
            top.join(target)
        };
        let common = fs::read_to_string(git_dir.join("commondir"))
            .map(|c| git_dir.join(c.trim()))
            .unwrap_or_else(|_| git_dir.clone());
        let config = fs::read_to_string(common.join("config")).unwrap_or_default();
        if config.to_ascii_lowercase().contains("objectformat") {
            return None;
        }
        let rel = ws.strip_prefix(top).ok()?;
        let mut prefix = Vec::new();
        for part in rel.components() {
            use std::os::unix::ffi::OsStrExt;
            prefix.extend_from_slice(part.as_os_str().as_bytes());
            prefix.push(b'/');
        }
        Some(Repo { git_dir, prefix })
    }

    /// The usable entries of the index under the workspace (empty when it cannot be read).
    #[cfg(test)]
    pub(crate) fn index(&self) -> Index {
        let mut entries = Vec::new();
        if !self.each_entry(|rel, e| entries.push((rel.to_vec(), *e))) {
            entries.clear();
        }
        Index { entries }
    }

    /// Hand each usable entry of the index under the workspace to `each`, in path order (its
    /// path relative to the workspace); false, with nothing handed, when the index cannot be
    /// used (absent, a split index, anything unexpected).
    #[cfg(test)]
    pub(crate) fn each_entry(&self, mut each: impl FnMut(&[u8], &Entry)) -> bool {
        let Some(mut entries) = self.entries() else {
            return false;
        };
        while let Some((rel, e)) = entries.next_entry() {
            each(rel, &e);
        }
        true
    }

    /// The usable entries of the index under the workspace, in path order; None when the index
    /// cannot be used (absent, a split index, anything unexpected).
    pub(crate) fn entries(&self) -> Option<Entries> {
        let path = self.git_dir.join("index");
        let open = || -> Option<(File, (u32, u32))> {
            let file = File::open(&path).ok()?;
            let meta = file.metadata().ok()?;
            let stamp = (
                u32::try_from(meta.mtime()).unwrap_or(u32::MAX),
                u32::try_from(meta.mtime_nsec()).unwrap_or(0),
            );
            Some((file, stamp))
        };
        // Read through whole first: a split index is known only at its end.
        let (file, stamp) = open()?;
        let mut check = Parser::new(file, stamp)?;
        while check.left > 0 {
            check.entry()?;
        }
        check.extensions()?;
        let (file, _) = open()?;
        Some(Entries {
            parser: Parser::new(file, stamp)?,
            prefix: self.prefix.clone(),
        })
    }

    /// The bytes of each blob of `ids` that git's store holds, checked against its id (one
    /// `git cat-file --batch` for all).
    pub(crate) fn blobs(&self, ids: &[ObjectId]) -> HashMap<ObjectId, Vec<u8>> {
        let mut out = HashMap::new();
        let hexes: Vec<String> = ids.iter().filter_map(blob_hex).collect();
        if hexes.is_empty() {
            return out;
        }
        let spawned = Command::new("git")
            .arg("--git-dir")
            .arg(&self.git_dir)
            .args(["cat-file", "--batch"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn();
        let Ok(mut child) = spawned else {
            return out;
        };
        let (Some(mut stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return out;
        };
        let writer = std::thread::spawn(move || {
            for hex in hexes {
                if writeln!(stdin, "{hex}").is_err() {
                    break;
                }
            }
        });
        let mut r = BufReader::new(stdout);
        for id in ids.iter().filter(|id| id.git_blob().is_some()) {
            let mut header = String::new();
            if r.read_line(&mut header).ok().is_none_or(|n| n == 0) {
                break;
            }
            let mut parts = header.split_whitespace();
            let (Some(_), Some(kind), Some(size)) = (parts.next(), parts.next(), parts.next())
            else {
                continue; // "<id> missing"
            };
            let Ok(size) = size.parse::<usize>() else {
                break;
            };
            let mut bytes = vec![0u8; size];
            let mut lf = [0u8; 1];
            if r.read_exact(&mut bytes).is_err() || r.read_exact(&mut lf).is_err() {
                break;
            }
            if kind == "blob" && id.names(&bytes) {
                out.insert(*id, bytes);
            }
        }
        drop(r);
        let _ = writer.join();
        let _ = child.kill();
        let _ = child.wait();
        out
    }

    /// Whether git's store holds the blob `id` names.
    pub(crate) fn has(&self, id: &ObjectId) -> bool {
        let Some(hex) = blob_hex(id) else {
            return false;
        };
        Command::new("git")
            .arg("--git-dir")
            .arg(&self.git_dir)
            .args(["cat-file", "-e", &hex])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    /// The bytes of the blob `id` names, checked against it.
    pub(crate) fn blob(&self, id: &ObjectId) -> Option<Vec<u8>> {
        let hex = blob_hex(id)?;
        let mut child = Command::new("git")
            .arg("--git-dir")
            .arg(&self.git_dir)
            .args(["cat-file", "blob", &hex])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let mut bytes = Vec::new();
        let read = child.stdout.take()?.read_to_end(&mut bytes);
        let status = child.wait().ok()?;
        (read.is_ok() && status.success() && id.names(&bytes)).then_some(bytes)
    }
}

fn blob_hex(id: &ObjectId) -> Option<String> {
    Some(id.git_blob()?.iter().map(|b| format!("{b:02x}")).collect())
}

impl Entry {
    /// Whether a file's `lstat` (its size, inode, and modification and change times in seconds
    /// and nanoseconds) is what git recorded for it.
    pub(crate) fn matches(&self, seen: Seen) -> bool {
        let low = |n: u64| (n & 0xffff_ffff) as u32;
        let secs = |s: i64| (s & 0xffff_ffff) as u32;
        self.size == low(seen.size)
            && self.ino == low(seen.ino)
            && self.mtime == (secs(seen.mtime.0), seen.mtime.1)
            && self.ctime == (secs(seen.ctime.0), seen.ctime.1)
    }
}

#[cfg(test)]
impl Index {
    /// The blob of `path` when the file's `lstat` is what git recorded for it.
    pub(crate) fn unchanged(&self, path: &RelPath, seen: Seen) -> Option<[u8; 20]> {
        let e = self.entry(path)?;
        e.matches(seen).then_some(e.blob)
    }

    /// The blob the index names for `path`, whatever the file holds now.
    pub(crate) fn entry(&self, path: &RelPath) -> Option<&Entry> {
        let at = self
            .entries
            .binary_search_by(|(p, _)| p.as_slice().cmp(path.as_bytes()))
            .ok()?;
        self.entries.get(at).map(|(_, e)| e)
    }
}

/// The usable entries of an index under the workspace, read one at a time (the file streamed,
/// never held whole).
pub(crate) struct Entries {
    parser: Parser,
    prefix: Vec<u8>,
}

impl Entries {
    /// The path of the entry handed last, relative to the workspace.
    pub(crate) fn rel(&self) -> &[u8] {
        self.parser
            .path
            .get(self.prefix.len()..)
            .unwrap_or_default()
    }

    /// The next usable entry under the workspace (its path relative to it), None at the end.
    pub(crate) fn next_entry(&mut self) -> Option<(&[u8], Entry)> {
        loop {
            let parsed = if self.parser.left > 0 {
                self.parser.entry()
            } else {
                None
            };
            let Some(usable) = parsed else {
                self.parser.left = 0;
                return None;
            };
            if let Some(e) = usable
                && self.parser.path.starts_with(&self.prefix)
            {
                return Some((self.rel(), e));
            }
        }
    }
}

/// Bytes of a file read in order through a window of at least [`WINDOW`] bytes (or to the end).
struct Window {
    file: File,
    buf: Vec<u8>,
    at: usize,
    eof: bool,
}

/// No entry of an index is longer than this (a longer one makes the index unusable here).
const WINDOW: usize = 64 * 1024;

impl Window {
    /// At least `n` bytes from `at` on, or all that is left.
    fn ensure(&mut self, n: usize) -> Option<()> {
        if self.buf.len() - self.at >= n || self.eof {
            return Some(());
        }
        self.buf.drain(..self.at);
        self.at = 0;
        let mut chunk = [0u8; 16 * 1024];
        while self.buf.len() < n {
            let got = self.file.read(&mut chunk).ok()?;
            if got == 0 {
                self.eof = true;
                break;
            }
            self.buf.extend_from_slice(chunk.get(..got)?);
        }
        Some(())
    }

    /// A reader of what the window holds from `at` on.
    fn reader(&self) -> Reader<'_> {
        Reader {
            bytes: &self.buf,
            at: self.at,
        }
    }
}

/// Reads an index's entries in its order.
struct Parser {
    win: Window,
    version: u32,
    left: u32,
    /// The index file's modification time (entries not older are racily clean).
    stamp: (u32, u32),
    /// The last entry's full path.
    path: Vec<u8>,
}

impl Parser {
    /// A parser past the header of the index `file` (None for what this reader does not know).
    fn new(file: File, stamp: (u32, u32)) -> Option<Parser> {
        let mut win = Window {
            file,
            buf: Vec::with_capacity(2 * WINDOW),
            at: 0,
            eof: false,
        };
        win.ensure(WINDOW)?;
        let mut r = win.reader();
        if r.take(4)? != b"DIRC" {
            return None;
        }
        let version = r.u32()?;
        if !(2..=4).contains(&version) {
            return None;
        }
        let left = r.u32()?;
        win.at = r.at;
        Some(Parser {
            win,
            version,
            left,
            stamp,
            path: Vec::new(),
        })
    }

    /// The next entry (its full path in `self.path`): Some(None) for one that is not usable,
    /// None for what this reader does not know.
    fn entry(&mut self) -> Option<Option<Entry>> {
        self.win.ensure(WINDOW)?;
        let mut r = self.win.reader();
        let version = self.version;
        self.left = self.left.checked_sub(1)?;
        let start = r.at;
        let ctime = (r.u32()?, r.u32()?);
        let mtime = (r.u32()?, r.u32()?);
        let _dev = r.u32()?;
        let ino = r.u32()?;
        let mode = r.u32()?;
        let _uid = r.u32()?;
        let _gid = r.u32()?;
        let size = r.u32()?;
        let blob: [u8; 20] = r.take(20)?.try_into().ok()?;
        let flags = r.u16()?;
        let extended = if version >= 3 && flags & 0x4000 != 0 {
            r.u16()?
        } else {
            0
        };
        let path = &mut self.path;
        if version == 4 {
            let strip = r.varint()?;
            path.truncate(path.len().checked_sub(strip)?);
            path.extend_from_slice(r.until_nul()?);
        } else {
            let name = r.until_nul()?;
            path.clear();
            path.extend_from_slice(name);
            let len = r.at - start;
            r.at = start + len.div_ceil(8) * 8;
        }
        self.win.at = r.at.min(self.win.buf.len());
        let stage = (flags >> 12) & 0x3;
        let assume_valid = flags & 0x8000 != 0;
        let odd = extended & (0x4000 | 0x2000) != 0;
        let regular = mode >> 12 == 0o10;
        let racy = mtime >= self.stamp;
        let usable = stage == 0 && !assume_valid && !odd && regular && !racy;
        Some(usable.then_some(Entry {
            ctime,
            mtime,
            ino,
            size,
            blob,
        }))
    }

    /// Past the last entry: None for an extension this reader does not know how to use (a split
    /// index keeps most entries elsewhere).
    fn extensions(&mut self) -> Option<()> {
        loop {
            self.win.ensure(WINDOW)?;
            let mut r = self.win.reader();
            // The last 20 bytes are the index's checksum.
            if r.bytes.len().saturating_sub(r.at) <= 20 {
                return Some(());
            }
            let sig = r.take(4)?;
            if sig == b"link" {
                return None;
            }
            let mut len = usize::try_from(r.u32()?).ok()?;
            self.win.at = r.at;
            while len > 0 {
                self.win.ensure(len.min(WINDOW))?;
                let here = (self.win.buf.len() - self.win.at).min(len);
                if here == 0 {
                    return None;
                }
                self.win.at += here;
                len -= here;
            }
        }
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let out = self.bytes.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(out)
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_be_bytes(self.take(4)?.try_into().ok()?))
    }

    fn u16(&mut self) -> Option<u16> {
        Some(u16::from_be_bytes(self.take(2)?.try_into().ok()?))
    }

    fn until_nul(&mut self) -> Option<&'a [u8]> {
        let rest = self.bytes.get(self.at..)?;
        let end = rest.iter().position(|&b| b == 0)?;
        self.at += end + 1;
        rest.get(..end)
    }

    /// Git's offset varint (index version 4).
    fn varint(&mut self) -> Option<usize> {
        let mut c = *self.take(1)?.first()?;
        let mut val = usize::from(c & 0x7f);
        while c & 0x80 != 0 {
            c = *self.take(1)?.first()?;
            val = val.checked_add(1)?.checked_mul(128)? + usize::from(c & 0x7f);
        }
        Some(val)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(ok.status.success(), "{args:?}: {ok:?}");
    }

    #[test]
    fn every_index_version_gives_the_blobs_git_gives() {
        for version in ["2", "3", "4"] {
            let tmp = tempfile::tempdir().unwrap();
            let top = fs::canonicalize(tmp.path()).unwrap();
            git(&top, &["init", "-q"]);
            let ws = top.join("sub");
            for name in ["a.txt", "dir/b.txt", "dir/deeper/c.txt", "dir/deeper/d.txt"] {
                let p = ws.join(name);
                fs::create_dir_all(p.parent().unwrap()).unwrap();
                fs::write(&p, name.as_bytes()).unwrap();
            }
            fs::write(top.join("outside.txt"), b"o").unwrap();
            git(&top, &["add", "."]);
            git(&top, &["update-index", "--index-version", version]);
            // The index written a second later: nothing in it is racily clean.
            std::thread::sleep(std::time::Duration::from_millis(1100));
            git(&top, &["update-index", "--really-refresh"]);
            git(&top, &["update-index", "--index-version", version]);
            let repo = Repo::find(&ws).unwrap();
            let index = repo.index();
            let names: Vec<String> = index
                .entries
                .iter()
                .map(|(p, _)| String::from_utf8_lossy(p).into_owned())
                .collect();
            assert_eq!(
                names,
                ["a.txt", "dir/b.txt", "dir/deeper/c.txt", "dir/deeper/d.txt"],
                "version {version}"
            );
            for (name, entry) in &index.entries {
                let path = ws.join(String::from_utf8_lossy(name).as_ref());
                let m = fs::symlink_metadata(&path).unwrap();
                let seen = Seen {
                    size: m.size(),
                    ino: m.ino(),
                    mtime: (m.mtime(), u32::try_from(m.mtime_nsec()).unwrap()),
                    ctime: (m.ctime(), u32::try_from(m.ctime_nsec()).unwrap()),
                };
                let rel = RelPath::from_bytes(name.clone());
                assert_eq!(index.unchanged(&rel, seen), Some(entry.blob), "{version}");
                let id = ObjectId::git(entry.blob);
                assert_eq!(repo.blob(&id).unwrap(), fs::read(&path).unwrap());
                let absent = ObjectId::git([7; 20]);
                let batch = repo.blobs(&[absent, id, ObjectId::of(b"ours")]);
                assert_eq!(batch.len(), 1);
                assert_eq!(batch.get(&id), Some(&fs::read(&path).unwrap()));
                assert!(id.names(&fs::read(&path).unwrap()));
            }
        }
    }
}
