//! The retry loop and its wire watch against an in-process scripted provider (the HTTP providers are
//! tested against the loopback fake in `tests/suite/provider/`).

use std::collections::VecDeque;
use std::sync::Mutex;

use super::*;
use crate::engine::provider::BoxFuture;
use crate::engine::types::{Block, Message, ToolChoice};

#[test]
fn delays_grow_are_capped_and_jittered_within_bounds() {
    let p = RetryPolicy::default();
    for _ in 0..50 {
        let d2 = p.delay(2, None);
        assert!(
            d2 >= Duration::from_millis(500) && d2 <= Duration::from_secs(1),
            "{d2:?}"
        );
        let d4 = p.delay(4, None);
        assert!(
            d4 >= Duration::from_secs(2) && d4 <= Duration::from_secs(4),
            "{d4:?}"
        );
        let d20 = p.delay(20, None);
        assert!(
            d20 >= Duration::from_secs(15) && d20 <= Duration::from_secs(30),
            "{d20:?}"
        );
    }
    assert_eq!(
        p.delay(3, Some(Duration::from_secs(7))),
        Duration::from_secs(7)
    );
    assert_eq!(p.delay(3, Some(Duration::from_secs(600))), MAX_RETRY_AFTER);
    assert!(p.delay(u32::MAX, None) <= p.max_delay);
    assert_eq!(p.idle_timeout, Duration::from_secs(120));
    assert_eq!(p.silence_notice, Duration::from_secs(15));
}

/// One step of a scripted try.
#[derive(Clone)]
enum Step {
    /// Bytes that carry nothing to show (headers, a ping).
    Alive,
    Text(&'static str),
    Wait(Duration),
    Fail(ProviderError),
    Done,
}

/// A provider whose tries follow scripts, one per try; a try without a script never answers.
struct Scripted {
    tries: Mutex<VecDeque<Vec<Step>>>,
}

impl Scripted {
    fn new(tries: Vec<Vec<Step>>) -> Scripted {
        Scripted {
            tries: Mutex::new(tries.into()),
        }
    }

    fn left(&self) -> usize {
        self.tries.lock().map(|t| t.len()).unwrap_or(0)
    }
}

impl Provider for Scripted {
    fn name(&self) -> &str {
        "scripted"
    }

    fn endpoint(&self) -> String {
        String::new()
    }

