//! Pipeline-mode scripts: the `question` scenario (one step, an
//! `ask_user_question` wait, then an early exit, as in the `pipe*` captures)
//! and the `pipeline` scenario (steps, two parallel candidates with the same
//! step ids, custom events, a side-band permission, a candidate selection and
//! a deployment).
//!
//! Envelopes are built with integer numbers; they go into the journal as they
//! are (the HTTP side endpoint returns ints) and are written as doubles on
//! the stream. Sequences are assigned when a script is built, so a journal is
//! the exact history of a task's pipeline, gaps and `pending_backup` copies
//! included.

use iac_agui_core::a2a::TaskState;
use iac_agui_core::ids::IdGen;
use serde_json::{json, Map, Value};

use crate::clock::Clock;
use crate::frames::{
    permission_options, state_for_envelope_status, ToolCall, TurnIds, DENIED_TEXT,
};
use crate::run::Step;
use crate::store::Wait;

/// The selling pipeline's steps.
pub(crate) const STEP_NAMES: [&str; 5] = [
    "intent_parsing",
    "architecture_planning",
    "evaluate_candidates",
    "confirm_and_select",
    "deploying",
];

const EXTENSION_URI: &str = "urn:iac-code:a2a:pipeline-events:v1";

/// The pipeline of one task: its sequence counter and event journal.
#[derive(Debug, Clone)]
pub(crate) struct PipelineState {
    pub(crate) run_id: String,
    pub(crate) seq: u64,
    pub(crate) journal: Vec<Value>,
}

impl PipelineState {
    /// A pipeline whose run id is the context id, as in every capture.
    pub(crate) fn new(context_id: &str) -> Self {
        PipelineState {
            run_id: context_id.to_owned(),
            seq: 0,
            journal: Vec::new(),
        }
    }
}

/// Everything a pipeline script needs while it is built.
pub(crate) struct Builder<'a> {
    pub(crate) ids: &'a TurnIds,
    pub(crate) gen: &'a mut IdGen,
    pub(crate) clock: &'a mut Clock,
    pub(crate) state: &'a mut PipelineState,
}

/// A parallel candidate of the `pipeline` scenario.
struct Candidate {
    id: &'static str,
    index: u64,
    name: &'static str,
}

const CANDIDATES: [Candidate; 2] = [
    Candidate {
        id: "sp1",
        index: 0,
        name: "ECS + RDS",
    },
    Candidate {
        id: "sp2",
        index: 1,
        name: "SAE + PolarDB",
    },
];

