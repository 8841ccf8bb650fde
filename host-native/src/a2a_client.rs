//! The HTTP client of the local A2A runtime (A2A-WIRE.md §1–2, §6).
//!
//! JSON-RPC calls carry `A2A-Version: 1.0` and the bearer token. Streaming
//! calls are read with the core's SSE parser, which accepts CRLF framing,
//! `: ping` comments and `event: error` frames; a streaming call refused
//! before its first event comes back as plain JSON and is surfaced as an
//! error, never as an empty stream. Every failure is a typed [`A2aError`] so
//! the driver can hand the core a precise input.
//!
//! Unary calls reuse connections through hyper-util's pool. A streamed call
//! gets a connection of its own, read without hyper ([`stream_conn`]), so an
//! idle stream holds no buffer. Dropping an [`A2aStream`] closes its
//! connection at once, unless the response was read to its end: then the
//! connection carries a later streamed call.

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{header, Method as HttpMethod, Request, StatusCode, Uri};
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use iac_agui_core::a2a::{JsonRpcError, JsonRpcRequest, JsonRpcResponse, Method, StreamFrame};
use iac_agui_core::sse::{SseItem, SseParser};
use serde_json::Value;
use tokio::time::{Instant, Sleep};

use crate::secret::Secret;
use crate::stream_conn::{self, Conn, ConnError, Read};

/// Largest unary answer read (a GetTask with 100 history entries, or a
/// pipeline snapshot, stays far below).
pub const MAX_UNARY_BYTES: usize = 32 * 1024 * 1024;

/// Most idle connections of unary calls kept for reuse (a burst of
/// `CancelTask`s after many clients left would otherwise keep a descriptor
/// each for the pool's idle timeout).
pub(crate) const UNARY_POOL_MAX: usize = 32;

/// Why an A2A call failed.
#[derive(Debug, Clone, PartialEq)]
pub enum A2aError {
    /// No answer (or no next stream chunk) in time.
    Timeout,
    /// The connection could not be made.
    Refused,
    /// The connection broke mid-call.
    Transport,
    /// An HTTP status other than the expected one.
    Status(u16),
    /// The answer was not the JSON (or SSE) it should be.
    BadJson,
    /// A JSON-RPC error object, as sent by the runtime.
    Rpc(JsonRpcError),
}

impl std::fmt::Display for A2aError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            A2aError::Timeout => f.write_str("A2A call timed out"),
            A2aError::Refused => f.write_str("A2A connection refused"),
            A2aError::Transport => f.write_str("A2A connection broke"),
            A2aError::Status(s) => write!(f, "A2A answered HTTP {s}"),
            A2aError::BadJson => f.write_str("A2A answer is not valid JSON-RPC"),
            A2aError::Rpc(e) => write!(f, "A2A JSON-RPC error {}", e.code),
        }
    }
}

impl std::error::Error for A2aError {}

/// Outcome of `POST /iac-code/session/ensure-restored` (A2A-WIRE §6.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RestoreOutcome {
    /// 200 `current` or `restored`.
    Ready,
    /// 404: the session is gone.
    NotFound,
    /// 409 `SESSION_BACKUP_NOT_READY` (retryable).
    BackupNotReady,
}

/// Client timeouts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct A2aTimeouts {
    /// TCP connect.
    pub connect: Duration,
    /// A unary call, from sending to the full answer; for a stream, until
    /// its response headers.
    pub request: Duration,
    /// Longest silence inside a stream (the runtime pings every 15 s).
    pub stream_idle: Duration,
}

impl Default for A2aTimeouts {
    fn default() -> Self {
        A2aTimeouts {
            connect: Duration::from_secs(5),
            // A unary SendMessage that answers a side-band permission may
            // return only after the turn it resumed has finished (A2A-WIRE
            // §2.3); the reference allows an hour too.
            request: Duration::from_secs(3600),
            stream_idle: Duration::from_secs(300),
        }
    }
}

/// A client bound to one runtime base URL; clones share it (a clone is a
/// pointer, so every task that calls A2A can hold one cheaply).
#[derive(Clone)]
pub struct A2aClient {
    inner: Arc<Inner>,
}

struct Inner {
    base: String,
    token: Option<Secret>,
    http: Client<HttpConnector, Full<Bytes>>,
    /// Finished connections of streamed calls, for the next ones.
    streams: Arc<stream_conn::Pool>,
    timeouts: A2aTimeouts,
}

impl std::fmt::Debug for A2aClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("A2aClient")
            .field("base", &self.inner.base)
            .field("token", &self.inner.token)
            .finish_non_exhaustive()
    }
}

