//! The engine's layers, read from its source. `flower_tui::engine::LAYERS` is the order; these
//! tests fail when an engine module imports one in a higher layer (naming the file and the module
//! it imports), when the engine's top-level modules import each other in a circle, when a
//! top-level engine module is missing from the table, when the engine names the rest of the crate
//! or a terminal crate, and when two files anywhere in `src/` import each other (a directory's
//! `mod.rs` and its own children excepted).
//!
//! Test code is exempt: `#[cfg(test)]` items, `*_tests.rs` and `tests.rs` files and `tests/`
//! folders. Imports are `use` trees (grouped, renamed, globbed) and paths written inline from
//! `crate::`, `super::` or `self::`; comments and string literals are blanked first
//! (`layers/imports.rs`, which has its own tests, so the checks cannot pass by reading nothing).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use flower_tui::engine::LAYERS;

mod imports;
mod surface;

use imports::{ModPath, blank, imported_paths, is_test_file, module_of, resolve, strip_test_items};

/// Crates the engine must never name (it runs without a terminal).
const TERMINAL_CRATES: [&str; 3] = ["ratatui", "crossterm", "tui_textarea"];

// ---------------------------------------------------------------------------------------------
// Reading the source tree

/// One production source file: where it is, its module, and the modules its code imports.
struct SourceFile {
    rel: PathBuf,
    module: ModPath,
    imports: BTreeSet<ModPath>,
    /// Paths whose first segment is a terminal crate.
    terminal: Vec<String>,
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir`, relative to it.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in fs::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                todo.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path.strip_prefix(dir).unwrap().to_path_buf());
            }
        }
    }
    out.sort();
    out
}

/// The production files of `src/` with their resolved imports.
fn read_tree() -> Vec<SourceFile> {
    let src = src_dir();
    let files: Vec<PathBuf> = rust_files(&src)
        .into_iter()
        .filter(|rel| !is_test_file(rel))
        .collect();
    let modules: BTreeSet<ModPath> = rust_files(&src).iter().map(|r| module_of(r)).collect();
    files
        .into_iter()
        .map(|rel| {
            let text = fs::read_to_string(src.join(&rel)).unwrap();
            let code = strip_test_items(&blank(&text));
            let module = module_of(&rel);
            let paths = imported_paths(&code, &TERMINAL_CRATES);
            let terminal = paths
                .iter()
                .filter(|p| {
                    p.first()
                        .is_some_and(|f| TERMINAL_CRATES.contains(&f.as_str()))
                })
                .map(|p| p.join("::"))
                .collect();
            let imports = paths
                .iter()
                .filter_map(|p| resolve(&module, p, &modules))
                .collect();
            SourceFile {
                rel: Path::new("src").join(rel),
                module,
                imports,
                terminal,
            }
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The checks

/// The engine's top-level module a module path belongs to.
fn engine_top(m: &ModPath) -> Option<&str> {
    match m.as_slice() {
        [engine, top, ..] if engine == "engine" => Some(top.as_str()),
        _ => None,
    }
}

fn layer_of(top: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&top))
}

/// The top-level modules of `src/engine`: `x.rs` (not a test file) and `x/mod.rs`.
fn engine_modules() -> BTreeSet<String> {
    rust_files(&src_dir().join("engine"))
        .iter()
        .filter(|rel| !is_test_file(rel))
        .filter_map(|rel| match module_of(rel).as_slice() {
            [top] => Some(top.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn the_layer_table_names_every_engine_module_once() {
    let listed: Vec<&str> = LAYERS.iter().flat_map(|l| l.iter().copied()).collect();
    let unique: BTreeSet<&str> = listed.iter().copied().collect();
    assert_eq!(
        unique.len(),
        listed.len(),
        "a module is listed twice: {listed:?}"
    );
    let present = engine_modules();
    let missing: Vec<&String> = present
        .iter()
        .filter(|m| !unique.contains(m.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "engine modules missing from engine::LAYERS (src/engine/mod.rs): {missing:?}"
    );
    let stale: Vec<&&str> = unique.iter().filter(|m| !present.contains(**m)).collect();
    assert!(
        stale.is_empty(),
        "engine::LAYERS names modules that do not exist: {stale:?}"
    );
}

#[test]
fn no_engine_module_imports_a_higher_layer() {
    let tree = read_tree();
    let mut upward = Vec::new();
    let mut outside = Vec::new();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut checked = 0;
    for file in tree
        .iter()
        .filter(|f| f.module.first().is_some_and(|m| m == "engine"))
    {
        for t in &file.terminal {
            outside.push(format!(
                "{} names the terminal crate path {t}",
                file.rel.display()
            ));
        }
        let Some(from) = engine_top(&file.module) else {
            continue; // engine/mod.rs itself: only the module list and the table
        };
        for import in &file.imports {
            if import.first().is_none_or(|m| m != "engine") {
                outside.push(format!(
                    "{} imports crate::{}: the engine imports nothing outside src/engine",
                    file.rel.display(),
                    import.join("::")
                ));
                continue;
            }
            let Some(to) = engine_top(import) else {
                continue;
            };
            if to == from {
                continue;
            }
            checked += 1;
            edges.entry(from.into()).or_default().insert(to.into());
            match (layer_of(from), layer_of(to)) {
                (Some(a), Some(b)) if b > a => upward.push(format!(
                    "{} (layer {a}, `{from}`) imports engine::{} (layer {b}, `{to}`)",
                    file.rel.display(),
                    import.join("::").trim_start_matches("engine::")
                )),
                _ => {}
            }
        }
    }
    // Reading nothing would pass everything: the session alone imports a dozen modules.
    assert!(
        checked > 100,
        "only {checked} engine imports were found: the parser is broken"
    );
    assert!(
        edges
            .get("session")
            .is_some_and(|s| s.contains("protocol") && s.len() > 10)
    );
    upward.extend(outside);
    assert!(
        upward.is_empty(),
        "imports against the layers:\n{}",
        upward.join("\n")
    );
    let cycle = find_cycle(&edges);
    assert!(
        cycle.is_none(),
        "top-level engine modules import each other: {cycle:?}"
    );
}

/// A circle in a graph (as its nodes in order), if there is one.
fn find_cycle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        stack: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = stack.iter().position(|n| n == node) {
            let mut cycle = stack.split_off(i);
            cycle.push(node.to_string());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        stack.push(node.to_string());
        for next in edges.get(node).into_iter().flatten() {
            if let Some(c) = visit(next, edges, stack, done) {
                return Some(c);
            }
        }
        stack.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    edges
        .keys()
        .find_map(|n| visit(n, edges, &mut Vec::new(), &mut done))
}

#[test]
fn no_two_files_import_each_other() {
    let tree = read_tree();
    let by_module: BTreeMap<&ModPath, &SourceFile> = tree.iter().map(|f| (&f.module, f)).collect();
    let related = |a: &ModPath, b: &ModPath| a.starts_with(b) || b.starts_with(a);
    let mut pairs = BTreeSet::new();
    for file in &tree {
        for import in &file.imports {
            let Some(other) = by_module.get(import) else {
                continue;
            };
            if other.imports.contains(&file.module) && !related(&file.module, import) {
                let mut pair = [
                    file.rel.display().to_string(),
                    other.rel.display().to_string(),
                ];
                pair.sort();
                pairs.insert(format!("{} <-> {}", pair[0], pair[1]));
            }
        }
    }
    assert!(
        pairs.is_empty(),
        "files that import each other:\n{}",
        pairs.into_iter().collect::<Vec<_>>().join("\n")
    );
}

// ---------------------------------------------------------------------------------------------
// Tests of the checks' own helpers

#[test]
fn a_circle_is_found_and_named() {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    edges.entry("a".into()).or_default().insert("b".into());
    edges.entry("b".into()).or_default().insert("c".into());
    assert_eq!(find_cycle(&edges), None);
    edges.entry("c".into()).or_default().insert("a".into());
    assert_eq!(
        find_cycle(&edges),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
}
