//! The stat cache: for each stored file, what `lstat` said when its bytes were read (size, times,
//! inode, permission bits) and the id of those bytes. A snapshot reads again only the files whose
//! `lstat` differs, which is what keeps a turn that changed one file cheap on a big workspace.
//!
//! A file whose modification or change time is within [`RACY_MARGIN`] of the snapshot is not
//! cached: a write in the same clock tick as the read would leave every field unchanged (git
//! calls these entries "racily clean"), so such a file is read again next time.
//!
//! The cache is a binary file, written whole and renamed into place, its entries sorted by path
//! (bytewise, which is also the order of git's index) in blocks that each end in the SHA-256 of
//! the block. It is never held in memory: a walk reads it alongside its own sorted list of files
//! (a merge) and writes the next one the same way. A block that does not check out (torn,
//! another version, damaged), or entries out of order, end the cache there: what follows is
//! treated as absent, which costs reading those files again and loses nothing.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use sha2::{Digest, Sha256};

use super::object_id::ObjectId;
use super::tree::Stamp;
use crate::engine::fsutil::unique;

const MAGIC: &[u8] = b"flower-stat-cache 2\n";
/// Entries in one block.
const BLOCK: usize = 512;
/// No block is larger than this (a larger length is damage).
const MAX_BLOCK: usize = 16 << 20;

/// Files changed this close to a snapshot are read again by the next one.
pub(crate) const RACY_MARGIN: Duration = Duration::from_secs(2);

/// What `lstat` says of a file, as far as the cache compares it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Stat {
    pub size: u64,
    pub mtime: Stamp,
    pub ctime: Stamp,
    pub ino: u64,
    pub dev: u64,
    pub mode: u32,
}

impl Stat {
    pub(crate) fn of(meta: &std::fs::Metadata) -> Stat {
        use std::os::unix::fs::MetadataExt;
        Stat {
            size: meta.size(),
            mtime: Stamp {
                secs: meta.mtime(),
                nanos: u32::try_from(meta.mtime_nsec()).unwrap_or(0),
            },
            ctime: Stamp {
                secs: meta.ctime(),
                nanos: u32::try_from(meta.ctime_nsec()).unwrap_or(0),
            },
            ino: meta.ino(),
            dev: meta.dev(),
            mode: meta.mode(),
        }
    }

    /// Whether the file may still change within the clock tick it was read in (`now` in seconds
    /// since the epoch).
    pub(crate) fn is_racy(&self, now: Stamp) -> bool {
        let margin = i64::try_from(RACY_MARGIN.as_secs()).unwrap_or(i64::MAX);
        let line = Stamp {
            secs: now.secs.saturating_sub(margin),
            nanos: now.nanos,
        };
        self.mtime >= line || self.ctime >= line
    }
}

/// One entry of the cache: a path, what `lstat` said of it, and the id of its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Record {
    pub path: Vec<u8>,
    pub stat: Stat,
    pub id: ObjectId,
}

impl Default for Record {
    fn default() -> Record {
        Record {
            path: Vec::new(),
            stat: Stat::default(),
            id: ObjectId::from_raw([0; 32]),
        }
    }
}

/// The cache read in order, one block at a time.
pub(crate) struct CacheReader {
    src: Option<BufReader<File>>,
    block: Vec<u8>,
    at: usize,
    /// The entry read last (the one a look-up stopped at), if any.
    current: Option<Record>,
    /// Entries read so far.
    pub read: usize,
}

impl CacheReader {
    /// The cache at `path`; a missing or foreign file is an empty cache.
    pub(crate) fn open(path: &Path) -> CacheReader {
        let src = File::open(path).ok().map(BufReader::new).and_then(|mut r| {
            let mut magic = [0u8; MAGIC.len()];
            r.read_exact(&mut magic).ok()?;
            (magic == MAGIC).then_some(r)
        });
        CacheReader {
            src,
            block: Vec::new(),
            at: 0,
            current: None,
            read: 0,
        }
    }

    /// The next entry, or None at the end or at damage.
    pub(crate) fn next_record(&mut self) -> Option<&Record> {
        let mut record = self.current.take().unwrap_or_default();
        let last = std::mem::take(&mut record.path);
        if self.at >= self.block.len() && !self.next_block() {
            return None;
        }
        let parsed = parse_record(&self.block, &mut self.at, &mut record);
        if parsed.is_none() || (self.read > 0 && record.path <= last) {
            self.end();
            return None;
        }
        self.read += 1;
        self.current = Some(record);
        self.current.as_ref()
    }

