//! Reading a permission answer out of a user message, with the real
//! runtime's rules and error texts (A2A-WIRE §5.1, §5.3).

use iac_agui_core::a2a::{JsonRpcError, Message};
use serde_json::Value;

use crate::rpc::invalid_params;

/// The prefix of the alternative text transport for permission answers.
const TEXT_PREFIX: &str = "IAC_CODE_PERMISSION:";

/// A well-formed permission answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PermissionAnswer {
    pub(crate) task_id: String,
    pub(crate) context_id: String,
    pub(crate) request_task_id: String,
    pub(crate) input_id: String,
    pub(crate) tool_use_id: String,
    pub(crate) decision: String,
}

/// `Ok(None)` when the message carries no permission answer at all.
///
/// # Errors
/// -32602 with the runtime's text when the answer is malformed.
pub(crate) fn parse_permission(
    message: &Message,
) -> Result<Option<PermissionAnswer>, JsonRpcError> {
    let data_parts: Vec<&Value> = message
        .parts
        .iter()
        .filter_map(|p| p.data.as_ref())
        .filter(|d| d.get("kind").and_then(Value::as_str) == Some("permission"))
        .collect();
    let text_parts: Vec<Value> = message
        .parts
        .iter()
        .filter_map(|p| p.text.as_deref()?.strip_prefix(TEXT_PREFIX))
        .filter_map(|t| serde_json::from_str::<Value>(t).ok())
        .filter(|d| d.get("kind").and_then(Value::as_str) == Some("permission"))
        .collect();
    if data_parts.is_empty() && text_parts.is_empty() {
        return Ok(None);
    }
    if message.role != "ROLE_USER" {
        return Err(invalid_params("Permission responses must use ROLE_USER."));
    }
    if !data_parts.is_empty() && !text_parts.is_empty() {
        return Err(invalid_params(
            "Permission responses must use exactly one supported JSON transport.",
        ));
    }
    let text_transport = !text_parts.is_empty();
    if !text_transport && (message.parts.len() != 1 || data_parts.len() != 1) {
        return Err(invalid_params(
            "Permission responses must contain exactly one application/json DataPart.",
        ));
    }
    if text_transport && (message.parts.len() != 1 || text_parts.len() != 1) {
        return Err(invalid_params(
            "Permission responses must contain exactly one JSON TextPart.",
        ));
    }
    let payload = if text_transport {
        &text_parts[0]
    } else {
        data_parts[0]
    };
    let mut expected = vec![
        "schemaVersion",
        "kind",
        "requestTaskId",
        "inputId",
        "toolUseId",
        "decision",
    ];
    if text_transport {
        expected.push("contextId");
    }
    let keys_match = payload
        .as_object()
        .is_some_and(|m| m.len() == expected.len() && expected.iter().all(|k| m.contains_key(*k)));
    if !keys_match {
        return Err(invalid_params(
            "Permission response payload fields do not match schemaVersion 1.",
        ));
    }
    if payload["schemaVersion"].as_f64() != Some(1.0) {
        return Err(invalid_params(
            "Permission response schemaVersion must be 1.",
        ));
    }
    let decision = payload["decision"].as_str().unwrap_or("");
    if !matches!(decision, "allow_once" | "deny") {
        return Err(invalid_params(
            "Permission decision must be allow_once or deny.",
        ));
    }
    let string = |v: &Value| v.as_str().filter(|s| !s.is_empty()).map(str::to_owned);
    let request_task_id = string(&payload["requestTaskId"]);
    let task_id = message
        .task_id
        .clone()
        .filter(|s| !s.is_empty())
        .or_else(|| {
            if text_transport {
                request_task_id.clone()
            } else {
                None
            }
        });
    let (Some(task_id), Some(context_id), Some(request_task_id), Some(input_id), Some(tool_use_id)) = (
        task_id,
        message.context_id.clone().filter(|s| !s.is_empty()),
        request_task_id,
        string(&payload["inputId"]),
        string(&payload["toolUseId"]),
    ) else {
        return Err(invalid_params(
            "Permission response correlation fields are required.",
        ));
    };
    if task_id != request_task_id {
        return Err(invalid_params(
            "Permission response taskId does not match requestTaskId.",
        ));
    }
    if text_transport && payload["contextId"].as_str() != Some(context_id.as_str()) {
        return Err(invalid_params(
            "Permission response contextId does not match message contextId.",
        ));
    }
    Ok(Some(PermissionAnswer {
        task_id,
        context_id,
        request_task_id,
        input_id,
        tool_use_id,
        decision: decision.to_owned(),
    }))
}

/// True when `answer` correlates with the pending `input`.
pub(crate) fn correlates(answer: &PermissionAnswer, input: &Value) -> bool {
    let field = |k: &str| input.get(k).and_then(Value::as_str);
    field("toolUseId") == Some(answer.tool_use_id.as_str())
        && field("requestTaskId") == Some(answer.request_task_id.as_str())
        && field("contextId") == Some(answer.context_id.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;
    use iac_agui_core::a2a::Part;
    use serde_json::json;

    fn message(parts: Vec<Part>) -> Message {
        Message {
            message_id: "m".into(),
            context_id: Some("c".into()),
            task_id: Some("t".into()),
            role: "ROLE_USER".into(),
            parts,
            metadata: None,
        }
    }

    fn payload() -> Value {
        json!({ "schemaVersion": 1, "kind": "permission", "requestTaskId": "t",
                "inputId": "permission-1", "toolUseId": "call_1", "decision": "allow_once" })
    }

    fn error_text(m: &Message) -> String {
        parse_permission(m).unwrap_err().message
    }

    #[test]
    fn a_valid_answer_parses() {
        let answer = parse_permission(&message(vec![Part::json(payload())]))
            .unwrap()
            .unwrap();
        assert_eq!(answer.decision, "allow_once");
        assert_eq!(answer.input_id, "permission-1");
        assert!(parse_permission(&message(vec![Part::text("hello")]))
            .unwrap()
            .is_none());
    }

    #[test]
    fn exactly_six_keys() {
        let mut extra = payload();
        extra["note"] = json!("x");
        assert_eq!(
            error_text(&message(vec![Part::json(extra)])),
            "Permission response payload fields do not match schemaVersion 1."
        );
        let mut missing = payload();
        missing.as_object_mut().unwrap().remove("toolUseId");
        assert_eq!(
            error_text(&message(vec![Part::json(missing)])),
            "Permission response payload fields do not match schemaVersion 1."
        );
    }

    #[test]
    fn decision_parts_and_task_id_are_checked() {
        let mut bad = payload();
        bad["decision"] = json!("allow_always");
        assert_eq!(
            error_text(&message(vec![Part::json(bad)])),
            "Permission decision must be allow_once or deny."
        );
        let two = message(vec![Part::json(payload()), Part::text("and more")]);
        assert_eq!(
            error_text(&two),
            "Permission responses must contain exactly one application/json DataPart."
        );
        let mut other = message(vec![Part::json(payload())]);
        other.task_id = Some("t2".into());
        assert_eq!(
            error_text(&other),
            "Permission response taskId does not match requestTaskId."
        );
    }

    #[test]
    fn text_transport_needs_the_context_id() {
        let mut p = payload();
        p["contextId"] = json!("c");
        let text = format!("{TEXT_PREFIX}{p}");
        assert!(parse_permission(&message(vec![Part::text(text)]))
            .unwrap()
            .is_some());
    }
}
