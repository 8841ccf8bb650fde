//! The mapper's public API as the machine uses it: durable state field
//! names, reports, interrupts built from stored projections, span closing
//! order, the answered-tool result and the session value.

use iac_agui_core::a2a::StreamResponse;
use iac_agui_core::agui::EventBody;
use iac_agui_core::ids::IdGen;
use iac_agui_core::json::sha256_hex;
use iac_agui_core::mapper::{
    build_interrupt, iso_utc, public_projection, DurableMapperState, FeedOptions, Mapper,
    RunContext, SessionInfo,
};
use iac_agui_core::Language;
use serde_json::{json, Value};

fn ctx() -> RunContext {
    serde_json::from_value(json!({"threadId": "t-1", "runId": "r-1", "contextId": "ctx-1"}))
        .expect("context")
}

fn frame(iac_code: Value, text: Option<&str>) -> StreamResponse {
    let mut status = json!({"state": "TASK_STATE_WORKING"});
    if let Some(text) = text {
        status["message"] =
            json!({"messageId": "m-1", "role": "ROLE_AGENT", "parts": [{"text": text}]});
    }
    serde_json::from_value(
        json!({"statusUpdate": {"taskId": "task-1", "contextId": "ctx-1",
        "status": status, "metadata": {"iac_code": iac_code}}}),
    )
    .expect("frame")
}

fn types(events: &[iac_agui_core::agui::Event]) -> Vec<&'static str> {
    events.iter().map(|e| e.body.type_name()).collect()
}

#[test]
fn durable_state_uses_the_document_field_names() {
    let mut state = DurableMapperState {
        pipeline_sequence: 7,
        ..DurableMapperState::default()
    };
    state.pipeline_open_steps.insert("step:b".into());
    state.pipeline_open_steps.insert("candidate:sp1:a".into());
    let value = serde_json::to_value(&state).expect("serialise");
    assert_eq!(
        value,
        json!({"pipelineSequence": 7, "pipelineOpenSteps": ["candidate:sp1:a", "step:b"],
               "textSnapshotDigests": []})
    );
    let back: DurableMapperState = serde_json::from_value(value).expect("parse");
    assert_eq!(back, state);
    let empty: DurableMapperState = serde_json::from_value(json!({})).expect("defaults");
    assert_eq!(empty, DurableMapperState::default());
}

#[test]
fn run_context_defaults() {
    let ctx = ctx();
    assert_eq!(ctx.language, Language::En);
    assert_eq!(ctx.interrupt_ttl_ms, 540_000);
    assert!(ctx.applied_input_ids.is_empty());
}

#[test]
fn report_carries_ids_state_and_inputs() {
    let mut mapper = Mapper::new(ctx(), DurableMapperState::default());
    let mut ids = IdGen::new(1);
    let input = json!({"kind": "permission", "inputId": "p-1", "requestTaskId": "task-1",
        "contextId": "ctx-1", "toolUseId": "call-1", "required": true, "llmApiKey": "secret"});
    let mapped = mapper.feed(
        &frame(json!({"iacCodeSessionId": "s-1", "input": input,
            "pendingPermissions": [input, {"inputId": "p-2", "required": true, "kind": "permission"}]}), None),
        FeedOptions::LIVE,
        1_000,
        &mut ids,
    );
    let report = mapped.report;
    assert_eq!(report.task_id.as_deref(), Some("task-1"));
    assert_eq!(report.context_id.as_deref(), Some("ctx-1"));
    assert_eq!(report.session_ids, vec!["s-1".to_owned()]);
    assert_eq!(report.state.as_ref().map(|s| s.as_str()), Some("working"));
    let ids_and_sideband: Vec<(&str, bool)> = report
        .inputs
        .iter()
        .map(|i| (i.input_id.as_str(), i.sideband))
        .collect();
    assert_eq!(ids_and_sideband, vec![("p-1", false), ("p-2", true)]);
    let first = &report.inputs[0];
    assert_eq!(first.request_task_id.as_deref(), Some("task-1"));
    assert_eq!(first.expires_at, iso_utc(1_000 + 540_000));
    assert!(
        first.projection.get("llmApiKey").is_none(),
        "secrets never kept"
    );
    assert_eq!(first.interrupt.tool_call_id.as_deref(), Some("call-1"));
    assert_eq!(first.interrupt.reason, "tool_call");
}

#[test]
fn applied_inputs_are_not_reported() {
    let mut mapper = Mapper::new(ctx(), DurableMapperState::default());
    mapper.mark_applied("p-1");
    let mapped = mapper.feed(
        &frame(json!({"input": {"inputId": "p-1", "required": true}}), None),
        FeedOptions::LIVE,
        0,
        &mut IdGen::new(1),
    );
    assert!(mapped.report.inputs.is_empty());
}

#[test]
fn stored_projection_rebuilds_the_same_interrupt() {
    let mut mapper = Mapper::new(ctx(), DurableMapperState::default());
    let mapped = mapper.feed(
        &frame(
            json!({"input": {"kind": "ask_user_question", "inputId": "q-1", "required": true,
            "prompt": "Which?", "options": [{"id": "a", "label": "A"}]}}),
            None,
        ),
        FeedOptions::LIVE,
        5,
        &mut IdGen::new(1),
    );
    let input = &mapped.report.inputs[0];
    let rebuilt = build_interrupt(&input.projection, &input.expires_at, Language::En);
    assert_eq!(rebuilt, input.interrupt);
    assert_eq!(rebuilt.message.as_deref(), Some("Which?\n- a: A"));
}

