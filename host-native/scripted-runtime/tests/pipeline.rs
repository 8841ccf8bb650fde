//! The `pipeline` scenario end to end over HTTP, the way the adapter drives
//! it: side-band permission interrupt, disconnect, recovery through
//! `/iac-code/pipeline/state`, unary answer, SubscribeToTask continuation,
//! candidate selection and the committed end.

mod support;

use http::StatusCode;
use serde_json::{json, Value};
use support::{iac, message_params, permission_part, state, Harness};

fn sequences(events: &Value) -> Vec<u64> {
    events
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["sequence"].as_u64().unwrap())
        .collect()
}

#[tokio::test]
async fn pipeline_with_side_band_permission_and_recovery() {
    let h = Harness::default().await;
    let mut stream = h
        .say("ctx-p", "I want a website scenario:pipeline", None)
        .await;
    let first = stream.next_data().await.unwrap();
    let task = first["result"]["task"]["id"].as_str().unwrap().to_owned();
    let mut cursor = 0;
    let mut step_ids = Vec::new();
    let input = loop {
        let frame = stream
            .next_data()
            .await
            .expect("a side-band permission before EOF");
        assert_eq!(state(&frame), "TASK_STATE_WORKING");
        let meta = iac(&frame);
        let envelopes: Vec<Value> = match meta.get("pipelineBatch") {
            Some(batch) => batch["events"].as_array().unwrap().clone(),
            None => vec![meta["pipeline"].clone()],
        };
        for envelope in envelopes {
            assert!(
                envelope["sequence"].is_f64(),
                "streamed sequences are doubles"
            );
            cursor = envelope["sequence"].as_f64().unwrap() as u64;
            if envelope["eventType"] == "candidate_step_started" {
                step_ids.push(envelope["candidateStep"]["id"].as_str().unwrap().to_owned());
            }
        }
        if let Some(input) = meta.get("input") {
            assert_eq!(input["scope"], "candidate_step");
            assert_eq!(input["subPipelineId"], "sp1");
            break input.clone();
        }
    };
    assert_eq!(
        step_ids[..2],
        ["template_generating", "template_generating"],
        "parallel candidates share step ids"
    );
    drop(stream); // the adapter leaves at the interrupt; the task stays WORKING

    let snapshot = h
        .call("GetTask", json!({ "id": task, "historyLength": 100 }))
        .await["result"]
        .clone();
    assert_eq!(snapshot["status"]["state"], "TASK_STATE_WORKING");
    assert_eq!(
        snapshot["metadata"]["iac_code"]["pendingPermissions"],
        json!([input])
    );

    let (status, recovery) = h
        .get(&format!(
            "/iac-code/pipeline/state?taskId={task}&afterSequence={cursor}"
        ))
        .await;
    assert_eq!(status, StatusCode::OK);
    let missed = sequences(&recovery["events"]);
    assert_eq!(
        missed,
        ((cursor + 1)..=(cursor + 3)).collect::<Vec<_>>(),
        "events streamed after the client left"
    );
    assert!(
        recovery["events"][0]["sequence"].is_u64(),
        "the side endpoint uses plain ints"
    );
    assert_eq!(recovery["events"][2]["eventType"], "candidate_completed");
    assert_eq!(recovery["snapshot"]["pipelineRunId"], "ctx-p");
    assert_eq!(
        recovery["snapshot"]["display"]["permissions"][0]["pending"],
        true
    );

    let params = message_params(
        "ctx-p",
        vec![permission_part(&input, "allow_once")],
        Some(&task),
        "agui-resume-p",
    );
    let ack = h.call("SendMessage", params).await["result"]["message"].clone();
    assert_eq!(ack["parts"][0]["data"]["kind"], "permission_ack");
    assert_eq!(ack["parts"][0]["data"]["schemaVersion"], json!(1.0));
    assert!(
        h.call("GetTask", json!({ "id": task })).await["result"]["metadata"]["iac_code"]
            .get("pendingPermissions")
            .is_none()
    );

    let frames = h
        .rpc("SubscribeToTask", json!({ "id": task }))
        .await
        .frames()
        .await;
    assert_eq!(
        frames[0]["result"]["task"]["status"]["state"],
        "TASK_STATE_WORKING"
    );
    assert_eq!(
        iac(&frames[1])["pipeline"]["eventType"],
        "permission_resolved"
    );
    assert_eq!(
        iac(&frames[1])["pipeline"]["sequence"],
        json!((cursor + 4) as f64)
    );
    let last = frames.last().unwrap();
    assert_eq!(state(last), "TASK_STATE_INPUT_REQUIRED");
    let selection = iac(last)["input"].clone();
    assert_eq!(selection["kind"], "candidate_selection");

    let inactive = h.rpc("SubscribeToTask", json!({ "id": task })).await;
    assert_eq!(inactive.content_type, "application/json");
    assert_eq!(
        inactive.json().await["error"]["message"],
        format!("Task {task} is not active")
    );

    let end = h
        .say("ctx-p", "ECS + RDS", Some(&task))
        .await
        .frames()
        .await;
    assert_eq!(iac(&end[0])["pipeline"]["data"]["selectedId"], "0");
    let completed: Vec<&Value> = end
        .iter()
        .filter(|f| state(f) == "TASK_STATE_COMPLETED")
        .collect();
    assert_eq!(completed.len(), 4);
    let seqs: Vec<f64> = completed
        .iter()
        .map(|f| iac(f)["pipeline"]["sequence"].as_f64().unwrap())
        .collect();
    assert!(
        seqs[2] < seqs[1],
        "the handoff arrives after a higher sequence: {seqs:?}"
    );

    let (_, events) = h
        .get(&format!(
            "/iac-code/pipeline/state?taskId={task}&afterSequence=0&includeSnapshot=false"
        ))
        .await;
    let journal = sequences(&events["events"]);
    let mut sorted = journal.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), journal.len());
    assert_eq!(events["lastSequence"], json!(*sorted.last().unwrap()));
    let pending_copies = events["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["visibility"] == "pending_backup")
        .count();
    assert_eq!(
        pending_copies, 2,
        "never-streamed copies are in the journal"
    );
    let (_, full) = h
        .get("/iac-code/pipeline/state?contextId=ctx-p&lean=true")
        .await;
    assert_eq!(full["snapshot"]["status"], "completed");
    assert!(full["snapshot"]["display"].get("toolResults").is_none());
    assert_eq!(full["events"], json!([]));
}

