//! A tiny in-test A2A runtime: a hyper server on a loopback port whose
//! answers are scripted per request, and which counts open connections and
//! records every request (method and params) it saw.
#![allow(dead_code, unreachable_pub)]

pub mod scripted;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{combinators::BoxBody, BodyExt as _, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use iac_agui::sse_writer::ChannelBody;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::mpsc;

/// What the fake answers to one request.
pub enum Reply {
    /// A JSON body with a status.
    Json(u16, Value),
    /// An SSE body: these chunks, then the stream closes (or stays open
    /// until the client goes away when `hold` is true).
    Sse { chunks: Vec<String>, hold: bool },
    /// Raw body chunks (may split UTF-8), then close.
    SseRaw(Vec<Vec<u8>>),
    /// An SSE body: `before`, then wait until `gate` turns true, then
    /// `after`, then close.
    Gated {
        before: Vec<String>,
        gate: tokio::sync::watch::Receiver<bool>,
        after: Vec<String>,
    },
    /// Never answer (for timeouts).
    Hang,
}

/// One request the fake saw.
#[derive(Debug, Clone)]
pub struct Seen {
    pub path: String,
    pub method: Option<String>,
    pub params: Value,
    pub headers: http::HeaderMap,
    pub body: Value,
}

type Script = dyn Fn(&Seen) -> Reply + Send + Sync;

/// A running fake runtime.
pub struct FakeA2a {
    pub addr: SocketAddr,
    pub open_connections: Arc<AtomicUsize>,
    /// SSE response bodies currently open.
    pub open_streams: Arc<AtomicUsize>,
    pub seen: Arc<Mutex<Vec<Seen>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeA2a {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FakeA2a {
    pub async fn start(script: impl Fn(&Seen) -> Reply + Send + Sync + 'static) -> FakeA2a {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let open = Arc::new(AtomicUsize::new(0));
        let streams = Arc::new(AtomicUsize::new(0));
        let streams2 = Arc::clone(&streams);
        let seen = Arc::new(Mutex::new(Vec::new()));
        let script: Arc<Script> = Arc::new(script);
        let (open2, seen2) = (Arc::clone(&open), Arc::clone(&seen));
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let (open, seen, script) =
                    (Arc::clone(&open2), Arc::clone(&seen2), Arc::clone(&script));
                let streams = Arc::clone(&streams2);
                open.fetch_add(1, Ordering::SeqCst);
                let _ = stream.set_nodelay(true);
                tokio::spawn(async move {
                    let service = service_fn(move |req| {
                        handle(
                            req,
                            Arc::clone(&seen),
                            Arc::clone(&script),
                            Arc::clone(&streams),
                        )
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                    open.fetch_sub(1, Ordering::SeqCst);
                });
            }
        });
        FakeA2a {
            addr,
            open_connections: open,
            open_streams: streams,
            seen,
            task,
        }
    }

    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    pub fn methods(&self) -> Vec<String> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .filter_map(|s| s.method.clone())
            .collect()
    }

    pub fn count(&self, method: &str) -> usize {
        self.methods().iter().filter(|m| *m == method).count()
    }

