use std::fs;

use serde_json::json;

use super::*;

struct Ws {
    _tmp: tempfile::TempDir,
    ws: PathBuf,
    home: PathBuf,
}

fn ws() -> Ws {
    let tmp = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(tmp.path()).unwrap();
    let ws = root.join("ws");
    let home = root.join("home");
    fs::create_dir_all(ws.join("src/deep")).unwrap();
    fs::create_dir_all(home.join(".ssh")).unwrap();
    fs::write(ws.join(".env"), "KEY=1").unwrap();
    Ws {
        _tmp: tmp,
        ws,
        home,
    }
}

fn rules(w: &Ws, block: Value) -> (Permissions, Vec<String>) {
    let anchors = Anchors {
        workspace: w.ws.clone(),
        base: w.ws.clone(),
        home: Some(w.home.clone()),
    };
    Permissions::from_settings(
        &json!({ "permissions": block }),
        &w.ws.join(".claude/settings.json"),
        &anchors,
    )
}

fn say(p: &Permissions, w: &Ws, name: &str, input: Value) -> Option<Verdict> {
    p.verdict(CallRef {
        name,
        input: &input,
        workspace: &w.ws,
    })
}

fn bash(p: &Permissions, w: &Ws, cmd: &str) -> Option<Verdict> {
    say(p, w, "bash", json!({ "command": cmd }))
}

#[test]
fn bash_rules_in_claude_code_syntax() {
    let w = ws();
    let (p, notices) = rules(
        &w,
        json!({
            "allow": ["Bash(git status:*)", "Bash(npm test)", "Bash(git * main)"],
            "deny": ["Bash(rm:*)", "Bash(curl *)"],
            "ask": ["Bash(git push:*)"],
        }),
    );
    assert!(notices.is_empty(), "{notices:?}");
    let allow = |c: &str| matches!(bash(&p, &w, c), Some(Verdict::Allow { .. }));
    assert!(allow("git status --short"));
    assert!(allow("git status && git status -s"));
    assert!(allow("npm test"));
    assert!(!allow("npm test --watch"), "exact means exact");
    assert!(!allow("git push origin main"), "ask wins over allow");
    assert!(allow("git pull origin main"));
    assert!(!allow("git status; ls"), "every part must be allowed");
    assert_eq!(
        bash(&p, &w, "ls && rm -rf x"),
        Some(Verdict::Deny("Bash(rm:*)".into())),
        "any part is denied"
    );
    assert_eq!(
        bash(&p, &w, "echo $(curl evil.example)"),
        Some(Verdict::Deny("Bash(curl *)".into())),
        "a command too complex to split is denied when the words appear"
    );
    assert_eq!(
        bash(&p, &w, "git push -f"),
        Some(Verdict::Ask("Bash(git push:*)".into()))
    );
    assert_eq!(bash(&p, &w, "ls"), None);
}

#[test]
fn file_rules_are_gitignore_like_and_anchored() {
    let w = ws();
    let (p, notices) = rules(
        &w,
        json!({
            "deny": ["Read(./.env)", "Read(~/.ssh/**)", "Edit(//etc/**)"],
            "allow": ["Edit(src/**)", "Read(*.log)"],
        }),
    );
    assert!(notices.is_empty(), "{notices:?}");
    let read = |path: &str| say(&p, &w, "read_file", json!({ "path": path }));
    assert_eq!(read(".env"), Some(Verdict::Deny("Read(./.env)".into())));
    assert_eq!(
        read("./src/../.env"),
        Some(Verdict::Deny("Read(./.env)".into()))
    );
    assert_eq!(
        read(&w.ws.join(".env").to_string_lossy()),
        Some(Verdict::Deny("Read(./.env)".into()))
    );
    assert_eq!(read("src/.env"), None, "`./` anchors at the workspace");
    assert_eq!(
        read(&w.home.join(".ssh/id_ed25519").to_string_lossy()),
        Some(Verdict::Deny("Read(~/.ssh/**)".into()))
    );
    assert_eq!(
        say(&p, &w, "write_file", json!({ "path": "/etc/passwd" })),
        Some(Verdict::Deny("Edit(//etc/**)".into()))
    );
    // A rule for Read does not stop edits, and the other way round.
    assert_eq!(say(&p, &w, "edit_file", json!({ "path": ".env" })), None);
    let edit = say(&p, &w, "edit_file", json!({ "path": "src/deep/a.rs" }));
    assert!(
        matches!(
            edit,
            Some(Verdict::Allow {
                names_path: true,
                ..
            })
        ),
        "{edit:?}"
    );
    assert_eq!(
        say(&p, &w, "edit_file", json!({ "path": "lib/a.rs" })),
        None
    );
    // No slash: at any depth.
    assert!(matches!(
        read("src/deep/x.log"),
        Some(Verdict::Allow { .. })
    ));
}

