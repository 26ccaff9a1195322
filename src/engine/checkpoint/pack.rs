//! Packs: many objects in one file. A checkpoint that stores many new objects at once (the first
//! of a workspace, above all) appends them to one pack instead of creating a file for each:
//! creating a file costs far more than writing its bytes, and a first checkpoint may create
//! thousands.
//!
//! `objects/pack/<name>.pack` holds the objects' bytes one after another; `<name>.idx`, written
//! (renamed into place) once the pack is complete, lists them: a header line, then for each
//! object, sorted by id, its id (32 bytes), offset and length (little-endian u64 each), then the
//! SHA-256 of what precedes. A pack without its index (a process that died writing it) names
//! nothing and is removed by the clean-up; an index that does not check out is ignored. Packs are
//! not fsynced, like loose objects: every read checks the bytes against the id.

use std::collections::HashSet;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::object_id::ObjectId;
use crate::engine::fsutil::{atomic_write_unsynced, now_unix, unique};

const MAGIC: &[u8] = b"flower-pack-index 1\n";
const ENTRY: usize = 48;

/// One object in a pack: its id, offset and length.
type Slot = ([u8; 32], u64, u64);

/// The index of one complete pack.
#[derive(Debug)]
pub(crate) struct PackIndex {
    pub pack: PathBuf,
    /// Sorted by id.
    slots: Vec<Slot>,
}

impl PackIndex {
    /// Read the index at `idx` (None when it does not check out).
    fn load(idx: &Path) -> Option<PackIndex> {
        let bytes = fs::read(idx).ok()?;
        let body_len = bytes.len().checked_sub(32)?;
        let (body, sum) = bytes.split_at(body_len);
        let expected: [u8; 32] = Sha256::digest(body).into();
        if sum != expected {
            return None;
        }
        let rows = body.strip_prefix(MAGIC)?;
        if rows.len() % ENTRY != 0 {
            return None;
        }
        let slots = rows
            .chunks_exact(ENTRY)
            .filter_map(|row| {
                let id: [u8; 32] = row.get(..32)?.try_into().ok()?;
                let at = u64::from_le_bytes(row.get(32..40)?.try_into().ok()?);
                let len = u64::from_le_bytes(row.get(40..48)?.try_into().ok()?);
                Some((id, at, len))
            })
            .collect();
        Some(PackIndex {
            pack: idx.with_extension("pack"),
            slots,
        })
    }

    fn find(&self, id: &ObjectId) -> Option<(u64, u64)> {
        let at = self
            .slots
            .binary_search_by(|(k, _, _)| k.cmp(id.raw()))
            .ok()?;
        self.slots.get(at).map(|&(_, off, len)| (off, len))
    }

    /// How many objects the pack holds, and whether any of them is in `ids`.
    pub(crate) fn count_and_any(&self, ids: &HashSet<ObjectId>) -> (usize, bool) {
        let any = self
            .slots
            .iter()
            .any(|(id, _, _)| ids.contains(&ObjectId::from_raw(*id)));
        (self.slots.len(), any)
    }
}

/// The packs of a store, as far as this process has read them, and the one being written.
#[derive(Debug, Default)]
pub(crate) struct Packs {
    read: Option<Vec<PackIndex>>,
    writing: Option<Writer>,
}

