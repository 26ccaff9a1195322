//! Custom commands and skills on the real binary, headless, through the loopback fake: the
//! bytes that reach the provider (the expanded command, the skills' listing in the system prompt,
//! the `skill` tool's result, a skill's file read outside the workspace without asking), the `!`
//! lines run as `bash` calls (one granted by the command's `allowed-tools`, one denied), and bad
//! files named in one-line warnings while the rest loads.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::support::check::{assert_contains, assert_lacks, assert_starts_with, assert_success};
use crate::support::fake::FakeServer;
use crate::support::fake::anthropic::tool_results;
use crate::support::files::write;
use crate::support::harness::KEY;
use crate::support::headless::{bin, lines};
use crate::support::requests::{last_texts, tool_names};

/// A home (HOME, config and data dirs) with a workspace `ws` in it.
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("ws")).unwrap();
        Home { dir }
    }

    fn ws(&self) -> PathBuf {
        self.dir.path().join("ws")
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    async fn run(&self, server: &FakeServer, args: &[&str]) -> Output {
        let mut c = bin(self.dir.path());
        c.current_dir(self.ws())
            .env("ANTHROPIC_API_KEY", KEY)
            .env("ANTHROPIC_BASE_URL", server.base_url())
            .args(["--sandbox", "off"])
            .args(args);
        crate::support::headless::run(c).await.output
    }
}

/// The events of `out` of type `ty`.
fn events(out: &Output, ty: &str) -> Vec<Value> {
    lines(out).into_iter().filter(|e| e["type"] == ty).collect()
}

const REVIEW: &str = "---\ndescription: Review a change\nargument-hint: <what> [priority]\nallowed-tools: Bash(echo:*), Read\nmodel: claude-command-model\n---\nReview $1 at priority $2.\nStatus:\n!`echo bang-ran`\nSecret:\n!`printf not-shown`\nNotes: @notes.txt\n";

