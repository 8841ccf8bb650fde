//! Real A2A captures (iac-code 0.16.0, `tests/fixtures/a2a/`) parse into the
//! core's types without losing a field the adapter reads: task and context
//! ids, the normalised state, status message text and id, `metadata.iac_code`
//! (float-typed numbers included) and pipeline envelopes. The `.raw` SSE
//! bytes must carry exactly the frames the `.json` captures list.

use std::path::{Path, PathBuf};

use iac_agui_core::a2a::{
    IacCode, JsonRpcResponse, Message, StatusMetadata, StreamFrame, StreamResponse, Task, TaskState,
};
use iac_agui_core::json::{lenient_i64, lenient_u64};
use serde_json::{json, Value};

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/a2a")
}

/// Every `out_*.json` capture, by file name, sorted.
fn captures() -> Vec<(String, Value)> {
    let mut names: Vec<String> = std::fs::read_dir(fixture_dir())
        .expect("fixture directory")
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("out_") && name.ends_with(".json"))
        .collect();
    names.sort();
    assert!(names.len() >= 40, "only {} captures found", names.len());
    names
        .into_iter()
        .map(|name| {
            let text = std::fs::read_to_string(fixture_dir().join(&name)).unwrap();
            let value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
            (name, value)
        })
        .collect()
}

fn capture(name: &str) -> Value {
    captures()
        .into_iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no capture {name}"))
        .1
}

fn method(capture: &Value) -> Option<&str> {
    capture.pointer("/request/method").and_then(Value::as_str)
}

#[test]
fn every_streamed_frame_parses_without_loss() {
    let mut frames = 0;
    for (name, capture) in captures() {
        let Some(events) = capture.get("events").and_then(Value::as_array) else {
            continue;
        };
        if method(&capture).is_none() {
            continue; // pipeline journal pages, checked below
        }
        let request_id = &capture["request"]["id"];
        let mut task_ids = Vec::new();
        for raw in events {
            let response = rpc(&name, raw);
            assert_eq!(&response.id, request_id, "{name}");
            assert!(response.error.is_none(), "{name}");
            let result = response.result.clone().expect("a result");
            let frame: StreamResponse = serde_json::from_value(result.clone())
                .unwrap_or_else(|e| panic!("{name}: {e}: {result}"));
            check_frame(&name, &result, &frame);
            task_ids.extend(frame.task_id().map(str::to_owned));
            frames += 1;
        }
        // One stream names one task.
        task_ids.dedup();
        assert!(task_ids.len() <= 1, "{name}: several tasks {task_ids:?}");
    }
    assert!(frames > 100, "only {frames} frames");
}

/// The host reads each SSE `data` straight into a [`StreamFrame`]; the
/// golden replay and the other hosts read a `Value` first. Both must decide
/// alike on every captured frame and on the odd ones.
#[test]
fn stream_frames_parse_alike_from_text_and_from_value() {
    let mut frames = 0;
    for (name, capture) in captures() {
        let events = capture.get("events").and_then(Value::as_array);
        if method(&capture).is_none() || events.is_none() {
            continue;
        }
        for raw in events.into_iter().flatten() {
            let text = raw.to_string();
            let parsed = StreamFrame::parse(&text).unwrap_or_else(|| panic!("{name}: {text}"));
            assert!(matches!(parsed, StreamFrame::Result(_)), "{name}: {text}");
            assert_eq!(parsed, StreamFrame::from_value(raw.clone()), "{name}");
            frames += 1;
        }
    }
    assert!(frames > 100, "only {frames} frames");

    let error = json!({"code": -32001, "message": "gone"});
    let task = json!({"task": {"id": "t1", "contextId": "c1", "status": {"state": "working"}}});
    let cases = [
        // An error wins over a result in the same frame.
        (
            json!({"jsonrpc": "2.0", "id": 1, "error": error, "result": task}),
            "error",
        ),
        // An error that is not a JSON-RPC error object still is one (code 0).
        (json!({"jsonrpc": "2.0", "id": 1, "error": "boom"}), "error"),
        (
            json!({"jsonrpc": "2.0", "id": 1, "error": null, "result": task}),
            "result",
        ),
        (json!({"jsonrpc": "2.0", "id": 1}), "malformed"),
        (
            json!({"jsonrpc": "2.0", "id": 1, "result": {"task": 7}}),
            "malformed",
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1, "result": {"bogus": {}}}),
            "malformed",
        ),
    ];
    for (frame, kind) in cases {
        let parsed = StreamFrame::parse(&frame.to_string()).expect("an object");
        let seen = match &parsed {
            StreamFrame::Result(_) => "result",
            StreamFrame::Error(_) => "error",
            StreamFrame::Malformed => "malformed",
        };
        assert_eq!(seen, kind, "{frame}");
        assert_eq!(parsed, StreamFrame::from_value(frame.clone()), "{frame}");
    }
    match StreamFrame::parse(r#"{"error":"boom"}"#) {
        Some(StreamFrame::Error(e)) => assert_eq!(e.code, 0),
        other => panic!("{other:?}"),
    }
    for not_an_object in ["[1,2]", "\"text\"", "42", "null", "{", ""] {
        assert_eq!(StreamFrame::parse(not_an_object), None, "{not_an_object}");
    }
}

