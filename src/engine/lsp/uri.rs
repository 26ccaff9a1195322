//! Files as servers name them (`file://` URIs, percent-encoded) and as people read them (relative
//! to the workspace when inside it).

use std::path::{Path, PathBuf};

/// The `file://` URI of an absolute path.
pub(crate) fn of_path(path: &Path) -> String {
    url::Url::from_file_path(path)
        .map_or_else(|()| format!("file://{}", path.display()), |u| u.to_string())
}

/// The path a `file://` URI names; None for any other scheme.
pub(crate) fn to_path(uri: &lsp_types::Uri) -> Option<PathBuf> {
    url::Url::parse(uri.as_str()).ok()?.to_file_path().ok()
}

/// `path` as shown: relative to `workspace` when inside it.
pub(crate) fn shown(path: &Path, workspace: &Path) -> String {
    path.strip_prefix(workspace)
        .unwrap_or(path)
        .display()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    #[test]
    fn paths_go_to_uris_and_back() {
        let p = Path::new("/w/a dir/é.py");
        let u = of_path(p);
        assert_eq!(u, "file:///w/a%20dir/%C3%A9.py");
        let back = to_path(&lsp_types::Uri::from_str(&u).unwrap());
        assert_eq!(back.as_deref(), Some(p));
        assert_eq!(shown(p, Path::new("/w")), "a dir/é.py");
        assert_eq!(shown(p, Path::new("/x")), "/w/a dir/é.py");
        assert_eq!(
            to_path(&lsp_types::Uri::from_str("untitled:1").unwrap()),
            None
        );
    }
}
