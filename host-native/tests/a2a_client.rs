//! The A2A client against an in-test runtime: framing quirks of the real
//! runtime, every failure typed, extension endpoints, connection reuse.

mod support;

use std::sync::atomic::Ordering;
use std::time::Duration;

use iac_agui::a2a_client::{A2aClient, A2aError, A2aTimeouts, RestoreOutcome};
use iac_agui::secret::Secret;
use iac_agui_core::a2a::{Method, StreamFrame, StreamResponse, TaskState};
use serde_json::json;
use support::*;

fn client(url: &str) -> A2aClient {
    A2aClient::new(
        url,
        Some(Secret::new("tok-123")),
        A2aTimeouts {
            connect: Duration::from_secs(5),
            request: Duration::from_millis(800),
            stream_idle: Duration::from_millis(800),
        },
    )
}

#[tokio::test]
async fn stream_accepts_crlf_pings_and_error_frames() {
    let fake = FakeA2a::start(|_| {
        Reply::SseRaw(vec![
            b": ping - 2026-12-02 09:52:18.347207+00:00\r\n\r\n".to_vec(),
            task_frame("t1", "c1", "TASK_STATE_SUBMITTED").into_bytes(),
            // A frame split across chunks, mid-character.
            b"data: {\"result\":{\"statusUpdate\":{\"taskId\":\"t1\",\"contextId\":\"c1\",\"status\":{\"state\":\"TASK_STATE_WORKING\",\"message\":{\"messageId\":\"m\",\"role\":\"ROLE_AGENT\",\"parts\":[{\"text\":\"caf\xc3".to_vec(),
            b"\xa9\"}]}}}},\"id\":\"1\",\"jsonrpc\":\"2.0\"}\r\n\r\n".to_vec(),
            b"event: error\r\ndata: {\"error\":{\"code\":-32603,\"message\":\"boom\"},\"id\":\"1\",\"jsonrpc\":\"2.0\"}\r\n\r\n".to_vec(),
        ])
    })
    .await;
    let c = client(&fake.url());
    let mut stream = c
        .stream(Method::SendStreamingMessage, json!({"message": {}}))
        .await
        .unwrap();
    let Some(Ok(StreamFrame::Result(first))) = stream.next().await else {
        panic!("task frame")
    };
    assert!(matches!(*first, StreamResponse::Task(ref t) if t.id == "t1"));
    let Some(Ok(StreamFrame::Result(second))) = stream.next().await else {
        panic!("status frame")
    };
    assert_eq!(second.state(), Some(&TaskState::Working));
    let StreamResponse::StatusUpdate(update) = *second else {
        panic!()
    };
    assert_eq!(update.status.message.unwrap().text(), "café");
    let Some(Ok(StreamFrame::Error(error))) = stream.next().await else {
        panic!("error frame")
    };
    assert_eq!(error.code, -32603);
    assert!(stream.next().await.is_none(), "clean end");

    let seen = fake.seen.lock().unwrap()[0].clone();
    assert_eq!(seen.headers["a2a-version"], "1.0");
    assert_eq!(seen.headers["authorization"], "Bearer tok-123");
    assert_eq!(seen.headers["content-type"], "application/json");
    assert_eq!(seen.body["jsonrpc"], "2.0");
    assert_eq!(seen.body["method"], "SendStreamingMessage");
    assert!(seen.body["id"].as_str().is_some_and(|id| !id.is_empty()));
}

#[tokio::test]
async fn plain_json_error_to_a_streaming_call_is_surfaced() {
    let fake = FakeA2a::start(|_| {
        Reply::Json(200, json!({"error": {"code": -32001, "message": "Task x is not active"}, "id": "1", "jsonrpc": "2.0"}))
    })
    .await;
    let err = client(&fake.url())
        .stream(Method::SubscribeToTask, json!({"id": "x"}))
        .await
        .unwrap_err();
    assert!(
        matches!(err, A2aError::Rpc(ref e) if e.code == -32001),
        "{err:?}"
    );
}

#[tokio::test]
async fn failures_are_typed() {
    // Refused: nothing listens on the discard port.
    let err = client("http://127.0.0.1:9")
        .call(Method::GetTask, json!({}))
        .await
        .unwrap_err();
    assert_eq!(err, A2aError::Refused);
    // Bad status (the runtime's 401 is not JSON-RPC).
    let fake = FakeA2a::start(|_| Reply::Json(401, json!({"error": "Unauthorized"}))).await;
    let err = client(&fake.url())
        .call(Method::GetTask, json!({}))
        .await
        .unwrap_err();
    assert_eq!(err, A2aError::Status(401));
    // Bad JSON.
    let fake = FakeA2a::start(|_| Reply::Json(200, json!(["not", "rpc"]))).await;
    let err = client(&fake.url())
        .call(Method::GetTask, json!({}))
        .await
        .unwrap_err();
    assert_eq!(err, A2aError::BadJson);
    let fake = FakeA2a::start(|_| Reply::Sse {
        chunks: vec!["data: {oops\n\n".into()],
        hold: false,
    })
    .await;
    let mut stream = client(&fake.url())
        .stream(Method::SubscribeToTask, json!({}))
        .await
        .unwrap();
    assert_eq!(stream.next().await, Some(Err(A2aError::BadJson)));
    // JSON-RPC error.
    let fake = FakeA2a::start(|_| {
        Reply::Json(200, json!({"error": {"code": -32002, "message": "not cancelable"}, "id": "1", "jsonrpc": "2.0"}))
    })
    .await;
    let err = client(&fake.url())
        .call(Method::CancelTask, json!({"id": "t"}))
        .await
        .unwrap_err();
    assert!(matches!(err, A2aError::Rpc(ref e) if e.code == -32002));
    // Timeout: no answer at all, and a stream that goes silent.
    let fake = FakeA2a::start(|_| Reply::Hang).await;
    let err = client(&fake.url())
        .call(Method::GetTask, json!({}))
        .await
        .unwrap_err();
    assert_eq!(err, A2aError::Timeout);
    let fake = FakeA2a::start(|_| Reply::Sse {
        chunks: vec![task_frame("t", "c", "working")],
        hold: true,
    })
    .await;
    let mut stream = client(&fake.url())
        .stream(Method::SubscribeToTask, json!({}))
        .await
        .unwrap();
    assert!(matches!(stream.next().await, Some(Ok(_))));
    assert_eq!(stream.next().await, Some(Err(A2aError::Timeout)));
    assert_eq!(stream.next().await, None, "finished after an error");
}

