//! The scripted runtime over real HTTP: frame shapes against the real
//! captures, framing, authentication, the version header and error shapes.

mod support;

use http::{Method, StatusCode};
use serde_json::{json, Value};
use support::{
    fixture_signatures, iac, message_params, permission_part, signature, state, Harness, TOKEN,
};

async fn signatures_of(h: &Harness, text: &str) -> Vec<String> {
    h.say("ctx-shape", text, None)
        .await
        .frames()
        .await
        .iter()
        .map(signature)
        .collect()
}

#[tokio::test]
async fn normal_mode_scenarios_replay_the_captured_shapes() {
    let h = Harness::default().await;
    for (text, capture) in [
        ("hello there", "out_plain.json"),
        ("scenario:think", "out_think.json"),
        ("scenario:tool", "out_tool.json"),
        ("scenario:fail", "out_fail.json"),
        ("scenario:permission", "out_perm1_a.json"),
    ] {
        assert_eq!(
            signatures_of(&h, text).await,
            fixture_signatures(capture),
            "{text} vs {capture}"
        );
    }
}

#[tokio::test]
async fn permission_answer_replays_the_captured_continuation() {
    let h = Harness::default().await;
    let frames = h
        .say("ctx-perm", "scenario:permission", None)
        .await
        .frames()
        .await;
    let input = iac(frames.last().unwrap())["input"].clone();
    let task = input["requestTaskId"].as_str().unwrap().to_owned();
    let params = message_params(
        "ctx-perm",
        vec![permission_part(&input, "allow_once")],
        Some(&task),
        "agui-resume-r2",
    );
    let answer: Vec<String> = h
        .rpc("SendStreamingMessage", params)
        .await
        .frames()
        .await
        .iter()
        .map(signature)
        .collect();
    assert_eq!(answer, fixture_signatures("out_perm2_a.json"));
}

#[tokio::test]
async fn pipeline_question_replays_the_captured_shapes() {
    let h = Harness::default().await;
    let first = h
        .say("ctx-pipe", "I want a website scenario:question", None)
        .await
        .frames()
        .await;
    let signatures: Vec<String> = first.iter().map(signature).collect();
    assert_eq!(signatures, fixture_signatures("out_pipe1.json"));
    let task = first[0]["result"]["task"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let answer: Vec<String> = h
        .say("ctx-pipe", "Beijing", Some(&task))
        .await
        .frames()
        .await
        .iter()
        .map(signature)
        .collect();
    assert_eq!(answer, fixture_signatures("out_pipe3.json"));
}

#[tokio::test]
async fn frames_use_crlf_json_rpc_envelopes_and_float_metadata() {
    let h = Harness::default().await;
    let stream = h.say("ctx-raw", "hi", None).await;
    assert_eq!(stream.status, StatusCode::OK);
    assert_eq!(stream.content_type, "text/event-stream; charset=utf-8");
    let raw = stream.text().await;
    let blocks: Vec<&str> = raw.split_terminator("\r\n\r\n").collect();
    assert_eq!(blocks.len(), 8, "{raw}");
    for block in blocks {
        assert!(block.starts_with("data: {\"result\":"), "{block}");
        assert!(
            block.ends_with(",\"id\":\"req-SendStreamingMessage\",\"jsonrpc\":\"2.0\"}"),
            "{block}"
        );
        assert!(!block.contains('\n'), "one line per event: {block}");
    }
    assert!(
        raw.contains("\"inputTokens\":120.0"),
        "metadata numbers are doubles"
    );
}

#[tokio::test]
async fn authentication_is_a_case_sensitive_bearer_token() {
    let h = Harness::default().await;
    for auth in [
        None,
        Some("bearer test-token-123"),
        Some("Bearer wrong"),
        Some("Token test-token-123"),
    ] {
        for path in ["/health", "/iac-code/pipeline/state?taskId=x"] {
            let stream = h.send_with(auth, Method::GET, path, &[], None).await;
            assert_eq!(stream.status, StatusCode::UNAUTHORIZED, "{auth:?} {path}");
            assert_eq!(stream.content_type, "application/json");
            assert_eq!(stream.json().await, json!({ "error": "Unauthorized" }));
        }
    }
    let (status, body) = h.get("/health").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["status"], "healthy");
    let unauth = h
        .send_with(
            Some("Bearer nope"),
            Method::POST,
            "/",
            &[("a2a-version", "1.0")],
            None,
        )
        .await;
    assert_eq!(unauth.status, StatusCode::UNAUTHORIZED);
    assert!(!unauth.text().await.contains(TOKEN));
}

