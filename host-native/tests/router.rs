//! Routes called without a socket: every status the host itself produces
//! (SPEC §1, §12), CORS, and a run relayed to an in-test A2A runtime.

mod support;

use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body::{Body, Frame};
use http_body_util::{BodyExt as _, Full};
use iac_agui::app::HttpSettings;
use iac_agui::router::{handle, ResponseBody};
use serde_json::{json, Value};
use support::*;

fn post(path: &str, body: impl Into<Bytes>) -> http::request::Builder {
    let _ = body;
    Request::builder()
        .method("POST")
        .uri(path)
        .header("content-type", "application/json")
        .header("accept", "text/event-stream")
}

async fn send(t: &TestApp, req: Request<Full<Bytes>>) -> (StatusCode, http::HeaderMap, Bytes) {
    let response: Response<ResponseBody> = handle(Arc::clone(&t.app), req).await;
    let (parts, body) = response.into_parts();
    let bytes = body.collect().await.unwrap().to_bytes();
    (parts.status, parts.headers, bytes)
}

fn error_of(bytes: &[u8]) -> (String, String) {
    let v: Value = serde_json::from_slice(bytes).unwrap();
    (
        v["error"]["code"].as_str().unwrap().to_owned(),
        v["error"]["message"].as_str().unwrap().to_owned(),
    )
}

fn full(v: impl Into<Bytes>) -> Full<Bytes> {
    Full::new(v.into())
}

fn unused_a2a() -> String {
    "http://127.0.0.1:9/".to_owned()
}

#[tokio::test]
async fn health_needs_no_auth() {
    let t = test_app(
        &unused_a2a(),
        HttpSettings {
            auth_token: Some(iac_agui::secret::Secret::new("tok")),
            ..HttpSettings::default()
        },
    );
    let req = Request::get("/health").body(full("")).unwrap();
    let (status, _, body) = send(&t, req).await;
    assert_eq!(status, StatusCode::OK);
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(v["status"], "ok");
    assert_eq!(v["protocol"], "ag-ui");
    assert_eq!(v["executionKernel"], "a2a-1.0");
    assert_eq!(v["serverVersion"], env!("CARGO_PKG_VERSION"));
    assert!(v["protocolPackageVersion"].is_string());
}

/// A body that records whether anyone polled it.
struct Tripwire(Arc<AtomicBool>);

impl Body for Tripwire {
    type Data = Bytes;
    type Error = std::io::Error;
    fn poll_frame(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        self.0.store(true, Ordering::SeqCst);
        Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(b"{}")))))
    }
}

