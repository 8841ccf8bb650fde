//! Interrupt → resume flows end to end: permission allowed, denied and
//! cancelled; a question answered by option and by free text, and cancelled;
//! two permissions; the resume errors that leave the interrupt in place; and
//! the backup-not-ready retry. Every stream goes through both clients.

use iac_agui_tests::agui::{ending, interrupts, resolved, Harness};
use serde_json::{json, Value};

/// Runs `scenario` on a fresh thread and returns its interrupts.
fn interrupted(h: &Harness, thread: &str, scenario: &str) -> Vec<Value> {
    let received = h.run(&h.body(thread, "run-1", &format!("scenario:{scenario}")));
    assert_eq!(
        ending(&received),
        "RUN_FINISHED:interrupt",
        "{:?}",
        received.types()
    );
    let found = interrupts(&received);
    assert!(!found.is_empty());
    found
}

fn first_option(interrupt: &Value) -> String {
    interrupt
        .pointer("/responseSchema/oneOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find_map(|branch| {
            branch
                .pointer("/properties/selectedId/const")
                .and_then(Value::as_str)
        })
        .unwrap_or_else(|| panic!("no selectedId option in {interrupt}"))
        .to_owned()
}

#[test]
fn permission_allowed_runs_the_tool() {
    let h = Harness::start();
    let found = interrupted(&h, "perm-allow", "permission");
    assert_eq!(found.len(), 1);
    let interrupt = &found[0];
    assert_eq!(interrupt["reason"], "tool_call");
    assert!(interrupt["toolCallId"].is_string(), "{interrupt}");
    assert!(interrupt["expiresAt"].is_string(), "{interrupt}");
    assert_eq!(
        interrupt.pointer("/responseSchema/properties/decision/enum"),
        Some(&json!(["allow_once", "deny"]))
    );
    let resume = h.resume_body(
        "perm-allow",
        "run-2",
        json!([resolved(
            &interrupt["id"],
            json!({"decision": "allow_once"})
        )]),
    );
    let after = h.run(&resume);
    assert_eq!(
        ending(&after),
        "RUN_FINISHED:success",
        "{:?}",
        after.types()
    );
    let result = after
        .first_of("TOOL_CALL_RESULT")
        .expect("the tool's result");
    assert_eq!(result["toolCallId"], interrupt["toolCallId"]);
    // The same answer again, under a new run id: already applied.
    let again = h.run(&h.resume_body(
        "perm-allow",
        "run-3",
        json!([resolved(
            &interrupt["id"],
            json!({"decision": "allow_once"})
        )]),
    ));
    assert_eq!(ending(&again), "RUN_ERROR:RESUME_ALREADY_APPLIED");
    h.check_clients();
}

#[test]
fn permission_denied_and_cancelled_both_deny() {
    let h = Harness::start();
    for (thread, entry) in [
        (
            "perm-deny",
            json!({"status": "resolved", "payload": {"decision": "deny"}}),
        ),
        ("perm-cancel", json!({"status": "cancelled"})),
    ] {
        let found = interrupted(&h, thread, "permission");
        let mut entry = entry;
        entry["interruptId"] = found[0]["id"].clone();
        let after = h.run(&h.resume_body(thread, "run-2", json!([entry])));
        assert_eq!(
            ending(&after),
            "RUN_FINISHED:success",
            "{thread}: {:?}",
            after.types()
        );
        // The thread is free again: a normal turn needs no resume.
        let next = h.run(&h.body(thread, "run-3", "scenario:plain"));
        assert_eq!(ending(&next), "RUN_FINISHED:success", "{thread}");
    }
    h.check_clients();
}