    /// Waits (bounded) until `cond` holds.
    pub async fn wait_for(&self, what: &str, cond: impl Fn(&FakeA2a) -> bool) {
        for _ in 0..500 {
            if cond(self) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!(
            "timed out waiting for {what}: methods {:?}, open streams {}",
            self.methods().len(),
            self.open_streams.load(Ordering::SeqCst)
        );
    }
}

async fn handle(
    req: Request<Incoming>,
    seen: Arc<Mutex<Vec<Seen>>>,
    script: Arc<Script>,
    streams: Arc<AtomicUsize>,
) -> Result<Response<BoxBody<Bytes, Infallible>>, Infallible> {
    let path = req
        .uri()
        .path_and_query()
        .map(|p| p.as_str().to_owned())
        .unwrap_or_default();
    let headers = req.headers().clone();
    let body = req
        .into_body()
        .collect()
        .await
        .map(|c| c.to_bytes())
        .unwrap_or_default();
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let entry = Seen {
        path,
        method: body
            .get("method")
            .and_then(Value::as_str)
            .map(str::to_owned),
        params: body.get("params").cloned().unwrap_or(Value::Null),
        headers,
        body,
    };
    seen.lock().unwrap().push(entry.clone());
    let reply = script(&entry);
    Ok(match reply {
        Reply::Json(status, value) => Response::builder()
            .status(StatusCode::from_u16(status).unwrap())
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(value.to_string())).boxed())
            .unwrap(),
        Reply::Sse { chunks, hold } => {
            let (tx, rx) = mpsc::channel::<Bytes>(16);
            streams.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                send_all(&tx, chunks).await;
                if hold {
                    tx.closed().await;
                }
                streams.fetch_sub(1, Ordering::SeqCst);
            });
            sse_response(rx)
        }
        Reply::SseRaw(chunks) => {
            let (tx, rx) = mpsc::channel::<Bytes>(16);
            tokio::spawn(async move {
                for chunk in chunks {
                    if tx.send(Bytes::from(chunk)).await.is_err() {
                        return;
                    }
                }
            });
            sse_response(rx)
        }
        Reply::Gated {
            before,
            mut gate,
            after,
        } => {
            let (tx, rx) = mpsc::channel::<Bytes>(16);
            streams.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                send_all(&tx, before).await;
                let released = tokio::select! {
                    r = gate.wait_for(|open| *open) => r.is_ok(),
                    () = tx.closed() => false,
                };
                if released {
                    send_all(&tx, after).await;
                }
                streams.fetch_sub(1, Ordering::SeqCst);
            });
            sse_response(rx)
        }
        Reply::Hang => {
            std::future::pending::<()>().await;
            unreachable!()
        }
    })
}

async fn send_all(tx: &mpsc::Sender<Bytes>, chunks: Vec<String>) {
    for chunk in chunks {
        if tx.send(Bytes::from(chunk)).await.is_err() {
            return;
        }
    }
}

fn sse_response(rx: mpsc::Receiver<Bytes>) -> Response<BoxBody<Bytes, Infallible>> {
    Response::builder()
        .header("content-type", "text/event-stream; charset=utf-8")
        .body(ChannelBody::new(rx).boxed())
        .unwrap()
}

/// A JSON-RPC SSE frame with CRLF framing, as the real runtime writes it.
pub fn frame(result: Value) -> String {
    format!(
        "data: {}\r\n\r\n",
        serde_json::json!({"result": result, "id": "1", "jsonrpc": "2.0"})
    )
}

pub fn task_frame(task_id: &str, context_id: &str, state: &str) -> String {
    frame(
        serde_json::json!({"task": {"id": task_id, "contextId": context_id,
        "status": {"state": state}}}),
    )
}

pub fn status_frame(task_id: &str, context_id: &str, state: &str, text: Option<&str>) -> String {
    let mut status = serde_json::json!({"state": state});
    if let Some(text) = text {
        status["message"] = serde_json::json!({"messageId": format!("{task_id}-m"), "role": "ROLE_AGENT",
            "parts": [{"text": text}]});
    }
    frame(
        serde_json::json!({"statusUpdate": {"taskId": task_id, "contextId": context_id, "status": status}}),
    )
}

/// A server state over a temp state dir and workspace root.
pub struct TestApp {
    pub app: Arc<iac_agui::app::App>,
    pub root: tempfile::TempDir,
    pub workspace: std::path::PathBuf,
    pub shutdown: tokio::sync::watch::Sender<bool>,
}

pub fn test_app(a2a_url: &str, http: iac_agui::app::HttpSettings) -> TestApp {
    test_app_with_token(a2a_url, http, None)
}

