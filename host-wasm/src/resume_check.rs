//! `validateResume`: the server's entry checks (SPEC §8 step 6) on a resume,
//! before it is sent.
//!
//! The page knows the interrupts of the paused run (`outcome.interrupts`),
//! not the server's thread document. Each interrupt's `metadata` carries the
//! public input projection the server built it from (SPEC §7), so the
//! pending inputs are rebuilt from it and the machine's own entry checks
//! judge them (the core's `resume_check`): same order of checks, same codes,
//! same JSON-Schema details. What the page cannot know is which answers the
//! server already applied, so a replayed answer is `UNKNOWN_INTERRUPT` here
//! where the server may say `RESUME_ALREADY_APPLIED`.

use iac_agui_core::error::ProtocolError;
use iac_agui_core::i18n::{negotiate, Language};
use iac_agui_core::resume_check::check_resume;
use serde_json::{json, Value};
use wasm_bindgen::prelude::*;

use crate::error::{from_js, to_js, Failure};

/// How to judge: the language of the messages and, optionally, the clock.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResumeOptions {
    /// The language of the messages.
    pub language: Language,
    /// When given, an interrupt whose `expiresAt` is at or before this
    /// instant (Unix ms) makes the resume `EXECUTION_EXPIRED`, as on the server.
    pub now_ms: Option<i64>,
}

impl ResumeOptions {
    /// Reads `{preferredLanguage?, acceptLanguage?, nowMs?}`.
    pub fn from_json(options: &Value) -> Self {
        let text = |key: &str| options.get(key).and_then(Value::as_str);
        ResumeOptions {
            language: negotiate(text("preferredLanguage"), text("acceptLanguage")),
            now_ms: options
                .get("nowMs")
                .and_then(Value::as_f64)
                .map(|ms| ms as i64),
        }
    }
}

/// Judges `resume` (an array of entries, or a whole `RunAgentInput` holding
/// one) against `interrupts` (the paused run's `outcome.interrupts`) with the
/// core's [`check_resume`].
///
/// Returns `{ok, error, entries, missing}`: `error` is the server's verdict
/// on the whole resume (its first refusal, `null` when accepted); `entries`
/// judges each entry on its own, `{interruptId, ok, error}`; `missing` lists
/// the pending interrupts no entry answers.
pub fn validate_resume(resume: &Value, interrupts: &Value, options: &ResumeOptions) -> Value {
    let language = options.language;
    let failure = |e: &ProtocolError| Failure::from_protocol(e, language).to_json();
    let verdict = check_resume(resume, interrupts, language, options.now_ms);
    let entries: Vec<Value> = verdict
        .entries
        .iter()
        .map(|entry| {
            json!({
                "interruptId": entry.interrupt_id,
                "ok": entry.error.is_none(),
                "error": entry.error.as_ref().map(failure),
            })
        })
        .collect();
    json!({
        "ok": verdict.error.is_none(),
        "error": verdict.error.as_ref().map(failure),
        "entries": entries,
        "missing": verdict.missing,
    })
}

/// `validateResume(resumeJson, interruptsJson, options?)` for JavaScript.
#[wasm_bindgen(js_name = validateResume, unchecked_return_type = "ResumeVerdict")]
pub fn validate_resume_js(
    #[wasm_bindgen(js_name = "resumeJson")] resume_json: &str,
    #[wasm_bindgen(js_name = "interruptsJson")] interrupts_json: &str,
    #[wasm_bindgen(unchecked_optional_param_type = "ResumeCheckOptions")] options: JsValue,
) -> Result<JsValue, JsValue> {
    let options = ResumeOptions::from_json(&from_js(&options)?);
    let parse = |text: &str| {
        serde_json::from_str::<Value>(text).map_err(|_| Failure::not_json(options.language))
    };
    let verdict = validate_resume(&parse(resume_json)?, &parse(interrupts_json)?, &options);
    Ok(to_js(&verdict))
}

#[cfg(test)]
mod tests {
    use super::*;
    use iac_agui_core::document::parse_iso_ms;
    use iac_agui_core::error::MessageKey;
    use iac_agui_core::mapper::build_interrupt;

    fn permission() -> Value {
        let projection = json!({"schemaVersion": 1, "kind": "permission", "inputId": "p-1",
            "toolUseId": "tu-1", "toolName": "ros_deploy", "title": "Deploy?", "required": true});
        serde_json::to_value(build_interrupt(
            &projection,
            "2026-01-01T00:09:00.000Z",
            Language::En,
        ))
        .unwrap()
    }

