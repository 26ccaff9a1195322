//! Run directories on disk: creating one (a run kept outside the data dir with `--run-dir`
//! registers itself in the run index), opening one (its id is the one its ledger records, not
//! the folder's name), finding the run `--continue` attaches to (the newest of the workspace,
//! wherever it is — and, when its ledger cannot be read, saying so instead of quietly taking an
//! older one); joining a run directory with a new step; and writing one step's ledger entry
//! without losing what other processes wrote for theirs.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::SystemTime;

use sha2::{Digest, Sha256};

use super::ledger_lock::LedgerLock;
use super::manifest::{LAST_SYNCED, Manifest, StepRecord};
use super::run_index;
use crate::engine::error::Error;
use crate::engine::fsutil::{atomic_write, new_id};

/// A run directory: `manifest.json` and `sessions/`.
#[derive(Debug, Clone)]
pub struct RunDir {
    pub root: PathBuf,
    pub run_id: String,
}

impl RunDir {
    /// `<data_dir>/runs/<run-id>`, or the given directory (which must not hold a run already: its
    /// ledger would be overwritten; `--continue` opens it instead, [`join`] adds a
    /// step to it).
    pub fn create(data_dir: &Path, explicit: Option<&Path>) -> Result<RunDir, Error> {
        let run_id = new_id();
        let root = match explicit {
            Some(p) => p.to_path_buf(),
            None => data_dir.join("runs").join(&run_id),
        };
        if root.join("manifest.json").exists() {
            return Err(Error::RunDirTaken { path: root });
        }
        fs::create_dir_all(root.join("sessions"))
            .map_err(|e| Error::io("cannot create the run directory", &root, e))?;
        let run = RunDir { root, run_id };
        if explicit.is_some() {
            run.remember(data_dir);
        }
        Ok(run)
    }

    /// Register this run in the data dir's run index, so `--continue` and `--resume` find it
    /// outside `<data_dir>/runs` (a failure is logged: the run itself works without it).
    pub fn remember(&self, data_dir: &Path) {
        if let Err(e) = run_index::register(data_dir, &self.root) {
            tracing::warn!(run = %self.root.display(), "cannot record the run in the index: {e}");
        }
    }

    /// [`RunDir::create`], or — when `explicit` holds a run already — join it with the new `step`
    /// ([`join`]).
    pub fn create_or_join(
        data_dir: &Path,
        explicit: Option<&Path>,
        step: Option<&str>,
        workspace: &Path,
    ) -> Result<RunDir, Error> {
        match explicit {
            Some(dir) if dir.join("manifest.json").exists() => {
                let run = join(dir, step, workspace)?;
                run.remember(data_dir);
                Ok(run)
            }
            _ => RunDir::create(data_dir, explicit),
        }
    }

    /// Open an existing run directory. Its id is the one its ledger records (a `--run-dir`
    /// folder has a name of its own), else the folder's name.
    pub fn open(root: &Path) -> RunDir {
        let recorded = Manifest::load(&root.join("manifest.json"))
            .ok()
            .map(|m| m.run_id)
            .filter(|id| !id.is_empty());
        let run_id = recorded.unwrap_or_else(|| {
            root.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        });
        RunDir {
            root: root.to_path_buf(),
            run_id,
        }
    }

    pub fn manifest_path(&self) -> PathBuf {
        self.root.join("manifest.json")
    }

    pub fn transcript_path(&self, session_id: &str) -> PathBuf {
        self.root
            .join("sessions")
            .join(format!("{session_id}.jsonl"))
    }

    /// The most recently modified run of `workspace` (under `<data_dir>/runs` or indexed) that has
    /// a readable manifest ([`latest_run`] also says which newer ones could not be read).
    pub fn latest(data_dir: &Path, workspace: &Path) -> Option<RunDir> {
        latest_run(data_dir, workspace).run
    }
}

/// A run whose `manifest.json` is there but cannot be read (torn by a crash, damaged, unreadable).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unreadable {
    pub manifest: PathBuf,
    pub reason: String,
}

