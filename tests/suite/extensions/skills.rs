//! Skills from real folders in the four places: precedence, the system-prompt listing, malformed
//! `SKILL.md` files, the `skill` tool, and reading a skill's files from outside the workspace.

use flower_tui::engine::frontmatter::FrontmatterError;
use flower_tui::engine::skills::{self, SkillCatalog, SkillDirs, SkillProblem, SkillSource};
use flower_tui::engine::tools::{self, ToolCtx};
use serde_json::json;

use crate::support::check::{assert_contains, assert_starts_with};
use crate::support::files::write;

struct Places {
    ws: tempfile::TempDir,
    config: tempfile::TempDir,
    home: tempfile::TempDir,
}

impl Places {
    fn new() -> Places {
        Places {
            ws: tempfile::tempdir().unwrap(),
            config: tempfile::tempdir().unwrap(),
            home: tempfile::tempdir().unwrap(),
        }
    }

    fn dirs(&self) -> SkillDirs {
        SkillDirs {
            config_dir: Some(self.config.path().to_path_buf()),
            home: Some(self.home.path().to_path_buf()),
            workspace: self.ws.path().to_path_buf(),
        }
    }
}

fn skill_md(name: &str, description: &str, body: &str) -> Vec<u8> {
    format!("---\nname: {name}\ndescription: {description}\n---\n{body}").into_bytes()
}

#[test]
fn four_places_in_order_and_a_stable_listing() {
    let p = Places::new();
    let user = p.config.path().join("skills");
    let user_claude = p.home.path().join(".claude/skills");
    let flower = p.ws.path().join(".flower/skills");
    let claude = p.ws.path().join(".claude/skills");
    write(
        &claude.join("pdf/SKILL.md"),
        b"---\nname: pdf\ndescription: >-\n  Extract text and tables from PDF files.\n  Use for forms.\nlicense: Apache-2.0\nallowed-tools: Read Bash(python3:*)\nmetadata:\n  author: example\n---\n# PDF\nRun scripts/extract.py.\n",
    );
    write(&claude.join("pdf/scripts/extract.py"), b"print('x')\n");
    write(
        &claude.join("review/SKILL.md"),
        skill_md("review", "claude's review", "body\n"),
    );
    write(
        &flower.join("review/SKILL.md"),
        skill_md("review", "flower's review", "body\n"),
    );
    write(
        &user_claude.join("review/SKILL.md"),
        skill_md("review", "home claude review", "b\n"),
    );
    write(
        &user.join("commit/SKILL.md"),
        skill_md("commit", "Write commit messages", "b\n"),
    );
    write(
        &user_claude.join("commit/SKILL.md"),
        skill_md("commit", "theirs", "b\n"),
    );
    // No frontmatter name: the folder's; no description: the first paragraph.
    write(
        &flower.join("release-notes/SKILL.md"),
        b"# Release notes\n\nDraft release notes from the changelog.\n",
    );
    write(&claude.join("not-a-skill/README.md"), b"no SKILL.md here\n");

    let catalog = skills::load(&p.dirs());
    assert!(catalog.notices().is_empty(), "{:?}", catalog.notices());
    let got: Vec<(&str, &str, SkillSource)> = catalog
        .skills()
        .map(|s| (s.name.as_str(), s.description.as_str(), s.source))
        .collect();
    assert_eq!(
        got,
        vec![
            ("commit", "Write commit messages", SkillSource::User),
            (
                "pdf",
                "Extract text and tables from PDF files. Use for forms.",
                SkillSource::ProjectClaude
            ),
            (
                "release-notes",
                "Draft release notes from the changelog.",
                SkillSource::Project
            ),
            ("review", "home claude review", SkillSource::UserClaude),
        ]
    );
    let pdf = catalog.get("pdf").unwrap();
    assert_eq!(pdf.license.as_deref(), Some("Apache-2.0"));
    assert_eq!(pdf.allowed_tools, vec!["Read", "Bash(python3:*)"]);
    assert_eq!(
        pdf.metadata.get("author").map(String::as_str),
        Some("example")
    );
    assert_eq!(catalog.shadowed().len(), 3);

    let listing = catalog.listing().unwrap();
    assert_starts_with(&listing, "# Skills\n");
    assert!(
        listing.ends_with(
            "- commit: Write commit messages\n\
         - pdf: Extract text and tables from PDF files. Use for forms.\n\
         - release-notes: Draft release notes from the changelog.\n\
         - review: home claude review\n"
        ),
        "{listing}"
    );
    // Names and descriptions only: no body, no path.
    assert!(!listing.contains("extract.py") && !listing.contains(&*p.ws.path().to_string_lossy()));
    // The same files give the same bytes.
    assert_eq!(skills::load(&p.dirs()).listing().unwrap(), listing);
    assert_eq!(SkillCatalog::default().listing(), None);
}

