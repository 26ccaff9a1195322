//! Directory listings ("trees") and the difference between two of them.
//!
//! A tree lists one directory's entries sorted by name, each a subdirectory (its tree's id), a
//! regular file (permission bits, content id, size), a symbolic link (its target's id), or an
//! entry whose content is not stored (over a cap, unreadable, a socket or fifo: its bits, size and
//! modification time, so a later change is still seen). A checkpoint is the id of the workspace
//! root's tree; unchanged directories share their tree between checkpoints, so a turn that
//! changed one file writes only the trees on that file's path, and comparing two checkpoints
//! skips every subtree whose id is equal.
//!
//! The text form, one entry a line after a `flower-tree 1` header:
//! `<kind> <mode, octal> <a> <b> <name length>:<name bytes>` where kind is `d` (a = tree id),
//! `f` (a = content id, b = size), `l` (a = target id) or `u` (a = size, b = `secs.nanos`);
//! unused fields are `0`. Names are raw bytes (a newline in a name is fine: its length is given).

use std::fmt::Write as _;

use super::error::CheckpointError;
use super::object::Objects;
use super::object_id::ObjectId;
use super::path::RelPath;

const HEADER: &[u8] = b"flower-tree 1\n";

/// A modification time: seconds and nanoseconds since the epoch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Stamp {
    pub secs: i64,
    pub nanos: u32,
}

/// One entry of a directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Node {
    Dir(ObjectId),
    File {
        mode: u32,
        id: ObjectId,
        size: u64,
    },
    Link(ObjectId),
    /// Seen but not stored: a restore cannot bring it back, and a restore never deletes it.
    Unstored {
        mode: u32,
        size: u64,
        mtime: Stamp,
    },
}

impl Node {
    pub(crate) fn is_dir(&self) -> bool {
        matches!(self, Node::Dir(_))
    }
}

/// A directory's entries, sorted by name.
pub(crate) type Tree = Vec<(Vec<u8>, Node)>;

/// The text form of `tree` (whose entries must be sorted by name).
pub(crate) fn encode(tree: &Tree) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER.len() + tree.len() * 100);
    out.extend_from_slice(HEADER);
    let mut line = String::with_capacity(100);
    for (name, node) in tree {
        line.clear();
        let _ = match node {
            Node::Dir(id) => write!(line, "d 0 {id} 0"),
            Node::File { mode, id, size } => write!(line, "f {mode:o} {id} {size}"),
            Node::Link(id) => write!(line, "l 0 {id} 0"),
            Node::Unstored { mode, size, mtime } => {
                write!(line, "u {mode:o} {size} {}.{}", mtime.secs, mtime.nanos)
            }
        };
        let _ = write!(line, " {}:", name.len());
        out.extend_from_slice(line.as_bytes());
        out.extend_from_slice(name);
        out.push(b'\n');
    }
    out
}

