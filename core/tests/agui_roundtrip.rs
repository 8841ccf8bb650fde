//! AG-UI events on the wire: every event type reads and writes back to the
//! same bytes, absent optionals are omitted (never `null`), timestamps are
//! integers.

use std::collections::BTreeSet;

use iac_agui_core::agui::{Event, EventBody, Interrupt, Outcome, TokenUsage};
use serde_json::{json, Value};

/// One line per event shape, in the exact bytes the adapter writes: compact,
/// `timestamp` first, then `type`, then the fields in declaration order.
const LINES: &[&str] = &[
    r#"{"timestamp":1764668400000,"type":"RUN_STARTED","threadId":"t-1","runId":"r-1"}"#,
    r#"{"timestamp":1764668400001,"type":"RUN_STARTED","threadId":"t-1","runId":"r-2","parentRunId":"r-1"}"#,
    r#"{"timestamp":1764668400002,"type":"RUN_FINISHED","threadId":"t-1","runId":"r-1","outcome":{"type":"success"}}"#,
    r#"{"timestamp":1764668400003,"type":"RUN_FINISHED","threadId":"t-1","runId":"r-1","outcome":{"type":"success"},"usage":[{"provider":"openai","model":"qwen","inputTokens":120,"outputTokens":15,"totalTokens":235,"cachedInputTokens":100},{"inputTokens":1,"outputTokens":2,"totalTokens":3,"cachedInputTokens":0}]}"#,
    r#"{"timestamp":1764668400004,"type":"RUN_FINISHED","threadId":"t-1","runId":"r-1","outcome":{"type":"interrupt","interrupts":[{"id":"permission-6fec","reason":"tool_call","message":"Run a local shell command Allow once?","toolCallId":"call_fd93c003","responseSchema":{"additionalProperties":false,"properties":{"decision":{"enum":["allow_once","deny"],"type":"string"}},"required":["decision"],"type":"object"},"expiresAt":"2026-12-02T10:00:00Z","metadata":{"schemaVersion":1,"toolName":"bash"}},{"id":"q-1","reason":"input_required"}]}}"#,
    r#"{"timestamp":1764668400005,"type":"RUN_ERROR","message":"The A2A execution failed."}"#,
    r#"{"timestamp":1764668400006,"type":"RUN_ERROR","message":"Die Ausführung wurde abgebrochen.","code":"CANCELLED","usage":[{"inputTokens":5,"outputTokens":0,"totalTokens":5,"cachedInputTokens":0}]}"#,
    r#"{"timestamp":1764668400007,"type":"TEXT_MESSAGE_START","messageId":"task-1-message","role":"assistant"}"#,
    r#"{"timestamp":1764668400008,"type":"TEXT_MESSAGE_CONTENT","messageId":"task-1-message","delta":"Olá, \"mundo\" 😀\n"}"#,
    r#"{"timestamp":1764668400009,"type":"TEXT_MESSAGE_END","messageId":"task-1-message"}"#,
    r#"{"timestamp":1764668400010,"type":"REASONING_START","messageId":"reasoning-1"}"#,
    r#"{"timestamp":1764668400011,"type":"REASONING_MESSAGE_START","messageId":"reasoning-1-m","role":"reasoning"}"#,
    r#"{"timestamp":1764668400012,"type":"REASONING_MESSAGE_CONTENT","messageId":"reasoning-1-m","delta":"thinking…"}"#,
    r#"{"timestamp":1764668400013,"type":"REASONING_MESSAGE_END","messageId":"reasoning-1-m"}"#,
    r#"{"timestamp":1764668400014,"type":"REASONING_END","messageId":"reasoning-1"}"#,
    r#"{"timestamp":1764668400015,"type":"TOOL_CALL_START","toolCallId":"call_1","toolCallName":"bash"}"#,
    r#"{"timestamp":1764668400016,"type":"TOOL_CALL_START","toolCallId":"call_2","toolCallName":"read","parentMessageId":"task-1-message"}"#,
    r#"{"timestamp":1764668400017,"type":"TOOL_CALL_ARGS","toolCallId":"call_1","delta":"{\"command\":\"ls -la\"}"}"#,
    r#"{"timestamp":1764668400018,"type":"TOOL_CALL_END","toolCallId":"call_1"}"#,
    r#"{"timestamp":1764668400019,"type":"TOOL_CALL_RESULT","messageId":"tool-result-call_1","toolCallId":"call_1","content":"total 0"}"#,
    r#"{"timestamp":1764668400020,"type":"TOOL_CALL_RESULT","messageId":"tool-result-call_2","toolCallId":"call_2","content":"","role":"tool"}"#,
    r#"{"timestamp":1764668400021,"type":"STEP_STARTED","stepName":"intent_parsing"}"#,
    r#"{"timestamp":1764668400022,"type":"STEP_FINISHED","stepName":"candidate:sub-1:design"}"#,
    r#"{"timestamp":1764668400023,"type":"ACTIVITY_SNAPSHOT","messageId":"pipeline-ctx","activityType":"iac-code.pipeline","content":{"steps":[{"id":"a","status":"done"}],"total":5}}"#,
    r#"{"timestamp":1764668400024,"type":"ACTIVITY_SNAPSHOT","messageId":"pipeline-ctx","activityType":"iac-code.pipeline","content":{},"replace":true}"#,
    r#"{"timestamp":1764668400025,"type":"CUSTOM","name":"iac-code.session.v1","value":{"executionId":"e-1","schemaVersion":1}}"#,
    r#"{"timestamp":1764668400026,"type":"CUSTOM","name":"iac-code.null.v1","value":null}"#,
];

