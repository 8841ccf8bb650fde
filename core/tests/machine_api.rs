//! The machine's pure pieces and host-facing queries: admission rules in
//! order, entry checks, payload validation, idle tracking, deadlines,
//! eviction and secret redaction.

use std::collections::BTreeSet;

use iac_agui_core::agui::{ResumeEntry, ResumeStatus};
use iac_agui_core::document::{PendingInput, ThreadDocument};
use iac_agui_core::ids::IdGen;
use iac_agui_core::machine::{
    admit, answer_digest, check_entries, validate_payload, Answer, Config, EntryCheck, Load,
    Machine, Output,
};
use iac_agui_core::validate::{validate_run, ValidatedRun};
use iac_agui_core::{ErrorCode, Language};
use serde_json::{json, Value};

fn request(run_id: &str, resume: Option<Value>, ros: &str, cwd: &str, user: &str) -> ValidatedRun {
    let mut body = json!({
        "threadId": "t", "runId": run_id, "state": {}, "tools": [], "context": [],
        "messages": [{"id": "m1", "role": "user", "content": "hi"}],
        "forwardedProps": {"iacCode": {"schemaVersion": 1, "rosInvocationId": ros, "cwd": cwd, "userId": user,
                                        "llmApiKey": "sk-very-secret"}},
    });
    if let Some(resume) = resume {
        body["resume"] = resume;
    }
    validate_run(&body, None).expect("valid request")
}

fn permission_pending(id: &str) -> PendingInput {
    PendingInput::new(
        &json!({"inputId": id, "kind": "permission", "prompt": "ok?", "required": true}),
        false,
        Some("2030-01-01T00:00:00.000Z".into()),
    )
}

fn thread_with_pending() -> ThreadDocument {
    let mut doc = ThreadDocument::new("t", "/w", Some("u".into()), "e1".into(), "r1".into());
    doc.execution.task_id = Some("task".into());
    doc.execution
        .pending
        .insert("p1".into(), permission_pending("p1"));
    doc
}

fn code(result: Result<impl std::fmt::Debug, iac_agui_core::ProtocolError>) -> ErrorCode {
    result.expect_err("refused").code
}

#[test]
fn admission_applies_its_rules_in_order() {
    let mut ids = IdGen::new(1);
    let fresh = request("r1", None, "r1", "/w", "u");
    let created = admit(&fresh, "/w", None, false, 0, 1000, &mut ids).unwrap();
    assert_eq!(created.document.run_digests.get("r1"), Some(&fresh.digest));
    assert!(created.document.execution.pending.is_empty());

    let resume = request("r2", Some(json!([])), "r1", "/w", "u");
    assert_eq!(
        code(admit(&resume, "/w", None, false, 0, 1000, &mut ids)),
        ErrorCode::ExecutionLost
    );

    let doc = created.document;
    // Same digest first, even when the thread is busy and bound elsewhere.
    assert_eq!(
        code(admit(&fresh, "/other", Some(&doc), true, 0, 1000, &mut ids)),
        ErrorCode::DuplicateRunId
    );
    let changed = request("r1", None, "r1", "/w", "someone");
    assert_eq!(
        code(admit(&changed, "/w", Some(&doc), false, 0, 1000, &mut ids)),
        ErrorCode::RunIdConflict
    );
    let next = request("r3", None, "r1", "/w", "u");
    assert_eq!(
        code(admit(&next, "/w", Some(&doc), true, 0, 1000, &mut ids)),
        ErrorCode::ThreadBusy
    );
    assert_eq!(
        code(admit(
            &next,
            "/elsewhere",
            Some(&doc),
            false,
            0,
            1000,
            &mut ids
        )),
        ErrorCode::ThreadBindingConflict
    );
    let other_user = request("r3", None, "r1", "/w", "v");
    assert_eq!(
        code(admit(
            &other_user,
            "/w",
            Some(&doc),
            false,
            0,
            1000,
            &mut ids
        )),
        ErrorCode::ThreadBindingConflict
    );

    let waiting = thread_with_pending();
    assert_eq!(
        code(admit(&next, "/w", Some(&waiting), false, 0, 1000, &mut ids)),
        ErrorCode::ResumeRequired
    );
    let wrong_ros = request("r4", Some(json!([])), "other", "/w", "u");
    assert_eq!(
        code(admit(
            &wrong_ros,
            "/w",
            Some(&waiting),
            false,
            0,
            1000,
            &mut ids
        )),
        ErrorCode::ExecutionLost
    );
    let right = request("r4", Some(json!([])), "r1", "/w", "u");
    let resumed = admit(&right, "/w", Some(&waiting), false, 0, 1000, &mut ids).unwrap();
    assert_eq!(
        resumed.document.execution.execution_id, "e1",
        "a resume keeps the execution"
    );

    // A new turn rotates: old execution terminal, fresh id, no task.
    let rotated = admit(&next, "/w", Some(&doc), false, 0, 1000, &mut ids)
        .unwrap()
        .document;
    assert_ne!(rotated.execution.execution_id, doc.execution.execution_id);
    assert!(rotated
        .terminal_execution_ids
        .contains(&doc.execution.execution_id));
    assert_eq!(rotated.execution.task_id, None);
}