#[test]
fn every_unary_body_parses_without_loss() {
    let mut bodies = 0;
    for (name, capture) in captures() {
        let (Some(method), Some(body)) = (method(&capture), capture.get("body")) else {
            continue;
        };
        let response = rpc(&name, body);
        assert_eq!(response.id, capture["request"]["id"], "{name}");
        bodies += 1;
        if let Some(error) = &response.error {
            assert!(error.code < 0, "{name}");
            assert!(!error.message.is_empty(), "{name}");
            assert_eq!(error.data.as_ref(), body["error"].get("data"), "{name}");
            assert!(!error.is_session_backup_not_ready(), "{name}");
            continue;
        }
        let result = response.result.expect("a result or an error");
        match method {
            "GetTask" | "CancelTask" => {
                let task: Task = serde_json::from_value(result.clone()).unwrap();
                check_task(&name, &result, &task);
            }
            "SendMessage" => {
                let frame: StreamResponse = serde_json::from_value(result.clone()).unwrap();
                check_frame(&name, &result, &frame);
            }
            "ListTasks" => {
                let tasks = result["tasks"].as_array().expect("tasks");
                assert!(!tasks.is_empty(), "{name}");
                for raw in tasks {
                    let task: Task = serde_json::from_value(raw.clone()).unwrap();
                    check_task(&name, raw, &task);
                }
            }
            other => panic!("{name}: unexpected method {other}"),
        }
    }
    assert!(bodies >= 15, "only {bodies} bodies");
}

#[test]
fn raw_sse_bytes_carry_the_captured_frames() {
    let mut streams = 0;
    for (name, capture) in captures() {
        let Some(method) = method(&capture) else {
            continue;
        };
        let raw_name = name.replace(".json", ".raw");
        let Ok(raw) = std::fs::read(fixture_dir().join(&raw_name)) else {
            continue;
        };
        let raw = String::from_utf8(raw).expect("UTF-8");
        let content_type = capture["headers"]["content-type"].as_str().unwrap_or("");
        if content_type.starts_with("application/json") {
            // Refused before the first event: a plain JSON-RPC error, not SSE.
            assert_eq!(capture["events"], json!([]), "{name}");
            let response = rpc(&raw_name, &serde_json::from_str(&raw).unwrap());
            let error = response.error.expect("a JSON-RPC error");
            assert!(error.code < 0, "{raw_name}");
            continue;
        }
        assert!(content_type.starts_with("text/event-stream"), "{name}");
        assert!(method.ends_with("Message") || method == "SubscribeToTask");
        assert!(
            raw.contains("\r\n\r\n"),
            "{raw_name}: expected CRLF framing"
        );
        let frames: Vec<Value> = sse_data(&raw)
            .iter()
            .map(|data| serde_json::from_str(data).unwrap())
            .collect();
        assert_eq!(&frames, capture["events"].as_array().unwrap(), "{raw_name}");
        streams += 1;
    }
    assert!(streams >= 15, "only {streams} streams");
}

