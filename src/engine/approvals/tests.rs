//! What "always" grants and refuses: commands parsed into the prefix a grant may cover, the
//! offer and the sentence that says it, file tools, revoking, calls outside the workspace, and
//! the grants on the wire.

use serde_json::json;

use super::*;

fn bash(command: &str) -> Value {
    json!({ "command": command })
}

fn words(parts: &[&[&str]]) -> Shape {
    Shape::Plain(
        parts
            .iter()
            .map(|p| p.iter().map(|w| w.to_string()).collect())
            .collect(),
    )
}

/// The allowances after answering "always" to `command`.
fn granted(command: &str) -> Allowances {
    let mut a = Allowances::default();
    let offer = offer("bash", &bash(command), false).expect("always is offered");
    a.grant(&offer.rules);
    a
}

#[test]
fn parsing_reads_words_quotes_and_separators() {
    assert_eq!(parse("cargo test"), words(&[&["cargo", "test"]]));
    assert_eq!(
        parse("git commit -m 'a b' && echo \"x y\"; ls\nwc -l | sort"),
        words(&[
            &["git", "commit", "-m", "a b"],
            &["echo", "x y"],
            &["ls"],
            &["wc", "-l"],
            &["sort"]
        ])
    );
    assert_eq!(
        parse("echo a\\ b # && rm -rf /"),
        words(&[&["echo", "a b"]])
    );
    assert_eq!(
        parse("cargo test 2>&1 | tail"),
        words(&[&["cargo", "test"], &["tail"]])
    );
    assert_eq!(parse("make >/dev/null 2> /dev/null"), words(&[&["make"]]));
    assert_eq!(
        parse("echo $HOME \"$USER\""),
        words(&[&["echo", "$HOME", "$USER"]])
    );
    assert_eq!(parse("sleep 1 &"), words(&[&["sleep", "1"]]));
}

#[test]
fn parsing_refuses_what_no_prefix_may_cover() {
    let table = [
        ("echo $(rm -rf ~)", "a command substitution"),
        ("echo \"`id`\"", "a command substitution"),
        ("echo \"$(id)\"", "a command substitution"),
        ("cat <(ls)", "a process substitution"),
        ("cargo test > out.txt", "a redirection"),
        ("cargo test >> log", "a redirection"),
        ("cargo test &> log", "a redirection"),
        ("sort < input", "a redirection"),
        ("cat <<EOF\nrm -rf /\nEOF", "a here-document"),
        ("(cd x && make)", "a subshell"),
        ("if true; then rm x; fi", "shell syntax"),
        ("FOO=1 cargo test", "a variable assignment"),
        ("$CMD --all", "a program named by a variable"),
        ("echo 'unclosed", "an unclosed quote"),
    ];
    for (command, why) in table {
        assert_eq!(parse(command), Shape::Complex(why), "{command}");
    }
}

#[test]
fn always_offers_the_prefix_and_says_so() {
    let table: [(&str, &[&str], &str); 8] = [
        (
            "cargo test",
            &["cargo test"],
            "always allow `cargo test …` this session",
        ),
        (
            "cargo test --release -p x",
            &["cargo test"],
            "always allow `cargo test …` this session",
        ),
        (
            "git status --short",
            &["git status"],
            "always allow `git status …` this session",
        ),
        (
            "npm run build",
            &["npm run"],
            "always allow `npm run …` this session",
        ),
        ("ls -la src", &["ls"], "always allow `ls …` this session"),
        (
            "cargo fmt && cargo clippy -- -D warnings",
            &["cargo fmt", "cargo clippy"],
            "always allow `cargo fmt …` and `cargo clippy …` this session",
        ),
        (
            "./run-tests.sh fast",
            &["./run-tests.sh"],
            "always allow `./run-tests.sh …` this session",
        ),
        (
            "/usr/bin/git log",
            &["/usr/bin/git log"],
            "always allow `/usr/bin/git log …` this session",
        ),
    ];
    for (command, prefixes, label) in table {
        let o = offer("bash", &bash(command), false).unwrap();
        let want: Vec<AllowRule> = prefixes
            .iter()
            .map(|p| AllowRule::BashPrefix {
                prefix: p.to_string(),
            })
            .collect();
        assert_eq!(o.rules, want, "{command}");
        assert_eq!(o.label, label, "{command}");
    }
}

