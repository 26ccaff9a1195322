//! The session engine's size, read from its source: `Engine` (in `src/engine/session/`) keeps at
//! most [`MAX_METHODS`] methods in at most [`MAX_FILES`] files, and no file but the main loop
//! ([`MAIN_LOOP`]) touches more than [`MAX_PARTS`] of its parts. A method is an `fn` of an
//! inherent `impl Engine` block; a part is a field of `struct Engine` (read from its definition
//! in `session/mod.rs`), touched where an `impl Engine` block names `self.<field>`. The engine's
//! behaviour belongs to its parts; `Engine` keeps the orchestration and short delegations. A
//! method is private to its file or open to the session ([`SESSION_WIDE`]), one spelling
//! wherever the file sits: nothing outside `session/` calls `Engine`. The TUI's state, the
//! reducer's one input, keeps at most [`MAX_APP_STATE_FIELDS`] fields at its top: the rest
//! lives in its parts.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use super::imports::{blank, is_test_file, strip_test_items};
use super::{rust_files, src_dir};

/// At most this many methods of `Engine`.
const MAX_METHODS: usize = 90;
/// In at most this many files.
const MAX_FILES: usize = 12;
/// A file touches at most this many of `Engine`'s parts…
const MAX_PARTS: usize = 4;
/// …but the main loop, which hands each op to the part it is about.
const MAIN_LOOP: &str = "main_loop.rs";

/// The one visibility an `Engine` method other files call has.
const SESSION_WIDE: &str = "pub(in crate::engine::session)";

/// At most this many fields at the top of the TUI's `AppState`.
const MAX_APP_STATE_FIELDS: usize = 20;

/// One file with `impl Engine` blocks: its methods and the parts they touch.
#[derive(Debug)]
struct EngineFile {
    rel: PathBuf,
    methods: Vec<String>,
    /// Methods whose visibility is neither private nor [`SESSION_WIDE`], with the one they have.
    odd_visibility: Vec<String>,
    parts: BTreeSet<String>,
}

fn session_dir() -> PathBuf {
    src_dir().join("engine").join("session")
}

/// The production code of a file: comments, literals and test items blanked.
fn code_of(path: &Path) -> String {
    strip_test_items(&blank(&fs::read_to_string(path).unwrap()))
}

/// The text between the brace that opens at `open` and its match.
fn braced(code: &str, open: usize) -> &str {
    let mut depth = 0usize;
    for (i, ch) in code.char_indices().skip_while(|(i, _)| *i < open) {
        match ch {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return code.get(open + 1..i).unwrap_or_default();
                }
            }
            _ => {}
        }
    }
    code.get(open + 1..).unwrap_or_default()
}

/// The field names of `struct Engine` (one field a line, as rustfmt writes them).
fn engine_fields(code: &str) -> Vec<String> {
    struct_fields(code, "Engine")
}

/// The field names of the struct `name` defined in `code`.
fn struct_fields(code: &str, name: &str) -> Vec<String> {
    let Some(at) = code.find(&format!("struct {name} ")) else {
        return Vec::new();
    };
    let Some(open) = code[at..].find('{').map(|o| at + o) else {
        return Vec::new();
    };
    braced(code, open)
        .lines()
        .filter_map(|line| {
            let rest = without_visibility(line.trim_start());
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let after = &rest[name.len()..];
            (!name.is_empty() && after.starts_with(':') && !after.starts_with("::")).then_some(name)
        })
        .collect()
}

/// `text` without a leading `pub`, `pub(crate)`, `pub(in path)`.
fn without_visibility(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("pub") else {
        return text;
    };
    let rest = rest.trim_start();
    match rest
        .strip_prefix('(')
        .and_then(|r| r.find(')').map(|c| &r[c + 1..]))
    {
        Some(after) => after.trim_start(),
        None => rest,
    }
}

