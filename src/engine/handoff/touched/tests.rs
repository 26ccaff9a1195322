//! Tests of the `Touched` section: a scripted session's facts, the carry-forward, the caps, and
//! the shapes of commands and results it reads.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Value, json};

use super::carry::Category;
use super::*;
use crate::engine::types::{Block, Message, Role};

/// A scripted session: each call is (tool, input, result, is_error); one call per reply.
struct Script {
    messages: Vec<Message>,
    n: usize,
}

impl Script {
    fn new(task: &str) -> Script {
        Script {
            messages: vec![Message::user(task)],
            n: 0,
        }
    }

    fn call(&mut self, name: &str, input: Value, result: &str, is_error: bool) -> String {
        self.n += 1;
        let id = format!("toolu_{:02}", self.n);
        self.messages.push(Message {
            role: Role::Assistant,
            content: vec![Block::ToolUse {
                id: id.clone(),
                name: name.into(),
                input,
                from_text: false,
            }],
        });
        self.messages.push(Message {
            role: Role::User,
            content: vec![Block::ToolResult {
                tool_use_id: id.clone(),
                content: result.into(),
                is_error,
            }],
        });
        id
    }

    fn ok(&mut self, name: &str, input: Value, result: &str) -> String {
        self.call(name, input, result, false)
    }

    fn bash(&mut self, command: &str, output: &str, exit: &str) -> String {
        let failed = exit != "exit code 0";
        self.call(
            "bash",
            json!({ "command": command }),
            &format!("{output}\n\n[{exit}]"),
            failed,
        )
    }
}

/// `read_file`'s page of lines `first..=last`, with the continuation note when `total` is more.
fn page(first: u64, last: u64, total: u64) -> String {
    let mut s: String = (first..=last)
        .map(|n| format!("{n:>6}\tline {n}\n"))
        .collect();
    if last < total {
        s.push_str(&format!(
            "\n(showing lines {first}-{last} of {total}; continue with offset={}.)",
            last + 1
        ));
    }
    s
}

fn log<'a>(
    messages: &'a [Message],
    counts: &'a HashMap<String, LineCounts>,
    previous: Option<&'a str>,
) -> ToolLog<'a> {
    ToolLog {
        messages,
        counts,
        undone: &[],
        generation: 2,
        workspace: Some(Path::new("/ws")),
        previous,
        open_problems: None,
    }
}

/// A generation with known reads, edits, creations, deletions and failing commands.
fn session() -> (Script, HashMap<String, LineCounts>) {
    let mut s = Script::new("fix the parser");
    s.ok(
        "read_file",
        json!({"path": "src/parser.rs", "limit": 120}),
        &page(1, 120, 512),
    );
    s.ok(
        "read_file",
        json!({"path": "./src/parser.rs", "offset": 100, "limit": 60}),
        &page(100, 159, 512),
    );
    s.ok(
        "read_file",
        json!({"path": "/ws/src/parser.rs", "offset": 300, "limit": 41}),
        &page(300, 340, 512),
    );
    s.ok("read_file", json!({"path": "README.md"}), &page(1, 40, 40));
    s.ok(
        "edit_file",
        json!({"path": "src/parser.rs", "old_string": "let a = 1;\nlet b = 2;", "new_string": "let a = 1;\nlet b = 3;\nlet c = 4;"}),
        "Edited src/parser.rs: replaced 1 occurrence.\n",
    );
    let overwrite = s.ok(
        "write_file",
        json!({"path": "src/lexer.rs", "content": "x\ny\n"}),
        "Overwrote src/lexer.rs (4 bytes, 2 lines).",
    );
    s.ok(
        "write_file",
        json!({"path": "tests/parse.rs", "content": "a\nb\nc\n"}),
        "Created tests/parse.rs (6 bytes, 3 lines).",
    );
    // A failed edit changes nothing.
    s.call(
        "edit_file",
        json!({"path": "src/main.rs", "old_string": "x", "new_string": "y"}),
        "`old_string` was not found in src/main.rs.",
        true,
    );
    s.bash(
        "cargo test -q",
        "running 4 tests\ntest result: FAILED. 3 passed; 1 failed",
        "exit code 101",
    );
    s.bash("rm README.md", "(no output)", "exit code 0");
    s.bash("mv notes.txt docs/", "(no output)", "exit code 0");
    // A glob is not a deletion the log can be sure of: it stays a command.
    s.bash("rm -f build/*.o", "(no output)", "exit code 0");
    s.bash(
        "cargo test -q",
        "running 4 tests\ntest result: FAILED. 3 passed; 1 failed",
        "exit code 101",
    );
    s.bash("ls src", "lexer.rs\nparser.rs", "exit code 0");
    // Denied: it never ran.
    s.call(
        "bash",
        json!({"command": "rm -rf /"}),
        "denied: the user did not allow this `bash` call",
        true,
    );
    let counts = HashMap::from([(
        overwrite,
        LineCounts {
            added: 2,
            removed: 7,
        },
    )]);
    (s, counts)
}

