//! Paths inside the workspace as the checkpoint store keeps them: relative, `/`-separated, and the
//! file system's own bytes, so a name that is not UTF-8 is stored, compared and restored exactly.
//! Serialised as a string when the bytes are UTF-8 (what a ledger reader expects to see) and as a
//! list of bytes otherwise.

use std::ffi::OsStr;
use std::fmt;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A path relative to the workspace root; the empty path is the root itself.
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RelPath(Vec<u8>);

impl RelPath {
    /// The workspace root.
    pub fn root() -> RelPath {
        RelPath(Vec::new())
    }

    /// `path` relative to `root`, or None when it is not below `root` or has a `..`/`.` part.
    pub fn under(root: &Path, path: &Path) -> Option<RelPath> {
        // The common case, a plain path below the root (what a walk finds), without parsing it.
        let (whole, base) = (path.as_os_str().as_bytes(), root.as_os_str().as_bytes());
        if let Some(rest) = whole.strip_prefix(base).and_then(|r| r.strip_prefix(b"/"))
            && !rest.is_empty()
            && rest
                .split(|&b| b == b'/')
                .all(|c| !c.is_empty() && c != b"." && c != b"..")
        {
            return Some(RelPath(rest.to_vec()));
        }
        let rel = path.strip_prefix(root).ok()?;
        let mut out = Vec::with_capacity(rel.as_os_str().len());
        for part in rel.components() {
            match part {
                Component::Normal(name) => {
                    if !out.is_empty() {
                        out.push(b'/');
                    }
                    out.extend_from_slice(name.as_bytes());
                }
                _ => return None,
            }
        }
        Some(RelPath(out))
    }

    /// Parse a `/`-separated relative path (as a user or a test names it). None for an absolute
    /// path or one with `.`/`..` parts.
    pub fn parse(text: &str) -> Option<RelPath> {
        RelPath::under(Path::new(""), Path::new(text)).filter(|_| !text.starts_with('/'))
    }

    /// This path with one more name (no separator in `name`).
    pub fn join(&self, name: &[u8]) -> RelPath {
        let mut bytes = Vec::with_capacity(self.0.len() + 1 + name.len());
        bytes.extend_from_slice(&self.0);
        if !bytes.is_empty() {
            bytes.push(b'/');
        }
        bytes.extend_from_slice(name);
        RelPath(bytes)
    }

    /// The directory holding this path (the root for a top-level name; None for the root).
    pub fn parent(&self) -> Option<RelPath> {
        if self.0.is_empty() {
            return None;
        }
        match self.0.iter().rposition(|&b| b == b'/') {
            Some(at) => Some(RelPath(self.0.get(..at).unwrap_or_default().to_vec())),
            None => Some(RelPath::root()),
        }
    }

    /// The last name (empty for the root).
    pub fn name(&self) -> &[u8] {
        match self.0.iter().rposition(|&b| b == b'/') {
            Some(at) => self.0.get(at + 1..).unwrap_or_default(),
            None => &self.0,
        }
    }

    /// How many names deep (0 for the root).
    pub fn depth(&self) -> usize {
        if self.0.is_empty() {
            0
        } else {
            1 + self.0.iter().filter(|&&b| b == b'/').count()
        }
    }

    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether `self` is `other` or lies below it.
    pub fn is_within(&self, other: &RelPath) -> bool {
        other.0.is_empty()
            || self.0 == other.0
            || (self.0.starts_with(&other.0) && self.0.get(other.0.len()) == Some(&b'/'))
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The path under `root`.
    pub fn on(&self, root: &Path) -> PathBuf {
        if self.0.is_empty() {
            root.to_path_buf()
        } else {
            root.join(OsStr::from_bytes(&self.0))
        }
    }

    /// The path for people: lossy where the bytes are not UTF-8.
    pub fn lossy(&self) -> String {
        String::from_utf8_lossy(&self.0).into_owned()
    }

    /// Rebuild from stored bytes (a serialised tree or index).
    #[cfg(test)]
    pub(crate) fn from_bytes(bytes: Vec<u8>) -> RelPath {
        RelPath(bytes)
    }

    /// A path another process sent: None unless it is a plain relative path (no empty, `.` or
    /// `..` part), so nothing it names lies outside the workspace.
    pub(crate) fn from_wire(bytes: &[u8]) -> Option<RelPath> {
        let plain = bytes
            .split(|&b| b == b'/')
            .all(|c| !c.is_empty() && c != b"." && c != b"..");
        (plain && !bytes.contains(&0)).then(|| RelPath(bytes.to_vec()))
    }
}

impl fmt::Debug for RelPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.lossy())
    }
}

impl fmt::Display for RelPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.lossy())
    }
}

#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum Wire {
    Text(String),
    Bytes { bytes: Vec<u8> },
}

impl Serialize for RelPath {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match std::str::from_utf8(&self.0) {
            Ok(text) => Wire::Text(text.to_string()),
            Err(_) => Wire::Bytes {
                bytes: self.0.clone(),
            },
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for RelPath {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<RelPath, D::Error> {
        Ok(match Wire::deserialize(d)? {
            Wire::Text(text) => RelPath(text.into_bytes()),
            Wire::Bytes { bytes } => RelPath(bytes),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parents_and_depth() {
        let p = RelPath::parse("src/engine/mod.rs").unwrap();
        assert_eq!(p.name(), b"mod.rs");
        assert_eq!(p.parent(), RelPath::parse("src/engine"));
        assert_eq!(p.depth(), 3);
        assert_eq!(RelPath::parse("a").unwrap().parent(), Some(RelPath::root()));
        assert_eq!(RelPath::root().parent(), None);
        assert!(p.is_within(&RelPath::parse("src").unwrap()));
        assert!(
            !RelPath::parse("srcx/a")
                .unwrap()
                .is_within(&RelPath::parse("src").unwrap())
        );
        assert!(p.is_within(&RelPath::root()));
        assert_eq!(RelPath::parse("../x"), None);
        assert_eq!(RelPath::parse("/etc/passwd"), None);
        assert_eq!(
            RelPath::under(Path::new("/w"), Path::new("/w/a/b"))
                .unwrap()
                .as_bytes(),
            b"a/b"
        );
        assert_eq!(RelPath::under(Path::new("/w"), Path::new("/x/a")), None);
    }

    #[test]
    fn serialises_text_as_a_string_and_other_bytes_as_a_list() {
        let text = RelPath::parse("dir/é.txt").unwrap();
        assert_eq!(serde_json::to_string(&text).unwrap(), "\"dir/é.txt\"");
        let raw = RelPath::root().join(b"bad\xff\n");
        let json = serde_json::to_string(&raw).unwrap();
        assert_eq!(json, "{\"bytes\":[98,97,100,255,10]}");
        for p in [text, raw] {
            let back: RelPath = serde_json::from_str(&serde_json::to_string(&p).unwrap()).unwrap();
            assert_eq!(back, p);
        }
    }
}
