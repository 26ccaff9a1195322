//! Custom slash commands from real files in the three folders: names, frontmatter, precedence,
//! built-in names, malformed files, and one call expanded with its `!` commands run through the
//! real bash tool.

use flower_tui::engine::commands::{self, CommandDirs, CommandSource, LoadProblem, ShadowedBy};
use flower_tui::engine::frontmatter::FrontmatterError;
use flower_tui::engine::tools::{self, ToolCtx};
use serde_json::json;

use crate::support::files::write;

const BUILTINS: [&str; 4] = ["/help", "/new", "handoff", "/quit"];

#[test]
fn three_folders_with_subfolders_precedence_and_built_in_names() {
    let ws = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    let user = config.path().join("commands");
    let flower = ws.path().join(".flower/commands");
    let claude = ws.path().join(".claude/commands");
    write(
        &claude.join("review.md"),
        b"---\ndescription: Review a pull request\nargument-hint: <pr> [priority]\nmodel: claude-sonnet-4-5\nallowed-tools: Bash(gh pr view:*), Read\n---\nReview PR #$1 with priority $2.\n",
    );
    write(
        &claude.join("frontend/component.md"),
        b"# Build a component\n\nMake $ARGUMENTS.\n",
    );
    write(&claude.join("deploy.md"), b"claude's deploy\n");
    write(&flower.join("deploy.md"), b"flower's deploy\n");
    write(
        &user.join("deploy.md"),
        b"---\ndescription: my own deploy\n---\nuser's deploy\n",
    );
    write(&claude.join("help.md"), b"not the built-in help\n");
    write(&flower.join("NEW.md"), b"not the built-in new either\n");
    write(&claude.join("notes.txt"), b"not a command\n");
    write(&claude.join(".hidden.md"), b"hidden\n");
    write(
        &claude.join("a/b/c/too-deep.md"),
        b"deeper than three parts\n",
    );
    write(&claude.join("a/b/ok.md"), b"three parts\n");

    let dirs = CommandDirs {
        config_dir: Some(config.path().to_path_buf()),
        home: None,
        workspace: ws.path().to_path_buf(),
    };
    let catalog = commands::load(&dirs, &BUILTINS);
    assert!(catalog.notices().is_empty(), "{:?}", catalog.notices());
    let names: Vec<&str> = catalog.commands().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        vec!["a:b:ok", "deploy", "frontend:component", "review"]
    );

    let review = catalog.get("/review").unwrap();
    assert_eq!(review.description, "Review a pull request");
    assert_eq!(review.argument_hint.as_deref(), Some("<pr> [priority]"));
    assert_eq!(review.model.as_deref(), Some("claude-sonnet-4-5"));
    assert_eq!(review.allowed_tools, vec!["Bash(gh pr view:*)", "Read"]);
    assert_eq!(review.source, CommandSource::Claude);
    assert_eq!(
        review.expand("456 \"very high\"").text(),
        "Review PR #456 with priority very high.\n"
    );

    let component = catalog.get("frontend:component").unwrap();
    assert_eq!(component.description, "Build a component");
    assert_eq!(
        component.expand("a date picker").text(),
        "# Build a component\n\nMake a date picker.\n"
    );

    // The workspace wins, .flower before .claude, then the user's own folder.
    let deploy = catalog.get("deploy").unwrap();
    assert_eq!(deploy.source, CommandSource::Flower);
    assert_eq!(deploy.body, "flower's deploy\n");
    let shadowed: Vec<(&str, &ShadowedBy)> = catalog
        .shadowed()
        .iter()
        .map(|s| (s.name.as_str(), &s.by))
        .collect();
    let by_flower = ShadowedBy::Command(flower.join("deploy.md"));
    assert_eq!(
        shadowed,
        vec![
            ("NEW", &ShadowedBy::Builtin),
            ("deploy", &by_flower),
            ("help", &ShadowedBy::Builtin),
            ("deploy", &by_flower),
        ]
    );
    assert_eq!(
        catalog.shadowed()[3].path,
        user.join("deploy.md"),
        "the user's own command is the one shadowed"
    );

    // A workspace with only .claude's deploy: it wins over the user's too.
    std::fs::remove_file(flower.join("deploy.md")).unwrap();
    let catalog = commands::load(&dirs, &BUILTINS);
    assert_eq!(catalog.get("deploy").unwrap().body, "claude's deploy\n");
    assert!(
        commands::load(
            &CommandDirs {
                config_dir: None,
                home: None,
                workspace: tempfile::tempdir().unwrap().path().to_path_buf()
            },
            &BUILTINS
        )
        .is_empty()
    );
}

