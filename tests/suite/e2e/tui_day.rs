//! End to end, a Claude Code user's day: `!command` runs at once with no model request, the
//! mouse is left to the terminal, and leaving prints the conversation into the scrollback.

use crate::support::fake::anthropic as a;
use crate::support::pty::{ENTER, Pty, READY, runtime};

use super::u;

#[test]
fn a_bang_line_runs_in_the_sandbox_with_no_model_request() {
    let rt = runtime();
    let server = rt.block_on(crate::support::fake::FakeServer::start());
    server.push(a::text("The file says hello.", u(1_000)));
    let mut t = Pty::start(&server, &[]);
    std::fs::write(t.workspace().join("greeting.txt"), "hello from the file\n").unwrap();
    t.wait_for(READY);
    t.keys("!cat greeting.txt");
    t.wait_for("!cat greeting.txt");
    t.keys(ENTER);
    let screen = t.wait_for("hello from the file");
    assert!(!screen.contains("Allow bash?"), "not asked for:\n{screen}");
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(server.requests().is_empty(), "no model request");
    t.keys("what does it say");
    t.keys(ENTER);
    t.wait_for("The file says hello.");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    let sent = reqs[0]["messages"].to_string();
    assert!(sent.contains("hello from the file"), "{sent}");
}
