//! The listening socket: HTTP/1.1 with keep-alive and pipelining, a bound on
//! the time to send request headers, an idle timeout for connections that
//! sit between requests, and graceful shutdown.
//!
//! The connection code is this project's own, not hyper's: an SSE stream
//! can stay open for an hour, and hyper keeps an 8 KiB read buffer, an
//! 8 KiB header buffer and a dispatch task per connection for all that
//! time. Here a connection waits for readiness holding no buffer
//! ([`crate::http1`]), a response's events go from the run's writer to the
//! socket with no task in between, and the client's end of the connection
//! is watched while a response streams, so a gone client is noticed at
//! once, even during silence.
//!
//! Idle here means "no request in progress": a connection streaming a long
//! silent SSE response is busy, not idle (its heartbeats keep it alive).

use std::future::Future;
use std::io::Write as _;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{header, HeaderMap, HeaderName, HeaderValue, Method, Request, Response, StatusCode};
use http_body::{Body, Frame, SizeHint};
use http_body_util::BodyExt as _;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::time::Instant;

use crate::app::App;
use crate::http1::{self, BodyDecoder, Got};
use crate::loops::Home;
use crate::router::{Answer, Deferred, ResponseBody};

/// Largest request head accepted (431 beyond).
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// Most request header lines accepted (431 beyond).
const MAX_HEADERS: usize = 100;
/// Bytes of a next, pipelined request kept while a response streams.
const MAX_PIPELINED_BYTES: usize = 64 * 1024;
/// How long a connection closed with an unread request body keeps reading
/// (and dropping) it, so the client sees the response, not a reset.
const LINGER: Duration = Duration::from_secs(2);

/// Connection timeouts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnTimeouts {
    /// Longest time to send a request's headers.
    pub header_read: Duration,
    /// Longest time a keep-alive connection may sit with no request.
    pub idle: Duration,
}

impl Default for ConnTimeouts {
    fn default() -> Self {
        ConnTimeouts {
            header_read: Duration::from_secs(10),
            idle: Duration::from_secs(60),
        }
    }
}

/// Serves `listener` until `shutdown` turns true, then stops accepting, asks
/// open connections to close after their current response, and returns once
/// they have (or after `grace`).
pub async fn serve(
    listener: TcpListener,
    app: Arc<App>,
    timeouts: ConnTimeouts,
    mut shutdown: watch::Receiver<bool>,
    grace: Duration,
) {
    let connections = Arc::clone(app.connections());
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = shutdown.wait_for(|stop| *stop) => break,
        };
        let Ok((stream, _peer)) = accepted else {
            // Out of descriptors and the like: back off instead of spinning.
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let _ = stream.set_nodelay(true);
        connections.fetch_add(1, Ordering::SeqCst);
        let conn = Conn {
            app: Arc::clone(&app),
            timeouts,
            shutdown: shutdown.clone(),
            _open: Open(Arc::clone(&connections)),
        };
        tokio::spawn(serve_connection(stream, conn, None));
    }
    drop(listener);
    let deadline = Instant::now() + grace;
    while connections.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// What a connection keeps from request to request (and takes along when it
/// moves to another event loop).
struct Conn {
    app: Arc<App>,
    timeouts: ConnTimeouts,
    shutdown: watch::Receiver<bool>,
    _open: Open,
}

/// Counts a connection as open until it is dropped.
struct Open(Arc<AtomicUsize>);