impl Builder<'_> {
    /// A new envelope with the next sequence.
    fn envelope(
        &mut self,
        event_type: &str,
        scope: &str,
        status: &str,
        coords: Value,
        data: Value,
    ) -> Value {
        self.state.seq += 1;
        let mut envelope = json!({
            "schemaVersion": "1.0", "extensionUri": EXTENSION_URI,
            "eventId": format!("evt-{}", self.gen.uuid_hex()),
            "sequence": self.state.seq, "createdAt": self.clock.stamp_seconds(),
            "eventType": event_type, "scope": scope, "status": status,
            "pipelineRunId": self.state.run_id, "pipelineName": "selling",
            "taskId": self.ids.task, "contextId": self.ids.context,
            "iacCodeSessionId": self.ids.session,
            "data": data
        });
        if let (Some(map), Value::Object(extra)) = (envelope.as_object_mut(), coords) {
            map.extend(extra);
        }
        envelope
    }

    /// The frame carrying `envelope` (plus `extra` `iac_code` keys).
    fn frame(
        &self,
        envelope: Value,
        extra: Map<String, Value>,
    ) -> iac_agui_core::a2a::StreamResponse {
        let status = envelope
            .get("status")
            .and_then(Value::as_str)
            .unwrap_or("working");
        let state = state_for_envelope_status(status);
        let mut iac = Map::new();
        iac.insert("pipeline".to_owned(), envelope);
        iac.extend(extra);
        self.ids.update(state, None, None, Value::Object(iac))
    }

    /// An envelope's step, as a WORKING (or envelope-status) frame.
    fn event(&mut self, event_type: &str, scope: &str, coords: Value, data: Value) -> Step {
        let envelope = self.envelope(event_type, scope, "working", coords, data);
        Step::Frame(self.frame(envelope, Map::new()))
    }

    fn call_id(&mut self) -> String {
        format!("call_{}", &self.gen.uuid_hex()[..8])
    }

    fn context_usage(&mut self, coords: Value, messages: u64) -> Step {
        let total = 6105 + messages * 11;
        let data = json!({
            "totalTokens": total, "contextWindow": 128000, "usagePercent": total as f64 / 1280.0,
            "messageCount": messages, "systemPromptTokens": 4868, "toolDefinitionTokens": 1237,
            "userMessageTokens": 11 * messages, "assistantMessageTokens": 0, "toolResultTokens": 0
        });
        self.event("context_usage", "step", coords, data)
    }

    fn usage(&mut self, scope: &str, coords: Value) -> Step {
        self.event("usage", scope, coords, crate::frames::usage_value(120, 15))
    }

    fn message_started(&mut self, coords: Value) -> Step {
        let id = format!("msg_{}", &self.gen.uuid_hex()[..24]);
        self.event(
            "message_started",
            "step",
            coords,
            json!({ "messageId": id }),
        )
    }

    fn step_started(&mut self, index: usize, ui_mode: Option<&str>) -> Step {
        let name = STEP_NAMES[index - 1];
        let coords = json!({ "step": {
            "id": name, "runId": format!("step-{name}-1"), "attempt": 1, "index": index,
            "total": STEP_NAMES.len(), "type": "normal", "uiMode": ui_mode
        }});
        let data = json!({
            "name": name, "index": index, "total": STEP_NAMES.len(), "attempt": 1,
            "stepType": "normal", "uiMode": ui_mode,
            "transcript_id": format!("transcript_att_{index:04}"), "active_attempt_id": format!("att_{index:04}")
        });
        self.event("step_started", "step", coords, data)
    }

    fn step_completed(&mut self, index: usize, field: &str, conclusion: Value) -> Step {
        let data = json!({ "durationS": 0.25, "conclusionField": field, "conclusion": conclusion });
        self.event("step_completed", "step", step(index), data)
    }

    /// The committed end of a pipeline as the real runtime streams it:
    /// `pending_backup` copies only in the journal, then `pipeline_completed`,
    /// its `backup_committed`, the handoff (lower sequence, so out of order)
    /// and the handoff's `backup_committed`.
    fn finish(&mut self, early_exit: bool) -> Vec<Step> {
        let total = STEP_NAMES.len();
        let completed_data = json!({ "totalSteps": total, "earlyExit": early_exit });
        let outcome = if early_exit {
            "early_exit"
        } else {
            "completed"
        };
        let handoff_data = json!({
            "action": "switch_to_normal", "targetMode": "normal", "outcome": outcome,
            "summary": format!("[Pipeline Handoff Context]\nPipeline: selling\nOutcome: {outcome}"),
            "cleanup": { "status": "unavailable", "statusMessage": "Scripted runtime: nothing to clean up." }
        });
        let pending = json!({ "visibility": "pending_backup" });
        let committed = json!({ "visibility": "committed" });
        let copy1 = self.envelope(
            "pipeline_completed",
            "pipeline",
            "completed",
            pending.clone(),
            completed_data.clone(),
        );
        let copy2 = self.envelope(
            "pipeline_handoff_ready",
            "pipeline",
            "completed",
            pending,
            handoff_data.clone(),
        );
        let done = self.envelope(
            "pipeline_completed",
            "pipeline",
            "completed",
            committed.clone(),
            completed_data,
        );
        let handoff = self.envelope(
            "pipeline_handoff_ready",
            "pipeline",
            "completed",
            committed,
            handoff_data,
        );
        let backup = |b: &mut Self, of: &Value| {
            let data = json!({
                "committedEventType": of["eventType"], "committedEventId": of["eventId"],
                "committedSequence": of["sequence"]
            });
            b.envelope("backup_committed", "pipeline", "completed", json!({}), data)
        };
        let backup_done = backup(self, &done);
        let backup_handoff = backup(self, &handoff);
        vec![
            Step::Journal(copy1),
            Step::Journal(copy2),
            Step::Frame(self.frame(done, Map::new())),
            Step::Frame(self.frame(backup_done, Map::new())),
            Step::Frame(self.frame(handoff, Map::new())),
            Step::Frame(self.frame(backup_handoff, Map::new())),
        ]
    }

    fn pipeline_started(&mut self, user_request: &str) -> Step {
        let data = json!({
            "totalSteps": STEP_NAMES.len(), "userRequest": user_request,
            "pipelineType": "selling", "stepNames": STEP_NAMES
        });
        self.event("pipeline_started", "pipeline", json!({}), data)
    }
}

