//! `validateResume`: the server's entry checks (SPEC §8 step 6) on a resume,
//! before it is sent.
//!
//! The page knows the interrupts of the paused run (`outcome.interrupts`),
//! not the server's thread document. Each interrupt's `metadata` carries the
//! public input projection the server built it from (SPEC §7), so the
//! pending inputs are rebuilt from it and the machine's own
//! [`check_entries`] judges the entries: same order of checks, same codes,
//! same JSON-Schema details. What the page cannot know is which answers the
//! server already applied, so a replayed answer is `UNKNOWN_INTERRUPT` here
//! where the server may say `RESUME_ALREADY_APPLIED`.

use std::collections::{BTreeMap, BTreeSet};

use iac_agui_core::agui::{Interrupt, ResumeEntry};
use iac_agui_core::document::{parse_iso_ms, PendingInput, ThreadDocument};
use iac_agui_core::error::{ErrorCode, MessageKey, ProtocolError};
use iac_agui_core::i18n::{negotiate, Language};
use iac_agui_core::machine::check_entries;
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
/// one) against `interrupts` (the paused run's `outcome.interrupts`).
///
/// Returns `{ok, error, entries, missing}`: `error` is the server's verdict
/// on the whole resume (its first refusal, `null` when accepted); `entries`
/// judges each entry on its own, `{interruptId, ok, error}`; `missing` lists
/// the pending interrupts no entry answers.
pub fn validate_resume(resume: &Value, interrupts: &Value, options: &ResumeOptions) -> Value {
    let language = options.language;
    let fail = |error: ProtocolError| {
        let failure = Failure::from_protocol(&error, language).to_json();
        json!({ "ok": false, "error": failure, "entries": [], "missing": [] })
    };
    let Some(entries) = parse_entries(resume) else {
        return fail(ProtocolError::new(
            ErrorCode::InvalidInput,
            MessageKey::InvalidEnvelope,
        ));
    };
    let Some(pending) = pending_inputs(interrupts) else {
        return fail(ProtocolError::new(
            ErrorCode::InvalidInput,
            MessageKey::InvalidEnvelope,
        ));
    };
    if let Some(now) = options.now_ms {
        let expired = pending.values().any(|p| {
            p.expires_at
                .as_deref()
                .and_then(parse_iso_ms)
                .is_some_and(|at| at <= now)
        });
        if expired {
            return fail(ProtocolError::new(
                ErrorCode::ExecutionExpired,
                MessageKey::InterruptExpired,
            ));
        }
    }
    let verdict = judge(&pending, &entries, language);
    let mut seen = BTreeSet::new();
    let per_entry: Vec<Value> = entries
        .iter()
        .map(|entry| {
            let error = if !seen.insert(entry.interrupt_id.as_str()) {
                Some(ProtocolError::new(
                    ErrorCode::IncompleteResume,
                    MessageKey::DuplicateInterruptIds,
                ))
            } else {
                let own: BTreeMap<String, PendingInput> = pending
                    .get_key_value(&entry.interrupt_id)
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .into_iter()
                    .collect();
                judge(&own, std::slice::from_ref(entry), language).err()
            };
            json!({
                "interruptId": entry.interrupt_id,
                "ok": error.is_none(),
                "error": error.map(|e| Failure::from_protocol(&e, language).to_json()),
            })
        })
        .collect();
    let answered: BTreeSet<&str> = entries.iter().map(|e| e.interrupt_id.as_str()).collect();
    let missing: Vec<&String> = pending
        .keys()
        .filter(|id| !answered.contains(id.as_str()))
        .collect();
    json!({
        "ok": verdict.is_ok(),
        "error": verdict.err().map(|e| Failure::from_protocol(&e, language).to_json()),
        "entries": per_entry,
        "missing": missing,
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

/// The machine's entry checks over a document holding only `pending`.
fn judge(
    pending: &BTreeMap<String, PendingInput>,
    entries: &[ResumeEntry],
    language: Language,
) -> Result<(), ProtocolError> {
    let mut doc = ThreadDocument::new("page", "/", None, "page".into(), "page".into());
    doc.execution.pending = pending.clone();
    let known: BTreeSet<String> = pending.keys().cloned().collect();
    check_entries(&doc, entries, &known, language).map(|_| ())
}

/// The entries of `resume`: an array, or the `resume` of a request body.
fn parse_entries(resume: &Value) -> Option<Vec<ResumeEntry>> {
    let list = match resume {
        Value::Object(body) => body.get("resume")?,
        other => other,
    };
    serde_json::from_value(list.clone()).ok()
}

/// Pending inputs rebuilt from interrupt objects: the public projection in
/// `metadata` (the input id from `id` when the metadata lacks it).
fn pending_inputs(interrupts: &Value) -> Option<BTreeMap<String, PendingInput>> {
    let interrupts: Vec<Interrupt> = serde_json::from_value(interrupts.clone()).ok()?;
    let mut pending = BTreeMap::new();
    for interrupt in interrupts {
        let mut projection = match interrupt.metadata {
            Some(Value::Object(map)) => map,
            _ => Default::default(),
        };
        if interrupt.reason == "tool_call" && !projection.contains_key("kind") {
            projection.insert("kind".into(), json!("permission"));
        }
        projection
            .entry("inputId")
            .or_insert_with(|| json!(interrupt.id));
        let input = PendingInput::new(&Value::Object(projection), false, interrupt.expires_at);
        pending.insert(interrupt.id, input);
    }
    Some(pending)
}

#[cfg(test)]
mod tests {
    use super::*;
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