/// Every `type` the adapter emits (AGUI.md §3).
const ALL_TYPES: [&str; 19] = [
    "RUN_STARTED",
    "RUN_FINISHED",
    "RUN_ERROR",
    "TEXT_MESSAGE_START",
    "TEXT_MESSAGE_CONTENT",
    "TEXT_MESSAGE_END",
    "REASONING_START",
    "REASONING_MESSAGE_START",
    "REASONING_MESSAGE_CONTENT",
    "REASONING_MESSAGE_END",
    "REASONING_END",
    "TOOL_CALL_START",
    "TOOL_CALL_ARGS",
    "TOOL_CALL_END",
    "TOOL_CALL_RESULT",
    "STEP_STARTED",
    "STEP_FINISHED",
    "ACTIVITY_SNAPSHOT",
    "CUSTOM",
];

/// Exhaustive on purpose: a new event variant does not compile here until it
/// is named, which is the reminder to add a line for it above.
fn variant_name(body: &EventBody) -> &'static str {
    match body {
        EventBody::RunStarted { .. } => "RUN_STARTED",
        EventBody::RunFinished { .. } => "RUN_FINISHED",
        EventBody::RunError { .. } => "RUN_ERROR",
        EventBody::TextMessageStart { .. } => "TEXT_MESSAGE_START",
        EventBody::TextMessageContent { .. } => "TEXT_MESSAGE_CONTENT",
        EventBody::TextMessageEnd { .. } => "TEXT_MESSAGE_END",
        EventBody::ReasoningStart { .. } => "REASONING_START",
        EventBody::ReasoningMessageStart { .. } => "REASONING_MESSAGE_START",
        EventBody::ReasoningMessageContent { .. } => "REASONING_MESSAGE_CONTENT",
        EventBody::ReasoningMessageEnd { .. } => "REASONING_MESSAGE_END",
        EventBody::ReasoningEnd { .. } => "REASONING_END",
        EventBody::ToolCallStart { .. } => "TOOL_CALL_START",
        EventBody::ToolCallArgs { .. } => "TOOL_CALL_ARGS",
        EventBody::ToolCallEnd { .. } => "TOOL_CALL_END",
        EventBody::ToolCallResult { .. } => "TOOL_CALL_RESULT",
        EventBody::StepStarted { .. } => "STEP_STARTED",
        EventBody::StepFinished { .. } => "STEP_FINISHED",
        EventBody::ActivitySnapshot { .. } => "ACTIVITY_SNAPSHOT",
        EventBody::Custom { .. } => "CUSTOM",
    }
}

