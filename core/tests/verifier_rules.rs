//! The verifier rejects each known-bad sequence of AGUI.md §6 (one test per
//! rule, named after the scenario the published clients were tested with) and
//! accepts the legal ones.

use iac_agui_core::agui::{EventBody, Interrupt, Outcome};
use iac_agui_core::verifier::{verify, Rule, Verifier, Violation};
use serde_json::json;

fn started() -> EventBody {
    EventBody::RunStarted {
        thread_id: "t-1".into(),
        run_id: "r-1".into(),
        parent_run_id: None,
    }
}

fn finished() -> EventBody {
    EventBody::RunFinished {
        thread_id: "t-1".into(),
        run_id: "r-1".into(),
        outcome: Outcome::Success,
        usage: None,
    }
}

fn error() -> EventBody {
    EventBody::RunError {
        message: "The A2A execution failed.".into(),
        code: Some("A2A_EXECUTION_FAILED".into()),
        usage: None,
    }
}

fn text_start(id: &str) -> EventBody {
    EventBody::TextMessageStart {
        message_id: id.into(),
        role: "assistant".into(),
    }
}

fn text(id: &str, delta: &str) -> EventBody {
    EventBody::TextMessageContent {
        message_id: id.into(),
        delta: delta.into(),
    }
}

fn text_end(id: &str) -> EventBody {
    EventBody::TextMessageEnd {
        message_id: id.into(),
    }
}

fn tool_start(id: &str) -> EventBody {
    EventBody::ToolCallStart {
        tool_call_id: id.into(),
        tool_call_name: "bash".into(),
        parent_message_id: None,
    }
}

fn tool_end(id: &str) -> EventBody {
    EventBody::ToolCallEnd {
        tool_call_id: id.into(),
    }
}

fn step(name: &str, start: bool) -> EventBody {
    if start {
        EventBody::StepStarted {
            step_name: name.into(),
        }
    } else {
        EventBody::StepFinished {
            step_name: name.into(),
        }
    }
}

fn reasoning_start(id: &str) -> Vec<EventBody> {
    vec![
        EventBody::ReasoningStart {
            message_id: id.into(),
        },
        EventBody::ReasoningMessageStart {
            message_id: id.into(),
            role: "reasoning".into(),
        },
    ]
}

fn reasoning_end(id: &str) -> Vec<EventBody> {
    vec![
        EventBody::ReasoningMessageEnd {
            message_id: id.into(),
        },
        EventBody::ReasoningEnd {
            message_id: id.into(),
        },
    ]
}

fn rule_of(events: Vec<EventBody>) -> Rule {
    match verify(&events) {
        Err(Violation { rule, .. }) => rule,
        Ok(()) => panic!("accepted: {events:?}"),
    }
}

#[test]
fn accepts_a_full_stream() {
    let mut events = vec![started(), text_start("m"), text("m", "Hi"), tool_start("c")];
    events.extend(reasoning_start("reasoning-m"));
    events.push(EventBody::ReasoningMessageContent {
        message_id: "reasoning-m".into(),
        delta: "hmm".into(),
    });
    events.extend(reasoning_end("reasoning-m"));
    events.extend([
        EventBody::ToolCallArgs {
            tool_call_id: "c".into(),
            delta: "{}".into(),
        },
        tool_end("c"),
        EventBody::ToolCallResult {
            message_id: "tool-result-old".into(),
            tool_call_id: "old".into(),
            content: "not sequenced".into(),
            role: Some("tool".into()),
        },
        step("s", true),
        step("s", false),
        text_end("m"),
        text_start("m"),
        text_end("m"),
        EventBody::Custom {
            name: "x".into(),
            value: serde_json::Value::Null,
        },
        finished(),
    ]);
    assert_eq!(verify(&events), Ok(()));
}

#[test]
fn run_error_may_leave_spans_open() {
    // AGUI.md §6 rule 10 (`run-error` scenario).
    assert_eq!(
        verify(&[started(), text_start("m"), tool_start("c"), error()]),
        Ok(())
    );
}

#[test]
fn first_not_run_started() {
    assert_eq!(
        rule_of(vec![text_start("m")]),
        Rule::FirstEventNotRunStarted
    );
    // The clients accept RUN_ERROR first; the strict harness does not.
    assert_eq!(rule_of(vec![error()]), Rule::FirstEventNotRunStarted);
}

#[test]
fn double_run_started() {
    assert_eq!(rule_of(vec![started(), started()]), Rule::SecondRunStarted);
}