    fn question(free_text: bool) -> Value {
        let projection = json!({"schemaVersion": 1, "kind": "input_required", "inputId": "q-1",
            "prompt": "Which VPC?", "allowFreeText": free_text, "required": true,
            "options": [{"id": "vpc-a", "label": "A"}, {"id": "vpc-b", "label": "B"}]});
        serde_json::to_value(build_interrupt(
            &projection,
            "2026-01-01T00:09:00.000Z",
            Language::En,
        ))
        .unwrap()
    }

    fn check(resume: Value, interrupts: Value) -> Value {
        validate_resume(&resume, &interrupts, &ResumeOptions::default())
    }

    #[test]
    fn good_answers_pass() {
        let verdict = check(
            json!([{"interruptId": "p-1", "status": "resolved", "payload": {"decision": "allow_once"}},
                   {"interruptId": "q-1", "status": "resolved", "payload": {"selectedId": "vpc-b"}}]),
            json!([permission(), question(false)]),
        );
        assert_eq!(verdict["ok"], true, "{verdict}");
        assert_eq!(verdict["error"], Value::Null);
        assert_eq!(verdict["missing"], json!([]));
    }

    #[test]
    fn a_cancelled_permission_counts_as_deny() {
        let verdict = check(
            json!([{"interruptId": "p-1", "status": "cancelled"}]),
            json!([permission()]),
        );
        assert_eq!(verdict["ok"], true, "{verdict}");
    }

    #[test]
    fn payload_errors_carry_the_schema_failure() {
        let verdict = check(
            json!([{"interruptId": "q-1", "status": "resolved", "payload": {"selectedId": "vpc-z"}}]),
            json!([question(false)]),
        );
        assert_eq!(verdict["error"]["code"], "RESUME_PAYLOAD_INVALID");
        assert!(verdict["error"]["details"].is_object(), "{verdict}");
        assert_eq!(
            verdict["entries"][0]["error"]["code"],
            "RESUME_PAYLOAD_INVALID"
        );
        let free = check(
            json!([{"interruptId": "q-1", "status": "resolved", "payload": {"freeText": "my own"}}]),
            json!([question(true)]),
        );
        assert_eq!(free["ok"], true, "{free}");
        let no_payload = check(
            json!([{"interruptId": "p-1", "status": "resolved"}]),
            json!([permission()]),
        );
        assert_eq!(no_payload["error"]["code"], "RESUME_PAYLOAD_INVALID");
        assert_eq!(
            no_payload["error"]["message"],
            iac_agui_core::catalog::text(MessageKey::PayloadRequired, Language::En)
        );
    }

    #[test]
    fn missing_duplicate_and_unknown_entries() {
        let both = json!([permission(), question(false)]);
        let missing = check(
            json!([{"interruptId": "p-1", "status": "resolved", "payload": {"decision": "deny"}}]),
            both.clone(),
        );
        assert_eq!(missing["error"]["code"], "INCOMPLETE_RESUME");
        assert_eq!(missing["missing"], json!(["q-1"]));
        assert_eq!(missing["entries"][0]["ok"], true);
        let duplicate = check(
            json!([{"interruptId": "p-1", "status": "cancelled"}, {"interruptId": "p-1", "status": "cancelled"}]),
            json!([permission()]),
        );
        assert_eq!(duplicate["error"]["code"], "INCOMPLETE_RESUME");
        assert_eq!(
            duplicate["entries"][1]["error"]["code"],
            "INCOMPLETE_RESUME"
        );
        let unknown = check(
            json!([{"interruptId": "zz", "status": "cancelled"}]),
            json!([permission()]),
        );
        assert_eq!(unknown["error"]["code"], "UNKNOWN_INTERRUPT");
        assert_eq!(unknown["entries"][0]["error"]["code"], "UNKNOWN_INTERRUPT");
    }

    #[test]
    fn expiry_and_malformed_documents() {
        let late = ResumeOptions {
            now_ms: parse_iso_ms("2026-01-01T00:09:00.000Z"),
            ..Default::default()
        };
        let verdict = validate_resume(
            &json!([{"interruptId": "p-1", "status": "cancelled"}]),
            &json!([permission()]),
            &late,
        );
        assert_eq!(verdict["error"]["code"], "EXECUTION_EXPIRED");
        let bad = check(
            json!([{"interruptId": "p-1", "status": "maybe"}]),
            json!([permission()]),
        );
        assert_eq!(bad["error"]["code"], "INVALID_INPUT");
        let body = json!({"resume": [{"interruptId": "p-1", "status": "cancelled"}]});
        assert_eq!(check(body, json!([permission()]))["ok"], true);
    }
}
