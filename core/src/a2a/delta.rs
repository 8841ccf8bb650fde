//! A reader for the frame shape that nearly every frame of a run has: a
//! status update in the runtime's own member order, with at most one text
//! message (text deltas, the lifecycle frames, the turn's usage and its
//! `assistantFinal` with the whole answer).
//!
//! ```text
//! {"result":{"statusUpdate":{"taskId":…,"contextId":…,"status":{"state":…
//!   [,"message":{"messageId":…,"contextId":…,"taskId":…,"role":…,
//!                "parts":[{"text":…}]}] [,"timestamp":…]}
//!   [,"metadata":{…}]}},"id":…,"jsonrpc":…}
//! ```
//!
//! serde_json spends most of such a frame on its eighteen member names
//! (BENCHMARKS.md); here they are matched as fixed text. The metadata of a
//! delta (only the session id) is matched too; any other metadata object is
//! read by serde, through the same `Deserialize` as the whole frame's. The
//! reader accepts nothing else: no whitespace, another order, another
//! member, a number where a string goes — any difference returns `None`, and
//! the frame is read by serde as before. What it accepts reads to the very
//! value serde reads (tested on the captured frames and on generated ones).

use std::borrow::Cow;
use std::ops::Range;

use super::{role_of, Message, Part, StatusMetadata, StreamFrame, StreamResponse};
use super::{TaskState, TaskStatus, TaskStatusUpdateEvent};
use crate::json::first_to_escape;

/// The frame, when it has exactly the shape above.
pub(super) fn read(data: &str) -> Option<StreamFrame> {
    read_leaving_text(data, false).map(|(frame, _)| frame)
}

/// The same, from a payload the caller gives up. A text that makes up at
/// least half of it takes over its buffer instead of being copied: a run's
/// last frame carries the whole answer, megabytes of it. On `None` the
/// payload is as it was.
pub(super) fn take(data: &mut String) -> Option<StreamFrame> {
    let (mut frame, left) = read_leaving_text(data, true)?;
    if let Some(at) = left {
        data.truncate(at.end);
        data.drain(..at.start);
        put_text(&mut frame, std::mem::take(data));
    }
    Some(frame)
}

