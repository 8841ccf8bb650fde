//! SSE as the AG-UI server writes it: `data: <compact JSON>\n\n` per event,
//! `: <comment>\n\n` for heartbeats, LF only.

use serde_json::Value;

/// Frames events the way the server does (one `data:` record each).
pub fn frame(events: &[Value]) -> String {
    let mut out = String::new();
    for event in events {
        out.push_str("data: ");
        out.push_str(&event.to_string());
        out.push_str("\n\n");
    }
    out
}

/// A received SSE body split into its records.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Received {
    /// The JSON of every `data:` record, in order.
    pub events: Vec<Value>,
    /// The text of every comment record (`: heartbeat` gives `heartbeat`).
    pub comments: Vec<String>,
    /// Anything that is not a well-formed LF-framed record (CR bytes,
    /// non-JSON data, unknown field lines, a trailing partial record).
    pub problems: Vec<String>,
}

impl Received {
    /// The `type` of every event, in order.
    pub fn types(&self) -> Vec<&str> {
        self.events
            .iter()
            .map(|e| e.get("type").and_then(Value::as_str).unwrap_or("?"))
            .collect()
    }

    /// The last event, if any.
    pub fn last(&self) -> Option<&Value> {
        self.events.last()
    }

    /// The first event of the given type.
    pub fn first_of(&self, kind: &str) -> Option<&Value> {
        self.events
            .iter()
            .find(|e| e.get("type").and_then(Value::as_str) == Some(kind))
    }
}

/// Splits a complete body. Stricter than the clients on purpose: the server
/// must write exactly one `data:` line or one comment line per record.
pub fn parse(body: &str) -> Received {
    let mut received = Received::default();
    if body.contains('\r') {
        received.problems.push("CR byte in the stream".to_owned());
    }
    let mut rest = body;
    while let Some(end) = rest.find("\n\n") {
        let record = &rest[..end];
        rest = &rest[end + 2..];
        if let Some(data) = record.strip_prefix("data: ") {
            if data.contains('\n') {
                received
                    .problems
                    .push(format!("multi-line record: {record:?}"));
            }
            match serde_json::from_str::<Value>(data) {
                Ok(value) => received.events.push(value),
                Err(e) => received.problems.push(format!("bad JSON {data:?}: {e}")),
            }
        } else if let Some(comment) = record.strip_prefix(':') {
            received.comments.push(comment.trim_start().to_owned());
        } else {
            received
                .problems
                .push(format!("unexpected record: {record:?}"));
        }
    }
    if !rest.is_empty() {
        received
            .problems
            .push(format!("unterminated record: {rest:?}"));
    }
    received
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn frame_then_parse_round_trips() {
        let events = vec![
            json!({"type": "RUN_STARTED"}),
            json!({"type": "RUN_FINISHED"}),
        ];
        let text = frame(&events) + ": heartbeat\n\n";
        let back = parse(&text);
        assert_eq!(back.events, events);
        assert_eq!(back.comments, vec!["heartbeat"]);
        assert!(back.problems.is_empty());
    }

    #[test]
    fn crlf_and_partial_records_are_problems() {
        let back = parse("data: {}\r\n\r\ndata: {");
        assert!(back.problems.iter().any(|p| p.contains("CR")));
        assert!(back.problems.iter().any(|p| p.contains("unterminated")));
    }
}
