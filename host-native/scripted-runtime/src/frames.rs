//! Builders for the frames the iac-code runtime streams (A2A-WIRE §3–4).
//!
//! Frames are built with integer numbers and typed `iac_agui_core::a2a`
//! structs (whose field order is the wire's); [`floatify_response`] turns
//! every number inside `metadata` and data parts into a double just before a
//! frame is written, because the real runtime's protobuf `Struct`s do so.

use iac_agui_core::a2a::{
    Message, Part, StatusMetadata, StreamResponse, Task, TaskState, TaskStatus,
    TaskStatusUpdateEvent,
};
use serde_json::{json, Map, Value};

/// Text of a denied tool call, as the real runtime reports it.
pub(crate) const DENIED_TEXT: &str = "The user explicitly denied this tool operation. This is not a cloud API or IAM permission error. Do not retry this operation or perform the same action with another tool unless the user asks again.";

/// The identity every frame of a turn carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TurnIds {
    pub(crate) task: String,
    pub(crate) context: String,
    pub(crate) session: String,
}

impl TurnIds {
    /// An agent message with id `{taskId}-{suffix}`.
    pub(crate) fn agent_message(&self, suffix: &str, text: &str) -> Message {
        Message {
            message_id: format!("{}-{suffix}", self.task),
            context_id: Some(self.context.clone()),
            task_id: Some(self.task.clone()),
            role: "ROLE_AGENT".into(),
            parts: vec![Part::text(text)],
            metadata: None,
        }
    }

    /// A status update whose `metadata.iac_code` is `iac` (an object).
    pub(crate) fn update(
        &self,
        state: TaskState,
        message: Option<Message>,
        timestamp: Option<String>,
        iac: Value,
    ) -> StreamResponse {
        StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: self.task.clone(),
            context_id: self.context.clone(),
            status: TaskStatus {
                state,
                message: message.map(Box::new),
                timestamp,
            },
            metadata: Some(json!({ "iac_code": iac }).into()),
        })
    }

    /// `iac` plus this turn's `iacCodeSessionId`.
    pub(crate) fn with_session(&self, mut iac: Value) -> Value {
        if let Some(map) = iac.as_object_mut() {
            map.insert("iacCodeSessionId".to_owned(), json!(self.session));
        }
        iac
    }

    /// A lifecycle frame (SUBMITTED, WORKING, end-of-turn INPUT_REQUIRED).
    pub(crate) fn lifecycle(&self, state: TaskState, timestamp: String) -> StreamResponse {
        self.update(state, None, Some(timestamp), self.with_session(json!({})))
    }

    /// A streamed text delta (message id `{taskId}-message`).
    pub(crate) fn text(&self, text: &str) -> StreamResponse {
        self.update(
            TaskState::Working,
            Some(self.agent_message("message", text)),
            None,
            self.with_session(json!({})),
        )
    }

    /// The assistant's full text (message id `{taskId}-2`).
    pub(crate) fn final_text(&self, text: &str, timestamp: String) -> StreamResponse {
        let message = (!text.is_empty()).then(|| self.agent_message("2", text));
        self.update(
            TaskState::Working,
            message,
            Some(timestamp),
            self.with_session(json!({ "assistantFinal": { "complete": true } })),
        )
    }

    /// A WORKING frame carrying one `metadata.iac_code` key besides the session.
    pub(crate) fn working(&self, key: &str, value: Value) -> StreamResponse {
        let mut iac = Map::new();
        iac.insert(key.to_owned(), value);
        self.update(
            TaskState::Working,
            None,
            None,
            self.with_session(Value::Object(iac)),
        )
    }

    /// A usage frame, as sent after every LLM call.
    pub(crate) fn usage(&self, input: u64, output: u64) -> StreamResponse {
        self.working("usage", usage_value(input, output))
    }

    /// The CANCELED frame pushed on an open stream (message id `{taskId}-5`).
    pub(crate) fn canceled_status(&self, timestamp: String) -> TaskStatus {
        TaskStatus {
            state: TaskState::Canceled,
            message: Some(Box::new(self.agent_message("5", "Task canceled."))),
            timestamp: Some(timestamp),
        }
    }

    /// The first frame of a new task: SUBMITTED with the echoed user message.
    pub(crate) fn task_frame(&self, echoed: Message) -> StreamResponse {
        StreamResponse::Task(Task {
            id: self.task.clone(),
            context_id: self.context.clone(),
            status: TaskStatus {
                state: TaskState::Submitted,
                message: None,
                timestamp: None,
            },
            history: vec![echoed],
            artifacts: Vec::new(),
            metadata: None,
        })
    }
}

