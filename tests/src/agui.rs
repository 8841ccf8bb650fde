//! An end-to-end harness: the scripted A2A runtime and `iac-agui serve`
//! started as real processes, AG-UI requests over loopback, and every SSE
//! stream received checked three ways: LF framing ([`crate::sse::parse`]),
//! the core's strict verifier, and the official TypeScript clients (in one
//! batch per test, [`Harness::check_clients`]).

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Mutex;

use iac_agui_core::verifier::Verifier;
use serde_json::{json, Value};

use crate::clients::{check_streams, rejection};
use crate::http::{Request, Response, Streaming};
use crate::procs::{RuntimeOptions, ScriptedRuntime, Server, ServerOptions};
use crate::sse::{parse, Received};

/// The `rosInvocationId` the harness sends unless told otherwise.
pub const ROS: &str = "ros-e2e-1";

/// A runtime, a server, and the streams received so far.
#[derive(Debug)]
pub struct Harness {
    /// The scripted A2A runtime.
    pub runtime: ScriptedRuntime,
    /// `iac-agui serve --a2a-url <runtime>`.
    pub server: Server,
    streams: Mutex<Vec<(String, String)>>,
    checked: Mutex<bool>,
}

impl Harness {
    /// A runtime and a server with default options.
    pub fn start() -> Harness {
        Harness::with(RuntimeOptions::default(), ServerOptions::default())
    }

    /// A runtime and a server; `server.a2a_url` is filled in.
    pub fn with(runtime_options: RuntimeOptions, mut server: ServerOptions) -> Harness {
        let runtime = ScriptedRuntime::start(&runtime_options);
        server.a2a_url = Some(runtime.url.clone());
        server.a2a_token = runtime_options.token.clone();
        let server = Server::start(server);
        Harness {
            runtime,
            server,
            streams: Mutex::new(Vec::new()),
            checked: Mutex::new(true),
        }
    }

    /// The server's address.
    pub fn addr(&self) -> SocketAddr {
        self.server.addr
    }

    /// A new-run body whose user message says `text`.
    pub fn body(&self, thread: &str, run: &str, text: &str) -> Value {
        json!({
            "threadId": thread,
            "runId": run,
            "state": {},
            "messages": [{"id": format!("msg-{run}"), "role": "user", "content": text}],
            "tools": [],
            "context": [],
            "forwardedProps": {"iacCode": {
                "schemaVersion": 1,
                "rosInvocationId": ROS,
                "cwd": path_text(&self.server.workspace()),
            }},
        })
    }

    /// A resume body answering interrupts with `entries`.
    pub fn resume_body(&self, thread: &str, run: &str, entries: Value) -> Value {
        let mut body = self.body(thread, run, "");
        body["messages"] = json!([]);
        body["resume"] = entries;
        body
    }

    /// The request the official client would send (plus the bearer token
    /// when the server requires one).
    pub fn request(&self, body: &Value) -> Request {
        let request = Request::agui("/", body);
        match &self.server_token() {
            Some(token) => request.bearer(token),
            None => request,
        }
    }

    /// Sends a body and returns the raw response (for admission errors).
    pub fn post(&self, body: &Value) -> Response {
        self.request(body).send(self.addr())
    }

    /// Sends a body, expects a 200 SSE stream, reads it to the end and
    /// checks it (framing, strict verifier; the clients at the end).
    ///
    /// # Panics
    /// On any other status or a malformed stream.
    pub fn run(&self, body: &Value) -> Received {
        let mut streaming = self.open(body);
        let text = String::from_utf8(streaming.read_to_end()).expect("UTF-8 stream");
        self.accept(body, &text)
    }

    /// Sends a body and returns the open stream (200 asserted).
    pub fn open(&self, body: &Value) -> Streaming {
        let streaming = self.request(body).open(self.addr());
        if streaming.status != 200 {
            let mut streaming = streaming;
            let status = streaming.status;
            let rest = String::from_utf8_lossy(&streaming.read_to_end()).into_owned();
            panic!(
                "expected 200, got {status}: {rest}\nserver log:\n{}",
                self.server.log()
            );
        }
        assert_eq!(streaming.header("cache-control"), Some("no-cache"));
        assert_eq!(streaming.header("x-accel-buffering"), Some("no"));
        assert_eq!(
            streaming
                .header("content-type")
                .map(|v| v.split(';').next().unwrap_or("").trim()),
            Some("text/event-stream")
        );
        streaming
    }