#[test]
fn event_after_finish() {
    assert_eq!(
        rule_of(vec![started(), finished(), text_start("m")]),
        Rule::EventAfterTerminal
    );
    // Even a new run is refused: one run per response.
    assert_eq!(
        rule_of(vec![started(), finished(), started()]),
        Rule::EventAfterTerminal
    );
}

#[test]
fn event_after_error() {
    assert_eq!(
        rule_of(vec![started(), error(), text_start("m")]),
        Rule::EventAfterTerminal
    );
    // `rerun-after-error`: 0.0.58 rejects a new RUN_STARTED after RUN_ERROR.
    assert_eq!(
        rule_of(vec![started(), error(), started()]),
        Rule::EventAfterTerminal
    );
}

#[test]
fn text_reopened_or_not_open() {
    assert_eq!(
        rule_of(vec![started(), text_start("m"), text_start("m")]),
        Rule::TextAlreadyOpen("m".into())
    );
    assert_eq!(
        rule_of(vec![started(), text("m", "x")]),
        Rule::TextNotOpen("m".into())
    );
    assert_eq!(
        rule_of(vec![
            started(),
            text_start("m"),
            text_end("m"),
            text_end("m")
        ]),
        Rule::TextNotOpen("m".into())
    );
}

#[test]
fn tool_reopened_or_not_open() {
    assert_eq!(
        rule_of(vec![started(), tool_start("c"), tool_start("c")]),
        Rule::ToolAlreadyOpen("c".into())
    );
    assert_eq!(
        rule_of(vec![
            started(),
            EventBody::ToolCallArgs {
                tool_call_id: "c".into(),
                delta: "{}".into()
            }
        ]),
        Rule::ToolNotOpen("c".into())
    );
    assert_eq!(
        rule_of(vec![started(), tool_end("c")]),
        Rule::ToolNotOpen("c".into())
    );
}

#[test]
fn step_mismatch() {
    assert_eq!(
        rule_of(vec![started(), step("a", true), step("b", false)]),
        Rule::StepNotOpen("b".into())
    );
    assert_eq!(
        rule_of(vec![started(), step("a", true), step("a", true)]),
        Rule::StepAlreadyOpen("a".into())
    );
}

#[test]
fn open_step_at_finish() {
    assert_eq!(
        rule_of(vec![started(), step("a", true), finished()]),
        Rule::OpenAtFinish("step", "a".into())
    );
}

#[test]
fn open_text_at_finish() {
    assert_eq!(
        rule_of(vec![started(), text_start("m"), finished()]),
        Rule::OpenAtFinish("text message", "m".into())
    );
}

#[test]
fn open_tool_at_interrupt() {
    let interrupt = Interrupt {
        id: "i".into(),
        reason: "tool_call".into(),
        message: None,
        tool_call_id: Some("c".into()),
        response_schema: None,
        expires_at: None,
        metadata: None,
    };
    let finish = EventBody::RunFinished {
        thread_id: "t-1".into(),
        run_id: "r-1".into(),
        outcome: Outcome::Interrupt {
            interrupts: vec![interrupt],
        },
        usage: None,
    };
    assert_eq!(
        rule_of(vec![started(), tool_start("c"), finish]),
        Rule::OpenAtFinish("tool call", "c".into())
    );
}

#[test]
fn interrupt_empty() {
    let finish = EventBody::RunFinished {
        thread_id: "t-1".into(),
        run_id: "r-1".into(),
        outcome: Outcome::Interrupt { interrupts: vec![] },
        usage: None,
    };
    assert_eq!(rule_of(vec![started(), finish]), Rule::EmptyInterrupts);
}

#[test]
fn reasoning_orphan() {
    // Passes 0.0.58, fails 1.0.0: checked here.
    assert_eq!(
        rule_of(vec![
            started(),
            EventBody::ReasoningMessageContent {
                message_id: "r".into(),
                delta: "x".into()
            }
        ]),
        Rule::ReasoningMessageNotOpen("r".into())
    );
    assert_eq!(
        rule_of(vec![
            started(),
            EventBody::ReasoningEnd {
                message_id: "r".into()
            }
        ]),
        Rule::ReasoningNotOpen("r".into())
    );
    let mut twice = vec![started()];
    twice.extend(reasoning_start("r"));
    twice.push(EventBody::ReasoningStart {
        message_id: "r".into(),
    });
    assert_eq!(rule_of(twice), Rule::ReasoningAlreadyOpen("r".into()));
}