/// A usage object with the fake provider's family names.
pub(crate) fn usage_value(input: u64, output: u64) -> Value {
    json!({
        "provider": "openai", "model": "other",
        "inputTokens": input, "outputTokens": output,
        "totalTokens": input + output, "cachedInputTokens": 0
    })
}

/// A tool call the scripts announce, and the permission projection for it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolCall {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) input: Value,
}

impl ToolCall {
    /// The `started`, `input_delta` and `input_complete` tool frames' values.
    pub(crate) fn announce(&self) -> [Value; 3] {
        let fields: Map<String, Value> = self
            .input
            .as_object()
            .map(|m| {
                m.keys()
                    .map(|k| (k.clone(), json!({ "type": "str" })))
                    .collect()
            })
            .unwrap_or_default();
        let length = self.input.to_string().len();
        [
            json!({ "status": "started", "toolUseId": self.id, "name": self.name }),
            json!({ "status": "input_delta", "toolUseId": self.id, "partialJsonLength": length }),
            json!({
                "status": "input_complete", "toolUseId": self.id, "name": self.name,
                "toolInput": self.input,
                "inputSummary": { "tool_name": self.name, "fields": fields }
            }),
        ]
    }

    /// The `completed` (or, when `failed`, `failed`) tool frame's value.
    pub(crate) fn finished(&self, result: &str, failed: bool) -> Value {
        let status = if failed { "failed" } else { "completed" };
        json!({ "status": status, "toolUseId": self.id, "name": self.name, "result": result })
    }

    /// The normal-mode permission projection (A2A-WIRE §4.5a) for a shell
    /// command, as the real runtime words it.
    pub(crate) fn permission_input(&self, ids: &TurnIds, input_id: &str) -> Value {
        let command = self
            .input
            .get("command")
            .and_then(Value::as_str)
            .unwrap_or("");
        json!({
            "schemaVersion": 1, "kind": "permission",
            "requestTaskId": ids.task, "contextId": ids.context,
            "inputId": input_id, "toolUseId": self.id, "toolName": self.name,
            "title": "Run a local shell command",
            "purpose": "Execute a local command needed for the requested infrastructure task.",
            "effect": "local_execution",
            "target": format!("the current local workspace; command: {command}"),
            "isReadOnly": false,
            "prompt": "Run a local shell command Allow once?",
            "safeSummary": format!("{}: {}", self.name, self.input),
            "options": permission_options(),
            "language": "en", "required": true
        })
    }

    /// The `permission` key sent beside a pending permission input.
    pub(crate) fn pending_permission(&self) -> Value {
        json!({ "pending": true, "toolName": self.name, "toolUseId": self.id, "autoApproved": false })
    }
}

/// The two choices every permission offers.
pub(crate) fn permission_options() -> Value {
    json!([{ "id": "allow_once", "label": "Allow once" }, { "id": "deny", "label": "Deny" }])
}

/// The side-band permission acknowledgement message (A2A-WIRE §3.5).
pub(crate) fn permission_ack(
    ids: &TurnIds,
    ack_id: &str,
    input_id: &str,
    tool_use_id: &str,
    decision: &str,
) -> StreamResponse {
    StreamResponse::Message(Message {
        message_id: format!("permission-ack-{ack_id}"),
        context_id: Some(ids.context.clone()),
        task_id: Some(ids.task.clone()),
        role: "ROLE_AGENT".into(),
        parts: vec![Part::json(json!({
            "schemaVersion": 1, "kind": "permission_ack", "inputId": input_id,
            "toolUseId": tool_use_id, "decision": decision, "accepted": true
        }))],
        metadata: None,
    })
}