#[tokio::test]
async fn side_band_permission_can_be_denied_and_the_held_task_canceled() {
    let h = Harness::default().await;
    let mut stream = h.say("ctx-q", "scenario:pipeline", None).await;
    let task = stream.next_data().await.unwrap()["result"]["task"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let input = loop {
        let frame = stream.next_data().await.unwrap();
        if let Some(input) = iac(&frame).get("input") {
            break input.clone();
        }
    };
    let cancel = h.call("CancelTask", json!({ "id": task })).await;
    assert_eq!(cancel["result"]["status"]["state"], "TASK_STATE_CANCELED");
    let mut last = Value::Null;
    while let Some(frame) = stream.next_data().await {
        last = frame;
    }
    assert_eq!(state(&last), "TASK_STATE_CANCELED");
    let params = message_params(
        "ctx-q",
        vec![permission_part(&input, "deny")],
        Some(&task),
        "m",
    );
    let late = h.call("SendMessage", params).await;
    assert_eq!(late["error"]["code"], -32602);
}

#[tokio::test]
async fn pipeline_state_validates_its_query() {
    let h = Harness::default().await;
    let (status, body) = h.get("/iac-code/pipeline/state").await;
    assert_eq!(
        (status, body),
        (
            StatusCode::BAD_REQUEST,
            json!({ "error": "contextId or taskId is required" })
        )
    );
    let (status, body) = h
        .get("/iac-code/pipeline/state?taskId=x&afterSequence=-1")
        .await;
    assert_eq!(
        (status, body["error"].clone()),
        (
            StatusCode::BAD_REQUEST,
            json!("afterSequence must be a non-negative integer")
        )
    );
    let (status, _) = h
        .get("/iac-code/pipeline/state?taskId=x&includeSnapshot=false")
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _) = h.get("/iac-code/pipeline/state?taskId=unknown").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn question_free_text_answer() {
    let h = Harness::default().await;
    let frames = h
        .say("ctx-ft", "scenario:question", None)
        .await
        .frames()
        .await;
    let task = frames[0]["result"]["task"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (status, state_body) = h
        .get(&format!(
            "/iac-code/pipeline/state?taskId={task}&afterSequence=10"
        ))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(state_body["events"], json!([]));
    assert_eq!(state_body["snapshot"]["status"], "waiting_input");
    assert_eq!(
        state_body["snapshot"]["pendingInput"]["kind"],
        "ask_user_question"
    );
    let answer = h
        .say("ctx-ft", "Or maybe Shanghai please", Some(&task))
        .await
        .frames()
        .await;
    let data = &iac(&answer[0])["pipeline"]["data"];
    assert_eq!(
        (data["selectedId"].clone(), data["freeText"].clone()),
        (json!(""), json!("Or maybe Shanghai please"))
    );
    assert_eq!(state(answer.last().unwrap()), "TASK_STATE_COMPLETED");
}
