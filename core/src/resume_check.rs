//! A resume judged against the interrupts a client was shown, without the
//! server's thread document (SPEC §8 step 6, plus the expiry of step 2).
//!
//! Clients and edge runtimes hold the paused run's `outcome.interrupts`,
//! not the durable pending set. Each interrupt's `metadata` carries the
//! public input projection it was built from (SPEC §7), so the pending set
//! is rebuilt from it and the machine's own [`check_entries`] decides: the
//! same order of checks, codes and JSON-Schema details as the server.
//!
//! What a client cannot know is which answers the server already applied:
//! a replayed answer is `UNKNOWN_INTERRUPT` here where the server may say
//! `RESUME_ALREADY_APPLIED`.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};

use crate::agui::{Interrupt, ResumeEntry};
use crate::document::{parse_iso_ms, PendingInput, ThreadDocument};
use crate::error::{ErrorCode, MessageKey, ProtocolError};
use crate::i18n::Language;
use crate::machine::check_entries;

/// The verdict on a whole resume, and on each of its entries.
#[derive(Debug, Clone, PartialEq)]
pub struct ResumeVerdict {
    /// The server's first refusal of the resume; `None` when accepted.
    pub error: Option<ProtocolError>,
    /// Each entry judged on its own, in request order.
    pub entries: Vec<EntryVerdict>,
    /// Interrupts that no entry answers, sorted.
    pub missing: Vec<String>,
}

/// One entry's own verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct EntryVerdict {
    /// The interrupt the entry answers.
    pub interrupt_id: String,
    /// Why this entry alone would be refused; `None` when it is acceptable.
    pub error: Option<ProtocolError>,
}

/// Judges `resume` (an array of entries, or a `RunAgentInput` holding one)
/// against `interrupts` (the paused run's `outcome.interrupts`). With
/// `now_ms`, an interrupt whose `expiresAt` is at or before it makes the
/// resume `EXECUTION_EXPIRED`, as on the server.
///
/// Malformed `resume` or `interrupts` documents are `INVALID_INPUT`
/// (envelope), with no entries judged.
pub fn check_resume(
    resume: &Value,
    interrupts: &Value,
    language: Language,
    now_ms: Option<i64>,
) -> ResumeVerdict {
    let refused = |error: ProtocolError| ResumeVerdict {
        error: Some(error),
        entries: Vec::new(),
        missing: Vec::new(),
    };
    let envelope = || ProtocolError::new(ErrorCode::InvalidInput, MessageKey::InvalidEnvelope);
    let Some(entries) = resume_entries(resume) else {
        return refused(envelope());
    };
    let Some(pending) = pending_from_interrupts(interrupts) else {
        return refused(envelope());
    };
    if let Some(now) = now_ms {
        let expired = pending.values().any(|input| {
            input
                .expires_at
                .as_deref()
                .and_then(parse_iso_ms)
                .is_some_and(|at| at <= now)
        });
        if expired {
            return refused(ProtocolError::new(
                ErrorCode::ExecutionExpired,
                MessageKey::InterruptExpired,
            ));
        }
    }
    let mut seen = BTreeSet::new();
    let per_entry = entries
        .iter()
        .map(|entry| {
            let error = if seen.insert(entry.interrupt_id.as_str()) {
                let own: BTreeMap<String, PendingInput> = pending
                    .get_key_value(&entry.interrupt_id)
                    .map(|(id, input)| (id.clone(), input.clone()))
                    .into_iter()
                    .collect();
                judge(&own, std::slice::from_ref(entry), language).err()
            } else {
                Some(ProtocolError::new(
                    ErrorCode::IncompleteResume,
                    MessageKey::DuplicateInterruptIds,
                ))
            };
            EntryVerdict {
                interrupt_id: entry.interrupt_id.clone(),
                error,
            }
        })
        .collect();
    let missing = pending
        .keys()
        .filter(|id| !seen.contains(id.as_str()))
        .cloned()
        .collect();
    ResumeVerdict {
        error: judge(&pending, &entries, language).err(),
        entries: per_entry,
        missing,
    }
}

/// The pending inputs behind interrupt objects: the projection in each
/// `metadata`, its input id taken from `id` when missing (and `kind`
/// `permission` for a `tool_call` interrupt that lacks it). `None` when
/// `interrupts` is not an array of interrupts.
pub fn pending_from_interrupts(interrupts: &Value) -> Option<BTreeMap<String, PendingInput>> {
    let interrupts: Vec<Interrupt> = serde_json::from_value(interrupts.clone()).ok()?;
    let mut pending = BTreeMap::new();
    for interrupt in interrupts {
        let mut projection = match interrupt.metadata {
            Some(Value::Object(map)) => map,
            _ => serde_json::Map::new(),
        };
        if interrupt.reason == "tool_call" && !projection.contains_key("kind") {
            projection.insert("kind".to_owned(), json!("permission"));
        }
        projection
            .entry("inputId")
            .or_insert_with(|| json!(interrupt.id));
        let input = PendingInput::new(&Value::Object(projection), false, interrupt.expires_at);
        pending.insert(interrupt.id, input);
    }
    Some(pending)
}

