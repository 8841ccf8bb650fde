//! Replay of `kind: "mapper"` golden cases: one run of the mapper, driven the
//! way a run driver drives it (RUN_STARTED, re-opened steps, the recorded
//! inputs in order, the first interrupt or terminal state ends the reading,
//! close everything, one terminal event), so that every case's output is a
//! whole AG-UI stream the verifier can check.
//!
//! Input:
//! ```json
//! {"context": {"threadId", "runId", "contextId"?, "language"?, "interruptTtlMs"?, "appliedInputIds"?},
//!  "session": {"executionId", "rosInvocationId"}?,
//!  "durable": {"pipelineSequence", "pipelineOpenSteps", "textSnapshotDigests"}?,
//!  "idSeed": 1, "clock": {"startMs": 1767225600000, "tickMs": 1}?,
//!  "reopenSteps": true?,                                  (re-open durable steps first)
//!  "steps": [
//!    {"frame": <A2A stream result, or a whole JSON-RPC frame>, "options"?: {"pipeline", "statusText"}},
//!    {"task": <GetTask snapshot>, "options"?: …},          (default: no pipeline, no status text)
//!    {"recovery": <GET /iac-code/pipeline/state body>},
//!    {"answeredTool": {"toolCallId", "text"}},
//!    {"markApplied": "<inputId>"}
//!  ]}
//! ```
//! Output: `{"events", "reports", "durable", "outcome"}`; reports list, per
//! fed step, the ids, state and required inputs (interrupt objects are in the
//! events).

use serde_json::{json, Map, Value};

use crate::a2a::{StreamResponse, Task, TaskState};
use crate::agui::{Event, EventBody, Interrupt, Outcome};
use crate::error::MessageKey;
use crate::ids::IdGen;
use crate::mapper::{
    DurableMapperState, FeedOptions, FrameReport, Mapper, RunContext, SessionInfo,
};

