//! `/jobs`: the list overlay (rows, the chosen one, a stop and a note), a job's output in place
//! of the list, its keys, the refresh while it is open, Esc that never touches a job, and
//! `/jobs N` / `/jobs stop N` as before.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossterm::event::KeyCode;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use crate::engine::jobs::{JobInfo, JobState};
use crate::engine::protocol::{Event, JobsOp, Op};

use super::jobs_overlay::draw;
use super::keymap::{Context, hints};
use super::render::theme::Theme;
use super::state::AppState;
use super::test_support::{ev, key, last_cell, ops, state, type_text};
use super::update::update;

/// The clock the snapshots are drawn at.
const NOW: u64 = 1_796_124_120;

fn job(id: u32, command: &str, state: JobState, ago: u64, bytes: u64) -> JobInfo {
    JobInfo {
        id,
        command: command.into(),
        state,
        started_unix: NOW - ago,
        ended_unix: (!state.is_running()).then_some(NOW - 1),
        bytes,
        lines: bytes / 40,
        url: None,
        ports: Vec::new(),
        log: PathBuf::from(format!("/r/jobs/{id}.log")),
        last_lines: Vec::new(),
    }
}

fn jobs() -> Vec<JobInfo> {
    let mut dev = job(1, "npm run dev", JobState::Running, 125, 3_500_000);
    dev.url = Some("http://localhost:5173/".into());
    vec![
        dev,
        job(
            2,
            "cargo test --workspace 2>&1 | tee test.log",
            JobState::Exited { code: 101 },
            48,
            80_000,
        ),
        job(3, "python -m http.server 8000", JobState::Running, 7, 512),
        job(4, "tail -f /var/log/app.log", JobState::Gone, 4_000, 0),
    ]
}

/// The overlay alone, drawn at [`NOW`].
fn overlay(s: &AppState, w: u16, h: u16) -> Terminal<TestBackend> {
    let theme = Theme::builtin("dark").expect("built-in theme");
    let mut t = Terminal::new(TestBackend::new(w, h)).expect("test terminal");
    t.draw(|f| {
        let area = f.area();
        draw(&s.jobs, area, f.buffer_mut(), &theme, NOW);
    })
    .expect("draw");
    t
}

/// A state with `/jobs` open and the engine's list in it.
fn opened(t0: Instant) -> AppState {
    let mut s = state();
    update(&mut s, ev(Event::Jobs { jobs: jobs() }), t0);
    type_text(&mut s, "/jobs", t0);
    let fx = update(&mut s, key(KeyCode::Enter), t0);
    assert_eq!(ops(&fx), [Op::Jobs(JobsOp::List)]);
    assert!(s.jobs.is_open());
    s
}

#[test]
fn the_list_shows_each_job_and_its_keys_choose_stop_and_close() {
    let t0 = Instant::now();
    let mut s = opened(t0);
    insta::assert_snapshot!("jobs_list", overlay(&s, 100, 12).backend());
    assert_eq!(s.contexts(t0), [Context::Jobs, Context::Global]);
    let footer: Vec<String> = hints(&s.contexts(t0))
        .into_iter()
        .map(|h| format!("{} {}", h.keys, h.text))
        .collect();
    assert_eq!(
        footer.get(..3).unwrap_or_default(),
        ["enter/o output", "s/delete stop", "esc close"]
    );
    // The first job runs: s stops it, and it shows as stopping until the engine lists it ended.
    let fx = update(&mut s, key(KeyCode::Char('s')), t0);
    assert_eq!(ops(&fx), [Op::Jobs(JobsOp::Stop { id: 1 })]);
    let again = update(&mut s, key(KeyCode::Char('s')), t0);
    assert!(ops(&again).is_empty(), "asked once");
    // Down to the ended job: Delete does nothing but say why.
    update(&mut s, key(KeyCode::Down), t0);
    let fx = update(&mut s, key(KeyCode::Delete), t0);
    assert!(ops(&fx).is_empty());
    insta::assert_snapshot!("jobs_stopping_and_a_note", overlay(&s, 100, 12).backend());
    // The engine lists the stop done.
    let mut now = jobs();
    now[0].state = JobState::Stopped;
    update(&mut s, ev(Event::Jobs { jobs: now }), t0);
    let shown = s.jobs.overlay().expect("open");
    assert!(shown.stopping.is_empty(), "{shown:?}");
    // Up wraps round; the keys typed while it is open never reach the input.
    update(&mut s, key(KeyCode::Up), t0);
    update(&mut s, key(KeyCode::Up), t0);
    assert_eq!(s.jobs.overlay().map(|o| o.selected), Some(3));
    type_text(&mut s, "xyz", t0);
    assert!(s.input.is_empty());
    // Esc closes the list and touches nothing else: no abort, no stop.
    let fx = update(&mut s, key(KeyCode::Esc), t0);
    assert!(ops(&fx).is_empty(), "{:?}", ops(&fx));
    assert!(!s.jobs.is_open());
}

