//! Recognising commands by their shape: which ones test or build, the output line that says how
//! a test or build went, and the simple `rm` / `mv` whose effect on files is certain.
//!
//! Recognising a test or build only labels a command, so it reads every part of a compound
//! command loosely. A deletion or a move changes the file facts, so it is recognised only in a
//! command that is one simple command (the approval rule's shell reading, which refuses what it
//! does not understand), with plain paths: no globs, variables, home or brace expansion.

use crate::engine::approvals::{self, Shape};

use super::CheckKind;

/// Programs run through a wrapper: the wrapper is skipped.
const WRAPPERS: &[&str] = &["env", "time", "sudo", "nice", "command", "exec", "nohup"];

/// The kind of check `command` runs, if it is a test or a build (the strongest of its parts:
/// a test over a build).
pub(super) fn check_kind(command: &str) -> Option<CheckKind> {
    let mut found = None;
    for part in loose_parts(command) {
        match part_kind(&part) {
            Some(CheckKind::Test) => return Some(CheckKind::Test),
            Some(CheckKind::Build) => found = Some(CheckKind::Build),
            None => {}
        }
    }
    found
}

/// The words of each simple command of `command`, split at `;`, `&`, `|` and newlines, quotes
/// dropped, leading assignments and wrappers skipped.
fn loose_parts(command: &str) -> Vec<Vec<String>> {
    command
        .split(['\n', ';', '&', '|'])
        .map(|part| {
            let mut words: Vec<String> = part
                .split_whitespace()
                .map(|w| w.trim_matches(['"', '\'', '(', ')']).to_string())
                .filter(|w| !w.is_empty())
                .collect();
            while let Some(first) = words.first() {
                let assignment = first
                    .split_once('=')
                    .is_some_and(|(k, _)| !k.is_empty() && !k.starts_with('-'));
                if assignment || WRAPPERS.contains(&first.as_str()) {
                    words.remove(0);
                } else if first == "timeout" {
                    // `timeout 60 cargo test`
                    words.drain(..words.len().min(2));
                } else {
                    break;
                }
            }
            words
        })
        .filter(|w| !w.is_empty())
        .collect()
}

/// `./gradlew` → `gradlew`, `/usr/bin/python3.12` → `python`.
fn program(word: &str) -> String {
    let base = word.rsplit('/').next().unwrap_or(word);
    let base = base.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    base.to_ascii_lowercase()
}

fn part_kind(words: &[String]) -> Option<CheckKind> {
    use CheckKind::{Build, Test};
    let prog = program(words.first()?);
    let sub = |i: usize| words.get(i).map(String::as_str).unwrap_or_default();
    // The first word after the program that is not an option.
    let first_arg = words
        .iter()
        .skip(1)
        .find(|w| !w.starts_with('-'))
        .map(String::as_str)
        .unwrap_or_default();
    let testish = |w: &str| {
        let w = w.to_ascii_lowercase();
        w.starts_with("test") || w == "check" || w.starts_with("spec") || w == "e2e"
    };
    match prog.as_str() {
        "cargo" => match first_arg {
            "test" | "t" | "nextest" | "miri" => Some(Test),
            "build" | "b" | "check" | "c" | "clippy" => Some(Build),
            _ => None,
        },
        "npm" | "pnpm" | "yarn" | "bun" => {
            let script = if matches!(first_arg, "run" | "run-script") {
                words
                    .iter()
                    .skip(1)
                    .filter(|w| !w.starts_with('-'))
                    .nth(1)
                    .map(String::as_str)
                    .unwrap_or_default()
            } else {
                first_arg
            };
            if testish(script) || script == "t" {
                Some(Test)
            } else if script.starts_with("build") || script == "compile" {
                Some(Build)
            } else {
                None
            }
        }
        "npx" | "pnpx" | "bunx" => part_kind(words.get(1..).unwrap_or_default()),
        "pytest" | "py.test" | "tox" | "nox" | "jest" | "vitest" | "mocha" | "rspec"
        | "phpunit" | "ctest" | "playwright" => Some(Test),
        "tsc" | "ninja" | "msbuild" | "webpack" | "vite" if first_arg != "test" => Some(Build),
        "python" | "py" if sub(1) == "-m" => match sub(2) {
            "pytest" | "unittest" | "tox" | "nose" => Some(Test),
            "build" | "compileall" => Some(Build),
            _ => None,
        },
        "go" | "swift" | "dotnet" | "deno" | "mix" | "zig" | "bazel" | "bazelisk" | "stack"
        | "cabal" | "dune" | "rake" | "x.py" => {
            if testish(first_arg) {
                Some(Test)
            } else if matches!(first_arg, "build" | "compile" | "install" | "vet") {
                // `zig build test` is a test too.
                if words.iter().skip(2).any(|w| testish(w)) {
                    Some(Test)
                } else {
                    Some(Build)
                }
            } else {
                None
            }
        }
        "bundle" if sub(1) == "exec" => part_kind(words.get(2..).unwrap_or_default()),
        "make" | "gmake" | "just" | "task" => {
            if words.iter().skip(1).any(|w| testish(w)) {
                Some(Test)
            } else {
                Some(Build)
            }
        }
        "cmake" if words.iter().any(|w| w == "--build") => Some(Build),
        "mvn" | "mvnw" | "gradle" | "gradlew" | "sbt" | "lein" => {
            if words.iter().skip(1).any(|w| {
                let w = w.rsplit(':').next().unwrap_or(w);
                testish(w) || w == "verify"
            }) {
                Some(Test)
            } else if words.iter().skip(1).any(|w| {
                let w = w.rsplit(':').next().unwrap_or(w);
                matches!(w, "build" | "package" | "compile" | "assemble" | "install")
            }) {
                Some(Build)
            } else {
                None
            }
        }
        _ => None,
    }
}

