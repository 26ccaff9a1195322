//! Children die with the agent: a `kill -9` of a headless run ends its running command and the
//! command's own children, and the repaired transcript says so.

use super::{gone, read_pid, wait_until};
use crate::support::check::{assert_contains, assert_success};
use crate::support::fake::{FakeServer, U};
use crate::support::headless::{bin_for, run};

#[tokio::test]
async fn a_killed_agent_takes_its_running_command_and_grandchildren_with_it() {
    let server = FakeServer::start().await;
    let home = tempfile::tempdir().unwrap();
    // The command records its shell's pid and a grandchild's, then waits on the grandchild.
    let command = "echo $$ > child.pid; (sleep 1000; echo survived > survived.txt) & \
                   echo $! > grandchild.pid; sleep 1000 & echo $! > sleeper.pid; wait";
    server.script().usage(U::new(1_000, 20)).tool(
        "bash",
        serde_json::json!({ "command": command }).to_string(),
    );
    let mut c = bin_for(home.path(), &server);
    c.args(["-p", "run the long command", "--yes", "--step", "long"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut agent = c.spawn().unwrap();
    let ws = home.path().to_path_buf();
    let pids = tokio::task::spawn_blocking(move || {
        [
            read_pid(&ws.join("child.pid")),
            read_pid(&ws.join("grandchild.pid")),
            read_pid(&ws.join("sleeper.pid")),
        ]
    })
    .await
    .unwrap();
    for pid in pids {
        assert!(!gone(pid), "{pid} runs before the kill");
    }
    // kill -9: the agent runs no code of its own after this.
    agent.kill().unwrap();
    agent.wait().unwrap();
    tokio::task::spawn_blocking(move || {
        wait_until("the command's processes to die", 10, || {
            pids.iter().all(|&p| gone(p))
        })
    })
    .await
    .unwrap();
    assert!(!home.path().join("survived.txt").exists());

    // The repaired transcript tells the model what is true: the command was killed.
    server.script().at(1_200).text("I will run it again.");
    let mut c = bin_for(home.path(), &server);
    c.args(["-p", "what happened?", "--continue"]);
    let out = run(c).await.output;
    assert_success(&out);
    let body = serde_json::to_string(&server.requests().last().unwrap()["messages"]).unwrap();
    assert_contains(
        &body,
        "flower-tui stopped before this call finished; the command and every process it started were killed with it",
    );
}