#[test]
fn enter_shows_a_jobs_output_in_place_of_the_list_and_keeps_it_fresh() {
    let t0 = Instant::now();
    let mut s = opened(t0);
    let fx = update(&mut s, key(KeyCode::Enter), t0);
    assert_eq!(ops(&fx), [Op::Jobs(JobsOp::Output { id: 1 })]);
    let text: String = (1..=30)
        .map(|i| format!("GET /assets/chunk-{i}.js 200\n"))
        .collect();
    update(
        &mut s,
        ev(Event::JobOutput {
            id: 1,
            text: text.trim_end().to_string(),
        }),
        t0,
    );
    insta::assert_snapshot!("jobs_output", overlay(&s, 80, 12).backend());
    assert_eq!(
        s.chat.cells().len(),
        0,
        "the overlay's output stays out of the chat"
    );
    // Up scrolls back a line; Down returns to the end.
    update(&mut s, key(KeyCode::Up), t0);
    let out = s.jobs.overlay().and_then(|o| o.output.clone()).unwrap();
    assert_eq!(out.scroll, 1);
    update(&mut s, key(KeyCode::Down), t0);
    // While it is open the list and the running job's output are asked for every second.
    assert!(ops(&update(&mut s, super::msg::Msg::Tick, t0)).is_empty());
    let later = t0 + Duration::from_millis(1_100);
    assert_eq!(
        ops(&update(&mut s, super::msg::Msg::Tick, later)),
        [Op::Jobs(JobsOp::List), Op::Jobs(JobsOp::Output { id: 1 })]
    );
    // `s` in the output stops that job; Esc goes back to the list, then closes it.
    let fx = update(&mut s, key(KeyCode::Char('s')), later);
    assert_eq!(ops(&fx), [Op::Jobs(JobsOp::Stop { id: 1 })]);
    update(&mut s, key(KeyCode::Esc), later);
    assert!(s.jobs.is_open());
    assert!(s.jobs.overlay().is_some_and(|o| o.output.is_none()));
    update(&mut s, key(KeyCode::Esc), later);
    assert!(!s.jobs.is_open());
    let closed = later + Duration::from_secs(5);
    assert!(ops(&update(&mut s, super::msg::Msg::Tick, closed)).is_empty());
}

#[test]
fn an_empty_list_says_how_jobs_start_and_the_subcommands_still_work() {
    let t0 = Instant::now();
    let mut s = state();
    type_text(&mut s, "/jobs", t0);
    update(&mut s, key(KeyCode::Enter), t0);
    update(&mut s, ev(Event::Jobs { jobs: Vec::new() }), t0);
    insta::assert_snapshot!("jobs_empty", overlay(&s, 90, 8).backend());
    update(&mut s, key(KeyCode::Enter), t0); // nothing to show
    update(&mut s, key(KeyCode::Esc), t0);
    assert!(!s.jobs.is_open());
    type_text(&mut s, "/jobs 2", t0);
    let fx = update(&mut s, key(KeyCode::Enter), t0);
    assert_eq!(ops(&fx), [Op::Jobs(JobsOp::Output { id: 2 })]);
    update(
        &mut s,
        ev(Event::JobOutput {
            id: 2,
            text: "test result: FAILED".into(),
        }),
        t0,
    );
    let chat = format!("{:?}", last_cell(&s));
    assert!(chat.contains("job #2, last lines"), "{chat}");
    type_text(&mut s, "/jobs stop 3", t0);
    let fx = update(&mut s, key(KeyCode::Enter), t0);
    assert_eq!(ops(&fx), [Op::Jobs(JobsOp::Stop { id: 3 })]);
    assert!(!s.jobs.is_open());
}