/// The visibility a declaration starts with (empty for a private item).
fn visibility(line: &str) -> &str {
    let text = line.trim_start();
    let rest = without_visibility(text);
    text[..text.len() - rest.len()].trim_end()
}

/// The name of the function a line declares, if it does.
fn fn_name(line: &str) -> Option<String> {
    let mut rest = without_visibility(line.trim_start());
    while let Some(r) = ["const ", "async ", "unsafe "]
        .iter()
        .find_map(|q| rest.strip_prefix(q))
    {
        rest = r.trim_start();
    }
    let rest = rest.strip_prefix("fn ")?.trim_start();
    let name: String = rest
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty()).then_some(name)
}

/// The bodies of the inherent `impl Engine` blocks of `code` (`impl Trait for Engine` is not
/// one).
fn engine_impls(code: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(found) = code[from..].find("impl") {
        let at = from + found;
        from = at + 4;
        let before_ok = at == 0
            || code[..at]
                .chars()
                .next_back()
                .is_some_and(|c| !(c.is_alphanumeric() || c == '_'));
        let Some(open) = code[at..].find('{').map(|o| at + o) else {
            break;
        };
        let head: Vec<&str> = code[at + 4..open].split_whitespace().collect();
        let generic = head.first().is_some_and(|h| h.starts_with('<'));
        let head = if generic { &head[1..] } else { &head[..] };
        if before_ok && head == ["Engine"] {
            out.push(braced(code, open));
        }
    }
    out
}

/// The methods of an `impl` body: each `fn` at its top level, with its visibility.
fn methods(body: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    for line in body.lines() {
        if depth == 0
            && let Some(name) = fn_name(line)
        {
            out.push((name, visibility(line).to_string()));
        }
        depth += line.matches('{').count();
        depth = depth.saturating_sub(line.matches('}').count());
    }
    out
}

/// The parts (`fields`) an `impl` body touches: `self.<field>` that is not a method call.
fn touched(body: &str, fields: &[String]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = body;
    while let Some(at) = rest.find("self.") {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + 5..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let call = rest[name.len()..].trim_start().starts_with('(');
        if !call && fields.contains(&name) {
            out.insert(name);
        }
    }
    out
}

/// Every production file under `session/` with `impl Engine` blocks, and `Engine`'s fields.
fn engine_files() -> (Vec<EngineFile>, Vec<String>) {
    let dir = session_dir();
    let fields = engine_fields(&code_of(&dir.join("mod.rs")));
    let files = rust_files(&dir)
        .into_iter()
        .filter(|rel| !is_test_file(rel))
        .filter_map(|rel| {
            let code = code_of(&dir.join(&rel));
            let impls = engine_impls(&code);
            let declared: Vec<(String, String)> = impls.iter().flat_map(|b| methods(b)).collect();
            let odd_visibility = declared
                .iter()
                .filter(|(_, vis)| !vis.is_empty() && vis != SESSION_WIDE)
                .map(|(name, vis)| format!("{vis} fn {name}"))
                .collect();
            let methods: Vec<String> = declared.into_iter().map(|(name, _)| name).collect();
            let parts = impls.iter().flat_map(|b| touched(b, &fields)).collect();
            (!methods.is_empty()).then_some(EngineFile {
                rel,
                methods,
                odd_visibility,
                parts,
            })
        })
        .collect();
    (files, fields)
}

#[test]
fn the_engine_keeps_few_methods_in_few_files() {
    let (files, fields) = engine_files();
    // Reading nothing would pass: the engine has a dozen parts and dozens of methods.
    assert!(
        fields.len() >= 10,
        "Engine's fields were not found: {fields:?}"
    );
    let total: usize = files.iter().map(|f| f.methods.len()).sum();
    assert!(
        total > 20,
        "only {total} Engine methods were found: the reader is broken"
    );
    let listing: BTreeMap<String, usize> = files
        .iter()
        .map(|f| (f.rel.display().to_string(), f.methods.len()))
        .collect();
    assert!(
        total <= MAX_METHODS && files.len() <= MAX_FILES,
        "Engine has {total} methods in {} files (at most {MAX_METHODS} in {MAX_FILES}): give the \
         behaviour to the part it is about. Per file: {listing:#?}",
        files.len()
    );
}