#[test]
fn two_permissions_are_answered_in_turn() {
    let h = Harness::start();
    let mut pending = interrupted(&h, "two-perms", "two-permissions");
    let mut answered = 0;
    let mut run = 2;
    while !pending.is_empty() {
        let entries: Vec<Value> = pending
            .iter()
            .map(|i| resolved(&i["id"], json!({"decision": "allow_once"})))
            .collect();
        answered += entries.len();
        let after = h.run(&h.resume_body("two-perms", &format!("run-{run}"), json!(entries)));
        run += 1;
        let end = ending(&after);
        assert!(
            end == "RUN_FINISHED:success" || end == "RUN_FINISHED:interrupt",
            "{end}: {:?}",
            after.types()
        );
        pending = interrupts(&after);
        assert!(run < 6, "more interrupts than the scenario has");
    }
    assert_eq!(answered, 2, "two permissions in all");
    h.check_clients();
}

#[test]
fn question_answered_by_option_and_by_free_text() {
    let h = Harness::start();
    let by_option = interrupted(&h, "question-option", "question");
    let question = &by_option[0];
    assert_eq!(question["reason"], "input_required");
    let option = first_option(question);
    let after = h.run(&h.resume_body(
        "question-option",
        "run-2",
        json!([resolved(&question["id"], json!({"selectedId": option}))]),
    ));
    assert!(
        ending(&after).starts_with("RUN_FINISHED"),
        "{:?}",
        after.types()
    );

    let by_text = interrupted(&h, "question-text", "question");
    let after = h.run(&h.resume_body(
        "question-text",
        "run-2",
        json!([resolved(
            &by_text[0]["id"],
            json!({"freeText": "use the cheapest region"})
        )]),
    ));
    assert!(
        ending(&after).starts_with("RUN_FINISHED"),
        "{:?}",
        after.types()
    );
    h.check_clients();
}

#[test]
fn question_cancelled_cancels_the_execution() {
    let h = Harness::start();
    let found = interrupted(&h, "question-cancel", "question");
    let entry = json!({"interruptId": found[0]["id"], "status": "cancelled"});
    let after = h.run(&h.resume_body("question-cancel", "run-2", json!([entry])));
    assert_eq!(ending(&after), "RUN_ERROR:CANCELLED");
    let next = h.run(&h.body("question-cancel", "run-3", "scenario:plain"));
    assert_eq!(ending(&next), "RUN_FINISHED:success");
    h.check_clients();
}

#[test]
fn bad_resumes_fail_and_keep_the_interrupt() {
    let h = Harness::start();
    let found = interrupted(&h, "bad-resume", "permission");
    let id = found[0]["id"].clone();
    let attempts = [
        (
            "UNKNOWN_INTERRUPT",
            json!([resolved(
                &json!("no-such-interrupt"),
                json!({"decision": "deny"})
            )]),
        ),
        ("INCOMPLETE_RESUME", json!([])),
        (
            "RESUME_PAYLOAD_INVALID",
            json!([resolved(&id, json!({"decision": "maybe"}))]),
        ),
        (
            "RESUME_PAYLOAD_INVALID",
            json!([{"interruptId": id, "status": "resolved"}]),
        ),
        (
            "INCOMPLETE_RESUME",
            json!([
                resolved(&id, json!({"decision": "deny"})),
                resolved(&id, json!({"decision": "deny"}))
            ]),
        ),
    ];
    for (n, (code, entries)) in attempts.iter().enumerate() {
        let after = h.run(&h.resume_body("bad-resume", &format!("bad-{n}"), entries.clone()));
        assert_eq!(
            ending(&after),
            format!("RUN_ERROR:{code}"),
            "attempt {n}: {:?}",
            after.events
        );
    }
    // A new turn is still refused: the interrupt is pending.
    let refused = h.post(&h.body("bad-resume", "turn", "scenario:plain"));
    assert_eq!(
        (refused.status, refused.error_code().as_str()),
        (409, "RESUME_REQUIRED")
    );
    let after = h.run(&h.resume_body(
        "bad-resume",
        "good",
        json!([resolved(&id, json!({"decision": "allow_once"}))]),
    ));
    assert_eq!(ending(&after), "RUN_FINISHED:success");
    h.check_clients();
}