/// Replays a mapper case.
pub(super) fn replay(input: &Value) -> Result<Value, String> {
    let mut context = input.get("context").cloned().ok_or("missing `context`")?;
    if let Some(object) = context.as_object_mut() {
        if !object.contains_key("contextId") {
            let thread = object.get("threadId").and_then(Value::as_str).unwrap_or("");
            let digest = crate::json::sha256_hex(thread.as_bytes());
            object.insert("contextId".into(), json!(format!("agui-{}", &digest[..40])));
        }
    }
    let ctx: RunContext = serde_json::from_value(context).map_err(|e| format!("context: {e}"))?;
    let durable: DurableMapperState = match input.get("durable") {
        Some(d) => serde_json::from_value(d.clone()).map_err(|e| format!("durable: {e}"))?,
        None => DurableMapperState::default(),
    };
    let session = input.get("session");
    let session_field = |key: &str, default: &str| {
        session
            .and_then(|s| s.get(key))
            .and_then(Value::as_str)
            .unwrap_or(default)
            .to_owned()
    };
    let mut driver = Driver {
        clock: input
            .pointer("/clock/startMs")
            .and_then(Value::as_i64)
            .unwrap_or(1_767_225_600_000),
        tick: input
            .pointer("/clock/tickMs")
            .and_then(Value::as_i64)
            .unwrap_or(1),
        ids: IdGen::new(input.get("idSeed").and_then(Value::as_u64).unwrap_or(1)),
        info: SessionInfo {
            execution_id: session_field("executionId", "exec-1"),
            task_id: None,
            ros_invocation_id: session_field("rosInvocationId", "ros-1"),
            session_id: None,
        },
        session_emitted: false,
        reopen: input
            .get("reopenSteps")
            .and_then(Value::as_bool)
            .unwrap_or(true),
        events: Vec::new(),
        reports: Vec::new(),
        language: ctx.language,
        mapper: Mapper::new(ctx, durable),
    };
    let steps = input
        .get("steps")
        .and_then(Value::as_array)
        .ok_or("missing `steps`")?;
    let outcome = driver.run(steps)?;
    let events: Vec<Value> = driver
        .events
        .iter()
        .map(|e| serde_json::to_value(e).map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;
    Ok(json!({
        "events": events,
        "reports": driver.reports,
        "durable": serde_json::to_value(driver.mapper.durable()).map_err(|e| e.to_string())?,
        "outcome": outcome,
    }))
}

/// How the replayed run ended.
enum End {
    Interrupt(Vec<Interrupt>),
    State(Option<TaskState>),
}

struct Driver {
    clock: i64,
    tick: i64,
    ids: IdGen,
    info: SessionInfo,
    session_emitted: bool,
    reopen: bool,
    events: Vec<Event>,
    reports: Vec<Value>,
    language: crate::Language,
    mapper: Mapper,
}

impl Driver {
    fn run(&mut self, steps: &[Value]) -> Result<String, String> {
        let (thread_id, run_id) = {
            let ctx = self.mapper.context();
            (ctx.thread_id.clone(), ctx.run_id.clone())
        };
        self.push(EventBody::RunStarted {
            thread_id: thread_id.clone(),
            run_id: run_id.clone(),
            parent_run_id: None,
        });
        if self.reopen {
            let reopened = self.mapper.reopen_steps(self.clock);
            self.events.extend(reopened);
        }
        let mut last_state = None;
        let mut end = None;
        for (index, step) in steps.iter().enumerate() {
            self.clock = self.clock.saturating_add(self.tick);
            if let Some(found) = self
                .step(step, &mut last_state)
                .map_err(|e| format!("step {index}: {e}"))?
            {
                end = Some(found);
                break;
            }
        }
        self.clock = self.clock.saturating_add(self.tick);
        let end = end.unwrap_or(End::State(last_state));
        if !self.session_emitted {
            self.emit_session();
        }
        if matches!(end, End::Interrupt(_)) {
            self.mapper.finalize_text_snapshots();
        }
        let closing = self.mapper.close_all(self.clock);
        self.events.extend(closing);
        let usage = self.mapper.usage();
        let (terminal, outcome) = match end {
            End::Interrupt(interrupts) => (
                EventBody::RunFinished {
                    thread_id,
                    run_id,
                    outcome: Outcome::Interrupt { interrupts },
                    usage,
                },
                "interrupt",
            ),
            End::State(Some(TaskState::Completed | TaskState::InputRequired)) => (
                EventBody::RunFinished {
                    thread_id,
                    run_id,
                    outcome: Outcome::Success,
                    usage,
                },
                "success",
            ),
            End::State(Some(TaskState::Canceled)) => (
                self.run_error("CANCELLED", MessageKey::Cancelled, usage),
                "cancelled",
            ),
            End::State(_) => (
                self.run_error(
                    "A2A_EXECUTION_FAILED",
                    MessageKey::A2aExecutionFailed,
                    usage,
                ),
                "failed",
            ),
        };
        self.push(terminal);
        Ok(outcome.to_owned())
    }

    /// Runs one step; `Some` when it ends the reading.
    fn step(
        &mut self,
        step: &Value,
        last_state: &mut Option<TaskState>,
    ) -> Result<Option<End>, String> {
        let options = |default: FeedOptions| {
            let o = step.get("options");
            FeedOptions {
                include_pipeline: o
                    .and_then(|o| o.get("pipeline"))
                    .and_then(Value::as_bool)
                    .unwrap_or(default.include_pipeline),
                include_status_text: o
                    .and_then(|o| o.get("statusText"))
                    .and_then(Value::as_bool)
                    .unwrap_or(default.include_status_text),
            }
        };
        let mapped = if let Some(frame) = step.get("frame") {
            let frame = frame.get("result").unwrap_or(frame);
            let frame: StreamResponse =
                serde_json::from_value(frame.clone()).map_err(|e| format!("frame: {e}"))?;
            self.mapper.feed(
                &frame,
                options(FeedOptions::LIVE),
                self.clock,
                &mut self.ids,
            )
        } else if let Some(task) = step.get("task") {
            let task: Task =
                serde_json::from_value(task.clone()).map_err(|e| format!("task: {e}"))?;
            self.mapper.feed_task(
                &task,
                options(FeedOptions::SNAPSHOT),
                self.clock,
                &mut self.ids,
            )
        } else if let Some(state) = step.get("recovery") {
            self.mapper
                .feed_pipeline_recovery(state, self.clock, &mut self.ids)
        } else if let Some(answer) = step.get("answeredTool") {
            let id = answer
                .get("toolCallId")
                .and_then(Value::as_str)
                .ok_or("answeredTool.toolCallId")?;
            let text = answer
                .get("text")
                .and_then(Value::as_str)
                .ok_or("answeredTool.text")?;
            let events = self.mapper.tool_result_for_answer(id, text, self.clock);
            self.events.extend(events);
            return Ok(None);
        } else if let Some(id) = step.get("markApplied").and_then(Value::as_str) {
            self.mapper.mark_applied(id);
            return Ok(None);
        } else {
            return Err("unknown step".to_owned());
        };
        let report = &mapped.report;
        if let Some(task) = &report.task_id {
            self.info.task_id.get_or_insert_with(|| task.clone());
        }
        if let Some(session) = report.session_ids.first() {
            self.info.session_id.get_or_insert_with(|| session.clone());
        }
        if !self.session_emitted && self.info.task_id.is_some() && self.info.session_id.is_some() {
            self.emit_session();
        }
        self.reports.push(report_json(report));
        self.events.extend(mapped.events.iter().cloned());
        if let Some(state) = &report.state {
            *last_state = Some(state.clone());
        }
        // Only live frames end the reading; a resume's GetTask snapshot is
        // reconciled by the machine instead (its inputs are reported).
        if step.get("frame").is_none() {
            return Ok(None);
        }
        if !report.inputs.is_empty() {
            let interrupts = report.inputs.iter().map(|i| i.interrupt.clone()).collect();
            return Ok(Some(End::Interrupt(interrupts)));
        }
        match &report.state {
            Some(state) if state.is_terminal() => Ok(Some(End::State(Some(state.clone())))),
            _ => Ok(None),
        }
    }

    fn emit_session(&mut self) {
        let body = self.mapper.session_event(&self.info);
        self.push(body);
        self.session_emitted = true;
    }

    fn run_error(
        &self,
        code: &str,
        key: MessageKey,
        usage: Option<Vec<crate::agui::TokenUsage>>,
    ) -> EventBody {
        EventBody::RunError {
            message: crate::catalog::text(key, self.language).to_owned(),
            code: Some(code.to_owned()),
            usage,
        }
    }

    fn push(&mut self, body: EventBody) {
        self.events.push(Event::new(self.clock, body));
    }
}

/// A report without the interrupt objects (they are in the events).
fn report_json(report: &FrameReport) -> Value {
    let mut object = Map::new();
    if let Some(task) = &report.task_id {
        object.insert("taskId".into(), json!(task));
    }
    if let Some(context) = &report.context_id {
        object.insert("contextId".into(), json!(context));
    }
    if !report.session_ids.is_empty() {
        object.insert("sessionIds".into(), json!(report.session_ids));
    }
    if let Some(state) = &report.state {
        object.insert("state".into(), json!(state.as_str()));
    }
    if !report.inputs.is_empty() {
        let inputs: Vec<Value> = report
            .inputs
            .iter()
            .map(|i| {
                json!({
                    "inputId": i.input_id,
                    "sideband": i.sideband,
                    "requestTaskId": i.request_task_id,
                    "contextId": i.context_id,
                    "expiresAt": i.expires_at,
                })
            })
            .collect();
        object.insert("inputs".into(), Value::Array(inputs));
    }
    Value::Object(object)
}
