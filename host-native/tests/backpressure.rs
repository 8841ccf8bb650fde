//! Backpressure from the client to the A2A stream (issue 8): while the
//! AG-UI client reads nothing, the engine must stop reading the runtime's
//! stream instead of queueing it in memory; once the client reads, every
//! event arrives in order; a client that goes away while the run is stalled
//! still ends the run and closes the A2A stream.
//!
//! The fake runtime below produces its SSE frames lazily and counts how many
//! the adapter's connection has taken. The stream is far larger than every
//! buffer on the way (loopback socket buffers, the engine's credits, the
//! SSE body queue), so a count that stops short of the total can only mean
//! the adapter is waiting for its client.

mod support;

use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{combinators::BoxBody, BodyExt as _, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use iac_agui::app::HttpSettings;
use iac_agui::router::{handle, ResponseBody};
use iac_agui::sse_writer::ChannelBody;
use serde_json::{json, Value};
use tokio::net::TcpListener;
use tokio::sync::mpsc;

/// Status frames carrying text, each `TEXT` bytes long: 48 MiB in all.
const FRAMES: usize = 6_000;
const TEXT: usize = 8 * 1024;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_reads_nothing_stalls_the_a2a_stream() {
    let runtime = LazyRuntime::start().await;
    let t = support::test_app(&runtime.url(), HttpSettings::default());
    let mut response = start_run(&t, "bp", "r1").await;

    let taken = runtime.wait_until_stalled().await;
    assert!(
        taken < runtime.total,
        "the adapter took all {} frames while its client read nothing",
        runtime.total
    );

    // Now read: every frame's text arrives, in order, in a valid stream.
    let bytes = tokio::time::timeout(Duration::from_secs(120), response.body_mut().collect())
        .await
        .expect("the stream ends once the client reads")
        .unwrap()
        .to_bytes();
    let events = support::sse_events(&bytes);
    support::assert_valid_stream("bp", "r1", &events);
    let text: String = events
        .iter()
        .filter(|e| e["type"] == "TEXT_MESSAGE_CONTENT")
        .filter_map(|e| e["delta"].as_str())
        .collect();
    assert_eq!(text, expected_text(), "all text, in order");
    assert_eq!(runtime.taken(), runtime.total);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_gone_while_stalled_ends_the_run_and_the_a2a_stream() {
    let runtime = LazyRuntime::start().await;
    let t = support::test_app(&runtime.url(), HttpSettings::default());
    let response = start_run(&t, "gone", "r1").await;

    let taken = runtime.wait_until_stalled().await;
    assert!(taken < runtime.total, "the relay should be waiting");
    drop(response);

    for _ in 0..1_000 {
        if runtime.closed.load(Ordering::SeqCst) && t.app.is_idle() {
            assert!(runtime.taken() < runtime.total);
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the disconnect did not end the run and close the A2A stream");
}

async fn start_run(t: &support::TestApp, thread: &str, run: &str) -> Response<ResponseBody> {
    let body = support::run_body(thread, run, &t.workspace);
    let req = Request::post("/")
        .header("content-type", "application/json")
        .header("accept", "text/event-stream")
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap();
    let response = handle(Arc::clone(&t.app), req).await;
    assert_eq!(response.status(), http::StatusCode::OK);
    response
}

/// The text of frame `i`: a marker plus padding, so order is checked too.
fn frame_text(i: usize) -> String {
    let marker = format!("<{i}>");
    format!("{marker}{}", "x".repeat(TEXT - marker.len()))
}

fn expected_text() -> String {
    (0..FRAMES).map(frame_text).collect()
}

/// An A2A runtime whose one streaming answer is a task frame, `FRAMES`
/// text frames and an end of turn, produced one at a time as the
/// connection takes them. Other calls get an empty result.
struct LazyRuntime {
    url: String,
    total: usize,
    taken: Arc<AtomicUsize>,
    closed: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for LazyRuntime {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl LazyRuntime {
    async fn start() -> LazyRuntime {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/", listener.local_addr().unwrap());
        let taken = Arc::new(AtomicUsize::new(0));
        let closed = Arc::new(AtomicBool::new(false));
        let (taken2, closed2) = (Arc::clone(&taken), Arc::clone(&closed));
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (taken, closed) = (Arc::clone(&taken2), Arc::clone(&closed2));
                tokio::spawn(async move {
                    let service =
                        service_fn(move |req| answer(req, Arc::clone(&taken), Arc::clone(&closed)));
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        LazyRuntime {
            url,
            total: FRAMES + 2,
            taken,
            closed,
            task,
        }
    }

    fn url(&self) -> String {
        self.url.clone()
    }

    fn taken(&self) -> usize {
        self.taken.load(Ordering::SeqCst)
    }

    /// Waits until the adapter has taken frames and then taken no more for
    /// a while (or has taken them all); returns how many it took.
    async fn wait_until_stalled(&self) -> usize {
        let mut last = usize::MAX;
        let mut still = 0;
        for _ in 0..3_000 {
            let now = self.taken();
            if now == self.total {
                return now;
            }
            if now == last && now > 0 {
                still += 1;
                if still == 50 {
                    return now;
                }
            } else {
                still = 0;
            }
            last = now;
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("the adapter neither stalled nor finished: {last} frames");
    }
}

async fn answer(
    req: Request<Incoming>,
    taken: Arc<AtomicUsize>,
    closed: Arc<AtomicBool>,
) -> Result<Response<BoxBody<Bytes, Infallible>>, Infallible> {
    let body = req.into_body().collect().await.unwrap().to_bytes();
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    if body["method"] != "SendStreamingMessage" {
        let empty = json!({"result": {}, "id": body["id"], "jsonrpc": "2.0"});
        return Ok(Response::new(
            Full::new(Bytes::from(empty.to_string())).boxed(),
        ));
    }
    let ctx = body["params"]["message"]["contextId"]
        .as_str()
        .unwrap_or("ctx")
        .to_owned();
    // A one-slot channel: `taken` counts what the connection pulled.
    let (tx, rx) = mpsc::channel::<Bytes>(1);
    tokio::spawn(async move {
        let frames = std::iter::once(support::task_frame("t1", &ctx, "TASK_STATE_SUBMITTED"))
            .chain((0..FRAMES).map(|i| {
                support::status_frame("t1", &ctx, "TASK_STATE_WORKING", Some(&frame_text(i)))
            }))
            .chain(std::iter::once(support::status_frame(
                "t1",
                &ctx,
                "TASK_STATE_INPUT_REQUIRED",
                None,
            )));
        for frame in frames {
            if tx.send(Bytes::from(frame)).await.is_err() {
                break;
            }
            taken.fetch_add(1, Ordering::SeqCst);
        }
        tx.closed().await;
        closed.store(true, Ordering::SeqCst);
    });
    Ok(Response::builder()
        .header("content-type", "text/event-stream")
        .body(ChannelBody::new(rx).boxed())
        .unwrap())
}