/// `step` coordinates of step number `index` (1-based).
fn step(index: usize) -> Value {
    let name = STEP_NAMES[index - 1];
    json!({ "step": {
        "id": name, "runId": format!("step-{name}-1"), "attempt": 1, "index": index, "total": STEP_NAMES.len()
    }})
}

fn candidate_coords(c: &Candidate, candidate_step: Option<&str>) -> Value {
    let run_id = format!("candidate-{}-{}-1", c.id, c.index);
    let mut coords = step(3);
    coords["candidate"] =
        json!({ "id": c.id, "runId": run_id, "index": c.index, "attempt": 1, "name": c.name });
    if let Some(s) = candidate_step {
        coords["candidateStep"] =
            json!({ "id": s, "runId": format!("{run_id}-{s}-1"), "attempt": 1 });
    }
    coords
}

const QUESTION: &str = "Which region?";

fn region_options() -> Value {
    json!([{ "id": "cn-hangzhou", "label": "Hangzhou" }, { "id": "cn-beijing", "label": "Beijing" }])
}

/// The `question` scenario up to its `ask_user_question` wait.
pub(crate) fn question_turn(b: &mut Builder<'_>, user_request: &str) -> Vec<Step> {
    let call = b.call_id();
    let mut steps = vec![b.pipeline_started(user_request), b.step_started(1, None)];
    steps.push(b.context_usage(step(1), 0));
    steps.push(b.message_started(step(1)));
    steps.push(b.event(
        "thinking_delta",
        "step",
        step(1),
        json!({ "type": "raw_thinking", "text": "Need clarification." }),
    ));
    steps.push(b.event(
        "text_delta",
        "step",
        step(1),
        json!({ "text": "Let me ask you a question. " }),
    ));
    let tool_input = json!({
        "question": QUESTION, "options": region_options(),
        "allow_free_text": true, "free_text_prompt": "Or type a region"
    });
    steps.push(b.event(
        "tool_started",
        "step",
        step(1),
        json!({ "toolName": "ask_user_question", "toolUseId": call, "input": tool_input }),
    ));
    steps.push(b.usage("step", step(1)));
    steps.push(b.context_usage(step(1), 1));
    let input_id = format!("ask-{call}");
    let data = json!({
        "kind": "ask_user_question", "inputId": input_id, "toolUseId": call, "question": QUESTION,
        "prompt": QUESTION, "options": region_options(), "allowFreeText": true, "freeTextPrompt": "Or type a region"
    });
    let mut raw_input = data.clone();
    raw_input["required"] = json!(true);
    let mut coords = step(1);
    coords["input"] = raw_input;
    let envelope = b.envelope("input_required", "step", "input_required", coords, data);
    let input = json!({
        "schemaVersion": 1, "kind": "ask_user_question", "requestTaskId": b.ids.task,
        "contextId": b.ids.context, "inputId": input_id, "toolUseId": call, "prompt": QUESTION,
        "allowFreeText": true, "freeTextPrompt": "Or type a region", "options": region_options(),
        "required": true
    });
    let mut extra = Map::new();
    extra.insert("input".to_owned(), input.clone());
    steps.push(Step::Interrupt(
        b.frame(envelope, extra),
        Wait::Question { input },
    ));
    steps
}

/// The `question` scenario after its text answer: the step completes and the
/// pipeline exits early, as in the captures.
pub(crate) fn after_question(b: &mut Builder<'_>, input: &Value, answer: &str) -> Vec<Step> {
    let (selected_id, selected_label, free_text) = match_option(input, answer);
    let call = input.get("toolUseId").cloned().unwrap_or(Value::Null);
    let data = json!({
        "kind": "ask_user_question", "inputId": input["inputId"], "toolUseId": call, "question": QUESTION,
        "options": input["options"], "selectedId": selected_id, "selectedLabel": selected_label,
        "freeText": free_text, "answerTextLength": answer.chars().count(),
        "freeTextLength": free_text.chars().count(), "allowFreeText": true
    });
    let mut steps = vec![b.event("input_received", "step", step(1), data)];
    steps.push(b.context_usage(step(1), 3));
    steps.push(b.message_started(step(1)));
    steps.push(b.event(
        "text_delta",
        "step",
        step(1),
        json!({ "text": "Thanks, noted. " }),
    ));
    let complete = b.call_id();
    let mut conclusion = json!({
        "is_infra_intent": false, "confidence": "high", "category": "chat",
        "user_message_summary": "scripted question scenario"
    });
    if selected_id.is_empty() {
        conclusion["clarification_text"] = json!(free_text);
    } else {
        conclusion["clarification_choice"] = json!(selected_id);
    }
    let tool_input = json!({ "conclusion": conclusion });
    steps.push(b.event(
        "tool_started",
        "step",
        step(1),
        json!({ "toolName": "complete_step", "toolUseId": complete, "input": tool_input }),
    ));
    steps.push(b.usage("step", step(1)));
    steps.push(b.context_usage(step(1), 3));
    steps.push(b.event(
        "tool_result",
        "step",
        step(1),
        json!({
            "toolName": "complete_step", "toolUseId": complete, "isError": false,
            "result": "Step Intent parsing completed. Conclusion submitted.",
            "input": tool_input, "normalizedConclusion": conclusion
        }),
    ));
    steps.push(b.step_completed(1, "intent", conclusion));
    steps.extend(b.finish(true));
    steps
}

