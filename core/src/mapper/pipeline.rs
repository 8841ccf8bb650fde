//! Pipeline envelopes (`metadata.iac_code.pipeline`, `pipelineBatch`) and
//! the recovery response of `GET /iac-code/pipeline/state` (SPEC §6).
//!
//! Envelopes are deduplicated by `eventId` and by `sequence` against the
//! durable cursor; steps are keyed `step:<id>` or `candidate:<cand>:<id>` and
//! their open set is durable, so a later run re-opens them.

use std::collections::BTreeSet;

use serde_json::{json, Map, Value};

use super::tools::non_empty;
use super::{FrameReport, Mapper};
use crate::agui::EventBody;
use crate::ids::IdGen;
use crate::json::lenient_i64;

/// Envelope types forwarded as `iac-code.pipeline.v1` CUSTOM events; every
/// other type either has a standard mapping or is not for clients.
pub(super) const CUSTOM_EVENT_TYPES: [&str; 34] = [
    "pipeline_started",
    "pipeline_resumed",
    "pipeline_completed",
    "pipeline_error",
    "pipeline_warning",
    "backup_blocked",
    "candidate_started",
    "candidate_completed",
    "candidate_failed",
    "candidate_interrupted",
    "candidate_restart_requested",
    "candidate_selected",
    "candidate_detail_shown",
    "candidate_step_failed",
    "sub_pipeline_started",
    "sub_pipeline_completed",
    "sub_step_failed",
    "step_failed",
    "stack_progress",
    "stack_instances_progress",
    "stack_current_changed",
    "cleanup_started",
    "cleanup_progress",
    "cleanup_completed",
    "cleanup_failed",
    "rollback_triggered",
    "rollback_completed",
    "context_compaction_started",
    "context_compacted",
    "context_compaction_failed",
    "fields_marked_stale",
    "diagram_shown",
    "mcp_status",
    "tool_progress",
];

/// Event types that open a step span.
const STEP_OPENERS: [&str; 3] = ["step_started", "candidate_step_started", "input_received"];
/// Event types that close a step span.
const STEP_CLOSERS: [&str; 4] = [
    "step_completed",
    "step_failed",
    "candidate_step_completed",
    "candidate_step_failed",
];

/// Per-run Pipeline bookkeeping (the cursor itself is durable).
#[derive(Debug, Clone)]
pub(super) struct PipelineState {
    /// Pipeline run id for text message ids when an envelope names none
    /// (the A2A context id, or the recovery snapshot's).
    run_id: String,
    /// Event ids mapped in this run.
    seen_event_ids: BTreeSet<String>,
}

impl PipelineState {
    pub(super) fn new(context_id: &str) -> Self {
        PipelineState {
            run_id: context_id.to_owned(),
            seen_event_ids: BTreeSet::new(),
        }
    }
}

impl Mapper {
    /// Maps one live envelope unless it is a duplicate or out of order.
    pub(super) fn map_envelope(
        &mut self,
        envelope: &Map<String, Value>,
        out: &mut Vec<EventBody>,
        ids: &mut IdGen,
    ) {
        let event_id = non_empty(envelope.get("eventId"));
        if event_id.is_some_and(|id| self.pipeline.seen_event_ids.contains(id)) {
            return;
        }
        let sequence = envelope.get("sequence").and_then(lenient_i64).unwrap_or(0);
        if sequence != 0 && sequence <= self.durable.pipeline_sequence {
            return;
        }
        if let Some(id) = event_id {
            self.pipeline.seen_event_ids.insert(id.to_owned());
        }
        self.durable.pipeline_sequence = self.durable.pipeline_sequence.max(sequence);
        self.map_envelope_body(envelope, out, ids);
    }

