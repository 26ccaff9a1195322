//! A running command's output for the front end, while it runs: throttled (at most one piece every
//! [`INTERVAL`], so ≤ 20 events a second), bounded (a burst keeps its newest lines, and the whole
//! stream stops after [`TOTAL_CAP`] bytes with a note), and never showing a secret: text is
//! redacted before it leaves, complete lines go at once, and a line still being written is sent
//! up to its last whitespace only (a secret is one token: it cannot straddle whitespace, so every
//! secret in what is sent is whole there, and masked).
//!
//! Pure: time is passed in, so the throttle is tested without sleeping.

use std::time::Duration;

use tokio::time::Instant;

use crate::engine::secrets;

/// At most one piece of live output per interval.
pub(crate) const INTERVAL: Duration = Duration::from_millis(50);
/// A line without its newline waits this long before it is shown anyway (a progress bar).
pub(crate) const PARTIAL_AFTER: Duration = Duration::from_millis(250);
/// One piece holds at most this many bytes: a burst keeps its newest lines.
pub(crate) const PIECE_CAP: usize = 64 * 1024;
/// After this many bytes the live output stops (the result still has head and tail).
pub(crate) const TOTAL_CAP: usize = 4 * 1024 * 1024;

/// Output waiting to be shown.
#[derive(Debug, Default)]
pub(crate) struct LiveOutput {
    pending: Vec<u8>,
    /// Bytes dropped from `pending` by a burst (shown as a gap).
    skipped: usize,
    last_sent: Option<Instant>,
    /// When the oldest byte of an unfinished line arrived.
    partial_since: Option<Instant>,
    sent: usize,
    capped: bool,
    /// A burst was cut inside a token: the rest of that token is dropped too (it could be the end
    /// of a secret whose start was dropped).
    discarding: bool,
}

fn is_space(b: &u8) -> bool {
    b.is_ascii_whitespace()
}

impl LiveOutput {
    /// New bytes from the command.
    pub fn push(&mut self, data: &[u8], now: Instant) {
        if self.capped || data.is_empty() {
            return;
        }
        let mut data = data;
        if self.discarding {
            let Some(end) = data.iter().position(is_space) else {
                self.skipped += data.len();
                return;
            };
            self.skipped += end;
            data = data.get(end..).unwrap_or_default();
            self.discarding = false;
        }
        self.pending.extend_from_slice(data);
        if self.pending.last() != Some(&b'\n') {
            self.partial_since.get_or_insert(now);
        }
        if self.pending.len() > 2 * PIECE_CAP {
            // Keep the newest text: from a line start (else a whitespace) in the last PIECE_CAP
            // bytes.
            let keep_from = self.pending.len() - PIECE_CAP;
            let tail = self.pending.get(keep_from..).unwrap_or_default();
            let at = tail
                .iter()
                .position(|&b| b == b'\n')
                .or_else(|| tail.iter().position(is_space));
            match at {
                Some(i) => {
                    let cut = keep_from + i + 1;
                    self.skipped += cut;
                    self.pending.drain(..cut);
                }
                None => {
                    self.skipped += self.pending.len();
                    self.pending.clear();
                    self.discarding = true;
                }
            }
        }
    }

