//! A reader for the one frame shape that nearly every frame of a run has: a
//! status update in the runtime's own member order, with at most one text
//! message and only the session id in its metadata (text deltas, and the
//! `SUBMITTED`/`WORKING` lifecycle frames).
//!
//! ```text
//! {"result":{"statusUpdate":{"taskId":…,"contextId":…,"status":{"state":…
//!   [,"message":{"messageId":…,"contextId":…,"taskId":…,"role":…,
//!                "parts":[{"text":…}]}] [,"timestamp":…]}
//!   [,"metadata":{"iac_code":{"iacCodeSessionId":…}}]}},"id":…,"jsonrpc":…}
//! ```
//!
//! serde_json spends most of such a frame on its eighteen member names
//! (BENCHMARKS.md); here they are matched as fixed text. The reader accepts
//! nothing else: no whitespace, another order, another member, a number
//! where a string goes — any difference returns `None`, and the frame is
//! read by serde as before. What it accepts reads to the very value serde
//! reads (tested on the captured frames and on generated ones).

use std::borrow::Cow;

use super::{role_of, Message, Part, StatusMetadata, StreamFrame, StreamResponse};
use super::{TaskState, TaskStatus, TaskStatusUpdateEvent};
use crate::json::first_to_escape;

/// The frame, when it has exactly the shape above.
pub(super) fn read(data: &str) -> Option<StreamFrame> {
    let mut at = Cursor(data);
    at.eat(r#"{"result":{"statusUpdate":{"taskId":"#)?;
    let task_id = at.string()?;
    at.eat(r#","contextId":"#)?;
    let context_id = at.string()?;
    at.eat(r#","status":{"state":"#)?;
    let state = TaskState::parse(&at.string()?);
    let message = if at.eat(r#","message":{"messageId":"#).is_some() {
        Some(Box::new(at.message()?))
    } else {
        None
    };
    let timestamp = match at.eat(r#","timestamp":"#) {
        Some(()) => Some(at.string()?.into_owned()),
        None => None,
    };
    at.eat("}")?;
    let metadata = match at.eat(r#","metadata":{"iac_code":{"iacCodeSessionId":"#) {
        Some(()) => {
            let session_id = at.string()?.into_owned();
            at.eat("}}")?;
            Some(StatusMetadata::of_session_id(session_id))
        }
        None => None,
    };
    at.eat(r#"}},"id":"#)?;
    at.id()?;
    at.eat(r#","jsonrpc":"#)?;
    at.string()?;
    at.eat("}")?;
    at.0.is_empty().then(|| {
        StreamFrame::Result(Box::new(StreamResponse::StatusUpdate(
            TaskStatusUpdateEvent {
                task_id: task_id.into_owned(),
                context_id: context_id.into_owned(),
                status: TaskStatus {
                    state,
                    message,
                    timestamp,
                },
                metadata,
            },
        )))
    })
}

/// The unread rest of the frame.
struct Cursor<'a>(&'a str);

impl<'a> Cursor<'a> {
    /// Steps over `literal`, if the rest starts with it.
    fn eat(&mut self, literal: &str) -> Option<()> {
        self.0 = self.0.strip_prefix(literal)?;
        Some(())
    }

    /// A JSON string: borrowed when it has no escapes, else decoded by
    /// serde_json itself. A raw control character is not JSON: `None`.
    fn string(&mut self) -> Option<Cow<'a, str>> {
        let body = self.0.strip_prefix('"')?;
        let bytes = body.as_bytes();
        let first = first_to_escape(bytes)?;
        match bytes[first] {
            b'"' => {
                self.0 = &body[first + 1..];
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
        let literal = &self.0[..end + 2];
        self.0 = &body[end + 1..];
        serde_json::from_str::<String>(literal).ok().map(Cow::Owned)
    }

    /// The request id: a string, or an integer as JSON writes it.
    fn id(&mut self) -> Option<()> {
        if self.0.starts_with('"') {
            return self.string().map(drop);
        }
        let digits = self.0.strip_prefix('-').unwrap_or(self.0);
        let length = digits.bytes().take_while(u8::is_ascii_digit).count();
        // JSON allows no leading zero; a fraction or exponent is not read.
        if length == 0 || (length > 1 && digits.starts_with('0')) {
            return None;
        }
        self.0 = &digits[length..];
        Some(())
    }

    /// The rest of a status message, after its `"messageId":`.
    fn message(&mut self) -> Option<Message> {
        let message_id = self.string()?.into_owned();
        self.eat(r#","contextId":"#)?;
        let context_id = self.string()?.into_owned();
        self.eat(r#","taskId":"#)?;
        let task_id = self.string()?.into_owned();
        self.eat(r#","role":"#)?;
        let role = role_of(&self.string()?);
        self.eat(r#","parts":[{"text":"#)?;
        let text = self.string()?.into_owned();
        self.eat("}]}")?;
        Some(Message {
            message_id,
            context_id: Some(context_id),
            task_id: Some(task_id),
            role,
            parts: vec![Part::text(text)],
            metadata: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::read;
    use crate::a2a::StreamFrame;
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

    /// Reads `data` both ways; true when the hand reader took it.
    fn agrees(data: &str) -> bool {
        match read(data) {
            Some(frame) => {
                assert_eq!(Some(frame), by_serde(data), "{data}");
                true
            }
            None => false,
        }
    }

    #[test]
    fn it_reads_the_captured_deltas_and_lifecycle_frames_as_serde_does() {
        let captures = [
            (include_str!("../../tests/fixtures/a2a/out_think.raw"), 5),
            (include_str!("../../tests/fixtures/a2a/out_plain.raw"), 5),
            (include_str!("../../tests/fixtures/a2a/out_tool.raw"), 4),
        ];
        for (raw, expected) in captures {
            let taken = payloads(raw).into_iter().filter(|d| agrees(d)).count();
            assert_eq!(taken, expected);
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
            data += &format!(
                r#","message":{{"messageId":{},"contextId":{},"taskId":{},"role":{},"parts":[{{"text":{}}}]}}"#,
                rng.value(),
                rng.value(),
                rng.value(),
                rng.value(),
                rng.value()
            );
        }
        if rng.below(3) == 0 {
            data += &format!(r#","timestamp":{}"#, rng.value());
        }
        data.push('}');
        if rng.below(2) == 0 {
            data += &format!(
                r#","metadata":{{"iac_code":{{"iacCodeSessionId":{}}}}}"#,
                rng.value()
            );
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