#[tokio::test]
async fn auth_before_body_scheme_case_insensitive() {
    let t = test_app(
        &unused_a2a(),
        HttpSettings {
            auth_token: Some(iac_agui::secret::Secret::new("s3cret-token")),
            ..HttpSettings::default()
        },
    );
    for auth in [
        None,
        Some("Bearer wrong"),
        Some("Bearer s3cret-toke"),
        Some("Basic s3cret-token"),
        Some("Bearers3cret-token"),
    ] {
        let polled = Arc::new(AtomicBool::new(false));
        let mut req = post("/", "").header("accept-language", "de");
        if let Some(auth) = auth {
            req = req.header("authorization", auth);
        }
        let response = handle(
            Arc::clone(&t.app),
            req.body(Tripwire(Arc::clone(&polled))).unwrap(),
        )
        .await;
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{auth:?}");
        assert!(
            !polled.load(Ordering::SeqCst),
            "the body must not be read before auth"
        );
        let body = response.into_body().collect().await.unwrap().to_bytes();
        let (code, message) = error_of(&body);
        assert_eq!(code, "UNAUTHORIZED");
        assert_eq!(
            message,
            iac_agui_core::catalog::text(
                iac_agui_core::MessageKey::Unauthorized,
                iac_agui_core::Language::De
            )
        );
    }
    let req = post("/", "")
        .header("authorization", "bEaReR s3cret-token")
        .body(full("[]"))
        .unwrap();
    let (status, _, body) = send(&t, req).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "auth passed, body judged");
    assert_eq!(error_of(&body).0, "INVALID_INPUT");
    // The cancel route is guarded too.
    let req = post("/extensions/iac-code/v1/executions/e1/cancel", "")
        .body(full("{}"))
        .unwrap();
    assert_eq!(send(&t, req).await.0, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn media_type_and_accept() {
    let t = test_app(&unused_a2a(), HttpSettings::default());
    for content_type in [
        None,
        Some("text/plain"),
        Some("application/jsonx"),
        Some("application/x-json"),
    ] {
        let mut req = Request::post("/").header("accept", "text/event-stream");
        if let Some(ct) = content_type {
            req = req.header("content-type", ct);
        }
        let (status, _, body) = send(&t, req.body(full("{}")).unwrap()).await;
        assert_eq!(
            status,
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "{content_type:?}"
        );
        assert_eq!(error_of(&body).0, "UNSUPPORTED_MEDIA_TYPE");
    }
    // Parameters are allowed.
    let req = Request::post("/")
        .header("content-type", "Application/JSON; charset=utf-8")
        .body(full("[]"))
        .unwrap();
    assert_eq!(send(&t, req).await.0, StatusCode::BAD_REQUEST);
    for accept in [
        "application/json",
        "text/html, application/json",
        "text/event-stream;q=0",
    ] {
        let req = Request::post("/")
            .header("content-type", "application/json")
            .header("accept", accept)
            .body(full("[]"))
            .unwrap();
        let (status, _, body) = send(&t, req).await;
        assert_eq!(status, StatusCode::NOT_ACCEPTABLE, "{accept}");
        assert_eq!(error_of(&body).0, "NOT_ACCEPTABLE");
    }
    for accept in [
        "*/*",
        "text/*",
        "application/json, text/event-stream",
        "text/event-stream; charset=utf-8",
    ] {
        let req = Request::post("/")
            .header("content-type", "application/json")
            .header("accept", accept)
            .body(full("[]"))
            .unwrap();
        assert_eq!(
            send(&t, req).await.0,
            StatusCode::BAD_REQUEST,
            "{accept} is acceptable"
        );
    }
}

#[tokio::test]
async fn body_limits() {
    let t = test_app(&unused_a2a(), HttpSettings::default());
    // Declared too large: refused without reading.
    let polled = Arc::new(AtomicBool::new(false));
    let req = post("/", "")
        .header("content-length", (12 * 1024 * 1024 + 1).to_string())
        .body(Tripwire(Arc::clone(&polled)))
        .unwrap();
    let response = handle(Arc::clone(&t.app), req).await;
    assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
    assert!(!polled.load(Ordering::SeqCst));
    // No length declared: the running total decides.
    let big = vec![b' '; 12 * 1024 * 1024 + 1];
    let (status, _, body) = send(&t, post("/", "").body(full(big)).unwrap()).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(error_of(&body).0, "REQUEST_TOO_LARGE");
    // Exactly at the limit is read (and then judged as JSON).
    let mut at_limit = vec![b' '; 12 * 1024 * 1024 - 2];
    at_limit.extend_from_slice(b"[]");
    let (status, _, body) = send(&t, post("/", "").body(full(at_limit)).unwrap()).await;
    assert_eq!(
        (status, error_of(&body).0.as_str()),
        (StatusCode::BAD_REQUEST, "INVALID_INPUT")
    );
    // The cancel route stops at 64 KiB.
    let cancel = "/extensions/iac-code/v1/executions/e1/cancel";
    let (status, _, _) = send(
        &t,
        post(cancel, "")
            .body(full(vec![b' '; 64 * 1024 + 1]))
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
}

#[tokio::test]
async fn invalid_json_and_input_translated() {
    let t = test_app(&unused_a2a(), HttpSettings::default());
    let cases: [(&[u8], &str); 4] = [
        (b"{not json", "INVALID_JSON"),
        (b"\xff\xfe{}", "INVALID_JSON"),
        (b"[1]", "INVALID_INPUT"),
        (b"{}", "INVALID_INPUT"),
    ];
    // Small bodies are checked inline, large ones (past 64 KiB: padded with
    // whitespace) on a blocking thread; the answers must not differ.
    let padded = |body: &[u8]| [vec![b' '; 70 * 1024], body.to_vec()].concat();
    for (body, code) in cases {
        for body in [body.to_vec(), padded(body)] {
            let req = post("/", "")
                .header("accept-language", "pt-BR, en;q=0.5")
                .body(full(body.clone()))
                .unwrap();
            let (status, headers, bytes) = send(&t, req).await;
            assert_eq!(status, StatusCode::BAD_REQUEST);
            assert_eq!(headers["content-type"], "application/json");
            let (got, message) = error_of(&bytes);
            assert_eq!(got, code);
            let pt = iac_agui_core::Language::Pt;
            let key = match code {
                "INVALID_JSON" => iac_agui_core::MessageKey::InvalidJson,
                _ if body.ends_with(b"[1]") => iac_agui_core::MessageKey::BodyNotObject,
                _ => iac_agui_core::MessageKey::InvalidEnvelope,
            };
            assert_eq!(message, iac_agui_core::catalog::text(key, pt));
        }
    }
    // preferredLanguage in the body wins over Accept-Language.
    let mut body = run_body("t", "r", &t.workspace);
    body["tools"] = json!([{"name": "x"}]);
    body["forwardedProps"]["iacCode"]["preferredLanguage"] = json!("ja");
    for body in [
        body.to_string().into_bytes(),
        padded(body.to_string().as_bytes()),
    ] {
        let req = post("/", "")
            .header("accept-language", "pt")
            .body(full(body))
            .unwrap();
        let (_, _, bytes) = send(&t, req).await;
        assert_eq!(
            error_of(&bytes).1,
            iac_agui_core::catalog::text(
                iac_agui_core::MessageKey::ToolsNotSupported,
                iac_agui_core::Language::Ja
            )
        );
    }
}

#[tokio::test]
async fn workspace_and_image_refusals() {
    let t = test_app(&unused_a2a(), HttpSettings::default());
    let outside = tempfile::tempdir().unwrap();
    let body = run_body("t", "r", outside.path());
    let (status, _, bytes) = send(&t, post("/", "").body(full(body.to_string())).unwrap()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        error_of(&bytes).1,
        iac_agui_core::catalog::text(
            iac_agui_core::MessageKey::WorkspaceOutsideRoots,
            iac_agui_core::Language::En
        )
    );
    let mut body = run_body("t", "r", &t.workspace);
    body["messages"][0]["content"] = json!([
        {"type": "text", "text": "look"},
        {"type": "image", "source": {"type": "data", "mimeType": "image/png", "value": "aGVsbG8gd29ybGQ="}}
    ]);
    let (status, _, bytes) = send(&t, post("/", "").body(full(body.to_string())).unwrap()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (code, message) = error_of(&bytes);
    assert_eq!(code, "INVALID_INPUT");
    assert_eq!(message, "The image data is invalid.");
}

#[tokio::test]
async fn cancel_route_validation() {
    let t = test_app(&unused_a2a(), HttpSettings::default());
    let path = "/extensions/iac-code/v1/executions/exec-1/cancel";
    for body in [
        json!({}),
        json!({"threadId": "t"}),
        json!({"threadId": "", "rosInvocationId": "r"}),
        json!({"threadId": 1, "rosInvocationId": "r"}),
    ] {
        let (status, _, bytes) =
            send(&t, post(path, "").body(full(body.to_string())).unwrap()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(error_of(&bytes).0, "INVALID_INPUT");
    }
    let body = json!({"threadId": "t", "rosInvocationId": "r"});
    let (status, _, bytes) = send(&t, post(path, "").body(full(body.to_string())).unwrap()).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(error_of(&bytes).0, "EXECUTION_NOT_FOUND");
    let req = Request::post(path).body(full(body.to_string())).unwrap();
    assert_eq!(send(&t, req).await.0, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let req = Request::get(path).body(full("")).unwrap();
    assert_eq!(send(&t, req).await.0, StatusCode::METHOD_NOT_ALLOWED);
    let req = Request::get("/nope").body(full("")).unwrap();
    assert_eq!(send(&t, req).await.0, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn cors_allow_list_and_preflight() {
    let off = test_app(&unused_a2a(), HttpSettings::default());
    let preflight = |origin: &str| {
        Request::options("/")
            .header("origin", origin)
            .header("access-control-request-method", "POST")
            .header(
                "access-control-request-headers",
                "authorization, content-type",
            )
            .body(full(""))
            .unwrap()
    };
    let (status, headers, _) = send(&off, preflight("https://app.example")).await;
    assert_ne!(status, StatusCode::NO_CONTENT, "CORS is off by default");
    assert!(headers.get("access-control-allow-origin").is_none());

    let on = test_app(
        &unused_a2a(),
        HttpSettings {
            cors_origins: vec!["https://app.example".to_owned()],
            ..HttpSettings::default()
        },
    );
    let (status, headers, _) = send(&on, preflight("https://app.example")).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    assert_eq!(
        headers["access-control-allow-origin"],
        "https://app.example"
    );
    let allowed = headers["access-control-allow-headers"]
        .to_str()
        .unwrap()
        .to_ascii_lowercase();
    assert!(allowed.contains("authorization") && allowed.contains("content-type"));
    assert!(headers["access-control-allow-methods"]
        .to_str()
        .unwrap()
        .contains("POST"));
    let (status, headers, _) = send(&on, preflight("https://evil.example")).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(headers.get("access-control-allow-origin").is_none());
    // Actual responses (errors included) carry the origin for allowed callers.
    let req = Request::get("/health")
        .header("origin", "https://app.example")
        .body(full(""))
        .unwrap();
    let (_, headers, _) = send(&on, req).await;
    assert_eq!(
        headers["access-control-allow-origin"],
        "https://app.example"
    );
}

#[tokio::test]
async fn run_is_relayed_to_a2a_and_streamed() {
    let fake = FakeA2a::start(normal_turn).await;
    let t = test_app_with_token(&fake.url(), HttpSettings::default(), Some("a2a-token"));
    let mut body = run_body("thread-a", "run-1", &t.workspace);
    body["parentRunId"] = json!("run-0");
    body["forwardedProps"]["iacCode"]["llmApiKey"] = json!("sk-test");
    let (status, headers, bytes) =
        send(&t, post("/", "").body(full(body.to_string())).unwrap()).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers["content-type"], "text/event-stream");
    assert_eq!(headers["cache-control"], "no-cache");
    assert_eq!(headers["x-accel-buffering"], "no");
    let events = sse_events(&bytes);
    assert_valid_stream("thread-a", "run-1", &events);
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "RUN_STARTED",
            "TEXT_MESSAGE_START",
            "TEXT_MESSAGE_CONTENT",
            "CUSTOM",
            "TEXT_MESSAGE_END",
            "RUN_FINISHED"
        ]
    );
    assert_eq!(events[2]["delta"], "Hi there");
    assert_eq!(events[3]["name"], "iac-code.session.v1");
    assert_eq!(events[0]["threadId"], "thread-a");
    assert_eq!(events[0]["parentRunId"], "run-0");
    assert!(events.iter().all(|e| e["timestamp"].is_i64()));
    assert_eq!(events[5]["outcome"], json!({"type": "success"}));

    let seen = fake.seen.lock().unwrap().clone();
    let call = seen
        .iter()
        .find(|s| s.method.as_deref() == Some("SendStreamingMessage"))
        .unwrap();
    assert_eq!(call.headers["a2a-version"], "1.0");
    assert_eq!(call.headers["authorization"], "Bearer a2a-token");
    let meta = &call.params["message"]["metadata"]["iac_code"];
    assert_eq!(meta["cwd"], t.workspace.to_str().unwrap());
    assert_eq!(meta["iac_code_api_key"], "sk-test");
    assert_eq!(meta["preferredLanguage"], "en");
    assert_eq!(call.params["message"]["parts"], json!([{"text": "hello"}]));
    assert_eq!(
        call.params["message"]["contextId"],
        iac_agui_core::document::context_id("thread-a")
    );
}

#[tokio::test]
async fn a2a_failures_become_run_error() {
    // Nothing listens: the stream opens with RUN_STARTED and ends with
    // RUN_ERROR A2A_UNAVAILABLE.
    let t = test_app(&unused_a2a(), HttpSettings::default());
    let body = run_body("t", "r", &t.workspace);
    let (status, _, bytes) = send(&t, post("/", "").body(full(body.to_string())).unwrap()).await;
    assert_eq!(status, StatusCode::OK);
    let events = sse_events(&bytes);
    assert_eq!(events.len(), 2);
    assert_eq!(events[1]["type"], "RUN_ERROR");
    assert_eq!(events[1]["code"], "A2A_UNAVAILABLE");
    assert!(events[1].get("threadId").is_none());

    // A streaming call refused with plain JSON is an error, not an empty stream.
    let fake = FakeA2a::start(|_| {
        Reply::Json(200, json!({"error": {"code": -32602, "message": "Validation failed"}, "id": "1", "jsonrpc": "2.0"}))
    })
    .await;
    let t = test_app(&fake.url(), HttpSettings::default());
    let (_, _, bytes) = send(
        &t,
        post("/", "")
            .body(full(run_body("t", "r", &t.workspace).to_string()))
            .unwrap(),
    )
    .await;
    let events = sse_events(&bytes);
    assert_eq!(events.last().unwrap()["code"], "A2A_UNAVAILABLE");
}