impl Packs {
    /// Every complete pack under `dir` (the `pack` folder).
    pub(crate) fn list(dir: &Path) -> Vec<PackIndex> {
        let Ok(entries) = fs::read_dir(dir) else {
            return Vec::new();
        };
        entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "idx"))
            .filter_map(|p| PackIndex::load(&p))
            .collect()
    }

    /// Where `id` is, reading the pack folder again first when `again` (another process may
    /// have written a pack since).
    fn find(&mut self, dir: &Path, id: &ObjectId, again: bool) -> Option<(PathBuf, u64, u64)> {
        if again || self.read.is_none() {
            self.read = Some(Packs::list(dir));
        }
        self.read.iter().flatten().find_map(|p| {
            let (at, len) = p.find(id)?;
            Some((p.pack.clone(), at, len))
        })
    }

    /// Whether a complete pack holds `id`, or the one being written does; `look_again`: on a
    /// miss, read the pack folder again (another process may have written a pack since).
    pub(crate) fn holds(&mut self, dir: &Path, id: &ObjectId, look_again: bool) -> bool {
        if self.writing.as_ref().is_some_and(|w| w.ids.contains(id)) {
            return true;
        }
        self.find(dir, id, false).is_some() || (look_again && self.find(dir, id, true).is_some())
    }

    /// The bytes of `id` from a pack (None: no pack holds it). Not checked against the id.
    pub(crate) fn read(&mut self, dir: &Path, id: &ObjectId) -> Option<io::Result<Vec<u8>>> {
        let mut again = false;
        loop {
            let Some((pack, at, len)) = self.find(dir, id, again) else {
                if again {
                    return None;
                }
                again = true;
                continue;
            };
            match read_at(&pack, at, len) {
                // A pack deleted since its index was read (by a clean-up): look again.
                Err(e) if e.kind() == io::ErrorKind::NotFound && !again => again = true,
                read => return Some(read),
            }
        }
    }

    /// Start a pack under `dir`: objects put from now on go into it.
    pub(crate) fn begin(&mut self, dir: &Path) -> io::Result<()> {
        if self.writing.is_none() {
            self.writing = Some(Writer::create(dir)?);
        }
        Ok(())
    }

    /// Append `bytes` to the pack being written (false: it holds them already, or none is).
    pub(crate) fn append(&mut self, id: &ObjectId, bytes: &[u8]) -> Option<io::Result<bool>> {
        let w = self.writing.as_mut()?;
        Some(w.append(id, bytes))
    }

    /// Complete the pack being written: its index is written, and its objects can be read.
    pub(crate) fn finish(&mut self) -> io::Result<()> {
        let Some(w) = self.writing.take() else {
            return Ok(());
        };
        if let Some(index) = w.finish()? {
            self.read.get_or_insert_with(Vec::new).push(index);
        }
        Ok(())
    }
}

fn read_at(pack: &Path, at: u64, len: u64) -> io::Result<Vec<u8>> {
    let file = File::open(pack)?;
    let len = usize::try_from(len).map_err(io::Error::other)?;
    let mut bytes = vec![0u8; len];
    file.read_exact_at(&mut bytes, at)?;
    Ok(bytes)
}

/// A pack being written.
#[derive(Debug)]
struct Writer {
    path: PathBuf,
    out: BufWriter<File>,
    at: u64,
    slots: Vec<Slot>,
    ids: HashSet<ObjectId>,
}

impl Writer {
    fn create(dir: &Path) -> io::Result<Writer> {
        fs::create_dir_all(dir)?;
        let name = format!(
            "pack-{}-{}-{}.pack",
            now_unix().0,
            std::process::id(),
            unique()
        );
        let path = dir.join(name);
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)?;
        Ok(Writer {
            path,
            out: BufWriter::with_capacity(1 << 20, file),
            at: 0,
            slots: Vec::new(),
            ids: HashSet::new(),
        })
    }

    fn append(&mut self, id: &ObjectId, bytes: &[u8]) -> io::Result<bool> {
        if !self.ids.insert(*id) {
            return Ok(false);
        }
        self.out.write_all(bytes)?;
        let len = bytes.len() as u64;
        self.slots.push((*id.raw(), self.at, len));
        self.at += len;
        Ok(true)
    }

    /// Flush the pack and write its index; None (and no pack left) when it holds nothing.
    fn finish(mut self) -> io::Result<Option<PackIndex>> {
        if self.slots.is_empty() {
            drop(self.out);
            let _ = fs::remove_file(&self.path);
            return Ok(None);
        }
        self.out.flush()?;
        self.slots.sort_unstable_by_key(|s| s.0);
        let mut idx = Vec::with_capacity(MAGIC.len() + self.slots.len() * ENTRY + 32);
        idx.extend_from_slice(MAGIC);
        for (id, at, len) in &self.slots {
            idx.extend_from_slice(id);
            idx.extend_from_slice(&at.to_le_bytes());
            idx.extend_from_slice(&len.to_le_bytes());
        }
        let sum: [u8; 32] = Sha256::digest(&idx).into();
        idx.extend_from_slice(&sum);
        atomic_write_unsynced(&self.path.with_extension("idx"), &idx)?;
        Ok(Some(PackIndex {
            pack: self.path,
            slots: self.slots,
        }))
    }
}
