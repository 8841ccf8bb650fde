//! End to end through the router, the engine (the core's thread machine),
//! the state store and the A2A client, against the scripted A2A runtime:
//! interrupts and resume, admission conflicts, the cancel extension, state
//! that survives a restart, and secrets that never reach disk or logs.

mod support;

use std::sync::Arc;
use std::time::Duration;

use http::StatusCode;
use iac_agui::app::HttpSettings;
use serde_json::{json, Value};
use support::scripted::*;
use support::sse_events;

fn code(bytes: &[u8]) -> String {
    let v: Value = serde_json::from_slice(bytes).unwrap();
    v["error"]["code"].as_str().unwrap().to_owned()
}

fn session(events: &[Value]) -> Value {
    events
        .iter()
        .find(|e| e["type"] == "CUSTOM" && e["name"] == "iac-code.session.v1")
        .map(|e| e["value"].clone())
        .expect("a session event")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn permission_interrupt_then_resume() {
    let e = env(HttpSettings::default()).await;
    let (status, bytes) = post(
        &e.app,
        "/",
        &body(&e, "perm", "r1", "scenario:permission"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let events = sse_events(&bytes);
    support::assert_valid_stream("perm", "r1", &events);
    let last = events.last().unwrap();
    assert_eq!(last["type"], "RUN_FINISHED", "{last}");
    assert_eq!(last["outcome"]["type"], "interrupt");
    let interrupt = &last["outcome"]["interrupts"][0];
    assert_eq!(interrupt["reason"], "tool_call");
    let interrupt_id = interrupt["id"].as_str().unwrap().to_owned();
    assert!(
        !e.app.is_idle(),
        "a pending interrupt keeps the server busy"
    );

    // Same body again: DUPLICATE_RUN_ID; a new normal turn: RESUME_REQUIRED.
    let (status, bytes) = post(
        &e.app,
        "/",
        &body(&e, "perm", "r1", "scenario:permission"),
        None,
    )
    .await;
    assert_eq!(
        (status, code(&bytes).as_str()),
        (StatusCode::CONFLICT, "DUPLICATE_RUN_ID")
    );
    let (status, bytes) = post(&e.app, "/", &body(&e, "perm", "r1", "other"), None).await;
    assert_eq!(
        (status, code(&bytes).as_str()),
        (StatusCode::CONFLICT, "RUN_ID_CONFLICT")
    );
    let (status, bytes) = post(&e.app, "/", &body(&e, "perm", "r2", "hello"), None).await;
    assert_eq!(
        (status, code(&bytes).as_str()),
        (StatusCode::CONFLICT, "RESUME_REQUIRED")
    );

    let mut resume = body(&e, "perm", "r3", "");
    resume["messages"] = json!([]);
    resume["resume"] = json!([{"interruptId": interrupt_id, "status": "resolved", "payload": {"decision": "allow_once"}}]);
    let (status, bytes) = post(&e.app, "/", &resume, None).await;
    assert_eq!(status, StatusCode::OK);
    let events = sse_events(&bytes);
    support::assert_valid_stream("perm", "r3", &events);
    assert_eq!(events.first().unwrap()["type"], "RUN_STARTED");
    let last = events.last().unwrap();
    assert_eq!(last["type"], "RUN_FINISHED", "{last}");
    assert_eq!(last["outcome"], json!({"type": "success"}));
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(e.app.is_idle());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_extension_and_restart() {
    let e = env(HttpSettings::default()).await;
    let (_, bytes) = post(
        &e.app,
        "/",
        &body(&e, "cx", "r1", "scenario:permission"),
        None,
    )
    .await;
    let events = sse_events(&bytes);
    let execution_id = session(&events)["executionId"].as_str().unwrap().to_owned();
    let path = format!("/extensions/iac-code/v1/executions/{execution_id}/cancel");

    // A restarted server finds the thread in its state file.
    let (restarted, _stop) = app_over(
        &e.runtime.as_ref().unwrap().url(),
        e.root.path(),
        &e.workspace,
        HttpSettings::default(),
    );
    let wrong = json!({"threadId": "cx", "rosInvocationId": "someone-else"});
    let (status, bytes) = post(&restarted, &path, &wrong, None).await;
    assert_eq!(
        (status, code(&bytes).as_str()),
        (StatusCode::NOT_FOUND, "EXECUTION_NOT_FOUND")
    );
    let right = json!({"threadId": "cx", "rosInvocationId": "ros-1"});
    let (status, bytes) = post(&restarted, &path, &right, None).await;
    assert_eq!(status, StatusCode::OK);
    let v: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(
        v,
        json!({"executionId": execution_id, "status": "cancelled"})
    );
    let (status, bytes) = post(&restarted, &path, &right, None).await;
    assert_eq!(status, StatusCode::OK);
    let v: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(v["status"], "already_terminal");
    // The thread is free again for a normal turn.
    let (status, bytes) = post(
        &restarted,
        "/",
        &body(&e, "cx", "r2", "scenario:plain"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(sse_events(&bytes).last().unwrap()["type"], "RUN_FINISHED");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corrupt_state_is_state_unavailable() {
    let e = env(HttpSettings::default()).await;
    let dir = e.root.path().join("state/threads");
    std::fs::write(
        dir.join("broken.json"),
        b"{\"schemaVersion\": 1, \"threadId\": ",
    )
    .unwrap();
    let (status, bytes) = post(&e.app, "/", &body(&e, "broken", "r1", "hello"), None).await;
    assert_eq!(
        (status, code(&bytes).as_str()),
        (StatusCode::SERVICE_UNAVAILABLE, "STATE_UNAVAILABLE")
    );
    // A valid JSON document for another thread id is refused as well.
    std::fs::write(
        dir.join("other.json"),
        json!({"schemaVersion": 1, "threadId": "not-other"}).to_string(),
    )
    .unwrap();
    let (status, bytes) = post(&e.app, "/", &body(&e, "other", "r1", "hello"), None).await;
    assert_eq!(
        (status, code(&bytes).as_str()),
        (StatusCode::SERVICE_UNAVAILABLE, "STATE_UNAVAILABLE")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_ends_active_runs_with_run_error() {
    let e = env(HttpSettings::default()).await;
    let app = Arc::clone(&e.app);
    let request = body(&e, "slow", "r1", "scenario:slow");
    let running = tokio::spawn(async move { post(&app, "/", &request, None).await });
    tokio::time::sleep(Duration::from_millis(300)).await;
    e._shutdown.send(true).unwrap();
    let (status, bytes) = running.await.unwrap();
    assert_eq!(status, StatusCode::OK);
    let last = sse_events(&bytes).last().unwrap().clone();
    assert_eq!(last["type"], "RUN_ERROR");
    assert_eq!(last["code"], "A2A_UNAVAILABLE");
    // New runs are refused while stopping.
    let (status, _) = post(&e.app, "/", &body(&e, "late", "r1", "hello"), None).await;
    assert_ne!(status, StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_extension_ends_an_active_stream() {
    use http_body_util::BodyExt as _;
    let e = env(HttpSettings::default()).await;
    let request = body(&e, "live", "r1", "scenario:cancel");
    let req = http::Request::post("/")
        .header("content-type", "application/json")
        .body(http_body_util::Full::new(bytes::Bytes::from(
            request.to_string(),
        )))
        .unwrap();
    let response = iac_agui::router::handle(Arc::clone(&e.app), req).await;
    assert_eq!(response.status(), StatusCode::OK);
    let mut body = response.into_body();
    let mut seen = Vec::new();
    let execution_id = loop {
        let frame = tokio::time::timeout(Duration::from_secs(10), body.frame())
            .await
            .expect("events keep coming")
            .expect("the stream is open")
            .unwrap();
        seen.extend_from_slice(&frame.into_data().unwrap());
        let events = sse_events(&seen);
        if let Some(value) = events
            .iter()
            .find(|e| e["name"] == "iac-code.session.v1" && e["value"]["taskId"].is_string())
        {
            break value["value"]["executionId"].as_str().unwrap().to_owned();
        }
    };
    let path = format!("/extensions/iac-code/v1/executions/{execution_id}/cancel");
    let cancel = json!({"threadId": "live", "rosInvocationId": "ros-1"});
    let (status, bytes) = post(&e.app, &path, &cancel, None).await;
    assert_eq!(status, StatusCode::OK);
    let v: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(v["status"], "cancelled");
    let rest = tokio::time::timeout(Duration::from_secs(10), body.collect())
        .await
        .expect("the stream ends")
        .unwrap()
        .to_bytes();
    seen.extend_from_slice(&rest);
    support::assert_valid_stream("live", "r1", &sse_events(&seen));
    let last = sse_events(&seen).last().unwrap().clone();
    assert_eq!(last["type"], "RUN_ERROR");
    assert_eq!(last["code"], "CANCELLED");
}
