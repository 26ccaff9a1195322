//! A pure, incremental Server-Sent Events decoder (the WHATWG `text/event-stream` format).
//!
//! Bytes go in as they arrive from the network, in chunks of any size and split at any byte (even inside
//! a UTF-8 character); complete events come out. Lines may end in `\n`, `\r\n` or `\r`. Comment lines
//! (`:` first) and `id` / `retry` fields are ignored; several `data:` lines join with `\n`. As the format
//! requires, an event that is not closed by a blank line before the end of the stream is discarded — the
//! providers notice the missing terminal event and report a truncated stream.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    /// The `event:` field, when the server named the event.
    pub event: Option<String>,
    /// The `data:` lines, joined with `\n`.
    pub data: String,
}

/// Incremental decoder state. Feed it with [`SseDecoder::push`] or [`SseDecoder::push_into`].
#[derive(Debug, Default)]
pub struct SseDecoder {
    /// The start of a line whose end has not arrived yet.
    partial: Vec<u8>,
    /// The previous chunk ended in `\r`: a `\n` at the start of the next one belongs to that line end.
    skip_lf: bool,
    /// Whether the first bytes were seen (a leading UTF-8 BOM is dropped).
    started: bool,
    event: Option<String>,
    data: String,
    /// Whether any `data` field arrived for the event being built (an empty `data:` still counts).
    has_data: bool,
}

impl SseDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Decode `bytes` and return the events they completed.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        let mut out = Vec::new();
        self.push_into(bytes, &mut out);
        out
    }

    /// Decode `bytes`, appending the completed events to `out` (no allocation for the result list).
    pub fn push_into(&mut self, bytes: &[u8], out: &mut Vec<SseEvent>) {
        let mut bytes = bytes;
        if !self.started {
            // The BOM may itself be split across chunks: wait until three bytes are known.
            if self.partial.len() + bytes.len() < 3
                && b"\xEF\xBB\xBF".starts_with(&self.joined(bytes))
            {
                self.partial.extend_from_slice(bytes);
                return;
            }
            self.started = true;
            if !self.partial.is_empty() {
                let mut head = std::mem::take(&mut self.partial);
                head.extend_from_slice(bytes);
                let body = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&head);
                self.feed(body, out);
                return;
            }
            bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        }
        self.feed(bytes, out);
    }

    /// Whether bytes or fields of an unfinished event are buffered (the stream stopped mid-event).
    pub fn has_pending(&self) -> bool {
        !self.partial.is_empty() || self.has_data || self.event.is_some()
    }

    fn joined(&self, bytes: &[u8]) -> Vec<u8> {
        let mut v = self.partial.clone();
        v.extend_from_slice(bytes);
        v
    }

    fn feed(&mut self, mut bytes: &[u8], out: &mut Vec<SseEvent>) {
        if self.skip_lf && !bytes.is_empty() {
            self.skip_lf = false;
            if let Some(rest) = bytes.strip_prefix(b"\n") {
                bytes = rest;
            }
        }
        while let Some(i) = bytes.iter().position(|&b| b == b'\n' || b == b'\r') {
            let (line, rest) = bytes.split_at(i);
            if self.partial.is_empty() {
                self.line(line, out);
            } else {
                let mut whole = std::mem::take(&mut self.partial);
                whole.extend_from_slice(line);
                self.line(&whole, out);
                whole.clear();
                self.partial = whole;
            }
            // `rest` starts with the line end just found.
            let (was_cr, after) = match rest.split_first() {
                Some((end, after)) => (*end == b'\r', after),
                None => (false, rest),
            };
            bytes = after;
            if was_cr {
                match bytes.split_first() {
                    Some((b'\n', after)) => bytes = after,
                    None => self.skip_lf = true,
                    Some(_) => {}
                }
            }
        }
        self.partial.extend_from_slice(bytes);
    }

    /// Handle one complete line (without its line end).
    fn line(&mut self, line: &[u8], out: &mut Vec<SseEvent>) {
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line.starts_with(b":") {
            return;
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(c) => {
                let (field, colon_value) = line.split_at(c);
                let v = colon_value.get(1..).unwrap_or_default();
                (field, v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &[][..]),
        };
        match field {
            b"data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.has_data = true;
                push_utf8(&mut self.data, value);
            }
            b"event" => {
                let mut name = String::with_capacity(value.len());
                push_utf8(&mut name, value);
                self.event = Some(name);
            }
            // `id`, `retry` and unknown fields do not matter to a model stream.
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        let event = self.event.take();
        if !self.has_data {
            return;
        }
        self.has_data = false;
        out.push(SseEvent {
            event,
            data: std::mem::take(&mut self.data),
        });
    }
}

