//! A run that carries every secret field (LLM key, AccessKey secret, STS
//! token) behind both bearer tokens: afterwards nothing the server wrote (the
//! state directory and its logs at debug level, human and JSON) contains any
//! of them. Its own test binary, so the global log subscriber sees every
//! thread and no other test shares it.

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::StatusCode;
use iac_agui::app::HttpSettings;
use serde_json::{json, Value};
use support::scripted::*;
use support::sse_events;
use tracing_subscriber::layer::SubscriberExt as _;

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_never_reach_disk_or_logs() {
    const AUTH: &str = "agui-bearer-SECRET-0002";
    const LLM_KEY: &str = "sk-llm-SECRET-0003";
    const AK_SECRET: &str = "ak-secret-SECRET-0004";
    const STS: &str = "sts-token-SECRET-0005";
    let human = Capture::default();
    let json_logs = Capture::default();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_subscriber::EnvFilter::new("debug"))
        .with(
            tracing_subscriber::fmt::layer()
                .with_ansi(false)
                .with_writer(human.clone()),
        )
        .with(
            tracing_subscriber::fmt::layer()
                .json()
                .with_writer(json_logs.clone()),
        );
    tracing::subscriber::set_global_default(subscriber).unwrap();

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
    let interrupt_id = events.last().unwrap()["outcome"]["interrupts"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut resume = body(&e, "sec", "r2", "");
    resume["messages"] = json!([]);
    secrets(&mut resume);
    resume["resume"] = json!([{"interruptId": interrupt_id, "status": "resolved",
                               "payload": {"decision": "allow_once"}}]);
    let (status, bytes) = post(&e.app, "/", &resume, Some(AUTH)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(sse_events(&bytes).last().unwrap()["type"], "RUN_FINISHED");
    // Refused requests carrying the secrets, too.
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
    let human = String::from_utf8_lossy(&human.0.lock().unwrap()).into_owned();
    let json_logs = String::from_utf8_lossy(&json_logs.0.lock().unwrap()).into_owned();
    for logs in [&human, &json_logs] {
        assert!(logs.contains("run ended"), "run logs were captured");
        assert!(logs.contains("A2A call"), "debug logs were captured");
        assert!(
            logs.contains("UNAUTHORIZED"),
            "request lines carry the error code"
        );
    }
    let written = format!("{}{human}{json_logs}", String::from_utf8_lossy(&written));
    for secret in [AUTH, A2A_TOKEN, LLM_KEY, AK_SECRET, STS] {
        assert!(!written.contains(secret), "{secret} leaked");
    }
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
