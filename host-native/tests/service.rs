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

async fn serve_a_run_then_exit_when_idle(loops: iac_agui::loops::EventLoops) {
    let root = tempfile::tempdir().unwrap();
    let port = free_port();
    let settings = Settings {
        host: "127.0.0.1".into(),
        port,
        a2a_url: None,
        a2a_token: None,
        auth_token: None,
        state_dir: root.path().join("agui"),
        idle_shutdown: Some(Duration::from_millis(800)),
        interrupt_ttl: Duration::from_secs(540),
        heartbeat: Duration::from_secs(15),
        cors_origins: Vec::new(),
        debug: false,
        log_format: LogFormat::Human,
        demo: true,
        demo_dir: None,
        workers: 2,
    };
    let server = tokio::spawn(iac_agui::service::run(settings, loops));
    let mut connected = None;
    for _ in 0..200 {
        if let Ok(c) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await {
            connected = Some(c);
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let mut c = connected.expect("the server listens");
    // The default workspace roots include the temp dir.
    let cwd = std::env::temp_dir();
    let body = serde_json::json!({
        "threadId": "svc", "runId": "r1", "state": {}, "tools": [], "context": [],
        "messages": [{"id": "m1", "role": "user", "content": "hello"}],
        "forwardedProps": {"iacCode": {"schemaVersion": 1, "rosInvocationId": "ros",
                                        "cwd": cwd.to_str().unwrap()}},
    })
    .to_string();
    let request = format!(
        "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    c.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    c.read_to_string(&mut response).await.unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(response.contains("RUN_FINISHED"), "{response}");
    assert!(root.path().join("agui/threads/svc.json").is_file());
    // Nothing in flight: the idle timer ends the server.
    let ended = tokio::time::timeout(Duration::from_secs(20), server).await;
    assert!(matches!(ended, Ok(Ok(Ok(())))), "{ended:?}");
}