#[test]
fn admission_expires_interrupts_on_access_and_dates_reference_ones() {
    let mut ids = IdGen::new(1);
    let mut doc = thread_with_pending();
    let next = request("r9", None, "r1", "/w", "u");
    let late = iac_agui_core::document::parse_iso_ms("2030-01-01T00:00:00.000Z").unwrap();
    let admitted = admit(&next, "/w", Some(&doc), false, late, 1000, &mut ids).unwrap();
    assert_eq!(admitted.expired_task.as_deref(), Some("task"));
    assert!(admitted.document.execution.pending.is_empty());

    doc.execution.pending.get_mut("p1").unwrap().expires_at = None;
    let resume = request("r9", Some(json!([])), "r1", "/w", "u");
    let admitted = admit(&resume, "/w", Some(&doc), false, 0, 5000, &mut ids).unwrap();
    let pending = &admitted.document.execution.pending["p1"];
    assert_eq!(
        pending.expires_at.as_deref(),
        Some("1970-01-01T00:00:05.000Z")
    );
}

fn entry(id: &str, status: ResumeStatus, payload: Option<Value>) -> ResumeEntry {
    ResumeEntry {
        interrupt_id: id.into(),
        status,
        payload,
        metadata: None,
    }
}

#[test]
fn entry_checks_follow_the_spec() {
    let doc = thread_with_pending();
    let known: BTreeSet<String> = ["p1".to_owned()].into();
    let allow = entry(
        "p1",
        ResumeStatus::Resolved,
        Some(json!({"decision": "allow_once"})),
    );
    let check = |entries: &[ResumeEntry]| check_entries(&doc, entries, &known, Language::En);

    assert_eq!(
        code(check(&[allow.clone(), allow.clone()])),
        ErrorCode::IncompleteResume
    );
    assert_eq!(code(check(&[])), ErrorCode::IncompleteResume);
    let stranger = entry("p9", ResumeStatus::Cancelled, None);
    assert_eq!(
        code(check(&[allow.clone(), stranger])),
        ErrorCode::UnknownInterrupt
    );
    assert_eq!(
        code(check(&[entry("p1", ResumeStatus::Resolved, None)])),
        ErrorCode::ResumePayloadInvalid
    );
    let bad = entry(
        "p1",
        ResumeStatus::Resolved,
        Some(json!({"decision": "always"})),
    );
    assert_eq!(code(check(&[bad])), ErrorCode::ResumePayloadInvalid);

    let Ok(EntryCheck::Apply(applied)) = check(std::slice::from_ref(&allow)) else {
        panic!("a valid answer applies");
    };
    assert_eq!(applied[0].digest, answer_digest(&allow));
    let Ok(EntryCheck::Apply(cancelled)) = check(&[entry("p1", ResumeStatus::Cancelled, None)])
    else {
        panic!("a cancelled permission applies");
    };
    assert_eq!(cancelled[0].payload, json!({"decision": "deny"}));

    // New inputs from this reconciliation without an entry: a new interrupt.
    let mut grown = doc.clone();
    grown
        .execution
        .pending
        .insert("p2".into(), permission_pending("p2"));
    let result = check_entries(&grown, std::slice::from_ref(&allow), &known, Language::En);
    assert_eq!(result, Ok(EntryCheck::NewInterrupts));

    // Already applied with the same digest: skipped; a different one: refused.
    let mut applied_doc = ThreadDocument::new("t", "/w", None, "e1".into(), "r1".into());
    applied_doc
        .applied_resume_digests
        .insert(("e1".into(), "p1".into()), answer_digest(&allow));
    let none = BTreeSet::new();
    assert_eq!(
        code(check_entries(
            &applied_doc,
            std::slice::from_ref(&allow),
            &none,
            Language::En
        )),
        ErrorCode::ResumeAlreadyApplied
    );
    let deny = entry(
        "p1",
        ResumeStatus::Resolved,
        Some(json!({"decision": "deny"})),
    );
    assert_eq!(
        code(check_entries(&applied_doc, &[deny], &none, Language::En)),
        ErrorCode::ResumeAlreadyApplied
    );
}