/// Parse the text form (the id is for the error).
pub(crate) fn decode(id: &ObjectId, bytes: &[u8]) -> Result<Tree, CheckpointError> {
    let damaged = |reason| CheckpointError::Damaged { id: *id, reason };
    let mut rest = bytes
        .strip_prefix(HEADER)
        .ok_or_else(|| damaged("a directory listing without its header"))?;
    let mut tree = Tree::new();
    while !rest.is_empty() {
        let (kind, r) = token(rest).ok_or_else(|| damaged("a listing line without its kind"))?;
        let (mode, r) = token(r).ok_or_else(|| damaged("a listing line without its mode"))?;
        let (a, r) = token(r).ok_or_else(|| damaged("a listing line cut short"))?;
        let (b, r) = token(r).ok_or_else(|| damaged("a listing line cut short"))?;
        let colon = r
            .iter()
            .position(|&c| c == b':')
            .ok_or_else(|| damaged("a listing line without its name"))?;
        let len: usize = number(r.get(..colon)).ok_or_else(|| damaged("a bad name length"))?;
        let name = r
            .get(colon + 1..colon + 1 + len)
            .ok_or_else(|| damaged("a name cut short"))?;
        rest = match r.get(colon + 1 + len..) {
            Some([b'\n', tail @ ..]) => tail,
            _ => return Err(damaged("a listing line without its end")),
        };
        let mode = std::str::from_utf8(mode)
            .ok()
            .and_then(|m| u32::from_str_radix(m, 8).ok())
            .ok_or_else(|| damaged("a bad mode"))?;
        let oid = || {
            std::str::from_utf8(a)
                .ok()
                .and_then(|s| s.parse::<ObjectId>().ok())
                .ok_or_else(|| damaged("a bad object id"))
        };
        let node = match kind {
            b"d" => Node::Dir(oid()?),
            b"f" => Node::File {
                mode,
                id: oid()?,
                size: number(Some(b)).ok_or_else(|| damaged("a bad size"))?,
            },
            b"l" => Node::Link(oid()?),
            b"u" => {
                let text = std::str::from_utf8(b).unwrap_or_default();
                let (secs, nanos) = text
                    .split_once('.')
                    .and_then(|(s, n)| Some((s.parse().ok()?, n.parse().ok()?)))
                    .ok_or_else(|| damaged("a bad time"))?;
                Node::Unstored {
                    mode,
                    size: number(Some(a)).ok_or_else(|| damaged("a bad size"))?,
                    mtime: Stamp { secs, nanos },
                }
            }
            _ => return Err(damaged("an unknown entry kind")),
        };
        tree.push((name.to_vec(), node));
    }
    Ok(tree)
}

/// The bytes before the next space, and what follows the space.
fn token(bytes: &[u8]) -> Option<(&[u8], &[u8])> {
    let at = bytes.iter().position(|&c| c == b' ')?;
    Some((bytes.get(..at)?, bytes.get(at + 1..)?))
}

fn number<T: std::str::FromStr>(bytes: Option<&[u8]>) -> Option<T> {
    std::str::from_utf8(bytes?).ok()?.parse().ok()
}

/// Read a stored tree.
pub(crate) fn load(objects: &Objects, id: &ObjectId) -> Result<Tree, CheckpointError> {
    decode(id, &objects.get(id)?)
}

/// Store a tree (its entries already in name order); its id.
pub(crate) fn store(objects: &Objects, tree: &Tree) -> Result<ObjectId, CheckpointError> {
    let bytes = encode(tree);
    let id = ObjectId::of(&bytes);
    objects
        .put(&id, &bytes)
        .map_err(CheckpointError::store(objects.dir()))?;
    Ok(id)
}

/// One path whose entry differs between two checkpoints (`None`: no entry there). Directories
/// appear too, so a restore can create and remove them; their ids do not matter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Delta {
    pub path: RelPath,
    pub before: Option<Node>,
    pub after: Option<Node>,
}

/// Every difference between the trees `a` and `b` (None: an empty or absent tree), sorted by
/// path, so a directory comes before what it holds.
pub(crate) fn diff(
    objects: &Objects,
    a: Option<&ObjectId>,
    b: Option<&ObjectId>,
) -> Result<Vec<Delta>, CheckpointError> {
    let mut out = Vec::new();
    diff_into(objects, &RelPath::root(), a, b, &mut out)?;
    out.sort_by(|x, y| x.path.cmp(&y.path));
    Ok(out)
}