#[tokio::test]
async fn unary_results_and_connection_reuse() {
    let fake = FakeA2a::start(|seen| {
        Reply::Json(200, json!({"result": {"id": seen.params["id"], "contextId": "c", "status": {"state": "TASK_STATE_CANCELED"}}, "id": "1", "jsonrpc": "2.0"}))
    })
    .await;
    let c = client(&fake.url());
    for n in 0..5 {
        let result = c
            .call(Method::CancelTask, json!({"id": format!("t{n}")}))
            .await
            .unwrap();
        assert_eq!(result["id"], format!("t{n}"));
    }
    assert_eq!(
        fake.open_connections.load(Ordering::SeqCst),
        1,
        "one kept-alive connection reused"
    );
}

#[tokio::test]
async fn extension_endpoints() {
    let fake = FakeA2a::start(|seen| match seen.path.as_str() {
        p if p.starts_with("/iac-code/pipeline/state?taskId=known") => Reply::Json(
            200,
            json!({"snapshot": {"pipelineRunId": "p"}, "events": []}),
        ),
        p if p.starts_with("/iac-code/pipeline/state") => {
            Reply::Json(404, json!({"error": "A2A pipeline state not found"}))
        }
        "/iac-code/session/ensure-restored" => match seen.body["sessionId"].as_str() {
            Some("ok") => Reply::Json(200, json!({"status": "restored"})),
            Some("gone") => Reply::Json(404, json!({"status": "not_found"})),
            Some("wait") => Reply::Json(
                409,
                json!({"error": {"code": "SESSION_BACKUP_NOT_READY", "retryable": true}}),
            ),
            Some("weird") => Reply::Json(200, json!({"status": "maybe"})),
            _ => Reply::Json(503, json!({"error": "Session restore is unavailable."})),
        },
        _ => Reply::Json(404, json!({})),
    })
    .await;
    let c = client(&fake.url());
    let state = c.pipeline_state("known id&x", 7).await.unwrap().unwrap();
    assert_eq!(state["snapshot"]["pipelineRunId"], "p");
    assert_eq!(
        fake.seen.lock().unwrap()[0].path,
        "/iac-code/pipeline/state?taskId=known%20id%26x&afterSequence=7"
    );
    assert_eq!(c.pipeline_state("other", 0).await.unwrap(), None);
    assert_eq!(
        c.ensure_restored("/ws", "ok", Some("t")).await.unwrap(),
        RestoreOutcome::Ready
    );
    assert_eq!(
        fake.seen.lock().unwrap().last().unwrap().body,
        json!({"cwd": "/ws", "sessionId": "ok", "taskId": "t"})
    );
    assert_eq!(
        c.ensure_restored("/ws", "gone", None).await.unwrap(),
        RestoreOutcome::NotFound
    );
    assert_eq!(
        c.ensure_restored("/ws", "wait", None).await.unwrap(),
        RestoreOutcome::BackupNotReady
    );
    assert_eq!(
        c.ensure_restored("/ws", "weird", None).await.unwrap_err(),
        A2aError::BadJson
    );
    assert_eq!(
        c.ensure_restored("/ws", "down", None).await.unwrap_err(),
        A2aError::Status(503)
    );
    assert!(fake
        .seen
        .lock()
        .unwrap()
        .iter()
        .all(|s| s.headers["authorization"] == "Bearer tok-123"));
}

/// The idle timeout counts silence, not the stream's age: a stream that
/// pings more often than the timeout lives on past it, then times out once
/// it falls silent.
#[tokio::test]
async fn only_silence_times_a_stream_out() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut head = vec![0u8; 16 * 1024];
        let _ = socket.read(&mut head).await.unwrap();
        socket
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
            .await
            .unwrap();
        let frame = task_frame("t", "c", "TASK_STATE_WORKING");
        let chunk =
            |data: &[u8]| [format!("{:x}\r\n", data.len()).as_bytes(), data, b"\r\n"].concat();
        socket.write_all(&chunk(frame.as_bytes())).await.unwrap();
        // 2 s of pings, one every 200 ms, against an 800 ms idle timeout.
        for _ in 0..10 {
            tokio::time::sleep(Duration::from_millis(200)).await;
            socket.write_all(&chunk(b": ping\r\n\r\n")).await.unwrap();
        }
        // Then silence, with the connection open.
        tokio::time::sleep(Duration::from_secs(5)).await;
    });
    let mut stream = client(&url)
        .stream(Method::SubscribeToTask, json!({}))
        .await
        .unwrap();
    assert!(matches!(stream.next().await, Some(Ok(_))));
    let started = std::time::Instant::now();
    assert_eq!(stream.next().await, Some(Err(A2aError::Timeout)));
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(2000 + 700),
        "timed out after {waited:?}, while pings still came"
    );
}