pub fn test_app_with_token(
    a2a_url: &str,
    http: iac_agui::app::HttpSettings,
    a2a_token: Option<&str>,
) -> TestApp {
    test_app_on_loops(a2a_url, http, a2a_token, None)
}

/// As [`test_app_with_token`], with one engine shard per event loop.
pub fn test_app_on_loops(
    a2a_url: &str,
    http: iac_agui::app::HttpSettings,
    a2a_token: Option<&str>,
    loops: Option<&iac_agui::loops::EventLoops>,
) -> TestApp {
    let root = tempfile::tempdir().unwrap();
    let workspace = std::fs::canonicalize(root.path()).unwrap().join("ws");
    std::fs::create_dir(&workspace).unwrap();
    let store = iac_agui::store::StateStore::open(&root.path().join("state")).unwrap();
    let client = iac_agui::a2a_client::A2aClient::new(
        a2a_url,
        a2a_token.map(iac_agui::secret::Secret::new),
        iac_agui::a2a_client::A2aTimeouts {
            connect: Duration::from_secs(15),
            request: Duration::from_secs(10),
            stream_idle: Duration::from_secs(30),
        },
    );
    let policy = iac_agui::workspace::WorkspacePolicy::with_roots([workspace.clone()]);
    let (shutdown, rx) = tokio::sync::watch::channel(false);
    let app = iac_agui::app::App::on_loops(http, store, client, policy, rx, loops);
    TestApp {
        app,
        root,
        workspace,
        shutdown,
    }
}

/// A valid new-run body.
pub fn run_body(thread_id: &str, run_id: &str, cwd: &std::path::Path) -> Value {
    serde_json::json!({
        "threadId": thread_id,
        "runId": run_id,
        "state": {},
        "messages": [{"id": format!("m-{run_id}"), "role": "user", "content": "hello"}],
        "tools": [],
        "context": [],
        "forwardedProps": {"iacCode": {"schemaVersion": 1, "rosInvocationId": "ros-1",
            "cwd": cwd.to_str().unwrap()}},
    })
}

/// A script for a normal turn: a task frame, a text status, the end of turn.
pub fn normal_turn(seen: &Seen) -> Reply {
    match seen.method.as_deref() {
        Some("SendStreamingMessage") => {
            let ctx = seen.params["message"]["contextId"]
                .as_str()
                .unwrap_or("ctx")
                .to_owned();
            Reply::Sse {
                chunks: vec![
                    task_frame("task-1", &ctx, "TASK_STATE_SUBMITTED"),
                    status_frame("task-1", &ctx, "TASK_STATE_WORKING", Some("Hi there")),
                    ": ping - 2026-12-02 09:52:18\r\n\r\n".to_owned(),
                    status_frame("task-1", &ctx, "TASK_STATE_INPUT_REQUIRED", None),
                ],
                hold: false,
            }
        }
        _ => Reply::Json(
            200,
            serde_json::json!({"result": {}, "id": "1", "jsonrpc": "2.0"}),
        ),
    }
}

/// The `data:` payloads of an SSE body, as JSON.
pub fn sse_events(body: &[u8]) -> Vec<Value> {
    let text = std::str::from_utf8(body).unwrap();
    assert!(!text.contains('\r'), "AG-UI SSE framing is LF only");
    text.split("\n\n")
        .filter_map(|record| record.strip_prefix("data: "))
        .map(|json| serde_json::from_str(json).unwrap())
        .collect()
}

/// Checks a run's events against the core's AG-UI stream verifier (the
/// rules of the official clients: one start, balanced spans, one terminal).
pub fn assert_valid_stream(thread_id: &str, run_id: &str, events: &[Value]) {
    let mut verifier = iac_agui_core::verifier::Verifier::expecting(thread_id, run_id);
    for event in events {
        if let Err(violation) = verifier.feed_json(event) {
            panic!("invalid stream at {event}: {violation:?}");
        }
    }
    verifier.finish().expect("a complete stream");
}
