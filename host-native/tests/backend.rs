//! The managed `iac-code a2a` child, with a fake `iac-code` on PATH.
//!
//! The fake is a small shell script: it records its arguments and the
//! environment it was given, then stays up (or exits, or ignores SIGTERM).
//! Its `/health` is served by an in-test runtime bound to the port the
//! script was told to use, so the whole handshake is exercised with nothing
//! but `/bin/sh`.

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::time::Duration;

use iac_agui::backend::{BackendError, ManagedChild, ManagedOptions};
use serde_json::json;

fn install_fake(dir: &Path, body: &str) {
    let script = format!("#!/bin/sh\nout=\"$(dirname \"$0\")\"\n{body}\n");
    let path = dir.join("iac-code");
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Records the token, then the arguments (renamed into place last, so a
/// reader that sees `args` also sees `token`).
const RECORD: &str = r#"printf '%s' "$IACCODE_A2A_HTTP_TOKEN" > "$out/token"
printf '%s\n' "$@" > "$out/args.tmp" && mv "$out/args.tmp" "$out/args""#;

/// PATH with the fake first, then the system's (the script needs coreutils).
fn options(dir: &Path) -> ManagedOptions {
    let system = std::env::var_os("PATH").unwrap_or_default();
    let path =
        std::env::join_paths(std::iter::once(dir.to_owned()).chain(std::env::split_paths(&system)))
            .unwrap();
    ManagedOptions {
        path: Some(path),
        ready_timeout: Duration::from_secs(10),
        poll_every: Duration::from_millis(20),
        ..ManagedOptions::default()
    }
}

/// Waits for the fake to record its arguments; returns (args, port, token).
async fn recorded(dir: &Path) -> (Vec<String>, u16, String) {
    for _ in 0..500 {
        if let Ok(args) = std::fs::read_to_string(dir.join("args")) {
            let args: Vec<String> = args.lines().map(str::to_owned).collect();
            let port = args[args.iter().position(|a| a == "--port").unwrap() + 1]
                .parse()
                .unwrap();
            let token = std::fs::read_to_string(dir.join("token")).unwrap();
            return (args, port, token);
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the fake iac-code never started");
}

/// Serves `/health` (token checked) on `port`, as the real runtime would.
async fn serve_health(port: u16, token: String) -> tokio::task::JoinHandle<()> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let token = token.clone();
            tokio::spawn(async move {
                let service =
                    hyper::service::service_fn(move |req: http::Request<hyper::body::Incoming>| {
                        let ok = req
                            .headers()
                            .get("authorization")
                            .and_then(|v| v.to_str().ok())
                            == Some(&format!("Bearer {token}"));
                        async move {
                            let status = if ok { 200 } else { 401 };
                            Ok::<_, std::convert::Infallible>(
                                http::Response::builder()
                                    .status(status)
                                    .body(http_body_util::Full::new(bytes::Bytes::from(
                                        json!({"status": "healthy"}).to_string(),
                                    )))
                                    .unwrap(),
                            )
                        }
                    });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .await;
            });
        }
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn managed_child_starts_and_stops() {
    let dir = tempfile::tempdir().unwrap();
    install_fake(
        dir.path(),
        &format!("trap 'echo term > \"$out/signal\"; exit 0' TERM\n{RECORD}\nwhile :; do sleep 0.05; done"),
    );
    let path = dir.path().to_owned();
    let starting = tokio::spawn(ManagedChild::start(options(&path)));
    let (args, port, token) = recorded(dir.path()).await;
    assert_eq!(
        args,
        [
            "a2a",
            "--host",
            "127.0.0.1",
            "--port",
            &port.to_string(),
            "--thinking-exposure",
            "all"
        ]
    );
    assert!(token.len() >= 32, "a fresh random token");
    let health = serve_health(port, token.clone()).await;
    let mut child = starting.await.unwrap().unwrap();
    assert_eq!(child.url(), format!("http://127.0.0.1:{port}/"));
    // The client it hands out carries the token.
    child
        .client(Default::default())
        .health(Duration::from_secs(2))
        .await
        .unwrap();
    child.stop(Duration::from_secs(5)).await;
    assert_eq!(
        std::fs::read_to_string(dir.path().join("signal"))
            .unwrap()
            .trim(),
        "term"
    );
    assert_eq!(child.id(), None, "the child was reaped");
    health.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_ignoring_sigterm_is_killed_after_the_grace() {
    let dir = tempfile::tempdir().unwrap();
    install_fake(
        dir.path(),
        &format!("trap '' TERM\n{RECORD}\nwhile :; do sleep 0.05; done"),
    );
    let path = dir.path().to_owned();
    let starting = tokio::spawn(ManagedChild::start(options(&path)));
    let (_, port, token) = recorded(dir.path()).await;
    let health = serve_health(port, token).await;
    let mut child = starting.await.unwrap().unwrap();
    child.stop(Duration::from_millis(200)).await;
    assert_eq!(child.id(), None, "killed and reaped");
    health.abort();
}

/// A server killed outright cannot stop its child: the parent-death signal
/// does. A runtime on a thread of its own stands in for the server; the
/// child's handle is leaked (no kill on drop), then the thread ends.
#[test]
fn the_child_is_signalled_when_the_server_is_gone() {
    assert!(
        ["/usr/bin/setpriv", "/bin/setpriv"]
            .iter()
            .any(|p| Path::new(p).exists()),
        "setpriv (util-linux) is needed for this test"
    );
    let dir = tempfile::tempdir().unwrap();
    // It gives up by itself after about 5 s: a child left running would
    // hold the test's output open and stall the whole test run.
    install_fake(
        dir.path(),
        &format!(
            "trap 'echo term > \"$out/signal\"; exit 0' TERM\n{RECORD}\n\
             i=0; while [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done"
        ),
    );
    let path = dir.path().to_owned();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let starting = tokio::spawn(ManagedChild::start(options(&path)));
            let (_, port, token) = recorded(&path).await;
            let health = serve_health(port, token).await;
            let child = starting.await.unwrap().unwrap();
            health.abort();
            std::mem::forget(child);
        });
    })
    .join()
    .unwrap();
    let signal = dir.path().join("signal");
    for _ in 0..300 {
        if std::fs::read_to_string(&signal).is_ok_and(|s| s.trim() == "term") {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("the child was not signalled when its parent thread ended");
}

#[tokio::test]
async fn not_installed_is_a_clear_error() {
    let empty = tempfile::tempdir().unwrap();
    let err = ManagedChild::start(options(empty.path()))
        .await
        .unwrap_err();
    assert_eq!(err, BackendError::NotInstalled);
    assert!(err
        .to_string()
        .contains("pip install 'iac-code[agui]==0.16.0'"));
}

#[tokio::test]
async fn exit_during_startup_is_reported_with_its_code() {
    let dir = tempfile::tempdir().unwrap();
    install_fake(dir.path(), "exit 3");
    let err = ManagedChild::start(options(dir.path())).await.unwrap_err();
    assert_eq!(err, BackendError::ExitedDuringStartup(Some(3)));
    assert_eq!(
        err.to_string(),
        "the local A2A process exited during startup (exit code 3)"
    );
}

#[tokio::test]
async fn never_ready_times_out_and_is_stopped() {
    let dir = tempfile::tempdir().unwrap();
    install_fake(
        dir.path(),
        &format!("{RECORD}\nwhile :; do sleep 0.05; done"),
    );
    let mut opts = options(dir.path());
    opts.ready_timeout = Duration::from_millis(400);
    let err = ManagedChild::start(opts).await.unwrap_err();
    assert_eq!(err, BackendError::NotReady);
}