impl Drop for Open {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// An answer to a request read on one event loop, to be made or written
/// on another (boxed: the connection's task holds only a pointer to it).
struct Carried {
    answer: Answer,
    exchange: Exchange,
    body_read: bool,
    buffered: Vec<u8>,
}

/// One connection: requests one after another until either side closes.
///
/// A streamed response whose run lives on another event loop is written
/// from there: the connection itself moves to that loop ([`move_to`]), so
/// the run's events are read, mapped and written on one thread, and the
/// connection still has a single task. A run's connection moves before its
/// admission, which the router defers to that loop ([`Deferred`]); one
/// that could not move then (its request's body still held the socket)
/// moves with the admitted response.
async fn serve_connection(socket: TcpStream, mut conn: Conn, mut carried: Option<Box<Carried>>) {
    let mut socket = Arc::new(socket);
    // Bytes read past the last request: the start of the next one.
    let mut buffered = Vec::new();
    let mut first = carried.is_none();
    loop {
        let (mut response, exchange, body_read) = match carried.take() {
            Some(carried) => {
                buffered = carried.buffered;
                (carried.answer.await, carried.exchange, carried.body_read)
            }
            None => {
                let wait = if first {
                    conn.timeouts.header_read
                } else {
                    conn.timeouts.idle
                };
                first = false;
                // Each step's future is boxed, so the connection's own task
                // stays small while a response streams for an hour.
                let next = next_request(&socket, &mut buffered, wait, &mut conn);
                match Box::pin(next).await {
                    Next::Close => return,
                    Next::Refuse(status) => {
                        let response = empty_response(status);
                        let closing = Exchange::closing();
                        let answer = write_response(&socket, response, &closing, &mut buffered);
                        let _ = Box::pin(answer).await;
                        Box::pin(linger(&socket)).await;
                        return;
                    }
                    Next::Answer {
                        response,
                        exchange,
                        body_read,
                    } => (response, exchange, body_read),
                }
            }
        };
        // The socket moves only when nothing else holds it (the request's
        // body is done with it). If it cannot, a deferred answer is made
        // here, and the connection may still move with the response.
        loop {
            let deferred = Deferred::take(&mut response);
            let home = match &deferred {
                Some((home, _)) => Some(home.clone()),
                None => response.extensions_mut().remove::<Home>(),
            };
            if let Some(home) = home.filter(|home| !home.is_current()) {
                match Arc::try_unwrap(socket) {
                    Ok(own) => {
                        let answer = match deferred {
                            Some((_, answer)) => answer,
                            None => Box::pin(std::future::ready(response)),
                        };
                        let carried = Box::new(Carried {
                            answer,
                            exchange,
                            body_read,
                            buffered,
                        });
                        return move_to(&home, own, conn, carried);
                    }
                    Err(shared) => socket = shared,
                }
            }
            match deferred {
                Some((_, answer)) => response = answer.await,
                None => break,
            }
        }
        let answer = write_response(&socket, response, &exchange, &mut buffered);
        match Box::pin(answer).await {
            Ok(true) => {}
            Ok(false) => {
                if !body_read {
                    Box::pin(linger(&socket)).await;
                }
                return;
            }
            Err(_) => return,
        }
    }
}

/// Continues `conn` on `home`'s event loop with `carried` as its next
/// answer. The socket leaves this loop's reactor and joins that one's.
fn move_to(home: &Home, socket: TcpStream, conn: Conn, carried: Box<Carried>) {
    let Ok(socket) = socket.into_std() else {
        return;
    };
    // Boxed as a trait object: it holds a `serve_connection`, which calls
    // this function.
    let moved: Pin<Box<dyn Future<Output = ()> + Send>> = Box::pin(async move {
        if let Ok(socket) = TcpStream::from_std(socket) {
            serve_connection(socket, conn, Some(carried)).await;
        }
    });
    drop(home.spawn(moved));
}

/// What a connection does after reading what came next.
enum Next {
    /// Close quietly (the client left, went idle, or the server stops).
    Close,
    /// Answer a head that is not acceptable with this status, then close.
    Refuse(StatusCode),
    /// Write the router's answer to a request.
    Answer {
        response: Response<ResponseBody>,
        /// How to answer, with `keep_alive` settled.
        exchange: Exchange,
        /// The request's body was read to its end.
        body_read: bool,
    },
}

/// Reads the next request and has the router answer it.
async fn next_request(
    socket: &Arc<TcpStream>,
    buffered: &mut Vec<u8>,
    wait: Duration,
    conn: &mut Conn,
) -> Next {
    let (timeouts, shutdown) = (conn.timeouts, &mut conn.shutdown);
    let (request, exchange) = match read_head(socket, buffered, wait, timeouts, shutdown).await {
        Ok(Some(head)) => head,
        Ok(None) => return Next::Close,
        Err(status) => return Next::Refuse(status),
    };
    let state = Arc::new(Mutex::new(BodyState {
        decoder: exchange.body.clone(),
        buffered: std::mem::take(buffered),
        expect_continue: exchange.expect_continue,
        failed: false,
    }));
    let body = ConnBody {
        socket: Arc::clone(socket),
        state: Arc::clone(&state),
    };
    let response = crate::router::respond(Arc::clone(&conn.app), request.map(|()| body)).await;
    let body_read = {
        let mut state = crate::locked(&state);
        *buffered = std::mem::take(&mut state.buffered);
        state.decoder.is_done() && !state.failed
    };
    // What the request needed is not kept while a response streams.
    buffered.shrink_to_fit();
    // Short of descriptors, a connection closes after its answer.
    let exchange = Exchange {
        keep_alive: exchange.keep_alive && body_read && !*shutdown.borrow() && conn.app.has_room(),
        ..exchange
    };
    Next::Answer {
        response,
        exchange,
        body_read,
    }
}

/// What the connection must remember about a request to answer it.
#[derive(Debug, Clone)]
struct Exchange {
    /// The request's body framing.
    body: BodyDecoder,
    /// The connection may carry another request after this one.
    keep_alive: bool,
    /// `Expect: 100-continue`: say so before reading the body.
    expect_continue: bool,
    /// A HEAD request: headers only.
    head_only: bool,
    /// An HTTP/1.0 client: no chunked encoding.
    http10: bool,
}

impl Exchange {
    /// An answer sent before (or instead of) reading a request.
    fn closing() -> Self {
        Exchange {
            body: BodyDecoder::Done,
            keep_alive: false,
            expect_continue: false,
            head_only: false,
            http10: false,
        }
    }
}

/// Waits for the next request head: `Ok(None)` when the connection should
/// just close (the client left, went idle too long, or the server stops),
/// `Err` with the status to answer a head that is not acceptable.
async fn read_head(
    socket: &TcpStream,
    buffered: &mut Vec<u8>,
    wait: Duration,
    timeouts: ConnTimeouts,
    shutdown: &mut watch::Receiver<bool>,
) -> Result<Option<(Request<()>, Exchange)>, StatusCode> {
    let mut deadline = Instant::now() + wait;
    let mut started = !buffered.is_empty();
    if started {
        deadline = Instant::now() + timeouts.header_read;
    }
    loop {
        // Empty lines before a request line are ignored (RFC 9112 §2.2).
        let blank = buffered
            .iter()
            .take_while(|b| matches!(b, b'\r' | b'\n'))
            .count();
        buffered.drain(..blank);
        if let Some(len) = http1::head_len(buffered) {
            if len > MAX_HEAD_BYTES {
                return Err(StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE);
            }
            let head = parse_request(&buffered[..len]);
            buffered.drain(..len);
            return head.map(Some);
        }
        if buffered.len() > MAX_HEAD_BYTES {
            return Err(StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE);
        }
        tokio::select! {
            ready = socket.readable() => {
                if ready.is_err() {
                    return Ok(None);
                }
            }
            () = tokio::time::sleep_until(deadline) => return Ok(None),
            _ = shutdown.wait_for(|stop| *stop), if !started => return Ok(None),
        }
        match http1::try_read_with(socket, |data| buffered.extend_from_slice(data)) {
            Ok(Got::Data(())) if !started => {
                started = true;
                deadline = Instant::now() + timeouts.header_read;
            }
            Ok(Got::Data(()) | Got::WouldBlock) => {}
            Ok(Got::Eof) | Err(_) => return Ok(None),
        }
    }
}

/// Reads a complete request head into a request without a body.
fn parse_request(raw: &[u8]) -> Result<(Request<()>, Exchange), StatusCode> {
    let bad = StatusCode::BAD_REQUEST;
    let mut lines = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut parsed = httparse::Request::new(&mut lines);
    match parsed.parse(raw) {
        Ok(httparse::Status::Complete(_)) => {}
        Err(httparse::Error::TooManyHeaders) => {
            return Err(StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE)
        }
        _ => return Err(bad),
    }
    let method = Method::from_bytes(parsed.method.unwrap_or("").as_bytes()).map_err(|_| bad)?;
    let uri: http::Uri = parsed.path.unwrap_or("").parse().map_err(|_| bad)?;
    let http10 = parsed.version == Some(0);
    let mut headers = HeaderMap::with_capacity(parsed.headers.len());
    for line in parsed.headers.iter() {
        let name = HeaderName::from_bytes(line.name.as_bytes()).map_err(|_| bad)?;
        let value = HeaderValue::from_bytes(line.value).map_err(|_| bad)?;
        headers.append(name, value);
    }
    let body = body_framing(&headers, http10).ok_or(bad)?;
    let has = |name: HeaderName, token: &str| {
        headers.get_all(name).iter().any(|value| {
            value
                .to_str()
                .is_ok_and(|v| v.split(',').any(|t| t.trim().eq_ignore_ascii_case(token)))
        })
    };
    let exchange = Exchange {
        // HTTP/1.0 connections close after one answer.
        keep_alive: !http10 && !has(header::CONNECTION, "close"),
        expect_continue: !http10 && !body.is_done() && has(header::EXPECT, "100-continue"),
        head_only: method == Method::HEAD,
        http10,
        body,
    };
    let mut request = Request::new(());
    *request.method_mut() = method;
    *request.uri_mut() = uri;
    *request.version_mut() = if http10 {
        http::Version::HTTP_10
    } else {
        http::Version::HTTP_11
    };
    *request.headers_mut() = headers;
    Ok((request, exchange))
}

/// A request body's framing (RFC 9112 §6.3); `None` when it is ambiguous or
/// broken (both headers, differing lengths, a coding other than chunked).
fn body_framing(headers: &HeaderMap, http10: bool) -> Option<BodyDecoder> {
    let codings: Vec<&str> = headers
        .get_all(header::TRANSFER_ENCODING)
        .iter()
        .map(|v| v.to_str().ok())
        .collect::<Option<_>>()?;
    let lengths: Vec<&str> = headers
        .get_all(header::CONTENT_LENGTH)
        .iter()
        .map(|v| v.to_str().ok())
        .collect::<Option<_>>()?;
    if !codings.is_empty() {
        let last = codings.last()?.rsplit(',').next()?.trim();
        if http10 || !lengths.is_empty() || !last.eq_ignore_ascii_case("chunked") {
            return None;
        }
        return Some(BodyDecoder::chunked());
    }
    let mut length = None;
    for value in lengths.iter().flat_map(|v| v.split(',')) {
        let value = value.trim();
        if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let value: u64 = value.parse().ok()?;
        if length.is_some_and(|known| known != value) {
            return None;
        }
        length = Some(value);
    }
    Some(BodyDecoder::length(length.unwrap_or(0)))
}

/// What the request body has read so far, shared by the body the router
/// holds and the connection that reads the next request.
#[derive(Debug)]
struct BodyState {
    decoder: BodyDecoder,
    /// Bytes read off the socket and not decoded yet.
    buffered: Vec<u8>,
    expect_continue: bool,
    failed: bool,
}

/// The request body handed to the router: it reads the connection only
/// when the router asks for the body.
#[derive(Debug)]
struct ConnBody {
    socket: Arc<TcpStream>,
    state: Arc<Mutex<BodyState>>,
}

/// The request body broke off or its framing was broken.
#[derive(Debug)]
struct BodyError;

impl std::fmt::Display for BodyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("request body broke off")
    }
}