#[tokio::test]
async fn a_command_is_expanded_its_bang_lines_run_as_bash_calls_and_the_result_is_the_message() {
    let server = FakeServer::start().await;
    let home = Home::new();
    let ws = home.ws();
    write(&ws.join(".claude/commands/review.md"), REVIEW.as_bytes());
    write(&ws.join("notes.txt"), b"NOTES-BODY\n");
    // A workspace's command file grants its allowed-tools once the workspace's files are trusted.
    let config = home.path().join("config/flower/config.toml");
    write(&config, b"mcp_json = \"trust\"\n");
    server.script().text("reviewed");

    let out = home
        .run(&server, &["-p", "/review parser.rs \"very high\""])
        .await;
    assert_success(&out);
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let body = &requests[0];
    // The command's model for its turn.
    assert_eq!(body["model"], "claude-command-model");
    let texts = last_texts(body);
    // The `echo` was granted by allowed-tools and ran; the `printf` needed an approval that a
    // headless run without --yes cannot give: a note, not its output.
    let first = &texts[0];
    assert_starts_with(
        first,
        "Review parser.rs at priority very high.\nStatus:\nbang-ran",
    );
    assert_contains(first, "Secret:\n[`printf not-shown` was not run: denied");
    assert_lacks(first, "not-shown\n");
    assert!(first.ends_with("Notes: @notes.txt\n"), "{first}");
    assert!(
        texts.iter().skip(1).any(|t| t.contains("NOTES-BODY")),
        "the mention is attached: {texts:?}"
    );

    // Both `!` lines are bash calls the front end sees, before the message.
    let calls = events(&out, "tool_call");
    let commands: Vec<&str> = calls
        .iter()
        .map(|c| c["input"]["command"].as_str().unwrap())
        .collect();
    assert_eq!(commands, ["echo bang-ran", "printf not-shown"]);
    let results = events(&out, "tool_result");
    assert_eq!(results[0]["is_error"], false);
    assert!(results[0]["output"].as_str().unwrap().contains("bang-ran"));
    assert_eq!(results[1]["is_error"], true);
    let user = events(&out, "user_message");
    assert_eq!(user[0]["text"].as_str().unwrap(), first.as_str());

    // The grant was for that turn only: a plain message asks again (and is denied).
    server
        .script()
        .tool("bash", r#"{"command":"echo again"}"#)
        .at(1_100)
        .text("could not");
    let out = home
        .run(&server, &["--continue", "-p", "run echo again"])
        .await;
    assert_success(&out);
    let requests = server.requests();
    let last = requests.last().unwrap();
    let result = &tool_results(last)[0];
    assert_eq!(result["is_error"], true, "{result}");
    // And the model is the run's own again.
    assert_ne!(last["model"], "claude-command-model");
}

#[tokio::test]
async fn bad_command_files_are_named_once_and_the_rest_loads() {
    let server = FakeServer::start().await;
    let home = Home::new();
    let ws = home.ws();
    let dir = ws.join(".flower/commands");
    write(
        &dir.join("ok.md"),
        b"---\ndescription: fine\n---\nSay ok to $ARGUMENTS.\n",
    );
    write(
        &dir.join("broken.md"),
        b"---\ndescription: never closed\nSay hi.\n",
    );
    write(&dir.join("help.md"), b"Not the built-in help.\n");
    let huge = vec![b'x'; 10 * 1024 * 1024];
    write(&dir.join("huge.md"), &huge);
    server.script().text("ok!");

    let out = home.run(&server, &["-p", "/ok  the world "]).await;
    assert_success(&out);
    let warnings: Vec<String> = events(&out, "warning")
        .iter()
        .map(|w| w["message"].as_str().unwrap().to_string())
        .collect();
    let naming = |file: &str| {
        warnings
            .iter()
            .filter(|w| w.contains(&dir.join(file).display().to_string()))
            .count()
    };
    assert_eq!(naming("broken.md"), 1, "{warnings:?}");
    assert_eq!(naming("help.md"), 1, "{warnings:?}");
    assert_eq!(naming("huge.md"), 1, "{warnings:?}");
    assert!(warnings.iter().all(|w| !w.contains('\n')), "{warnings:?}");
    assert!(
        warnings.iter().any(|w| w.contains("is never closed")),
        "{warnings:?}"
    );
    assert_eq!(
        last_texts(&server.requests()[0])[0],
        "Say ok to the world.\n"
    );
}

const PDF_SKILL: &str = "---\nname: pdf\ndescription: Fill in PDF forms. Use for any .pdf form.\n---\n# PDF\nRead reference.md first.\n";
const OUTSIDE_SKILL: &str = "---\nname: outside\ndescription: A skill of the user's own, outside the workspace.\n---\nRead data.txt beside this file.\n";

/// The workspace's `pdf` skill (its `SKILL.md` alone).
fn pdf_skill(ws: &Path) {
    write(&ws.join(".claude/skills/pdf/SKILL.md"), PDF_SKILL);
}

#[tokio::test]
async fn skills_are_listed_in_a_stable_prompt_loaded_by_the_tool_and_their_files_read_unasked() {
    let server = FakeServer::start().await;
    let home = Home::new();
    let ws = home.ws();
    pdf_skill(&ws);
    write(&ws.join(".claude/skills/pdf/reference.md"), b"ref\n");
    let user_skill = home.path().join(".claude/skills/outside");
    write(&user_skill.join("SKILL.md"), OUTSIDE_SKILL.as_bytes());
    write(&user_skill.join("data.txt"), b"OUTSIDE-DATA\n");
    write(
        &ws.join(".flower/skills/empty/SKILL.md"),
        b"---\nname: empty\n---\n# Only a heading\n",
    );
    write(
        &ws.join(".flower/skills/bad/SKILL.md"),
        b"---\nname: [unclosed\n---\nbody\n",
    );

    let data = user_skill.join("data.txt");
    server
        .script()
        .tool("skill", r#"{"name":"outside"}"#)
        .at(1_100)
        .tool("read_file", serde_json::json!({ "path": data }).to_string())
        .at(1_200)
        .text("done");
    // No --yes: a read outside the workspace would be denied unless it is a skill's.
    let out = home.run(&server, &["-p", "use the skill"]).await;
    assert_success(&out);
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let system = requests[0]["system"].to_string();
    assert!(
        system.contains(
            "- outside: A skill of the user's own, outside the workspace.\\n- pdf: Fill in PDF forms. Use for any .pdf form.\\n"
        ),
        "{system}"
    );
    assert!(
        !system.contains("Read reference.md first"),
        "the body is not in the prompt"
    );
    let tools = tool_names(&requests[0]);
    assert!(tools.iter().any(|t| t == "skill"), "{tools:?}");

    let skill = &tool_results(&requests[1])[0];
    assert_ne!(skill["is_error"], true, "{skill}");
    let text = skill["content"].to_string();
    assert_contains(&text, "Read data.txt beside this file.");
    assert_contains(&text, "- data.txt");
    let read = &tool_results(&requests[2])[0];
    assert_ne!(read["is_error"], true, "{read}");
    assert!(
        read["content"].to_string().contains("OUTSIDE-DATA"),
        "{read}"
    );
    assert!(events(&out, "approval_request").is_empty());

    // The two broken SKILL.md files: one line each, naming the file.
    let warnings: Vec<String> = events(&out, "warning")
        .iter()
        .map(|w| w["message"].as_str().unwrap().to_string())
        .collect();
    for bad in ["empty", "bad"] {
        let path = ws.join(".flower/skills").join(bad).join("SKILL.md");
        assert_eq!(
            warnings
                .iter()
                .filter(|w| w.contains(&path.display().to_string()))
                .count(),
            1,
            "{bad}: {warnings:?}"
        );
    }

    // A second session (a new run) sends the same system prompt, byte for byte.
    server.script().text("again");
    let out = home.run(&server, &["-p", "hello"]).await;
    assert_success(&out);
    let requests = server.requests();
    assert_eq!(requests.last().unwrap()["system"], requests[0]["system"]);

    // `-p /skills` lists them and runs no turn.
    let before = server.requests().len();
    let out = home
        .run(&server, &["-p", "/skills", "--output", "text"])
        .await;
    assert_success(&out);
    let listed = String::from_utf8_lossy(&out.stdout);
    assert_contains(&listed, "outside — A skill of the user's own");
    assert_contains(&listed, "pdf — Fill in PDF forms");
    assert_contains(&listed, "not loaded:");
    assert_eq!(server.requests().len(), before);
}

#[tokio::test]
async fn a_read_outside_the_workspace_and_outside_any_skill_is_still_denied() {
    let server = FakeServer::start().await;
    let home = Home::new();
    let ws = home.ws();
    pdf_skill(&ws);
    let secret = home.path().join("secret.txt");
    write(&secret, b"NOT-FOR-THE-MODEL\n");
    server
        .script()
        .tool(
            "read_file",
            serde_json::json!({ "path": secret }).to_string(),
        )
        .at(1_100)
        .text("done");
    let out = home.run(&server, &["-p", "read it"]).await;
    assert_success(&out);
    let read = &tool_results(&server.requests()[1])[0];
    assert_eq!(read["is_error"], true, "{read}");
    assert!(!read["content"].to_string().contains("NOT-FOR-THE-MODEL"));
}
