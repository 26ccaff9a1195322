//! Two processes at once in one workspace: neither loses or swaps the other's documents.

use super::*;
use crate::support::check::assert_lacks;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn case4_two_processes_on_one_step_never_lose_or_swap_documents() {
    for pair in 0..10 {
        let home = Arc::new(tempfile::tempdir().unwrap());
        let ws = home.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        let servers = [FakeServer::start().await, FakeServer::start().await];
        let names = ["alpha", "beta"];
        for (s, who) in servers.iter().zip(names) {
            script(s, who);
        }
        let runs: Vec<_> = servers
            .iter()
            .zip(names)
            .map(|(s, who)| {
                let mut c = bin_for(home.path(), s);
                c.args(flags(&format!("{BLOCKING} --step same")))
                    .arg("--workspace")
                    .arg(&ws)
                    .args(["-p", &format!("task of {who}")]);
                let child = c
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap();
                tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
            })
            .collect();
        let mut outs = Vec::new();
        for r in runs {
            outs.push(r.await.unwrap());
        }
        for (out, who) in outs.iter().zip(names) {
            assert_eq!(
                out.status.code(),
                Some(0),
                "pair {pair} {who}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        // Exactly one of the two says it took another name.
        let renamed: Vec<bool> = outs
            .iter()
            .map(|o| {
                json_lines(o).iter().any(|e| {
                    e["type"] == "notice"
                        && e["message"]
                            .as_str()
                            .is_some_and(|m| m.contains("works as step same-2"))
                })
            })
            .collect();
        assert_eq!(renamed.iter().filter(|r| **r).count(), 1, "pair {pair}");
        // Every document on disk: both processes' two generations, live or archived.
        let notes = ws.join(".flower/notes");
        let docs: Vec<String> = all_files(&notes)
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "md"))
            .map(|p| read(p))
            .collect();
        for who in names {
            for g in ["g1", "g2"] {
                let marker = format!("Work of {who}-{g}.");
                assert_eq!(
                    docs.iter().filter(|d| d.contains(&marker)).count(),
                    1,
                    "pair {pair}: {marker} in {docs:#?}"
                );
            }
        }
        assert_eq!(docs.len(), 4, "pair {pair}: {docs:#?}");
        // Each successor was briefed with its own process's document.
        for (s, who) in servers.iter().zip(names) {
            let reqs = s.requests();
            assert_eq!(reqs.len(), 5, "pair {pair} {who}");
            for (i, g) in [(2, "g1"), (4, "g2")] {
                let first = first_blocks(&reqs[i]).join("");
                assert!(
                    first.contains(&format!("Work of {who}-{g}.")),
                    "pair {pair} {who} {g}"
                );
                let other = names
                    .iter()
                    .find(|n| **n != who)
                    .copied()
                    .unwrap_or_default();
                assert!(
                    !first.contains(&format!("Work of {other}")),
                    "pair {pair}: {who} got {other}'s"
                );
            }
        }
        assert!(
            !ws.join(".flower/locks").exists()
                || std::fs::read_dir(ws.join(".flower/locks"))
                    .unwrap()
                    .next()
                    .is_none(),
            "no lock file left behind"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn case4_a_tui_in_review_keeps_its_document_while_another_process_hands_off() {
    let tui_server = FakeServer::start().await;
    tui_server
        .script()
        .over_the_line(&doc("tui"))
        .at(4_000)
        .text("TUI successor here.");
    let args = flags(&format!("{BLOCKING} --review 60 --step same"));
    let mut t = Pty::open(&tui_server, &args);
    t.keys("the tui's task");
    t.keys(ENTER);
    t.wait("the review", |s| {
        s.contains("handoff-same.md") && s.contains("successor in")
    });

    // A headless process on the same step, in the same workspace and data dir, hands off twice.
    let other = FakeServer::start().await;
    script(&other, "headless");
    let home = t.home();
    let mut c = bin_for(home.path(), &other);
    c.args(flags(&format!("{BLOCKING} --step same")))
        .arg("--workspace")
        .arg(t.workspace())
        .args(["-p", "the headless task"]);
    let out = run(c).await.output;
    assert_success(&out);
    assert!(
        json_lines(&out).iter().any(|e| e["message"]
            .as_str()
            .is_some_and(|m| m.contains("works as step same-2"))),
        "the second process says it took another name"
    );
    let notes = t.workspace().join(".flower/notes");
    assert!(read(&notes.join("handoff-same-2.md")).contains("Work of headless-g2."));
    // The review still shows (and the TUI's file still holds) the TUI's own document.
    let screen = t.wait_for("Work of tui.");
    assert_lacks(&screen, "headless");
    assert!(read(&notes.join("handoff-same.md")).contains("Work of tui."));
    t.keys(ESC);
    t.wait_for("TUI successor here.");
    let first = first_blocks(&tui_server.requests()[2]).join("");
    assert!(
        first.contains("Work of tui.") && !first.contains("headless"),
        "{first}"
    );
    let first = first_blocks(&other.requests()[4]).join("");
    assert!(first.contains("Work of headless-g2.") && !first.contains("Work of tui."));
}
