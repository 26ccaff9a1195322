//! `@` completion's file queries, off the UI thread: the workspace's file index is walked in the
//! background from its first use, and queried one query at a time (the newest waiting one next;
//! the ones typed over are skipped). Answers come back as messages numbered like their queries.

use std::path::PathBuf;

use tokio::sync::mpsc;

use crate::engine::files::FileIndex;

use super::msg::Msg;

/// The workspace's file index for `@` completion: walked in the background from the first
/// frame on, queried off the UI thread one query at a time (the newest waiting one next; the
/// ones typed over are skipped).
pub(super) struct FileQueries {
    root: PathBuf,
    index: Option<FileIndex>,
    busy: bool,
    next: Option<(u64, String)>,
    tx: mpsc::UnboundedSender<Msg>,
    /// The answers, for the app's loop.
    pub(super) answers: mpsc::UnboundedReceiver<Msg>,
}

impl FileQueries {
    /// Queries over the files under `root` (nothing is walked until the first use).
    pub(super) fn new(root: PathBuf) -> FileQueries {
        let (tx, rx) = mpsc::unbounded_channel();
        FileQueries {
            root,
            index: None,
            busy: false,
            next: None,
            tx,
            answers: rx,
        }
    }

    /// The index, its first walk started now if it had not been.
    pub(super) fn index(&mut self) -> &FileIndex {
        self.index
            .get_or_insert_with(|| FileIndex::start(self.root.clone()))
    }

    /// Ask for the files matching `query` (a walk again first when `refresh`); the answer comes
    /// on [`FileQueries::answers`] as `Msg::FileMatches` with `seq`.
    pub(super) fn query(&mut self, seq: u64, query: String, refresh: bool) {
        if refresh {
            self.index().refresh();
        }
        if self.busy {
            self.next = Some((seq, query));
            return;
        }
        self.busy = true;
        let index = self.index().clone();
        let tx = self.tx.clone();
        tokio::task::spawn_blocking(move || {
            let found = index.query(&query, crate::tui::mention::LIMIT);
            let _ = tx.send(Msg::FileMatches {
                seq,
                items: found.matches.into_iter().map(|m| m.path).collect(),
                complete: found.complete,
                indexed: found.indexed,
            });
        });
    }

    /// A query answered: the next one waiting goes.
    pub(super) fn answered(&mut self) {
        self.busy = false;
        if let Some((seq, query)) = self.next.take() {
            self.query(seq, query, false);
        }
    }
}