/// An open streamed call, on a connection of its own
/// ([`stream_conn`]). Dropping it before the end closes the connection.
#[derive(Debug)]
pub struct A2aStream {
    conn: Conn,
    parser: SseParser,
    idle: Duration,
    /// Fires at the latest `idle` after the last read; re-armed lazily
    /// (not on every read, which would cost a timer update per event).
    idle_timer: Pin<Box<Sleep>>,
    last_read: Instant,
    done: bool,
}

impl A2aClient {
    /// A client for `base` (`http://host:port/`, trailing slash optional).
    pub fn new(base: &str, token: Option<Secret>, timeouts: A2aTimeouts) -> Self {
        let mut connector = HttpConnector::new();
        connector.set_connect_timeout(Some(timeouts.connect));
        connector.set_nodelay(true);
        let http = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(Duration::from_secs(30))
            .pool_max_idle_per_host(UNARY_POOL_MAX)
            .build(connector);
        A2aClient {
            inner: Arc::new(Inner {
                base: base.trim_end_matches('/').to_owned(),
                token,
                http,
                streams: Arc::default(),
                timeouts,
            }),
        }
    }

    /// The base URL, with a trailing slash.
    pub fn base_url(&self) -> String {
        format!("{}/", self.inner.base)
    }

    /// A unary JSON-RPC call; returns its `result`.
    ///
    /// # Errors
    /// Transport failures, a non-200 status, a body that is not JSON-RPC, or
    /// the runtime's JSON-RPC error.
    pub async fn call(&self, method: Method, params: Value) -> Result<Value, A2aError> {
        let answer = self.call_raw(&rpc_request(method, params)).await?;
        let answer: JsonRpcResponse =
            serde_json::from_value(answer).map_err(|_| A2aError::BadJson)?;
        match (answer.result, answer.error) {
            (_, Some(error)) => Err(A2aError::Rpc(error)),
            (Some(result), None) => Ok(result),
            (None, None) => Err(A2aError::BadJson),
        }
    }

    /// A unary JSON-RPC call; returns the whole response object (with
    /// `result` or `error`), as the core's machine wants it.
    ///
    /// # Errors
    /// Transport failures, a non-200 status, a body that is not a JSON object.
    pub async fn call_raw(&self, request: &JsonRpcRequest) -> Result<Value, A2aError> {
        let body = serde_json::to_vec(request).map_err(|_| A2aError::BadJson)?;
        let work = async {
            let response = self.send(HttpMethod::POST, "/", Some(body)).await?;
            expect_ok(response.status())?;
            let body = read_limited(response.into_body()).await?;
            match serde_json::from_slice::<Value>(&body) {
                Ok(value) if value.is_object() => Ok(value),
                _ => Err(A2aError::BadJson),
            }
        };
        tokio::time::timeout(self.inner.timeouts.request, work)
            .await
            .map_err(|_| A2aError::Timeout)?
    }

    /// An iac-code extension endpoint: `(status, JSON body or null)`.
    ///
    /// # Errors
    /// Transport failures and timeouts (any status is an answer).
    pub async fn http_json(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
    ) -> Result<(u16, Value), A2aError> {
        let method = if method.eq_ignore_ascii_case("POST") {
            HttpMethod::POST
        } else {
            HttpMethod::GET
        };
        let body = match body {
            Some(body) => Some(serde_json::to_vec(body).map_err(|_| A2aError::BadJson)?),
            None => None,
        };
        let work = async {
            let response = self.send(method, path, body).await?;
            let status = response.status().as_u16();
            let bytes = read_limited(response.into_body()).await?;
            Ok((
                status,
                serde_json::from_slice(&bytes).unwrap_or(Value::Null),
            ))
        };
        tokio::time::timeout(self.inner.timeouts.request, work)
            .await
            .map_err(|_| A2aError::Timeout)?
    }

    /// Opens a streaming JSON-RPC call (`SendStreamingMessage`,
    /// `SubscribeToTask`).
    ///
    /// # Errors
    /// Transport failures, a non-200 status, and a call refused before its
    /// first event (a plain JSON-RPC error answer) as [`A2aError::Rpc`].
    pub async fn stream(&self, method: Method, params: Value) -> Result<A2aStream, A2aError> {
        self.stream_raw(&rpc_request(method, params)).await
    }