impl std::error::Error for BodyError {}

impl Body for ConnBody {
    type Data = Bytes;
    type Error = BodyError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        let this = self.get_mut();
        let mut state = crate::locked(&this.state);
        let state = &mut *state;
        loop {
            if state.failed {
                return Poll::Ready(Some(Err(BodyError)));
            }
            if state.decoder.is_done() {
                return Poll::Ready(None);
            }
            if !state.buffered.is_empty() {
                let mut data = Vec::new();
                match state
                    .decoder
                    .decode(&state.buffered, &mut |d: &[u8]| data.extend_from_slice(d))
                {
                    Ok(used) => {
                        state.buffered.drain(..used);
                    }
                    Err(_) => {
                        state.failed = true;
                        continue;
                    }
                }
                if !data.is_empty() {
                    return Poll::Ready(Some(Ok(Frame::data(Bytes::from(data)))));
                }
                continue;
            }
            if state.expect_continue {
                state.expect_continue = false;
                const CONTINUE: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n";
                // A fresh connection's send buffer is empty: this fits.
                if this.socket.try_write(CONTINUE).ok() != Some(CONTINUE.len()) {
                    state.failed = true;
                    continue;
                }
            }
            match this.socket.poll_read_ready(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(_)) => {
                    state.failed = true;
                    continue;
                }
                Poll::Ready(Ok(())) => {}
            }
            let buffered = &mut state.buffered;
            match http1::try_read_with(&this.socket, |data| buffered.extend_from_slice(data)) {
                Ok(Got::Data(()) | Got::WouldBlock) => {}
                Ok(Got::Eof) | Err(_) => state.failed = true,
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        let state = crate::locked(&self.state);
        state.decoder.is_done()
    }

