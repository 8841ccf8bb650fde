//! Builders of resume answers and of the resume request itself (SPEC §8), so
//! a page never spells the payload shapes by hand.
//!
//! The builders only shape; whether an answer fits its interrupt's
//! `responseSchema` is `validateResume`'s judgement, the server's own.

use iac_agui_core::error::{ErrorCode, MessageKey, ProtocolError};
use iac_agui_core::Language;
use serde_json::{json, Map, Value};
use wasm_bindgen::prelude::*;

use crate::error::{from_js, to_js, Failure};

/// The two answers a permission interrupt accepts.
pub const PERMISSION_DECISIONS: [&str; 2] = ["allow_once", "deny"];

/// `{interruptId, status: "resolved", payload: {decision}}`.
///
/// # Errors
/// `RESUME_PAYLOAD_INVALID` when `decision` is not `allow_once` or `deny`.
pub fn permission_answer(interrupt_id: &str, decision: &str) -> Result<Value, Failure> {
    if !PERMISSION_DECISIONS.contains(&decision) {
        return Err(payload_invalid());
    }
    Ok(resolved(interrupt_id, json!({ "decision": decision })))
}

/// `{interruptId, status: "resolved", payload: {selectedId}}`.
pub fn selection_answer(interrupt_id: &str, selected_id: &str) -> Value {
    resolved(interrupt_id, json!({ "selectedId": selected_id }))
}

/// `{interruptId, status: "resolved", payload: {freeText}}`.
pub fn free_text_answer(interrupt_id: &str, text: &str) -> Value {
    resolved(interrupt_id, json!({ "freeText": text }))
}

/// `{interruptId, status: "cancelled"}`: declines the interrupt (a permission
/// counts as denied; a question cancels the execution).
pub fn cancel_answer(interrupt_id: &str) -> Value {
    json!({ "interruptId": interrupt_id, "status": "cancelled" })
}

