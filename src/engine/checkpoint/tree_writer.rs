//! Writing a full walk's trees from its entries in path order: each directory's tree is written
//! as soon as the entries that follow are no longer in it, so only the directories on the way to
//! the current entry are held, never a listing of the whole workspace.
//!
//! Paths compare bytewise, a directory as its path and a `/`: then everything a directory holds
//! comes right after it and before anything else (`a`, `a-b` and `a.txt` come before `a/`,
//! which comes before `a/x`).

use super::error::CheckpointError;
use super::object::Objects;
use super::object_id::ObjectId;
use super::path::RelPath;
use super::tree::{self, Node, Tree};

/// What a checkpoint's trees hold besides directories.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    /// Files and symbolic links stored, and the files' bytes.
    pub files: usize,
    pub bytes: u64,
    /// Every entry that is not a directory.
    pub entries: usize,
}

/// Writes the trees of a walk handed its directories and other entries in path order (a
/// directory before what it holds).
pub(crate) struct TreeWriter<'a> {
    w: Writer<'a>,
    tally: Tally,
}

impl<'a> TreeWriter<'a> {
    pub(crate) fn new(objects: &'a Objects) -> TreeWriter<'a> {
        TreeWriter {
            w: Writer {
                objects,
                open: vec![(RelPath::root(), Tree::new())],
            },
            tally: Tally::default(),
        }
    }

    /// A directory (its tree is written, empty or not).
    pub(crate) fn dir(&mut self, dir: &RelPath) -> Result<(), CheckpointError> {
        if dir.is_root() {
            return Ok(());
        }
        self.w.enter(dir)
    }

    /// An entry that is not a directory.
    pub(crate) fn node(&mut self, path: &RelPath, node: Node) -> Result<(), CheckpointError> {
        self.w.enter(&path.parent().unwrap_or_default())?;
        self.tally.entries += 1;
        match node {
            Node::File { size, .. } => {
                self.tally.files += 1;
                self.tally.bytes += size;
            }
            Node::Link(_) => self.tally.files += 1,
            _ => {}
        }
        if let Some((_, tree)) = self.w.open.last_mut() {
            tree.push((path.name().to_vec(), node));
        }
        Ok(())
    }

    /// Write what is still open: the root's id and what the trees hold.
    pub(crate) fn finish(mut self) -> Result<(ObjectId, Tally), CheckpointError> {
        while self.w.open.len() > 1 {
            self.w.close()?;
        }
        let (_, root) = self.w.open.pop().unwrap_or_default();
        Ok((self.w.put(root)?, self.tally))
    }
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
        tree::store(self.objects, &tree)
    }
}