    fn stream<'a>(
        &'a self,
        _req: &'a ModelRequest,
        sink: DeltaSink<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, ProviderError>> {
        let steps = self.tries.lock().ok().and_then(|mut t| t.pop_front());
        Box::pin(async move {
            let Some(steps) = steps else {
                std::future::pending::<()>().await;
                return Err(ProviderError::other("unreachable"));
            };
            let mut text = String::new();
            for s in steps {
                match s {
                    Step::Alive => sink(Delta::Alive),
                    Step::Text(t) => {
                        text.push_str(t);
                        sink(Delta::Alive);
                        sink(Delta::Text(t.to_owned()));
                    }
                    Step::Wait(d) => tokio::time::sleep(d).await,
                    Step::Fail(e) => return Err(e),
                    Step::Done => break,
                }
            }
            Ok(ModelResponse {
                content: vec![Block::text(text)],
                ..ModelResponse::default()
            })
        })
    }
}

fn req() -> ModelRequest {
    ModelRequest {
        model: "m".into(),
        system: String::new(),
        messages: vec![Message::user("hi")],
        tools: Vec::new(),
        tool_choice: ToolChoice::Auto,
        max_tokens: 10,
        effort: None,
    }
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn policy(idle: u64, notice: u64) -> RetryPolicy {
    RetryPolicy {
        max_tries: 5,
        base_delay: ms(1),
        max_delay: ms(2),
        idle_timeout: ms(idle),
        silence_notice: ms(notice),
    }
}

async fn drive(
    p: &Scripted,
    policy: RetryPolicy,
) -> (
    Result<ModelResponse, ProviderError>,
    String,
    Vec<StreamNotice>,
) {
    let mut text = String::new();
    let mut notices = Vec::new();
    let r = {
        let mut sink = |d: Delta| {
            if let Delta::Text(t) = d {
                text.push_str(&t);
            }
        };
        let mut on = |n: StreamNotice| notices.push(n);
        stream_with_retry(p, &req(), &mut sink, &policy, &mut on).await
    };
    (r, text, notices)
}

fn retries(notices: &[StreamNotice]) -> Vec<&RetryNotice> {
    notices
        .iter()
        .filter_map(|n| match n {
            StreamNotice::Retry(r) => Some(r),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_stream_broken_after_text_is_replayed_and_the_notice_says_so() {
    let p = Scripted::new(vec![
        vec![
            Step::Alive,
            Step::Text("half an "),
            Step::Fail(ProviderError::broken_stream(
                "stream ended before message_stop",
            )),
        ],
        vec![Step::Alive, Step::Text("whole answer"), Step::Done],
    ]);
    let (r, text, notices) = drive(&p, policy(5_000, 4_000)).await;
    assert_eq!(r.map(|r| r.text()).ok().as_deref(), Some("whole answer"));
    // The sink saw both tries; the notice between them told the caller to drop the first.
    assert_eq!(text, "half an whole answer");
    let r = retries(&notices);
    assert_eq!(r.len(), 1);
    assert!(r.iter().all(|n| n.discarded));
    assert_eq!(r[0].reason, "stream broken: ended before message_stop");
}

#[tokio::test]
async fn an_error_before_any_output_discards_nothing_and_the_last_error_is_returned() {
    let e = || {
        let mut e =
            ProviderError::new(crate::engine::provider::ErrorKind::Overloaded, "Overloaded");
        e.status = Some(529);
        e
    };
    let p = Scripted::new((0..5).map(|_| vec![Step::Fail(e())]).collect());
    let (r, _, notices) = drive(&p, policy(5_000, 4_000)).await;
    assert_eq!(
        r.map_err(|e| e.message).err().as_deref(),
        Some("Overloaded")
    );
    let r = retries(&notices);
    assert_eq!(
        r.iter().map(|n| n.attempt).collect::<Vec<_>>(),
        vec![2, 3, 4, 5]
    );
    assert!(r.iter().all(|n| !n.discarded));
    assert_eq!(r[0].reason, "overloaded: Overloaded (HTTP 529)");
    assert_eq!(p.left(), 0);
}

#[tokio::test]
async fn silence_before_the_headers_times_out_names_the_timeout_and_is_retried() {
    // The first try never answers; the second does.
    let p = Scripted::new(vec![
        vec![Step::Wait(Duration::from_secs(3600))],
        vec![Step::Alive, Step::Text("ok"), Step::Done],
    ]);
    let started = Instant::now();
    let (r, _, notices) = drive(&p, policy(150, 1_000)).await;
    assert_eq!(r.map(|r| r.text()).ok().as_deref(), Some("ok"));
    let elapsed = started.elapsed();
    assert!(elapsed >= ms(150) && elapsed < ms(1_150), "{elapsed:?}");
    let r = retries(&notices);
    assert_eq!(r.len(), 1);
    assert_eq!(
        r[0].reason,
        "network: no response from the provider within 0.15s (stream_idle_timeout)"
    );
    assert!(!r[0].discarded);
}

#[tokio::test]
async fn a_stall_between_events_is_a_broken_stream_and_pings_keep_it_alive() {
    let pings: Vec<Step> = std::iter::once(Step::Text("slow "))
        .chain((0..6).flat_map(|_| [Step::Wait(ms(60)), Step::Alive]))
        .chain([Step::Text("but alive"), Step::Done])
        .collect();
    let p = Scripted::new(vec![
        vec![
            Step::Alive,
            Step::Text("stalls"),
            Step::Wait(Duration::from_secs(3600)),
        ],
        pings,
    ]);
    // 360 ms of pings 60 ms apart never trip a 200 ms idle timeout.
    let (r, _, notices) = drive(&p, policy(200, 1_000)).await;
    assert_eq!(r.map(|r| r.text()).ok().as_deref(), Some("slow but alive"));
    let r = retries(&notices);
    assert_eq!(r.len(), 1, "{notices:?}");
    assert_eq!(
        r[0].reason,
        "stream broken: stalled: no data from the provider for 0.2s (stream_idle_timeout)"
    );
    assert!(r[0].discarded);
}

#[tokio::test]
async fn every_try_stalled_returns_the_timeout_error() {
    let p = Scripted::new(
        (0..3)
            .map(|_| vec![Step::Alive, Step::Wait(Duration::from_secs(3600))])
            .collect(),
    );
    let pol = RetryPolicy {
        max_tries: 3,
        ..policy(50, 1_000)
    };
    let (r, _, notices) = drive(&p, pol).await;
    let e = r.err();
    assert_eq!(
        e.as_ref()
            .map(|e| (e.to_string(), e.retryable, e.stream_broken)),
        Some((
            "network: stream stalled: no data from the provider for 0.05s (stream_idle_timeout)"
                .to_owned(),
            true,
            true
        ))
    );
    assert_eq!(retries(&notices).len(), 2);
}

#[tokio::test]
async fn a_long_silence_is_reported_once_and_its_end_too() {
    let p = Scripted::new(vec![vec![
        Step::Alive,
        Step::Text("a"),
        Step::Wait(ms(250)),
        Step::Text("b"),
        Step::Wait(ms(250)),
        Step::Text("c"),
        Step::Done,
    ]]);
    let (r, _, notices) = drive(&p, policy(1_000, 100)).await;
    assert_eq!(r.map(|r| r.text()).ok().as_deref(), Some("abc"));
    let kinds: Vec<&'static str> = notices
        .iter()
        .map(|n| match n {
            StreamNotice::Retry(_) => "retry",
            StreamNotice::Silent(_) => "silent",
            StreamNotice::Resumed => "resumed",
            StreamNotice::ImagesLeftOut { .. } => "images",
        })
        .collect();
    assert_eq!(kinds, ["silent", "resumed", "silent", "resumed"]);
    for n in &notices {
        if let StreamNotice::Silent(d) = n {
            assert!(*d >= ms(100) && *d < ms(250), "{d:?}");
        }
    }
}

#[tokio::test]
async fn a_silence_that_ends_in_a_timeout_is_closed_before_the_retry() {
    let p = Scripted::new(vec![
        vec![Step::Alive, Step::Wait(Duration::from_secs(3600))],
        vec![Step::Alive, Step::Text("ok"), Step::Done],
    ]);
    let (_, _, notices) = drive(&p, policy(200, 50)).await;
    let kinds: Vec<&'static str> = notices
        .iter()
        .map(|n| match n {
            StreamNotice::Retry(_) => "retry",
            StreamNotice::Silent(_) => "silent",
            StreamNotice::Resumed => "resumed",
            StreamNotice::ImagesLeftOut { .. } => "images",
        })
        .collect();
    assert_eq!(kinds, ["silent", "resumed", "retry"]);
}

#[test]
fn short_timeouts_are_written_with_a_decimal() {
    assert_eq!(fmt_secs(Duration::from_secs(120)), "120s");
    assert_eq!(fmt_secs(ms(300)), "0.3s");
    assert_eq!(fmt_secs(ms(1_500)), "1.5s");
    assert_eq!(fmt_secs(ms(150)), "0.15s");
}
