//! Resume entry checks (SPEC §8 step 6) and answer building, as pure
//! functions over the reconciled thread document.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use crate::agui::{ResumeEntry, ResumeStatus};
use crate::document::{PendingInput, ThreadDocument};
use crate::error::{ErrorCode, MessageKey, ProtocolError};
use crate::i18n::Language;
use crate::json::canonical_digest;
use crate::mapper::{build_interrupt, standard_options};

/// One answer that passed the checks and will be applied.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolution {
    /// The interrupt it answers.
    pub interrupt_id: String,
    /// The pending input it answers.
    pub pending: PendingInput,
    /// How it answers.
    pub status: ResumeStatus,
    /// The payload to apply (`{"decision":"deny"}` for a cancelled permission).
    pub payload: Value,
    /// Digest of the entry's canonical `{"status","payload"}`.
    pub digest: String,
}

/// What the entry checks decided.
#[derive(Debug, Clone, PartialEq)]
pub enum EntryCheck {
    /// Apply these answers, in request order.
    Apply(Vec<Resolution>),
    /// Inputs that appeared during this very reconciliation have no entry:
    /// end the run with a new interrupt outcome listing them.
    NewInterrupts,
}

/// SHA-256 of the canonical `{"status","payload"}` of an entry (`payload`
/// `null` when absent): what "applied once" is keyed on.
pub fn answer_digest(entry: &ResumeEntry) -> String {
    canonical_digest(&json!({
        "status": entry.status.as_str(),
        "payload": entry.payload.clone().unwrap_or(Value::Null),
    }))
}

/// The entry checks of SPEC §8 step 6, against the reconciled pending set of
/// `doc`. `known_before` are the pending ids before reconciliation.
///
/// # Errors
/// `INCOMPLETE_RESUME`, `UNKNOWN_INTERRUPT`, `RESUME_PAYLOAD_INVALID` or
/// `RESUME_ALREADY_APPLIED`; pending interrupts stay in place for a retry.
pub fn check_entries(
    doc: &ThreadDocument,
    entries: &[ResumeEntry],
    known_before: &BTreeSet<String>,
    language: Language,
) -> Result<EntryCheck, ProtocolError> {
    let mut supplied = BTreeSet::new();
    if !entries
        .iter()
        .all(|e| supplied.insert(e.interrupt_id.as_str()))
    {
        return Err(ProtocolError::new(
            ErrorCode::IncompleteResume,
            MessageKey::DuplicateInterruptIds,
        ));
    }
    let pending = &doc.execution.pending;
    for entry in entries {
        if pending.contains_key(&entry.interrupt_id) {
            continue;
        }
        match doc.applied_digest(&entry.interrupt_id) {
            Some(applied) if applied == answer_digest(entry) => {}
            Some(_) => return Err(already_applied()),
            None => {
                return Err(ProtocolError::new(
                    ErrorCode::UnknownInterrupt,
                    MessageKey::UnknownInterrupt,
                ))
            }
        }
    }
    let missing: Vec<&String> = pending
        .keys()
        .filter(|id| !supplied.contains(id.as_str()))
        .collect();
    if missing.iter().any(|id| known_before.contains(*id)) {
        return Err(ProtocolError::new(
            ErrorCode::IncompleteResume,
            MessageKey::ResumeIncomplete,
        ));
    }
    if !missing.is_empty() {
        return Ok(EntryCheck::NewInterrupts);
    }
    let mut resolutions = Vec::new();
    for entry in entries {
        let Some(input) = pending.get(&entry.interrupt_id) else {
            continue;
        };
        let payload = match (entry.status, &entry.payload) {
            (ResumeStatus::Cancelled, _) if input.is_permission() => json!({"decision": "deny"}),
            (ResumeStatus::Cancelled, payload) => payload.clone().unwrap_or(Value::Null),
            (ResumeStatus::Resolved, Some(payload)) => payload.clone(),
            (ResumeStatus::Resolved, None) => {
                return Err(ProtocolError::new(
                    ErrorCode::ResumePayloadInvalid,
                    MessageKey::PayloadRequired,
                ))
            }
        };
        let judged = entry.status == ResumeStatus::Resolved || input.is_permission();
        if judged {
            validate_payload(input, &payload, language)?;
        }
        resolutions.push(Resolution {
            interrupt_id: entry.interrupt_id.clone(),
            pending: input.clone(),
            status: entry.status,
            payload,
            digest: answer_digest(entry),
        });
    }
    if resolutions.is_empty() {
        return Err(already_applied());
    }
    Ok(EntryCheck::Apply(resolutions))
}

/// Validates `payload` against the JSON Schema of the interrupt built from
/// `input` (SPEC §7), with the core's [`crate::schema`] validator.
///
/// # Errors
/// `RESUME_PAYLOAD_INVALID`, with the failing instance paths as details
/// (never the payload values).
pub fn validate_payload(
    input: &PendingInput,
    payload: &Value,
    language: Language,
) -> Result<(), ProtocolError> {
    let invalid =
        || ProtocolError::new(ErrorCode::ResumePayloadInvalid, MessageKey::PayloadInvalid);
    let projection = Value::Object(input.value.clone());
    let interrupt = build_interrupt(&projection, "", language);
    let schema = interrupt.response_schema.unwrap_or(Value::Bool(true));
    let paths: Vec<String> = crate::schema::validate(&schema, payload)
        .into_iter()
        .map(|e| e.instance_path)
        .collect();
    if paths.is_empty() {
        Ok(())
    } else {
        Err(invalid().with_details(json!({ "instancePaths": paths })))
    }
}

/// The text a question answer sends to A2A: `freeText`, else the title of
/// the option whose id is `selectedId`, else `selectedId`; empty when none.
pub(crate) fn answer_text(input: &PendingInput, payload: &Value) -> String {
    let text = |key: &str| {
        payload
            .get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    if let Some(free) = text("freeText").or_else(|| text("free_text")) {
        return free;
    }
    let Some(selected) = text("selectedId").or_else(|| text("selected_id")) else {
        return String::new();
    };
    let options = standard_options(input.value.get("options").unwrap_or(&Value::Null));
    options
        .iter()
        .find(|o| o.get("id").and_then(Value::as_str) == Some(selected.as_str()))
        .and_then(|o| o.get("title").and_then(Value::as_str))
        .map_or(selected.clone(), str::to_owned)
}

fn already_applied() -> ProtocolError {
    ProtocolError::new(ErrorCode::ResumeAlreadyApplied, MessageKey::AlreadyApplied)
}