#[tokio::test]
async fn without_a_token_auth_is_off() {
    let h = Harness::start(iac_agui_scripted_runtime::Config::default()).await;
    let (status, _) = h.get("/health").await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn the_version_header_is_required() {
    let h = Harness::default().await;
    let body =
        json!({ "jsonrpc": "2.0", "id": "v1", "method": "GetTask", "params": { "id": "x" } })
            .to_string();
    let response = h
        .send(
            Method::POST,
            "/",
            &[("content-type", "application/json")],
            Some(body),
        )
        .await
        .json()
        .await;
    assert_eq!(response["error"]["code"], -32009);
    assert_eq!(
        response["error"]["message"],
        "A2A version '0.3' is not supported by this handler. Expected version '1.0'."
    );
    assert_eq!(response["id"], "v1");
}

#[tokio::test]
async fn json_rpc_errors_have_the_sdk_shapes() {
    let h = Harness::default().await;
    let unknown = h.call("NoSuchMethod", json!({})).await;
    assert_eq!(
        unknown,
        json!({ "error": { "code": -32601, "message": "Method not found" }, "id": "req-NoSuchMethod", "jsonrpc": "2.0" })
    );
    let garbage = h
        .send(
            Method::POST,
            "/",
            &[("a2a-version", "1.0")],
            Some("{nope".to_owned()),
        )
        .await
        .json()
        .await;
    assert_eq!(garbage["error"]["code"], -32700);
    assert_eq!(garbage["id"], Value::Null);
    let missing = h.call("GetTask", json!({ "id": "no-such-task" })).await;
    let capture = support::fixture("out_gettask_missing.json");
    assert_eq!(missing["error"], capture["body"]["error"]);
}

#[tokio::test]
async fn streaming_rejections_are_plain_json() {
    let h = Harness::default().await;
    let no_parts = h
        .rpc(
            "SendStreamingMessage",
            message_params("ctx-np", vec![], None, "m"),
        )
        .await;
    assert_eq!(no_parts.content_type, "application/json");
    let body = no_parts.json().await;
    let capture = support::fixture("out_noparts.json");
    let raw: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../core/tests/fixtures/a2a/out_noparts.raw"
        ))
        .unwrap(),
    )
    .unwrap();
    assert_eq!(body["error"], raw["error"], "{capture}");
    let rejected = h.say("ctx-rej", "scenario:reject", None).await;
    assert_eq!(rejected.content_type, "application/json");
    assert_eq!(
        rejected.json().await["error"]["message"],
        "Validation failed"
    );
    let inactive = h.rpc("SubscribeToTask", json!({ "id": "nope" })).await;
    assert_eq!(inactive.content_type, "application/json");
    assert_eq!(inactive.json().await["error"]["code"], -32001);
}