    /// [`A2aClient::stream`] for a request built by the core.
    ///
    /// # Errors
    /// As [`A2aClient::stream`].
    pub async fn stream_raw(&self, request: &JsonRpcRequest) -> Result<A2aStream, A2aError> {
        let request = serde_json::to_vec(request).map_err(|_| A2aError::BadJson)?;
        let bearer = self
            .inner
            .token
            .as_ref()
            .map(|token| format!("Bearer {}", token.expose()));
        let mut headers = vec![
            ("A2A-Version", "1.0"),
            ("Accept", "*/*"),
            ("Content-Type", "application/json"),
        ];
        if let Some(bearer) = &bearer {
            headers.push(("Authorization", bearer));
        }
        let work = async {
            let (conn, head) = stream_conn::post(
                &self.inner.streams,
                &self.inner.base,
                "/",
                self.inner.timeouts.connect,
                &headers,
                &request,
            )
            .await
            .map_err(conn_error)?;
            expect_ok(StatusCode::from_u16(head.status).map_err(|_| A2aError::Transport)?)?;
            let is_sse = head.content_type.as_deref().is_some_and(|v| {
                v.trim_start()
                    .to_ascii_lowercase()
                    .starts_with("text/event-stream")
            });
            if is_sse {
                let now = Instant::now();
                return Ok(A2aStream {
                    conn,
                    parser: SseParser::new(),
                    idle: self.inner.timeouts.stream_idle,
                    idle_timer: Box::pin(tokio::time::sleep_until(
                        now + self.inner.timeouts.stream_idle,
                    )),
                    last_read: now,
                    done: false,
                });
            }
            // Refused before the first event: one JSON-RPC object, no SSE.
            let body = conn
                .read_to_end(MAX_UNARY_BYTES)
                .await
                .map_err(conn_error)?;
            let answer: JsonRpcResponse =
                serde_json::from_slice(&body).map_err(|_| A2aError::BadJson)?;
            Err(answer.error.map_or(A2aError::BadJson, A2aError::Rpc))
        };
        tokio::time::timeout(self.inner.timeouts.request, work)
            .await
            .map_err(|_| A2aError::Timeout)?
    }

    /// `GET /iac-code/pipeline/state?taskId&afterSequence`; `None` on 404
    /// (normal-mode or unknown task).
    ///
    /// # Errors
    /// Transport failures, other statuses, a body that is not a JSON object.
    pub async fn pipeline_state(
        &self,
        task_id: &str,
        after_sequence: u64,
    ) -> Result<Option<Value>, A2aError> {
        let path = format!(
            "/iac-code/pipeline/state?taskId={}&afterSequence={after_sequence}",
            percent_encode(task_id)
        );
        let work = async {
            let response = self.send(HttpMethod::GET, &path, None).await?;
            if response.status() == StatusCode::NOT_FOUND {
                return Ok(None);
            }
            expect_ok(response.status())?;
            let body = read_limited(response.into_body()).await?;
            match serde_json::from_slice::<Value>(&body) {
                Ok(value) if value.is_object() => Ok(Some(value)),
                _ => Err(A2aError::BadJson),
            }
        };
        tokio::time::timeout(self.inner.timeouts.request, work)
            .await
            .map_err(|_| A2aError::Timeout)?
    }

    /// `POST /iac-code/session/ensure-restored`.
    ///
    /// # Errors
    /// Transport failures, statuses other than 200/404/409-not-ready, a 200
    /// whose `status` is not `current`/`restored`.
    pub async fn ensure_restored(
        &self,
        cwd: &str,
        session_id: &str,
        task_id: Option<&str>,
    ) -> Result<RestoreOutcome, A2aError> {
        let mut body = serde_json::json!({ "cwd": cwd, "sessionId": session_id });
        if let Some(task_id) = task_id {
            body["taskId"] = Value::from(task_id);
        }
        let work = async {
            let bytes = serde_json::to_vec(&body).map_err(|_| A2aError::BadJson)?;
            let response = self
                .send(
                    HttpMethod::POST,
                    "/iac-code/session/ensure-restored",
                    Some(bytes),
                )
                .await?;
            let status = response.status();
            let body = read_limited(response.into_body()).await?;
            let value: Option<Value> = serde_json::from_slice(&body).ok();
            match status {
                StatusCode::OK => match value.as_ref().and_then(|v| v.get("status")?.as_str()) {
                    Some("current" | "restored") => Ok(RestoreOutcome::Ready),
                    _ => Err(A2aError::BadJson),
                },
                StatusCode::NOT_FOUND => Ok(RestoreOutcome::NotFound),
                StatusCode::CONFLICT
                    if value
                        .as_ref()
                        .and_then(|v| v.pointer("/error/code")?.as_str())
                        == Some("SESSION_BACKUP_NOT_READY") =>
                {
                    Ok(RestoreOutcome::BackupNotReady)
                }
                other => Err(A2aError::Status(other.as_u16())),
            }
        };
        tokio::time::timeout(self.inner.timeouts.request, work)
            .await
            .map_err(|_| A2aError::Timeout)?
    }

    /// `GET /health` with the token; `Ok` on 200.
    ///
    /// # Errors
    /// Any failure, including a non-200 status.
    pub async fn health(&self, timeout: Duration) -> Result<(), A2aError> {
        let work = async {
            let response = self.send(HttpMethod::GET, "/health", None).await?;
            expect_ok(response.status())
        };
        tokio::time::timeout(timeout, work)
            .await
            .map_err(|_| A2aError::Timeout)?
    }

