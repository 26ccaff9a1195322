//! The engine's layers, read from its source. `flower_tui::engine::LAYERS` is the order; these
//! tests fail when an engine module imports one in a higher layer (naming the file and the module
//! it imports), when the engine's top-level modules import each other in a circle, when a
//! top-level engine module is missing from the table, when the engine names the rest of the crate
//! or a terminal crate, and when files anywhere in `src/` import each other in a circle of any
//! length (naming each circle; the imports between a directory's `mod.rs` and the files below it
//! are the module's own wiring and do not count, but a circle through a `mod.rs` by any other
//! import does). The session engine's size is guarded too (`layers/engine_size.rs`).
//!
//! Test code is exempt: `#[cfg(test)]` items, `*_tests.rs` and `tests.rs` files and `tests/`
//! folders. Imports are `use` trees (grouped, renamed, globbed) and paths written inline from
//! `crate::`, `super::` or `self::`; comments and string literals are blanked first
//! (`layers/imports.rs`, which has its own tests, so the checks cannot pass by reading nothing).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use flower_tui::engine::LAYERS;

mod engine_size;
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
    let circles = find_circles(&edges);
    assert!(
        circles.is_empty(),
        "top-level engine modules import each other: {circles:?}"
    );
}

#[test]
fn no_files_import_each_other_in_a_circle() {
    let tree = read_tree();
    let file_of: BTreeMap<&ModPath, String> = tree
        .iter()
        .map(|f| (&f.module, f.rel.display().to_string()))
        .collect();
    // A directory's mod.rs and the files below it are one module's own wiring (a parent
    // re-exports its children, a child names its parent's items): those imports do not count.
    // Any other import does, a circle through a mod.rs too.
    let related = |a: &ModPath, b: &ModPath| a.starts_with(b) || b.starts_with(a);
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut counted = 0;
    for file in &tree {
        let from = file.rel.display().to_string();
        let out = edges.entry(from).or_default();
        for import in file.imports.iter().filter(|i| !related(&file.module, i)) {
            if let Some(to) = file_of.get(import) {
                out.insert(to.clone());
                counted += 1;
            }
        }
    }
    assert!(
        counted > 500,
        "only {counted} imports between files were found: the parser is broken"
    );
    let circles = find_circles(&edges);
    assert!(
        circles.is_empty(),
        "files that import each other in a circle (a type in the wrong file, most often: it \
         belongs beside the code that produces it):\n{}",
        circles
            .iter()
            .map(|c| c.join(" -> "))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// Every circle of a graph, one for each group of nodes that reach each other (its strongly
/// connected component), named by its shortest path from its first node back to itself.
fn find_circles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let nodes: Vec<&String> = edges
        .keys()
        .chain(edges.values().flatten())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let next = |n: &str| edges.get(n).into_iter().flatten();
    // Which nodes each node reaches (the graphs here are a few hundred files).
    let reaches = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut todo: Vec<&str> = next(from).map(String::as_str).collect();
        while let Some(n) = todo.pop() {
            if seen.insert(n.to_string()) {
                todo.extend(next(n).map(String::as_str));
            }
        }
        seen
    };
    let reach: BTreeMap<&str, BTreeSet<String>> =
        nodes.iter().map(|n| (n.as_str(), reaches(n))).collect();
    let mut placed = BTreeSet::new();
    let mut circles = Vec::new();
    for &start in &nodes {
        let Some(mine) = reach.get(start.as_str()) else {
            continue;
        };
        if placed.contains(start) || !mine.contains(start) {
            continue;
        }
        // Its component: the nodes it reaches that reach it back.
        let component: BTreeSet<&String> = mine
            .iter()
            .filter(|n| reach.get(n.as_str()).is_some_and(|r| r.contains(start)))
            .collect();
        placed.extend(component.iter().map(|n| n.to_string()));
        // The shortest way back to `start`, within the component.
        let mut came_from: BTreeMap<&str, &str> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([start.as_str()]);
        'search: while let Some(n) = queue.pop_front() {
            for m in next(n).filter(|m| component.contains(m)) {
                if m == start {
                    // Back from `n` to `start`, then round.
                    let mut path = vec![n.to_string()];
                    let mut at = n;
                    while let Some(prev) = came_from.get(at) {
                        path.push(prev.to_string());
                        at = prev;
                    }
                    path.reverse();
                    path.push(start.clone());
                    circles.push(path);
                    break 'search;
                }
                if !came_from.contains_key(m.as_str()) && m != start {
                    came_from.insert(m, n);
                    queue.push_back(m);
                }
            }
        }
    }
    circles
}

// ---------------------------------------------------------------------------------------------
// Tests of the checks' own helpers

#[test]
fn every_circle_is_found_and_named() {
    let graph = |pairs: &[(&str, &str)]| {
        let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (a, b) in pairs {
            edges
                .entry(a.to_string())
                .or_default()
                .insert(b.to_string());
        }
        edges
    };
    let acyclic = graph(&[("a", "b"), ("b", "c"), ("a", "c")]);
    assert!(find_circles(&acyclic).is_empty());
    let two = graph(&[
        ("a", "b"),
        ("b", "c"),
        ("c", "a"),
        ("c", "d"),
        ("d", "e"),
        ("e", "d"),
        ("x", "y"),
    ]);
    let named: Vec<String> = find_circles(&two).iter().map(|c| c.join(" -> ")).collect();
    assert_eq!(named, ["a -> b -> c -> a", "d -> e -> d"]);
    // The shortest way round is named, not a longer one through the same files.
    let short = graph(&[("a", "b"), ("b", "a"), ("b", "c"), ("c", "a")]);
    let named: Vec<String> = find_circles(&short)
        .iter()
        .map(|c| c.join(" -> "))
        .collect();
    assert_eq!(named, ["a -> b -> a"]);
}