/// The task state a pipeline envelope status implies (A2A-WIRE §4.8).
pub(crate) fn state_for_envelope_status(status: &str) -> TaskState {
    match status {
        "waiting_input" | "input_required" => TaskState::InputRequired,
        "failed" => TaskState::Failed,
        "canceled" => TaskState::Canceled,
        "completed" => TaskState::Completed,
        _ => TaskState::Working,
    }
}

/// Writes every number inside metadata objects and data parts as a double.
pub(crate) fn floatify_response(response: &mut StreamResponse) {
    match response {
        StreamResponse::Task(task) => floatify_task(task),
        StreamResponse::StatusUpdate(update) => {
            update
                .metadata
                .iter_mut()
                .flat_map(StatusMetadata::values_mut)
                .for_each(floatify);
            if let Some(message) = &mut update.status.message {
                floatify_message(message);
            }
        }
        StreamResponse::ArtifactUpdate(update) => floatify_metadata_keys(&mut update.artifact),
        StreamResponse::Message(message) => floatify_message(message),
    }
}

/// [`floatify_response`] for a bare task (GetTask / CancelTask results).
pub(crate) fn floatify_task(task: &mut Task) {
    floatify_opt(&mut task.metadata);
    if let Some(message) = &mut task.status.message {
        floatify_message(message);
    }
    for message in &mut task.history {
        floatify_message(message);
    }
}

fn floatify_message(message: &mut Message) {
    floatify_opt(&mut message.metadata);
    for part in &mut message.parts {
        floatify_opt(&mut part.data);
        floatify_opt(&mut part.metadata);
    }
}

fn floatify_opt(value: &mut Option<Value>) {
    if let Some(v) = value {
        floatify(v);
    }
}

/// Floatifies the values of `metadata` keys anywhere below `value`.
fn floatify_metadata_keys(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                if key == "metadata" {
                    floatify(v);
                } else {
                    floatify_metadata_keys(v);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(floatify_metadata_keys),
        _ => {}
    }
}

/// Every number below `value` becomes an `f64`.
pub(crate) fn floatify(value: &mut Value) {
    match value {
        Value::Number(n) if !n.is_f64() => {
            if let Some(f) = n.as_f64() {
                if let Some(float) = serde_json::Number::from_f64(f) {
                    *n = float;
                }
            }
        }
        Value::Object(map) => map.values_mut().for_each(floatify),
        Value::Array(items) => items.iter_mut().for_each(floatify),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids() -> TurnIds {
        TurnIds {
            task: "t1".into(),
            context: "c1".into(),
            session: "s1".into(),
        }
    }

    #[test]
    fn metadata_numbers_become_doubles_on_the_wire() {
        let mut frame = ids().usage(120, 15);
        floatify_response(&mut frame);
        let text = serde_json::to_string(&frame).unwrap();
        assert!(text.contains("\"inputTokens\":120.0"), "{text}");
        assert!(text.contains("\"totalTokens\":135.0"), "{text}");
        assert!(
            text.starts_with(
                "{\"statusUpdate\":{\"taskId\":\"t1\",\"contextId\":\"c1\",\"status\""
            ),
            "{text}"
        );
    }

    #[test]
    fn non_metadata_fields_stay_as_they_are() {
        let mut frame = ids().text("Hello! ");
        floatify_response(&mut frame);
        let text = serde_json::to_string(&frame).unwrap();
        assert!(text.contains("\"messageId\":\"t1-message\""), "{text}");
        assert!(
            !text.contains("timestamp"),
            "deltas carry no timestamp: {text}"
        );
    }

    #[test]
    fn permission_projection_has_the_observed_keys() {
        let call = ToolCall {
            id: "call_1".into(),
            name: "bash".into(),
            input: json!({ "command": "touch x" }),
        };
        let input = call.permission_input(&ids(), "permission-ab");
        let keys: Vec<&str> = input
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "contextId",
                "effect",
                "inputId",
                "isReadOnly",
                "kind",
                "language",
                "options",
                "prompt",
                "purpose",
                "requestTaskId",
                "required",
                "safeSummary",
                "schemaVersion",
                "target",
                "title",
                "toolName",
                "toolUseId"
            ]
        );
    }
}