#[test]
fn sse_comments_and_line_endings_are_handled_by_the_splitter() {
    let raw = ": ping - 2026\r\n\r\ndata: {\"a\":1}\r\n\r\n:x\ndata: {\"b\":\ndata: 2}\n\nevent: e\rdata:{\"c\":3}\r\r";
    assert_eq!(
        sse_data(raw),
        vec![r#"{"a":1}"#, "{\"b\":\n2}", r#"{"c":3}"#]
    );
    let pinged = std::fs::read_to_string(fixture_dir().join("out_sub_main.raw")).unwrap();
    assert!(
        pinged.contains(": ping"),
        "the capture keeps its keep-alives"
    );
}

#[test]
fn pipeline_journal_pages_hold_envelopes() {
    let mut envelopes = 0;
    for (name, capture) in captures() {
        if method(&capture).is_some() {
            continue;
        }
        let events = capture
            .get("events")
            .or_else(|| capture.pointer("/body/events"))
            .and_then(Value::as_array)
            .unwrap_or_else(|| panic!("{name}: no events"));
        let mut last = None;
        for envelope in events {
            check_envelope(&name, envelope);
            // The journal (unlike the stream) is ordered and uses integers.
            let sequence = envelope["sequence"].as_i64().expect("integer sequence");
            assert!(last.is_none_or(|l| sequence > l), "{name}: {sequence}");
            last = Some(sequence);
            envelopes += 1;
        }
        if let Some(after) = capture
            .pointer("/params/afterSequence")
            .and_then(lenient_i64)
        {
            assert!(events.iter().all(|e| e["sequence"].as_i64() > Some(after)));
        }
    }
    assert!(envelopes > 20, "only {envelopes} envelopes");
}

#[test]
fn a_plain_turn_reads_as_the_adapter_expects() {
    let capture = capture("out_plain.json");
    let frames = stream(&capture);
    let first = &frames[0];
    let StreamResponse::Task(task) = first else {
        panic!("the first frame is a task snapshot: {first:?}");
    };
    assert_eq!(task.status.state, TaskState::Submitted);
    assert_eq!(
        task.context_id,
        capture["request"]["params"]["message"]["contextId"]
    );
    let last = frames.last().unwrap();
    assert_eq!(last.state(), Some(&TaskState::InputRequired));
    assert!(last.state().unwrap().is_terminal());
    let sessions: Vec<&str> = frames
        .iter()
        .filter_map(|f| f.iac_code()?.get("iacCodeSessionId")?.as_str())
        .collect();
    assert!(!sessions.is_empty());
    assert!(sessions.iter().all(|s| *s == sessions[0]));
    let texts: Vec<(String, String)> = frames
        .iter()
        .filter_map(status_message)
        .map(|m| (m.message_id.clone(), m.text().into_owned()))
        .collect();
    assert!(!texts.is_empty());
    assert!(texts
        .iter()
        .all(|(id, text)| id.starts_with(&task.id) && !text.is_empty()));
}

#[test]
fn float_numbers_in_metadata_read_as_integers() {
    let perm = stream(&capture("out_perm1_a.json"));
    let usage = perm
        .iter()
        .find_map(|f| f.iac_code()?.get("usage").cloned())
        .expect("a usage frame");
    assert_eq!(usage["inputTokens"], json!(120.0));
    assert_eq!(lenient_u64(&usage["inputTokens"]), Some(120));
    assert_eq!(lenient_u64(&usage["outputTokens"]), Some(15));
    assert_eq!(lenient_u64(&usage["totalTokens"]), Some(235));
    assert_eq!(lenient_u64(&usage["cachedInputTokens"]), Some(100));
    let input = perm
        .last()
        .and_then(|f| f.iac_code()?.get("input").cloned())
        .expect("the permission wait carries the input projection");
    assert_eq!(input["schemaVersion"], json!(1.0));
    assert_eq!(lenient_i64(&input["schemaVersion"]), Some(1));
    assert_eq!(input["kind"], "permission");
    assert!(input["inputId"]
        .as_str()
        .unwrap()
        .starts_with("permission-"));
    assert_eq!(input["toolUseId"], "call_fd93c003");

    let pipe = stream(&capture("out_pipe1.json"));
    let sequences: Vec<i64> = pipe
        .iter()
        .filter_map(|f| lenient_i64(f.iac_code()?.get("pipeline")?.get("sequence")?))
        .collect();
    assert!(sequences.len() >= 9, "{sequences:?}");
    assert_eq!(sequences[0], 1);
    let question = pipe.last().unwrap();
    assert_eq!(question.state(), Some(&TaskState::InputRequired));
    assert_eq!(
        question.iac_code().unwrap().get("input").unwrap()["kind"],
        "ask_user_question"
    );
}

#[test]
fn failures_and_cancellations_keep_their_states() {
    let fail = stream(&capture("out_fail.json"));
    assert!(fail.iter().any(|f| f.state() == Some(&TaskState::Failed)));
    let cancelled = capture("out_cancel_task.json");
    let task: Task = serde_json::from_value(cancelled["body"]["result"].clone()).unwrap();
    assert_eq!(task.status.state, TaskState::Canceled);
    assert_eq!(task.status.state.wire_name(), "TASK_STATE_CANCELED");
    let missing = capture("out_gettask_missing.json");
    let response: JsonRpcResponse = serde_json::from_value(missing["body"].clone()).unwrap();
    assert_eq!(response.error.unwrap().code, -32001);
    let unknown = capture("out_unknown_method.json");
    let response: JsonRpcResponse = serde_json::from_value(unknown["body"].clone()).unwrap();
    assert_eq!(response.error.unwrap().code, -32601);
}

#[test]
fn frame_kinds_not_in_the_captures_parse_too() {
    // Shapes from A2A-WIRE.md §3.4, §3.5, §4.9 and a pass-through error.
    let artifact = json!({"artifactUpdate": {"taskId": "t", "contextId": "c", "lastChunk": true,
        "artifact": {"artifactId": "a1", "name": "main.yaml", "parts": [{"url": "file:///x/main.yaml",
        "filename": "main.yaml", "mediaType": "text/yaml", "metadata": {"byteSize": 812.0}}],
        "metadata": {"byteSize": 812.0, "sha256": "ab"}}}});
    let frame: StreamResponse = serde_json::from_value(artifact.clone()).unwrap();
    check_frame("artifact", &artifact, &frame);
    let StreamResponse::ArtifactUpdate(update) = &frame else {
        panic!("{frame:?}");
    };
    assert_eq!(update.last_chunk, Some(true));
    assert_eq!(update.artifact, artifact["artifactUpdate"]["artifact"]);

    let ack = json!({"message": {"messageId": "permission-ack-1", "taskId": "t", "contextId": "c",
        "role": "ROLE_AGENT", "parts": [{"data": {"schemaVersion": 1.0, "kind": "permission_ack",
        "inputId": "permission-1", "decision": "allow_once", "accepted": true},
        "mediaType": "application/json"}]}});
    let frame: StreamResponse = serde_json::from_value(ack.clone()).unwrap();
    check_frame("ack", &ack, &frame);
    let StreamResponse::Message(message) = &frame else {
        panic!("{frame:?}");
    };
    assert!(message.is_agent());
    assert_eq!(message.parts[0].data.as_ref().unwrap()["accepted"], true);

    let batch = json!({"statusUpdate": {"taskId": "t", "contextId": "c",
        "status": {"state": "TASK_STATE_INPUT_REQUIRED"},
        "metadata": {"iac_code": {"pipelineBatch": {"schemaVersion": "1.0",
            "extensionUri": "urn:iac-code:a2a:pipeline-events:v1",
            "events": [
                {"eventId": "e41", "sequence": 41.0, "eventType": "text_delta", "status": "working",
                 "iacCodeSessionId": "s", "data": {"text": "a"}},
                {"eventId": "e42", "sequence": 42.0, "eventType": "input_required",
                 "status": "input_required", "data": {}}
            ]},
            "input": {"schemaVersion": 1.0, "kind": "ask_user_question", "inputId": "ask-1"}}}}});
    let frame: StreamResponse = serde_json::from_value(batch.clone()).unwrap();
    check_frame("batch", &batch, &frame);

    let busy: JsonRpcResponse = serde_json::from_value(json!({"jsonrpc": "2.0", "id": "1",
        "error": {"code": -32603, "message": "busy",
                  "data": {"code": "SESSION_BACKUP_NOT_READY", "retryable": true}}}))
    .unwrap();
    assert!(busy.error.unwrap().is_session_backup_not_ready());
}

#[test]
fn states_are_read_in_every_spelling() {
    let cases = [
        ("TASK_STATE_INPUT_REQUIRED", TaskState::InputRequired),
        ("input-required", TaskState::InputRequired),
        ("input_required", TaskState::InputRequired),
        ("TASK_STATE_AUTH_REQUIRED", TaskState::AuthRequired),
        ("canceled", TaskState::Canceled),
        ("cancelled", TaskState::Canceled),
        (" Working ", TaskState::Working),
        (
            "TASK_STATE_UNSPECIFIED",
            TaskState::Other("unspecified".into()),
        ),
    ];
    for (raw, expected) in cases {
        let state: TaskState = serde_json::from_value(json!(raw)).unwrap();
        assert_eq!(state, expected, "{raw}");
    }
}

// ---- helpers ----

fn rpc(name: &str, raw: &Value) -> JsonRpcResponse {
    let response: JsonRpcResponse =
        serde_json::from_value(raw.clone()).unwrap_or_else(|e| panic!("{name}: {e}: {raw}"));
    assert_eq!(response.jsonrpc, "2.0", "{name}");
    assert!(
        response.result.is_some() != response.error.is_some(),
        "{name}"
    );
    response
}

fn stream(capture: &Value) -> Vec<StreamResponse> {
    capture["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| serde_json::from_value(e["result"].clone()).unwrap())
        .collect()
}

fn status_message(frame: &StreamResponse) -> Option<&Message> {
    match frame {
        StreamResponse::Task(t) => t.status.message.as_deref(),
        StreamResponse::StatusUpdate(s) => s.status.message.as_deref(),
        _ => None,
    }
}

/// Compares what the adapter reads from `frame` with the raw `result`.
fn check_frame(name: &str, raw: &Value, frame: &StreamResponse) {
    let (kind, inner) = raw
        .as_object()
        .and_then(|o| o.iter().next())
        .expect("a one-key result");
    assert_eq!(raw.as_object().unwrap().len(), 1, "{name}: {raw}");
    let expected_task = inner.get("taskId").or_else(|| inner.get("id"));
    assert_eq!(
        frame.task_id(),
        expected_task.and_then(Value::as_str),
        "{name}"
    );
    assert_eq!(
        frame.context_id(),
        inner.get("contextId").and_then(Value::as_str),
        "{name}"
    );
    if let Some(state) = inner.pointer("/status/state").and_then(Value::as_str) {
        let parsed = frame.state().expect("a state");
        assert_eq!(parsed, &TaskState::parse(state), "{name}");
        assert!(!matches!(parsed, TaskState::Other(_)), "{name}: {state}");
        assert_eq!(parsed.wire_name(), state, "{name}");
    }
    if let Some(message) = inner.pointer("/status/message") {
        check_message(name, message, status_message(frame).expect("a message"));
    }
    match frame {
        StreamResponse::Task(task) => check_task(name, inner, task),
        StreamResponse::Message(message) => check_message(name, inner, message),
        StreamResponse::StatusUpdate(_) | StreamResponse::ArtifactUpdate(_) => {}
    }
    let metadata = metadata_of(frame);
    if kind != "artifactUpdate" {
        assert_eq!(metadata.as_ref(), inner.get("metadata"), "{name}");
    }
    let iac_object = metadata
        .as_ref()
        .and_then(|m| m.get("iac_code")?.as_object());
    assert_eq!(frame.iac_code().is_some(), iac_object.is_some(), "{name}");
    if let (Some(iac), Some(object)) = (frame.iac_code(), iac_object) {
        for (key, value) in object {
            assert_eq!(iac.get(key), Some(value), "{name}: iac_code.{key}");
        }
        check_iac_code(name, iac);
        walk_numbers(name, &Value::Object(object.clone()));
    }
    // What the core writes back reads the same again.
    let again: StreamResponse =
        serde_json::from_str(&serde_json::to_string(frame).unwrap()).unwrap();
    assert_eq!(&again, frame, "{name}");
}

fn check_task(name: &str, raw: &Value, task: &Task) {
    assert_eq!(task.id, raw["id"].as_str().unwrap(), "{name}");
    assert_eq!(
        Some(task.context_id.as_str()),
        raw["contextId"].as_str(),
        "{name}"
    );
    assert_eq!(
        task.status.state,
        TaskState::parse(raw["status"]["state"].as_str().unwrap()),
        "{name}"
    );
    let history = raw.get("history").and_then(Value::as_array);
    assert_eq!(task.history.len(), history.map_or(0, Vec::len), "{name}");
    for (parsed, raw) in task.history.iter().zip(history.into_iter().flatten()) {
        check_message(name, raw, parsed);
    }
    assert_eq!(task.metadata.as_ref(), raw.get("metadata"), "{name}");
    if let Some(iac) = IacCode::of_value(task.metadata.as_ref()) {
        check_iac_code(name, iac);
        walk_numbers(name, &task.metadata.as_ref().unwrap()["iac_code"]);
    }
}

fn check_message(name: &str, raw: &Value, message: &Message) {
    assert_eq!(
        message.message_id,
        raw["messageId"].as_str().unwrap(),
        "{name}"
    );
    assert!(!message.message_id.is_empty(), "{name}");
    assert_eq!(message.role, raw["role"].as_str().unwrap(), "{name}");
    let text: String = raw["parts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p.get("text").and_then(Value::as_str))
        .collect();
    assert_eq!(message.text(), text, "{name}");
    assert_eq!(message.parts.len(), raw["parts"].as_array().unwrap().len());
    for (part, raw) in message.parts.iter().zip(raw["parts"].as_array().unwrap()) {
        assert_eq!(&serde_json::to_value(part).unwrap(), raw, "{name}: part");
    }
}

/// A frame's `metadata` as JSON.
fn metadata_of(frame: &StreamResponse) -> Option<Value> {
    match frame {
        StreamResponse::Task(t) => t.metadata.clone(),
        StreamResponse::StatusUpdate(s) => s.metadata.as_ref().map(StatusMetadata::to_value),
        StreamResponse::ArtifactUpdate(_) => None,
        StreamResponse::Message(m) => m.metadata.clone(),
    }
}

/// The keys the adapter reads keep their shapes; every integral number reads
/// back through `lenient_i64`.
fn check_iac_code(name: &str, iac: IacCode<'_>) {
    if let Some(session) = iac.get("iacCodeSessionId") {
        assert!(session.as_str().is_some_and(|s| !s.is_empty()), "{name}");
    }
    if let Some(usage) = iac.get("usage") {
        for key in ["inputTokens", "outputTokens", "totalTokens"] {
            assert!(lenient_u64(&usage[key]).is_some(), "{name}: usage.{key}");
        }
    }
    if let Some(input) = iac.get("input") {
        assert_eq!(lenient_i64(&input["schemaVersion"]), Some(1), "{name}");
        assert!(input["inputId"].as_str().is_some(), "{name}");
        assert!(input["kind"].as_str().is_some(), "{name}");
    }
    if let Some(envelope) = iac.get("pipeline") {
        check_envelope(name, envelope);
    }
    if let Some(batch) = iac.get("pipelineBatch") {
        for envelope in batch["events"].as_array().expect("batch events") {
            check_envelope(name, envelope);
        }
    }
}

fn check_envelope(name: &str, envelope: &Value) {
    let sequence = lenient_i64(&envelope["sequence"]);
    assert!(sequence.is_some_and(|s| s > 0), "{name}: {envelope}");
    assert!(envelope["eventId"].as_str().is_some(), "{name}");
    assert!(envelope["eventType"].as_str().is_some(), "{name}");
}

fn walk_numbers(name: &str, value: &Value) {
    match value {
        Value::Number(n) => {
            let f = n.as_f64().unwrap();
            if f.fract() != 0.0 {
                assert_eq!(lenient_i64(value), None, "{name}: {n}");
            } else if f.abs() < 9.0e15 {
                assert_eq!(lenient_i64(value), Some(f as i64), "{name}: {n}");
            }
        }
        Value::Array(items) => items.iter().for_each(|v| walk_numbers(name, v)),
        Value::Object(map) => map.values().for_each(|v| walk_numbers(name, v)),
        _ => {}
    }
}

/// A tiny SSE splitter for the captures: events end at a blank line, lines
/// end in CRLF, LF or CR, `:` lines are comments, `data:` lines join with LF.
/// (The core's real push parser lives elsewhere; this one only reads tests.)
fn sse_data(raw: &str) -> Vec<String> {
    let normalised = raw.replace("\r\n", "\n").replace('\r', "\n");
    let mut events = Vec::new();
    let mut data: Option<String> = None;
    for line in normalised.split('\n') {
        if line.is_empty() {
            events.extend(data.take());
            continue;
        }
        if line.starts_with(':') {
            continue;
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        if field == "data" {
            match &mut data {
                Some(d) => {
                    d.push('\n');
                    d.push_str(value);
                }
                None => data = Some(value.to_owned()),
            }
        }
    }
    events
}