const SESSION_SECTION: &str = "\
From the tool log of generation 2, written by flower-tui (not by the model); edit it like any section.
Files this generation:
- `src/lexer.rs`: edited +2 -7
- `src/parser.rs`: edited +2 -1; read 1-159, 300-340 of 512
- `tests/parse.rs`: created +3
- `README.md`: deleted -40; read all 40 lines
- `notes.txt`: moved to `docs/notes.txt`
Commands this generation: 6 run, 1 failing at their last run; failing first, then the most recent:
- `cargo test -q` → exit 101 (2 runs, 2 failed)
- `ls src` → exit 0
- `rm -f build/*.o` → exit 0
- `mv notes.txt docs/` → exit 0
- `rm README.md` → exit 0
Last test or build: `cargo test -q` → exit 101: test result: FAILED. 3 passed; 1 failed
";

#[test]
fn a_scripted_session_gives_its_facts() {
    let (s, counts) = session();
    let text = section(log(&s.messages, &counts, None));
    assert_eq!(text, SESSION_SECTION);
}

#[test]
fn without_the_engines_diff_an_overwrite_is_said_uncounted() {
    let (s, _) = session();
    let t = Touched::from_log(log(&s.messages, &HashMap::new(), None));
    let lexer = t.files.get("src/lexer.rs").expect("lexer");
    assert_eq!((lexer.changes, lexer.uncounted), (1, 1));
    assert!(
        t.render()
            .contains("- `src/lexer.rs`: edited (1 overwrite not counted)\n")
    );
}

#[test]
fn earlier_generations_are_carried_in_brief() {
    let (s, counts) = session();
    let previous = section(log(&s.messages, &counts, None));
    // The user added a line of their own to the previous document's section.
    let previous = format!("{previous}Also changed config.yaml by hand.\n");
    let mut next = Script::new("(briefing)");
    next.ok(
        "edit_file",
        json!({"path": "src/parser.rs", "old_string": "a", "new_string": "b"}),
        "Edited src/parser.rs: replaced 2 occurrences.\n",
    );
    next.bash("cargo build", "Finished dev", "exit code 0");
    let empty = HashMap::new();
    let third = ToolLog {
        generation: 3,
        ..log(&next.messages, &empty, Some(&previous))
    };
    let text = section(third);
    let expected = "\
From the tool log of generation 3, written by flower-tui (not by the model); edit it like any section.
Files this generation:
- `src/parser.rs`: edited +2 -2
Commands this generation: 1 run, 0 failing at their last run; failing first, then the most recent:
- `cargo build` → exit 0
Last test or build: `cargo build` → exit 0: Finished dev
Earlier generation 2, in brief:
- edited: `src/lexer.rs` (+2 -7), `src/parser.rs` (+2 -1)
- created: `tests/parse.rs` (+3)
- deleted: `README.md` (-40), `notes.txt` (moved to `docs/notes.txt`)
- last test or build, generation 2: `cargo test -q` → exit 101: test result: FAILED. 3 passed; 1 failed
- note: Also changed config.yaml by hand.
";
    assert_eq!(text, expected);
    // And once more: generation 2's brief and generation 3's files merge (counts add up).
    let fourth = ToolLog {
        generation: 4,
        ..log(&[], &empty, Some(&text))
    };
    let t = Touched::from_log(fourth);
    assert_eq!(t.earlier.generations, Some((2, 3)));
    let parser = t
        .earlier
        .group(Category::Edited)
        .items
        .iter()
        .find(|i| i.path == "src/parser.rs")
        .expect("parser carried");
    assert_eq!(
        parser.counts,
        Some(LineCounts {
            added: 4,
            removed: 3
        })
    );
    assert_eq!(
        t.earlier.check.as_deref(),
        Some("generation 3: `cargo build` → exit 0: Finished dev")
    );
    assert_eq!(t.earlier.notes, ["Also changed config.yaml by hand."]);
}