/// The output line that says most about how a test or build went: the last line of the first
/// kind found, in this order (a summary beats an error line). Cut to 160 characters.
pub(super) fn telling_line(result: &str) -> Option<String> {
    const KINDS: &[&str] = &[
        "test result:",
        "tests:",
        "tests run:",
        " passed",
        " failed",
        "build success",
        "build failure",
        "build failed",
        "error:",
        "error[",
        "fail",
        "finished",
    ];
    let lines: Vec<&str> = result
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('['))
        .collect();
    KINDS.iter().find_map(|kind| {
        lines
            .iter()
            .rev()
            .find(|l| l.to_ascii_lowercase().contains(kind))
            .map(|l| {
                let l = l.trim_matches(|c: char| c == '=' || c.is_whitespace());
                crate::engine::text::one_line(l, 160)
            })
    })
}

/// The one simple command of `command`, or None.
fn simple(command: &str) -> Option<Vec<String>> {
    match approvals::parse(command) {
        Shape::Plain(parts) => match <[Vec<String>; 1]>::try_from(parts) {
            Ok([words]) => Some(words),
            Err(_) => None,
        },
        Shape::Complex(_) => None,
    }
}

/// A path whose meaning is plain: no glob, variable, home or brace expansion, not the
/// workspace itself or above it.
fn plain_path(p: &str) -> bool {
    !p.is_empty()
        && !p.contains(['*', '?', '[', ']', '{', '}', '~', '$', '`', '\\'])
        && !matches!(p.trim_end_matches('/'), "" | "." | ".." | "/")
        && !p.starts_with("../")
}

/// The program's words after `rm` / `git rm` / `mv` / `git mv`, or None for another command.
fn args_of<'a>(words: &'a [String], program: &str) -> Option<&'a [String]> {
    match words {
        [first, rest @ ..] if first == program => Some(rest),
        [git, sub, rest @ ..] if git == "git" && sub == program => Some(rest),
        _ => None,
    }
}

/// Split options from operands; None when an option is not one of `allowed` (its effect is not
/// certain: `rm -i` asks, `mv -n` may do nothing, `git rm --cached` keeps the file).
fn operands<'a>(args: &'a [String], allowed: &[&str]) -> Option<Vec<&'a str>> {
    let mut out = Vec::new();
    let mut options = true;
    for a in args {
        if options && a == "--" {
            options = false;
        } else if options && a.starts_with('-') && a.len() > 1 {
            let ok = if let Some(long) = a.strip_prefix("--") {
                allowed.contains(&long)
            } else {
                a.chars()
                    .skip(1)
                    .all(|c| allowed.iter().any(|o| o.len() == 1 && o.starts_with(c)))
            };
            if !ok {
                return None;
            }
        } else {
            out.push(a.as_str());
        }
    }
    Some(out)
}

/// The paths a simple `rm` or `git rm` of plain paths deletes.
pub(super) fn removed(command: &str) -> Option<Vec<String>> {
    let words = simple(command)?;
    let args = args_of(&words, "rm")?;
    let allowed = [
        "f",
        "r",
        "R",
        "v",
        "q",
        "force",
        "recursive",
        "verbose",
        "quiet",
    ];
    let paths = operands(args, &allowed)?;
    (!paths.is_empty() && paths.iter().all(|p| plain_path(p)))
        .then(|| paths.iter().map(|p| p.to_string()).collect())
}

/// The source and destination of a simple `mv` or `git mv` of one plain path. A destination
/// ending in `/` is a folder: the file keeps its name there.
pub(super) fn moved(command: &str) -> Option<(String, String)> {
    let words = simple(command)?;
    let args = args_of(&words, "mv")?;
    let allowed = ["f", "v", "force", "verbose"];
    let [from, to] = <[&str; 2]>::try_from(operands(args, &allowed)?).ok()?;
    if !plain_path(from) || !plain_path(to) {
        return None;
    }
    let to = if to.ends_with('/') {
        let name = from
            .trim_end_matches('/')
            .rsplit('/')
            .next()
            .unwrap_or(from);
        format!("{to}{name}")
    } else {
        to.to_string()
    };
    Some((from.to_string(), to))
}