    fn size_hint(&self) -> SizeHint {
        let state = crate::locked(&self.state);
        match state.decoder {
            BodyDecoder::Length(left) => SizeHint::with_exact(left),
            BodyDecoder::Done => SizeHint::with_exact(0),
            _ => SizeHint::default(),
        }
    }
}

fn empty_response(status: StatusCode) -> Response<ResponseBody> {
    let mut response = Response::new(http_body_util::Full::new(Bytes::new()).boxed());
    *response.status_mut() = status;
    response
}

/// Writes `response`; `Ok(true)` when the connection may carry another
/// request. While the body streams, the client's side is watched: its
/// going away ends the write (and drops the body, which is how a run learns
/// of the disconnect); bytes of a pipelined next request are kept.
async fn write_response(
    socket: &TcpStream,
    response: Response<ResponseBody>,
    exchange: &Exchange,
    buffered: &mut Vec<u8>,
) -> std::io::Result<bool> {
    let (parts, mut body) = response.into_parts();
    let exact = body.size_hint().exact();
    // The head's headers are freed here, not kept while the body streams.
    let Head {
        bytes: mut out,
        keep_alive,
        chunked,
        no_body,
    } = encode_head(parts, exact, exchange);
    if no_body {
        http1::write_all(socket, &out).await?;
        return Ok(keep_alive);
    }
    // A body of known size goes out with its head, in one write. A
    // streamed one's head goes out with its first chunk when that is ready
    // at once (a run's `RUN_STARTED` is), else alone, so that the client
    // has it without waiting for the first event.
    let mut ready = None;
    if exact.is_none() {
        ready = std::future::poll_fn(|cx| match Pin::new(&mut body).poll_frame(cx) {
            Poll::Ready(frame) => Poll::Ready(Some(frame)),
            Poll::Pending => Poll::Ready(None),
        })
        .await;
        if ready.is_none() {
            http1::write_all(socket, &out).await?;
            out = Vec::new();
        }
    }
    loop {
        let frame = match ready.take() {
            Some(frame) => frame,
            None => tokio::select! {
                biased;
                frame = body.frame() => frame,
                gone = client_gone(socket, buffered) => return Err(gone),
            },
        };
        let Some(Ok(frame)) = frame else {
            break;
        };
        let Ok(data) = frame.into_data() else {
            continue;
        };
        if !data.is_empty() {
            out.reserve(data.len() + 24);
            if chunked {
                let _ = write!(out, "{:x}\r\n", data.len());
            }
            out.extend_from_slice(&data);
            if chunked {
                out.extend_from_slice(b"\r\n");
            }
        }
        // The last chunk carries the end of the body too: one write fewer
        // per run.
        if body.is_end_stream() {
            break;
        }
        // A streamed chunk (after the head, when that has not gone out
        // yet) is written at once, from a buffer sized to it and freed
        // once written: a stream may wait an hour between chunks.
        if exact.is_none() && !out.is_empty() {
            http1::write_all(socket, &out).await?;
            out = Vec::new();
        }
    }
    if chunked {
        out.extend_from_slice(b"0\r\n\r\n");
    }
    http1::write_all(socket, &out).await?;
    Ok(keep_alive)
}

