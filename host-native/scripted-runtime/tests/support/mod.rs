//! A minimal HTTP/1.1 client over hyper for driving the scripted runtime,
//! plus helpers to read SSE blocks and compare frame shapes with captures.
#![allow(dead_code, unreachable_pub)]

use std::path::PathBuf;
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use iac_agui_scripted_runtime::{serve, Config, RuntimeHandle};
use serde_json::{json, Value};
use tokio::net::TcpStream;

pub const TOKEN: &str = "test-token-123";

/// A runtime on an ephemeral port and a client for it.
pub struct Harness {
    pub runtime: RuntimeHandle,
    pub token: Option<String>,
}

impl Harness {
    pub async fn start(config: Config) -> Harness {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let token = config.token.clone();
        Harness {
            runtime: serve(listener, config).unwrap(),
            token,
        }
    }

    pub async fn default() -> Harness {
        Harness::start(Config {
            token: Some(TOKEN.to_owned()),
            ping_interval: Duration::from_millis(50),
            slow_delay: Duration::from_millis(200),
            subscribe_grace: Duration::from_secs(5),
            ..Config::default()
        })
        .await
    }

    /// Sends a request with the harness's token; `headers` are added after
    /// the default ones.
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<String>,
    ) -> Stream {
        let auth = self.token.as_ref().map(|t| format!("Bearer {t}"));
        self.send_with(auth.as_deref(), method, path, headers, body)
            .await
    }

    /// Sends a request with exactly this `Authorization` value (or none).
    pub async fn send_with(
        &self,
        auth: Option<&str>,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<String>,
    ) -> Stream {
        let tcp = TcpStream::connect(self.runtime.local_addr()).await.unwrap();
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
            .await
            .unwrap();
        tokio::spawn(conn);
        let mut builder = Request::builder()
            .method(method)
            .uri(path)
            .header("host", "localhost");
        if let Some(auth) = auth {
            builder = builder.header("authorization", auth);
        }
        for (k, v) in headers {
            builder = builder.header(*k, *v);
        }
        let request = builder
            .body(Full::new(Bytes::from(body.unwrap_or_default())))
            .unwrap();
        let response = sender.send_request(request).await.unwrap();
        let status = response.status();
        let content_type = response
            .headers()
            .get("content-type")
            .map(|v| v.to_str().unwrap().to_owned())
            .unwrap_or_default();
        Stream {
            status,
            content_type,
            body: response.into_body(),
            buf: Vec::new(),
        }
    }

    /// A JSON-RPC call with `A2A-Version: 1.0`.
    pub async fn rpc(&self, method: &str, params: Value) -> Stream {
        let body = json!({ "jsonrpc": "2.0", "id": format!("req-{method}"), "method": method, "params": params });
        self.send(
            Method::POST,
            "/",
            &[("content-type", "application/json"), ("a2a-version", "1.0")],
            Some(body.to_string()),
        )
        .await
    }

    /// A unary JSON-RPC call's parsed body.
    pub async fn call(&self, method: &str, params: Value) -> Value {
        let stream = self.rpc(method, params).await;
        assert_eq!(stream.content_type, "application/json");
        stream.json().await
    }

    /// SendStreamingMessage with a text part.
    pub async fn say(&self, context: &str, text: &str, task: Option<&str>) -> Stream {
        self.rpc(
            "SendStreamingMessage",
            message_params(context, vec![json!({ "text": text })], task, "m-1"),
        )
        .await
    }

    pub async fn get(&self, path: &str) -> (StatusCode, Value) {
        let stream = self.send(Method::GET, path, &[], None).await;
        let status = stream.status;
        (status, stream.json().await)
    }
}

pub fn message_params(
    context: &str,
    parts: Vec<Value>,
    task: Option<&str>,
    message_id: &str,
) -> Value {
    let mut message = json!({
        "messageId": message_id, "role": "ROLE_USER", "parts": parts,
        "metadata": { "iac_code": { "cwd": "/workspace/ws", "preferredLanguage": "en" } },
        "contextId": context
    });
    if let Some(task) = task {
        message["taskId"] = json!(task);
    }
    json!({ "message": message, "configuration": { "acceptedOutputModes": ["text/plain"] } })
}

/// The permission answer data part for a pending `input`.
pub fn permission_part(input: &Value, decision: &str) -> Value {
    json!({ "data": {
        "schemaVersion": 1, "kind": "permission", "requestTaskId": input["requestTaskId"],
        "inputId": input["inputId"], "toolUseId": input["toolUseId"], "decision": decision
    }, "mediaType": "application/json" })
}

