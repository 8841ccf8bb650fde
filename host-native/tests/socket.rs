//! Behaviour that is about sockets, over real loopback connections: body
//! limits with lying or missing Content-Length, heartbeats, prompt disconnect
//! detection (→ CancelTask, A2A stream closed), keep-alive and timeouts, and
//! 1,000 concurrent runs relayed to A2A at once.

mod support;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use iac_agui::app::{DescriptorBudget, HttpSettings, RESERVED_DESCRIPTORS};
use iac_agui::server::{serve, ConnTimeouts};
use serde_json::{json, Value};
use support::*;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

struct Running {
    addr: SocketAddr,
    t: TestApp,
}

async fn start(a2a_url: &str, http: HttpSettings, timeouts: ConnTimeouts) -> Running {
    start_on(test_app(a2a_url, http), timeouts).await
}

async fn start_on(t: TestApp, timeouts: ConnTimeouts) -> Running {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(serve(
        listener,
        Arc::clone(&t.app),
        timeouts,
        t.shutdown.subscribe(),
        Duration::from_secs(1),
    ));
    Running { addr, t }
}

fn request(body: &str, extra_headers: &str) -> Vec<u8> {
    format!(
        "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\n{extra_headers}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Connects and sends a new run of `thread` (run id `run`).
async fn post_run(s: &Running, thread: &str, run: &str) -> TcpStream {
    let mut c = TcpStream::connect(s.addr).await.unwrap();
    let body = run_body(thread, run, &s.t.workspace).to_string();
    c.write_all(&request(&body, "")).await.unwrap();
    c
}

/// Reads until `needle` shows up (or the connection ends); returns all bytes.
async fn read_until(stream: &mut TcpStream, needle: &[u8]) -> Vec<u8> {
    let mut seen = Vec::new();
    let mut buf = [0u8; 8192];
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !seen.windows(needle.len()).any(|w| w == needle) {
        let n = tokio::time::timeout_at(deadline, stream.read(&mut buf))
            .await
            .expect("timed out reading the response")
            .unwrap_or(0);
        if n == 0 {
            break;
        }
        seen.extend_from_slice(&buf[..n]);
    }
    seen
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn user_text(seen: &Seen) -> String {
    seen.params["message"]["parts"][0]["text"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

/// Holds every run open (silent after the task frame) unless the user says
/// "finish".
fn hold_unless_finish(seen: &Seen) -> Reply {
    match seen.method.as_deref() {
        Some("SendStreamingMessage") if user_text(seen) != "finish" => {
            let ctx = seen.params["message"]["contextId"]
                .as_str()
                .unwrap()
                .to_owned();
            let task = format!(
                "task-{}",
                seen.params["message"]["messageId"].as_str().unwrap()
            );
            // As the runtime opens a turn: the task, then the session id,
            // with which the host writes both.
            let session = frame(json!({"statusUpdate": {"taskId": task, "contextId": ctx,
                "status": {"state": "TASK_STATE_SUBMITTED"},
                "metadata": {"iac_code": {"iacCodeSessionId": "session-hold"}}}}));
            Reply::Sse {
                chunks: vec![task_frame(&task, &ctx, "TASK_STATE_SUBMITTED"), session],
                hold: true,
            }
        }
        _ => normal_turn(seen),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn declared_length_over_limit_is_refused_before_the_body() {
    let s = start(
        "http://127.0.0.1:9/",
        HttpSettings::default(),
        ConnTimeouts::default(),
    )
    .await;
    let mut c = TcpStream::connect(s.addr).await.unwrap();
    c.write_all(
        b"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 20971520\r\n\r\n",
    )
    .await
    .unwrap();
    // No body byte was sent, yet the answer comes.
    let response = text(&read_until(&mut c, b"REQUEST_TOO_LARGE").await);
    assert!(response.starts_with("HTTP/1.1 413"), "{response}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chunked_body_is_cut_at_the_limit() {
    let s = start(
        "http://127.0.0.1:9/",
        HttpSettings::default(),
        ConnTimeouts::default(),
    )
    .await;
    let c = TcpStream::connect(s.addr).await.unwrap();
    let (mut reader, mut writer) = c.into_split();
    let writing = tokio::spawn(async move {
        writer
            .write_all(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
            .await?;
        let chunk = vec![b' '; 1024 * 1024];
        let mut sent = 0usize;
        // 16 MiB offered; the server must stop reading after 12 MiB.
        for _ in 0..16 {
            writer
                .write_all(format!("{:x}\r\n", chunk.len()).as_bytes())
                .await?;
            writer.write_all(&chunk).await?;
            writer.write_all(b"\r\n").await?;
            sent += chunk.len();
        }
        writer.write_all(b"0\r\n\r\n").await?;
        Ok::<usize, std::io::Error>(sent)
    });
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    while !text(&seen).contains("REQUEST_TOO_LARGE") {
        match tokio::time::timeout(Duration::from_secs(20), reader.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => seen.extend_from_slice(&buf[..n]),
            other => panic!(
                "no 413 before the connection ended: {other:?} {}",
                text(&seen)
            ),
        }
    }
    assert!(text(&seen).starts_with("HTTP/1.1 413"));
    writing.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lying_short_content_length_reads_only_what_was_declared() {
    let s = start(
        "http://127.0.0.1:9/",
        HttpSettings::default(),
        ConnTimeouts::default(),
    )
    .await;
    let mut c = TcpStream::connect(s.addr).await.unwrap();
    let body = "{\"threadId\": \"t\", \"padding\": \"xxxxxxxxxxxxxxxxxxxxxxxx\"}";
    c.write_all(
        format!("POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n{body}")
            .as_bytes(),
    )
    .await
    .unwrap();
    let response = text(&read_until(&mut c, b"INVALID_JSON").await);
    assert!(response.starts_with("HTTP/1.1 400"), "{response}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lying_long_content_length_times_out() {
    let http = HttpSettings {
        body_timeout: Duration::from_millis(300),
        ..HttpSettings::default()
    };
    let s = start("http://127.0.0.1:9/", http, ConnTimeouts::default()).await;
    let mut c = TcpStream::connect(s.addr).await.unwrap();
    c.write_all(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n{\"a\":")
        .await
        .unwrap();
    let response = text(&read_until(&mut c, b"\r\n\r\n").await);
    assert!(response.starts_with("HTTP/1.1 408"), "{response}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keep_alive_then_idle_and_header_timeouts() {
    let timeouts = ConnTimeouts {
        header_read: Duration::from_millis(300),
        idle: Duration::from_millis(500),
    };
    let s = start("http://127.0.0.1:9/", HttpSettings::default(), timeouts).await;
    // Two requests on one connection.
    let mut c = TcpStream::connect(s.addr).await.unwrap();
    for _ in 0..2 {
        c.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .unwrap();
        let response = text(&read_until(&mut c, b"\"status\":\"ok\"").await);
        assert!(response.contains("200 OK"), "{response}");
    }
    // Then silence: the server closes the idle connection.
    let rest = read_until(&mut c, b"never").await;
    assert!(rest.is_empty(), "closed without a response");
    // Headers that never finish are cut off too.
    let mut slow = TcpStream::connect(s.addr).await.unwrap();
    slow.write_all(b"GET /health HTTP/1.1\r\nHost:")
        .await
        .unwrap();
    let rest = text(&read_until(&mut slow, b"never").await);
    assert!(!rest.contains("200 OK"), "{rest}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heartbeat_comments_during_silence() {
    let fake = FakeA2a::start(hold_unless_finish).await;
    let http = HttpSettings {
        heartbeat: Duration::from_millis(200),
        ..HttpSettings::default()
    };
    let s = start(&fake.url(), http, ConnTimeouts::default()).await;
    let mut c = TcpStream::connect(s.addr).await.unwrap();
    let body = run_body("hb", "r1", &s.t.workspace).to_string();
    c.write_all(&request(&body, "")).await.unwrap();
    let head = text(&read_until(&mut c, b"RUN_STARTED").await);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(head
        .to_ascii_lowercase()
        .contains("content-type: text/event-stream"));
    let first = Instant::now();
    let _ = read_until(&mut c, b": heartbeat\n\n").await;
    let between = Instant::now();
    let more = read_until(&mut c, b": heartbeat\n\n").await;
    assert!(between.duration_since(first) >= Duration::from_millis(150));
    assert!(
        between.elapsed() >= Duration::from_millis(150),
        "one per interval of silence"
    );
    assert!(!text(&more).contains("CUSTOM"), "a comment, not an event");
    drop(c);
    fake.wait_for("cancel after disconnect", |f| f.count("CancelTask") == 1)
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_descriptor_budget_a_run_is_refused_and_the_others_go_on() {
    let fake = FakeA2a::start(hold_unless_finish).await;
    // Room for three connections of two descriptors each.
    let http = HttpSettings {
        descriptors: Some(DescriptorBudget {
            limit: RESERVED_DESCRIPTORS + 2 * 3 + 1,
            per_connection: 2,
        }),
        ..HttpSettings::default()
    };
    let s = start(&fake.url(), http, ConnTimeouts::default()).await;
    let mut held = Vec::new();
    for n in 0..3 {
        let mut c = post_run(&s, &format!("held-{n}"), "r1").await;
        let head = text(&read_until(&mut c, b"RUN_STARTED").await);
        assert!(head.starts_with("HTTP/1.1 200"), "run {n}: {head}");
        held.push(c);
    }
    // RUN_STARTED comes before the run's A2A call.
    fake.wait_for("three runs at A2A", |f| {
        f.count("SendStreamingMessage") == 3
    })
    .await;

    let mut fourth = post_run(&s, "refused", "r1").await;
    // Read to the end: the server closes the connection after its answer.
    let answer = text(&read_until(&mut fourth, b"\0never").await);
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(answer.contains(r#""code":"STATE_UNAVAILABLE""#), "{answer}");
    let lower = answer.to_ascii_lowercase();
    assert!(lower.contains("connection: close\r\n"), "{answer}");
    assert!(lower.contains("retry-after: 1\r\n"), "{answer}");
    let threads = s.t.root.path().join("state/threads");
    assert!(
        !threads.join("refused.json").exists(),
        "nothing of it written"
    );
    assert_eq!(fake.count("SendStreamingMessage"), 3, "nor sent to A2A");

    // Once one of the runs leaves, a new run fits again, and the two
    // others still stream.
    drop(held.pop());
    fake.wait_for("cancel after disconnect", |f| f.count("CancelTask") == 1)
        .await;
    let connections = Arc::clone(s.t.app.connections());
    fake.wait_for("the connection counted out", |_| {
        connections.load(std::sync::atomic::Ordering::SeqCst) < 3
    })
    .await;
    let mut again = post_run(&s, "refused", "r1").await;
    let head = text(&read_until(&mut again, b"RUN_STARTED").await);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    // Four calls in all: the refused run never reached A2A.
    fake.wait_for("three runs streaming from A2A", |f| {
        f.count("SendStreamingMessage") == 4
            && f.open_streams.load(std::sync::atomic::Ordering::SeqCst) == 3
    })
    .await;
    assert_eq!(fake.count("CancelTask"), 1);
}

/// Opens a silent run, waits for it to reach A2A, and drops the client.
async fn silent_run_then_disconnect(s: &Running, fake: &FakeA2a, n: usize) -> Duration {
    let mut c = post_run(s, &format!("thread-{n}"), &format!("run-{n}")).await;
    let _ = read_until(&mut c, b"RUN_STARTED").await;
    fake.wait_for("the A2A stream", |f| {
        f.count("SendStreamingMessage") == n + 1
            && f.open_streams.load(std::sync::atomic::Ordering::SeqCst) == 1
    })
    .await;
    // Wait until the host has learnt (and persisted) the task id.
    let state =
        s.t.root
            .path()
            .join(format!("state/threads/thread-{n}.json"));
    let task = format!("task-m-run-{n}");
    fake.wait_for("the task id in the thread state", |_| {
        std::fs::read_to_string(&state).is_ok_and(|doc| doc.contains(&task))
    })
    .await;
    let dropped = Instant::now();
    drop(c);
    let what = format!("CancelTask and a closed A2A stream (run {n})");
    fake.wait_for(&what, |f| {
        f.count("CancelTask") == n + 1
            && f.open_streams.load(std::sync::atomic::Ordering::SeqCst) == 0
    })
    .await;
    dropped.elapsed()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quiet_disconnect_is_detected_within_a_second() {
    let fake = FakeA2a::start(hold_unless_finish).await;
    let s = start(
        &fake.url(),
        HttpSettings::default(),
        ConnTimeouts::default(),
    )
    .await;
    let took = silent_run_then_disconnect(&s, &fake, 0).await;
    assert!(
        took < Duration::from_secs(1),
        "disconnect noticed after {took:?}"
    );
    let cancel = fake
        .seen
        .lock()
        .unwrap()
        .iter()
        .find(|x| x.method.as_deref() == Some("CancelTask"))
        .cloned()
        .unwrap();
    assert_eq!(cancel.params, json!({"id": "task-m-run-0"}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_disconnects_leak_nothing() {
    let fake = FakeA2a::start(hold_unless_finish).await;
    let s = start(
        &fake.url(),
        HttpSettings::default(),
        ConnTimeouts::default(),
    )
    .await;
    for n in 0..200 {
        let took = silent_run_then_disconnect(&s, &fake, n).await;
        assert!(
            took < Duration::from_secs(1),
            "disconnect {n} noticed after {took:?}"
        );
    }
    assert_eq!(
        fake.open_streams.load(std::sync::atomic::Ordering::SeqCst),
        0
    );
    // Only pooled idle connections may remain, never one per run.
    assert!(
        fake.open_connections
            .load(std::sync::atomic::Ordering::SeqCst)
            < 10
    );
    assert!(s.t.app.is_idle(), "no run left active");
    // The server still admits and completes runs.
    let mut body = run_body("after", "after-1", &s.t.workspace);
    body["messages"][0]["content"] = json!("finish");
    let mut c = TcpStream::connect(s.addr).await.unwrap();
    c.write_all(&request(&body.to_string(), "")).await.unwrap();
    let response = text(&read_until(&mut c, b"RUN_FINISHED").await);
    assert!(response.contains("RUN_FINISHED"), "{response}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thousand_concurrent_runs_reach_a2a_at_once() {
    const RUNS: usize = 1000;
    let (gate_tx, gate) = tokio::sync::watch::channel(false);
    let fake = FakeA2a::start(move |seen| match seen.method.as_deref() {
        Some("SendStreamingMessage") => {
            let ctx = seen.params["message"]["contextId"]
                .as_str()
                .unwrap()
                .to_owned();
            let task = format!(
                "task-{}",
                seen.params["message"]["messageId"].as_str().unwrap()
            );
            Reply::Gated {
                before: vec![task_frame(&task, &ctx, "TASK_STATE_SUBMITTED")],
                gate: gate.clone(),
                after: vec![status_frame(&task, &ctx, "TASK_STATE_INPUT_REQUIRED", None)],
            }
        }
        _ => normal_turn(seen),
    })
    .await;
    let s = start(
        &fake.url(),
        HttpSettings::default(),
        ConnTimeouts::default(),
    )
    .await;
    let mut clients = Vec::new();
    for n in 0..RUNS {
        let body = run_body(&format!("c-{n}"), &format!("r-{n}"), &s.t.workspace).to_string();
        let addr = s.addr;
        clients.push(tokio::spawn(async move {
            let mut c = TcpStream::connect(addr).await.unwrap();
            c.write_all(&request(&body, "Connection: close\r\n"))
                .await
                .unwrap();
            let mut all = Vec::new();
            c.read_to_end(&mut all).await.unwrap();
            all
        }));
    }
    for _ in 0..6000 {
        if fake.open_streams.load(std::sync::atomic::Ordering::SeqCst) == RUNS {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        fake.open_streams.load(std::sync::atomic::Ordering::SeqCst),
        RUNS,
        "every run must be relayed to A2A before any of them ends"
    );
    gate_tx.send(true).unwrap();
    for client in clients {
        let response = client.await.unwrap();
        let events = response_events(&text(&response));
        assert_eq!(events.first().unwrap()["type"], "RUN_STARTED");
        assert_eq!(events.last().unwrap()["type"], "RUN_FINISHED");
    }
}

/// The events of one HTTP/1.1 response with a chunked SSE body.
fn response_events(response: &str) -> Vec<Value> {
    let body_start = response.find("\r\n\r\n").unwrap() + 4;
    dechunk(&response[body_start..])
        .split("\n\n")
        .filter_map(|r| r.strip_prefix("data: "))
        .map(|j| serde_json::from_str(j).unwrap())
        .collect()
}

/// Decodes an HTTP/1.1 chunked body.
fn dechunk(mut raw: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = raw.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if size == 0 {
            break;
        }
        out.push_str(&rest[..size]);
        raw = &rest[size + 2..];
    }
    out
}

/// Reads until the server closes the connection (or 5 s pass).
async fn read_to_close(stream: &mut TcpStream) -> String {
    let mut seen = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut seen)).await;
    text(&seen)
}

async fn health_server() -> Running {
    start(
        "http://127.0.0.1:9/",
        HttpSettings::default(),
        ConnTimeouts::default(),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pipelined_requests_are_answered_in_order() {
    let s = health_server().await;
    let mut c = TcpStream::connect(s.addr).await.unwrap();
    c.write_all(
        b"GET /health HTTP/1.1\r\nHost: x\r\n\r\nGET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n\r\nGET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    )
    .await
    .unwrap();
    let all = read_to_close(&mut c).await;
    let statuses: Vec<&str> = all
        .match_indices("HTTP/1.1 ")
        .map(|(at, _)| &all[at + 9..at + 12])
        .collect();
    assert_eq!(statuses, ["200", "404", "200"], "{all}");
    assert_eq!(all.matches("\"status\":\"ok\"").count(), 2, "{all}");
    assert_eq!(all.matches("connection: close").count(), 1, "{all}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expect_continue_gets_a_100_before_the_body() {
    let s = health_server().await;
    let mut c = TcpStream::connect(s.addr).await.unwrap();
    let body = r#"{"threadId":"t","runId":"r","messages":[],"tools":[],"context":[],"state":{},"forwardedProps":{}}"#;
    c.write_all(
        format!(
            "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\nExpect: 100-continue\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    let interim = text(&read_until(&mut c, b"\r\n\r\n").await);
    assert_eq!(interim, "HTTP/1.1 100 Continue\r\n\r\n");
    c.write_all(body.as_bytes()).await.unwrap();
    // A request without forwardedProps.iacCode: refused, but answered.
    let response = text(&read_until(&mut c, b"}}").await);
    assert!(response.starts_with("HTTP/1.1 4"), "{response}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http10_and_head_requests() {
    let s = health_server().await;
    let mut c = TcpStream::connect(s.addr).await.unwrap();
    c.write_all(b"GET /health HTTP/1.0\r\n\r\n").await.unwrap();
    let response = read_to_close(&mut c).await;
    assert!(response.starts_with("HTTP/1.1 200 OK\r\n"), "{response}");
    assert!(response.contains("connection: close\r\n"), "{response}");
    assert!(response.contains("content-length: "), "{response}");
    assert!(response.contains("\"status\":\"ok\""), "{response}");

    let mut c = TcpStream::connect(s.addr).await.unwrap();
    c.write_all(b"HEAD /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let response = read_to_close(&mut c).await;
    assert!(response.ends_with("\r\n\r\n"), "headers only: {response}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broken_or_ambiguous_heads_get_400_or_431_and_a_close() {
    let s = health_server().await;
    let many = format!("GET /health HTTP/1.1\r\n{}\r\n", "X-A: b\r\n".repeat(101));
    let huge = format!(
        "GET /health HTTP/1.1\r\nX-A: {}\r\n\r\n",
        "b".repeat(70_000)
    );
    let cases: [(&[u8], &str); 5] = [
        (b"NOT HTTP AT ALL\r\n\r\n", "400"),
        (
            b"POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
            "400",
        ),
        (
            b"POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n",
            "400",
        ),
        (many.as_bytes(), "431"),
        (huge.as_bytes(), "431"),
    ];
    for (request, status) in cases {
        let mut c = TcpStream::connect(s.addr).await.unwrap();
        let _ = c.write_all(request).await;
        let response = read_to_close(&mut c).await;
        assert!(
            response.starts_with(&format!("HTTP/1.1 {status} ")),
            "{status}: {response}"
        );
        assert!(response.contains("connection: close\r\n"), "{response}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_before_its_body_the_client_still_gets_the_answer() {
    let http = HttpSettings {
        auth_token: Some(iac_agui::secret::Secret::new("right")),
        ..HttpSettings::default()
    };
    let s = start("http://127.0.0.1:9/", http, ConnTimeouts::default()).await;
    let mut c = TcpStream::connect(s.addr).await.unwrap();
    let body = vec![b' '; 4 * 1024 * 1024];
    c.write_all(
        format!(
            "POST / HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer wrong\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    // The server answers 401 without reading the body, and keeps draining
    // it for a moment so the answer is not lost to a connection reset.
    let (mut read, mut write) = c.into_split();
    let writer = tokio::spawn(async move { write.write_all(&body).await });
    let mut seen = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), read.read_to_end(&mut seen)).await;
    let response = text(&seen);
    assert!(response.starts_with("HTTP/1.1 401 "), "{response}");
    assert!(response.contains("connection: close\r\n"), "{response}");
    let _ = writer.await;
}

/// On two event loops (as the binary runs), a connection whose run belongs
/// to the other loop's shard moves to that loop to write the response.
/// Pipelined runs on one keep-alive connection, on threads of both shards,
/// all arrive whole and in order (the bytes of the next request, read
/// while a response streamed, move with the connection), and clients that
/// leave mid-stream are still seen (CancelTask).
#[test]
fn runs_written_from_their_own_event_loop() {
    const RUNS: usize = 6;
    let (runtime, loops) = iac_agui::loops::EventLoops::start(2).unwrap();
    runtime.block_on(async {
        let fake = FakeA2a::start(hold_unless_finish).await;
        let t = test_app_on_loops(&fake.url(), HttpSettings::default(), None, Some(&loops));
        let s = start_on(t, ConnTimeouts::default()).await;
        let mut pipelined = Vec::new();
        for n in 0..RUNS {
            let mut body = run_body(&format!("loops-{n}"), &format!("run-{n}"), &s.t.workspace);
            body["messages"][0]["content"] = json!("finish");
            let close = if n + 1 == RUNS {
                "Connection: close\r\n"
            } else {
                ""
            };
            pipelined.extend(request(&body.to_string(), close));
        }
        let mut c = TcpStream::connect(s.addr).await.unwrap();
        c.write_all(&pipelined).await.unwrap();
        let all = read_to_close(&mut c).await;
        let responses: Vec<&str> = all.split("HTTP/1.1 ").skip(1).collect();
        assert_eq!(responses.len(), RUNS, "{all}");
        for (n, response) in responses.iter().enumerate() {
            assert!(response.starts_with("200"), "{response}");
            let events = response_events(response);
            assert_valid_stream(&format!("loops-{n}"), &format!("run-{n}"), &events);
            assert_eq!(events.last().unwrap()["type"], "RUN_FINISHED");
        }
        for n in 0..RUNS {
            let thread = format!("gone-{n}");
            let mut c = TcpStream::connect(s.addr).await.unwrap();
            let body = run_body(&thread, "r", &s.t.workspace).to_string();
            c.write_all(&request(&body, "")).await.unwrap();
            let _ = read_until(&mut c, b"RUN_STARTED").await;
            let state = s.t.root.path().join(format!("state/threads/{thread}.json"));
            fake.wait_for("the task id in the thread state", |_| {
                std::fs::read_to_string(&state).is_ok_and(|doc| doc.contains("task-m-r"))
            })
            .await;
            drop(c);
            fake.wait_for("CancelTask and a closed A2A stream", |f| {
                f.count("CancelTask") == n + 1
                    && f.open_streams.load(std::sync::atomic::Ordering::SeqCst) == 0
            })
            .await;
        }
    });
}
