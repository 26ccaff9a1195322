//! What the sandbox costs a command: the `bash` tool running `true` with the sandbox off, on
//! (workspace-write, network off) and on with the network, the three interleaved so that load
//! from elsewhere falls on all alike; and what preparing the sandbox takes alone (the Landlock
//! ruleset with its path rules and the seccomp program, no process).

use std::time::{Duration, Instant};

use flower_tui::engine::tools::sandbox::{self, NetworkAccess, SandboxPolicy};
use flower_tui::engine::tools::{self, ToolCtx};

const RUNS: usize = 101;

pub fn run() {
    let dir = tempfile::tempdir().expect("temp dir");
    let ws = std::fs::canonicalize(dir.path()).expect("workspace");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    println!(
        "this kernel: {:?}; with the sandbox on a command gets {:?}",
        sandbox::Support::current(),
        sandbox::enforcement(&SandboxPolicy::default(), &ws).expect("enforcement")
    );
    let policies = [
        ("off", SandboxPolicy::off()),
        ("workspace-write, network off", SandboxPolicy::default()),
        (
            "workspace-write, network on",
            SandboxPolicy::default().with_network(NetworkAccess::Allowed),
        ),
    ];
    let input = serde_json::json!({ "command": "true" });
    let mut times: Vec<Vec<Duration>> = vec![Vec::with_capacity(RUNS); policies.len()];
    for _ in 0..RUNS {
        for (i, (_, policy)) in policies.iter().enumerate() {
            let ctx = ToolCtx {
                sandbox: policy.clone(),
                ..ToolCtx::new(ws.clone(), "bench")
            };
            let took = rt.block_on(async {
                let t = Instant::now();
                let out = tools::run("bash", &input, &ctx).await;
                assert!(!out.is_error, "{}", out.content);
                t.elapsed()
            });
            times[i].push(took);
        }
    }
    for ((label, _), mut t) in policies.iter().zip(times) {
        t.sort_unstable();
        println!(
            "bash `true`, sandbox {label}: median {:?}, fastest {:?} ({RUNS} runs)",
            t[t.len() / 2],
            t[0]
        );
    }
    let policy = SandboxPolicy::default();
    let prepare = crate::median_of(1_001, || {
        let t = Instant::now();
        let e = sandbox::enforcement(&policy, &ws).expect("prepare");
        std::hint::black_box(e);
        t.elapsed()
    });
    println!("preparing the sandbox alone (ruleset, rules, filter): median {prepare:?} of 1001");
    // Let the watchers of the last calls see their groups empty and leave.
    std::thread::sleep(Duration::from_millis(1_200));
}