/// The machine's entry checks over a document that holds only `pending`.
fn judge(
    pending: &BTreeMap<String, PendingInput>,
    entries: &[ResumeEntry],
    language: Language,
) -> Result<(), ProtocolError> {
    let mut doc = ThreadDocument::new("client", "/", None, "client".into(), "client".into());
    doc.execution.pending = pending.clone();
    let known: BTreeSet<String> = pending.keys().cloned().collect();
    check_entries(&doc, entries, &known, language).map(|_| ())
}

/// The entries of `resume`: an array, or the `resume` of a request body.
fn resume_entries(resume: &Value) -> Option<Vec<ResumeEntry>> {
    let list = match resume {
        Value::Object(body) => body.get("resume")?,
        other => other,
    };
    serde_json::from_value(list.clone()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mapper::build_interrupt;

    fn interrupts() -> Value {
        let permission = json!({"schemaVersion": 1, "kind": "permission", "inputId": "p-1",
            "toolUseId": "tu-1", "title": "Deploy?", "required": true});
        let question = json!({"schemaVersion": 1, "kind": "input_required", "inputId": "q-1",
            "prompt": "Which VPC?", "required": true,
            "options": [{"id": "vpc-a", "label": "A"}, {"id": "vpc-b", "label": "B"}]});
        let at = "2026-01-01T00:09:00.000Z";
        json!([
            build_interrupt(&permission, at, Language::En),
            build_interrupt(&question, at, Language::En),
        ])
    }

    fn code(error: &Option<ProtocolError>) -> Option<&'static str> {
        error.as_ref().map(|e| e.code.as_str())
    }

    #[test]
    fn good_answers_pass_and_a_bad_payload_names_its_entry() {
        let resume = json!([
            {"interruptId": "p-1", "status": "resolved", "payload": {"decision": "allow_once"}},
            {"interruptId": "q-1", "status": "resolved", "payload": {"selectedId": "vpc-b"}},
        ]);
        let verdict = check_resume(&resume, &interrupts(), Language::En, None);
        assert_eq!(verdict.error, None);
        assert!(verdict.missing.is_empty());
        let resume = json!({"resume": [
            {"interruptId": "p-1", "status": "resolved", "payload": {"decision": "always"}},
            {"interruptId": "q-1", "status": "resolved", "payload": {"selectedId": "vpc-b"}},
        ]});
        let verdict = check_resume(&resume, &interrupts(), Language::En, None);
        assert_eq!(code(&verdict.error), Some("RESUME_PAYLOAD_INVALID"));
        assert_eq!(
            code(&verdict.entries[0].error),
            Some("RESUME_PAYLOAD_INVALID")
        );
        assert_eq!(verdict.entries[1].error, None);
        assert!(verdict.entries[0].error.as_ref().unwrap().details.is_some());
    }

    #[test]
    fn missing_unknown_duplicate_and_expired() {
        let one = json!([{"interruptId": "p-1", "status": "cancelled"}]);
        let verdict = check_resume(&one, &interrupts(), Language::En, None);
        assert_eq!(code(&verdict.error), Some("INCOMPLETE_RESUME"));
        assert_eq!(verdict.missing, ["q-1"]);
        let unknown = json!([{"interruptId": "x", "status": "cancelled"}]);
        let verdict = check_resume(&unknown, &interrupts(), Language::En, None);
        assert_eq!(code(&verdict.error), Some("UNKNOWN_INTERRUPT"));
        let twice = json!([
            {"interruptId": "p-1", "status": "cancelled"},
            {"interruptId": "p-1", "status": "cancelled"},
        ]);
        let verdict = check_resume(&twice, &interrupts(), Language::En, None);
        assert_eq!(code(&verdict.entries[1].error), Some("INCOMPLETE_RESUME"));
        let expired_at = parse_iso_ms("2026-01-01T00:09:00.000Z");
        let verdict = check_resume(&one, &interrupts(), Language::En, expired_at);
        assert_eq!(code(&verdict.error), Some("EXECUTION_EXPIRED"));
        let verdict = check_resume(&one, &interrupts(), Language::En, expired_at.map(|t| t - 1));
        assert_eq!(code(&verdict.error), Some("INCOMPLETE_RESUME"));
    }

    #[test]
    fn malformed_documents_are_envelope_errors() {
        let verdict = check_resume(&json!({"no": "resume"}), &interrupts(), Language::En, None);
        assert_eq!(code(&verdict.error), Some("INVALID_INPUT"));
        let verdict = check_resume(&json!([]), &json!({"not": "a list"}), Language::En, None);
        assert_eq!(code(&verdict.error), Some("INVALID_INPUT"));
    }
}