/// Append `bytes` as UTF-8, replacing invalid sequences with U+FFFD.
fn push_utf8(s: &mut String, bytes: &[u8]) {
    match std::str::from_utf8(bytes) {
        Ok(text) => s.push_str(text),
        Err(_) => s.push_str(&String::from_utf8_lossy(bytes)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ev(event: Option<&str>, data: &str) -> SseEvent {
        SseEvent {
            event: event.map(str::to_owned),
            data: data.to_owned(),
        }
    }

    fn decode_all(bytes: &[u8]) -> Vec<SseEvent> {
        SseDecoder::new().push(bytes)
    }

    #[test]
    fn line_endings_lf_crlf_cr() {
        let want = vec![ev(Some("a"), "1"), ev(None, "2")];
        assert_eq!(decode_all(b"event: a\ndata: 1\n\ndata: 2\n\n"), want);
        assert_eq!(
            decode_all(b"event: a\r\ndata: 1\r\n\r\ndata: 2\r\n\r\n"),
            want
        );
        assert_eq!(decode_all(b"event: a\rdata: 1\r\rdata: 2\r\r"), want);
        assert_eq!(decode_all(b"event: a\rdata: 1\r\n\ndata: 2\n\r\n"), want);
    }

    #[test]
    fn multi_line_data_comments_and_fields() {
        let got = decode_all(
            b": this is a comment\nretry: 100\nid: 7\nevent:x\ndata:first\ndata: second\ndata\n\n",
        );
        assert_eq!(got, vec![ev(Some("x"), "first\nsecond\n")]);
    }

    #[test]
    fn only_one_space_is_stripped_and_colons_in_values_stay() {
        let got = decode_all(b"data:  two spaces: {\"a\":1}\n\n");
        assert_eq!(got, vec![ev(None, " two spaces: {\"a\":1}")]);
    }

    #[test]
    fn event_without_data_is_not_dispatched_and_its_name_is_reset() {
        let got = decode_all(b"event: lonely\n\ndata: x\n\n");
        assert_eq!(got, vec![ev(None, "x")]);
    }

    #[test]
    fn empty_data_line_dispatches_an_empty_event() {
        assert_eq!(decode_all(b"data:\n\n"), vec![ev(None, "")]);
    }

    #[test]
    fn unterminated_event_is_discarded_but_reported_pending() {
        let mut d = SseDecoder::new();
        assert_eq!(d.push(b"data: done\n\ndata: half"), vec![ev(None, "done")]);
        assert!(d.has_pending());
        let mut d = SseDecoder::new();
        d.push(b"data: whole\n\n");
        assert!(!d.has_pending());
    }

    #[test]
    fn bom_is_dropped_even_when_split() {
        let mut d = SseDecoder::new();
        assert!(d.push(b"\xEF").is_empty());
        assert!(d.push(b"\xBB").is_empty());
        assert_eq!(d.push(b"\xBFdata: a\n\n"), vec![ev(None, "a")]);
        assert_eq!(decode_all(b"\xEF\xBB\xBFdata: b\n\n"), vec![ev(None, "b")]);
    }

    #[test]
    fn crlf_split_between_chunks_is_one_line_end() {
        let mut d = SseDecoder::new();
        assert!(d.push(b"data: a\r").is_empty());
        // A lone `\n` here completes the `\r\n` and must not count as a blank line.
        assert!(d.push(b"\n").is_empty());
        assert_eq!(d.push(b"\r\n"), vec![ev(None, "a")]);
    }

    #[test]
    fn utf8_split_inside_a_character() {
        let bytes = "data: héllo → 世界\n\n".as_bytes();
        for cut in 0..bytes.len() {
            let mut d = SseDecoder::new();
            let mut got = d.push(&bytes[..cut]);
            got.extend(d.push(&bytes[cut..]));
            assert_eq!(got, vec![ev(None, "héllo → 世界")], "cut at {cut}");
        }
    }

    #[test]
    fn invalid_utf8_is_replaced_not_fatal() {
        assert_eq!(
            decode_all(b"data: a\xFFb\n\n"),
            vec![ev(None, "a\u{FFFD}b")]
        );
    }

    fn sample() -> Vec<u8> {
        let mut s = Vec::new();
        s.extend_from_slice(b"event: message_start\r\ndata: {\"type\":\"message_start\"}\r\n\r\n");
        s.extend_from_slice(b": keep-alive\n\n");
        s.extend_from_slice(
            "event: content_block_delta\ndata: {\"text\":\"日本語 ✓\"}\n\n".as_bytes(),
        );
        s.extend_from_slice(b"data: line one\rdata: line two\r\r");
        s.extend_from_slice(b"event: ping\ndata: {\"type\": \"ping\"}\n\n");
        s
    }

    proptest! {
        #[test]
        fn any_chunking_gives_the_same_events(cuts in proptest::collection::vec(0usize..200, 0..12)) {
            let bytes = sample();
            let whole = decode_all(&bytes);
            prop_assert_eq!(whole.len(), 4);
            let mut points: Vec<usize> = cuts.into_iter().map(|c| c % (bytes.len() + 1)).collect();
            points.sort_unstable();
            let mut d = SseDecoder::new();
            let mut got = Vec::new();
            let mut at = 0;
            for p in points.into_iter().chain(std::iter::once(bytes.len())) {
                got.extend(d.push(&bytes[at..p]));
                at = p;
            }
            prop_assert_eq!(got, whole);
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400), cut in 0usize..400) {
            let cut = cut.min(bytes.len());
            let mut d = SseDecoder::new();
            let mut got = d.push(&bytes[..cut]);
            got.extend(d.push(&bytes[cut..]));
            prop_assert_eq!(got, decode_all(&bytes));
        }
    }
}