/// The `POST /` body of a resume: the thread's ids and extension, no
/// messages, no tools, and the answers. Returned as canonical JSON text, the
/// exact bytes to send (and to pass to `validateRunInput`).
///
/// `base` holds `threadId`, `runId` and `iacCode`, and optionally `state`
/// (default `{}`) and `parentRunId`.
///
/// # Errors
/// `INVALID_INPUT` (envelope) when `base` lacks a non-empty `threadId` or
/// `runId`, or an `iacCode` object; `answers` are passed through as given.
pub fn resume_request(base: &Value, answers: &Value) -> Result<String, Failure> {
    let text = |key: &str| {
        base.get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    let (Some(thread_id), Some(run_id), Some(iac_code)) = (
        text("threadId"),
        text("runId"),
        base.get("iacCode").filter(|v| v.is_object()),
    ) else {
        return Err(envelope_invalid());
    };
    let mut body = Map::new();
    body.insert("threadId".into(), json!(thread_id));
    body.insert("runId".into(), json!(run_id));
    if let Some(parent) = text("parentRunId") {
        body.insert("parentRunId".into(), json!(parent));
    }
    let state = base.get("state").cloned().unwrap_or_else(|| json!({}));
    body.insert("state".into(), state);
    body.insert("messages".into(), json!([]));
    body.insert("tools".into(), json!([]));
    body.insert("context".into(), json!([]));
    body.insert("forwardedProps".into(), json!({ "iacCode": iac_code }));
    body.insert("resume".into(), answers.clone());
    Ok(iac_agui_core::json::canonical_json(&Value::Object(body)))
}

/// `permissionAnswer(interruptId, decision)` for JavaScript.
#[wasm_bindgen(js_name = permissionAnswer, unchecked_return_type = "ResumeEntry")]
pub fn permission_answer_js(
    #[wasm_bindgen(js_name = "interruptId")] interrupt_id: &str,
    #[wasm_bindgen(unchecked_param_type = "PermissionDecision")] decision: &str,
) -> Result<JsValue, JsValue> {
    Ok(to_js(&permission_answer(interrupt_id, decision)?))
}

/// `selectionAnswer(interruptId, selectedId)` for JavaScript.
#[wasm_bindgen(js_name = selectionAnswer, unchecked_return_type = "ResumeEntry")]
pub fn selection_answer_js(
    #[wasm_bindgen(js_name = "interruptId")] interrupt_id: &str,
    #[wasm_bindgen(js_name = "selectedId")] selected_id: &str,
) -> JsValue {
    to_js(&selection_answer(interrupt_id, selected_id))
}

/// `freeTextAnswer(interruptId, text)` for JavaScript.
#[wasm_bindgen(js_name = freeTextAnswer, unchecked_return_type = "ResumeEntry")]
pub fn free_text_answer_js(
    #[wasm_bindgen(js_name = "interruptId")] interrupt_id: &str,
    text: &str,
) -> JsValue {
    to_js(&free_text_answer(interrupt_id, text))
}

/// `cancelAnswer(interruptId)` for JavaScript.
#[wasm_bindgen(js_name = cancelAnswer, unchecked_return_type = "ResumeEntry")]
pub fn cancel_answer_js(#[wasm_bindgen(js_name = "interruptId")] interrupt_id: &str) -> JsValue {
    to_js(&cancel_answer(interrupt_id))
}

/// `buildResume(base, answers)` for JavaScript: the resume body as the JSON
/// text to send.
#[wasm_bindgen(js_name = buildResume)]
pub fn build_resume_js(
    #[wasm_bindgen(unchecked_param_type = "ResumeBase")] base: JsValue,
    #[wasm_bindgen(unchecked_param_type = "ResumeEntry[]")] answers: JsValue,
) -> Result<String, JsValue> {
    let base = from_js(&base)?;
    let answers = from_js(&answers)?;
    Ok(resume_request(&base, &answers)?)
}

fn resolved(interrupt_id: &str, payload: Value) -> Value {
    json!({ "interruptId": interrupt_id, "status": "resolved", "payload": payload })
}

fn payload_invalid() -> Failure {
    let error = ProtocolError::new(ErrorCode::ResumePayloadInvalid, MessageKey::PayloadInvalid);
    Failure::from_protocol(&error, Language::default())
}

fn envelope_invalid() -> Failure {
    let error = ProtocolError::new(ErrorCode::InvalidInput, MessageKey::InvalidEnvelope);
    Failure::from_protocol(&error, Language::default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::{validate_run_input, ValidateOptions};

    #[test]
    fn permission_answers_only_take_the_two_decisions() {
        let entry = permission_answer("i-1", "allow_once").unwrap();
        assert_eq!(
            entry,
            json!({"interruptId": "i-1", "status": "resolved", "payload": {"decision": "allow_once"}})
        );
        let refused = permission_answer("i-1", "allow_always").unwrap_err();
        assert_eq!(refused.code, "RESUME_PAYLOAD_INVALID");
    }

    #[test]
    fn selection_free_text_and_cancel_shapes() {
        assert_eq!(
            selection_answer("q", "a")["payload"],
            json!({"selectedId": "a"})
        );
        assert_eq!(
            free_text_answer("q", "why")["payload"],
            json!({"freeText": "why"})
        );
        assert_eq!(
            cancel_answer("q"),
            json!({"interruptId": "q", "status": "cancelled"})
        );
    }

    #[test]
    fn a_built_resume_passes_the_server_validation() {
        let base = json!({"threadId": "t", "runId": "r-2",
            "iacCode": {"schemaVersion": 1, "rosInvocationId": "inv", "cwd": "/w"}});
        let answers = json!([permission_answer("i-1", "deny").unwrap()]);
        let body = resume_request(&base, &answers).unwrap();
        let verdict = validate_run_input(&body, &ValidateOptions::default());
        assert_eq!(verdict["ok"], true, "{verdict}");
        assert_eq!(verdict["resume"], true);
    }

    #[test]
    fn a_resume_needs_its_ids_and_extension() {
        let refused =
            resume_request(&json!({"threadId": "t", "runId": ""}), &json!([])).unwrap_err();
        assert_eq!(refused.code, "INVALID_INPUT");
    }
}
