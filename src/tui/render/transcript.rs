//! The transcript: the chat's cells, oldest first, each with a revision that changes whenever the
//! cell does (through the `_mut` accessors), so the view knows which cached layouts are stale.
//! Cells are appended, or the newest go (all of them, or those after a point: a rewind); a cell
//! changes in place. It also finds the cells
//! Ctrl-T expands and the subagent cells of one batch.

use super::cell::Cell;

struct Entry {
    cell: Cell,
    /// Changes on every mutable access: the view's caches compare it.
    rev: u64,
}

/// The chat transcript: cells, oldest first. Cells are appended or the newest removed; a cell
/// changes in place through the `_mut` accessors, which give it a new revision.
#[derive(Default)]
pub struct Transcript {
    entries: Vec<Entry>,
    next_rev: u64,
}

impl Transcript {
    /// An empty transcript.
    pub fn new() -> Self {
        Transcript::default()
    }

    fn bump(&mut self) -> u64 {
        self.next_rev += 1;
        self.next_rev
    }

    /// Appends a cell.
    pub fn push(&mut self, cell: Cell) {
        let rev = self.bump();
        self.entries.push(Entry { cell, rev });
    }

    /// Removes the last cell (a replayed stream takes back what its broken try showed).
    pub(crate) fn pop(&mut self) -> Option<Cell> {
        self.entries.pop().map(|e| e.cell)
    }

    /// The last cell, for in-place updates (streaming text); it gets a new revision, so the change
    /// shows at the next render.
    pub fn last_mut(&mut self) -> Option<&mut Cell> {
        let rev = self.bump();
        let entry = self.entries.last_mut()?;
        entry.rev = rev;
        Some(&mut entry.cell)
    }

    /// The last cell.
    pub(crate) fn last(&self) -> Option<&Cell> {
        self.entries.last().map(|e| &e.cell)
    }

    /// The most recent tool or subagent cell with this call id (it gets a new revision, as with
    /// [`Transcript::last_mut`]).
    pub(crate) fn find_tool_mut(&mut self, id: &str) -> Option<&mut Cell> {
        let rev = self.bump();
        let entry = self.entries.iter_mut().rev().find(|e| match &e.cell {
            Cell::Tool { id: i, .. } => i == id,
            Cell::Subagent(a) => a.id == id,
            _ => false,
        })?;
        entry.rev = rev;
        Some(&mut entry.cell)
    }

    /// Cell `idx`, mutable (it gets a new revision).
    pub(crate) fn get_mut(&mut self, idx: usize) -> Option<&mut Cell> {
        let rev = self.bump();
        let entry = self.entries.get_mut(idx)?;
        entry.rev = rev;
        Some(&mut entry.cell)
    }

    /// Cell `idx`.
    pub(crate) fn get(&self, idx: usize) -> Option<&Cell> {
        self.entries.get(idx).map(|e| &e.cell)
    }

    /// The cells, oldest first.
    pub(crate) fn iter(&self) -> impl DoubleEndedIterator<Item = &Cell> {
        self.entries.iter().map(|e| &e.cell)
    }

    /// Number of cells.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Cell `idx` with its revision (the view's caches compare it).
    pub(super) fn get_with_rev(&self, idx: usize) -> Option<(&Cell, u64)> {
        self.entries.get(idx).map(|e| (&e.cell, e.rev))
    }

    /// A number that grows whenever a cell is added or changed.
    pub(crate) fn latest_rev(&self) -> u64 {
        self.next_rev
    }

    /// Expands or collapses cell `idx` (a tool call, a thinking cell or a subagent); false for
    /// another. A subagent takes every subagent of its batch (the subagent cells next to it) along.
    pub(crate) fn toggle_tool_expanded(&mut self, idx: usize) -> bool {
        let rev = self.bump();
        let batch = self.subagent_batch(idx);
        let Some(e) = self.entries.get_mut(idx) else {
            return false;
        };
        match &mut e.cell {
            Cell::Tool { expanded, .. } | Cell::Thinking { expanded, .. } => {
                *expanded = !*expanded;
                e.rev = rev;
                true
            }
            Cell::Subagent(a) => {
                let value = !a.expanded;
                for e in self.entries.get_mut(batch).unwrap_or_default() {
                    if let Cell::Subagent(a) = &mut e.cell {
                        a.expanded = value;
                        e.rev = rev;
                    }
                }
                true
            }
            _ => false,
        }
    }

    /// The run of subagent cells around `idx` (one `task` batch).
    fn subagent_batch(&self, idx: usize) -> std::ops::Range<usize> {
        let is_agent = |i: usize| {
            self.entries
                .get(i)
                .is_some_and(|e| matches!(e.cell, Cell::Subagent(_)))
        };
        let (mut lo, mut hi) = (idx, idx);
        while lo > 0 && is_agent(lo - 1) {
            lo -= 1;
        }
        while is_agent(hi + 1) {
            hi += 1;
        }
        lo..hi + 1
    }

    /// The index of the newest expandable cell (a tool call, thinking) before `before` (all
    /// cells when `None`).
    pub(crate) fn tool_before(&self, before: Option<usize>) -> Option<usize> {
        let end = before.unwrap_or(self.entries.len()).min(self.entries.len());
        self.entries
            .get(..end)?
            .iter()
            .rposition(|e| e.cell.is_expandable())
    }

    /// The index of the oldest expandable cell after `after`.
    pub(crate) fn tool_after(&self, after: usize) -> Option<usize> {
        let start = after.saturating_add(1);
        self.entries
            .get(start..)?
            .iter()
            .position(|e| e.cell.is_expandable())
            .map(|i| i + start)
    }

    /// Keep the first `len` cells, forget the rest (a rewind). Revisions keep growing, as in
    /// [`Transcript::clear`].
    pub(crate) fn truncate(&mut self, len: usize) {
        self.entries.truncate(len);
        self.next_rev += 1;
    }

    /// Forget every cell (another run is continued). Revisions keep growing, so nothing the
    /// view cached for the old cells is taken for the new ones.
    pub(crate) fn clear(&mut self) {
        self.entries.clear();
        self.next_rev += 1;
    }

    /// Expands or collapses the most recent expandable cell (see [`Self::toggle_tool_expanded`]).
    #[cfg(test)]
    pub(crate) fn toggle_last_tool_expanded(&mut self) {
        if let Some(idx) = self.tool_before(None) {
            self.toggle_tool_expanded(idx);
        }
    }
}
