//! The macOS profile's text, pinned whole, and its parameters.

use std::path::PathBuf;

use super::*;
use crate::engine::tools::sandbox::{Root, RootKind};

fn set(paths: &[(RootKind, &str)]) -> WritableSet {
    WritableSet {
        roots: paths
            .iter()
            .map(|(kind, p)| Root {
                kind: *kind,
                path: PathBuf::from(p),
            })
            .collect(),
        ..WritableSet::default()
    }
}

fn workspace_set() -> WritableSet {
    set(&[
        (RootKind::Workspace, "/Users/ann/project"),
        (RootKind::Temp, "/private/var/folders/xy/T"),
        (RootKind::Temp, "/private/tmp"),
        (RootKind::Device, "/dev/null"),
    ])
}

#[test]
fn the_network_off_profile_denies_writes_network_and_connecting_to_unix_sockets() {
    let p = render(&workspace_set(), NetworkAccess::Blocked);
    assert_eq!(
        p.text,
        "(version 1)\n\
         (allow default)\n\
         ; Writes only below the writable paths.\n\
         (deny file-write*)\n\
         (allow file-write*\n  \
           (subpath (param \"WRITABLE_0\"))\n  \
           (subpath (param \"WRITABLE_1\"))\n  \
           (subpath (param \"WRITABLE_2\"))\n  \
           (subpath (param \"WRITABLE_3\"))\n  \
           (regex #\"^/dev/ttys[0-9]+$\"))\n\
         ; No network, and no connection to a Unix socket (a host service).\n\
         (deny network*)\n\
         (allow network* (local unix-socket))\n\
         ; No signals to processes outside the sandbox.\n\
         (deny signal)\n\
         (allow signal (target same-sandbox))\n"
    );
    let names: Vec<(&str, &str)> = p
        .params
        .iter()
        .map(|(n, path)| (n.as_str(), path.to_str().unwrap()))
        .collect();
    assert_eq!(
        names,
        [
            ("WRITABLE_0", "/Users/ann/project"),
            ("WRITABLE_1", "/private/var/folders/xy/T"),
            ("WRITABLE_2", "/private/tmp"),
            ("WRITABLE_3", "/dev/null"),
        ]
    );
}

#[test]
fn the_network_on_profile_has_no_network_rules() {
    let p = render(&workspace_set(), NetworkAccess::Allowed);
    assert!(!p.text.contains("network"), "{}", p.text);
    assert!(p.text.contains("(deny file-write*)"));
}

#[test]
fn paths_travel_as_parameters_never_in_the_text() {
    let odd = "/Users/ann/a \"quoted\" (dir)\n; (allow default)";
    let p = render(&set(&[(RootKind::Workspace, odd)]), NetworkAccess::Blocked);
    assert!(!p.text.contains("quoted"), "{}", p.text);
    let args: Vec<String> = p
        .args()
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    assert_eq!(args[0], "-p");
    assert_eq!(args[1], p.text);
    assert_eq!(args[2..], ["-D".to_string(), format!("WRITABLE_0={odd}")]);
}

#[test]
fn nothing_writable_leaves_only_the_denial() {
    let p = render(&WritableSet::default(), NetworkAccess::Blocked);
    assert!(p.text.contains("(deny file-write*)"));
    assert!(!p.text.contains("(allow file-write*"), "{}", p.text);
    assert!(p.params.is_empty());
}

#[test]
fn read_only_mode_leaves_the_workspace_out_of_the_profile() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().canonicalize().unwrap();
    let ro = profile(
        &SandboxPolicy::new(super::super::SandboxMode::ReadOnly),
        &ws,
    );
    assert!(ro.params.iter().all(|(_, p)| p != &ws), "{:?}", ro.params);
    let rw = profile(&SandboxPolicy::default(), &ws);
    assert_eq!(rw.params.first().map(|(_, p)| p), Some(&ws));
}