#[test]
fn always_grants_only_the_exact_command_when_a_prefix_would_allow_anything() {
    for command in [
        "rm -rf build",
        "python3 -c 'print(1)'",
        "sh test.sh",
        "sudo apt install x",
        "find . -name '*.o' -delete",
        "make",
        "git -C ../other push",
        "cargo test > log.txt",
        "echo $(date)",
        "cargo build && rm -rf target",
    ] {
        let o = offer("bash", &bash(command), false).unwrap();
        assert_eq!(
            o.rules,
            [AllowRule::BashCommand {
                command: command.to_string()
            }],
            "{command}"
        );
        assert_eq!(o.label, "always allow this exact command this session");
    }
}

#[test]
fn a_prefix_grant_covers_its_family_and_nothing_else() {
    let a = granted("cargo test");
    for yes in [
        "cargo test",
        "cargo test --release",
        "cargo   test -p flower-tui 2>&1",
        "cargo test && cargo test --doc",
        "cargo test | tail -n 20",
    ] {
        // `tail` is not granted: only commands whose every part is covered pass.
        let want = !yes.contains("tail");
        assert_eq!(a.covers("bash", &bash(yes)), want, "{yes}");
    }
    for no in [
        "cargo testx",
        "cargo build",
        "cargo publish",
        "cargo test; rm -rf ~",
        "cargo test && curl x | sh",
        "cargo test > /etc/passwd",
        "cargo test $(rm -rf ~)",
        "FOO=1 cargo test",
        "echo cargo test",
        "",
    ] {
        assert!(!a.covers("bash", &bash(no)), "{no}");
    }
    // Every part covered: a compound command passes.
    let mut both = granted("cargo fmt && cargo clippy");
    assert!(both.covers(
        "bash",
        &bash("cargo clippy --all-targets; cargo fmt --check")
    ));
    assert!(!both.covers("bash", &bash("cargo clippy; cargo test")));
    // Other tools are not covered by a bash grant, and a bash grant is not a tool grant.
    assert!(!both.covers("edit_file", &json!({"path": "a"})));
    assert_eq!(both.clear(), 2);
    assert!(both.list().is_empty());
}

#[test]
fn an_exact_grant_covers_that_command_only() {
    let a = granted("rm -rf build");
    assert!(a.covers("bash", &bash("rm -rf build")));
    assert!(a.covers("bash", &bash("  rm -rf build\n")));
    assert!(!a.covers("bash", &bash("rm -rf build ~")));
    assert!(!a.covers("bash", &bash("rm -rf /")));
}

#[test]
fn file_tools_list_revoke_and_outside_paths() {
    let o = offer("edit_file", &json!({"path": "a.rs"}), false).unwrap();
    assert_eq!(
        o.label,
        "always allow edit_file inside the workspace this session"
    );
    let mut a = Allowances::default();
    a.grant(&o.rules);
    a.grant(&o.rules);
    assert!(a.covers("edit_file", &json!({"path": "b.rs"})));
    assert!(!a.covers("write_file", &json!({"path": "b.rs"})));
    a.grant(
        &granted("cargo test")
            .list()
            .into_iter()
            .map(|x| x.rule)
            .collect::<Vec<_>>(),
    );
    let listed: Vec<String> = a.list().into_iter().map(|x| x.label).collect();
    assert_eq!(
        listed,
        ["edit_file inside the workspace", "bash: `cargo test …`"]
    );
    assert!(a.revoke(&AllowRule::Tool {
        tool: "edit_file".into()
    }));
    assert!(!a.revoke(&AllowRule::Tool {
        tool: "edit_file".into()
    }));
    assert!(!a.covers("edit_file", &json!({"path": "b.rs"})));
    // Outside the workspace, "always" is not offered at all.
    assert_eq!(offer("write_file", &json!({"path": "/etc/x"}), true), None);
    assert_eq!(offer("bash", &bash("   "), false), None);
}

#[test]
fn wire_shape() {
    let o = offer("bash", &bash("cargo test"), false).unwrap();
    assert_eq!(
        serde_json::to_string(&o).unwrap(),
        r#"{"rules":[{"kind":"bash_prefix","prefix":"cargo test"}],"label":"always allow `cargo test …` this session"}"#
    );
    let quoted = offer("bash", &bash("git commit -m 'a b'"), false).unwrap();
    assert_eq!(
        quoted.rules,
        [AllowRule::BashPrefix {
            prefix: "git commit".into()
        }]
    );
    let spaced = offer("bash", &bash("'my tool' run"), false).unwrap();
    assert_eq!(
        spaced.rules,
        [AllowRule::BashPrefix {
            prefix: "'my tool'".into()
        }]
    );
    assert!(granted("'my tool' run").covers("bash", &bash("\"my tool\" other")));
}
