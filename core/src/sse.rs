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

/// A split line's buffer larger than this is let go once the line is read.
const KEPT_LINE_CAPACITY: usize = 64 * 1024;

/// The UTF-8 byte order mark, dropped from the start of a stream.
const BOM: &[u8] = "\u{feff}".as_bytes();

/// `bytes` as text, invalid sequences replaced.
fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

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
    /// The unfinished line, unless it is a `data` line (see `in_data`).
    line: Vec<u8>,
    /// The unfinished line is a `data` line whose field name has been
    /// read: the rest of its value goes straight into `data`, so a large
    /// event is held once, not once as a line and again as data. Holds
    /// what the line's `data:` (and space) count against the bound, so
    /// that it is reached as if the line were buffered: their length, less
    /// the `\n` that joined the line to the data before it.
    in_data: Option<usize>,
    skip_lf: bool,
    at_start: bool,
    event: Option<String>,
    /// The event's data lines, joined with `\n`; decoded at dispatch.
    data: Vec<u8>,
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
            in_data: None,
            skip_lf: false,
            at_start: true,
            event: None,
            data: Vec::new(),
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
                    if self.in_data.is_some() {
                        // The end of a data line begun in earlier chunks.
                        self.check_size(line.len())?;
                        self.in_data = None;
                        self.data.extend_from_slice(line);
                    } else if self.line.is_empty() {
                        // The common case: the whole line is in this chunk.
                        self.check_size(line.len())?;
                        self.process_line(line);
                    } else {
                        self.line.extend_from_slice(line);
                        self.check_size(0)?;
                        let whole = core::mem::take(&mut self.line);
                        self.process_line(&whole);
                        // Keep the buffer for the next split line, unless
                        // a long line made it large.
                        if whole.capacity() <= KEPT_LINE_CAPACITY {
                            self.line = whole;
                            self.line.clear();
                        }
                    }
                    // The event's data grew by the line.
                    self.check_size(0)?;
                }
                None => {
                    self.check_size(rest.len())?;
                    if self.in_data.is_some() {
                        self.data.extend_from_slice(rest);
                    } else {
                        self.line.extend_from_slice(rest);
                        self.begin_data_line();
                    }
                    rest = &[];
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
        let line = self.line.len() + self.in_data.unwrap_or(0);
        if line + extra + self.data.len() > self.max_buffered {
            return Err(SseError::TooLarge);
        }
        Ok(())
    }

    /// Moves the value of an unfinished `data` line from `line` into
    /// `data` once its field name and the space after the colon (or its
    /// absence) are known; the line's later bytes then go there directly.
    fn begin_data_line(&mut self) {
        if self.at_start {
            // The first line may start with a byte order mark: it takes
            // the general path.
            return;
        }
        // A look at the line's start only: a long line that is not data
        // must not be searched again with every piece of it.
        const FIELD: &[u8] = b"data:";
        if self.line.len() <= FIELD.len() || !self.line.starts_with(FIELD) {
            return;
        }
        let prefix = FIELD.len() + usize::from(self.line[FIELD.len()] == b' ');
        let joined = usize::from(self.has_data);
        self.add_data_line();
        self.data.extend_from_slice(&self.line[prefix..]);
        self.line.clear();
        self.in_data = Some(prefix - joined);
    }

    /// Starts one more data line of the event.
    fn add_data_line(&mut self) {
        if self.has_data {
            self.data.push(b'\n');
        }
        self.has_data = true;
    }

    fn process_line(&mut self, raw: &[u8]) {
        let mut line = raw;
        if self.at_start {
            self.at_start = false;
            line = line.strip_prefix(BOM).unwrap_or(line);
        }
        if line.is_empty() {
            self.dispatch();
            return;
        }
        if let Some(comment) = line.strip_prefix(b":") {
            let comment = comment.strip_prefix(b" ").unwrap_or(comment);
            self.ready.push_back(SseItem::Comment(lossy(comment)));
            return;
        }
        // Line breaks, colons and spaces are ASCII: they are never part of
        // a UTF-8 sequence, so the line splits the same as bytes or text.
        let (field, value) = match memchr::memchr(b':', line) {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"event" => self.event = Some(lossy(value)),
            b"data" => {
                self.add_data_line();
                self.data.extend_from_slice(value);
            }
            b"id" if !value.contains(&0) => self.id = Some(lossy(value)),
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
        // Invalid UTF-8 is replaced as it would be line by line: a line
        // break ends any sequence it cuts.
        let data = match String::from_utf8(core::mem::take(&mut self.data)) {
            Ok(text) => text,
            Err(invalid) => lossy(invalid.as_bytes()),
        };
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

    /// Random streams (pieces of field names, line breaks, colons and
    /// invalid UTF-8), cut at random points, give the same items as when
    /// fed whole, and never panic. Prints its seed.
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
        const PIECES: &[&[u8]] = &[
            b"data:",
            b"data: ",
            b"data",
            b"event:",
            b"id: ",
            b"x",
            b" ",
            b"\r",
            b"\n",
            b"\n\n",
            b":",
            b"\xc3",
            b"\xa9",
            b"\xff",
            b"\xe6\x97",
            b"\xa5",
            b"\0",
        ];
        let mut cut_in_data = 0;
        for _ in 0..3000 {
            let input: Vec<u8> = (0..next() % 60)
                .flat_map(|_| PIECES[(next() % PIECES.len() as u64) as usize])
                .copied()
                .collect();
            let whole = parse_all(&input);
            let mut p = SseParser::new();
            let mut rest = &input[..];
            while !rest.is_empty() {
                let cut = 1 + (next() as usize % rest.len());
                p.feed(&rest[..cut]).unwrap();
                cut_in_data += usize::from(p.in_data.is_some());
                rest = &rest[cut..];
            }
            assert_eq!(drain(&mut p), whole, "input {input:?}");
        }
        assert!(cut_in_data > 100, "cuts inside data lines: {cut_in_data}");
    }

    #[test]
    fn a_data_line_in_many_chunks_is_held_once() {
        let value = "0123456789abcdef".repeat(64 * 1024);
        let input = format!("data: a\ndata: {value}\n\n");
        let mut p = SseParser::new();
        for chunk in input.as_bytes().chunks(4096) {
            p.feed(chunk).unwrap();
            assert!(p.line.capacity() <= 4096, "{}", p.line.capacity());
        }
        assert_eq!(drain(&mut p), vec![data(&format!("a\n{value}"))]);
    }

    #[test]
    fn a_long_split_line_gives_its_buffer_back() {
        let mut p = SseParser::new();
        let comment = "c".repeat(1 << 20);
        p.feed(format!(": {comment}").as_bytes()).unwrap();
        p.feed(b"\n").unwrap();
        assert_eq!(drain(&mut p), vec![SseItem::Comment(comment)]);
        assert!(p.line.capacity() <= KEPT_LINE_CAPACITY);
    }

    #[test]
    fn size_limit() {
        let mut p = SseParser::with_limit(8);
        assert_eq!(p.feed(b"data: 0123456789"), Err(SseError::TooLarge));
        let mut p = SseParser::with_limit(8);
        assert_eq!(p.feed(b"data: 0123\ndata: 4567\n"), Err(SseError::TooLarge));
        // A data line read in pieces counts as if it were whole: its
        // `data: ` too.
        let mut p = SseParser::with_limit(8);
        p.feed(b"\ndata: 01").unwrap();
        assert_eq!(p.feed(b"2"), Err(SseError::TooLarge));
        let mut p = SseParser::with_limit(8);
        p.feed(b"\ndata: 01").unwrap();
        p.feed(b"\n\n").unwrap();
        assert_eq!(drain(&mut p), vec![data("01")]);
    }
}