    async fn send(
        &self,
        method: HttpMethod,
        path: &str,
        body: Option<Vec<u8>>,
    ) -> Result<http::Response<Incoming>, A2aError> {
        let uri: Uri = format!("{}{path}", self.inner.base)
            .parse()
            .map_err(|_| A2aError::Refused)?;
        let mut request = Request::builder()
            .method(method)
            .uri(uri)
            .header("A2A-Version", "1.0")
            .header(header::ACCEPT, "*/*");
        if body.is_some() {
            request = request.header(header::CONTENT_TYPE, "application/json");
        }
        if let Some(token) = &self.inner.token {
            request = request.header(header::AUTHORIZATION, format!("Bearer {}", token.expose()));
        }
        let request = request
            .body(Full::new(Bytes::from(body.unwrap_or_default())))
            .map_err(|_| A2aError::Refused)?;
        self.inner.http.request(request).await.map_err(|e| {
            if e.is_connect() {
                A2aError::Refused
            } else {
                A2aError::Transport
            }
        })
    }
}

impl A2aStream {
    /// The next frame, parsed once (an `event: error` frame, or any frame
    /// with `error`, is [`StreamFrame::Error`]); `None` when the runtime
    /// closed the stream cleanly.
    ///
    /// # Errors
    /// A frame that is not a JSON object ([`A2aError::BadJson`]), a broken
    /// connection, or a silence longer than the stream idle timeout. After
    /// an error the stream is finished.
    pub async fn next(&mut self) -> Option<Result<StreamFrame, A2aError>> {
        loop {
            if let Some(frame) = self.next_buffered() {
                return Some(frame);
            }
            if self.done {
                return None;
            }
            let ready = tokio::select! {
                biased;
                ready = self.conn.readable() => ready,
                () = self.idle_timer.as_mut() => {
                    let due = self.last_read + self.idle;
                    if Instant::now() >= due {
                        return self.fail(A2aError::Timeout);
                    }
                    self.idle_timer.as_mut().reset(due);
                    continue;
                }
            };
            if let Err(error) = ready {
                return self.fail(conn_error(error));
            }
            self.last_read = Instant::now();
            let (parser, mut too_large) = (&mut self.parser, false);
            let read = self.conn.read(&mut |data: &[u8]| {
                too_large = too_large || parser.feed(data).is_err();
            });
            if too_large {
                return self.fail(A2aError::BadJson);
            }
            match read {
                Ok(None | Some(Read::Data)) => {}
                Ok(Some(Read::End)) => {
                    self.done = true;
                    // A final event without its blank line still counts.
                    if self.parser.has_partial() && self.parser.feed(b"\n\n").is_err() {
                        return self.fail(A2aError::BadJson);
                    }
                }
                Err(error) => return self.fail(conn_error(error)),
            }
        }
    }

    /// The next frame already read off the connection, if any; never waits
    /// (a relay takes a burst of frames in one go). Errors as
    /// [`A2aStream::next`].
    pub fn next_buffered(&mut self) -> Option<Result<StreamFrame, A2aError>> {
        while let Some(item) = self.parser.poll() {
            let SseItem::Event(event) = item else {
                continue;
            };
            return Some(match StreamFrame::parse_owned(event.data) {
                Some(frame) => Ok(frame),
                None => {
                    self.done = true;
                    Err(A2aError::BadJson)
                }
            });
        }
        None
    }

    fn fail<T>(&mut self, error: A2aError) -> Option<Result<T, A2aError>> {
        self.done = true;
        self.parser = SseParser::new();
        Some(Err(error))
    }
}

fn rpc_request(method: Method, params: Value) -> JsonRpcRequest {
    let mut id = [0u8; 16];
    // A failed random source only weakens request-id uniqueness, which the
    // runtime merely echoes.
    let _ = getrandom::fill(&mut id);
    JsonRpcRequest::new(iac_agui_core::json::hex(&id), method, params)
}

fn conn_error(error: ConnError) -> A2aError {
    match error {
        ConnError::Refused => A2aError::Refused,
        ConnError::Broken => A2aError::Transport,
    }
}

fn expect_ok(status: StatusCode) -> Result<(), A2aError> {
    if status == StatusCode::OK {
        Ok(())
    } else {
        Err(A2aError::Status(status.as_u16()))
    }
}

async fn read_limited(body: Incoming) -> Result<Bytes, A2aError> {
    let limited = http_body_util::Limited::new(body, MAX_UNARY_BYTES);
    match limited.collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => Err(A2aError::BadJson),
        Err(_) => Err(A2aError::Transport),
    }
}

fn percent_encode(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    for b in raw.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