fn parse(line: &str) -> Event {
    serde_json::from_str(line).unwrap_or_else(|e| panic!("{line}: {e}"))
}

#[test]
fn every_line_round_trips_to_the_same_bytes() {
    for line in LINES {
        let event = parse(line);
        assert_eq!(event.to_json(), *line);
        assert_eq!(serde_json::to_string(&event).unwrap(), *line);
        // And once more through a value, as a host relaying JSON would.
        let value: Value = serde_json::from_str(line).unwrap();
        let again: Event = serde_json::from_value(value).unwrap();
        assert_eq!(again, event);
    }
}

#[test]
fn the_lines_cover_every_event_type() {
    let seen: BTreeSet<&str> = LINES
        .iter()
        .map(|line| {
            let event = parse(line);
            assert_eq!(event.body.type_name(), variant_name(&event.body));
            let tag: Value = serde_json::from_str(line).unwrap();
            assert_eq!(tag["type"], event.body.type_name());
            event.body.type_name()
        })
        .collect();
    let all: BTreeSet<&str> = ALL_TYPES.into_iter().collect();
    assert_eq!(seen, all);
}

#[test]
fn only_run_finished_and_run_error_are_terminal() {
    for line in LINES {
        let body = parse(line).body;
        let expected = matches!(body.type_name(), "RUN_FINISHED" | "RUN_ERROR");
        assert_eq!(body.is_terminal(), expected, "{line}");
    }
}

#[test]
fn absent_optionals_are_omitted_never_null() {
    let bare_interrupt = Interrupt {
        id: "i-1".into(),
        reason: "input_required".into(),
        message: None,
        tool_call_id: None,
        response_schema: None,
        expires_at: None,
        metadata: None,
    };
    assert_eq!(
        serde_json::to_string(&bare_interrupt).unwrap(),
        r#"{"id":"i-1","reason":"input_required"}"#
    );
    let bodies = [
        EventBody::RunStarted {
            thread_id: "t".into(),
            run_id: "r".into(),
            parent_run_id: None,
        },
        EventBody::RunFinished {
            thread_id: "t".into(),
            run_id: "r".into(),
            outcome: Outcome::Interrupt {
                interrupts: vec![bare_interrupt],
            },
            usage: None,
        },
        EventBody::RunError {
            message: "m".into(),
            code: None,
            usage: None,
        },
        EventBody::ToolCallStart {
            tool_call_id: "c".into(),
            tool_call_name: "n".into(),
            parent_message_id: None,
        },
        EventBody::ToolCallResult {
            message_id: "m".into(),
            tool_call_id: "c".into(),
            content: "x".into(),
            role: None,
        },
        EventBody::ActivitySnapshot {
            message_id: "m".into(),
            activity_type: "a".into(),
            content: json!({}),
            replace: None,
        },
        EventBody::RunFinished {
            thread_id: "t".into(),
            run_id: "r".into(),
            outcome: Outcome::Success,
            usage: Some(vec![TokenUsage {
                provider: None,
                model: None,
                input_tokens: 1,
                output_tokens: 1,
                total_tokens: 2,
                cached_input_tokens: 0,
            }]),
        },
    ];
    for body in bodies {
        let line = Event::new(7, body).to_json();
        assert!(!line.contains("null"), "{line}");
        for key in [
            "parentRunId",
            "usage\":null",
            "code",
            "parentMessageId",
            "role",
            "replace",
            "toolCallId\":null",
            "responseSchema",
            "expiresAt",
            "metadata",
            "provider",
            "model",
        ] {
            assert!(!line.contains(key), "{key} in {line}");
        }
    }
}

