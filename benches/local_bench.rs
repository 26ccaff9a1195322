//! What asking a local server for its window costs at start (`server_window`): against the fake
//! acting as llama.cpp (answers), a server that is none of them (404 everywhere), a port nobody
//! listens on (refused), and a server that accepts and never answers (the deadline).

use std::time::{Duration, Instant};

use flower_tui::engine::provider::probe::Server;

use crate::fake::FakeServer;
use crate::fake::local::LocalServer;

const RUNS: usize = 30;

/// Median, min and max of `RUNS` probes of `base`, in ms; and what the last one found.
fn probe(rt: &tokio::runtime::Runtime, base: &str) -> (f64, f64, f64, Option<u64>) {
    let client = crate::fake::client();
    let ask = Server {
        client: &client,
        base_url: base,
        api_key: "",
    };
    let mut times = Vec::with_capacity(RUNS);
    let mut found = None;
    for _ in 0..RUNS {
        let t = Instant::now();
        found = rt
            .block_on(ask.window("qwen2.5-coder-0.5b-instruct"))
            .map(|w| w.window);
        times.push(t.elapsed());
    }
    times.sort_unstable();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    (
        ms(times[times.len() / 2]),
        ms(times[0]),
        ms(times[times.len() - 1]),
        found,
    )
}

pub fn probe_costs() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let llama = rt.block_on(FakeServer::start());
    llama.act_as(LocalServer::llama(8_192));
    let none = rt.block_on(FakeServer::start());
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let rows = [
        (
            "llama.cpp (fake, /props answers)",
            format!("{}/v1", llama.base_url()),
        ),
        (
            "none of them (404 everywhere)",
            format!("{}/v1", none.base_url()),
        ),
        ("closed port (refused)", format!("http://{closed}/v1")),
    ];
    for (what, base) in rows {
        let (med, min, max, found) = probe(&rt, &base);
        println!(
            "probe {what}: median {med:.2} ms, min {min:.2} ms, max {max:.2} ms over {RUNS}; window {found:?}"
        );
    }
    // A server that accepts and never answers: once, it costs the deadline.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = silent.local_addr().unwrap();
    let held = std::thread::spawn(move || {
        let mut open = Vec::new();
        for sock in silent.incoming().take(5) {
            open.push(sock);
        }
        std::thread::sleep(Duration::from_secs(3));
    });
    let client = crate::fake::client();
    let base = format!("http://{addr}/v1");
    let ask = Server {
        client: &client,
        base_url: &base,
        api_key: "",
    };
    let t = Instant::now();
    let found = rt.block_on(ask.window("m"));
    println!(
        "probe silent server: {:.0} ms (the deadline); window {:?}",
        t.elapsed().as_secs_f64() * 1000.0,
        found.map(|w| w.window)
    );
    let _ = held.join();
}
