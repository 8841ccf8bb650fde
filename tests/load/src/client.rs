//! One HTTP/1.1 connection per run: POST the request, read the SSE answer,
//! time every record. A connection per run keeps runs independent of each
//! other, and makes every run pay for a connection, as a client's first
//! run does. With `--keep-alive` a client sends its next run on the
//! connection its last run ended on, as a browser's `fetch` does once a
//! stream has ended.

use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};
use tokio::net::TcpStream;

use crate::scan::{Record, Scanner};
use crate::stats::Samples;

/// Which protocol the endpoint speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Protocol {
    /// AG-UI `POST /` (iac-agui, the Python adapter, any other).
    Agui,
    /// A2A `SendStreamingMessage` straight to a runtime: the baseline the
    /// adapter's added latency is measured against.
    A2a,
}

/// Where and how to send runs.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub(crate) authority: String,
    pub(crate) path: String,
    pub(crate) token: Option<String>,
    pub(crate) protocol: Protocol,
    pub(crate) cwd: String,
    pub(crate) scenario: String,
    /// Ticks at the start of each run whose latency is not counted.
    pub(crate) skip_ticks: u64,
    /// Distinguishes this invocation's threads from earlier ones.
    pub(crate) nonce: String,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ending {
    /// `RUN_FINISHED` (AG-UI) or a clean end of stream (A2A).
    Finished,
    /// `RUN_ERROR`, an A2A error frame or a failed task.
    RunError,
    /// A status other than 200.
    Status(u16),
    /// Connect, write or read failed.
    Transport(String),
    /// The AG-UI stream ended without a terminal event.
    Truncated,
}

/// Everything measured on one run.
#[derive(Debug)]
pub(crate) struct RunResult {
    /// POST sent → first data record received.
    pub(crate) first_event: Option<Duration>,
    /// Gaps between consecutive data records.
    pub(crate) gaps: Samples,
    /// Send time (in the runtime) → receipt, for `ticks` deltas.
    pub(crate) latencies: Samples,
    pub(crate) events: u64,
    pub(crate) ending: Ending,
    /// The run went on a connection kept from the client's last run.
    pub(crate) reused: bool,
}

/// An HTTP/1.1 connection, ready for a request.
pub(crate) type Connection = hyper::client::conn::http1::SendRequest<Full<Bytes>>;

/// An open stream whose response head arrived.
pub(crate) struct Opened {
    pub(crate) sent: Instant,
    body: Incoming,
    /// The stream's connection, for a next request once the body ended.
    connection: Connection,
    reused: bool,
}

impl Target {
    /// Parses `http://host:port/path`; https is not supported (loopback
    /// benchmarks only).
    pub(crate) fn parse_url(url: &str) -> Result<(String, String), String> {
        let rest = url
            .strip_prefix("http://")
            .ok_or_else(|| format!("{url}: only http:// URLs are supported"))?;
        let (authority, path) = match rest.find('/') {
            Some(at) => (&rest[..at], &rest[at..]),
            None => (rest, "/"),
        };
        if authority.is_empty() {
            return Err(format!("{url}: no host"));
        }
        Ok((authority.to_owned(), path.to_owned()))
    }

    /// The request body of run number `i`, a turn on thread number `thread`.
    pub(crate) fn body(&self, i: usize, thread: usize) -> Bytes {
        let thread = format!("load-{}-{thread}", self.nonce);
        let text = format!("scenario:{}", self.scenario);
        let value = match self.protocol {
            Protocol::Agui => json!({
                "threadId": thread,
                "runId": format!("run-{i}"),
                "state": {},
                "tools": [],
                "context": [],
                "forwardedProps": { "iacCode": {
                    "schemaVersion": 1,
                    "cwd": self.cwd,
                    "rosInvocationId": format!("ros-{}", self.nonce),
                }},
                "messages": [{ "id": format!("m-{i}"), "role": "user", "content": text }],
            }),
            Protocol::A2a => json!({
                "jsonrpc": "2.0",
                "id": format!("load-{i}"),
                "method": "SendStreamingMessage",
                "params": {
                    "message": {
                        "messageId": format!("m-{}-{i}", self.nonce),
                        "role": "ROLE_USER",
                        "parts": [{ "text": text }],
                        "contextId": thread,
                        "metadata": { "iac_code": { "cwd": self.cwd, "preferredLanguage": "en" } },
                    },
                    "configuration": { "acceptedOutputModes": ["text/plain"] },
                },
            }),
        };
        Bytes::from(value.to_string())
    }