    /// The entry for `path`, skipping those before it; the paths asked for must come in order.
    pub(crate) fn find(&mut self, path: &[u8]) -> Option<&Record> {
        loop {
            match &self.current {
                Some(r) if r.path.as_slice() == path => return self.current.as_ref(),
                Some(r) if r.path.as_slice() > path => return None,
                _ => {}
            }
            self.next_record()?;
        }
    }

    /// Read every entry left, counting them.
    pub(crate) fn drain(&mut self) {
        while self.next_record().is_some() {}
    }

    fn end(&mut self) {
        self.src = None;
        self.block.clear();
        self.at = 0;
        self.current = None;
    }

    /// Read and check the next block (false at the end or at damage).
    fn next_block(&mut self) -> bool {
        let Some(src) = self.src.as_mut() else {
            return false;
        };
        let loaded = (|| -> Option<()> {
            let mut len = [0u8; 4];
            src.read_exact(&mut len).ok()?;
            let len = usize::try_from(u32::from_le_bytes(len)).ok()?;
            if len == 0 || len > MAX_BLOCK {
                return None;
            }
            self.block.resize(len, 0);
            src.read_exact(&mut self.block).ok()?;
            let mut sum = [0u8; 32];
            src.read_exact(&mut sum).ok()?;
            let expected: [u8; 32] = Sha256::digest(&self.block).into();
            (sum == expected).then_some(())
        })();
        if loaded.is_none() {
            self.end();
            return false;
        }
        self.at = 0;
        true
    }
}

fn parse_record(block: &[u8], at: &mut usize, out: &mut Record) -> Option<()> {
    let mut r = Reader(block.get(*at..)?);
    let before = r.0.len();
    let len = usize::try_from(u32::from_le_bytes(r.array()?)).ok()?;
    out.path.clear();
    out.path.extend_from_slice(r.take(len)?);
    let size = u64::from_le_bytes(r.array()?);
    let mut stamp = || -> Option<Stamp> {
        Some(Stamp {
            secs: i64::from_le_bytes(r.array()?),
            nanos: u32::from_le_bytes(r.array()?),
        })
    };
    let (mtime, ctime) = (stamp()?, stamp()?);
    out.stat = Stat {
        size,
        mtime,
        ctime,
        ino: u64::from_le_bytes(r.array()?),
        dev: u64::from_le_bytes(r.array()?),
        mode: u32::from_le_bytes(r.array()?),
    };
    out.id = ObjectId::from_raw(r.array()?);
    *at += before - r.0.len();
    Some(())
}

/// The next cache, written in path order to a temporary file and renamed into place.
pub(crate) struct CacheWriter {
    path: PathBuf,
    tmp: PathBuf,
    out: BufWriter<File>,
    block: Vec<u8>,
    in_block: usize,
}

impl CacheWriter {
    pub(crate) fn create(path: &Path) -> io::Result<CacheWriter> {
        let dir = path.parent().unwrap_or(Path::new("."));
        let tmp = dir.join(format!(".stat-cache-{}-{}", std::process::id(), unique()));
        let mut out = BufWriter::with_capacity(1 << 18, File::create(&tmp)?);
        out.write_all(MAGIC)?;
        Ok(CacheWriter {
            path: path.to_path_buf(),
            tmp,
            out,
            block: Vec::with_capacity(BLOCK * 140),
            in_block: 0,
        })
    }

    /// Add an entry (paths in increasing order).
    pub(crate) fn push(&mut self, path: &[u8], stat: &Stat, id: &ObjectId) -> io::Result<()> {
        let b = &mut self.block;
        b.extend_from_slice(&u32::try_from(path.len()).unwrap_or(0).to_le_bytes());
        b.extend_from_slice(path);
        b.extend_from_slice(&stat.size.to_le_bytes());
        for t in [stat.mtime, stat.ctime] {
            b.extend_from_slice(&t.secs.to_le_bytes());
            b.extend_from_slice(&t.nanos.to_le_bytes());
        }
        b.extend_from_slice(&stat.ino.to_le_bytes());
        b.extend_from_slice(&stat.dev.to_le_bytes());
        b.extend_from_slice(&stat.mode.to_le_bytes());
        b.extend_from_slice(id.raw());
        self.in_block += 1;
        if self.in_block >= BLOCK {
            self.flush_block()?;
        }
        Ok(())
    }

    fn flush_block(&mut self) -> io::Result<()> {
        if self.block.is_empty() {
            return Ok(());
        }
        let len = u32::try_from(self.block.len()).map_err(io::Error::other)?;
        self.out.write_all(&len.to_le_bytes())?;
        self.out.write_all(&self.block)?;
        let sum: [u8; 32] = Sha256::digest(&self.block).into();
        self.out.write_all(&sum)?;
        self.block.clear();
        self.in_block = 0;
        Ok(())
    }