/// A response being read.
pub struct Stream {
    pub status: StatusCode,
    pub content_type: String,
    body: Incoming,
    buf: Vec<u8>,
}

impl Stream {
    /// The next `\r\n\r\n`-terminated SSE block, or `None` at EOF.
    pub async fn next_block(&mut self) -> Option<String> {
        loop {
            if let Some(at) = self.buf.windows(4).position(|w| w == b"\r\n\r\n") {
                let block: Vec<u8> = self.buf.drain(..at + 4).collect();
                return Some(String::from_utf8(block).unwrap());
            }
            match self.body.frame().await {
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        self.buf.extend_from_slice(&data);
                    }
                }
                _ => {
                    assert!(
                        self.buf.is_empty(),
                        "stream ended inside a block: {:?}",
                        String::from_utf8_lossy(&self.buf)
                    );
                    return None;
                }
            }
        }
    }

    /// The next `data:` payload, skipping comments.
    pub async fn next_data(&mut self) -> Option<Value> {
        loop {
            let block = self.next_block().await?;
            if let Some(data) = block.lines().find_map(|l| l.strip_prefix("data: ")) {
                return Some(serde_json::from_str(data).unwrap());
            }
        }
    }

    /// Every remaining `data:` payload.
    pub async fn frames(mut self) -> Vec<Value> {
        assert!(
            self.content_type.starts_with("text/event-stream"),
            "not SSE: {}",
            self.content_type
        );
        let mut frames = Vec::new();
        while let Some(frame) = self.next_data().await {
            frames.push(frame);
        }
        frames
    }

    /// The whole body as text.
    pub async fn text(self) -> String {
        let mut buf = self.buf;
        buf.extend_from_slice(&self.body.collect().await.unwrap().to_bytes());
        String::from_utf8(buf).unwrap()
    }

    pub async fn json(self) -> Value {
        let text = self.text().await;
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
    }
}

/// A capture from the committed fixtures.
pub fn fixture(name: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../core/tests/fixtures/a2a")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

fn keys(v: &Value) -> String {
    let mut keys: Vec<&str> = v
        .as_object()
        .map(|m| m.keys().map(String::as_str).collect())
        .unwrap_or_default();
    keys.sort_unstable();
    keys.join(",")
}

/// What a frame looks like without its values: the result kind, state,
/// message id suffix, timestamp presence, and the key sets of the metadata
/// (one level into each `iac_code` value, and into pipeline envelopes).
pub fn signature(frame: &Value) -> String {
    let result = &frame["result"];
    if let Some(task) = result.get("task") {
        return format!("task {} [{}]", task["status"]["state"], keys(task));
    }
    let Some(update) = result.get("statusUpdate") else {
        return format!("other [{}]", keys(result));
    };
    let status = &update["status"];
    let task_id = update["taskId"].as_str().unwrap_or("");
    let message = status.get("message").map(|m| {
        m["messageId"]
            .as_str()
            .unwrap_or("")
            .trim_start_matches(task_id)
            .to_owned()
    });
    let iac = &update["metadata"]["iac_code"];
    let mut parts = vec![format!(
        "{} msg={:?} ts={} iac=[{}]",
        status["state"],
        message,
        status.get("timestamp").is_some(),
        keys(iac)
    )];
    for (key, value) in iac.as_object().into_iter().flatten() {
        if key == "pipeline" {
            parts.push(format!(
                "pipeline {} {} {} env=[{}] data=[{}]",
                value["eventType"],
                value["status"],
                value["scope"],
                keys(value),
                keys(&value["data"])
            ));
        } else if key == "tool" {
            parts.push(format!("tool {} [{}]", value["status"], keys(value)));
        } else if value.is_object() {
            parts.push(format!("{key} [{}]", keys(value)));
        }
    }
    parts.join(" | ")
}

/// Signatures of a capture's events.
pub fn fixture_signatures(name: &str) -> Vec<String> {
    fixture(name)["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(signature)
        .collect()
}

/// The `metadata.iac_code` of a status-update frame.
pub fn iac(frame: &Value) -> &Value {
    &frame["result"]["statusUpdate"]["metadata"]["iac_code"]
}

pub fn state(frame: &Value) -> &str {
    let result = &frame["result"];
    let status = result
        .get("statusUpdate")
        .or_else(|| result.get("task"))
        .map(|u| &u["status"]["state"]);
    status.and_then(Value::as_str).unwrap_or("")
}
