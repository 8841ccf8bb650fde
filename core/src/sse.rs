//! A push parser for Server-Sent Events (the `text/event-stream` format).
//!
//! Bytes go in as they arrive ([`SseParser::feed`]); complete items come out
//! ([`SseParser::poll`]). Input that ends mid-line or mid-event is simply
//! kept until more arrives: "need more" is not an error. The A2A runtime ends
//! lines with CRLF and sends `: ping` comments; AG-UI servers use LF. Both are
//! handled, as are a lone CR, multi-line `data:` fields (joined with `\n`),
//! `event:` names and a UTF-8 character split across chunks.
//!
//! Rules follow the WHATWG event-stream interpretation, minus `retry:` (a
//! client concern) and with comments surfaced so that a host can treat a
//! keep-alive ping as liveness.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::string::String;

/// Default bound on one buffered line or event (16 MiB): a peer that never
/// ends a line must not make the parser grow without limit.
pub const DEFAULT_MAX_BUFFERED: usize = 16 * 1024 * 1024;

/// One complete item of an event stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SseItem {
    /// A dispatched event (a blank line ended it and it had data).
    Event(SseEvent),
    /// A comment line (`:` prefix), without the colon and one leading space.
    Comment(String),
}

/// One event: its type (`event:` field, `message` when absent), its data
/// lines joined with `\n`, and its `id:` when one was given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, or `message` (not allocated: nearly every
    /// event is one).
    pub event: Cow<'static, str>,
    /// Every `data:` line of the event, joined with `\n`.
    pub data: String,
    /// The `id:` field of this event, if any.
    pub id: Option<String>,
}

/// The stream broke a parser limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SseError {
    /// A line or an event grew past the configured bound.
    TooLarge,
}

impl core::fmt::Display for SseError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("event-stream line or event exceeds the size limit")
    }
}

impl std::error::Error for SseError {}

/// Incremental event-stream parser. Feed bytes, then poll items until `None`.
#[derive(Debug, Clone)]
pub struct SseParser {
    line: Vec<u8>,
    skip_lf: bool,
    at_start: bool,
    event: Option<String>,
    data: String,
    has_data: bool,
    id: Option<String>,
    ready: VecDeque<SseItem>,
    max_buffered: usize,
}

impl Default for SseParser {
    fn default() -> Self {
        SseParser::new()
    }
}

impl SseParser {
    /// A parser with the default size bound.
    pub fn new() -> Self {
        SseParser::with_limit(DEFAULT_MAX_BUFFERED)
    }

    /// A parser that refuses lines or events longer than `max_buffered` bytes.
    pub fn with_limit(max_buffered: usize) -> Self {
        SseParser {
            line: Vec::new(),
            skip_lf: false,
            at_start: true,
            event: None,
            data: String::new(),
            has_data: false,
            id: None,
            ready: VecDeque::new(),
            max_buffered,
        }
    }