    /// Checks a complete stream received for `body`: LF framing, the core
    /// verifier with the request's ids, and a terminal event; then queues it
    /// for the client check.
    pub fn accept(&self, body: &Value, text: &str) -> Received {
        let received = parse(text);
        assert!(
            received.problems.is_empty(),
            "framing problems {:?} in\n{text}",
            received.problems
        );
        let (thread, run) = (
            body["threadId"].as_str().unwrap_or(""),
            body["runId"].as_str().unwrap_or(""),
        );
        let mut verifier = Verifier::expecting(thread, run);
        for event in &received.events {
            if let Err(v) = verifier.feed_json(event) {
                panic!("verifier: {v} in\n{text}");
            }
        }
        if let Err(v) = verifier.finish() {
            panic!("verifier at the end: {v} in\n{text}");
        }
        self.record(&format!("{thread}/{run}"), text);
        received
    }

    /// Queues a stream for [`Harness::check_clients`].
    pub fn record(&self, name: &str, text: &str) {
        self.streams
            .lock()
            .expect("streams")
            .push((name.to_owned(), text.to_owned()));
        *self.checked.lock().expect("checked") = false;
    }

    /// Runs every stream received so far through both official clients;
    /// each must be accepted in full (see [`crate::clients::rejection`]).
    ///
    /// # Panics
    /// When a client rejects a stream.
    pub fn check_clients(&self) {
        let streams = std::mem::take(&mut *self.streams.lock().expect("streams"));
        *self.checked.lock().expect("checked") = true;
        if streams.is_empty() {
            return;
        }
        let texts: std::collections::BTreeMap<String, String> = streams.iter().cloned().collect();
        let failures: Vec<String> = check_streams(&streams)
            .into_iter()
            .filter_map(|(name, verdicts)| {
                rejection(&verdicts).map(|why| format!("{name}: {why}\n{}", texts[&name]))
            })
            .collect();
        assert!(
            failures.is_empty(),
            "AG-UI clients rejected:\n{}",
            failures.join("\n")
        );
    }

    /// A JSON-RPC call straight to the scripted runtime (to observe it).
    pub fn runtime_rpc(&self, method: &str, params: Value) -> Value {
        let url = self.runtime.url.trim_start_matches("http://");
        let addr: SocketAddr = url.trim_end_matches('/').parse().expect("runtime address");
        let body = json!({"jsonrpc": "2.0", "id": "e2e", "method": method, "params": params});
        let mut request = Request::agui("/", &body).header("A2A-Version", "1.0");
        if let Some(token) = &self.runtime_token() {
            request = request.bearer(token);
        }
        request.send(addr).json()
    }

    fn server_token(&self) -> Option<String> {
        self.server_options().auth_token.clone()
    }

    fn runtime_token(&self) -> Option<String> {
        self.server_options().a2a_token.clone()
    }

    fn server_options(&self) -> &ServerOptions {
        self.server.options()
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        let unchecked = !*self.checked.lock().unwrap_or_else(|e| e.into_inner());
        if unchecked && !std::thread::panicking() {
            panic!("streams were received but never run through the AG-UI clients (call check_clients)");
        }
    }
}

/// The interrupts of a stream's final `RUN_FINISHED`, or none.
pub fn interrupts(received: &Received) -> Vec<Value> {
    received
        .last()
        .filter(|e| e["type"] == "RUN_FINISHED" && e["outcome"]["type"] == "interrupt")
        .and_then(|e| e["outcome"]["interrupts"].as_array().cloned())
        .unwrap_or_default()
}

/// `"RUN_FINISHED:success"`, `"RUN_FINISHED:interrupt"` or
/// `"RUN_ERROR:<code>"` for the last event.
pub fn ending(received: &Received) -> String {
    match received.last() {
        Some(e) if e["type"] == "RUN_FINISHED" => {
            format!(
                "RUN_FINISHED:{}",
                e["outcome"]["type"].as_str().unwrap_or("success")
            )
        }
        Some(e) if e["type"] == "RUN_ERROR" => {
            format!("RUN_ERROR:{}", e["code"].as_str().unwrap_or("?"))
        }
        Some(e) => format!("unterminated after {}", e["type"]),
        None => "empty".to_owned(),
    }
}

/// The value of the run's `iac-code.session.v1` CUSTOM event.
pub fn session(received: &Received) -> Option<Value> {
    received
        .events
        .iter()
        .find(|e| e["type"] == "CUSTOM" && e["name"] == "iac-code.session.v1")
        .map(|e| e["value"].clone())
}

/// A resume entry.
pub fn resolved(interrupt_id: &Value, payload: Value) -> Value {
    json!({"interruptId": interrupt_id, "status": "resolved", "payload": payload})
}

fn path_text(path: &Path) -> String {
    path.to_str().expect("UTF-8 path").to_owned()
}