#[test]
fn backup_not_ready_is_retryable() {
    // The scenario holds once at session restore and once at the answer:
    // both surface as the retryable error, and the interrupt stays pending.
    let h = Harness::start();
    let found = interrupted(&h, "backup", "backup-not-ready");
    let entries = json!([resolved(&found[0]["id"], json!({"decision": "allow_once"}))]);
    for run in ["run-2", "run-3"] {
        let refused = h.run(&h.resume_body("backup", run, entries.clone()));
        assert_eq!(
            ending(&refused),
            "RUN_ERROR:SESSION_BACKUP_NOT_READY",
            "{run}: {:?}",
            refused.events
        );
        assert!(
            refused
                .last()
                .and_then(|e| e["message"].as_str())
                .is_some_and(|m| m.contains('3')),
            "the message says when to retry: {:?}",
            refused.last()
        );
    }
    let retry = h.run(&h.resume_body("backup", "run-4", entries));
    assert_eq!(
        ending(&retry),
        "RUN_FINISHED:success",
        "{:?}",
        retry.types()
    );
    h.check_clients();
}

#[test]
fn pipeline_runs_to_the_end_through_its_interrupts() {
    let h = Harness::start();
    let mut pending = interrupted(&h, "pipeline", "pipeline");
    let mut run = 2;
    let mut kinds = Vec::new();
    while !pending.is_empty() {
        let entries: Vec<Value> = pending
            .iter()
            .map(|i| {
                kinds.push(i["reason"].as_str().unwrap_or("").to_owned());
                if i["reason"] == "tool_call" {
                    resolved(&i["id"], json!({"decision": "allow_once"}))
                } else {
                    resolved(&i["id"], json!({"selectedId": first_option(i)}))
                }
            })
            .collect();
        let after = h.run(&h.resume_body("pipeline", &format!("run-{run}"), json!(entries)));
        let end = ending(&after);
        assert!(
            end.starts_with("RUN_FINISHED"),
            "run-{run}: {end}: {:?}",
            after.events
        );
        pending = interrupts(&after);
        run += 1;
        assert!(run < 10, "the pipeline keeps interrupting: {kinds:?}");
    }
    assert!(!kinds.is_empty());
    h.check_clients();
}

#[test]
fn an_expired_interrupt_cannot_be_resumed() {
    let h = Harness::with(
        iac_agui_tests::procs::RuntimeOptions::default(),
        iac_agui_tests::procs::ServerOptions {
            interrupt_ttl: Some(1),
            ..Default::default()
        },
    );
    let received = h.run(&h.body("expiry", "run-1", "scenario:permission"));
    assert_eq!(ending(&received), "RUN_FINISHED:interrupt");
    let found = interrupts(&received);
    let task_id = iac_agui_tests::agui::session(&received).expect("session")["taskId"].clone();
    // The server expires an abandoned interrupt by itself (SPEC §11): the
    // A2A task gets cancelled without any request.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let task = h.runtime_rpc("GetTask", json!({"id": task_id, "historyLength": 1}));
        let state = task
            .pointer("/result/status/state")
            .and_then(Value::as_str)
            .unwrap_or("");
        if state.to_ascii_uppercase().contains("CANCELED") {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "task still {state} after the TTL"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // A late resume learns why it fails: the timer only cancelled the task,
    // the pending state stayed for this access to report and remove.
    let after = h.run(&h.resume_body(
        "expiry",
        "run-2",
        json!([resolved(&found[0]["id"], json!({"decision": "allow_once"}))]),
    ));
    assert_eq!(
        ending(&after),
        "RUN_ERROR:EXECUTION_EXPIRED",
        "{:?}",
        after.events
    );
    // The pending state is gone: a new turn needs no resume.
    let next = h.run(&h.body("expiry", "run-3", "scenario:plain"));
    assert_eq!(ending(&next), "RUN_FINISHED:success");
    h.check_clients();
}