#[test]
fn public_projection_keeps_only_listed_fields() {
    let projection = public_projection(&json!({"inputId": "x", "prompt": "p", "token": "t",
        "accessKeySecret": "s", "options": []}));
    assert_eq!(
        projection,
        json!({"inputId": "x", "prompt": "p", "options": []})
    );
    assert_eq!(public_projection(&json!("nope")), json!({}));
}

#[test]
fn close_all_closes_reasoning_tools_text_then_steps() {
    let mut mapper = Mapper::new(
        ctx(),
        DurableMapperState {
            pipeline_open_steps: ["step:s".to_owned()].into_iter().collect(),
            ..DurableMapperState::default()
        },
    );
    let mut ids = IdGen::new(1);
    assert_eq!(types(&mapper.reopen_steps(0)), vec!["STEP_STARTED"]);
    assert!(
        mapper.reopen_steps(0).is_empty(),
        "re-opening twice is a no-op"
    );
    mapper.feed(
        &frame(json!({}), Some("Text")),
        FeedOptions::LIVE,
        0,
        &mut ids,
    );
    mapper.feed(
        &frame(
            json!({"tool": {"status": "started", "toolUseId": "c", "name": "n"}}),
            None,
        ),
        FeedOptions::LIVE,
        0,
        &mut ids,
    );
    mapper.feed(
        &frame(
            json!({"thinking": {"type": "raw_thinking", "text": "r"}}),
            None,
        ),
        FeedOptions::LIVE,
        0,
        &mut ids,
    );
    assert!(mapper.has_open_spans());
    let closing = mapper.close_all(9);
    assert_eq!(
        types(&closing),
        vec![
            "REASONING_MESSAGE_END",
            "REASONING_END",
            "TOOL_CALL_END",
            "TEXT_MESSAGE_END",
            "STEP_FINISHED"
        ]
    );
    assert!(closing.iter().all(|e| e.timestamp == 9));
    assert!(!mapper.has_open_spans());
    assert!(mapper.close_all(10).is_empty());
    assert!(
        mapper.durable().pipeline_open_steps.contains("step:s"),
        "closing the run's spans keeps the durable step"
    );
}

#[test]
fn finalised_text_enables_resume_replay() {
    let mut first = Mapper::new(ctx(), DurableMapperState::default());
    let mut ids = IdGen::new(1);
    first.feed(
        &frame(json!({}), Some("Hello ")),
        FeedOptions::LIVE,
        0,
        &mut ids,
    );
    first.feed(
        &frame(json!({}), Some("world.")),
        FeedOptions::LIVE,
        0,
        &mut ids,
    );
    first.finalize_text_snapshots();
    assert!(first
        .durable()
        .text_snapshot_digests
        .contains(&sha256_hex(b"Hello world.")));
    let mut second = Mapper::new(
        RunContext {
            run_id: "r-2".into(),
            ..ctx()
        },
        first.durable().clone(),
    );
    let mapped = second.feed(
        &frame(json!({}), Some("Hello world. And more.")),
        FeedOptions::LIVE,
        0,
        &mut ids,
    );
    let deltas: Vec<&str> = mapped
        .events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::TextMessageContent { delta, .. } => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(deltas, vec![" And more."]);
}

#[test]
fn answered_tool_result_comes_once() {
    let mut mapper = Mapper::new(ctx(), DurableMapperState::default());
    let events = mapper.tool_result_for_answer("call-q", "Beijing", 3);
    assert_eq!(
        events[0].body,
        EventBody::ToolCallResult {
            message_id: "tool-result-call-q".into(),
            tool_call_id: "call-q".into(),
            content: "Beijing".into(),
            role: Some("tool".into()),
        }
    );
    let later = mapper.feed(
        &frame(
            json!({"tool": {"status": "completed", "toolUseId": "call-q", "result": "x"}}),
            None,
        ),
        FeedOptions::LIVE,
        4,
        &mut IdGen::new(1),
    );
    assert!(later.events.is_empty());
    assert!(mapper
        .tool_result_for_answer("call-q", "again", 5)
        .is_empty());
}

#[test]
fn usage_is_none_until_recorded() {
    let mut mapper = Mapper::new(ctx(), DurableMapperState::default());
    assert_eq!(mapper.usage(), None);
    mapper.feed(
        &frame(
            json!({"usage": {"provider": "p", "inputTokens": 2.0, "outputTokens": 3}}),
            None,
        ),
        FeedOptions::LIVE,
        0,
        &mut IdGen::new(1),
    );
    let usage = mapper.usage().expect("usage");
    assert_eq!(usage.len(), 1);
    assert_eq!(usage[0].provider.as_deref(), Some("p"));
    assert_eq!(usage[0].model, None);
    assert_eq!((usage[0].input_tokens, usage[0].output_tokens), (2, 3));
}

#[test]
fn session_value_shape() {
    let mapper = Mapper::new(ctx(), DurableMapperState::default());
    let info = SessionInfo {
        execution_id: "e-1".into(),
        task_id: None,
        ros_invocation_id: "ros-1".into(),
        session_id: Some("s-1".into()),
    };
    assert_eq!(
        mapper.session_value(&info),
        json!({"schemaVersion": 1, "threadId": "t-1", "aguiRunId": "r-1", "executionId": "e-1",
               "contextId": "ctx-1", "taskId": null, "rosInvocationId": "ros-1", "sessionId": "s-1"})
    );
    assert!(matches!(
        mapper.session_event(&info),
        EventBody::Custom { ref name, .. } if name == "iac-code.session.v1"
    ));
}