    /// Maps a recovery response: ACTIVITY_SNAPSHOT, then unseen events.
    pub(super) fn recover_pipeline(
        &mut self,
        state: &Value,
        out: &mut Vec<EventBody>,
        report: &mut FrameReport,
        ids: &mut IdGen,
    ) {
        let Some(snapshot) = state.get("snapshot").filter(|s| s.is_object()) else {
            return;
        };
        if let Some(run_id) = non_empty(snapshot.get("pipelineRunId")) {
            self.pipeline.run_id = run_id.to_owned();
        }
        let run_id = self.pipeline.run_id.clone();
        out.push(EventBody::ActivitySnapshot {
            message_id: format!("pipeline:{run_id}"),
            activity_type: "iac-code.pipeline.v1".to_owned(),
            content: json!({"schemaVersion": 1, "pipelineRunId": run_id, "snapshot": snapshot}),
            replace: Some(true),
        });
        if let Some(Value::Array(events)) = state.get("events") {
            for envelope in events.iter().filter_map(Value::as_object) {
                collect_session_id(envelope, report);
                let event_id = non_empty(envelope.get("eventId"));
                let sequence = envelope.get("sequence").and_then(lenient_i64).unwrap_or(0);
                match event_id {
                    Some(id) if self.pipeline.seen_event_ids.contains(id) => continue,
                    None if sequence != 0 && sequence <= self.durable.pipeline_sequence => continue,
                    _ => {}
                }
                if let Some(id) = event_id {
                    self.pipeline.seen_event_ids.insert(id.to_owned());
                }
                self.durable.pipeline_sequence = self.durable.pipeline_sequence.max(sequence);
                self.map_envelope_body(envelope, out, ids);
            }
        }
        let last = snapshot
            .get("lastSequence")
            .and_then(lenient_i64)
            .unwrap_or(0);
        self.durable.pipeline_sequence = self.durable.pipeline_sequence.max(last);
    }

    /// Standard mapping, step lifecycle, then the allow-listed CUSTOM event.
    fn map_envelope_body(
        &mut self,
        envelope: &Map<String, Value>,
        out: &mut Vec<EventBody>,
        ids: &mut IdGen,
    ) {
        let event_type = envelope
            .get("eventType")
            .and_then(Value::as_str)
            .unwrap_or("");
        if let Some(data) = envelope.get("data").and_then(Value::as_object) {
            self.map_standard(event_type, envelope, data, out, ids);
        }
        self.map_step_lifecycle(event_type, envelope, out);
        if CUSTOM_EVENT_TYPES.contains(&event_type) {
            out.push(EventBody::Custom {
                name: "iac-code.pipeline.v1".to_owned(),
                value: Value::Object(envelope.clone()),
            });
        }
    }

    /// `text_delta`, `thinking_delta`, `tool_started`, `tool_result`, `usage`.
    fn map_standard(
        &mut self,
        event_type: &str,
        envelope: &Map<String, Value>,
        data: &Map<String, Value>,
        out: &mut Vec<EventBody>,
        ids: &mut IdGen,
    ) {
        match event_type {
            "text_delta" => {
                if let Some(text) = non_empty(data.get("text")) {
                    let id = self.pipeline_message_id(envelope);
                    self.map_text(text, Some(&id), true, true, out, ids);
                }
            }
            "thinking_delta" => {
                let id = self.pipeline_message_id(envelope);
                self.map_thinking(&Value::Object(data.clone()), Some(&id), out);
            }
            "tool_started" => {
                let mut tool = Map::new();
                tool.insert("status".to_owned(), json!("input_complete"));
                copy(data, "toolUseId", &mut tool, "toolUseId");
                copy(data, "toolName", &mut tool, "name");
                tool.insert(
                    "toolInput".to_owned(),
                    data.get("input").cloned().unwrap_or(Value::Null),
                );
                self.map_tool(&tool, out, ids);
            }
            "tool_result" => {
                let failed = data.get("isError") == Some(&Value::Bool(true));
                let mut tool = Map::new();
                tool.insert(
                    "status".to_owned(),
                    json!(if failed { "failed" } else { "completed" }),
                );
                copy(data, "toolUseId", &mut tool, "toolUseId");
                copy(data, "toolName", &mut tool, "name");
                copy(data, "result", &mut tool, "result");
                self.map_tool(&tool, out, ids);
            }
            "usage" => self.usage.record(data),
            _ => {}
        }
    }

