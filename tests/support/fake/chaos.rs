//! The fake server's seeded chaos mode: each scripted stream reply may be answered by a fault
//! instead — a status storm (429/503/529, with or without `retry-after`), a stream truncated after N
//! events, a malformed event, a dropped or reset connection, a stall of a given length — while the
//! reply itself stays queued for the retry. The same seed gives the same faults for the same requests,
//! so a test can run many turns under faults and compare the final text and transcript exactly.
//!
//! ```ignore
//! server.set_chaos(Chaos::combined(7, 0.4).stall_for(Duration::from_millis(300)));
//! ```

use std::time::Duration;

use super::Reply;

/// The kinds of fault, in the order their probabilities are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FaultKind {
    Status,
    Truncate,
    Malformed,
    Drop,
    Stall,
}

impl FaultKind {
    pub const ALL: [FaultKind; 5] = [
        FaultKind::Status,
        FaultKind::Truncate,
        FaultKind::Malformed,
        FaultKind::Drop,
        FaultKind::Stall,
    ];
}

/// One injected fault, with its details.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// An error status with the provider's JSON body; `retry_after`: a `retry-after` (Anthropic
    /// style, whole seconds) or `retry-after-ms` (OpenAI style) header came with it.
    Status { status: u16, retry_after: bool },
    /// The first `after` events, then the body ends cleanly without the terminal event.
    Truncate { after: usize },
    /// The first `after` events, then event `after` with its JSON cut in half, then the rest.
    Malformed { after: usize },
    /// The first `after` events and half of the next, then the connection closes (`reset`: with a
    /// TCP reset instead of a clean close).
    Drop { after: usize, reset: bool },
    /// `after` events (`None`: not even the response headers), a silence of `pause`, then the
    /// connection closes without finishing the body.
    Stall {
        after: Option<usize>,
        pause: Duration,
    },
}

impl Fault {
    pub fn kind(&self) -> FaultKind {
        match self {
            Fault::Status { .. } => FaultKind::Status,
            Fault::Truncate { .. } => FaultKind::Truncate,
            Fault::Malformed { .. } => FaultKind::Malformed,
            Fault::Drop { .. } => FaultKind::Drop,
            Fault::Stall { .. } => FaultKind::Stall,
        }
    }
}

/// The chaos settings: a probability per fault kind (their sum at most 1) for each scripted stream
/// reply, drawn from a seeded generator.
#[derive(Debug, Clone, PartialEq)]
pub struct Chaos {
    pub seed: u64,
    pub status: f64,
    pub truncate: f64,
    pub malformed: f64,
    pub drop: f64,
    pub stall: f64,
    /// The share of status faults that carry a `retry-after` header.
    pub retry_after: f64,
    /// How long a stall lasts before the connection closes.
    pub stall_for: Duration,
    /// At most this many faulted requests in a row (then one passes).
    pub max_in_a_row: Option<u32>,
    /// At most this many faults in all.
    pub max_faults: Option<usize>,
}

impl Chaos {
    /// No faults yet: add them with [`Chaos::with`].
    pub fn seeded(seed: u64) -> Chaos {
        Chaos {
            seed,
            status: 0.0,
            truncate: 0.0,
            malformed: 0.0,
            drop: 0.0,
            stall: 0.0,
            retry_after: 0.5,
            stall_for: Duration::from_millis(300),
            max_in_a_row: None,
            max_faults: None,
        }
    }

    /// Every kind at once, `rate` in all (each kind gets a fifth).
    pub fn combined(seed: u64, rate: f64) -> Chaos {
        FaultKind::ALL
            .iter()
            .fold(Chaos::seeded(seed), |c, k| c.with(*k, rate / 5.0))
    }

    /// One kind on every request, `n` times in all.
    pub fn only(seed: u64, kind: FaultKind, n: usize) -> Chaos {
        Chaos::seeded(seed).with(kind, 1.0).max_faults(n)
    }

    /// The probability of `kind`.
    pub fn with(mut self, kind: FaultKind, p: f64) -> Chaos {
        let slot = match kind {
            FaultKind::Status => &mut self.status,
            FaultKind::Truncate => &mut self.truncate,
            FaultKind::Malformed => &mut self.malformed,
            FaultKind::Drop => &mut self.drop,
            FaultKind::Stall => &mut self.stall,
        };
        *slot = p;
        self
    }