/// The `pipeline` scenario up to its side-band permission, the events that
/// follow it while the client is away, and the hold for the answer.
pub(crate) fn pipeline_turn(b: &mut Builder<'_>, user_request: &str) -> Vec<Step> {
    let mut steps = vec![b.pipeline_started(user_request), b.step_started(1, None)];
    steps.push(b.message_started(step(1)));
    steps.push(b.event(
        "text_delta",
        "step",
        step(1),
        json!({ "text": "You want a website on Alibaba Cloud. " }),
    ));
    steps.push(b.usage("step", step(1)));
    steps.push(b.step_completed(
        1,
        "intent",
        json!({ "is_infra_intent": true, "category": "website" }),
    ));
    steps.push(b.step_started(2, None));
    steps.push(b.event(
        "text_delta",
        "step",
        step(2),
        json!({ "text": "Two architectures fit. " }),
    ));
    steps.push(b.step_completed(2, "architecture", json!({ "candidates": 2 })));
    steps.push(b.step_started(3, None));
    for c in &CANDIDATES {
        let data =
            json!({ "subPipelineId": c.id, "candidateIndex": c.index, "candidateName": c.name });
        steps.push(b.event(
            "candidate_started",
            "candidate",
            candidate_coords(c, None),
            data,
        ));
    }
    for c in &CANDIDATES {
        let data = json!({ "stepId": "template_generating", "subPipelineId": c.id });
        steps.push(b.event(
            "candidate_step_started",
            "candidate_step",
            candidate_coords(c, Some("template_generating")),
            data,
        ));
    }
    let batch: Vec<Value> = CANDIDATES
        .iter()
        .map(|c| {
            let text = format!("Drafting the {} template. ", c.name);
            b.envelope(
                "text_delta",
                "candidate_step",
                "working",
                candidate_coords(c, Some("template_generating")),
                json!({ "text": text }),
            )
        })
        .collect();
    let batch_frame = b.ids.update(
        TaskState::Working,
        None,
        None,
        json!({ "pipelineBatch": { "schemaVersion": "1.0", "extensionUri": EXTENSION_URI, "events": batch } }),
    );
    steps.push(Step::Frame(batch_frame));
    let [sp1, sp2] = &CANDIDATES;
    let diagram = json!({ "diagramId": "diagram-sp1", "title": sp1.name, "format": "mermaid", "source": "graph TD; SLB-->ECS; ECS-->RDS" });
    steps.push(b.event(
        "diagram_shown",
        "candidate",
        candidate_coords(sp1, None),
        diagram,
    ));
    let done = json!({ "stepId": "template_generating", "subPipelineId": sp1.id });
    steps.push(b.event(
        "candidate_step_completed",
        "candidate_step",
        candidate_coords(sp1, Some("template_generating")),
        done,
    ));
    let start = json!({ "stepId": "template_validating", "subPipelineId": sp1.id });
    steps.push(b.event(
        "candidate_step_started",
        "candidate_step",
        candidate_coords(sp1, Some("template_validating")),
        start,
    ));
    steps.push(sideband_permission(b, sp1));
    // The client leaves at the interrupt; these reach only the journal's readers.
    let text = json!({ "text": "The SAE + PolarDB template is ready. " });
    steps.push(b.event(
        "text_delta",
        "candidate_step",
        candidate_coords(sp2, Some("template_generating")),
        text,
    ));
    let done = json!({ "stepId": "template_generating", "subPipelineId": sp2.id });
    steps.push(b.event(
        "candidate_step_completed",
        "candidate_step",
        candidate_coords(sp2, Some("template_generating")),
        done,
    ));
    let done = json!({ "subPipelineId": sp2.id, "candidateIndex": sp2.index, "candidateName": sp2.name, "status": "completed" });
    steps.push(b.event(
        "candidate_completed",
        "candidate",
        candidate_coords(sp2, None),
        done,
    ));
    steps.push(Step::AwaitAnswer);
    steps
}