    /// STEP_STARTED / STEP_FINISHED for the step lifecycle event types.
    fn map_step_lifecycle(
        &mut self,
        event_type: &str,
        envelope: &Map<String, Value>,
        out: &mut Vec<EventBody>,
    ) {
        let Some(key) = step_key(envelope) else {
            return;
        };
        if STEP_OPENERS.contains(&event_type) {
            self.durable.pipeline_open_steps.insert(key.clone());
            let name = step_name(&key);
            self.spans.open_step(&key, &name, out);
        } else if STEP_CLOSERS.contains(&event_type) {
            if !self.durable.pipeline_open_steps.remove(&key) {
                return;
            }
            if !self.spans.close_step(&key, out) {
                self.spans.step_blip(&step_name(&key), out);
            }
        }
    }

    /// `pipeline-message:<pipelineRunId>:<scope>[:<coordinates>]`, the
    /// coordinates being the run ids (else ids) of candidate, candidate step
    /// and step, deduplicated, in that order.
    fn pipeline_message_id(&self, envelope: &Map<String, Value>) -> String {
        let run_id = non_empty(envelope.get("pipelineRunId")).unwrap_or(&self.pipeline.run_id);
        let scope = non_empty(envelope.get("scope")).unwrap_or("pipeline");
        let mut id = format!("pipeline-message:{run_id}:{scope}");
        let mut seen: Vec<&str> = Vec::new();
        for key in ["candidate", "candidateStep", "step"] {
            let Some(coordinate) = envelope.get(key).and_then(Value::as_object) else {
                continue;
            };
            let Some(part) = non_empty(coordinate.get("runId")).or(non_empty(coordinate.get("id")))
            else {
                continue;
            };
            if !seen.contains(&part) {
                seen.push(part);
                id.push(':');
                id.push_str(part);
            }
        }
        id
    }
}

/// The iac-code session id inside an envelope, added to the report once.
pub(super) fn collect_session_id(envelope: &Map<String, Value>, report: &mut FrameReport) {
    if let Some(session) = non_empty(envelope.get("iacCodeSessionId")) {
        if !report.session_ids.iter().any(|s| s == session) {
            report.session_ids.push(session.to_owned());
        }
    }
}

/// AG-UI step name of a step key: the step id for `step:` keys, the whole key
/// for candidate keys (parallel candidates run steps of the same id).
pub(super) fn step_name(key: &str) -> String {
    key.strip_prefix("step:").unwrap_or(key).to_owned()
}

/// Step key of an envelope: `candidate:<candidate id|subPipelineId|runId>:<step id>`
/// with a candidate, else `step:<step id>`; the step id is
/// `candidateStep.id` (when that is a non-empty object) or `step.id`.
fn step_key(envelope: &Map<String, Value>) -> Option<String> {
    let step = envelope
        .get("candidateStep")
        .and_then(Value::as_object)
        .filter(|o| !o.is_empty())
        .or_else(|| envelope.get("step").and_then(Value::as_object))?;
    let step_id = non_empty(step.get("id"))?;
    let candidate = envelope
        .get("candidate")
        .and_then(Value::as_object)
        .and_then(|c| {
            non_empty(c.get("id"))
                .or(non_empty(c.get("subPipelineId")))
                .or(non_empty(c.get("runId")))
        });
    Some(match candidate {
        Some(candidate) => format!("candidate:{candidate}:{step_id}"),
        None => format!("step:{step_id}"),
    })
}

fn copy(from: &Map<String, Value>, key: &str, to: &mut Map<String, Value>, as_key: &str) {
    if let Some(value) = from.get(key) {
        to.insert(as_key.to_owned(), value.clone());
    }
}
