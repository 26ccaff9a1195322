//! The checkpoint cost per turn on a workspace of 5,000 files and 100 MB: the first checkpoint
//! (an empty store: every file read, hashed and stored), a checkpoint after a turn that changed
//! one file, one with nothing changed (the next turn's "before"), the changes between two, and
//! undoing the one-file turn.

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use flower_tui::engine::checkpoint::{Checkpoints, OnConflict, Options, Restore};

const DIRS: usize = 250;
const FILES_PER_DIR: usize = 20;
/// Average file size: 5,000 × 20 KB ≈ 100 MB.
const AVERAGE: usize = 20_400;
const FIRST_RUNS: usize = 3;
const TURN_RUNS: usize = 15;

/// Deterministic text-like content of about `size` bytes.
fn content(seed: u64, size: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut out = Vec::with_capacity(size + 80);
    while out.len() < size {
        for _ in 0..10 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            out.extend_from_slice(format!("{:07x} ", x & 0xfff_ffff).as_bytes());
        }
        out.push(b'\n');
    }
    out.truncate(size);
    out
}

fn build(ws: &Path) -> (usize, u64) {
    let (mut files, mut bytes) = (0, 0u64);
    for d in 0..DIRS {
        let dir = ws.join(format!("pkg{}/mod{d}", d / 25));
        fs::create_dir_all(&dir).unwrap();
        for f in 0..FILES_PER_DIR {
            let seed = (d * FILES_PER_DIR + f) as u64;
            // Sizes from 10 % to 190 % of the average.
            let size = AVERAGE / 10 + (seed as usize * 7919) % (AVERAGE * 18 / 10);
            let body = content(seed, size);
            bytes += body.len() as u64;
            files += 1;
            fs::write(dir.join(format!("f{f}.rs")), body).unwrap();
        }
    }
    fs::write(ws.join(".gitignore"), "target/\n").unwrap();
    (files, bytes)
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn summary(mut times: Vec<Duration>) -> String {
    times.sort_unstable();
    format!(
        "median {}, fastest {}, slowest {} ({} runs)",
        ms(times[times.len() / 2]),
        ms(times[0]),
        ms(times[times.len() - 1]),
        times.len()
    )
}

fn du(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let meta = e.metadata().unwrap();
            if meta.is_dir() {
                stack.push(e.path());
            } else {
                total += meta.len();
            }
        }
    }
    total
}

pub fn run() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    let (files, bytes) = build(&ws);
    println!(
        "workspace: {files} files, {:.1} MB in {DIRS} folders",
        bytes as f64 / 1e6
    );
    // A project's files are older than the stat cache's two-second window.
    std::thread::sleep(Duration::from_millis(2_100));

    let mut first = Vec::new();
    let mut store = None;
    for n in 0..FIRST_RUNS {
        let data = tmp.path().join(format!("data{n}"));
        let s = Checkpoints::open(&data, &ws, Options::default()).unwrap();
        let t = Instant::now();
        let snap = s.snapshot("first").unwrap();
        first.push(t.elapsed());
        assert_eq!(snap.files, files + 1);
        assert_eq!(snap.read, files + 1);
        store = Some((s, data));
    }
    let (store, data) = store.unwrap();
    println!("first checkpoint: {}", summary(first));
    println!(
        "store after the first checkpoint: {:.1} MB",
        du(&data) as f64 / 1e6
    );

    let mut before = store.snapshot("settle").unwrap();
    let (mut unchanged, mut one, mut changes, mut undo) = (vec![], vec![], vec![], vec![]);
    for n in 0..TURN_RUNS {
        let t = Instant::now();
        let b = store.snapshot("before").unwrap();
        unchanged.push(t.elapsed());
        assert_eq!(b.id, before.id);
        // The turn: one file gets a line.
        let m = n * 16 % DIRS;
        let path = ws.join(format!("pkg{}/mod{m}/f{}.rs", m / 25, n % FILES_PER_DIR));
        let mut text = fs::read(&path).unwrap();
        text.extend_from_slice(format!("// turn {n}\n").as_bytes());
        fs::write(&path, text).unwrap();
        let t = Instant::now();
        let after = store.snapshot("after").unwrap();
        one.push(t.elapsed());
        let t = Instant::now();
        let c = store.changes(&b.id, &after.id).unwrap();
        changes.push(t.elapsed());
        assert_eq!(c.len(), 1);
        if n % 3 == 0 {
            let t = Instant::now();
            let r = store.restore(&after.id, &b.id, OnConflict::Stop).unwrap();
            undo.push(t.elapsed());
            assert!(matches!(r, Restore::Done(_)));
            before = store.snapshot("after undo").unwrap();
            assert_eq!(before.id, b.id);
        } else {
            before = after;
        }
    }
    println!(
        "checkpoint after a turn that changed one file: {}",
        summary(one)
    );
    println!(
        "checkpoint with nothing changed (the next turn's before): {}",
        summary(unchanged)
    );
    println!(
        "changes between the two (one file, line counts): {}",
        summary(changes)
    );
    println!(
        "undo of the one-file turn (conflict check + restore): {}",
        summary(undo)
    );
}