/// A response's head, encoded, and how its body goes out.
struct Head {
    bytes: Vec<u8>,
    keep_alive: bool,
    chunked: bool,
    /// Nothing follows the head (a HEAD request, or a bodiless status).
    no_body: bool,
}

/// Encodes the head of a response whose body is `exact` bytes long (`None`:
/// unknown, so chunked, or until close for HTTP/1.0).
fn encode_head(parts: http::response::Parts, exact: Option<u64>, exchange: &Exchange) -> Head {
    let status = parts.status;
    let bodiless = status.is_informational()
        || status == StatusCode::NO_CONTENT
        || status == StatusCode::NOT_MODIFIED;
    let mut keep_alive = exchange.keep_alive;
    let mut out = Vec::with_capacity(512);
    let _ = write!(
        out,
        "HTTP/1.1 {} {}\r\n",
        status.as_u16(),
        status.canonical_reason().unwrap_or("")
    );
    let mut declared = None;
    for (name, value) in &parts.headers {
        if name == header::CONTENT_LENGTH {
            declared = Some(value.clone());
            continue;
        }
        if name == header::TRANSFER_ENCODING || name == header::CONNECTION {
            continue;
        }
        out.extend_from_slice(name.as_str().as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    let _ = write!(
        out,
        "date: {}\r\n",
        httpdate::fmt_http_date(std::time::SystemTime::now())
    );
    let mut chunked = false;
    if !bodiless {
        match (exact, declared) {
            (_, Some(value)) if exchange.head_only => {
                out.extend_from_slice(b"content-length: ");
                out.extend_from_slice(value.as_bytes());
                out.extend_from_slice(b"\r\n");
            }
            (Some(length), _) => {
                let _ = write!(out, "content-length: {length}\r\n");
            }
            (None, _) if exchange.http10 => keep_alive = false,
            (None, _) => {
                chunked = true;
                out.extend_from_slice(b"transfer-encoding: chunked\r\n");
            }
        }
    }
    if !keep_alive {
        out.extend_from_slice(b"connection: close\r\n");
    }
    out.extend_from_slice(b"\r\n");
    Head {
        bytes: out,
        keep_alive,
        chunked,
        no_body: bodiless || exchange.head_only,
    }
}

/// Resolves when the client has closed its side of the connection (or the
/// connection broke). Bytes it sends meanwhile are kept for the next
/// request, up to a bound; past it the connection is no longer read.
async fn client_gone(socket: &TcpStream, buffered: &mut Vec<u8>) -> std::io::Error {
    loop {
        if buffered.len() >= MAX_PIPELINED_BYTES {
            return std::future::pending().await;
        }
        if let Err(error) = socket.readable().await {
            return error;
        }
        match http1::try_read_with(socket, |data| buffered.extend_from_slice(data)) {
            Ok(Got::Data(()) | Got::WouldBlock) => {}
            Ok(Got::Eof) => return std::io::ErrorKind::UnexpectedEof.into(),
            Err(error) => return error,
        }
    }
}

/// Closes our side, then reads and drops what the client still sends for a
/// moment: closing with unread bytes would reset the connection, and the
/// client could lose the answer it was just sent.
async fn linger(socket: &TcpStream) {
    let _ = socket2::SockRef::from(socket).shutdown(std::net::Shutdown::Write);
    let deadline = Instant::now() + LINGER;
    let mut drained = 0usize;
    while drained < 1024 * 1024 {
        match tokio::time::timeout_at(deadline, socket.readable()).await {
            Ok(Ok(())) => {}
            _ => return,
        }
        match http1::try_read_with(socket, <[u8]>::len) {
            Ok(Got::Data(n)) => drained += n,
            Ok(Got::WouldBlock) => {}
            Ok(Got::Eof) | Err(_) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(raw: &str) -> Result<(Request<()>, Exchange), StatusCode> {
        parse_request(raw.as_bytes())
    }

    #[test]
    fn request_heads() {
        let (request, exchange) = parse(
            "POST /x?y=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 12\r\nExpect: 100-continue\r\n\r\n",
        )
        .unwrap();
        assert_eq!(request.method(), Method::POST);
        assert_eq!(request.uri().path(), "/x");
        assert_eq!(request.uri().query(), Some("y=1"));
        assert_eq!(exchange.body, BodyDecoder::length(12));
        assert!(exchange.keep_alive && exchange.expect_continue && !exchange.http10);

        let (_, exchange) =
            parse("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nConnection: Close\r\n\r\n")
                .unwrap();
        assert_eq!(exchange.body, BodyDecoder::chunked());
        assert!(!exchange.keep_alive);

        let (_, exchange) = parse("GET / HTTP/1.0\r\n\r\n").unwrap();
        assert!(exchange.http10 && !exchange.keep_alive && exchange.body.is_done());

        let (_, exchange) = parse("HEAD /health HTTP/1.1\r\n\r\n").unwrap();
        assert!(exchange.head_only);

        let (_, exchange) = parse("POST / HTTP/1.1\r\nContent-Length: 7, 7\r\n\r\n").unwrap();
        assert_eq!(exchange.body, BodyDecoder::length(7));
    }

    #[test]
    fn ambiguous_or_broken_heads_are_refused() {
        for raw in [
            "POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
            "POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n",
            "POST / HTTP/1.1\r\nContent-Length: -3\r\n\r\n",
            "POST / HTTP/1.1\r\nContent-Length: +3\r\n\r\n",
            "POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n",
            "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
            "GET / HTTP/2.0\r\n\r\n",
            "GET\r\n\r\n",
            "G@T / HTTP/1.1\r\n\r\n",
        ] {
            assert_eq!(
                parse(raw).map(|_| ()),
                Err(StatusCode::BAD_REQUEST),
                "{raw:?}"
            );
        }
        let many = format!(
            "GET / HTTP/1.1\r\n{}\r\n",
            "A: b\r\n".repeat(MAX_HEADERS + 1)
        );
        assert_eq!(
            parse(&many).map(|_| ()),
            Err(StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE)
        );
    }
}
