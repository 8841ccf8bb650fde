//! `EventStreamChecker`: feed the bytes of a `POST /` response as they
//! arrive, get the AG-UI events back, and learn about the first sequencing
//! violation the moment it happens (the core's verifier: AG-UI client rules
//! plus the strict one-run-per-response checks).

use iac_agui_core::sse::{SseItem, SseParser};
use iac_agui_core::verifier::{Rule, Verifier, Violation};
use serde_json::{json, Value};
use wasm_bindgen::prelude::*;

use crate::error::{from_js, to_js};

/// Push checker of one AG-UI event stream.
#[derive(Debug, Clone)]
pub struct StreamChecker {
    parser: SseParser,
    verifier: Verifier,
    events: usize,
    violation: Option<Value>,
}

impl Default for StreamChecker {
    fn default() -> Self {
        StreamChecker::new(None)
    }
}

impl StreamChecker {
    /// A checker; with `ids = (threadId, runId)` RUN_STARTED must carry them.
    pub fn new(ids: Option<(&str, &str)>) -> Self {
        StreamChecker {
            parser: SseParser::new(),
            verifier: ids.map_or_else(Verifier::new, |(t, r)| Verifier::expecting(t, r)),
            events: 0,
            violation: None,
        }
    }

    /// Feeds the next chunk, split anywhere. Returns `{events, comments,
    /// violation}`: the events completed by this chunk (each parsed from its
    /// `data:` line), the number of comment lines (heartbeats), and the first
    /// violation of the stream so far (it stays reported once seen; events
    /// after it are still parsed but no longer judged).
    pub fn push(&mut self, chunk: &[u8]) -> Value {
        let mut events = Vec::new();
        let mut comments = 0;
        if let Err(error) = self.parser.feed(chunk) {
            self.record(violation_json(
                self.events,
                "STREAM_TOO_LARGE",
                None,
                &error.to_string(),
            ));
        }
        while let Some(item) = self.parser.poll() {
            match item {
                SseItem::Comment(_) => comments += 1,
                SseItem::Event(event) => {
                    let index = self.events;
                    self.events += 1;
                    let Ok(value) = serde_json::from_str::<Value>(&event.data) else {
                        self.record(violation_json(
                            index,
                            "INVALID_EVENT",
                            None,
                            "data is not JSON",
                        ));
                        continue;
                    };
                    if self.violation.is_none() {
                        if let Err(v) = self.verifier.feed_json(&value) {
                            self.record(violation_of(&v));
                        }
                    }
                    events.push(value);
                }
            }
        }
        json!({ "events": events, "comments": comments, "violation": self.violation })
    }

    /// Ends the stream: `{violation}`, adding `MISSING_TERMINAL` when no
    /// RUN_FINISHED / RUN_ERROR came and `TRUNCATED` when the stream stopped
    /// inside an event.
    pub fn finish(&mut self) -> Value {
        if self.parser.has_partial() {
            self.record(violation_json(
                self.events,
                "TRUNCATED",
                None,
                "the stream ended inside an event",
            ));
        }
        if let Err(v) = self.verifier.finish() {
            self.record(violation_of(&v));
        }
        json!({ "events": self.events, "violation": self.violation })
    }

    fn record(&mut self, violation: Value) {
        if self.violation.is_none() {
            self.violation = Some(violation);
        }
    }
}

/// Checks a whole list of AG-UI events (already parsed from a stream) as one
/// response: the first violation, or `None`.
pub fn check_events(events: &[Value], ids: Option<(&str, &str)>) -> Option<Value> {
    let mut verifier = ids.map_or_else(Verifier::new, |(t, r)| Verifier::expecting(t, r));
    for event in events {
        if let Err(v) = verifier.feed_json(event) {
            return Some(violation_of(&v));
        }
    }
    verifier.finish().err().map(|v| violation_of(&v))
}

/// `new EventStreamChecker(options?)` for JavaScript.
#[wasm_bindgen(js_name = EventStreamChecker)]
pub struct EventStreamCheckerJs {
    inner: StreamChecker,
}

