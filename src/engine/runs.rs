//! Finding the run `--continue` attaches to (SPEC §6.12): the newest run of the workspace — and,
//! when the newest one's ledger cannot be read, saying so instead of quietly taking an older one.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::SystemTime;

use super::ledger::{Manifest, RunDir};

/// A run whose `manifest.json` is there but cannot be read (torn by a crash, damaged, unreadable).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable {
    pub manifest: PathBuf,
    pub reason: String,
}

/// What a search for the workspace's latest run found.
#[derive(Debug, Clone, Default)]
pub struct LatestRun {
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

/// The newest run of `workspace` under `<data_dir>/runs` (by the manifest's modification time),
/// with the newer runs that could not be read.
pub fn latest_run(data_dir: &Path, workspace: &Path) -> LatestRun {
    let Ok(entries) = fs::read_dir(data_dir.join("runs")) else {
        return LatestRun::default();
    };
    let mut found: Vec<(SystemTime, Found)> = Vec::new();
    for entry in entries.flatten() {
        let manifest = entry.path().join("manifest.json");
        let Ok(mtime) = fs::metadata(&manifest).and_then(|m| m.modified()) else {
            continue; // no ledger: a run that never started a session
        };
        match Manifest::load(&manifest) {
            Ok(m) if m.workspace == workspace => {
                found.push((mtime, Found::Readable(RunDir::open(&entry.path()))));
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
}
