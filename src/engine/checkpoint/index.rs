//! The stat cache: for each stored file, what `lstat` said when its bytes were read (size, times,
//! inode, permission bits) and the id of those bytes. A snapshot reads again only the files whose
//! `lstat` differs, which is what keeps a turn that changed one file cheap on a big workspace.
//!
//! A file whose modification or change time is within [`RACY_MARGIN`] of the snapshot is not
//! cached: a write in the same clock tick as the read would leave every field unchanged (git
//! calls these entries "racily clean"), so such a file is read again next time.
//!
//! The cache is a binary file, written whole and renamed into place, ending in the SHA-256 of
//! what precedes it; a file that does not check out (torn, another version, damaged) is treated
//! as empty, which costs one full read of the workspace and loses nothing.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use sha2::{Digest, Sha256};

use super::object_id::ObjectId;
use super::path::RelPath;
use super::tree::Stamp;

const MAGIC: &[u8] = b"flower-stat-cache 1\n";

/// Files changed this close to a snapshot are read again by the next one.
pub(crate) const RACY_MARGIN: Duration = Duration::from_secs(2);

/// What `lstat` says of a file, as far as the cache compares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// The cache: path → (stat, content id).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct StatCache {
    pub entries: HashMap<RelPath, (Stat, ObjectId)>,
}

impl StatCache {
    /// Read the cache at `path`; anything unreadable or damaged is an empty cache.
    pub(crate) fn load(path: &Path) -> StatCache {
        std::fs::read(path)
            .ok()
            .and_then(|bytes| decode(&bytes))
            .unwrap_or_default()
    }

    /// The content id of `path` when its `stat` is what the cache saw.
    pub(crate) fn lookup(&self, path: &RelPath, stat: &Stat) -> Option<ObjectId> {
        match self.entries.get(path) {
            Some((seen, id)) if seen == stat => Some(*id),
            _ => None,
        }
    }

    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut sorted: Vec<_> = self.entries.iter().collect();
        sorted.sort_by(|a, b| a.0.cmp(b.0));
        let mut out = Vec::with_capacity(MAGIC.len() + sorted.len() * 130 + 32);
        out.extend_from_slice(MAGIC);
        for (path, (stat, id)) in sorted {
            let name = path.as_bytes();
            out.extend_from_slice(&u32::try_from(name.len()).unwrap_or(0).to_le_bytes());
            out.extend_from_slice(name);
            out.extend_from_slice(&stat.size.to_le_bytes());
            for t in [stat.mtime, stat.ctime] {
                out.extend_from_slice(&t.secs.to_le_bytes());
                out.extend_from_slice(&t.nanos.to_le_bytes());
            }
            out.extend_from_slice(&stat.ino.to_le_bytes());
            out.extend_from_slice(&stat.dev.to_le_bytes());
            out.extend_from_slice(&stat.mode.to_le_bytes());
            out.extend_from_slice(id.raw());
        }
        let sum: [u8; 32] = Sha256::digest(&out).into();
        out.extend_from_slice(&sum);
        out
    }
}

fn decode(bytes: &[u8]) -> Option<StatCache> {
    let body_len = bytes.len().checked_sub(32)?;
    let (body, sum) = (bytes.get(..body_len)?, bytes.get(body_len..)?);
    let expected: [u8; 32] = Sha256::digest(body).into();
    if sum != expected {
        return None;
    }
    let mut r = Reader(body.strip_prefix(MAGIC)?);
    let mut entries = HashMap::new();
    while !r.0.is_empty() {
        let len = usize::try_from(u32::from_le_bytes(r.array()?)).ok()?;
        let path = RelPath::from_bytes(r.take(len)?.to_vec());
        let size = u64::from_le_bytes(r.array()?);
        let mut stamp = || -> Option<Stamp> {
            Some(Stamp {
                secs: i64::from_le_bytes(r.array()?),
                nanos: u32::from_le_bytes(r.array()?),
            })
        };
        let (mtime, ctime) = (stamp()?, stamp()?);
        let stat = Stat {
            size,
            mtime,
            ctime,
            ino: u64::from_le_bytes(r.array()?),
            dev: u64::from_le_bytes(r.array()?),
            mode: u32::from_le_bytes(r.array()?),
        };
        entries.insert(path, (stat, ObjectId::from_raw(r.array()?)));
    }
    Some(StatCache { entries })
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, tail) = (self.0.get(..n)?, self.0.get(n..)?);
        self.0 = tail;
        Some(head)
    }

    fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.take(N)?.try_into().ok()
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

    #[test]
    fn round_trips_and_refuses_damage() {
        let mut cache = StatCache::default();
        for n in 0..50u64 {
            let path = RelPath::root().join(format!("dir/f{n}\n\u{e9}").as_bytes());
            cache
                .entries
                .insert(path, (stat(n), ObjectId::of(&n.to_le_bytes())));
        }
        let bytes = cache.encode();
        assert_eq!(decode(&bytes), Some(cache.clone()));
        let mut flipped = bytes.clone();
        if let Some(b) = flipped.get_mut(40) {
            *b ^= 1;
        }
        assert_eq!(decode(&flipped), None);
        for cut in [0, 10, bytes.len() / 2, bytes.len() - 1] {
            assert_eq!(decode(bytes.get(..cut).unwrap()), None, "cut at {cut}");
        }
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            StatCache::load(&dir.path().join("absent")),
            StatCache::default()
        );
    }

    #[test]
    fn lookups_need_the_same_stat_and_recent_files_are_racy() {
        let mut cache = StatCache::default();
        let p = RelPath::parse("a").unwrap();
        let id = ObjectId::of(b"a");
        cache.entries.insert(p.clone(), (stat(1), id));
        assert_eq!(cache.lookup(&p, &stat(1)), Some(id));
        let touched = Stat {
            mtime: Stamp { secs: 1, nanos: 0 },
            ..stat(1)
        };
        assert_eq!(cache.lookup(&p, &touched), None);
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
