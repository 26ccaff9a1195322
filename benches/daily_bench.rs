//! Issue 10's figures: the diff of a 5,000-line file (goal ≤ 5 ms).

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