    pub fn stall_for(mut self, d: Duration) -> Chaos {
        self.stall_for = d;
        self
    }

    pub fn retry_after(mut self, share: f64) -> Chaos {
        self.retry_after = share;
        self
    }

    pub fn max_in_a_row(mut self, n: u32) -> Chaos {
        self.max_in_a_row = Some(n);
        self
    }

    pub fn max_faults(mut self, n: usize) -> Chaos {
        self.max_faults = Some(n);
        self
    }

    fn p(&self, kind: FaultKind) -> f64 {
        match kind {
            FaultKind::Status => self.status,
            FaultKind::Truncate => self.truncate,
            FaultKind::Malformed => self.malformed,
            FaultKind::Drop => self.drop,
            FaultKind::Stall => self.stall,
        }
    }
}

/// Which wire protocol a request speaks (the fault bodies follow it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    Anthropic,
    OpenAi,
}

impl Protocol {
    pub fn of_path(path: &str) -> Protocol {
        if path.ends_with("/chat/completions") {
            Protocol::OpenAi
        } else {
            Protocol::Anthropic
        }
    }
}

/// splitmix64: small, fast, and the same everywhere.
#[derive(Debug, Clone)]
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in [0, n) (0 when n is 0).
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

/// The chaos mode's running state inside the server.
#[derive(Debug, Clone)]
pub struct Dice {
    cfg: Chaos,
    rng: Rng,
    in_a_row: u32,
    injected: usize,
}

/// The events of an SSE body, each with its closing blank line.
pub fn split_events(body: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut rest = body;
    while !rest.is_empty() {
        match rest.windows(2).position(|w| w == b"\n\n") {
            Some(i) => {
                out.push(rest[..i + 2].to_vec());
                rest = &rest[i + 2..];
            }
            None => {
                out.push(rest.to_vec());
                break;
            }
        }
    }
    out
}

/// The index of the event that completes a response (`message_stop`; OpenAI's first
/// `finish_reason` or `[DONE]`), or the number of events when there is none.
pub fn terminal_index(events: &[Vec<u8>], protocol: Protocol) -> usize {
    let has = |e: &[u8], needle: &str| e.windows(needle.len()).any(|w| w == needle.as_bytes());
    events
        .iter()
        .position(|e| match protocol {
            Protocol::Anthropic => has(e, "\"type\":\"message_stop\""),
            Protocol::OpenAi => has(e, "\"finish_reason\":\"") || has(e, "data: [DONE]"),
        })
        .unwrap_or(events.len())
}

/// The error body a provider sends with `status` (a 503 at Anthropic comes from a proxy in front
/// of it, as an HTML page).
fn status_body(status: u16, protocol: Protocol) -> String {
    match (protocol, status) {
        (Protocol::Anthropic, 503) => "<html>\r\n<head><title>503 Service Temporarily Unavailable</title></head>\r\n<body>\r\n<center><h1>503 Service Temporarily Unavailable</h1></center>\r\n</body>\r\n</html>\r\n".to_owned(),
        (Protocol::Anthropic, 429) => super::anthropic::error_json(
            "rate_limit_error",
            "Number of request tokens has exceeded your per-minute rate limit",
        ),
        (Protocol::Anthropic, 529) => super::anthropic::error_json("overloaded_error", "Overloaded"),
        (Protocol::Anthropic, _) => {
            super::anthropic::error_json("api_error", "Internal server error")
        }
        (Protocol::OpenAi, 429) => super::openai::error_json(
            "Rate limit reached for gpt-4o-mini in organization org-test on requests per min (RPM): Limit 500, Used 500, Requested 1. Please try again in 120ms.",
            "requests",
            Some("rate_limit_exceeded"),
        ),
        (Protocol::OpenAi, 503) => super::openai::error_json(
            "The server is overloaded or not ready yet.",
            "server_error",
            None,
        ),
        (Protocol::OpenAi, _) => super::openai::error_json(
            "The server had an error while processing your request. Sorry about that!",
            "server_error",
            None,
        ),
    }
}