#[tokio::test]
async fn protocol_violation_scenarios_break_the_named_identity() {
    let h = Harness::default().await;
    let frames = h
        .say("ctx-v", "scenario:context-change", None)
        .await
        .frames()
        .await;
    assert!(frames
        .iter()
        .any(|f| f["result"]["statusUpdate"]["contextId"] == "other-ctx"));
    let frames = h
        .say("ctx-v", "scenario:task-change", None)
        .await
        .frames()
        .await;
    let task = frames[0]["result"]["task"]["id"].clone();
    assert!(frames
        .iter()
        .skip(1)
        .any(|f| f["result"]["statusUpdate"]["taskId"] != task));
    let frames = h
        .say("ctx-v", "scenario:session-change", None)
        .await
        .frames()
        .await;
    let sessions: std::collections::BTreeSet<String> = frames
        .iter()
        .filter_map(|f| iac(f)["iacCodeSessionId"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(sessions.len(), 2);
    let frames = h
        .say("ctx-v", "scenario:abrupt-end", None)
        .await
        .frames()
        .await;
    assert_eq!(state(frames.last().unwrap()), "TASK_STATE_WORKING");
    let raw = h
        .say("ctx-v", "scenario:stream-error", None)
        .await
        .text()
        .await;
    assert!(raw.ends_with("event: error\r\ndata: {\"error\":{\"code\":-32603,\"message\":\"boom\"},\"id\":\"req-SendStreamingMessage\",\"jsonrpc\":\"2.0\"}\r\n\r\n"), "{raw}");
}

#[tokio::test]
async fn slow_streams_carry_ping_comments() {
    let h = Harness::default().await;
    let raw = h
        .say("ctx-slow", "scenario:slow:400", None)
        .await
        .text()
        .await;
    assert!(raw.contains(": ping - "), "{raw}");
    let ping = raw
        .split("\r\n\r\n")
        .find(|b| b.starts_with(": ping - "))
        .unwrap();
    assert!(ping.ends_with("+00:00"), "{ping}");
    assert!(raw.contains("\"text\":\"late\""));
}

#[tokio::test]
async fn cancel_replays_the_captured_shapes() {
    let h = Harness::default().await;
    let mut stream = h.say("ctx-cs", "scenario:cancel", None).await;
    let mut frames = Vec::new();
    for _ in 0..3 {
        frames.push(stream.next_data().await.unwrap());
    }
    let task = frames[0]["result"]["task"]["id"].clone();
    let canceled = h.call("CancelTask", json!({ "id": task })).await;
    let capture = support::fixture("out_cancel_task.json");
    assert_eq!(
        key_paths(&canceled["result"]),
        key_paths(&capture["body"]["result"])
    );
    while let Some(frame) = stream.next_data().await {
        frames.push(frame);
    }
    let signatures: Vec<String> = frames.iter().map(signature).collect();
    assert_eq!(signatures, fixture_signatures("out_cancel.json"));
}

#[tokio::test]
async fn subscribe_replays_the_captured_shapes() {
    let h = Harness::default().await;
    let mut main = h.say("ctx-sub", "scenario:slow:1500", None).await;
    let task = main.next_data().await.unwrap()["result"]["task"]["id"].clone();
    while state(&main.next_data().await.unwrap()) != "TASK_STATE_WORKING" {}
    let subscribed: Vec<String> = h
        .rpc("SubscribeToTask", json!({ "id": task }))
        .await
        .frames()
        .await
        .iter()
        .map(signature)
        .collect();
    assert_eq!(subscribed, fixture_signatures("out_subscribe_active.json"));
    let rest = main.frames().await;
    assert_eq!(state(rest.last().unwrap()), "TASK_STATE_INPUT_REQUIRED");
}

#[tokio::test]
async fn task_snapshots_have_the_captured_keys() {
    let h = Harness::default().await;
    let frames = h
        .say("ctx-gt", "scenario:permission", None)
        .await
        .frames()
        .await;
    let input = iac(frames.last().unwrap())["input"].clone();
    let task = input["requestTaskId"].as_str().unwrap().to_owned();
    let before = h
        .call("GetTask", json!({ "id": task, "historyLength": 100 }))
        .await;
    let capture = support::fixture("out_perm_gettask_a.json");
    assert_eq!(
        key_paths(&before["result"]),
        key_paths(&capture["body"]["result"])
    );
    let params = message_params(
        "ctx-gt",
        vec![permission_part(&input, "allow_once")],
        Some(&task),
        "m",
    );
    h.rpc("SendStreamingMessage", params).await.frames().await;
    let after = h
        .call("GetTask", json!({ "id": task, "historyLength": 100 }))
        .await;
    let capture = support::fixture("out_gettask_after.json");
    assert_eq!(
        key_paths(&after["result"]),
        key_paths(&capture["body"]["result"])
    );
}

/// Every object key path below `v` (array items merged), e.g.
/// `metadata.iac_code.executionControl.blockers`.
fn key_paths(v: &Value) -> std::collections::BTreeSet<String> {
    fn walk(v: &Value, prefix: &str, out: &mut std::collections::BTreeSet<String>) {
        match v {
            Value::Object(map) => {
                for (k, child) in map {
                    let path = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    out.insert(path.clone());
                    walk(child, &path, out);
                }
            }
            Value::Array(items) => items.iter().for_each(|i| walk(i, prefix, out)),
            _ => {}
        }
    }
    let mut out = std::collections::BTreeSet::new();
    walk(v, "", &mut out);
    out
}