#[test]
fn a_malformed_file_is_a_notice_and_the_rest_loads() {
    let ws = tempfile::tempdir().unwrap();
    let claude = ws.path().join(".claude/commands");
    write(
        &claude.join("good.md"),
        b"---\ndescription: fine\n---\nbody\n",
    );
    write(
        &claude.join("unclosed.md"),
        b"---\ndescription: never closed\nbody\n",
    );
    write(
        &claude.join("badline.md"),
        b"---\ndescription: x\njust words\n---\nbody\n",
    );
    write(&claude.join("binary.md"), [0xff, 0xfe, 0x00, 0x41]);
    write(&claude.join("with space.md"), b"body\n");
    let catalog = commands::load(
        &CommandDirs {
            config_dir: None,
            home: None,
            workspace: ws.path().to_path_buf(),
        },
        &BUILTINS,
    );
    let names: Vec<&str> = catalog.commands().map(|c| c.name.as_str()).collect();
    assert_eq!(names, vec!["good"]);
    let problems: Vec<(String, LoadProblem)> = catalog
        .notices()
        .iter()
        .map(|n| {
            (
                n.path.file_name().unwrap().to_string_lossy().into_owned(),
                n.problem.clone(),
            )
        })
        .collect();
    assert_eq!(
        problems,
        vec![
            (
                "badline.md".into(),
                LoadProblem::Frontmatter(FrontmatterError::NotKeyValue { line: 3 })
            ),
            ("binary.md".into(), LoadProblem::NotText),
            (
                "unclosed.md".into(),
                LoadProblem::Frontmatter(FrontmatterError::Unclosed)
            ),
            (
                "with space.md".into(),
                LoadProblem::BadName("with space".into())
            ),
        ]
    );
    assert_eq!(
        catalog.notices()[0].to_string(),
        format!(
            "{}: frontmatter line 3: expected `key: value`; the command is not loaded",
            claude.join("badline.md").display()
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bang_commands_run_as_bash_tool_calls_and_their_output_is_filled_in() {
    let ws = tempfile::tempdir().unwrap();
    write(&ws.path().join("notes.txt"), b"alpha\nbeta\n");
    let claude = ws.path().join(".claude/commands");
    write(
        &claude.join("count.md"),
        b"---\nallowed-tools: Bash(wc:*)\n---\nLines in $1:\n!`wc -l < $1`\nSee @notes.txt\n",
    );
    let catalog = commands::load(
        &CommandDirs {
            config_dir: None,
            home: None,
            workspace: ws.path().to_path_buf(),
        },
        &BUILTINS,
    );
    let expansion = catalog.get("count").unwrap().expand("notes.txt");
    assert_eq!(expansion.commands(), vec!["wc -l < notes.txt"]);
    // The caller runs each one as a bash tool call (under its approval and sandbox).
    let ctx = ToolCtx::new(std::fs::canonicalize(ws.path()).unwrap(), "s");
    let mut outputs = Vec::new();
    for command in expansion.commands() {
        let out = tools::run("bash", &json!({ "command": command }), &ctx).await;
        assert!(!out.is_error, "{}", out.content);
        outputs.push(out.exit.map_or(String::new(), |_| {
            out.content.lines().next().unwrap_or("").to_string()
        }));
    }
    assert_eq!(
        expansion.fill(&outputs).unwrap(),
        "Lines in notes.txt:\n2\nSee @notes.txt\n"
    );
}