/// What a search for the workspace's latest run found.
#[derive(Debug, Clone, Default)]
pub(crate) struct LatestRun {
    /// The newest run of the workspace whose ledger reads.
    pub run: Option<RunDir>,
    /// Runs newer than `run` whose ledger cannot be read and that may belong to the workspace
    /// (their text does not name another one), newest first.
    pub skipped: Vec<Unreadable>,
}

/// One run directory's ledger as found on disk.
enum Found {
    Readable(RunDir),
    Unreadable(Unreadable),
}

/// The newest run of `workspace` (by the manifest's modification time) among the data dir's runs
/// ([`run_index::run_dirs`]), with the newer runs that could not be read.
pub(crate) fn latest_run(data_dir: &Path, workspace: &Path) -> LatestRun {
    let mut found: Vec<(SystemTime, Found)> = Vec::new();
    for dir in run_index::run_dirs(data_dir) {
        let manifest = dir.join("manifest.json");
        let Ok(mtime) = fs::metadata(&manifest).and_then(|m| m.modified()) else {
            continue; // no ledger: a run that never started a session
        };
        match Manifest::load(&manifest) {
            Ok(m) if m.workspace == workspace => {
                found.push((mtime, Found::Readable(RunDir::open(&dir))));
            }
            Ok(_) => {}
            Err(e) => {
                let text = fs::read(&manifest).unwrap_or_default();
                if names_other_workspace(&String::from_utf8_lossy(&text), workspace) {
                    continue;
                }
                found.push((
                    mtime,
                    Found::Unreadable(Unreadable {
                        reason: reason(&e, &manifest),
                        manifest,
                    }),
                ));
            }
        }
    }
    found.sort_by_key(|(t, _)| std::cmp::Reverse(*t));
    let mut out = LatestRun::default();
    for (_, f) in found {
        match f {
            Found::Unreadable(u) => out.skipped.push(u),
            Found::Readable(run) => {
                out.run = Some(run);
                break;
            }
        }
    }
    out
}

/// Why a manifest could not be read, in a few words (the path is said separately).
fn reason(e: &std::io::Error, manifest: &Path) -> String {
    let text = e.to_string();
    let prefix = format!("{}: ", manifest.display());
    let detail = text.strip_prefix(&prefix).unwrap_or(&text);
    if e.kind() == std::io::ErrorKind::InvalidData {
        format!("torn or damaged JSON: {detail}")
    } else {
        detail.to_string()
    }
}

