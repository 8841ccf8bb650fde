//! Lifecycle end to end: the cancel extension, a client that hangs up during
//! a run (the runtime's task is cancelled), a server restart between an
//! interrupt and its resume, heartbeats with a short interval, and `--demo`.

use std::time::{Duration, Instant};

use iac_agui_tests::agui::{ending, interrupts, resolved, session, Harness, ROS};
use iac_agui_tests::http::Request;
use iac_agui_tests::procs::{RuntimeOptions, Server, ServerOptions};
use iac_agui_tests::sse::parse;
use serde_json::{json, Value};

const WAIT: Duration = Duration::from_secs(20);

/// The session event's value, read from an open stream.
fn session_of(text: &str) -> Value {
    session(&parse(&complete_records(text))).expect("session event")
}

/// The complete records of a partially read stream.
fn complete_records(text: &str) -> String {
    match text.rfind("\n\n") {
        Some(end) => text[..end + 2].to_owned(),
        None => String::new(),
    }
}

fn cancel_path(execution: &Value) -> String {
    format!(
        "/extensions/iac-code/v1/executions/{}/cancel",
        execution.as_str().expect("executionId")
    )
}

fn task_state(h: &Harness, task_id: &Value) -> String {
    let task = h.runtime_rpc("GetTask", json!({"id": task_id, "historyLength": 1}));
    task.pointer("/result/status/state")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned()
}

#[test]
fn cancel_extension_ends_an_active_run() {
    let h = Harness::start();
    let body = h.body("cancel-ext", "run-1", "scenario:cancel");
    let mut stream = h.open(&body);
    let text = stream.read_until(WAIT, |t| t.contains("iac-code.session.v1"));
    let session = session_of(&text);
    let path = cancel_path(&session["executionId"]);
    let ids = json!({"threadId": "cancel-ext", "rosInvocationId": ROS});

    // Another caller cannot cancel it (a terminal execution, by contrast,
    // answers already_terminal to anyone, as the reference does).
    let wrong_caller = Request::agui(
        &path,
        &json!({"threadId": "cancel-ext", "rosInvocationId": "other"}),
    )
    .send(h.addr());
    assert_eq!(wrong_caller.status, 404);
    let response = Request::agui(&path, &ids).send(h.addr());
    assert_eq!(response.status, 200, "{}", response.text());
    assert_eq!(response.json()["status"], "cancelled");
    assert_eq!(response.json()["executionId"], session["executionId"]);
    let text = String::from_utf8(stream.read_to_end()).expect("UTF-8");
    assert_eq!(ending(&h.accept(&body, &text)), "RUN_ERROR:CANCELLED");

    let again = Request::agui(&path, &ids).send(h.addr());
    assert_eq!(
        (again.status, again.json()["status"].clone()),
        (200, json!("already_terminal"))
    );
    let unknown = Request::agui(
        &cancel_path(&json!("00000000-0000-4000-8000-000000000000")),
        &ids,
    )
    .send(h.addr());
    assert_eq!(
        (unknown.status, unknown.error_code().as_str()),
        (404, "EXECUTION_NOT_FOUND")
    );
    let invalid = Request::agui(&path, &json!({"threadId": ""})).send(h.addr());
    assert_eq!(
        (invalid.status, invalid.error_code().as_str()),
        (400, "INVALID_INPUT")
    );
    let media = Request::agui(&path, &ids)
        .header("Content-Type", "text/plain")
        .send(h.addr());
    assert_eq!(media.status, 415);
    let large = Request {
        body: vec![b' '; 64 * 1024 + 1],
        ..Request::agui(&path, &ids)
    }
    .send(h.addr());
    assert_eq!(large.status, 413);

    // The thread is free for a new turn.
    assert_eq!(
        ending(&h.run(&h.body("cancel-ext", "run-2", "scenario:plain"))),
        "RUN_FINISHED:success"
    );
    h.check_clients();
}

#[test]
fn cancel_extension_clears_a_pending_interrupt() {
    let h = Harness::start();
    let received = h.run(&h.body("cancel-pending", "run-1", "scenario:permission"));
    assert_eq!(ending(&received), "RUN_FINISHED:interrupt");
    let session = session(&received).expect("session event");
    let ids = json!({"threadId": "cancel-pending", "rosInvocationId": ROS});
    let response = Request::agui(&cancel_path(&session["executionId"]), &ids).send(h.addr());
    assert_eq!(
        (response.status, response.json()["status"].clone()),
        (200, json!("cancelled"))
    );
    assert!(task_state(&h, &session["taskId"])
        .to_ascii_uppercase()
        .contains("CANCELED"));
    // No resume needed any more.
    assert_eq!(
        ending(&h.run(&h.body("cancel-pending", "run-2", "scenario:plain"))),
        "RUN_FINISHED:success"
    );
    h.check_clients();
}

