//! `<workspace>/.flower/.gitignore`: notes and spills never show in `git status`.

use crate::support::fake::U;
use crate::support::files::git;
use crate::support::harness::{Harness, start};

#[tokio::test]
async fn spills_in_the_workbench_stay_out_of_git_status() {
    let h = Harness::new().await;
    git(&h.workspace, &["init", "-q"]);
    h.file("tracked.txt", "x\n");
    git(&h.workspace, &["add", "tracked.txt"]);
    h.script()
        .usage(U::new(1000, 20))
        .tool(
            "bash",
            r#"{"command":"head -c 300000 /dev/zero | tr '\\0' a"}"#,
        )
        .usage(U::new(1100, 20))
        .text("Big.");
    let mut r = start(h.params(200_000, 50_000));
    r.completed_turn("big").await;
    let spill = h.workbench().join("spill");
    assert_eq!(
        std::fs::read_dir(&spill).unwrap().count(),
        1,
        "a spill file"
    );
    assert!(h.workbench().join(".gitignore").is_file());
    // Only the staged file: nothing under .flower is untracked.
    assert_eq!(
        git(&h.workspace, &["status", "--porcelain"]),
        "A  tracked.txt\n"
    );
    r.shutdown().await;
}