#[test]
fn reasoning_open_at_finish() {
    let mut events = vec![started()];
    events.extend(reasoning_start("r"));
    events.push(finished());
    assert_eq!(rule_of(events), Rule::OpenAtFinish("reasoning", "r".into()));
    let mut message_closed_span_open = vec![started()];
    message_closed_span_open.extend(reasoning_start("r"));
    message_closed_span_open.push(EventBody::ReasoningMessageEnd {
        message_id: "r".into(),
    });
    message_closed_span_open.push(finished());
    assert_eq!(
        rule_of(message_closed_span_open),
        Rule::OpenAtFinish("reasoning", "r".into())
    );
}

#[test]
fn reasoning_role_must_be_reasoning() {
    assert_eq!(
        rule_of(vec![
            started(),
            EventBody::ReasoningMessageStart {
                message_id: "r".into(),
                role: "assistant".into()
            }
        ]),
        Rule::BadRole("REASONING_MESSAGE_START", "assistant".into())
    );
}

#[test]
fn activity_content_must_be_an_object() {
    assert_eq!(
        rule_of(vec![
            started(),
            EventBody::ActivitySnapshot {
                message_id: "pipeline:p".into(),
                activity_type: "iac-code.pipeline.v1".into(),
                content: json!([1]),
                replace: Some(true)
            }
        ]),
        Rule::ActivityContentNotObject
    );
}

#[test]
fn empty_delta_is_refused() {
    assert_eq!(
        rule_of(vec![started(), text_start("m"), text("m", "")]),
        Rule::EmptyDelta("m".into())
    );
}

#[test]
fn no_terminal() {
    assert_eq!(
        rule_of(vec![started(), text_start("m"), text_end("m")]),
        Rule::MissingTerminal
    );
    assert_eq!(rule_of(vec![]), Rule::MissingTerminal);
}

#[test]
fn run_started_ids_must_match_the_request() {
    let mut verifier = Verifier::expecting("t-1", "other-run");
    assert_eq!(
        verifier.feed(&started()).map_err(|v| v.rule),
        Err(Rule::RunIdsMismatch)
    );
    let mut verifier = Verifier::expecting("t-1", "r-1");
    assert_eq!(verifier.feed(&started()), Ok(()));
}

#[test]
fn json_nulls_and_shapes() {
    let mut v = Verifier::new();
    assert_eq!(
        v.feed_json(
            &json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r", "parentRunId": null})
        )
        .map_err(|v| v.rule),
        Err(Rule::NullField("parentRunId".into()))
    );
    let mut v = Verifier::new();
    assert_eq!(
        v.feed_json(
            &json!({"type": "RUN_STARTED", "timestamp": 1.5, "threadId": "t", "runId": "r"})
        )
        .map_err(|v| v.rule),
        Err(Rule::InvalidEvent("timestamp is not an integer".into()))
    );
    let mut v = Verifier::new();
    assert!(matches!(
        v.feed_json(&json!({"type": "THINKING_START"}))
            .map_err(|v| v.rule),
        Err(Rule::InvalidEvent(_))
    ));
    let mut v = Verifier::new();
    v.feed_json(&json!({"type": "RUN_STARTED", "timestamp": 1, "threadId": "t", "runId": "r"}))
        .expect("valid start");
    v.feed_json(&json!({"type": "TOOL_CALL_START", "timestamp": 2, "toolCallId": "c", "toolCallName": "n", "parentMessageId": null}))
        .expect("a null parentMessageId is tolerated");
    let interrupt_with_null = json!({"type": "RUN_FINISHED", "timestamp": 3, "threadId": "t", "runId": "r",
        "outcome": {"type": "interrupt", "interrupts": [{"id": "i", "reason": "x", "message": null}]}});
    assert_eq!(
        v.feed_json(&interrupt_with_null).map_err(|v| v.rule),
        Err(Rule::NullField("outcome.interrupts[].message".into()))
    );
    let mut v = Verifier::new();
    v.feed_json(&json!({"type": "RUN_STARTED", "timestamp": 1, "threadId": "t", "runId": "r"}))
        .expect("valid start");
    let usage_with_null = json!({"type": "RUN_ERROR", "timestamp": 2, "message": "m",
        "usage": [{"provider": null, "inputTokens": 1, "outputTokens": 0, "totalTokens": 1, "cachedInputTokens": 0}]});
    assert_eq!(
        v.feed_json(&usage_with_null).map_err(|v| v.rule),
        Err(Rule::NullField("usage[].provider".into()))
    );
}

#[test]
fn violation_reports_the_event_index() {
    let err = verify(&[started(), text_start("m"), text_start("m")]).unwrap_err();
    assert_eq!(err.index, 2);
    assert_eq!(err.rule.code(), "TEXT_ALREADY_OPEN");
    assert_eq!(err.to_string(), "event 2: TextAlreadyOpen(\"m\")");
}
