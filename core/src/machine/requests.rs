//! The exact A2A request bodies of A2A-WIRE.md §2 and §5, and the iac-code
//! extension calls of §6.

use serde_json::{json, Map, Value};

use crate::a2a::{JsonRpcRequest, Method, Part};
use crate::i18n::Language;
use crate::validate::IacCodeProps;

/// Where and how a message is sent.
pub(super) struct Envelope<'a> {
    pub(super) message_id: String,
    pub(super) context_id: &'a str,
    pub(super) task_id: Option<&'a str>,
    pub(super) cwd: &'a str,
    pub(super) props: &'a IacCodeProps,
    pub(super) language: Language,
}

/// A SendStreamingMessage or SendMessage request.
pub(super) fn message_send(
    method: Method,
    request_id: String,
    envelope: &Envelope<'_>,
    parts: &[Part],
) -> JsonRpcRequest {
    let parts: Vec<Value> = parts
        .iter()
        .map(|p| serde_json::to_value(p).unwrap_or(Value::Null))
        .collect();
    let mut message = json!({
        "messageId": envelope.message_id,
        "role": "ROLE_USER",
        "parts": parts,
        "metadata": {"iac_code": iac_code_metadata(envelope)},
        "contextId": envelope.context_id,
    });
    if let Some(task_id) = envelope.task_id {
        message["taskId"] = Value::String(task_id.to_owned());
    }
    JsonRpcRequest::new(
        request_id,
        method,
        json!({
            "message": message,
            "configuration": {"acceptedOutputModes": ["text/plain"]},
        }),
    )
}

/// `GetTask` with the 100-message history the adapter always asks for.
pub(super) fn get_task(request_id: String, task_id: &str) -> JsonRpcRequest {
    JsonRpcRequest::new(
        request_id,
        Method::GetTask,
        json!({"id": task_id, "historyLength": 100}),
    )
}

/// `CancelTask`.
pub(super) fn cancel_task(request_id: String, task_id: &str) -> JsonRpcRequest {
    JsonRpcRequest::new(request_id, Method::CancelTask, json!({"id": task_id}))
}

/// `SubscribeToTask`.
pub(super) fn subscribe(request_id: String, task_id: &str) -> JsonRpcRequest {
    JsonRpcRequest::new(request_id, Method::SubscribeToTask, json!({"id": task_id}))
}

/// `POST /iac-code/session/ensure-restored` body.
pub(super) fn ensure_restored_body(cwd: &str, session_id: &str, task_id: &str) -> Value {
    json!({"cwd": cwd, "sessionId": session_id, "taskId": task_id})
}

/// `GET /iac-code/pipeline/state?taskId=…&afterSequence=…` path.
pub(super) fn pipeline_state_path(task_id: &str, after_sequence: u64) -> String {
    format!(
        "/iac-code/pipeline/state?taskId={}&afterSequence={after_sequence}",
        percent_encode(task_id)
    )
}

/// The permission answer data part (A2A-WIRE.md §5.1): exactly six keys.
pub(super) fn permission_part(
    request_task_id: &str,
    input_id: &str,
    tool_use_id: &str,
    decision: &str,
) -> Part {
    Part::json(json!({
        "schemaVersion": 1,
        "kind": "permission",
        "requestTaskId": request_task_id,
        "inputId": input_id,
        "toolUseId": tool_use_id,
        "decision": decision,
    }))
}

/// `message.metadata.iac_code` of a request (A2A-WIRE.md §2.1): request
/// options, absent ones dropped; `cwd`, `preferredLanguage`, `cleanupOnly`
/// and `rosInvocationId` always present.
fn iac_code_metadata(envelope: &Envelope<'_>) -> Value {
    let props = envelope.props;
    let mut meta = Map::new();
    let mut put = |key: &str, value: Option<Value>| {
        if let Some(value) = value {
            meta.insert(key.to_owned(), value);
        }
    };
    let s = |v: &Option<String>| v.clone().map(Value::String);
    put("cwd", Some(Value::String(envelope.cwd.to_owned())));
    put("iac_code_model", s(&props.model));
    put("iac_code_api_key", s(&props.llm_api_key));
    if let Some(thinking) = &props.thinking {
        let mut t = Map::new();
        if let Some(enabled) = thinking.enabled {
            t.insert("enabled".into(), Value::Bool(enabled));
        }
        if let Some(effort) = &thinking.effort {
            t.insert("effort".into(), Value::String(effort.clone()));
        }
        if let Some(budget) = thinking.budget {
            t.insert("budget".into(), Value::from(budget));
        }
        put("thinking", Some(Value::Object(t)));
    }
    put("user_id", s(&props.user_id));
    put("channel", s(&props.channel));
    put(
        "preferredLanguage",
        Some(Value::String(envelope.language.as_str().to_owned())),
    );
    put("candidatePresentation", s(&props.candidate_presentation));
    put("run_mode", s(&props.run_mode));
    put("pipeline_name", s(&props.pipeline_name));
    put(
        "cleanupOnly",
        Some(Value::Bool(props.cleanup_only.unwrap_or(false))),
    );
    put(
        "rosInvocationId",
        Some(Value::String(props.ros_invocation_id.clone())),
    );
    if let Some(cloud) = &props.alibaba_cloud {
        put("alibaba_cloud_access_key_id", s(&cloud.access_key_id));
        put(
            "alibaba_cloud_access_key_secret",
            s(&cloud.access_key_secret),
        );
        put("alibaba_cloud_security_token", s(&cloud.security_token));
        put("alibaba_cloud_region_id", s(&cloud.region_id));
    }
    Value::Object(meta)
}

/// Percent-encodes everything but RFC 3986 unreserved characters.
fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