/// The frame; with `leave_text`, a message text without escapes that makes
/// up at least half of `data` is left empty, and where it is returned.
fn read_leaving_text(data: &str, leave_text: bool) -> Option<(StreamFrame, Option<Range<usize>>)> {
    let mut at = Cursor { data, rest: data };
    at.eat(r#"{"result":{"statusUpdate":{"taskId":"#)?;
    let task_id = at.string()?;
    at.eat(r#","contextId":"#)?;
    let context_id = at.string()?;
    at.eat(r#","status":{"state":"#)?;
    let state = TaskState::parse(&at.string()?);
    let (message, left) = if at.eat(r#","message":{"messageId":"#).is_some() {
        let (message, left) = at.message(leave_text)?;
        (Some(Box::new(message)), left)
    } else {
        (None, None)
    };
    let timestamp = match at.eat(r#","timestamp":"#) {
        Some(()) => Some(at.string()?.into_owned()),
        None => None,
    };
    at.eat("}")?;
    let metadata = match at.eat(r#","metadata":"#) {
        Some(()) => Some(at.metadata()?),
        None => None,
    };
    at.eat(r#"}},"id":"#)?;
    at.id()?;
    at.eat(r#","jsonrpc":"#)?;
    at.string()?;
    at.eat("}")?;
    at.rest.is_empty().then(|| {
        let update = TaskStatusUpdateEvent {
            task_id: task_id.into_owned(),
            context_id: context_id.into_owned(),
            status: TaskStatus {
                state,
                message,
                timestamp,
            },
            metadata,
        };
        let frame = StreamFrame::Result(Box::new(StreamResponse::StatusUpdate(update)));
        (frame, left)
    })
}

/// Puts the text of a frame read with its text left.
fn put_text(frame: &mut StreamFrame, text: String) {
    if let StreamFrame::Result(response) = frame {
        if let StreamResponse::StatusUpdate(update) = &mut **response {
            if let Some(message) = &mut update.status.message {
                message.parts[0].text = Some(text);
            }
        }
    }
}

/// A payload and its unread rest.
struct Cursor<'a> {
    data: &'a str,
    rest: &'a str,
}

impl<'a> Cursor<'a> {
    /// Steps over `literal`, if the rest starts with it.
    fn eat(&mut self, literal: &str) -> Option<()> {
        self.rest = self.rest.strip_prefix(literal)?;
        Some(())
    }

    /// A JSON string: borrowed when it has no escapes, else decoded by
    /// serde_json itself. A raw control character is not JSON: `None`.
    fn string(&mut self) -> Option<Cow<'a, str>> {
        let body = self.rest.strip_prefix('"')?;
        let bytes = body.as_bytes();
        let first = first_to_escape(bytes)?;
        match bytes[first] {
            b'"' => {
                self.rest = &body[first + 1..];
                return Some(Cow::Borrowed(&body[..first]));
            }
            b'\\' => {}
            _ => return None,
        }
        // An escape: find the closing quote, stepping over each escaped byte.
        let mut from = first;
        let end = loop {
            let next = from + memchr::memchr2(b'"', b'\\', bytes.get(from..)?)?;
            if bytes[next] == b'"' {
                break next;
            }
            from = next + 2;
        };
        let literal = &self.rest[..end + 2];
        self.rest = &body[end + 1..];
        serde_json::from_str::<String>(literal).ok().map(Cow::Owned)
    }

    /// The request id: a string, or an integer as JSON writes it.
    fn id(&mut self) -> Option<()> {
        if self.rest.starts_with('"') {
            return self.string().map(drop);
        }
        let digits = self.rest.strip_prefix('-').unwrap_or(self.rest);
        let length = digits.bytes().take_while(u8::is_ascii_digit).count();
        // JSON allows no leading zero; a fraction or exponent is not read.
        if length == 0 || (length > 1 && digits.starts_with('0')) {
            return None;
        }
        self.rest = &digits[length..];
        Some(())
    }

    /// The rest of a status message, after its `"messageId":`; with
    /// `leave_text`, a text as [`read_leaving_text`] leaves it.
    fn message(&mut self, leave_text: bool) -> Option<(Message, Option<Range<usize>>)> {
        let message_id = self.string()?.into_owned();
        self.eat(r#","contextId":"#)?;
        let context_id = self.string()?.into_owned();
        self.eat(r#","taskId":"#)?;
        let task_id = self.string()?.into_owned();
        self.eat(r#","role":"#)?;
        let role = role_of(&self.string()?);
        self.eat(r#","parts":[{"text":"#)?;
        let (text, left) = match self.string()? {
            Cow::Borrowed(text) if leave_text && text.len() * 2 >= self.data.len() => {
                let start = text.as_ptr() as usize - self.data.as_ptr() as usize;
                (String::new(), Some(start..start + text.len()))
            }
            text => (text.into_owned(), None),
        };
        self.eat("}]}")?;
        let message = Message {
            message_id,
            context_id: Some(context_id),
            task_id: Some(task_id),
            role,
            parts: vec![Part::text(text)],
            metadata: None,
        };
        Some((message, left))
    }

    /// A metadata object: a delta's (only the session id) matched, any
    /// other read by serde.
    fn metadata(&mut self) -> Option<StatusMetadata> {
        let start = self.rest;
        if self.eat(r#"{"iac_code":{"iacCodeSessionId":"#).is_some() {
            if let Some(session_id) = self.string() {
                if self.eat("}}").is_some() {
                    return Some(StatusMetadata::of_session_id(session_id.into_owned()));
                }
            }
            self.rest = start;
        }
        let (metadata, length) = metadata_by_serde(start)?;
        self.rest = &start[length..];
        Some(metadata)
    }
}

/// The metadata object at the start of `rest`, and its length.
#[inline(never)]
fn metadata_by_serde(rest: &str) -> Option<(StatusMetadata, usize)> {
    if !rest.starts_with('{') {
        return None;
    }
    let mut values = serde_json::Deserializer::from_str(rest).into_iter::<StatusMetadata>();
    let metadata = values.next()?.ok()?;
    Some((metadata, values.byte_offset()))
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::{read, take};
    use crate::a2a::{StreamFrame, StreamResponse};
    use crate::ids::IdGen;

    /// What serde reads, through the `Value` path that decides like the
    /// typed one.
    fn by_serde(data: &str) -> Option<StreamFrame> {
        let value: Value = serde_json::from_str(data).ok()?;
        value.is_object().then(|| StreamFrame::from_value(value))
    }

    /// Every `data:` payload of a captured stream.
    fn payloads(raw: &str) -> Vec<&str> {
        raw.lines()
            .filter_map(|line| line.strip_prefix("data: "))
            .collect()
    }

    /// Reads `data` both ways, and by hand from an owned copy; true when
    /// the hand reader took it.
    fn agrees(data: &str) -> bool {
        let mut owned = data.to_owned();
        let taken = take(&mut owned);
        match read(data) {
            Some(frame) => {
                assert_eq!(taken.as_ref(), Some(&frame), "{data}");
                assert_eq!(Some(frame), by_serde(data), "{data}");
                true
            }
            None => {
                assert_eq!(taken, None, "{data}");
                assert_eq!(owned, data, "a payload not taken is left as it was");
                false
            }
        }
    }

    /// The text of a frame with one message.
    fn text_of(frame: &StreamFrame) -> &str {
        let StreamFrame::Result(result) = frame else {
            panic!("{frame:?}");
        };
        let StreamResponse::StatusUpdate(update) = &**result else {
            panic!("{frame:?}");
        };
        let message = update.status.message.as_ref().expect("a message");
        message.parts[0].text.as_deref().expect("a text")
    }

    /// A frame with `text` (as a JSON string) and the final metadata.
    fn final_frame(text: &str) -> String {
        format!(
            r#"{{"result":{{"statusUpdate":{{"taskId":"t","contextId":"c","status":{{"state":"TASK_STATE_WORKING","message":{{"messageId":"t-2","contextId":"c","taskId":"t","role":"ROLE_AGENT","parts":[{{"text":{text}}}]}},"timestamp":"2026-12-02T09:50:40.706337Z"}},"metadata":{{"iac_code":{{"iacCodeSessionId":"s","assistantFinal":{{"complete":true}}}}}}}}}},"id":"r","jsonrpc":"2.0"}}"#
        )
    }

    #[test]
    fn a_text_that_is_most_of_the_payload_takes_over_its_buffer() {
        let answer = "word ".repeat(10_000);
        let mut data = final_frame(&format!(r#""{answer}""#));
        let buffer = data.as_ptr();
        let frame = take(&mut data).expect("the shape");
        assert_eq!(text_of(&frame), answer);
        assert_eq!(text_of(&frame).as_ptr(), buffer, "not copied");
        assert!(data.is_empty());
    }

    #[test]
    fn a_short_or_escaped_text_is_copied() {
        let escaped = format!(r#""{}""#, r#"a \"quoted\" word "#.repeat(2_000));
        for text in [r#""short""#, &escaped] {
            let mut data = final_frame(text);
            let buffer = data.as_ptr();
            let frame = take(&mut data).expect("the shape");
            assert_ne!(text_of(&frame).as_ptr(), buffer);
            assert_eq!(Some(frame), by_serde(&final_frame(text)));
        }
    }

    #[test]
    fn it_reads_the_captured_status_updates_as_serde_does() {
        let captures = [
            include_str!("../../tests/fixtures/a2a/out_think.raw"),
            include_str!("../../tests/fixtures/a2a/out_plain.raw"),
            include_str!("../../tests/fixtures/a2a/out_tool.raw"),
        ];
        for raw in captures {
            for data in payloads(raw) {
                let status_update = data.starts_with(r#"{"result":{"statusUpdate":"#);
                assert_eq!(agrees(data), status_update, "{data}");
            }
        }
    }

    /// JSON values for a string slot: plain, escaped, invalid, not strings.
    const VALUES: &[&str] = &[
        r#""t-1""#,
        r#""""#,
        r#""a\"b""#,
        r#""line\nnext\t\r\b\f\/""#,
        r#""\u00e9\ud83d\ude00""#,
        r#""\ud800""#,
        r#""bad\x""#,
        "\"raw\u{1}control\"",
        r#""ends\\""#,
        "\"Olá 😀\"",
        r#""TASK_STATE_WORKING""#,
        r#""input-required""#,
        r#""ROLE_AGENT""#,
        r#""ROLE_USER""#,
        r#""agent""#,
        "1",
        "null",
        r#""open"#,
    ];
    /// Metadata values other than a delta's.
    const METADATA: &[&str] = &[
        r#"{"iac_code":{"iacCodeSessionId":"s-1","assistantFinal":{"complete":true}}}"#,
        r#"{"iac_code":{"iacCodeSessionId":"s-1","usage":{"outputTokens":15.0,"model":"m"}}}"#,
        r#"{"iac_code":{"iacCodeSessionId":"s-1"},"other":[1,null]}"#,
        r#"{"iac_code":{"iacCodeSessionId":"a\"b"}}"#,
        r#"{"iac_code":{"iacCodeSessionId":7}}"#,
        r#"{"iac_code":"odd"}"#,
        r#"{ "iac_code" : { } }"#,
        r#"{"iac_code":{"iacCodeSessionId":"s-1","iacCodeSessionId":"s-2"}}"#,
        "{}",
        "null",
        "[1]",
        r#"{"iac_code":{"#,
    ];
    /// JSON values for the request id.
    const IDS: &[&str] = &[
        r#""c837""#,
        "1",
        "0",
        "-7",
        "01",
        "1.5",
        "-",
        r#""x\"y""#,
        "null",
    ];

    /// Reproducible choices.
    struct Rng(IdGen);

    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            (self.0.next_u64() % n as u64) as usize
        }

        fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
            from[self.below(from.len())]
        }

        /// A plain string most of the time, so that most frames are whole.
        fn value(&mut self) -> &'static str {
            if self.below(3) == 0 {
                self.pick(VALUES)
            } else {
                r#""t-1""#
            }
        }
    }

    fn frame(rng: &mut Rng) -> String {
        let mut data = format!(
            r#"{{"result":{{"statusUpdate":{{"taskId":{},"contextId":{},"status":{{"state":{}"#,
            rng.value(),
            rng.value(),
            rng.value()
        );
        if rng.below(2) == 0 {
            // Now and then a text that is most of the frame, as a run's
            // last frame has.
            let text = match rng.below(4) {
                0 => format!(r#""{}""#, "Olá 😀 ".repeat(60)),
                _ => rng.value().to_owned(),
            };
            data += &format!(
                r#","message":{{"messageId":{},"contextId":{},"taskId":{},"role":{},"parts":[{{"text":{}}}]}}"#,
                rng.value(),
                rng.value(),
                rng.value(),
                rng.value(),
                text
            );
        }
        if rng.below(3) == 0 {
            data += &format!(r#","timestamp":{}"#, rng.value());
        }
        data.push('}');
        match rng.below(4) {
            0 => {}
            1 => data += &format!(r#","metadata":{}"#, rng.pick(METADATA)),
            _ => {
                data += &format!(
                    r#","metadata":{{"iac_code":{{"iacCodeSessionId":{}}}}}"#,
                    rng.value()
                )
            }
        }
        data += &format!(r#"}}}},"id":{},"jsonrpc":{}}}"#, rng.pick(IDS), rng.value());
        data
    }

    /// Generated frames, and each cut short, with a byte dropped or a space
    /// put in: whatever the reader takes, serde reads the same.
    #[test]
    fn what_it_reads_serde_reads_the_same() {
        let mut rng = Rng(IdGen::new(7));
        let mut taken = 0;
        for _ in 0..3_000 {
            let data = frame(&mut rng);
            taken += usize::from(agrees(&data));
            for _ in 0..4 {
                let mut at = rng.below(data.len());
                while !data.is_char_boundary(at) {
                    at -= 1;
                }
                let next = data[at..].chars().next().map_or(0, char::len_utf8);
                agrees(&data[..at]);
                agrees(&format!("{}{}", &data[..at], &data[at + next..]));
                agrees(&format!("{} {}", &data[..at], &data[at..]));
            }
        }
        // Most generated frames have the shape (a third of the slots are
        // picked from VALUES, some of which it must refuse).
        assert!(taken > 600, "the reader took {taken} of 3000 frames");
    }
}
