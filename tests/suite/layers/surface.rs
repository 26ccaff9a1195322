//! The library's surface: a module is `pub` only when something outside the library names it
//! (the integration tests under `tests/`, the benches, or the binary in `src/main.rs`, which is
//! a crate of its own). Every other module is `pub(crate)`, so a module nobody outside uses
//! cannot become `pub` again without this test naming it.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use super::imports::{ModPath, blank, imported_paths, is_test_file, module_of, strip_test_items};
use super::{rust_files, src_dir};

/// Every module of `src/` reachable from outside: declared `pub mod` in a module that is itself
/// reachable (the crate root is).
fn exported_modules() -> BTreeSet<ModPath> {
    let src = src_dir();
    let mut declared = BTreeSet::new();
    for rel in rust_files(&src).into_iter().filter(|r| !is_test_file(r)) {
        let text = fs::read_to_string(src.join(&rel)).unwrap();
        let module = module_of(&rel);
        for line in strip_test_items(&blank(&text)).lines() {
            let decl = line.trim().strip_prefix("pub mod ");
            if let Some(name) = decl.and_then(|d| d.strip_suffix(';')) {
                let mut path = module.clone();
                path.push(name.trim().to_string());
                declared.insert(path);
            }
        }
    }
    declared
        .iter()
        .filter(|m| (1..=m.len()).all(|n| m.get(..n).is_some_and(|p| declared.contains(p))))
        .cloned()
        .collect()
}

/// Every path below `flower_tui::` that the tests, the benches and the binary name: imported or
/// written inline, and through an imported name (`use flower_tui::engine::hooks::{self, …}` then
/// `hooks::config::from_toml`).
fn named_outside() -> Vec<ModPath> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<_> = ["tests", "benches"]
        .iter()
        .flat_map(|d| {
            rust_files(&root.join(d))
                .into_iter()
                .map(move |r| root.join(d).join(r))
        })
        .collect();
    files.push(root.join("src/main.rs"));
    let mut named = Vec::new();
    for f in files {
        let code = blank(&fs::read_to_string(f).unwrap());
        let ours: Vec<ModPath> = imported_paths(&code, &["flower_tui"])
            .into_iter()
            .filter(|p| p.first().is_some_and(|r| r == "flower_tui"))
            .map(|p| p.get(1..).unwrap_or_default().to_vec())
            .collect();
        let aliases: Vec<&str> = ours
            .iter()
            .filter_map(|p| p.last())
            .map(String::as_str)
            .collect();
        for inline in imported_paths(&code, &aliases) {
            let Some((first, rest)) = inline.split_first() else {
                continue;
            };
            for full in ours.iter().filter(|p| p.last() == Some(first)) {
                named.push(full.iter().chain(rest).cloned().collect());
            }
        }
        named.extend(ours);
    }
    named
}

#[test]
fn every_pub_module_is_named_outside_the_library() {
    let exported = exported_modules();
    let named = named_outside();
    let m = |s: &str| -> ModPath { s.split("::").map(str::to_string).collect() };
    // The reading works: the engine and its protocol are exported and named.
    for known in ["engine", "engine::protocol"] {
        assert!(exported.contains(&m(known)), "{known} not read as pub");
        assert!(
            named.iter().any(|p| p.starts_with(&m(known))),
            "{known} not named"
        );
    }
    let unnamed: Vec<String> = exported
        .iter()
        .filter(|module| !named.iter().any(|p| p.starts_with(module)))
        .map(|module| module.join("::"))
        .collect();
    assert!(
        unnamed.is_empty(),
        "pub modules that nothing outside the library names (make them pub(crate)): {unnamed:?}"
    );
}