#[wasm_bindgen(js_class = EventStreamChecker)]
impl EventStreamCheckerJs {
    /// `options.threadId` and `options.runId`, when both are given, must be
    /// the ids of RUN_STARTED.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_optional_param_type = "StreamCheckOptions")] options: JsValue,
    ) -> Result<EventStreamCheckerJs, JsValue> {
        let options = from_js(&options)?;
        Ok(EventStreamCheckerJs {
            inner: StreamChecker::new(expected_ids(&options)),
        })
    }

    /// Feeds the next chunk of bytes (e.g. from `response.body.getReader()`).
    #[wasm_bindgen(unchecked_return_type = "StreamPushResult")]
    pub fn push(&mut self, chunk: &[u8]) -> JsValue {
        to_js(&self.inner.push(chunk))
    }

    /// Feeds the next chunk as text.
    #[wasm_bindgen(js_name = pushText, unchecked_return_type = "StreamPushResult")]
    pub fn push_text(&mut self, chunk: &str) -> JsValue {
        to_js(&self.inner.push(chunk.as_bytes()))
    }

    /// Ends the stream.
    #[wasm_bindgen(unchecked_return_type = "StreamFinishResult")]
    pub fn finish(&mut self) -> JsValue {
        to_js(&self.inner.finish())
    }
}

/// `checkEvents(eventsJson, options?)` for JavaScript: the first violation
/// of a whole stream, or `null`.
#[wasm_bindgen(js_name = checkEvents, unchecked_return_type = "StreamViolation | null")]
pub fn check_events_js(
    #[wasm_bindgen(js_name = "eventsJson")] events_json: &str,
    #[wasm_bindgen(unchecked_optional_param_type = "StreamCheckOptions")] options: JsValue,
) -> Result<JsValue, JsValue> {
    let options = from_js(&options)?;
    let events: Vec<Value> = serde_json::from_str(events_json)
        .map_err(|_| js_sys::TypeError::new("events must be a JSON array"))?;
    Ok(check_events(&events, expected_ids(&options)).map_or(JsValue::NULL, |v| to_js(&v)))
}

fn expected_ids(options: &Value) -> Option<(&str, &str)> {
    Some((
        options.get("threadId")?.as_str()?,
        options.get("runId")?.as_str()?,
    ))
}

/// `{index, rule, subject, message}`: a stable SCREAMING_SNAKE rule name,
/// the id or name involved, and an English explanation for developers.
fn violation_of(violation: &Violation) -> Value {
    let (rule, subject, message) = describe(&violation.rule);
    violation_json(violation.index, rule, subject.as_deref(), &message)
}

fn violation_json(index: usize, rule: &str, subject: Option<&str>, message: &str) -> Value {
    json!({ "index": index, "rule": rule, "subject": subject, "message": message })
}

