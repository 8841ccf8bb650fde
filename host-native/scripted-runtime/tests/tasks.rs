//! Task state over real HTTP: permission answers and their duplicates,
//! stale snapshots, cancellation, backup-not-ready, failures and load.

mod support;

use std::time::Instant;

use http::{Method, StatusCode};
use serde_json::{json, Value};
use support::{iac, message_params, permission_part, state, Harness};

/// Runs `scenario:<name>` in `context` up to its permission wait; returns
/// the task id and the pending input.
async fn wait_for_permission(h: &Harness, context: &str, scenario: &str) -> (String, Value) {
    let frames = h
        .say(context, &format!("please scenario:{scenario}"), None)
        .await
        .frames()
        .await;
    let last = frames.last().unwrap();
    assert_eq!(state(last), "TASK_STATE_INPUT_REQUIRED");
    let input = iac(last)["input"].clone();
    assert_eq!(input["kind"], "permission");
    (input["requestTaskId"].as_str().unwrap().to_owned(), input)
}

async fn answer(
    h: &Harness,
    context: &str,
    task: &str,
    input: &Value,
    decision: &str,
    method: &str,
) -> support::Stream {
    let params = message_params(
        context,
        vec![permission_part(input, decision)],
        Some(task),
        "agui-resume-x",
    );
    h.rpc(method, params).await
}

