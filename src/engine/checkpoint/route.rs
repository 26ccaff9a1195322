//! Which way a checkpoint is taken: from what a change feed reported since the last one, or by a
//! full walk of the workspace.
//!
//! - **This process's own feed** (`watch`): started by its full walk; each later checkpoint looks
//!   at what it reported.
//! - **The keeper's feed** (`feed`): a process that finds a base on disk from a keeper that still
//!   answers builds its first checkpoint from it, without a walk. A process on its own feed moves
//!   to the keeper's at its next checkpoint once one answers (asking the keeper's number before
//!   reading its own queue, so nothing falls between the two), and drops its own watches.
//! - **A walk** when neither can say: the first checkpoint with no keeper, an overflow, a
//!   `.gitignore` changed, a base older than [`BASE_FOR`]. A walk that finds no keeper answering
//!   starts one (see `feed::spawn`).

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::feed::{self, Link, Persisted};
use super::path::RelPath;
use super::snapshot::Snapshot;
use super::update::{self, Base};
use super::watch::{Drained, Watcher};
use super::{Inner, Limits};

/// A checkpoint built on the last one is trusted for this long: the store's clean-up keeps what
/// a checkpoint of the last day needs, so the trees it shares are still there.
pub(super) const BASE_FOR: Duration = Duration::from_secs(12 * 3600);

#[derive(Debug)]
enum Source {
    Own(Arc<Watcher>),
    Keeper(Link),
}

/// The change feed and the checkpoint it reports against.
#[derive(Debug, Default)]
pub(super) struct Feed {
    source: Option<Source>,
    base: Option<(Base, Instant)>,
    /// Why no feed is started (None: each full walk starts one).
    pub off: Option<String>,
    /// Files a restore wrote from git's store since the last checkpoint: read again, they keep
    /// the blob's id when they still hold it.
    pub restored: HashMap<RelPath, [u8; 20]>,
    /// Whether a base on disk was looked for yet.
    looked: bool,
    /// Whether the keeper's feed is used (and a keeper started).
    keeper: bool,
}

impl Feed {
    /// A feed, or none (`watch` false: every checkpoint walks); `keeper`: one that outlives
    /// the session.
    pub(super) fn new(watch: bool, keeper: bool) -> Feed {
        Feed {
            off: (!watch).then(|| "the change feed is off".to_string()),
            keeper: keeper && watch,
            ..Feed::default()
        }
    }

    /// The checkpoint from what the feed reported since the last one (and the route's name for
    /// the log), or why a walk must take it.
    pub(super) fn update(
        &mut self,
        i: &Inner,
        restored: &HashMap<RelPath, [u8; 20]>,
    ) -> Result<(Snapshot, &'static str), String> {
        if let Some(off) = &self.off {
            return Err(off.clone());
        }
        if self.keeper && self.source.is_none() && !self.looked {
            self.looked = true;
            if let Err(why) = self.adopt(&i.dir) {
                tracing::debug!("checkpoint: no keeper's base: {why}");
            }
        }
        let base = match &self.base {
            Some((_, at)) if at.elapsed() >= BASE_FOR => {
                return Err("the last checkpoint is too old to build on".into());
            }
            Some((base, _)) => base.clone(),
            None => return Err("the change feed starts".into()),
        };
        let update = |fed: &Drained, own: Option<&Arc<Watcher>>| {
            update::update(&i.objects, &i.rules, &i.limits, &base, fed, own, restored)
        };
        match &mut self.source {
            Some(Source::Own(w)) => {
                let link = self.keeper.then(|| Link::connect(&i.dir).ok()).flatten();
                let fed = w.drain();
                if let Some(why) = fed.unsure {
                    return Err(why.into());
                }
                let snap = update(&fed, Some(w))?;
                self.base = Some((Base::of(&snap), Instant::now()));
                if let Some(link) = link {
                    Persisted::new(link.instance, link.since, &Base::of(&snap)).save(&i.dir);
                    self.source = Some(Source::Keeper(link));
                }
                Ok((snap, "changes"))
            }
            Some(Source::Keeper(link)) => {
                let answer = link
                    .ask(link.since)
                    .map_err(|e| format!("the feed keeper did not answer ({e})"))?;
                if answer.instance != link.instance {
                    return Err("another feed keeper answers".into());
                }
                if let Some(why) = answer.unsure {
                    return Err(format!("the feed keeper cannot say ({why})"));
                }
                let fed = Drained {
                    dirty: answer.dirty.into_iter().collect(),
                    new_dirs: answer.new_dirs.into_iter().collect::<BTreeSet<_>>(),
                    unsure: None,
                };
                let snap = update(&fed, None)?;
                link.since = answer.seq;
                self.base = Some((Base::of(&snap), Instant::now()));
                Persisted::new(link.instance, answer.seq, &Base::of(&snap)).save(&i.dir);
                Ok((snap, "keeper"))
            }
            None => Err("the change feed starts".into()),
        }
    }

    /// Build on the base a keeper's feed left on disk, if that keeper still answers.
    fn adopt(&mut self, store: &Path) -> Result<(), String> {
        let saved = Persisted::load(store).ok_or("none on disk")?;
        if saved.age() >= BASE_FOR {
            return Err("it is too old to build on".into());
        }
        let mut link = Link::connect(store).map_err(|e| format!("no keeper answers ({e})"))?;
        if !saved.of(&link.instance) {
            return Err("it is another keeper's".into());
        }
        link.since = saved.seq;
        let at = Instant::now()
            .checked_sub(saved.age())
            .unwrap_or_else(Instant::now);
        self.base = Some((saved.base(), at));
        self.source = Some(Source::Keeper(link));
        Ok(())
    }

    /// Forget the feed: a walk follows.
    pub(super) fn reset(&mut self) {
        self.source = None;
        self.base = None;
    }

    /// After a full walk that watched with `watcher`: build on `snap` from now on.
    pub(super) fn walked(&mut self, snap: &Snapshot, watcher: Option<Arc<Watcher>>, i: &Inner) {
        let Some(w) = watcher else { return };
        if w.at_limit() {
            self.off = Some("the system's limit on inotify watches was reached".into());
            return;
        }
        if w.broken() {
            return;
        }
        tracing::debug!(
            "checkpoint: the change feed watches {} folders",
            w.watched()
        );
        self.base = Some((Base::of(snap), Instant::now()));
        self.source = Some(Source::Own(w));
        if self.keeper
            && let Some(program) = feed::keeper_program()
            && Link::connect(&i.dir).is_err()
        {
            let config = feed::KeeperConfig::of(i.data_dir(), &i.rules, &i.limits);
            if let Err(e) = feed::spawn(program, &config) {
                tracing::debug!("checkpoint: no feed keeper: {e}");
            }
        }
    }
}

impl feed::KeeperConfig {
    fn of(data_dir: &Path, rules: &super::walk::Rules, limits: &Limits) -> feed::KeeperConfig {
        use std::os::unix::ffi::OsStrExt;
        let bytes = |p: &Path| p.as_os_str().as_bytes().to_vec();
        feed::KeeperConfig {
            data_dir: bytes(data_dir),
            workspace: bytes(&rules.workspace),
            excluded: rules.excluded.iter().map(|p| bytes(p)).collect(),
            max_file_bytes: limits.max_file_bytes,
            max_checkpoint_bytes: limits.max_checkpoint_bytes,
            max_entries: limits.max_entries,
            idle_secs: feed::KEEPER_IDLE.as_secs(),
        }
    }
}