fn sideband_permission(b: &mut Builder<'_>, c: &Candidate) -> Step {
    let call = ToolCall {
        id: b.call_id(),
        name: "ros_validate_template".to_owned(),
        input: json!({ "template": "main.yaml" }),
    };
    let input_id = format!("permission-{}", b.gen.uuid_hex());
    let common = json!({
        "toolName": call.name, "toolUseId": call.id, "title": "Validate a ROS template",
        "purpose": "Check the generated template before it is offered.", "effect": "read",
        "target": "template main.yaml", "isReadOnly": true,
        "prompt": "Validate a ROS template Allow once?",
        "safeSummary": format!("{}: {}", call.name, call.input),
        "options": permission_options(), "language": "en"
    });
    let mut permission = common.clone();
    permission["permissionId"] = json!(input_id);
    permission["inputId"] = json!(input_id);
    permission["pending"] = json!(true);
    let mut coords = candidate_coords(c, Some("template_validating"));
    coords["permission"] = permission;
    let data = json!({ "toolName": call.name, "toolUseId": call.id });
    let envelope = b.envelope(
        "permission_requested",
        "candidate_step",
        "working",
        coords,
        data,
    );
    let mut input = common;
    for (k, v) in [
        ("schemaVersion", json!(1)),
        ("kind", json!("permission")),
        ("requestTaskId", json!(b.ids.task)),
        ("contextId", json!(b.ids.context)),
        ("inputId", json!(input_id)),
        ("required", json!(true)),
        ("scope", json!("candidate_step")),
        ("subPipelineId", json!(c.id)),
    ] {
        input[k] = v;
    }
    let mut extra = Map::new();
    extra.insert("input".to_owned(), input.clone());
    Step::Interrupt(b.frame(envelope, extra), Wait::Sideband { input, call })
}

/// The `pipeline` scenario after its side-band answer: the candidate
/// finishes and the selection wait follows.
pub(crate) fn after_sideband(
    b: &mut Builder<'_>,
    input: &Value,
    call: &ToolCall,
    decision: &str,
    grace: std::time::Duration,
) -> Vec<Step> {
    let sp1 = &CANDIDATES[0];
    let coords = candidate_coords(sp1, Some("template_validating"));
    let denied = decision == "deny";
    let resolved = json!({
        "kind": "permission", "permissionId": input["inputId"], "inputId": input["inputId"],
        "toolUseId": call.id, "toolName": call.name, "decision": decision, "pending": false
    });
    let result = if denied {
        DENIED_TEXT
    } else {
        "Template validation passed."
    };
    let mut steps = vec![Step::AwaitSubscriber(grace)];
    steps.push(b.event(
        "permission_resolved",
        "candidate_step",
        coords.clone(),
        resolved,
    ));
    let tool =
        json!({ "toolName": call.name, "toolUseId": call.id, "isError": denied, "result": result });
    steps.push(b.event("tool_result", "candidate_step", coords.clone(), tool));
    let done = json!({ "stepId": "template_validating", "subPipelineId": sp1.id });
    steps.push(b.event("candidate_step_completed", "candidate_step", coords, done));
    let done = json!({ "subPipelineId": sp1.id, "candidateIndex": sp1.index, "candidateName": sp1.name, "status": "completed" });
    steps.push(b.event(
        "candidate_completed",
        "candidate",
        candidate_coords(sp1, None),
        done,
    ));
    steps.push(b.step_completed(3, "evaluation", json!({ "candidates": 2 })));
    steps.push(b.step_started(4, Some("candidate_selection")));
    let options = json!([
        { "id": "0", "label": "ECS + RDS", "summary": "Two ECS instances behind SLB with an RDS MySQL database.",
          "totalMonthlyCost": "¥812/month",
          "costItems": [{ "name": "ECS", "spec": "ecs.g7.large", "monthlyCost": "¥420" },
                        { "name": "RDS", "spec": "mysql.n2.medium.1", "monthlyCost": "¥392" }] },
        { "id": "1", "label": "SAE + PolarDB", "summary": "Serverless application engine with PolarDB.",
          "totalMonthlyCost": "¥655/month" }
    ]);
    let prompt = "Please choose a deployment plan";
    let mut coords = step(4);
    coords["step"]["uiMode"] = json!("candidate_selection");
    let data = json!({ "stepId": "confirm_and_select", "prompt": prompt, "options": options, "kind": "candidate_selection" });
    let envelope = b.envelope("input_required", "step", "input_required", coords, data);
    let input = json!({
        "schemaVersion": 1, "kind": "candidate_selection", "requestTaskId": b.ids.task,
        "contextId": b.ids.context, "inputId": format!("input-{}", envelope["eventId"].as_str().unwrap_or("")),
        "prompt": prompt, "required": true, "options": options
    });
    let mut extra = Map::new();
    extra.insert("input".to_owned(), input.clone());
    steps.push(Step::Interrupt(
        b.frame(envelope, extra),
        Wait::Selection { input },
    ));
    steps
}