/// An event with its data cut in the middle of the JSON (the line and the event still end).
fn garble(event: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(event);
    let mut out = String::new();
    for line in text.lines() {
        if let Some(data) = line.strip_prefix("data: ") {
            let cut: String = data.chars().take(data.chars().count() / 2).collect();
            out.push_str("data: ");
            out.push_str(&cut);
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out.push('\n');
    out.into_bytes()
}

impl Dice {
    pub fn new(cfg: Chaos) -> Dice {
        let rng = Rng(cfg.seed);
        Dice {
            cfg,
            rng,
            in_a_row: 0,
            injected: 0,
        }
    }

    /// Faults injected so far.
    pub fn injected(&self) -> usize {
        self.injected
    }

    /// Roll for one scripted stream reply: the fault and the reply that delivers it, or `None` to
    /// send the reply as scripted.
    pub fn roll(&mut self, reply: &Reply, protocol: Protocol) -> Option<(Fault, Reply)> {
        if !matches!(reply, Reply::Sse { .. }) {
            return None;
        }
        // The dice are thrown for every request, so a limit does not shift later faults.
        let r = self.rng.unit();
        let detail = self.rng.next();
        let capped = self.cfg.max_faults.is_some_and(|m| self.injected >= m)
            || self.cfg.max_in_a_row.is_some_and(|m| self.in_a_row >= m);
        let mut acc = 0.0;
        let kind = FaultKind::ALL.into_iter().find(|k| {
            acc += self.cfg.p(*k);
            r < acc
        });
        let Some(kind) = kind.filter(|_| !capped) else {
            self.in_a_row = 0;
            return None;
        };
        let events = split_events(&reply.body_bytes());
        let term = terminal_index(&events, protocol);
        let mut rng = Rng(detail);
        let fault = match kind {
            FaultKind::Status => {
                let statuses: &[u16] = match protocol {
                    Protocol::Anthropic => &[429, 503, 529],
                    Protocol::OpenAi => &[429, 500, 503],
                };
                Fault::Status {
                    status: statuses[rng.below(statuses.len())],
                    retry_after: rng.unit() < self.cfg.retry_after,
                }
            }
            FaultKind::Truncate => Fault::Truncate {
                after: rng.below(term.max(1)),
            },
            FaultKind::Malformed => Fault::Malformed {
                after: rng.below(term.max(1)),
            },
            FaultKind::Drop => Fault::Drop {
                after: rng.below(term.max(1)),
                reset: rng.unit() < 0.5,
            },
            FaultKind::Stall => Fault::Stall {
                after: (rng.unit() >= 0.25).then(|| rng.below(term.max(1))),
                pause: self.cfg.stall_for,
            },
        };
        self.injected += 1;
        self.in_a_row += 1;
        let out = deliver(&fault, &events, protocol);
        Some((fault, out))
    }
}

/// The reply that carries `fault` for a response made of `events`.
pub fn deliver(fault: &Fault, events: &[Vec<u8>], protocol: Protocol) -> Reply {
    let head = |n: usize| events.iter().take(n).cloned().collect::<Vec<_>>();
    match fault {
        Fault::Status {
            status,
            retry_after,
        } => {
            let r = Reply::status(*status, status_body(*status, protocol));
            match (retry_after, protocol) {
                (false, _) => r,
                (true, Protocol::Anthropic) => r.with_header("retry-after", "0"),
                (true, Protocol::OpenAi) => r.with_header("retry-after-ms", "20"),
            }
        }
        Fault::Truncate { after } => Reply::Sse {
            chunks: head(*after),
            delay: None,
        },
        Fault::Malformed { after } => {
            let mut chunks = head(*after);
            let bad = events
                .get(*after)
                .map(|e| garble(e))
                .unwrap_or_else(|| b"data: {\"type\":\n\n".to_vec());
            chunks.push(bad);
            chunks.extend(events.iter().skip(after + 1).cloned());
            Reply::Sse {
                chunks,
                delay: None,
            }
        }
        Fault::Drop { after, reset } => {
            let mut bytes = head(*after).concat();
            if let Some(next) = events.get(*after) {
                bytes.extend_from_slice(&next[..next.len() / 2]);
            }
            if *reset {
                Reply::Reset { bytes }
            } else {
                Reply::Cut { bytes }
            }
        }
        Fault::Stall { after, pause } => Reply::Pause {
            head: after.map(|n| head(n).concat()),
            pause: *pause,
        },
    }
}