#[test]
fn question_payloads_validate_against_their_one_of_schema() {
    let question = PendingInput::new(
        &json!({"inputId": "q", "kind": "ask_user_question", "prompt": "Region?", "allowFreeText": false,
                "options": [{"id": "a", "label": "A"}, {"id": "b", "label": "B"}]}),
        false,
        None,
    );
    assert!(validate_payload(&question, &json!({"selectedId": "a"}), Language::En).is_ok());
    assert!(validate_payload(&question, &json!({"selectedId": "c"}), Language::En).is_err());
    assert!(validate_payload(&question, &json!({"freeText": "x"}), Language::En).is_err());
    let error = validate_payload(
        &question,
        &json!({"selectedId": "a", "extra": 1}),
        Language::En,
    )
    .expect_err("closed object");
    assert_eq!(error.code, ErrorCode::ResumePayloadInvalid);
    assert!(!format!("{:?}", error.details).contains("extra\": 1"));
    let free = PendingInput::new(
        &json!({"inputId": "f", "kind": "ask_user_question"}),
        false,
        None,
    );
    assert!(validate_payload(&free, &json!({"freeText": "anything"}), Language::En).is_ok());
    assert!(validate_payload(&free, &json!({"freeText": ""}), Language::En).is_err());
}

#[test]
fn idle_deadline_and_eviction_follow_the_threads() {
    let mut machine = Machine::new(Config::default(), 3);
    assert!(machine.is_idle());
    assert_eq!(machine.poll_timeout(), None);
    let mut stored = thread_with_pending().to_json();
    stored["threadId"] = json!("t");
    let resume = request("r5", Some(json!([])), "r1", "/w", "u");
    machine.handle_run_request(10, resume, "/w", Load::Found(stored));
    assert!(!machine.is_idle(), "an admission is in flight");
    assert!(!machine.evict("t"));
    let outputs = machine.drain();
    let Some(Output::Persist { id, .. }) = outputs.first() else {
        panic!("admission persists first: {outputs:?}");
    };
    machine.handle_answer(11, *id, Answer::Persisted { ok: false });
    let refused = machine.drain();
    assert!(
        matches!(&refused[0], Output::Refused { status: 503, .. }),
        "{refused:?}"
    );
    // Rolled back: the pending interrupt is still there, so not idle; the
    // deadline is its expiry.
    assert!(!machine.is_idle());
    assert_eq!(
        machine.poll_timeout(),
        iac_agui_core::document::parse_iso_ms("2030-01-01T00:00:00.000Z")
    );
    assert!(machine.evict("t"));
    assert!(machine.is_idle());
    assert!(machine.needs_load("t"));
}

#[test]
fn outputs_never_show_secrets_in_debug() {
    let mut machine = Machine::new(Config::default(), 3);
    machine.handle_run_request(1, request("r1", None, "r1", "/w", "u"), "/w", Load::Missing);
    let persist = machine.drain();
    let Some(Output::Persist { id, document, .. }) = persist.first() else {
        panic!("persist first");
    };
    assert!(!format!("{document:?}").contains("sk-very-secret"));
    machine.handle_answer(2, *id, Answer::Persisted { ok: true });
    let outputs = machine.drain();
    let request = outputs
        .iter()
        .find(|o| matches!(o, Output::A2a { .. }))
        .expect("the turn is sent");
    assert!(serde_json::to_string(request)
        .unwrap()
        .contains("sk-very-secret"));
    assert!(!format!("{request:?}").contains("sk-very-secret"));
}