/// The `pipeline` scenario after its candidate selection: deployment and
/// the committed end.
pub(crate) fn after_selection(b: &mut Builder<'_>, input: &Value, answer: &str) -> Vec<Step> {
    let (selected_id, selected_label, free_text) = match_option(input, answer);
    let data = json!({
        "kind": "candidate_selection", "inputId": input["inputId"], "options": input["options"],
        "selectedId": selected_id, "selectedLabel": selected_label, "freeText": free_text,
        "answerTextLength": answer.chars().count(), "freeTextLength": free_text.chars().count(),
        "allowFreeText": false
    });
    let mut steps = vec![b.event("input_received", "step", step(4), data)];
    let label = if selected_label.is_empty() {
        "the first plan"
    } else {
        selected_label.as_str()
    };
    let chosen = json!({ "candidateIndex": selected_id, "candidateName": label });
    steps.push(b.event("candidate_selected", "step", step(4), chosen));
    steps.push(b.step_completed(4, "selection", json!({ "selectedId": selected_id })));
    steps.push(b.step_started(5, None));
    let text = format!("Deploying {label} (scripted: nothing is created). ");
    steps.push(b.event("text_delta", "step", step(5), json!({ "text": text })));
    let progress =
        json!({ "stackName": "scripted-stack", "status": "CREATE_COMPLETE", "progress": 100 });
    steps.push(b.event("stack_progress", "step", step(5), progress));
    steps.push(b.step_completed(5, "deployment", json!({ "stackStatus": "CREATE_COMPLETE" })));
    steps.extend(b.finish(false));
    steps
}

/// Matches an answer text against the input's options the way the runtime
/// does: an option label (or id) selects it, anything else is free text.
/// Returns `(selectedId, selectedLabel, freeText)`.
pub(crate) fn match_option(input: &Value, answer: &str) -> (String, String, String) {
    let wanted = answer.trim();
    let options = input
        .get("options")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let field = |o: &Value, k: &str| o.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
    let found = options
        .iter()
        .find(|o| field(o, "label").eq_ignore_ascii_case(wanted))
        .or_else(|| options.iter().find(|o| field(o, "id") == wanted));
    match found {
        Some(o) => (field(o, "id"), field(o, "label"), String::new()),
        None => (String::new(), String::new(), answer.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_then_ids_select_and_other_text_is_free() {
        let input = json!({ "options": region_options() });
        assert_eq!(match_option(&input, "Beijing").0, "cn-beijing");
        assert_eq!(match_option(&input, " hangzhou ").0, "cn-hangzhou");
        assert_eq!(match_option(&input, "cn-beijing").1, "Beijing");
        assert_eq!(
            match_option(&input, "Or maybe Shanghai please").2,
            "Or maybe Shanghai please"
        );
    }

    #[test]
    fn finish_streams_out_of_order_and_journals_the_copies() {
        let ids = TurnIds {
            task: "t".into(),
            context: "c".into(),
            session: "s".into(),
        };
        let mut gen = IdGen::new(1);
        let mut clock = Clock::new(0);
        let mut state = PipelineState::new("c");
        let mut b = Builder {
            ids: &ids,
            gen: &mut gen,
            clock: &mut clock,
            state: &mut state,
        };
        let steps = b.finish(true);
        let seqs: Vec<u64> = steps
            .iter()
            .filter_map(|s| match s {
                Step::Frame(iac_agui_core::a2a::StreamResponse::StatusUpdate(u)) => {
                    u.metadata.as_ref()?.iac_code()?.get("pipeline")?["sequence"].as_u64()
                }
                _ => None,
            })
            .collect();
        assert_eq!(seqs, [3, 5, 4, 6]);
        assert!(matches!(steps[0], Step::Journal(_)));
    }
}