#[test]
fn disconnect_during_a_run_cancels_the_task() {
    let h = Harness::start();
    let body = h.body("disconnect", "run-1", "scenario:cancel");
    let mut stream = h.open(&body);
    let text = stream.read_until(WAIT, |t| t.contains("iac-code.session.v1"));
    let task_id = session_of(&text)["taskId"].clone();
    assert!(task_id.is_string());
    stream.hang_up();

    let deadline = Instant::now() + WAIT;
    loop {
        let state = task_state(&h, &task_id);
        if state.to_ascii_uppercase().contains("CANCELED") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "task still {state} after the disconnect\n{}",
            h.server.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // The thread is freed.
    let deadline = Instant::now() + WAIT;
    loop {
        let response = h.post(&h.body("disconnect", "run-2", "scenario:plain"));
        if response.status == 200 {
            let text = response.text();
            assert_eq!(
                ending(&h.accept(&h.body("disconnect", "run-2", "scenario:plain"), &text)),
                "RUN_FINISHED:success"
            );
            break;
        }
        assert_eq!(response.error_code(), "THREAD_BUSY", "{}", response.text());
        assert!(Instant::now() < deadline, "the thread stayed busy");
        std::thread::sleep(Duration::from_millis(50));
    }
    // What arrived before the hang-up lacks a terminal event by
    // construction: the clients must accept it as far as it goes.
    let prefix = complete_records(&text);
    let verdicts = iac_agui_tests::clients::check(&prefix);
    for (version, verdict) in &verdicts {
        assert!(
            verdict.ok && verdict.warnings.is_empty(),
            "{version}: {verdict:?}"
        );
    }
    h.check_clients();
}

#[test]
fn restart_between_interrupt_and_resume() {
    let mut h = Harness::start();
    let received = h.run(&h.body("restart", "run-1", "scenario:permission"));
    assert_eq!(ending(&received), "RUN_FINISHED:interrupt");
    let found = interrupts(&received);
    h.server.restart();
    // State comes back from disk: a new turn still needs the resume...
    let refused = h.post(&h.body("restart", "run-2", "scenario:plain"));
    assert_eq!(
        (refused.status, refused.error_code().as_str()),
        (409, "RESUME_REQUIRED")
    );
    // ...and the resume succeeds.
    let after = h.run(&h.resume_body(
        "restart",
        "run-3",
        json!([resolved(&found[0]["id"], json!({"decision": "allow_once"}))]),
    ));
    assert_eq!(
        ending(&after),
        "RUN_FINISHED:success",
        "{:?}\n{}",
        after.types(),
        h.server.log()
    );
    assert!(after.first_of("TOOL_CALL_RESULT").is_some());
    // The run ids of before the restart are still known.
    let duplicate = h.post(&h.body("restart", "run-1", "scenario:permission"));
    assert_eq!(
        (duplicate.status, duplicate.error_code().as_str()),
        (409, "DUPLICATE_RUN_ID")
    );
    h.check_clients();
}

#[test]
fn heartbeat_comments_during_silence() {
    let h = Harness::with(
        RuntimeOptions::default(),
        ServerOptions {
            heartbeat: Some(0.1),
            ..ServerOptions::default()
        },
    );
    let body = h.body("heartbeat", "run-1", "scenario:slow:900");
    let received = h.run(&body);
    assert_eq!(ending(&received), "RUN_FINISHED:success");
    assert!(
        received.comments.iter().any(|c| c == "heartbeat"),
        "no heartbeat in {:?}",
        received.comments
    );
    h.check_clients();
}

#[test]
fn demo_mode_serves_without_an_external_runtime() {
    let server = Server::start(ServerOptions::default());
    let body = json!({
        "threadId": "demo", "runId": "run-1", "state": {}, "tools": [], "context": [],
        "messages": [{"id": "m1", "role": "user", "content": "scenario:permission"}],
        "forwardedProps": {"iacCode": {"schemaVersion": 1, "rosInvocationId": "r",
            "cwd": server.workspace().to_str().expect("UTF-8 path")}},
    });
    let response = Request::agui("/", &body).send(server.addr);
    assert_eq!(
        response.status,
        200,
        "{}\n{}",
        response.text(),
        server.log()
    );
    let text = response.text();
    let received = parse(&text);
    assert!(received.problems.is_empty(), "{:?}", received.problems);
    assert_eq!(ending(&received), "RUN_FINISHED:interrupt");
    iac_agui_tests::clients::assert_accepted("the --demo stream", &text);
}

#[test]
fn unreadable_state_is_503_after_restart() {
    let mut h = Harness::start();
    let received = h.run(&h.body("corrupt", "run-1", "scenario:permission"));
    assert_eq!(ending(&received), "RUN_FINISHED:interrupt");
    h.server.kill();
    let mut damaged = 0;
    let mut stack = vec![h.server.state_dir()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("state dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                std::fs::write(&path, b"{ not a state document").expect("damage state");
                damaged += 1;
            }
        }
    }
    assert!(damaged > 0, "no state file written");
    h.server.restart();
    let response = h.post(&h.body("corrupt", "run-2", "scenario:plain"));
    assert_eq!(
        (response.status, response.error_code().as_str()),
        (503, "STATE_UNAVAILABLE")
    );
    // Other threads are unaffected.
    assert_eq!(
        ending(&h.run(&h.body("healthy", "run-1", "scenario:plain"))),
        "RUN_FINISHED:success"
    );
    h.check_clients();
}