fn diff_into(
    objects: &Objects,
    at: &RelPath,
    a: Option<&ObjectId>,
    b: Option<&ObjectId>,
    out: &mut Vec<Delta>,
) -> Result<(), CheckpointError> {
    if a == b {
        return Ok(());
    }
    let left = a
        .map(|id| load(objects, id))
        .transpose()?
        .unwrap_or_default();
    let right = b
        .map(|id| load(objects, id))
        .transpose()?
        .unwrap_or_default();
    let (mut l, mut r) = (left.iter().peekable(), right.iter().peekable());
    loop {
        let (name, before, after) = match (l.peek(), r.peek()) {
            (None, None) => break,
            (Some((ln, ld)), Some((rn, rd))) if ln == rn => {
                let step = (ln, Some(*ld), Some(*rd));
                l.next();
                r.next();
                step
            }
            (Some((ln, ld)), Some((rn, _))) if ln < rn => {
                let step = (ln, Some(*ld), None);
                l.next();
                step
            }
            (Some((ln, ld)), None) => {
                let step = (ln, Some(*ld), None);
                l.next();
                step
            }
            (_, Some((rn, rd))) => {
                let step = (rn, None, Some(*rd));
                r.next();
                step
            }
        };
        if before == after {
            continue;
        }
        let path = at.join(name);
        let sub = |n: Option<Node>| match n {
            Some(Node::Dir(id)) => Some(id),
            _ => None,
        };
        let (sa, sb) = (sub(before), sub(after));
        if sa.is_some() || sb.is_some() {
            diff_into(objects, &path, sa.as_ref(), sb.as_ref(), out)?;
        }
        // Two directories differ only in what they hold, which the recursion reported.
        if !(sa.is_some() && sb.is_some()) {
            out.push(Delta {
                path,
                before,
                after,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(content: &[u8], mode: u32) -> Node {
        Node::File {
            mode,
            id: ObjectId::of(content),
            size: content.len() as u64,
        }
    }

    #[test]
    fn the_text_form_round_trips_odd_names() {
        let tree: Tree = vec![
            (b"a\nb".to_vec(), file(b"x", 0o644)),
            (b"bin".to_vec(), Node::Dir(ObjectId::of(b"tree"))),
            (b"link \xff".to_vec(), Node::Link(ObjectId::of(b"target"))),
            (
                b"sock".to_vec(),
                Node::Unstored {
                    mode: 0o755,
                    size: 0,
                    mtime: Stamp {
                        secs: -5,
                        nanos: 999_999_999,
                    },
                },
            ),
        ];
        let bytes = encode(&tree);
        let id = ObjectId::of(&bytes);
        assert_eq!(decode(&id, &bytes).unwrap(), tree);
        // Damage is an error, never a panic.
        for cut in 0..bytes.len() {
            let r = decode(&id, bytes.get(..cut).unwrap());
            if cut == 0 || cut < HEADER.len() {
                assert!(r.is_err(), "cut at {cut}");
            }
        }
        assert!(decode(&id, b"flower-tree 1\nz 0 0 0 1:a\n").is_err());
        assert!(decode(&id, b"flower-tree 1\nf 9 0 0 1:a\n").is_err());
        assert!(decode(&id, b"flower-tree 1\nf 644 00 0 99:a\n").is_err());
    }

    #[test]
    fn diff_reports_files_and_the_directories_that_come_and_go() {
        let dir = tempfile::tempdir().unwrap();
        let objects = Objects::new(dir.path().to_path_buf());
        let put = |tree: Tree| store(&objects, &tree).unwrap();
        let sub = put(vec![(b"x".to_vec(), file(b"1", 0o644))]);
        let a = put(vec![
            (b"keep".to_vec(), file(b"k", 0o644)),
            (b"old".to_vec(), Node::Dir(sub)),
            (b"run".to_vec(), file(b"r", 0o644)),
        ]);
        let b = put(vec![
            (b"keep".to_vec(), file(b"k", 0o644)),
            (b"new".to_vec(), file(b"n", 0o644)),
            (b"run".to_vec(), file(b"r", 0o755)),
        ]);
        let deltas = diff(&objects, Some(&a), Some(&b)).unwrap();
        let paths: Vec<String> = deltas.iter().map(|d| d.path.lossy()).collect();
        assert_eq!(paths, ["new", "old", "old/x", "run"]);
        assert!(deltas.iter().all(|d| d.before != d.after));
        assert_eq!(diff(&objects, Some(&a), Some(&a)).unwrap(), []);
        let from_nothing = diff(&objects, None, Some(&a)).unwrap();
        assert_eq!(from_nothing.len(), 4, "{from_nothing:?}");
    }
}