#[test]
fn a_section_the_user_rewrote_is_kept_as_notes() {
    let t = Touched::from_log(ToolLog {
        generation: 5,
        ..log(
            &[],
            &HashMap::new(),
            Some("I moved everything to crates/core.\n\n"),
        )
    });
    assert_eq!(t.earlier.generations, Some((4, 4)));
    assert_eq!(t.earlier.notes, ["I moved everything to crates/core."]);
    assert!(t.render().ends_with(
        "Earlier generation 4, in brief:\n- note: I moved everything to crates/core.\n"
    ));
}

#[test]
fn lists_and_the_whole_are_capped() {
    let mut s = Script::new("read everything");
    for i in 0..400 {
        s.ok(
            "read_file",
            json!({"path": format!("src/mod_{i:03}/a_rather_long_file_name_for_the_cap.rs")}),
            &page(1, 10, 10),
        );
    }
    for i in 0..30 {
        s.bash(&format!("echo {i}"), "x", "exit code 0");
    }
    let text = section(log(&s.messages, &HashMap::new(), None));
    assert!(text.chars().count() <= render::MAX_CHARS, "{}", text.len());
    assert!(text.contains("- … and 350 more files read\n"), "{text}");
    assert!(text.contains("- … and 18 more commands\n"), "{text}");
    // The most recent commands are the ones listed.
    assert!(text.contains("`echo 29`") && !text.contains("`echo 17`"));
    // Deterministic.
    assert_eq!(text, section(log(&s.messages, &HashMap::new(), None)));
}

#[test]
fn commands_are_recognised_by_shape() {
    use super::shapes::check_kind;
    let table: &[(&str, Option<CheckKind>)] = &[
        ("cargo test -q", Some(CheckKind::Test)),
        ("RUST_BACKTRACE=1 cargo test --lib", Some(CheckKind::Test)),
        ("cd crates/x && cargo nextest run", Some(CheckKind::Test)),
        ("cargo build --release 2>&1 | tail", Some(CheckKind::Build)),
        ("cargo clippy --all-targets", Some(CheckKind::Build)),
        ("cargo build && cargo test", Some(CheckKind::Test)),
        ("npm test", Some(CheckKind::Test)),
        ("npm run build", Some(CheckKind::Build)),
        ("pnpm run test:unit", Some(CheckKind::Test)),
        ("yarn build", Some(CheckKind::Build)),
        ("npx vitest run", Some(CheckKind::Test)),
        ("python -m pytest -x tests/", Some(CheckKind::Test)),
        ("python3 -m unittest", Some(CheckKind::Test)),
        ("pytest -q", Some(CheckKind::Test)),
        ("go test ./...", Some(CheckKind::Test)),
        ("go build ./cmd/x", Some(CheckKind::Build)),
        ("go vet ./...", Some(CheckKind::Build)),
        ("make", Some(CheckKind::Build)),
        ("make -j4 check", Some(CheckKind::Test)),
        ("./gradlew test", Some(CheckKind::Test)),
        ("mvn -q package", Some(CheckKind::Build)),
        ("zig build test", Some(CheckKind::Test)),
        ("timeout 60 make test", Some(CheckKind::Test)),
        ("cmake --build build", Some(CheckKind::Build)),
        ("bundle exec rspec", Some(CheckKind::Test)),
        ("cargo run", None),
        ("ls -la", None),
        ("git status", None),
        ("npm install", None),
        ("go run .", None),
        ("echo make", None),
    ];
    for (command, want) in table {
        assert_eq!(check_kind(command), *want, "{command}");
    }
}

