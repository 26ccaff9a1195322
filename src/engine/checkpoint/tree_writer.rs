//! Writing a full walk's trees from its entries in path order: each directory's tree is written
//! as soon as the entries that follow are no longer in it, so only the directories on the way to
//! the current entry are held, never a listing of the whole workspace.
//!
//! Paths compare bytewise, a directory as its path and a `/`: then everything a directory holds
//! comes right after it and before anything else (`a`, `a-b` and `a.txt` come before `a/`,
//! which comes before `a/x`).

use std::cmp::Ordering;

use super::error::CheckpointError;
use super::object::Objects;
use super::object_id::ObjectId;
use super::path::RelPath;
use super::tree::{self, Node, Tree};

/// The order of the directory `dir` (as `dir/`) and the entry `entry`.
fn dir_then_entry(dir: &[u8], entry: &[u8]) -> Ordering {
    let n = dir.len().min(entry.len());
    match dir.get(..n).cmp(&entry.get(..n)) {
        Ordering::Equal => {}
        other => return other,
    }
    match entry.get(dir.len()) {
        None => Ordering::Greater,
        // `dir/` is a prefix of the entry: it comes first.
        Some(b'/') => Ordering::Less,
        Some(c) => b'/'.cmp(c),
    }
}

/// What a checkpoint's trees hold besides directories.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    /// Files and symbolic links stored, and the files' bytes.
    pub files: usize,
    pub bytes: u64,
    /// Every entry that is not a directory.
    pub entries: usize,
}

/// Write the trees of the directories `dirs` (in any order) holding `nodes` (not directories,
/// sorted by path); the root's id and what they hold.
pub(crate) fn write(
    objects: &Objects,
    mut dirs: Vec<RelPath>,
    nodes: impl Iterator<Item = (RelPath, Node)>,
) -> Result<(ObjectId, Tally), CheckpointError> {
    dirs.retain(|d| !d.is_root());
    dirs.sort_unstable_by(|a, b| {
        let (a, b) = (a.as_bytes(), b.as_bytes());
        // As `a/` and `b/`.
        a.iter().chain(b"/").cmp(b.iter().chain(b"/"))
    });
    let mut w = Writer {
        objects,
        open: vec![(RelPath::root(), Tree::new())],
    };
    let mut tally = Tally::default();
    let mut dirs = dirs.into_iter().peekable();
    for (path, node) in nodes {
        while let Some(d) =
            dirs.next_if(|d| dir_then_entry(d.as_bytes(), path.as_bytes()) == Ordering::Less)
        {
            w.enter(&d)?;
        }
        w.enter(&path.parent().unwrap_or_default())?;
        tally.entries += 1;
        match node {
            Node::File { size, .. } => {
                tally.files += 1;
                tally.bytes += size;
            }
            Node::Link(_) => tally.files += 1,
            _ => {}
        }
        if let Some((_, tree)) = w.open.last_mut() {
            tree.push((path.name().to_vec(), node));
        }
    }
    for d in dirs {
        w.enter(&d)?;
    }
    while w.open.len() > 1 {
        w.close()?;
    }
    let (_, root) = w.open.pop().unwrap_or_default();
    Ok((w.put(root)?, tally))
}

struct Writer<'a> {
    objects: &'a Objects,
    /// The directories open, from the root down, each with the entries found so far.
    open: Vec<(RelPath, Tree)>,
}

impl Writer<'_> {
    /// Make `dir` the deepest open directory: close those not on its way, open those missing.
    fn enter(&mut self, dir: &RelPath) -> Result<(), CheckpointError> {
        while self.open.len() > 1 && self.open.last().is_some_and(|(p, _)| !dir.is_within(p)) {
            self.close()?;
        }
        let depth = self.open.last().map_or(0, |(p, _)| p.depth());
        let mut missing = Vec::new();
        let mut at = Some(dir.clone());
        while let Some(d) = at.filter(|d| d.depth() > depth) {
            at = d.parent();
            missing.push(d);
        }
        for d in missing.into_iter().rev() {
            self.open.push((d, Tree::new()));
        }
        Ok(())
    }

    /// Write the deepest open directory's tree and name it in its parent.
    fn close(&mut self) -> Result<(), CheckpointError> {
        let Some((path, tree)) = self.open.pop() else {
            return Ok(());
        };
        let id = self.put(tree)?;
        if let Some((_, parent)) = self.open.last_mut() {
            parent.push((path.name().to_vec(), Node::Dir(id)));
        }
        Ok(())
    }

    fn put(&self, mut tree: Tree) -> Result<ObjectId, CheckpointError> {
        tree.sort_by(|a, b| a.0.cmp(&b.0));
        let bytes = tree::encode(&tree);
        let id = ObjectId::of(&bytes);
        self.objects
            .put(&id, &bytes)
            .map_err(CheckpointError::store(self.objects.dir()))?;
        Ok(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_sorts_as_its_path_and_a_slash() {
        assert_eq!(dir_then_entry(b"a", b"a/x"), Ordering::Less);
        assert_eq!(dir_then_entry(b"a", b"a.txt"), Ordering::Greater);
        assert_eq!(dir_then_entry(b"a", b"a-b/c"), Ordering::Greater);
        assert_eq!(dir_then_entry(b"a", b"a0"), Ordering::Less);
        assert_eq!(dir_then_entry(b"a", b"a"), Ordering::Greater);
        assert_eq!(dir_then_entry(b"b", b"a/x"), Ordering::Greater);
        assert_eq!(dir_then_entry(b"a/b", b"a/c"), Ordering::Less);
    }
}