fn describe(rule: &Rule) -> (&'static str, Option<String>, String) {
    let id = |s: &String| Some(s.clone());
    match rule {
        Rule::FirstEventNotRunStarted => (
            "FIRST_EVENT_NOT_RUN_STARTED",
            None,
            "the first event must be RUN_STARTED".into(),
        ),
        Rule::RunIdsMismatch => (
            "RUN_IDS_MISMATCH",
            None,
            "RUN_STARTED does not carry the request's threadId and runId".into(),
        ),
        Rule::SecondRunStarted => (
            "SECOND_RUN_STARTED",
            None,
            "a second RUN_STARTED in one response".into(),
        ),
        Rule::EventAfterTerminal => (
            "EVENT_AFTER_TERMINAL",
            None,
            "an event after RUN_FINISHED or RUN_ERROR".into(),
        ),
        Rule::TextAlreadyOpen(m) => (
            "TEXT_ALREADY_OPEN",
            id(m),
            format!("TEXT_MESSAGE_START for open message {m}"),
        ),
        Rule::TextNotOpen(m) => (
            "TEXT_NOT_OPEN",
            id(m),
            format!("text message {m} is not open"),
        ),
        Rule::ToolAlreadyOpen(t) => (
            "TOOL_ALREADY_OPEN",
            id(t),
            format!("TOOL_CALL_START for open call {t}"),
        ),
        Rule::ToolNotOpen(t) => ("TOOL_NOT_OPEN", id(t), format!("tool call {t} is not open")),
        Rule::StepAlreadyOpen(s) => (
            "STEP_ALREADY_OPEN",
            id(s),
            format!("STEP_STARTED for open step {s}"),
        ),
        Rule::StepNotOpen(s) => ("STEP_NOT_OPEN", id(s), format!("step {s} is not open")),
        Rule::ReasoningAlreadyOpen(m) => (
            "REASONING_ALREADY_OPEN",
            id(m),
            format!("REASONING_START for open span {m}"),
        ),
        Rule::ReasoningNotOpen(m) => (
            "REASONING_NOT_OPEN",
            id(m),
            format!("reasoning span {m} is not open"),
        ),
        Rule::ReasoningMessageAlreadyOpen(m) => (
            "REASONING_MESSAGE_ALREADY_OPEN",
            id(m),
            format!("REASONING_MESSAGE_START for open message {m}"),
        ),
        Rule::ReasoningMessageNotOpen(m) => (
            "REASONING_MESSAGE_NOT_OPEN",
            id(m),
            format!("reasoning message {m} is not open"),
        ),
        Rule::OpenAtFinish(what, s) => (
            "OPEN_AT_FINISH",
            id(s),
            format!("RUN_FINISHED while {what} {s} is open"),
        ),
        Rule::EmptyInterrupts => (
            "EMPTY_INTERRUPTS",
            None,
            "an interrupt outcome without interrupts".into(),
        ),
        Rule::BadRole(event, role) => ("BAD_ROLE", id(role), format!("{event} with role {role}")),
        Rule::ActivityContentNotObject => (
            "ACTIVITY_CONTENT_NOT_OBJECT",
            None,
            "ACTIVITY_SNAPSHOT content is not an object".into(),
        ),
        Rule::EmptyDelta(m) => (
            "EMPTY_DELTA",
            id(m),
            format!("empty text delta for message {m}"),
        ),
        Rule::NullField(f) => ("NULL_FIELD", id(f), format!("{f} is null")),
        Rule::InvalidEvent(why) => (
            "INVALID_EVENT",
            None,
            format!("not an AG-UI event of this adapter: {why}"),
        ),
        Rule::MissingTerminal => (
            "MISSING_TERMINAL",
            None,
            "the stream ended without RUN_FINISHED or RUN_ERROR".into(),
        ),
        other => ("OTHER", None, format!("{other:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(event: Value) -> String {
        format!("data: {}\n\n", stamped(event))
    }

    /// Every event of this adapter carries a timestamp.
    fn stamped(mut event: Value) -> Value {
        event["timestamp"] = json!(7);
        event
    }

    fn started() -> Value {
        json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r", "timestamp": 1})
    }

    fn finished() -> Value {
        json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "timestamp": 3,
               "outcome": {"type": "success"}})
    }

    #[test]
    fn a_clean_stream_split_anywhere_has_no_violation() {
        let text = [
            frame(started()),
            ": heartbeat\n\n".into(),
            frame(json!({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"})),
            frame(json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "hé"})),
            frame(json!({"type": "TEXT_MESSAGE_END", "messageId": "m"})),
            frame(finished()),
        ]
        .concat();
        let bytes = text.as_bytes();
        let mut checker = StreamChecker::new(Some(("t", "r")));
        let mut events = 0;
        let mut comments = 0;
        for chunk in bytes.chunks(7) {
            let out = checker.push(chunk);
            assert_eq!(out["violation"], Value::Null, "{out}");
            events += out["events"].as_array().unwrap().len();
            comments += out["comments"].as_u64().unwrap();
        }
        assert_eq!((events, comments), (5, 1));
        assert_eq!(checker.finish()["violation"], Value::Null);
    }

    #[test]
    fn the_first_violation_is_reported_and_kept() {
        let mut checker = StreamChecker::default();
        checker.push(frame(started()).as_bytes());
        let out = checker.push(
            frame(json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "x", "delta": "a"}))
                .as_bytes(),
        );
        assert_eq!(out["violation"]["rule"], "TEXT_NOT_OPEN");
        assert_eq!(out["violation"]["subject"], "x");
        assert_eq!(out["violation"]["index"], 1);
        let later = checker
            .push(frame(json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r"})).as_bytes());
        assert_eq!(later["violation"]["rule"], "TEXT_NOT_OPEN");
        assert_eq!(later["events"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn wrong_ids_missing_terminal_and_truncation() {
        let mut checker = StreamChecker::new(Some(("t", "other")));
        let out = checker.push(frame(started()).as_bytes());
        assert_eq!(out["violation"]["rule"], "RUN_IDS_MISMATCH");

        let mut checker = StreamChecker::default();
        checker.push(frame(started()).as_bytes());
        assert_eq!(checker.finish()["violation"]["rule"], "MISSING_TERMINAL");

        let mut checker = StreamChecker::default();
        checker.push(b"data: {\"type\":");
        assert_eq!(checker.finish()["violation"]["rule"], "TRUNCATED");
    }

    #[test]
    fn check_events_judges_a_whole_list() {
        assert_eq!(check_events(&[started(), finished()], None), None);
        let open = stamped(json!({"type": "STEP_STARTED", "stepName": "plan"}));
        let v = check_events(&[started(), open, finished()], None).unwrap();
        assert_eq!(v["rule"], "OPEN_AT_FINISH");
        assert_eq!(v["subject"], "plan");
        assert_eq!(check_events(&[], None).unwrap()["rule"], "MISSING_TERMINAL");
    }
}