#[test]
fn no_engine_file_but_the_main_loop_touches_many_parts() {
    let (files, _) = engine_files();
    let wide: Vec<String> = files
        .iter()
        .filter(|f| f.rel != Path::new(MAIN_LOOP) && f.parts.len() > MAX_PARTS)
        .map(|f| format!("session/{} touches {:?}", f.rel.display(), f.parts))
        .collect();
    assert!(
        wide.is_empty(),
        "files that touch more than {MAX_PARTS} of Engine's parts (pass a part what it needs, \
         or move the method to the file of the parts it is about):\n{}",
        wide.join("\n")
    );
}

#[test]
fn engine_methods_are_private_or_open_to_the_session() {
    let (files, _) = engine_files();
    let odd: Vec<String> = files
        .iter()
        .flat_map(|f| {
            f.odd_visibility
                .iter()
                .map(move |m| format!("session/{}: {m}", f.rel.display()))
        })
        .collect();
    assert!(
        odd.is_empty(),
        "Engine methods are private or {SESSION_WIDE}, whatever the file's depth:\n{}",
        odd.join("\n")
    );
}

#[test]
fn the_tui_state_keeps_few_fields_at_its_top() {
    let code = code_of(&src_dir().join("tui").join("state.rs"));
    let fields = struct_fields(&code, "AppState");
    assert!(
        fields.len() >= 5,
        "AppState's fields were not found: {fields:?}"
    );
    assert!(
        fields.len() <= MAX_APP_STATE_FIELDS,
        "AppState has {} fields at its top (at most {MAX_APP_STATE_FIELDS}): put what belongs \
         together into a part with its own impl. Fields: {fields:?}",
        fields.len()
    );
}

// ---------------------------------------------------------------------------------------------
// Tests of the reader

const SAMPLE: &str = r#"
pub(super) struct Engine {
    run: RunContext,
    /// A doc line: with a colon.
    inbox: Inbox,
    map: BTreeMap<String, Vec<(u8, u8)>>,
    planning: Planning,
}

impl Engine {
    pub(super) fn emit(&self, ev: Event) {
        self.run.events.send(ev);
        if true {
            fn inner() {}
        }
    }

    async fn wait(&mut self) -> Option<Op> {
        self.inbox.ops.recv().await
    }

    pub(in crate::engine::session) fn mode(&self) -> Mode {
        self.planning_mode()
    }
}

impl HandoffCx for Engine {
    fn ledger(&mut self) -> &mut StepLedger {
        &mut self.map
    }
}

impl<'a> Engine {
    const fn none() {}
}
"#;

#[test]
fn the_reader_counts_methods_and_the_parts_they_touch() {
    let fields = engine_fields(SAMPLE);
    assert_eq!(fields, ["run", "inbox", "map", "planning"]);
    let impls = engine_impls(SAMPLE);
    assert_eq!(
        impls.len(),
        2,
        "a trait's impl for Engine is not one of its own"
    );
    let declared: Vec<(String, String)> = impls.iter().flat_map(|b| methods(b)).collect();
    let declared: Vec<(&str, &str)> = declared
        .iter()
        .map(|(name, vis)| (name.as_str(), vis.as_str()))
        .collect();
    assert_eq!(
        declared,
        [
            ("emit", "pub(super)"),
            ("wait", ""),
            ("mode", SESSION_WIDE),
            ("none", "")
        ]
    );
    let parts: BTreeSet<String> = impls.iter().flat_map(|b| touched(b, &fields)).collect();
    // `self.planning_mode()` is a method, not the `planning` part.
    assert_eq!(
        parts,
        BTreeSet::from(["run".to_string(), "inbox".to_string()])
    );
}