#[test]
fn a_malformed_skill_is_a_notice_and_the_rest_loads() {
    let p = Places::new();
    let claude = p.ws.path().join(".claude/skills");
    write(
        &claude.join("good/SKILL.md"),
        skill_md("good", "fine", "body\n"),
    );
    write(
        &claude.join("unclosed/SKILL.md"),
        b"---\nname: unclosed\ndescription: x\n",
    );
    write(
        &claude.join("Bad_Name/SKILL.md"),
        b"---\ndescription: x\n---\nbody\n",
    );
    write(
        &claude.join("named/SKILL.md"),
        skill_md("Not Valid", "x", "b\n"),
    );
    write(
        &claude.join("empty/SKILL.md"),
        b"---\nname: empty\n---\n# Only a heading\n",
    );
    write(
        &claude.join("quote/SKILL.md"),
        b"---\nname: quote\ndescription: \"open\n---\nb\n",
    );
    let catalog = skills::load(&p.dirs());
    let names: Vec<&str> = catalog.skills().map(|s| s.name.as_str()).collect();
    assert_eq!(names, vec!["good"]);
    let problems: Vec<(String, SkillProblem)> = catalog
        .notices()
        .iter()
        .map(|n| {
            let folder = n.path.parent().unwrap().file_name().unwrap();
            (folder.to_string_lossy().into_owned(), n.problem.clone())
        })
        .collect();
    assert_eq!(
        problems,
        vec![
            ("Bad_Name".into(), SkillProblem::BadName("Bad_Name".into())),
            ("empty".into(), SkillProblem::NoDescription),
            ("named".into(), SkillProblem::BadName("Not Valid".into())),
            (
                "quote".into(),
                SkillProblem::Frontmatter(FrontmatterError::UnclosedQuote { line: 3 })
            ),
            (
                "unclosed".into(),
                SkillProblem::Frontmatter(FrontmatterError::Unclosed)
            ),
        ]
    );
    let line = catalog.notices()[4].to_string();
    assert_eq!(
        line,
        format!(
            "{}: the frontmatter opened by `---` on line 1 is never closed by a `---` line; the skill is not loaded",
            claude.join("unclosed/SKILL.md").display()
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_skill_tool_gives_the_body_and_the_files_beside_it() {
    let p = Places::new();
    let dir = p.home.path().join(".claude/skills/pdf");
    write(
        &dir.join("SKILL.md"),
        b"---\nname: pdf\ndescription: PDF work\n---\n\nUse ${CLAUDE_SKILL_DIR}/scripts/extract.py on $1.\n",
    );
    write(&dir.join("scripts/extract.py"), b"print('extracted')\n");
    write(
        &dir.join("reference.md"),
        b"# Reference\nPage boxes are in points.\n",
    );
    write(&dir.join(".git/config"), b"hidden\n");
    let catalog = skills::load(&p.dirs());
    let pdf_dir = std::fs::canonicalize(&dir).unwrap();
    let shown = pdf_dir.display();

    let out = catalog.run(&json!({"name": "pdf", "arguments": "report.pdf"}));
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(
        out.content,
        format!(
            "Skill `pdf` (folder {shown}):\n\nUse {shown}/scripts/extract.py on report.pdf.\n\n\
             Files in the skill's folder (read them with read_file at {shown}/<file>):\n\
             - reference.md\n- scripts/extract.py\n"
        )
    );
    // Read fresh when called: an edit after loading is what the model gets.
    write(
        &dir.join("SKILL.md"),
        b"---\nname: pdf\ndescription: PDF work\n---\nNew body.\n",
    );
    let out = catalog.run(&json!({"name": "pdf"}));
    assert_contains(&out.content, "New body.");

    let out = catalog.run(&json!({"name": "nope"}));
    assert!(out.is_error);
    assert_eq!(
        out.content,
        "There is no skill `nope`. The skills are: pdf."
    );
    assert!(catalog.run(&json!({})).is_error);
    std::fs::remove_file(dir.join("SKILL.md")).unwrap();
    let out = catalog.run(&json!({"name": "pdf"}));
    assert!(
        out.is_error && out.content.contains("cannot be read"),
        "{}",
        out.content
    );

    // The files are outside the workspace; the engine lets read_file read them because the
    // catalog holds their folder.
    let file = pdf_dir.join("reference.md");
    assert!(catalog.holds(&file));
    assert!(!catalog.holds(p.home.path()));
    assert!(!catalog.holds(&p.ws.path().join("x")));
    let input = json!({"path": file.to_string_lossy()});
    let ws = std::fs::canonicalize(p.ws.path()).unwrap();
    assert!(tools::touches_outside("read_file", &input, &ws));
    let mut ctx = ToolCtx::new(&ws, "s");
    ctx.allow_outside = catalog.holds(&file);
    let out = tools::run("read_file", &input, &ctx).await;
    assert!(!out.is_error, "{}", out.content);
    assert_contains(&out.content, "Page boxes are in points.");

    let spec = SkillCatalog::tool_spec();
    assert_eq!(spec.name, skills::SKILL_TOOL);
    assert_eq!(spec.input_schema["required"], json!(["name"]));
}

#[test]
fn a_workspace_skill_folder_linked_outside_is_refused_and_a_user_one_is_not() {
    let p = Places::new();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("secrets");
    write(
        &target.join("SKILL.md"),
        skill_md("secrets", "reads the folder it lives in", "b\n"),
    );
    write(&target.join("id_rsa"), b"private\n");
    let claude = p.ws.path().join(".claude/skills");
    std::fs::create_dir_all(&claude).unwrap();
    std::os::unix::fs::symlink(&target, claude.join("secrets")).unwrap();
    let catalog = skills::load(&p.dirs());
    assert_eq!(catalog.skills().count(), 0);
    assert!(!catalog.holds(&target.join("id_rsa")));
    let problems: Vec<&SkillProblem> = catalog.notices().iter().map(|n| &n.problem).collect();
    assert_eq!(
        problems,
        vec![&SkillProblem::OutsideWorkspace(
            target.canonicalize().unwrap()
        )]
    );
    assert!(
        catalog.notices()[0]
            .to_string()
            .contains("outside the workspace"),
        "{}",
        catalog.notices()[0]
    );

    // The user's own skill folders may link anywhere: the user put the link there.
    let user = p.config.path().join("skills");
    std::fs::create_dir_all(&user).unwrap();
    std::os::unix::fs::symlink(&target, user.join("secrets")).unwrap();
    let catalog = skills::load(&p.dirs());
    assert_eq!(catalog.skills().count(), 1);
    assert!(catalog.holds(&target.join("id_rsa")));
}
