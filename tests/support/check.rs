//! The checks the suites make again and again, each failing with what it expected and what it
//! found: a process's exit (with its output), an event of a type present or absent (JSON lines of
//! the headless output, or the engine's typed events), text inside (or at the start of) a request,
//! a file's bytes; and `picked!`, what the events of one kind say.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

/// The process exited with `code`; if not, the failure shows its status, stderr and stdout.
#[track_caller]
pub fn assert_exit(out: &Output, code: i32) {
    assert!(
        out.status.code() == Some(code),
        "expected exit {code}, got {}\n--- stderr\n{}\n--- stdout\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
}

/// The process exited 0 (see [`assert_exit`]).
#[track_caller]
pub fn assert_success(out: &Output) {
    assert_exit(out, 0);
}

/// The `type` of every event, in order (what a failure shows).
pub fn types(events: &[Value]) -> Vec<&str> {
    events
        .iter()
        .map(|e| e["type"].as_str().unwrap_or("?"))
        .collect()
}

/// The events whose `type` is `ty`.
pub fn of<'a>(events: &'a [Value], ty: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == ty).collect()
}

/// The string `key` of every event of type `ty`, in order ("" where an event has none).
pub fn strs_of(events: &[Value], ty: &str, key: &str) -> Vec<String> {
    of(events, ty)
        .iter()
        .map(|e| e[key].as_str().unwrap_or_default().to_string())
        .collect()
}

/// Whether an event of type `ty` is among `events`.
pub fn has(events: &[Value], ty: &str) -> bool {
    events.iter().any(|e| e["type"] == ty)
}

/// The first event of type `ty`; the test fails, naming the types there were, if there is none.
#[track_caller]
pub fn event<'a>(events: &'a [Value], ty: &str) -> &'a Value {
    events
        .iter()
        .find(|e| e["type"] == ty)
        .unwrap_or_else(|| panic!("no {ty:?} event among {:?}", types(events)))
}

/// The string `key` of each item of the array `list`, in order; the test fails, showing `list`,
/// if it is not an array or an item has no such string.
#[track_caller]
pub fn each_str<'a>(list: &'a Value, key: &str) -> Vec<&'a str> {
    let items = list
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {list}"));
    items
        .iter()
        .map(|item| {
            item[key]
                .as_str()
                .unwrap_or_else(|| panic!("no string {key:?} in {item} of {list}"))
        })
        .collect()
}

/// The `phase` of every `handoff` event, in order.
pub fn handoff_phases(events: &[Value]) -> Vec<&str> {
    of(events, "handoff")
        .into_iter()
        .filter_map(|e| e["phase"].as_str())
        .collect()
}

/// The `tool_result` event of the call `id`; the test fails if there is none.
#[track_caller]
pub fn tool_result<'a>(events: &'a [Value], id: &str) -> &'a Value {
    events
        .iter()
        .find(|e| e["type"] == "tool_result" && e["id"] == id)
        .unwrap_or_else(|| panic!("no result for {id}: {events:?}"))
}

/// No event of type `ty` is among `events`; the test fails with the first one if there is.
#[track_caller]
pub fn assert_absent(events: &[Value], ty: &str) {
    if let Some(e) = events.iter().find(|e| e["type"] == ty) {
        panic!("unexpected {ty:?} event: {e}");
    }
}

/// `hay` holds `needle`; the failure shows the whole of `hay`.
#[track_caller]
pub fn assert_contains(hay: &str, needle: &str) {
    assert!(hay.contains(needle), "{needle:?} not in:\n{hay}");
}

/// `hay` does not hold `needle`; the failure shows the whole of `hay`.
#[track_caller]
pub fn assert_lacks(hay: &str, needle: &str) {
    assert!(!hay.contains(needle), "{needle:?} should not be in:\n{hay}");
}

/// `hay` begins with `prefix`; the failure shows the whole of `hay`.
#[track_caller]
pub fn assert_starts_with(hay: &str, prefix: &str) {
    assert!(
        hay.starts_with(prefix),
        "does not begin with {prefix:?}:\n{hay}"
    );
}

/// The file at `path` holds exactly `expected`; the failure shows both (as text).
#[track_caller]
pub fn assert_file(path: impl AsRef<Path>, expected: impl AsRef<[u8]>) {
    let path = path.as_ref();
    let got = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let expected = expected.as_ref();
    assert!(
        got == expected,
        "{} holds\n{:?}\nexpected\n{:?}",
        path.display(),
        String::from_utf8_lossy(&got),
        String::from_utf8_lossy(expected)
    );
}

/// Some event among `events` (the engine's typed ones) matches the pattern; the failure shows
/// them all.
macro_rules! assert_event {
    ($events:expr, $($pattern:pat_param)|+ $(if $guard:expr)? $(,)?) => {{
        let events = &$events;
        assert!(
            events.iter().any(|e| matches!(e, $($pattern)|+ $(if $guard)?)),
            "no event matches `{}` among:\n{:#?}",
            stringify!($($pattern)|+ $(if $guard)?),
            events
        );
    }};
}

/// No event among `events` matches the pattern; the failure shows the one that does.
macro_rules! assert_no_event {
    ($events:expr, $($pattern:pat_param)|+ $(if $guard:expr)? $(,)?) => {{
        if let Some(e) = $events.iter().find(|e| matches!(e, $($pattern)|+ $(if $guard)?)) {
            panic!(
                "an event matches `{}`: {:#?}",
                stringify!($($pattern)|+ $(if $guard)?),
                e
            );
        }
    }};
}

/// What `$out` says of every event among `$events` that matches the pattern, in order.
macro_rules! picked {
    ($events:expr, $pattern:pat $(if $guard:expr)? => $out:expr) => {
        $events
            .iter()
            .filter_map(|e| match e {
                $pattern $(if $guard)? => Some($out),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
}

pub(crate) use {assert_event, assert_no_event, picked};