#[tokio::test]
async fn permission_allow_then_duplicate_answers() {
    let h = Harness::default().await;
    let (task, input) = wait_for_permission(&h, "ctx-a", "permission").await;
    let snapshot = h
        .call("GetTask", json!({ "id": task, "historyLength": 100 }))
        .await["result"]
        .clone();
    assert_eq!(snapshot["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    assert_eq!(snapshot["metadata"]["iac_code"]["input"], input);
    assert_eq!(
        snapshot["metadata"]["iac_code"]["executionControl"]["executionStatus"],
        "input-required"
    );

    let frames = answer(
        &h,
        "ctx-a",
        &task,
        &input,
        "allow_once",
        "SendStreamingMessage",
    )
    .await
    .frames()
    .await;
    assert_eq!(
        iac(&frames[0])["inputReceived"]["inputId"],
        input["inputId"]
    );
    assert_eq!(iac(&frames[1])["tool"]["status"], "completed");
    assert_eq!(state(frames.last().unwrap()), "TASK_STATE_INPUT_REQUIRED");
    assert!(iac(frames.last().unwrap()).get("input").is_none());

    // The real runtime keeps serving the pre-answer snapshot.
    let stale = h.call("GetTask", json!({ "id": task })).await["result"].clone();
    assert_eq!(stale["metadata"]["iac_code"]["input"]["required"], true);
    assert_eq!(stale["metadata"]["iac_code"]["permission"]["pending"], true);

    let dup = answer(
        &h,
        "ctx-a",
        &task,
        &input,
        "allow_once",
        "SendStreamingMessage",
    )
    .await
    .frames()
    .await;
    assert_eq!(dup.len(), 1, "{dup:?}");
    let received = &iac(&dup[0])["inputReceived"];
    assert_eq!(
        (received["duplicate"].clone(), received["recovered"].clone()),
        (json!(true), json!(true))
    );
    assert_eq!(received["decision"], "allow_once");
    assert_eq!(state(&dup[0]), "TASK_STATE_WORKING");

    let unary = h
        .call(
            "SendMessage",
            message_params(
                "ctx-a",
                vec![permission_part(&input, "deny")],
                Some(&task),
                "m",
            ),
        )
        .await;
    assert_eq!(unary["result"]["task"]["id"], task.as_str());

    let mut wrong = input.clone();
    wrong["inputId"] = json!("permission-doesnotexist");
    let rejected = answer(&h, "ctx-a", &task, &wrong, "deny", "SendStreamingMessage").await;
    assert_eq!(rejected.content_type, "application/json");
    assert_eq!(
        rejected.json().await["error"]["message"],
        "permission_resume_invalid: pending permission is not active."
    );
    let (status, body) = h
        .get(&format!(
            "/iac-code/pipeline/state?taskId={task}&afterSequence=0"
        ))
        .await;
    assert_eq!(
        (status, body),
        (
            StatusCode::NOT_FOUND,
            json!({ "error": "A2A pipeline state not found" })
        )
    );
}

#[tokio::test]
async fn permission_deny_fails_the_tool() {
    let h = Harness::default().await;
    let (task, input) = wait_for_permission(&h, "ctx-d", "permission").await;
    let frames = answer(&h, "ctx-d", &task, &input, "deny", "SendStreamingMessage")
        .await
        .frames()
        .await;
    let tool = &iac(&frames[1])["tool"];
    assert_eq!(tool["status"], "failed");
    assert!(tool["result"]
        .as_str()
        .unwrap()
        .starts_with("The user explicitly denied"));
}

#[tokio::test]
async fn malformed_answers_are_rejected_before_the_stream() {
    let h = Harness::default().await;
    let (task, input) = wait_for_permission(&h, "ctx-m", "permission").await;
    let mut part = permission_part(&input, "allow_once");
    part["data"]["extra"] = json!(1);
    let stream = h
        .rpc(
            "SendStreamingMessage",
            message_params("ctx-m", vec![part], Some(&task), "m"),
        )
        .await;
    assert_eq!(stream.content_type, "application/json");
    assert_eq!(
        stream.json().await["error"]["message"],
        "Permission response payload fields do not match schemaVersion 1."
    );
    let mut part = permission_part(&input, "allow_once");
    part["data"]["toolUseId"] = json!("call_other");
    let stream = h
        .rpc(
            "SendStreamingMessage",
            message_params("ctx-m", vec![part], Some(&task), "m"),
        )
        .await;
    assert_eq!(
        stream.json().await["error"]["message"],
        "input_response_mismatch: permission correlation does not match."
    );
    // Still pending: a correct answer is accepted afterwards.
    let frames = answer(
        &h,
        "ctx-m",
        &task,
        &input,
        "allow_once",
        "SendStreamingMessage",
    )
    .await
    .frames()
    .await;
    assert_eq!(state(frames.last().unwrap()), "TASK_STATE_INPUT_REQUIRED");
}

#[tokio::test]
async fn two_permissions_are_asked_one_after_the_other() {
    let h = Harness::default().await;
    let (task, first) = wait_for_permission(&h, "ctx-2", "two-permissions").await;
    let frames = answer(
        &h,
        "ctx-2",
        &task,
        &first,
        "allow_once",
        "SendStreamingMessage",
    )
    .await
    .frames()
    .await;
    assert_eq!(frames.len(), 2);
    let second = iac(&frames[1])["input"].clone();
    assert_ne!(second["inputId"], first["inputId"]);
    let frames = answer(&h, "ctx-2", &task, &second, "deny", "SendStreamingMessage")
        .await
        .frames()
        .await;
    let tools: Vec<&Value> = frames.iter().filter_map(|f| iac(f).get("tool")).collect();
    assert_eq!(tools[0]["status"], "completed");
    assert_eq!(tools[1]["status"], "failed");
}

#[tokio::test]
async fn cancel_pushes_canceled_on_the_open_stream() {
    let h = Harness::default().await;
    let mut stream = h.say("ctx-c", "scenario:cancel", None).await;
    let task_frame = stream.next_data().await.unwrap();
    let task = task_frame["result"]["task"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        state(&stream.next_data().await.unwrap()),
        "TASK_STATE_SUBMITTED"
    );
    assert_eq!(
        state(&stream.next_data().await.unwrap()),
        "TASK_STATE_WORKING"
    );
    let canceled = h.call("CancelTask", json!({ "id": task })).await["result"].clone();
    assert_eq!(canceled["status"]["state"], "TASK_STATE_CANCELED");
    assert_eq!(
        canceled["status"]["message"]["messageId"],
        format!("{task}-5")
    );
    assert_eq!(
        canceled["status"]["message"]["parts"][0]["text"],
        "Task canceled."
    );
    let pushed = stream.next_data().await.unwrap();
    assert_eq!(state(&pushed), "TASK_STATE_CANCELED");
    assert!(
        stream.next_data().await.is_none(),
        "the stream closes after CANCELED"
    );
    let again = h.call("CancelTask", json!({ "id": task })).await;
    assert_eq!(again["error"]["code"], -32002);
    let done = h.say("ctx-c", "hi", None).await.frames().await;
    let finished = done[0]["result"]["task"]["id"].clone();
    assert_eq!(
        h.call("CancelTask", json!({ "id": finished })).await["error"]["code"],
        -32002
    );
    assert_eq!(
        h.call("CancelTask", json!({ "id": "nope" })).await["error"]["code"],
        -32001
    );
}

#[tokio::test]
async fn a_parked_permission_can_be_canceled() {
    let h = Harness::default().await;
    let (task, _) = wait_for_permission(&h, "ctx-pc", "permission").await;
    let canceled = h.call("CancelTask", json!({ "id": task })).await["result"].clone();
    assert_eq!(canceled["status"]["state"], "TASK_STATE_CANCELED");
    assert!(canceled["metadata"]["iac_code"].get("input").is_none());
    let after = h.call("GetTask", json!({ "id": task })).await["result"].clone();
    assert_eq!(after["status"]["state"], "TASK_STATE_CANCELED");
}

#[tokio::test]
async fn backup_not_ready_holds_restore_and_answer_once_each() {
    let h = Harness::default().await;
    let (task, input) = wait_for_permission(&h, "ctx-b", "backup-not-ready").await;
    let snapshot = h.call("GetTask", json!({ "id": task })).await["result"].clone();
    let session = snapshot["metadata"]["iac_code"]["iacCodeSessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    let restore =
        json!({ "cwd": "/workspace/ws", "sessionId": session, "taskId": task }).to_string();
    let path = "/iac-code/session/ensure-restored";
    let first = h.send(Method::POST, path, &[], Some(restore.clone())).await;
    assert_eq!(first.status, StatusCode::CONFLICT);
    assert_eq!(
        first.json().await["error"]["code"],
        "SESSION_BACKUP_NOT_READY"
    );
    let second = h.send(Method::POST, path, &[], Some(restore)).await;
    assert_eq!(second.status, StatusCode::OK);
    assert_eq!(second.json().await, json!({ "status": "current" }));
    let rejected = answer(
        &h,
        "ctx-b",
        &task,
        &input,
        "allow_once",
        "SendStreamingMessage",
    )
    .await;
    assert_eq!(rejected.content_type, "application/json");
    let error = rejected.json().await["error"].clone();
    assert_eq!(
        error["data"],
        json!({ "code": "SESSION_BACKUP_NOT_READY", "retryable": true })
    );
    let frames = answer(
        &h,
        "ctx-b",
        &task,
        &input,
        "allow_once",
        "SendStreamingMessage",
    )
    .await
    .frames()
    .await;
    assert_eq!(state(frames.last().unwrap()), "TASK_STATE_INPUT_REQUIRED");
    let unknown = json!({ "cwd": "/w", "sessionId": "unknown-session" }).to_string();
    assert_eq!(
        h.send(Method::POST, path, &[], Some(unknown)).await.status,
        StatusCode::NOT_FOUND
    );
    let bad = json!({ "cwd": 1, "sessionId": "x" }).to_string();
    assert_eq!(
        h.send(Method::POST, path, &[], Some(bad)).await.status,
        StatusCode::BAD_REQUEST
    );
}

#[tokio::test]
async fn a_failed_turn_still_ends_input_required() {
    let h = Harness::default().await;
    let frames = h.say("ctx-f", "scenario:fail", None).await.frames().await;
    let failed = frames
        .iter()
        .position(|f| state(f) == "TASK_STATE_FAILED")
        .unwrap();
    assert!(failed < frames.len() - 1, "frames follow FAILED");
    let task = frames[0]["result"]["task"]["id"].clone();
    let snapshot = h
        .call("GetTask", json!({ "id": task, "historyLength": 0 }))
        .await["result"]
        .clone();
    assert_eq!(snapshot["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    assert_eq!(
        snapshot["metadata"]["iac_code"]["executionControl"]["executionStatus"],
        "failed"
    );
    assert!(snapshot.get("history").is_none());
    let retryable = h
        .say("ctx-f", "scenario:fail-retryable", None)
        .await
        .frames()
        .await;
    assert_eq!(iac(retryable.last().unwrap())["error"]["retryable"], true);
}

#[tokio::test]
async fn unary_send_message_returns_the_finished_task() {
    let h = Harness::default().await;
    let result = h
        .call(
            "SendMessage",
            message_params("ctx-u", vec![json!({ "text": "hello unary" })], None, "m"),
        )
        .await;
    let task = &result["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    assert_eq!(task["history"].as_array().unwrap().len(), 3);
    let listed = h.call("ListTasks", json!({ "contextId": "ctx-u" })).await;
    assert_eq!(listed["result"]["totalSize"], 1);
}

#[tokio::test]
async fn ids_are_deterministic_for_a_seed() {
    let mut firsts = Vec::new();
    for _ in 0..2 {
        let h = Harness::default().await;
        let frames = h
            .say("ctx-seed", "scenario:permission", None)
            .await
            .frames()
            .await;
        firsts.push(iac(frames.last().unwrap())["input"].clone());
    }
    assert_eq!(firsts[0], firsts[1]);
}

#[tokio::test]
async fn many_deltas_stream_in_order() {
    let h = Harness::default().await;
    let count = 20_000;
    let started = Instant::now();
    let frames = h
        .say("ctx-load", &format!("scenario:deltas:{count}"), None)
        .await
        .frames()
        .await;
    eprintln!("deltas:{count} took {:?} (debug build)", started.elapsed());
    let deltas: Vec<&str> = frames
        .iter()
        .filter_map(|f| f["result"]["statusUpdate"]["status"]["message"].as_object())
        .filter(|m| m["messageId"].as_str().unwrap().ends_with("-message"))
        .map(|m| m["parts"][0]["text"].as_str().unwrap())
        .collect();
    assert_eq!(deltas.len(), count);
    assert_eq!(deltas[0], "delta-0 ");
    assert_eq!(deltas[count - 1], format!("delta-{} ", count - 1));
    assert_eq!(state(frames.last().unwrap()), "TASK_STATE_INPUT_REQUIRED");
    let task = frames[0]["result"]["task"]["id"].clone();
    let snapshot = h
        .call("GetTask", json!({ "id": task, "historyLength": 2 }))
        .await["result"]
        .clone();
    let history = snapshot["history"].as_array().unwrap();
    assert_eq!(
        history[0]["parts"][0]["text"],
        format!("delta-{} ", count - 1)
    );
    assert_eq!(
        history[1]["messageId"],
        format!("{}-2", task.as_str().unwrap())
    );
}

#[tokio::test]
async fn shutdown_ends_held_streams() {
    let h = Harness::default().await;
    let mut stream = h.say("ctx-sd", "scenario:cancel", None).await;
    for _ in 0..3 {
        stream.next_data().await.unwrap();
    }
    let addr = h.runtime.local_addr();
    h.runtime.shutdown().await;
    assert!(stream.next_data().await.is_none());
    assert!(
        tokio::net::TcpStream::connect(addr).await.is_err(),
        "no longer listening"
    );
}

#[tokio::test]
async fn a_subscriber_joining_a_load_run_sees_the_rest_in_order() {
    let h = Harness::default().await;
    let count = 30_000usize;
    // Not reading the main stream makes the run wait on it, still active.
    let mut main = h
        .say("ctx-ls", &format!("scenario:deltas:{count}"), None)
        .await;
    let task = main.next_data().await.unwrap()["result"]["task"]["id"].clone();
    let subscriber = h.rpc("SubscribeToTask", json!({ "id": task })).await;
    let (main_frames, sub_frames) = tokio::join!(main.frames(), subscriber.frames());
    let texts = |frames: &[Value]| -> Vec<String> {
        frames
            .iter()
            .filter_map(|f| f["result"]["statusUpdate"]["status"]["message"].as_object())
            .filter(|m| m["messageId"].as_str().unwrap().ends_with("-message"))
            .map(|m| m["parts"][0]["text"].as_str().unwrap().to_owned())
            .collect()
    };
    let all = texts(&main_frames);
    assert_eq!(all.len(), count);
    assert_eq!(
        sub_frames[0]["result"]["task"]["status"]["state"],
        "TASK_STATE_WORKING"
    );
    let seen = texts(&sub_frames);
    assert!(
        !seen.is_empty() && seen.len() < count,
        "joined mid-run: {}",
        seen.len()
    );
    assert_eq!(
        seen[..],
        all[count - seen.len()..],
        "the subscriber sees the tail, in order"
    );
    assert_eq!(
        state(sub_frames.last().unwrap()),
        "TASK_STATE_INPUT_REQUIRED"
    );
}