    /// Feeds the next chunk of bytes, in any size, split anywhere.
    ///
    /// # Errors
    /// [`SseError::TooLarge`] when a line or event exceeds the bound; the
    /// parser should then be dropped with its stream.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<(), SseError> {
        let mut rest = chunk;
        while let Some(&first) = rest.first() {
            if self.skip_lf {
                self.skip_lf = false;
                if first == b'\n' {
                    rest = &rest[1..];
                    continue;
                }
            }
            match memchr::memchr2(b'\n', b'\r', rest) {
                Some(end) => {
                    self.skip_lf = rest[end] == b'\r';
                    let (line, after) = (&rest[..end], &rest[end + 1..]);
                    rest = after;
                    if self.line.is_empty() {
                        // The common case: the whole line is in this chunk.
                        self.check_size(line.len())?;
                        self.process_line(line);
                    } else {
                        self.line.extend_from_slice(line);
                        self.check_size(0)?;
                        let whole = core::mem::take(&mut self.line);
                        self.process_line(&whole);
                        // Keep the buffer for the next split line.
                        self.line = whole;
                        self.line.clear();
                    }
                    // The event's data grew by the line.
                    self.check_size(0)?;
                }
                None => {
                    self.line.extend_from_slice(rest);
                    rest = &[];
                    self.check_size(0)?;
                }
            }
        }
        Ok(())
    }

    /// The next complete item, or `None` when more input is needed.
    pub fn poll(&mut self) -> Option<SseItem> {
        let item = self.ready.pop_front();
        if self.ready.is_empty() {
            // A stream may then wait an hour: it keeps no empty queue.
            self.ready = VecDeque::new();
        }
        item
    }

    /// True when bytes of an unfinished line or event are buffered (useful
    /// to tell a clean end of stream from a truncated one).
    pub fn has_partial(&self) -> bool {
        !self.line.is_empty() || self.has_data || self.event.is_some()
    }

    /// Refuses buffered bytes (plus `extra` about to be) past the bound.
    fn check_size(&self, extra: usize) -> Result<(), SseError> {
        if self.line.len() + extra + self.data.len() > self.max_buffered {
            return Err(SseError::TooLarge);
        }
        Ok(())
    }

    fn process_line(&mut self, raw: &[u8]) {
        // Line breaks are ASCII, so a complete line never splits a UTF-8
        // sequence; lossy decoding only affects genuinely invalid bytes.
        // Borrowed unless invalid: no copy of the line on the hot path.
        let decoded = match core::str::from_utf8(raw) {
            Ok(text) => Cow::Borrowed(text),
            Err(_) => String::from_utf8_lossy(raw),
        };
        let mut text: &str = &decoded;
        if self.at_start {
            self.at_start = false;
            text = text.strip_prefix('\u{feff}').unwrap_or(text);
        }
        if text.is_empty() {
            self.dispatch();
            return;
        }
        if let Some(comment) = text.strip_prefix(':') {
            let comment = comment.strip_prefix(' ').unwrap_or(comment);
            self.ready.push_back(SseItem::Comment(comment.to_owned()));
            return;
        }
        let (field, value) = match text.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (text, ""),
        };
        match field {
            "event" => self.event = Some(value.to_owned()),
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "id" if !value.contains('\0') => self.id = Some(value.to_owned()),
            _ => {}
        }
    }

    fn dispatch(&mut self) {
        let event = self.event.take();
        let id = self.id.take();
        if !self.has_data {
            return;
        }
        self.has_data = false;
        let data = core::mem::take(&mut self.data);
        let event = match event {
            Some(name) if !name.is_empty() => Cow::Owned(name),
            _ => Cow::Borrowed("message"),
        };
        self.ready
            .push_back(SseItem::Event(SseEvent { event, data, id }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(p: &mut SseParser) -> Vec<SseItem> {
        core::iter::from_fn(|| p.poll()).collect()
    }

    fn data(s: &str) -> SseItem {
        SseItem::Event(SseEvent {
            event: "message".into(),
            data: s.into(),
            id: None,
        })
    }

    fn parse_all(input: &[u8]) -> Vec<SseItem> {
        let mut p = SseParser::new();
        p.feed(input).unwrap();
        drain(&mut p)
    }

    #[test]
    fn lf_framing() {
        assert_eq!(
            parse_all(b"data: {\"a\":1}\n\ndata: two\n\n"),
            vec![data("{\"a\":1}"), data("two")]
        );
    }

    #[test]
    fn crlf_framing_and_ping_comment() {
        let input = b": ping - 2026-12-02 09:52:18\r\n\r\ndata: {\"x\":true}\r\n\r\n";
        assert_eq!(
            parse_all(input),
            vec![
                SseItem::Comment("ping - 2026-12-02 09:52:18".into()),
                data("{\"x\":true}")
            ]
        );
    }

    #[test]
    fn lone_cr_is_a_line_break() {
        assert_eq!(
            parse_all(b"data: a\r\rdata: b\r\r"),
            vec![data("a"), data("b")]
        );
    }

    #[test]
    fn incomplete_input_needs_more() {
        let mut p = SseParser::new();
        p.feed(b"data: hal").unwrap();
        assert_eq!(p.poll(), None);
        assert!(p.has_partial());
        p.feed(b"f\n").unwrap();
        assert_eq!(p.poll(), None, "no blank line yet");
        p.feed(b"\n").unwrap();
        assert_eq!(p.poll(), Some(data("half")));
        assert!(!p.has_partial());
    }

    #[test]
    fn crlf_split_between_chunks_is_one_break() {
        let mut p = SseParser::new();
        p.feed(b"data: a\r").unwrap();
        p.feed(b"\n\r").unwrap();
        p.feed(b"\ndata: b\r\n\r\n").unwrap();
        assert_eq!(drain(&mut p), vec![data("a"), data("b")]);
    }

    #[test]
    fn every_split_point_gives_the_same_items() {
        let input =
            "event: error\r\ndata: {\"é\":\"日本\"}\r\n\r\n: hb\n\ndata: x\ndata: y\n\n".as_bytes();
        let whole = parse_all(input);
        assert_eq!(whole.len(), 3);
        for cut in 0..=input.len() {
            let mut p = SseParser::new();
            p.feed(&input[..cut]).unwrap();
            p.feed(&input[cut..]).unwrap();
            assert_eq!(drain(&mut p), whole, "split at {cut}");
        }
        // Byte at a time, which splits every multi-byte character.
        let mut p = SseParser::new();
        for b in input {
            p.feed(core::slice::from_ref(b)).unwrap();
        }
        assert_eq!(drain(&mut p), whole);
    }

    #[test]
    fn multi_line_data_joined_with_lf() {
        assert_eq!(
            parse_all(b"data: a\ndata:b\ndata\n\n"),
            vec![data("a\nb\n")]
        );
    }

    #[test]
    fn event_field_and_id() {
        assert_eq!(
            parse_all(b"event: error\nid: 7\ndata: {\"error\":{}}\n\n"),
            vec![SseItem::Event(SseEvent {
                event: "error".into(),
                data: "{\"error\":{}}".into(),
                id: Some("7".into()),
            })]
        );
    }

    #[test]
    fn event_without_data_is_not_dispatched_and_resets_type() {
        assert_eq!(
            parse_all(b"event: error\n\ndata: ok\n\n"),
            vec![data("ok")],
            "the event type must not leak into the next event"
        );
    }

    #[test]
    fn unknown_fields_and_retry_ignored_bom_stripped() {
        assert_eq!(
            parse_all("\u{feff}data: a\nretry: 10\nfoo: bar\n\n".as_bytes()),
            vec![data("a")]
        );
    }

    #[test]
    fn only_one_leading_space_removed() {
        assert_eq!(parse_all(b"data:  two\n\n"), vec![data(" two")]);
    }

    #[test]
    fn unterminated_event_at_end_is_kept_pending() {
        let mut p = SseParser::new();
        p.feed(b"data: cut").unwrap();
        assert_eq!(p.poll(), None);
        assert!(p.has_partial());
    }

    /// Random bytes (heavy in line breaks, colons and invalid UTF-8), cut
    /// at random points, give the same items as when fed whole, and never
    /// panic. Prints its seed.
    #[test]
    fn random_chunking_is_invisible() {
        let seed = 0x5ee_d5e1u64;
        println!("seed {seed:#x}");
        let mut state = seed;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        const ALPHABET: &[u8] = b"data:event:id: x\r\n\n\n:\xc3\xa9\xff";
        for _ in 0..300 {
            let len = (next() % 200) as usize;
            let input: Vec<u8> = (0..len)
                .map(|_| ALPHABET[(next() % ALPHABET.len() as u64) as usize])
                .collect();
            let whole = parse_all(&input);
            let mut p = SseParser::new();
            let mut rest = &input[..];
            while !rest.is_empty() {
                let cut = 1 + (next() as usize % rest.len());
                p.feed(&rest[..cut]).unwrap();
                rest = &rest[cut..];
            }
            assert_eq!(drain(&mut p), whole, "input {input:?}");
        }
    }

    #[test]
    fn size_limit() {
        let mut p = SseParser::with_limit(8);
        assert_eq!(p.feed(b"data: 0123456789"), Err(SseError::TooLarge));
        let mut p = SseParser::with_limit(8);
        assert_eq!(p.feed(b"data: 0123\ndata: 4567\n"), Err(SseError::TooLarge));
    }
}