    /// Sends run `i` on thread `thread`, on `kept` if that connection is
    /// still open, else on a new one; returns once the response head
    /// arrived.
    pub(crate) async fn open(
        &self,
        i: usize,
        thread: usize,
        kept: Option<Connection>,
    ) -> Result<Opened, Ending> {
        let transport = |e: &dyn std::fmt::Display| Ending::Transport(e.to_string());
        let kept = match kept {
            Some(mut sender) => sender.ready().await.is_ok().then_some(sender),
            None => None,
        };
        let reused = kept.is_some();
        let mut sender = match kept {
            Some(sender) => sender,
            None => {
                let stream = TcpStream::connect(&self.authority)
                    .await
                    .map_err(|e| transport(&e))?;
                let _ = stream.set_nodelay(true);
                let (sender, connection) =
                    hyper::client::conn::http1::handshake(TokioIo::new(stream))
                        .await
                        .map_err(|e| transport(&e))?;
                tokio::spawn(connection);
                sender
            }
        };
        let mut request = http::Request::post(&self.path)
            .header(http::header::HOST, &self.authority)
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(http::header::ACCEPT, "text/event-stream");
        if let Some(token) = &self.token {
            request = request.header(http::header::AUTHORIZATION, format!("Bearer {token}"));
        }
        if self.protocol == Protocol::A2a {
            request = request.header("A2A-Version", "1.0");
        }
        let request = request
            .body(Full::new(self.body(i, thread)))
            .map_err(|e| transport(&e))?;
        let sent = Instant::now();
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| transport(&e))?;
        if response.status() != http::StatusCode::OK {
            return Err(Ending::Status(response.status().as_u16()));
        }
        Ok(Opened {
            sent,
            body: response.into_body(),
            connection: sender,
            reused,
        })
    }

    /// Runs number `i`, on thread `thread`, to its end. With `kept`
    /// (`--keep-alive`), the run goes on the connection the client's last
    /// run left there, if it is still open, and leaves its own there.
    pub(crate) async fn run(
        &self,
        i: usize,
        thread: usize,
        mut kept: Option<&mut Option<Connection>>,
    ) -> RunResult {
        let previous = kept.as_deref_mut().and_then(Option::take);
        match self.open(i, thread, previous).await {
            Ok(opened) => {
                let (result, connection) = opened
                    .read_to_end(self.protocol, self.skip_ticks, kept.is_some())
                    .await;
                if let Some(kept) = kept {
                    *kept = connection;
                }
                result
            }
            Err(ending) => RunResult {
                first_event: None,
                gaps: Samples::default(),
                latencies: Samples::default(),
                events: 0,
                ending,
                reused: false,
            },
        }
    }
}

impl Opened {
    /// Reads the stream to its end, timing every record (and every tick
    /// from the `skip_ticks`-th on). With `keep`, the body is read to its
    /// very end after the terminal record, and the connection is handed
    /// back for the next request.
    pub(crate) async fn read_to_end(
        mut self,
        protocol: Protocol,
        skip_ticks: u64,
        keep: bool,
    ) -> (RunResult, Option<Connection>) {
        let mut scanner = Scanner::default();
        let mut result = RunResult {
            first_event: None,
            gaps: Samples::default(),
            latencies: Samples::default(),
            events: 0,
            ending: Ending::Truncated,
            reused: self.reused,
        };
        let mut last: Option<Instant> = None;
        let mut terminal = None;
        while terminal.is_none() {
            let frame = match self.body.frame().await {
                None => break,
                Some(Err(e)) => {
                    result.ending = Ending::Transport(e.to_string());
                    return (result, None);
                }
                Some(Ok(frame)) => frame,
            };
            let Ok(data) = frame.into_data() else {
                continue;
            };
            let now = Instant::now();
            let wall_us = unix_micros();
            scanner.feed(&data, |record, tick| {
                result.events += 1;
                if let Some((_, sent)) = tick.filter(|(index, _)| *index >= skip_ticks) {
                    let us = wall_us.saturating_sub(sent);
                    result.latencies.push(Duration::from_micros(us));
                }
                match last {
                    None => result.first_event = Some(now - self.sent),
                    Some(previous) => result.gaps.push(now - previous),
                }
                last = Some(now);
                if record != Record::Event && terminal.is_none() {
                    terminal = Some(record);
                }
            });
        }
        result.ending = match (terminal, protocol) {
            (Some(Record::Error), _) => Ending::RunError,
            (Some(_), _) | (None, Protocol::A2a) => Ending::Finished,
            (None, Protocol::Agui) => Ending::Truncated,
        };
        if !keep || terminal.is_none() {
            return (result, None);
        }
        // The connection carries the next request once the body ended.
        while let Some(frame) = self.body.frame().await {
            if frame.is_err() {
                return (result, None);
            }
        }
        (result, Some(self.connection))
    }

    /// Reads until the first data record (for idle streams), returning the
    /// time to it; the stream stays open for [`Opened::drain`].
    pub(crate) async fn first_event(&mut self) -> Result<Duration, Ending> {
        let mut scanner = Scanner::default();
        loop {
            let frame = match self.body.frame().await {
                None => return Err(Ending::Truncated),
                Some(Err(e)) => return Err(Ending::Transport(e.to_string())),
                Some(Ok(frame)) => frame,
            };
            let Ok(data) = frame.into_data() else {
                continue;
            };
            let mut seen = false;
            scanner.feed(&data, |_, _| seen = true);
            if seen {
                return Ok(self.sent.elapsed());
            }
        }
    }

    /// Keeps reading (heartbeats) until the stream ends or `stop` fires;
    /// `false` when the stream ended first.
    pub(crate) async fn drain(mut self, mut stop: tokio::sync::watch::Receiver<bool>) -> bool {
        loop {
            tokio::select! {
                frame = self.body.frame() => if !matches!(frame, Some(Ok(_))) { return false },
                _ = stop.changed() => return true,
            }
        }
    }
}

/// `Value` of a JSON body, for the health probe.
pub(crate) async fn get_json(authority: &str, path: &str) -> Result<Value, String> {
    let stream = TcpStream::connect(authority)
        .await
        .map_err(|e| e.to_string())?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| e.to_string())?;
    tokio::spawn(connection);
    let request = http::Request::get(path)
        .header(http::header::HOST, authority)
        .body(Full::new(Bytes::new()))
        .map_err(|e| e.to_string())?;
    let response = sender
        .send_request(request)
        .await
        .map_err(|e| e.to_string())?;
    let status = response.status();
    let body = response
        .into_body()
        .collect()
        .await
        .map_err(|e| e.to_string())?
        .to_bytes();
    if !status.is_success() {
        return Err(format!("status {status}"));
    }
    serde_json::from_slice(&body).map_err(|e| e.to_string())
}

/// Wall-clock Unix microseconds (the scripted runtime stamps `ticks` deltas
/// with the same clock).
fn unix_micros() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}