#[test]
fn outcome_shapes() {
    let success: Outcome = serde_json::from_str(r#"{"type":"success"}"#).unwrap();
    assert_eq!(success, Outcome::Success);
    assert_eq!(
        serde_json::to_string(&success).unwrap(),
        r#"{"type":"success"}"#
    );
    let interrupt: Outcome = serde_json::from_str(
        r#"{"type":"interrupt","interrupts":[{"id":"a","reason":"tool_call"}]}"#,
    )
    .unwrap();
    let Outcome::Interrupt { interrupts } = &interrupt else {
        panic!("not an interrupt: {interrupt:?}");
    };
    assert_eq!(interrupts[0].id, "a");
    // Note: serde ignores `deny_unknown_fields` on the unit variant, so
    // `{"type":"success","interrupts":[]}` still reads as a success.
    for bad in [
        r#"{"type":"SUCCESS"}"#,
        r#"{"type":"interrupt"}"#,
        r#"{"type":"failure"}"#,
        r#""success""#,
    ] {
        assert!(serde_json::from_str::<Outcome>(bad).is_err(), "{bad}");
    }
}

#[test]
fn timestamps_are_integer_milliseconds() {
    let event = Event::new(
        1_764_668_400_123,
        EventBody::StepStarted {
            step_name: "s".into(),
        },
    );
    let value: Value = serde_json::from_str(&event.to_json()).unwrap();
    assert!(value["timestamp"].is_i64(), "{value}");
    assert_eq!(value["timestamp"], 1_764_668_400_123_i64);
    for bad in [
        r#"{"timestamp":1.5,"type":"STEP_STARTED","stepName":"s"}"#,
        r#"{"timestamp":"1","type":"STEP_STARTED","stepName":"s"}"#,
        r#"{"type":"STEP_STARTED","stepName":"s"}"#,
    ] {
        assert!(serde_json::from_str::<Event>(bad).is_err(), "{bad}");
    }
}

#[test]
fn unknown_types_and_missing_fields_are_refused() {
    for bad in [
        r#"{"timestamp":1,"type":"MESSAGES_SNAPSHOT","messages":[]}"#,
        r#"{"timestamp":1,"type":"run_started","threadId":"t","runId":"r"}"#,
        r#"{"timestamp":1,"type":"RUN_STARTED","threadId":"t"}"#,
        r#"{"timestamp":1,"type":"TEXT_MESSAGE_CONTENT","messageId":"m"}"#,
        r#"{"timestamp":1,"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#,
    ] {
        assert!(serde_json::from_str::<Event>(bad).is_err(), "{bad}");
    }
}

/// The delta events are written by hand (`Event::to_json`); they must be
/// the bytes serde writes for every character that JSON escapes, and for
/// any timestamp.
#[test]
fn hand_written_delta_events_match_serde_for_every_escape() {
    let mut texts: Vec<String> = (0u8..0x80).map(|b| format!("a{}z", b as char)).collect();
    texts.extend(
        [
            "",
            "\"\\\"",
            "\u{7f}\u{80}é😀\u{2028}\u{fffd}",
            "\n\r\t\u{8}\u{c}\u{0}\u{1f}",
        ]
        .map(String::from),
    );
    let all: String = (0u8..0x80).map(char::from).collect();
    texts.push(all);
    for timestamp in [0, 7, -1, i64::MIN, i64::MAX, 1_764_668_400_008] {
        for text in &texts {
            let bodies = [
                EventBody::TextMessageContent {
                    message_id: text.clone(),
                    delta: text.clone(),
                },
                EventBody::ReasoningMessageContent {
                    message_id: "r".into(),
                    delta: text.clone(),
                },
                EventBody::ToolCallArgs {
                    tool_call_id: text.clone(),
                    delta: "{}".into(),
                },
            ];
            for body in bodies {
                let event = Event::new(timestamp, body);
                assert_eq!(event.to_json(), serde_json::to_string(&event).unwrap());
            }
        }
    }
}
