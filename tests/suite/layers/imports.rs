//! Reading a Rust file's imports without a compiler: comments and literals blanked,
//! `#[cfg(test)]` items dropped, `use` trees expanded to their leaves, paths written inline from
//! `crate::`, `super::` or `self::` collected, and each path resolved to the module of the crate
//! it lands in. Its own tests are below, so the layer checks cannot pass by reading nothing.

use std::collections::BTreeSet;

use std::path::Path;

/// A module path below the crate root: `["engine", "ledger", "manifest"]`.
pub(super) type ModPath = Vec<String>;

/// The module a file under `src/` defines: `lib.rs` is the root, `x/mod.rs` is `x`.
pub(super) fn module_of(rel: &Path) -> ModPath {
    let mut parts: ModPath = rel
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// Test code by its file: `*_tests.rs`, `tests.rs`, anything in a `tests/` folder.
pub(super) fn is_test_file(rel: &Path) -> bool {
    let stem = rel.file_stem().map(|s| s.to_string_lossy().into_owned());
    stem.is_some_and(|s| s == "tests" || s.ends_with("_tests"))
        || rel
            .parent()
            .is_some_and(|p| p.components().any(|c| c.as_os_str() == "tests"))
}

/// The source with comments, string and character literals replaced by spaces (newlines kept),
/// so that nothing quoted or commented counts as an import.
pub(super) fn blank(src: &str) -> String {
    let c: Vec<char> = src.chars().collect();
    let mut out: Vec<char> = c.clone();
    let at = |i: usize| c.get(i).copied().unwrap_or('\0');
    let wipe = |out: &mut Vec<char>, from: usize, to: usize| {
        for ch in out.iter_mut().take(to.min(c.len())).skip(from) {
            if *ch != '\n' {
                *ch = ' ';
            }
        }
    };
    let mut i = 0;
    while i < c.len() {
        let prev_ident = i > 0 && (at(i - 1).is_alphanumeric() || at(i - 1) == '_');
        if at(i) == '/' && at(i + 1) == '/' {
            let end = (i..c.len()).find(|&j| at(j) == '\n').unwrap_or(c.len());
            wipe(&mut out, i, end);
            i = end;
        } else if at(i) == '/' && at(i + 1) == '*' {
            let (mut depth, mut j) = (0usize, i);
            while j < c.len() {
                if at(j) == '/' && at(j + 1) == '*' {
                    depth += 1;
                    j += 2;
                } else if at(j) == '*' && at(j + 1) == '/' {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            wipe(&mut out, i, j);
            i = j;
        } else if !prev_ident && (at(i) == 'r' || (at(i) == 'b' && at(i + 1) == 'r')) && {
            let s = if at(i) == 'b' { i + 2 } else { i + 1 };
            let hashes = (s..c.len()).take_while(|&j| at(j) == '#').count();
            at(s + hashes) == '"'
        } {
            let s = if at(i) == 'b' { i + 2 } else { i + 1 };
            let hashes = (s..c.len()).take_while(|&j| at(j) == '#').count();
            let mut j = s + hashes + 1;
            while j < c.len() && !(at(j) == '"' && (1..=hashes).all(|k| at(j + k) == '#')) {
                j += 1;
            }
            let end = j + 1 + hashes;
            wipe(&mut out, i, end);
            i = end;
        } else if at(i) == '"' {
            let mut j = i + 1;
            while j < c.len() && at(j) != '"' {
                j += if at(j) == '\\' { 2 } else { 1 };
            }
            wipe(&mut out, i, j + 1);
            i = j + 1;
        } else if at(i) == '\'' && (at(i + 1) == '\\' || at(i + 2) == '\'') {
            // A character literal ('x', '\n', '\u{1F600}'); a lifetime ('a) has no closing quote.
            let mut j = i + 2;
            while j < c.len() && at(j) != '\'' {
                j += 1;
            }
            wipe(&mut out, i, j + 1);
            i = j + 1;
        } else {
            i += 1;
        }
    }
    out.into_iter().collect()
}

/// The code without the items marked `#[cfg(test)]` (a test module, a test-only `use` or helper).
pub(super) fn strip_test_items(code: &str) -> String {
    let c: Vec<char> = code.chars().collect();
    let mut out = c.clone();
    let marker: Vec<char> = "#[cfg(test)]".chars().collect();
    let at = |i: usize| c.get(i).copied().unwrap_or('\0');
    let mut i = 0;
    while i + marker.len() <= c.len() {
        if c.get(i..i + marker.len()) != Some(&marker[..]) {
            i += 1;
            continue;
        }
        let mut j = i + marker.len();
        // Further attributes of the same item.
        loop {
            while at(j).is_whitespace() {
                j += 1;
            }
            if at(j) == '#' && at(j + 1) == '[' {
                let mut depth = 0;
                while j < c.len() {
                    match at(j) {
                        '[' => depth += 1,
                        ']' => {
                            depth -= 1;
                            if depth == 0 {
                                j += 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                    j += 1;
                }
            } else {
                break;
            }
        }
        // The item ends at its first `;` outside brackets, or with the block it opens.
        let mut depth = 0i32;
        while j < c.len() {
            match at(j) {
                '(' | '[' => depth += 1,
                ')' | ']' => depth -= 1,
                ';' if depth == 0 => break,
                '{' if depth == 0 => {
                    let mut braces = 0;
                    while j < c.len() {
                        match at(j) {
                            '{' => braces += 1,
                            '}' => {
                                braces -= 1;
                                if braces == 0 {
                                    break;
                                }
                            }
                            _ => {}
                        }
                        j += 1;
                    }
                    break;
                }
                _ => {}
            }
            j += 1;
        }
        for ch in out.iter_mut().take((j + 1).min(c.len())).skip(i) {
            if *ch != '\n' {
                *ch = ' ';
            }
        }
        i = j + 1;
    }
    out.into_iter().collect()
}

/// Identifiers and the punctuation a path or `use` tree is made of.
fn tokens(code: &str) -> Vec<String> {
    let c: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(&ch) = c.get(i) {
        if ch.is_alphanumeric() || ch == '_' {
            let start = i;
            while c.get(i).is_some_and(|x| x.is_alphanumeric() || *x == '_') {
                i += 1;
            }
            out.push(c.get(start..i).unwrap_or_default().iter().collect());
        } else if ch == ':' && c.get(i + 1) == Some(&':') {
            out.push("::".into());
            i += 2;
        } else {
            if !ch.is_whitespace() {
                out.push(ch.to_string());
            }
            i += 1;
        }
    }
    out
}

/// Every path the code names: each `use` tree expanded to its leaves, and each path written
/// inline from `crate`, `super`, `self` or one of `roots` (other crates to watch for).
pub(super) fn imported_paths(code: &str, roots: &[&str]) -> Vec<Vec<String>> {
    let toks = tokens(code);
    let tok = |i: usize| toks.get(i).map(String::as_str).unwrap_or("");
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        if tok(i) == "use" {
            let end = (i..toks.len())
                .find(|&j| tok(j) == ";")
                .unwrap_or(toks.len());
            let tree = toks.get(i + 1..end).unwrap_or_default();
            let mut pos = 0;
            expand_use(tree, &mut pos, &[], &mut out);
            i = end;
            continue;
        }
        let starts_path = (matches!(tok(i), "crate" | "super" | "self") || roots.contains(&tok(i)))
            && tok(i + 1) == "::"
            && !(i > 0 && tok(i - 1) == "::");
        if starts_path {
            let mut path = vec![tok(i).to_string()];
            let mut j = i + 1;
            while tok(j) == "::"
                && tok(j + 1)
                    .chars()
                    .all(|ch| ch.is_alphanumeric() || ch == '_')
                && !tok(j + 1).is_empty()
            {
                path.push(tok(j + 1).to_string());
                j += 2;
            }
            out.push(path);
            i = j;
            continue;
        }
        i += 1;
    }
    out
}

/// Expand one `use` tree (`a::{b, c::{d, self}, e as f, g::*}`) starting at `pos` below `prefix`.
fn expand_use(toks: &[String], pos: &mut usize, prefix: &[String], out: &mut Vec<Vec<String>>) {
    let tok = |i: usize| toks.get(i).map(String::as_str).unwrap_or("");
    let mut path = prefix.to_vec();
    if tok(*pos) == "::" {
        *pos += 1; // a leading `::` (an extern crate path)
    }
    loop {
        match tok(*pos) {
            "{" => {
                *pos += 1;
                while !matches!(tok(*pos), "}" | "") {
                    let before = *pos;
                    expand_use(toks, pos, &path, out);
                    if tok(*pos) == "," || *pos == before {
                        *pos += 1;
                    }
                }
                *pos += 1;
                return;
            }
            "*" => {
                *pos += 1;
                out.push(path);
                return;
            }
            "self" if !path.is_empty() => {
                *pos += 1;
            }
            seg if !seg.is_empty() && seg.chars().all(|ch| ch.is_alphanumeric() || ch == '_') => {
                path.push(seg.to_string());
                *pos += 1;
            }
            _ => {}
        }
        if tok(*pos) == "::" {
            *pos += 1;
            continue;
        }
        if tok(*pos) == "as" {
            *pos += 2;
        }
        out.push(path);
        return;
    }
}

/// The module of the crate a path from `current` lands in (the longest prefix that is a module),
/// or None for another crate, a local item, or `current` itself.
pub(super) fn resolve(
    current: &ModPath,
    path: &[String],
    modules: &BTreeSet<ModPath>,
) -> Option<ModPath> {
    let mut segs = path.iter().map(String::as_str).peekable();
    let mut base: ModPath = match segs.peek().copied() {
        Some("crate") => {
            segs.next();
            Vec::new()
        }
        Some("super" | "self") => current.clone(),
        Some(first) => {
            // A bare first segment is a child module of this one (2018 paths), or another crate.
            let mut child = current.clone();
            child.push(first.to_string());
            if !modules.contains(&child) {
                return None;
            }
            current.clone()
        }
        None => return None,
    };
    while let Some(&s) = segs.peek() {
        match s {
            "super" => {
                base.pop();
            }
            "self" => {}
            _ => break,
        }
        segs.next();
    }
    let full: ModPath = base.into_iter().chain(segs.map(str::to_string)).collect();
    (0..=full.len())
        .rev()
        .filter_map(|k| full.get(..k))
        .find(|prefix| modules.contains(*prefix))
        .map(<[String]>::to_vec)
        .filter(|m| m != current)
}

// ---------------------------------------------------------------------------------------------
// Tests

fn m(s: &str) -> ModPath {
    s.split("::")
        .filter(|x| !x.is_empty())
        .map(str::to_string)
        .collect()
}

fn paths(code: &str) -> Vec<String> {
    imported_paths(&strip_test_items(&blank(code)), &["ratatui"])
        .into_iter()
        .map(|p| p.join("::"))
        .collect()
}

#[test]
fn use_trees_expand_to_every_leaf() {
    let code = "use crate::engine::{ledger::{self, Manifest}, tools::text as t, types::*};\n\
                pub(crate) use super::super::lock;\nuse std::fs;";
    assert_eq!(
        paths(code),
        [
            "crate::engine::ledger",
            "crate::engine::ledger::Manifest",
            "crate::engine::tools::text",
            "crate::engine::types",
            "super::super::lock",
            "std::fs",
        ]
    );
}

#[test]
fn inline_paths_count_and_quoted_or_commented_ones_do_not() {
    let code = r##"
        fn f() {
            let m = crate::engine::ledger::Manifest::load(p);
            super::super::handoff::freeze();
            // crate::engine::session::spawn in a comment
            /* crate::engine::protocol /* nested */ crate::engine::mcp */
            let s = "crate::engine::subagent::x";
            let r = r#"crate::engine::tools"#;
            let c = '"'; let l: &'static str = "";
            self::child::go();
            let f = ratatui::Frame::new;
        }
    "##;
    assert_eq!(
        paths(code),
        [
            "crate::engine::ledger::Manifest::load",
            "super::super::handoff::freeze",
            "self::child::go",
            "ratatui::Frame::new",
        ]
    );
}

#[test]
fn test_items_are_exempt() {
    let code = "use crate::a;\n#[cfg(test)]\n#[path = \"x_tests.rs\"]\nmod tests;\n\
                #[cfg(test)]\nuse crate::b;\n#[cfg(test)]\nmod t {\n use crate::c;\n fn g() { {} }\n}\n\
                use crate::d;";
    assert_eq!(paths(code), ["crate::a", "crate::d"]);
    assert!(is_test_file(Path::new("engine/compact_tests.rs")));
    assert!(is_test_file(Path::new("engine/tools/tests/files.rs")));
    assert!(is_test_file(Path::new("engine/subagent/tests.rs")));
    assert!(!is_test_file(Path::new("engine/tools/text.rs")));
}

#[test]
fn paths_resolve_to_the_module_they_land_in() {
    let modules: BTreeSet<ModPath> = [
        "",
        "engine",
        "engine::ledger",
        "engine::ledger::manifest",
        "engine::handoff",
        "engine::handoff::lock",
        "engine::handoff::store",
    ]
    .into_iter()
    .map(m)
    .collect();
    let store = m("engine::handoff::store");
    let at = |p: &str| resolve(&store, &m(p), &modules);
    assert_eq!(
        at("super::lock::with_doc_lock"),
        Some(m("engine::handoff::lock"))
    );
    assert_eq!(
        at("super::super::ledger::Manifest::load"),
        Some(m("engine::ledger"))
    );
    assert_eq!(
        at("crate::engine::ledger::manifest::Held"),
        Some(m("engine::ledger::manifest"))
    );
    assert_eq!(at("super::HandoffDoc"), Some(m("engine::handoff")));
    assert_eq!(at("self::inner"), None, "a file's own items are no import");
    assert_eq!(at("serde::Serialize"), None, "another crate");
    // In a mod.rs, a bare first segment may be a child module.
    let handoff = m("engine::handoff");
    assert_eq!(
        resolve(&handoff, &m("store::freeze"), &modules),
        Some(m("engine::handoff::store"))
    );
    assert_eq!(
        module_of(Path::new("engine/ledger/mod.rs")),
        m("engine::ledger")
    );
    assert_eq!(module_of(Path::new("lib.rs")), m(""));
}