#[test]
fn only_certain_deletions_and_moves_count() {
    use super::shapes::{moved, removed};
    let rm: &[(&str, Option<Vec<&str>>)] = &[
        ("rm a.txt", Some(vec!["a.txt"])),
        ("rm -rf build tmp/x", Some(vec!["build", "tmp/x"])),
        ("git rm -q -- old.rs", Some(vec!["old.rs"])),
        ("rm -- -odd-name", Some(vec!["-odd-name"])),
        ("rm *.o", None),
        ("rm -i a.txt", None),
        ("git rm --cached a.txt", None),
        ("rm a && rm b", None),
        ("rm $FILE", None),
        ("rm ~/x", None),
        ("rm .", None),
        ("rm ../outside", None),
        ("rm", None),
        ("sudo rm a", None),
        ("rm a > log", None),
    ];
    for (command, want) in rm {
        let want = want
            .as_ref()
            .map(|v| v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(removed(command), want, "{command}");
    }
    let mv: &[(&str, Option<(&str, &str)>)] = &[
        ("mv a.rs b.rs", Some(("a.rs", "b.rs"))),
        (
            "git mv src/a.rs src/old/",
            Some(("src/a.rs", "src/old/a.rs")),
        ),
        ("mv -f a b", Some(("a", "b"))),
        ("mv -n a b", None),
        ("mv a b c/", None),
        ("mv a*.rs x/", None),
    ];
    for (command, want) in mv {
        let want = want.map(|(a, b)| (a.to_string(), b.to_string()));
        assert_eq!(moved(command), want, "{command}");
    }
}

#[test]
fn exits_are_read_from_the_status_line() {
    use super::log::exit_of;
    let table: &[(&str, Option<Exit>)] = &[
        ("ok\n\n[exit code 0]", Some(Exit::Code(0))),
        ("boom\n\n[exit code 101]", Some(Exit::Code(101))),
        ("\n\n[killed by signal 9]", Some(Exit::Signal(9))),
        (
            "x\n\n[timed out after 30s: the command and its child processes were killed]",
            Some(Exit::TimedOut),
        ),
        (
            "x\n\n[interrupted after 2.5s: the user stopped the command]",
            Some(Exit::Interrupted),
        ),
        (
            "x\n\n[exit code 0]\n[background processes started by the command are still running; their further output is not captured]",
            Some(Exit::Code(0)),
        ),
        ("denied: the user did not allow this `bash` call", None),
        ("not run: the user interrupted the turn", None),
    ];
    for (result, want) in table {
        assert_eq!(exit_of(result), *want, "{result}");
    }
}

#[test]
fn the_telling_line_prefers_a_summary() {
    use super::shapes::telling_line;
    assert_eq!(
        telling_line(
            "error: unused variable\ntest result: FAILED. 1 passed; 2 failed\nerror: test failed, to rerun pass `--lib`\n\n[exit code 101]"
        )
        .as_deref(),
        Some("test result: FAILED. 1 passed; 2 failed")
    );
    assert_eq!(
        telling_line("===== 3 failed, 2 passed in 0.12s =====\n\n[exit code 1]").as_deref(),
        Some("3 failed, 2 passed in 0.12s")
    );
    assert_eq!(telling_line("nothing to see\n\n[exit code 0]"), None);
}

#[test]
fn read_ranges_merge() {
    let mut r = Vec::new();
    for x in [(300, 340), (1, 120), (100, 159), (160, 170), (500, 500)] {
        log::add_range(&mut r, x);
    }
    assert_eq!(r, [(1, 170), (300, 340), (500, 500)]);
}

#[test]
fn a_file_created_and_deleted_again_is_transient() {
    let mut s = Script::new("x");
    s.ok(
        "write_file",
        json!({"path": "tmp.txt", "content": "a\n"}),
        "Created tmp.txt (2 bytes, 1 lines).",
    );
    s.bash("rm tmp.txt", "(no output)", "exit code 0");
    let t = Touched::from_log(log(&s.messages, &HashMap::new(), None));
    assert_eq!(
        t.files.get("tmp.txt").map(|f| f.fate.clone()),
        Some(Fate::Transient)
    );
    // And it carries nothing forward.
    let next = Touched::from_log(ToolLog {
        generation: 3,
        ..log(&[], &HashMap::new(), Some(&t.render()))
    });
    assert!(
        Category::ALL
            .iter()
            .all(|c| next.earlier.group(*c).items.is_empty())
    );
}

#[test]
fn the_whole_section_is_cut_at_its_cap() {
    let mut s = Script::new("rename everything");
    let long = "a_very_long_directory_name_that_goes_on/".repeat(3);
    for i in 0..60 {
        s.ok(
            "write_file",
            json!({"path": format!("{long}file_{i:03}.rs"), "content": "x\n"}),
            &format!("Created {long}file_{i:03}.rs (2 bytes, 1 lines)."),
        );
    }
    s.bash("cargo test", "test result: ok. 1 passed", "exit code 0");
    let text = section(log(&s.messages, &HashMap::new(), None));
    assert!(text.chars().count() <= render::MAX_CHARS, "{}", text.len());
    assert!(
        text.ends_with("- … (the rest is cut: this section keeps to 6,000 characters)\n"),
        "{text}"
    );
    // Cut at a line end: every line before the note is whole.
    assert!(
        text.lines()
            .all(|l| l.starts_with("- `") || !l.starts_with("- ") || l.starts_with("- …"))
    );
}

#[test]
fn the_section_ends_with_the_errors_still_open_in_its_files_and_does_not_carry_them() {
    use crate::engine::lsp::{Finding, OpenProblems, Severity};
    let mut s = Script::new("fix the calculator");
    s.ok(
        "edit_file",
        json!({"path": "calc.py", "old_string": "a", "new_string": "b"}),
        "ok",
    );
    let finding = |path: &str, severity| Finding {
        path: path.into(),
        line: 2,
        col: 22,
        severity,
        message: "undefined name 'bonus'".into(),
        source: Some("pyflakes".into()),
    };
    let open = OpenProblems {
        files: vec!["calc.py".into(), "other.py".into()],
        // A warning and a file this generation did not touch are left out.
        found: vec![
            finding("calc.py", Severity::Error),
            finding("calc.py", Severity::Warning),
            finding("other.py", Severity::Error),
        ],
    };
    let counts = HashMap::new();
    let section = section(ToolLog {
        open_problems: Some(&open),
        ..log(&s.messages, &counts, None)
    });
    assert!(
        section.ends_with(
            "Errors still open at the cut (language servers, 1 in 1 file):\n\
             - `calc.py:2:22` undefined name 'bonus' (pyflakes)\n"
        ),
        "{section}"
    );
    // The next generation does not carry them (nor take them for the user's notes).
    let next = Touched::from_log(ToolLog {
        generation: 3,
        ..log(&[], &counts, Some(&section))
    });
    assert!(next.earlier.notes.is_empty(), "{:?}", next.earlier.notes);
    // Checked and clean: said in a line.
    let clean = OpenProblems {
        files: vec!["calc.py".into()],
        found: Vec::new(),
    };
    let section = super::section(ToolLog {
        open_problems: Some(&clean),
        ..log(&s.messages, &counts, None)
    });
    assert!(
        section.ends_with(
            "Errors still open at the cut: none (language servers checked `calc.py`).\n"
        ),
        "{section}"
    );
}

#[test]
fn an_undone_change_is_left_out_and_its_command_still_counts() {
    let mut s = Script::new("try two things");
    s.ok("read_file", json!({"path": "src/kept.rs"}), &page(1, 3, 3));
    s.ok(
        "edit_file",
        json!({"path": "src/kept.rs", "old_string": "a", "new_string": "b"}),
        "Edited src/kept.rs: replaced 1 occurrence.\n",
    );
    let edit = s.ok(
        "edit_file",
        json!({"path": "src/kept.rs", "old_string": "b", "new_string": "c\nd"}),
        "Edited src/kept.rs: replaced 1 occurrence.\n",
    );
    let write = s.ok(
        "write_file",
        json!({"path": "src/gone.rs", "content": "x\n"}),
        "Created src/gone.rs (2 bytes, 1 lines).",
    );
    let rm = s.bash("rm old.txt", "(no output)", "exit code 0");
    let counts = HashMap::new();
    let undone = [edit, write, rm];
    let t = Touched::from_log(ToolLog {
        undone: &undone,
        ..log(&s.messages, &counts, None)
    });
    let kept = t.files.get("src/kept.rs").expect("the kept edit");
    assert_eq!((kept.fate.clone(), kept.changes), (Fate::Edited, 1));
    assert_eq!(
        kept.counts,
        LineCounts {
            added: 1,
            removed: 1
        }
    );
    assert!(!t.files.contains_key("src/gone.rs"), "{:?}", t.files);
    assert!(!t.files.contains_key("old.txt"), "{:?}", t.files);
    assert_eq!(t.commands.len(), 1, "the command still ran");
    // Nothing undone: all three changes are there.
    let all = Touched::from_log(log(&s.messages, &counts, None));
    assert_eq!(all.files["src/kept.rs"].changes, 2);
    assert_eq!(all.files["src/gone.rs"].fate, Fate::Created);
    assert!(matches!(all.files["old.txt"].fate, Fate::Deleted { .. }));
}
