//! Secrets: every provider key known at start is masked everywhere, and no command can read one,
//! not from its own environment and not from the agent's `/proc/<pid>/environ`, even outside the
//! sandbox.

use crate::support::check::{assert_contains, assert_lacks, assert_success};
use crate::support::fake::{FakeServer, U};
use crate::support::harness::{KEY, all_files};
use crate::support::headless::{bin_for, flags, run};

/// The inactive provider's key: flower-tui talks to Anthropic, yet this one is guarded too.
const OPENAI_KEY: &str = "sk-proj-INACTIVE-0123456789abcdef";
/// A key flower-tui never uses at all.
const GROQ_KEY: &str = "gsk_UNUSED-0123456789abcdef";

#[tokio::test]
async fn every_key_is_masked_on_disk_and_no_command_can_read_one() {
    let server = FakeServer::start().await;
    let home = tempfile::tempdir().unwrap();
    let command = "cat /proc/$PPID/environ > agent-environ.txt; env > child-env.txt; echo done";
    server.script().usage(U::new(1_000, 20)).tool(
        "bash",
        serde_json::json!({ "command": command }).to_string(),
    );
    // A model that repeats a key into its handoff document (it never saw one; a fake can).
    server
        .script()
        .usage(U::new(1_500, 30))
        .text(&format!(
            "## Doing\nKeys {KEY} and {OPENAI_KEY}.\n## Next\nGo on.\n"
        ))
        .usage(U::new(900, 10))
        .text("done in generation 2");
    // A file of the user's that holds a key, attached with `@`.
    std::fs::write(
        home.path().join("creds.txt"),
        format!("OPENAI={OPENAI_KEY}\n"),
    )
    .unwrap();
    let task =
        format!("my key is {KEY}, the OpenAI one {OPENAI_KEY} and groq {GROQ_KEY}; see @creds.txt");
    let mut c = bin_for(home.path(), &server);
    c.env("OPENAI_API_KEY", OPENAI_KEY)
        .env("GROQ_API_KEY", GROQ_KEY)
        // The sandbox refuses reading another process's `/proc` files at all (tests/suite/sandbox/
        // processes.rs); without it the agent's own block is read here, and must hold no key.
        .args(["--sandbox", "off", "-p", &task])
        .args(flags("--yes --step keys --handoff-after 1"));
    let out = run(c).await.output;
    assert_success(&out);
    let keys = [KEY, OPENAI_KEY, GROQ_KEY];

    // The command ran, and saw no key: not in its environment, not in the agent's.
    let child_env = std::fs::read_to_string(home.path().join("child-env.txt")).unwrap();
    let agent_env = std::fs::read(home.path().join("agent-environ.txt")).unwrap();
    let agent_env = String::from_utf8_lossy(&agent_env);
    assert_contains(&child_env, "PATH=");
    assert!(
        agent_env.contains("ANTHROPIC_BASE_URL="),
        "the agent's block was read"
    );
    for key in keys {
        assert!(!child_env.contains(key), "{key} in the command's env");
        assert!(!agent_env.contains(key), "{key} in /proc/<agent>/environ");
    }
    assert_lacks(&child_env, "OPENAI_API_KEY=");

    // The model got the task masked.
    let first = serde_json::to_string(&server.requests()[0]["messages"]).unwrap();
    assert_contains(&first, "my key is sk-t****");
    assert!(
        first.contains("OPENAI=sk-p****"),
        "the attachment is there, masked: {first}"
    );
    // Nothing on disk holds a key: ledger, transcripts, handoff file, log.
    let manifest = std::fs::read_to_string(
        all_files(&home.path().join("data/flower/runs"))
            .into_iter()
            .find(|f| f.ends_with("manifest.json"))
            .unwrap(),
    )
    .unwrap();
    assert_contains(&manifest, "my key is sk-t****");
    let handoff =
        std::fs::read_to_string(home.path().join(".flower/notes/handoff-keys.md")).unwrap();
    assert_contains(&handoff, "Keys sk-t**** and sk-p****");
    // The checkpoint store keeps copies of the workspace's files byte for byte (an undo must
    // give `creds.txt` back as it was): the user's own file again, owner-only like the data dir.
    let store = home.path().join("data/flower/checkpoints");
    for dir in std::fs::read_dir(&store).unwrap().flatten() {
        use std::os::unix::fs::PermissionsExt;
        let mode = dir.metadata().unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "{}", dir.path().display());
    }
    for f in all_files(home.path()) {
        if f.ends_with("creds.txt") {
            continue; // the user's own file
        }
        if f.starts_with(&store)
            && std::fs::read(&f).unwrap() == std::fs::read(home.path().join("creds.txt")).unwrap()
        {
            continue; // a checkpoint's copy of it
        }
        let text = String::from_utf8_lossy(&std::fs::read(&f).unwrap()).into_owned();
        for key in keys {
            assert!(!text.contains(key), "{key} in {}", f.display());
        }
    }
    for body in server.requests() {
        let body = body.to_string();
        for key in keys {
            assert!(!body.contains(key), "{key} sent to the model");
        }
    }
    let printed = String::from_utf8_lossy(&out.stdout);
    for key in keys {
        assert!(!printed.contains(key), "{key} printed");
    }
}

#[tokio::test]
async fn a_key_the_model_writes_into_a_tool_call_is_never_printed() {
    let server = FakeServer::start().await;
    let home = tempfile::tempdir().unwrap();
    // A model that puts a key into a command (it never saw one; a fake can).
    let command = format!("echo {OPENAI_KEY} > /dev/null; echo ran");
    server
        .script()
        .usage(U::new(1_000, 20))
        .tool(
            "bash",
            serde_json::json!({ "command": command }).to_string(),
        )
        .usage(U::new(1_100, 10))
        .text("done");
    let mut c = bin_for(home.path(), &server);
    c.env("OPENAI_API_KEY", OPENAI_KEY)
        .args(["-p", "run it", "--yes"]);
    let out = run(c).await.output;
    assert_success(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let call = stdout
        .lines()
        .find(|l| l.contains("\"type\":\"tool_call\""))
        .unwrap_or_else(|| panic!("no tool_call event: {stdout}"));
    assert_contains(call, "echo sk-p****");
    assert!(
        !stdout.contains(OPENAI_KEY),
        "the key was printed: {stdout}"
    );
    // The command itself ran as written.
    let result = stdout
        .lines()
        .find(|l| l.contains("\"type\":\"tool_result\""))
        .unwrap_or_default();
    assert_contains(result, "ran");
}
