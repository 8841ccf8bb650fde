//! `iac-agui serve` as a whole: the demo backend, a real listening socket, a
//! run, and idle shutdown ending the process loop cleanly.

use std::time::Duration;

use iac_agui::config::{LogFormat, Settings};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// As `main` runs it: on two event loops.
#[test]
fn demo_server_serves_a_run_then_exits_when_idle() {
    let (runtime, loops) = iac_agui::loops::EventLoops::start(2).unwrap();
    runtime.block_on(serve_a_run_then_exit_when_idle(loops));
}

/// The demo server's settings on `port`, its state under `root`.
fn settings(root: &std::path::Path, port: u16) -> Settings {
    Settings {
        host: "127.0.0.1".into(),
        port,
        a2a_url: None,
        a2a_token: None,
        auth_token: None,
        state_dir: root.join("agui"),
        idle_shutdown: Some(Duration::from_millis(800)),
        interrupt_ttl: Duration::from_secs(540),
        heartbeat: Duration::from_secs(15),
        cors_origins: vec!["http://app.example".into()],
        debug: false,
        log_format: LogFormat::Human,
        demo: true,
        demo_dir: None,
        workers: 2,
    }
}

async fn connect(port: u16) -> tokio::net::TcpStream {
    for _ in 0..200 {
        if let Ok(c) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await {
            return c;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the server does not listen");
}

/// A run request on `thread_id`; `close` ends the connection after it.
fn run_request(thread_id: &str, close: bool) -> String {
    // The default workspace roots include the temp dir.
    let cwd = std::env::temp_dir();
    let body = serde_json::json!({
        "threadId": thread_id, "runId": "r1", "state": {}, "tools": [], "context": [],
        "messages": [{"id": "m1", "role": "user", "content": "hello"}],
        "forwardedProps": {"iacCode": {"schemaVersion": 1, "rosInvocationId": "ros",
                                        "cwd": cwd.to_str().unwrap()}},
    })
    .to_string();
    let connection = if close { "close" } else { "keep-alive" };
    format!(
        "POST / HTTP/1.1\r\nHost: x\r\nOrigin: http://app.example\r\nContent-Type: application/json\r\nConnection: {connection}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

async fn serve_a_run_then_exit_when_idle(loops: iac_agui::loops::EventLoops) {
    let root = tempfile::tempdir().unwrap();
    let port = free_port();
    let server = tokio::spawn(iac_agui::service::run(settings(root.path(), port), loops));
    let mut c = connect(port).await;
    c.write_all(run_request("svc", true).as_bytes())
        .await
        .unwrap();
    let mut response = String::new();
    c.read_to_string(&mut response).await.unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(response.contains("RUN_FINISHED"), "{response}");
    assert!(root.path().join("agui/threads/svc.json").is_file());
    // Nothing in flight: the idle timer ends the server.
    let ended = tokio::time::timeout(Duration::from_secs(20), server).await;
    assert!(matches!(ended, Ok(Ok(Ok(())))), "{ended:?}");
}

/// The shard of a thread, as the engine picks it (FNV-1a of its id).
fn shard(thread_id: &str, shards: u64) -> u64 {
    let hash = thread_id.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    hash % shards
}

/// A connection is accepted on the first loop and moves to the loop of
/// each run's thread before the run is admitted there. One kept
/// connection carries runs of threads on both loops, back and forth, and
/// each answer is whole: its CORS header, its events, its end.
#[test]
fn a_kept_connection_carries_runs_of_threads_on_both_loops() {
    let threads = ["kept-a", "kept-b", "kept-c", "kept-d", "kept-e", "kept-f"];
    let homes: Vec<u64> = threads.iter().map(|t| shard(t, 2)).collect();
    assert!(
        homes.windows(2).filter(|w| w[0] != w[1]).count() >= 2,
        "the threads change loops at least twice: {homes:?}"
    );
    let (runtime, loops) = iac_agui::loops::EventLoops::start(2).unwrap();
    runtime.block_on(async move {
        let root = tempfile::tempdir().unwrap();
        let port = free_port();
        let server = tokio::spawn(iac_agui::service::run(settings(root.path(), port), loops));
        let mut c = connect(port).await;
        let mut read = Vec::new();
        for (i, thread) in threads.iter().enumerate() {
            let last = i + 1 == threads.len();
            c.write_all(run_request(thread, last).as_bytes())
                .await
                .unwrap();
            // A streamed answer ends with its last chunk.
            let mut chunk = [0u8; 4096];
            while !read.windows(5).any(|w| w == b"0\r\n\r\n") {
                let n = c.read(&mut chunk).await.unwrap();
                assert!(n > 0, "closed before the answer on {thread} ended");
                read.extend_from_slice(&chunk[..n]);
            }
            let end = read.windows(5).position(|w| w == b"0\r\n\r\n").unwrap() + 5;
            let answer = String::from_utf8(read.drain(..end).collect()).unwrap();
            assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
            assert!(
                answer.contains("access-control-allow-origin: http://app.example"),
                "{answer}"
            );
            assert!(answer.contains("RUN_STARTED"), "{answer}");
            assert!(answer.contains("RUN_FINISHED"), "{answer}");
            assert!(
                answer.contains(&format!("\"threadId\":\"{thread}\"")),
                "{answer}"
            );
            let file = format!("agui/threads/{thread}.json");
            assert!(root.path().join(file).is_file());
        }
        let ended = tokio::time::timeout(Duration::from_secs(20), server).await;
        assert!(matches!(ended, Ok(Ok(Ok(())))), "{ended:?}");
    });
}