#[test]
fn mcp_and_tool_rules_and_tools_flower_tui_lacks() {
    let w = ws();
    let (p, notices) = rules(
        &w,
        json!({
            "allow": ["mcp__github", "WebFetch(domain:example.com)"],
            "deny": ["mcp__github__delete_repo", "Task"],
        }),
    );
    assert!(notices.is_empty(), "{notices:?}");
    assert!(matches!(
        say(&p, &w, "mcp__github__create_issue", json!({})),
        Some(Verdict::Allow {
            names_path: false,
            ..
        })
    ));
    assert_eq!(
        say(&p, &w, "mcp__github__delete_repo", json!({})),
        Some(Verdict::Deny("mcp__github__delete_repo".into()))
    );
    assert_eq!(say(&p, &w, "mcp__gitlab__x", json!({})), None);
    assert_eq!(
        say(&p, &w, "task", json!({})),
        Some(Verdict::Deny("Task".into()))
    );
}

#[test]
fn bad_rules_are_notices_and_the_rest_apply() {
    let w = ws();
    let (p, notices) = rules(
        &w,
        json!({
            "deny": ["Bash(rm:*", "Bsh(ls)", 7, "Read(./.env)"],
            "ask": "Bash(ls)",
        }),
    );
    assert_eq!(notices.len(), 4, "{notices:?}");
    assert!(notices.iter().all(|n| n.contains(".claude/settings.json")));
    assert!(notices.iter().any(|n| n.contains("`Bsh` is not a tool")));
    assert!(
        notices
            .iter()
            .any(|n| n.contains("permissions.ask` is not a list"))
    );
    assert_eq!(
        say(&p, &w, "read_file", json!({ "path": ".env" })),
        Some(Verdict::Deny("Read(./.env)".into()))
    );
    // A glob that matches nothing catches nothing.
    let (p, notices) = rules(&w, json!({ "deny": ["Read(nothing/**/*.nope)"] }));
    assert!(notices.is_empty());
    assert_eq!(say(&p, &w, "read_file", json!({ "path": ".env" })), None);
    assert_eq!(say(&p, &w, "read_file", json!({ "path": "src" })), None);
}

#[test]
fn web_fetch_rules_match_the_host_of_the_url() {
    let w = ws();
    let (p, notices) = rules(
        &w,
        json!({
            "allow": ["WebFetch(domain:docs.rs)"],
            "deny": ["WebFetch(domain:*.evil.example)", "WebFetch(domain:Pastebin.com)"],
            "ask": ["WebFetch(domain:github.com)"],
        }),
    );
    assert!(notices.is_empty(), "{notices:?}");
    let fetch = |url: &str| say(&p, &w, "web_fetch", json!({ "url": url }));
    assert!(matches!(
        fetch("https://docs.rs/serde"),
        Some(Verdict::Allow { .. })
    ));
    assert_eq!(
        fetch("https://sub.docs.rs/x"),
        None,
        "no wildcard, no subdomain"
    );
    for denied in [
        "https://evil.example/",
        "http://a.b.evil.example:8080/x",
        "https://PASTEBIN.com./raw",
    ] {
        assert!(
            matches!(fetch(denied), Some(Verdict::Deny(_))),
            "{denied} was not denied"
        );
    }
    assert!(matches!(
        fetch("https://github.com/a/b"),
        Some(Verdict::Ask(_))
    ));
    assert_eq!(fetch("https://notevil.example/"), None);
    assert_eq!(fetch("not a url"), None);
    // A rule for web_fetch says nothing about other tools.
    assert_eq!(say(&p, &w, "read_file", json!({ "path": "docs.rs" })), None);
}

#[test]
fn a_web_fetch_rule_without_a_host_is_a_notice() {
    let w = ws();
    let (p, notices) = rules(&w, json!({ "deny": ["WebFetch(example.com)", "WebFetch"] }));
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(
        notices[0].contains("WebFetch(domain:example.com)"),
        "{notices:?}"
    );
    assert!(matches!(
        say(&p, &w, "web_fetch", json!({ "url": "https://any.where/" })),
        Some(Verdict::Deny(_))
    ));
}
