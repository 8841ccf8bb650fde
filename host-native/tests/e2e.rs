//! End to end through the router, the engine (the core's thread machine),
//! the state store and the A2A client, against the scripted A2A runtime:
//! interrupts and resume, admission conflicts, the cancel extension, state
//! that survives a restart, and secrets that never reach disk or logs.

mod support;

use std::io::Write as _;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::{BodyExt as _, Full};
use iac_agui::app::{App, HttpSettings};
use iac_agui::router::handle;
use serde_json::{json, Value};
use support::sse_events;

struct Env {
    app: Arc<App>,
    runtime: Option<iac_agui_scripted_runtime::RuntimeHandle>,
    root: tempfile::TempDir,
    workspace: std::path::PathBuf,
    _shutdown: tokio::sync::watch::Sender<bool>,
}

const A2A_TOKEN: &str = "a2a-bearer-SECRET-0001";

async fn env(http: HttpSettings) -> Env {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let runtime = iac_agui_scripted_runtime::serve(
        listener,
        iac_agui_scripted_runtime::Config {
            token: Some(A2A_TOKEN.to_owned()),
            ..Default::default()
        },
    )
    .unwrap();
    let root = tempfile::tempdir().unwrap();
    let workspace = std::fs::canonicalize(root.path()).unwrap().join("ws");
    std::fs::create_dir(&workspace).unwrap();
    let (app, shutdown) = app_over(&runtime.url(), root.path(), &workspace, http);
    Env {
        app,
        runtime: Some(runtime),
        root,
        workspace,
        _shutdown: shutdown,
    }
}

fn app_over(
    url: &str,
    root: &std::path::Path,
    workspace: &std::path::Path,
    http: HttpSettings,
) -> (Arc<App>, tokio::sync::watch::Sender<bool>) {
    let store = iac_agui::store::StateStore::open(&root.join("state")).unwrap();
    let client = iac_agui::a2a_client::A2aClient::new(
        url,
        Some(iac_agui::secret::Secret::new(A2A_TOKEN)),
        Default::default(),
    );
    let policy = iac_agui::workspace::WorkspacePolicy::with_roots([workspace.to_owned()]);
    let (tx, rx) = tokio::sync::watch::channel(false);
    (App::new(http, store, client, policy, rx), tx)
}

fn body(e: &Env, thread: &str, run: &str, text: &str) -> Value {
    let mut body = support::run_body(thread, run, &e.workspace);
    body["messages"][0]["content"] = json!(text);
    body
}

async fn post(app: &Arc<App>, path: &str, body: &Value, auth: Option<&str>) -> (StatusCode, Bytes) {
    let mut req = Request::post(path)
        .header("content-type", "application/json")
        .header("accept", "text/event-stream");
    if let Some(token) = auth {
        req = req.header("authorization", format!("Bearer {token}"));
    }
    let response = handle(
        Arc::clone(app),
        req.body(Full::new(Bytes::from(body.to_string()))).unwrap(),
    )
    .await;
    let status = response.status();
    let bytes = tokio::time::timeout(Duration::from_secs(20), response.into_body().collect())
        .await
        .expect("the stream ends")
        .unwrap()
        .to_bytes();
    (status, bytes)
}

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

/// A `MakeWriter` that appends to a shared buffer.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Capture {
    type Writer = Capture;
    fn make_writer(&'a self) -> Capture {
        self.clone()
    }
}

#[test]
fn secrets_never_reach_disk_or_logs() {
    const AUTH: &str = "agui-bearer-SECRET-0002";
    const LLM_KEY: &str = "sk-llm-SECRET-0003";
    const AK_SECRET: &str = "ak-secret-SECRET-0004";
    const STS: &str = "sts-token-SECRET-0005";
    let capture = Capture::default();
    for format in [
        iac_agui::config::LogFormat::Human,
        iac_agui::config::LogFormat::Json,
    ] {
        let subscriber = iac_agui::logging::subscriber(format, true, capture.clone());
        // Everything runs on this thread, so the thread-default subscriber
        // sees every record.
        let _guard = tracing::subscriber::set_default(subscriber);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let e = env(HttpSettings {
                auth_token: Some(iac_agui::secret::Secret::new(AUTH)),
                ..HttpSettings::default()
            })
            .await;
            let secrets = |b: &mut Value| {
                let iac = &mut b["forwardedProps"]["iacCode"];
                iac["llmApiKey"] = json!(LLM_KEY);
                iac["alibabaCloud"] = json!({"accessKeyId": "LTAI-id", "accessKeySecret": AK_SECRET,
                                             "securityToken": STS, "regionId": "cn-hangzhou"});
            };
            let mut first = body(&e, "sec", "r1", "scenario:permission");
            secrets(&mut first);
            let (status, bytes) = post(&e.app, "/", &first, Some(AUTH)).await;
            assert_eq!(status, StatusCode::OK);
            let events = sse_events(&bytes);
            let interrupt_id = events.last().unwrap()["outcome"]["interrupts"][0]["id"].as_str().unwrap().to_owned();
            let mut resume = body(&e, "sec", "r2", "");
            resume["messages"] = json!([]);
            secrets(&mut resume);
            resume["resume"] = json!([{"interruptId": interrupt_id, "status": "resolved", "payload": {"decision": "allow_once"}}]);
            let (status, bytes) = post(&e.app, "/", &resume, Some(AUTH)).await;
            assert_eq!(status, StatusCode::OK);
            assert_eq!(sse_events(&bytes).last().unwrap()["type"], "RUN_FINISHED");
            // A refused request carrying the secrets, too.
            let mut bad = body(&e, "sec2", "r1", "hello");
            secrets(&mut bad);
            bad["tools"] = json!([{"name": "x"}]);
            let (status, _) = post(&e.app, "/", &bad, Some(AUTH)).await;
            assert_eq!(status, StatusCode::BAD_REQUEST);
            let (status, _) = post(&e.app, "/", &bad, Some("wrong-token")).await;
            assert_eq!(status, StatusCode::UNAUTHORIZED);
            tokio::time::sleep(Duration::from_millis(100)).await;

            let mut written = Vec::new();
            for entry in walk(&e.root.path().join("state")) {
                written.extend(std::fs::read(entry).unwrap());
            }
            assert!(!written.is_empty(), "the state dir holds the thread");
            written.extend(capture.0.lock().unwrap().iter());
            let written = String::from_utf8_lossy(&written);
            assert!(written.contains("run ended"), "run logs were captured");
            assert!(written.contains("A2A call"), "debug logs were captured");
            for secret in [AUTH, A2A_TOKEN, LLM_KEY, AK_SECRET, STS] {
                assert!(!written.contains(secret), "{secret} leaked");
            }
            if let Some(runtime) = e.runtime {
                runtime.shutdown().await;
            }
        });
    }
    let _ = std::io::stderr().flush();
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}