    /// Complete the file and put it in place.
    pub(crate) fn finish(mut self) -> io::Result<()> {
        let done = self
            .flush_block()
            .and_then(|()| self.out.flush())
            .and_then(|()| std::fs::rename(&self.tmp, &self.path));
        if done.is_err() {
            let _ = std::fs::remove_file(&self.tmp);
        }
        done
    }

    /// Give up: nothing replaces the cache.
    pub(crate) fn abandon(self) {
        let _ = std::fs::remove_file(&self.tmp);
    }
}

/// Reads fields off the front of a byte slice; None once it runs short.
pub(super) struct Reader<'a>(pub &'a [u8]);

impl<'a> Reader<'a> {
    pub(super) fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, tail) = (self.0.get(..n)?, self.0.get(n..)?);
        self.0 = tail;
        Some(head)
    }

    pub(super) fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.take(N)?.try_into().ok()
    }

    /// A length (u32, little-endian) and that many bytes.
    pub(super) fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = u32::from_le_bytes(self.array()?);
        self.take(usize::try_from(n).ok()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat(n: u64) -> Stat {
        let t = Stamp {
            secs: 1_700_000_000 + n as i64,
            nanos: 5,
        };
        Stat {
            size: n,
            mtime: t,
            ctime: t,
            ino: n * 7,
            dev: 2049,
            mode: 0o100644,
        }
    }

    fn write(path: &Path, records: &[Record]) {
        let mut w = CacheWriter::create(path).unwrap();
        for r in records {
            w.push(&r.path, &r.stat, &r.id).unwrap();
        }
        w.finish().unwrap();
    }

    fn read_all(path: &Path) -> Vec<Record> {
        let mut r = CacheReader::open(path);
        let mut out = Vec::new();
        while let Some(rec) = r.next_record() {
            out.push(rec.clone());
        }
        out
    }

    #[test]
    fn round_trips_and_refuses_damage() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stat-cache");
        let mut records: Vec<Record> = (0..1500u64)
            .map(|n| Record {
                path: format!("dir/f{n:05}\n\u{e9}").into_bytes(),
                stat: stat(n),
                id: ObjectId::of(&n.to_le_bytes()),
            })
            .collect();
        records.sort_by(|a, b| a.path.cmp(&b.path));
        write(&path, &records);
        assert_eq!(read_all(&path), records);
        // Look-ups in order skip what is not asked for.
        let mut r = CacheReader::open(&path);
        assert_eq!(r.find(&records[3].path), Some(&records[3]));
        assert_eq!(r.find(b"dir/f00003\n\xc3\xa9x"), None);
        assert_eq!(r.find(&records[1200].path), Some(&records[1200]));
        r.drain();
        assert_eq!(r.read, 1500);
        // Damage in the second block: the first block is used, nothing after the damage.
        let bytes = std::fs::read(&path).unwrap();
        let mut flipped = bytes.clone();
        // Each entry takes 101 bytes; a block is its length, its entries and its sum.
        let second = MAGIC.len() + (4 + BLOCK * 101 + 32) + 4 + 100;
        *flipped.get_mut(second).unwrap() ^= 1;
        std::fs::write(&path, &flipped).unwrap();
        assert_eq!(read_all(&path), records[..BLOCK]);
        // Torn anywhere: what is read is a prefix of what was written.
        for cut in [0, 10, bytes.len() / 2, bytes.len() - 1] {
            std::fs::write(&path, bytes.get(..cut).unwrap()).unwrap();
            let got = read_all(&path);
            assert!(got.len() < records.len(), "cut at {cut}");
            assert_eq!(got, records[..got.len()], "cut at {cut}");
        }
        // Out of order is damage too; a missing cache is empty.
        write(&path, &[records[5].clone(), records[2].clone()]);
        assert_eq!(read_all(&path), [records[5].clone()]);
        assert_eq!(read_all(&dir.path().join("absent")), []);
    }

    #[test]
    fn lookups_need_the_same_stat_and_recent_files_are_racy() {
        let touched = Stat {
            mtime: Stamp { secs: 1, nanos: 0 },
            ..stat(1)
        };
        assert_ne!(touched, stat(1));
        let s = stat(0);
        let at = |secs| Stamp {
            secs: s.mtime.secs + secs,
            nanos: 5,
        };
        assert!(s.is_racy(at(0)));
        assert!(s.is_racy(at(2)));
        assert!(!s.is_racy(at(3)));
    }
}
