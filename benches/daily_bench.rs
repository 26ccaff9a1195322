//! The daily driver's figures: the diff of a 5,000-line file (goal ≤ 5 ms).

use std::hint::black_box;

use flower_tui::engine::diff::{DiffLimits, FileDiff};

use super::{median_of, timed};

const LINES: usize = 5_000;
const RUNS: usize = 21;

/// A source file of `LINES` lines that look like code (40–70 characters, some repeated).
fn source() -> String {
    (0..LINES)
        .map(|i| match i % 7 {
            0 => format!("fn item_{i}(x: u64) -> u64 {{\n"),
            1 => format!("    let y = x.wrapping_mul({i}).rotate_left(7); // step {i}\n"),
            2 => "    if y % 3 == 0 {\n".to_string(),
            3 => format!("        return y ^ 0x{i:08x};\n"),
            4 => "    }\n".to_string(),
            5 => format!("    y.saturating_add({})\n", i * 31),
            _ => "}\n".to_string(),
        })
        .collect()
}

/// Median and fastest time of `FileDiff::new(old → new)` in milliseconds, and the diff's counts.
/// (The fastest run is the figure on a quiet machine; the median shows the load.)
fn measure(old: Option<&str>, new: &str, limits: DiffLimits) -> (f64, f64, String) {
    let mut stat = String::new();
    let mut fastest = f64::MAX;
    let t = median_of(RUNS, || {
        let t = timed(|| {
            let d = black_box(FileDiff::new("src/big.rs", old, new, limits));
            stat = format!(
                "{} in {} hunks (+{} hidden)",
                d.stat(),
                d.hunks.len(),
                d.hidden_hunks
            );
        });
        fastest = fastest.min(t.as_secs_f64() * 1e3);
        t
    });
    (t.as_secs_f64() * 1e3, fastest, stat)
}

pub fn diff() {
    let old = source();
    let one = old.replacen(
        "rotate_left(7); // step 2500",
        "rotate_left(9); // step 2500",
        1,
    );
    let mut scattered = old.clone();
    for i in (1..LINES).step_by(98) {
        scattered = scattered.replacen(
            &format!("// step {i}\n"),
            &format!("// step {i} (changed)\n"),
            1,
        );
    }
    let every_tenth: String = old
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i % 10 == 0 {
                format!("{l} // rewritten\n")
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    let cases: [(&str, Option<&str>, &str, DiffLimits); 5] = [
        ("one line edited", Some(&old), &one, DiffLimits::RESULT),
        (
            "50 scattered edits",
            Some(&old),
            &scattered,
            DiffLimits::RESULT,
        ),
        (
            "every 10th line (result cap)",
            Some(&old),
            &every_tenth,
            DiffLimits::RESULT,
        ),
        (
            "every 10th line (preview)",
            Some(&old),
            &every_tenth,
            DiffLimits::PREVIEW,
        ),
        ("new file", None, &old, DiffLimits::PREVIEW),
    ];
    for (what, before, after, limits) in cases {
        let (median, fastest, stat) = measure(before, after, limits);
        println!(
            "  {LINES}-line file, {what:<30} median {median:>6.2} ms, fastest {fastest:>6.2} ms   {stat}"
        );
    }
    println!("  goal: ≤ 5 ms");
}

/// `@` completion over a 100,000-file tree: the time to the first results from a cold start
/// (the walk still running), the whole walk, and a query on the complete index (goal: first
/// results ≤ 50 ms).
pub fn mentions() {
    use flower_tui::engine::files::FileIndex;
    use std::time::{Duration, Instant};

    const DIRS: usize = 1_000;
    const PER_DIR: usize = 100;
    let tmp = tempfile::tempdir().expect("a temp dir");
    let root = tmp.path();
    let made = Instant::now();
    for d in 0..DIRS {
        let dir = root.join(format!("crates/c{}/src/part{}", d / 10, d % 10));
        std::fs::create_dir_all(&dir).expect("a directory");
        for f in 0..PER_DIR {
            std::fs::write(dir.join(format!("module_{f}.rs")), b"").expect("a file");
        }
    }
    // An ignored build directory the index must skip.
    let ignored = root.join("target/debug");
    std::fs::create_dir_all(&ignored).expect("a directory");
    for f in 0..5_000 {
        std::fs::write(ignored.join(format!("dep{f}.o")), b"").expect("a file");
    }
    std::fs::write(root.join(".gitignore"), "target/\n").expect("a file");
    println!(
        "  tree: {} files in {DIRS} directories (+5,000 ignored), made in {:.1} s",
        DIRS * PER_DIR,
        made.elapsed().as_secs_f64()
    );

    let queries = ["", "module_42", "c42part3mod", "part7/module_9", "srcmod"];
    let mut firsts = Vec::new();
    let mut walks = Vec::new();
    for _ in 0..5 {
        let start = Instant::now();
        let index = FileIndex::start(root);
        let first = loop {
            if !index.query("module_42", 20).matches.is_empty() {
                break start.elapsed();
            }
            std::thread::sleep(Duration::from_micros(200));
        };
        while index.is_walking() {
            std::thread::sleep(Duration::from_micros(500));
        }
        firsts.push(first);
        walks.push(start.elapsed());
        let all = index.query("", 1);
        assert!(
            all.complete && all.indexed >= DIRS * PER_DIR,
            "{}",
            all.indexed
        );
    }
    firsts.sort_unstable();
    walks.sort_unstable();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "  cold start to the first results: median {:.1} ms (fastest {:.1} ms)",
        ms(firsts[firsts.len() / 2]),
        ms(firsts[0])
    );
    println!(
        "  whole walk: median {:.0} ms (fastest {:.0} ms)",
        ms(walks[walks.len() / 2]),
        ms(walks[0])
    );
    let index = FileIndex::start(root);
    while index.is_walking() {
        std::thread::sleep(Duration::from_millis(1));
    }
    for q in queries {
        let mut fastest = f64::MAX;
        let mut found = 0;
        let t = median_of(RUNS, || {
            let t = timed(|| found = black_box(index.query(q, 50)).matches.len());
            fastest = fastest.min(ms(t));
            t
        });
        println!(
            "  query {:<16} over the whole index: median {:.1} ms, fastest {fastest:.1} ms ({found} shown)",
            format!("{q:?}"),
            ms(t)
        );
    }
    println!("  goal: first results ≤ 50 ms");
}