/// Whether the text of a damaged manifest still names a workspace, and it is another one.
fn names_other_workspace(text: &str, workspace: &Path) -> bool {
    static FIELD: OnceLock<Option<regex::Regex>> = OnceLock::new();
    let Some(re) = FIELD
        .get_or_init(|| regex::Regex::new(r#""workspace"\s*:\s*("(?:[^"\\]|\\.)*")"#).ok())
        .as_ref()
    else {
        return false;
    };
    let Some(quoted) = re.captures(text).and_then(|c| c.get(1)) else {
        return false;
    };
    match serde_json::from_str::<String>(quoted.as_str()) {
        Ok(named) => Path::new(&named) != workspace,
        Err(_) => false,
    }
}

/// Write step `step` of `manifest` into the ledger at `path`, keeping every other step as it is
/// on disk (another process may own it: several invocations can share one `--run-dir`). Under the
/// run's [`LedgerLock`]; the file is rewritten atomically, keys masked, unless this process's
/// last synced write left the same bytes there. Without a step the whole manifest is written.
/// With `sync` false the write has no fsyncs (safe against a kill, not a power cut), and the next
/// synced save writes again.
pub fn save_step(
    manifest: &Manifest,
    step: Option<usize>,
    path: &Path,
    sync: bool,
) -> io::Result<()> {
    let root = path.parent().unwrap_or(Path::new("."));
    let _lock = LedgerLock::acquire(root)?;
    let ours = step.and_then(|i| manifest.steps.get(i));
    let on_disk = std::fs::read(path).ok();
    let parsed = match &on_disk {
        Some(bytes) => serde_json::from_slice::<Manifest>(bytes).map_err(io::Error::other),
        None => Err(io::ErrorKind::NotFound.into()),
    };
    let merged = match (ours, parsed) {
        (Some(rec), Ok(mut on_disk)) => {
            match on_disk.steps.iter_mut().find(|s| s.name == rec.name) {
                Some(slot) => *slot = rec.clone(),
                None => on_disk.steps.push(rec.clone()),
            }
            on_disk
        }
        // No step of ours yet: what is on disk stays as it is.
        (None, Ok(_)) => return Ok(()),
        // Nothing readable on disk (the first save, or a torn ledger): ours is the best there is.
        (_, Err(_)) => manifest.clone(),
    };
    let json = serde_json::to_string_pretty(&merged).map_err(io::Error::other)?;
    let text = crate::engine::secrets::redact(&json);
    // The file already holds these very bytes, and this process wrote them there durably.
    let hash: [u8; 32] = Sha256::digest(text.as_bytes()).into();
    let mut synced = LAST_SYNCED.lock().unwrap_or_else(|p| p.into_inner());
    if on_disk.as_deref() == Some(text.as_bytes()) && synced.get(path) == Some(&hash) {
        return Ok(());
    }
    if sync {
        atomic_write(path, text.as_bytes())?;
        synced.insert(path.to_path_buf(), hash);
    } else {
        crate::engine::fsutil::atomic_write_unsynced(path, text.as_bytes())?;
        synced.remove(path);
    }
    Ok(())
}

/// Join the run in `dir` (it holds a ledger) with the new step `step`: refused without a step
/// name, for a step the run has, and for a run of another workspace. The step is claimed in the
/// ledger at once (a record without a session, naming this process), so a second process cannot
/// take the same name meanwhile; a claim whose process is gone is taken over.
pub fn join(dir: &Path, step: Option<&str>, workspace: &Path) -> Result<RunDir, Error> {
    let run = RunDir::open(dir);
    let path = run.manifest_path();
    let Some(step) = step else {
        return Err(Error::RunDirTaken { path: dir.into() });
    };
    let _lock =
        LedgerLock::acquire(dir).map_err(|e| Error::io("cannot lock the ledger", &path, e))?;
    let mut manifest = Manifest::load(&path).map_err(|e| Error::io("cannot read", &path, e))?;
    if manifest.workspace != workspace {
        return Err(Error::RunOfOtherWorkspace {
            path: dir.into(),
            workspace: manifest.workspace,
        });
    }
    if let Some(rec) = manifest.steps.iter().find(|s| s.name == step)
        && !claim_is_stale(rec)
    {
        return Err(Error::StepTaken {
            path: dir.into(),
            step: step.to_string(),
        });
    }
    manifest.steps.retain(|s| s.name != step);
    manifest.steps.push(StepRecord {
        name: step.to_string(),
        claimed_by: Some(std::process::id()),
        ..Default::default()
    });
    let json = serde_json::to_string_pretty(&manifest).map_err(io::Error::other);
    json.and_then(|j| atomic_write(&path, crate::engine::secrets::redact(&j).as_bytes()))
        .map_err(|e| Error::io("cannot write", &path, e))?;
    Ok(run)
}

/// A step record that only claims its name for a process that is gone (it never started).
fn claim_is_stale(rec: &StepRecord) -> bool {
    rec.session_id.is_empty() && rec.claimed_by.is_some_and(|pid| !process_alive(pid))
}

/// Whether a process with this id exists (signal 0).
fn process_alive(pid: u32) -> bool {
    #[cfg(unix)]
    {
        let Ok(pid) = i32::try_from(pid) else {
            return false;
        };
        // SAFETY: kill with signal 0 only checks that the process exists; no memory effects.
        let rc = unsafe { libc::kill(pid, 0) };
        rc == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A run with a manifest holding `text`, modified `age` seconds ago.
    fn run_with(data: &Path, id: &str, text: &str, age: u64) -> PathBuf {
        let root = data.join("runs").join(id);
        fs::create_dir_all(&root).unwrap();
        let path = root.join("manifest.json");
        fs::write(&path, text).unwrap();
        let when = SystemTime::now() - Duration::from_secs(age);
        fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(when)
            .unwrap();
        root
    }

    fn manifest(ws: &str) -> String {
        serde_json::to_string_pretty(&Manifest {
            run_id: "r".into(),
            workspace: PathBuf::from(ws),
            ..Default::default()
        })
        .unwrap()
    }

    fn step(name: &str, session: &str) -> StepRecord {
        StepRecord {
            name: name.into(),
            session_id: session.into(),
            ..Default::default()
        }
    }

    #[test]
    fn a_save_that_changes_nothing_writes_nothing_unless_the_last_write_was_unsynced() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("manifest.json");
        let ino = || fs::metadata(&path).unwrap().ino();
        let mut m = Manifest {
            run_id: "r".into(),
            ..Default::default()
        };
        m.steps.push(step("a", "s1"));
        save_step(&m, Some(0), &path, true).unwrap();
        let first = ino();
        save_step(&m, Some(0), &path, true).unwrap();
        assert_eq!(
            ino(),
            first,
            "the same bytes, already synced: not rewritten"
        );
        m.save_unsynced(&path).unwrap();
        let unsynced = ino();
        save_step(&m, Some(0), &path, true).unwrap();
        assert_ne!(ino(), unsynced, "written again, with its fsyncs");
        // A step's save for now: written (the bytes changed), then written again when synced.
        m.steps[0].session_id = "s2".into();
        save_step(&m, Some(0), &path, false).unwrap();
        let for_now = ino();
        assert!(fs::read_to_string(&path).unwrap().contains("\"s2\""));
        save_step(&m, Some(0), &path, true).unwrap();
        assert_ne!(
            ino(),
            for_now,
            "the unsynced bytes are written again, with their fsyncs"
        );
        m.steps[0].figures.num_turns = 2;
        let same = ino();
        save_step(&m, Some(0), &path, true).unwrap();
        assert_ne!(ino(), same);
        assert_eq!(Manifest::load(&path).unwrap().steps[0].figures.num_turns, 2);
    }

    #[test]
    fn saving_a_step_keeps_the_steps_of_other_processes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("manifest.json");
        let base = Manifest {
            run_id: "r".into(),
            workspace: PathBuf::from("/w"),
            ..Default::default()
        };
        // Two processes loaded the same ledger, each adds and then changes its own step.
        let mut a = base.clone();
        a.steps.push(step("a", "s1"));
        let mut b = base.clone();
        b.steps.push(step("b", "s2"));
        save_step(&a, Some(0), &path, true).unwrap();
        save_step(&b, Some(0), &path, true).unwrap();
        a.steps[0].figures.num_turns = 3;
        save_step(&a, Some(0), &path, true).unwrap();
        let on_disk = Manifest::load(&path).unwrap();
        let names: Vec<(&str, u32)> = on_disk
            .steps
            .iter()
            .map(|s| (s.name.as_str(), s.figures.num_turns))
            .collect();
        assert_eq!(names, [("a", 3), ("b", 0)]);
        // Nothing of ours yet: nothing is written over theirs.
        save_step(&base, None, &path, true).unwrap();
        assert_eq!(Manifest::load(&path).unwrap(), on_disk);
        // A torn ledger is rewritten from what this process knows.
        std::fs::write(&path, "{\"run_id\":").unwrap();
        save_step(&b, Some(0), &path, true).unwrap();
        assert_eq!(Manifest::load(&path).unwrap().steps, b.steps);
    }

    #[test]
    fn joining_a_run_claims_a_new_step_and_refuses_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("run");
        let mut m = Manifest {
            run_id: "run".into(),
            workspace: PathBuf::from("/w"),
            ..Default::default()
        };
        m.steps.push(step("one", "s1"));
        m.save(&root.join("manifest.json")).unwrap();
        let ws = Path::new("/w");
        let err = |e: Error| e.to_string();
        assert!(err(join(&root, None, ws).unwrap_err()).contains("--step NAME to add a step"));
        assert!(err(join(&root, Some("one"), ws).unwrap_err()).contains("already has step one"));
        assert!(
            err(join(&root, Some("two"), Path::new("/other")).unwrap_err())
                .contains("is a run of the workspace /w")
        );
        join(&root, Some("two"), ws).unwrap();
        let claimed = Manifest::load(&root.join("manifest.json")).unwrap();
        assert_eq!(claimed.steps.len(), 2);
        assert_eq!(claimed.steps[1].claimed_by, Some(std::process::id()));
        // A live claim holds the name; a dead one is taken over.
        assert!(join(&root, Some("two"), ws).is_err());
        let mut stale = claimed.clone();
        // The id of a process that has exited (and was reaped).
        let mut gone = std::process::Command::new("true").spawn().unwrap();
        let gone_pid = gone.id();
        gone.wait().unwrap();
        stale.steps[1].claimed_by = Some(gone_pid);
        stale.save(&root.join("manifest.json")).unwrap();
        join(&root, Some("two"), ws).unwrap();
        let taken = Manifest::load(&root.join("manifest.json")).unwrap();
        assert_eq!(taken.steps.len(), 2);
        assert_eq!(taken.steps[1].claimed_by, Some(std::process::id()));
    }

    #[test]
    fn the_newest_readable_run_and_the_newer_damaged_ones() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path();
        let old = run_with(data, "old", &manifest("/w"), 300);
        let good = run_with(data, "good", &manifest("/w"), 200);
        // Newer than `good`: another workspace's run (readable or torn) does not count.
        run_with(data, "other", &manifest("/elsewhere"), 100);
        let other_torn = manifest("/elsewhere");
        run_with(data, "other-torn", &other_torn[..other_torn.len() - 3], 90);
        let found = latest_run(data, Path::new("/w"));
        assert_eq!(found.run.map(|r| r.root), Some(good.clone()));
        assert!(found.skipped.is_empty());
        // A torn manifest of this workspace, and one too damaged to say whose it is.
        let ours = manifest("/w");
        let torn = run_with(data, "torn", &ours[..ours.len() - 3], 50);
        let garbage = run_with(data, "garbage", "\u{0}\u{0}{", 10);
        let found = latest_run(data, Path::new("/w"));
        assert_eq!(found.run.map(|r| r.root), Some(good));
        let skipped: Vec<PathBuf> = found.skipped.iter().map(|u| u.manifest.clone()).collect();
        assert_eq!(
            skipped,
            [garbage.join("manifest.json"), torn.join("manifest.json")]
        );
        assert!(
            found.skipped[1]
                .reason
                .starts_with("torn or damaged JSON: EOF"),
            "{:?}",
            found.skipped
        );
        // Nothing readable at all.
        let found = latest_run(&old.join("nowhere"), Path::new("/w"));
        assert!(found.run.is_none() && found.skipped.is_empty());
    }

    #[test]
    fn manifest_save_load_and_latest() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::create(dir.path(), None).unwrap();
        let mut m = Manifest {
            run_id: run.run_id.clone(),
            ..Default::default()
        };
        m.steps.push(StepRecord {
            name: "x".into(),
            session_id: "s1".into(),
            generations: 1,
            ..Default::default()
        });
        m.steps[0].current_generation().cost_usd = 0.5;
        m.save(&run.manifest_path()).unwrap();
        assert_eq!(Manifest::load(&run.manifest_path()).unwrap(), m);
        assert!(RunDir::latest(dir.path(), Path::new("/elsewhere")).is_none());
        m.workspace = PathBuf::from("/w");
        m.save(&run.manifest_path()).unwrap();
        assert_eq!(
            RunDir::latest(dir.path(), Path::new("/w")).unwrap().root,
            run.root
        );
        // A directory that holds a run is not silently reused.
        assert!(RunDir::create(dir.path(), Some(&run.root)).is_err());
    }
}