    /// When [`LiveOutput::take`] may next have something to send (None: nothing waits).
    pub fn next_due(&self) -> Option<Instant> {
        if self.capped || (self.pending.is_empty() && self.skipped == 0) {
            return None;
        }
        let throttle = self.last_sent.map(|t| t + INTERVAL);
        let complete = self.pending.contains(&b'\n') || self.skipped > 0;
        let when = if complete {
            throttle
        } else {
            let partial = self.partial_since.map(|t| t + PARTIAL_AFTER);
            match (throttle, partial) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            }
        };
        Some(when.unwrap_or_else(Instant::now))
    }

    /// The text to send now, if the throttle allows and there is something safe to show. `last`:
    /// the command is over, send everything left.
    pub fn take(&mut self, now: Instant, last: bool) -> Option<String> {
        if self.capped || (self.pending.is_empty() && self.skipped == 0) {
            return None;
        }
        if !last && self.last_sent.is_some_and(|t| now < t + INTERVAL) {
            return None;
        }
        let lines_end = self
            .pending
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let mut cut = lines_end;
        if last {
            cut = self.pending.len();
        } else if self.partial_since.is_some_and(|t| now >= t + PARTIAL_AFTER) {
            // A line still being written: shown up to its last whitespace.
            let partial = self.pending.get(lines_end..).unwrap_or_default();
            if let Some(i) = partial.iter().rposition(is_space) {
                cut = lines_end + i + 1;
            }
        }
        if cut == 0 && self.skipped == 0 {
            return None;
        }
        let raw: Vec<u8> = self.pending.drain(..cut).collect();
        if self.pending.is_empty() || self.pending.contains(&b'\n') {
            self.partial_since = None;
        } else if cut > lines_end {
            self.partial_since = Some(now);
        }
        let mut text = String::new();
        if self.skipped > 0 {
            text.push_str(&format!(
                "[… {} bytes of output not shown live …]\n",
                std::mem::take(&mut self.skipped)
            ));
        }
        text.push_str(&secrets::redact(&String::from_utf8_lossy(&raw)));
        self.last_sent = Some(now);
        self.sent += raw.len();
        if self.sent >= TOTAL_CAP {
            self.capped = true;
            self.pending.clear();
            text.push_str(&format!(
                "\n[live output stops after {} MiB; the result keeps the start and the end]\n",
                TOTAL_CAP / (1024 * 1024)
            ));
        }
        Some(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(t0: Instant, ms: u64) -> Instant {
        t0 + Duration::from_millis(ms)
    }

    #[test]
    fn lines_go_at_once_then_the_throttle_holds() {
        let t0 = Instant::now();
        let mut live = LiveOutput::default();
        live.push(b"one\ntwo\nthr", t0);
        assert_eq!(live.take(t0, false).as_deref(), Some("one\ntwo\n"));
        live.push(b"ee\nfour\n", at(t0, 10));
        assert_eq!(live.take(at(t0, 10), false), None, "throttled");
        assert_eq!(live.next_due(), Some(at(t0, 50)));
        assert_eq!(
            live.take(at(t0, 50), false).as_deref(),
            Some("three\nfour\n")
        );
        assert_eq!(live.take(at(t0, 200), false), None, "nothing left");
        assert_eq!(live.next_due(), None);
    }

    #[test]
    fn at_most_twenty_pieces_a_second() {
        let t0 = Instant::now();
        let mut live = LiveOutput::default();
        let mut pieces = 0;
        for ms in 0..1000 {
            live.push(b"x\n", at(t0, ms));
            if live.take(at(t0, ms), false).is_some() {
                pieces += 1;
            }
        }
        assert_eq!(pieces, 20);
    }

    #[test]
    fn a_partial_line_waits_then_shows_up_to_its_last_space() {
        let t0 = Instant::now();
        let mut live = LiveOutput::default();
        live.push(b"progress 10%", t0);
        assert_eq!(live.take(at(t0, 100), false), None);
        assert_eq!(live.next_due(), Some(at(t0, 250)));
        assert_eq!(live.take(at(t0, 250), false).as_deref(), Some("progress "));
        live.push("\rprogress 20% \u{e9}t\u{e9} ".as_bytes(), at(t0, 300));
        assert_eq!(
            live.take(at(t0, 600), false).as_deref(),
            Some("10%\rprogress 20% \u{e9}t\u{e9} ")
        );
        live.push(b"waiting", at(t0, 700));
        assert_eq!(live.take(at(t0, 2000), false), None, "a lone token waits");
        // The end of the command sends the rest.
        assert_eq!(live.take(at(t0, 2001), true).as_deref(), Some("waiting"));
    }

    #[test]
    fn secrets_are_masked_and_never_split() {
        let key = "sk-live-test-SECRET-abcdefghijklmnop";
        secrets::register(key);
        let t0 = Instant::now();
        let mut live = LiveOutput::default();
        let line = format!("key: {key} and more text that goes on");
        let (a, b) = line.split_at(12);
        live.push(a.as_bytes(), t0);
        // Only the beginning of the key has arrived: it is held back.
        assert_eq!(live.take(at(t0, 300), false).as_deref(), Some("key: "));
        live.push(b.as_bytes(), at(t0, 310));
        let mut all = String::from("key: ");
        all.push_str(&live.take(at(t0, 600), false).unwrap());
        all.push_str(&live.take(at(t0, 700), true).unwrap());
        assert!(!all.contains(key), "{all}");
        assert_eq!(all, "key: sk-l**** and more text that goes on");
    }

    #[test]
    fn a_burst_keeps_its_newest_lines_and_the_total_is_capped() {
        let t0 = Instant::now();
        let mut live = LiveOutput::default();
        let line = "0123456789abcdef\n".repeat(20_000);
        live.push(line.as_bytes(), t0);
        let piece = live.take(t0, false).unwrap();
        assert!(piece.starts_with("[… "), "{}", &piece[..40]);
        assert!(piece.len() <= 2 * PIECE_CAP + 100);
        assert!(piece.ends_with("0123456789abcdef\n"));
        let mut live = LiveOutput::default();
        let mut total = 0;
        let mut last = String::new();
        let kib: Vec<u8> = [b'y'; 1023].iter().chain(b"\n").copied().collect();
        for i in 0..10_000u64 {
            live.push(&kib, at(t0, i * 50));
            if let Some(t) = live.take(at(t0, i * 50), false) {
                total += t.len();
                last = t;
            }
        }
        assert!(total <= TOTAL_CAP + 2048, "{total}");
        assert!(
            last.contains("live output stops"),
            "{}",
            &last[last.len() - 100..]
        );
        assert_eq!(live.next_due(), None);
        // A burst inside one endless token drops the token, also what follows of it.
        let mut live = LiveOutput::default();
        live.push(&vec![b'z'; 3 * PIECE_CAP], t0);
        live.push(b"zzzz still the token", at(t0, 1));
        let shown = live.take(at(t0, 2), true).unwrap();
        assert!(shown.starts_with("[… "), "{shown}");
        assert!(
            shown.ends_with("] \nstill the token") || shown.ends_with(" still the token"),
            "{shown}"
        );
        assert!(!shown.contains("zz"), "{shown}");
    }
}
