//! A streamed A2A call on a TCP connection of its own, without hyper.
//!
//! hyper's client keeps two 8 KiB buffers, a dispatch channel and a
//! connection task per connection, and wakes that task before the reader
//! for every chunk. Here the reader owns the socket: it waits for
//! readiness holding no buffer ([`crate::http1`]) and decodes the body
//! framing straight into the SSE parser.
//!
//! Only what a streamed call needs: one `POST`, a response head, and a body
//! framed by `Transfer-Encoding: chunked`, `Content-Length` or the end of the
//! connection.
//!
//! A connection whose response body was read to its framed end, with
//! nothing after it, goes back to a [`Pool`] when it is dropped and carries
//! the next call of the same event loop: no TCP set-up and teardown per run
//! on either side. A pooled connection is used only within [`IDLE_MAX`] of
//! its last response and only if the runtime has not closed it; if sending
//! the request on it fails, the request goes on a new connection. Any
//! other connection (cut short, closed by the runtime, `Connection: close`,
//! HTTP/1.0) is closed when dropped.

use std::sync::{Arc, Mutex};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use http::uri::Authority;
use http::Uri;
use tokio::net::TcpStream;

use crate::http1::{self, BodyDecoder, Got};

/// Largest response head accepted.
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// Most response header lines accepted.
const MAX_HEADERS: usize = 64;

/// Longest a finished connection waits for its next call: well under the
/// keep-alive timeout of the runtime's server (uvicorn's is 5 s), so the
/// runtime does not close a connection as it is being reused.
const IDLE_MAX: Duration = Duration::from_secs(2);
/// Most finished connections kept at once.
pub(crate) const POOL_MAX: usize = 256;

/// Finished connections, each kept for the thread (event loop) that used
/// it: a socket belongs to the reactor of the loop that opened it.
#[derive(Debug, Default)]
pub(crate) struct Pool {
    idle: Mutex<Vec<Idle>>,
}

#[derive(Debug)]
struct Idle {
    /// `host:port`.
    peer: String,
    thread: ThreadId,
    socket: TcpStream,
    since: Instant,
}

impl Pool {
    /// The most recently finished live connection to `peer` of this
    /// thread; expired and closed ones are dropped on the way.
    fn take(&self, peer: &str) -> Option<TcpStream> {
        let thread = std::thread::current().id();
        let mut idle = crate::locked(&self.idle);
        idle.retain(|conn| conn.since.elapsed() < IDLE_MAX);
        while let Some(at) = idle
            .iter()
            .rposition(|conn| conn.thread == thread && conn.peer == peer)
        {
            let conn = idle.swap_remove(at);
            if is_quiet(&conn.socket) {
                return Some(conn.socket);
            }
        }
        None
    }

    /// Keeps a finished connection. Expired ones are dropped here and in
    /// [`Pool::take`]: after the last call of a busy spell, at most
    /// [`POOL_MAX`] connections stay open until the next call.
    fn put(&self, peer: String, socket: TcpStream) {
        let mut idle = crate::locked(&self.idle);
        idle.retain(|conn| conn.since.elapsed() < IDLE_MAX);
        if idle.len() < POOL_MAX {
            idle.push(Idle {
                peer,
                thread: std::thread::current().id(),
                socket,
                since: Instant::now(),
            });
        }
    }

    /// How many finished connections wait (tests).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        crate::locked(&self.idle).len()
    }
}

/// True when the peer has neither closed the connection nor sent anything
/// unasked: a peek finds no byte and would block.
fn is_quiet(socket: &TcpStream) -> bool {
    let mut byte = [std::mem::MaybeUninit::<u8>::uninit()];
    matches!(
        socket2::SockRef::from(socket).peek(&mut byte),
        Err(error) if error.kind() == std::io::ErrorKind::WouldBlock
    )
}

/// Why a streamed call could not be opened or read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ConnError {
    /// No connection could be made (or the URL is not `http://host[:port]`).
    Refused,
    /// The connection broke, or the peer sent something that is not HTTP.
    Broken,
}

/// A response head: the status, `Content-Type`, and the body's framing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Head {
    pub(crate) status: u16,
    pub(crate) content_type: Option<String>,
    /// HTTP/1.1 without `Connection: close`, the body framed by length or
    /// chunks: the connection may carry another call after this one.
    pub(crate) keep_alive: bool,
}

/// An open connection whose response head has been read.
#[derive(Debug)]
pub(crate) struct Conn {
    /// Always `Some` until the connection is dropped.
    socket: Option<TcpStream>,
    body: BodyDecoder,
    /// Body bytes that came with the head, not yet handed out.
    early: Vec<u8>,
    /// Where the connection goes back to once its body was read whole;
    /// `None` once it cannot be reused.
    home: Option<(Arc<Pool>, String)>,
}

impl Drop for Conn {
    fn drop(&mut self) {
        if let (Some((pool, peer)), Some(socket)) = (self.home.take(), self.socket.take()) {
            if self.body.is_done() && self.early.is_empty() {
                pool.put(peer, socket);
            }
        }
    }
}

/// What one read of the body produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Read {
    /// Some bytes arrived (maybe framing only).
    Data,
    /// The body is complete.
    End,
}

/// Sends one `POST` of `body` with the extra `headers` to `base` + `path`
/// and reads the response head: on a connection from `pool` if one is
/// ready, else on a new one (opened within `connect_timeout`).
pub(crate) async fn post(
    pool: &Arc<Pool>,
    base: &str,
    path: &str,
    connect_timeout: Duration,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Result<(Conn, Head), ConnError> {
    let uri: Uri = format!("{base}{path}")
        .parse()
        .map_err(|_| ConnError::Refused)?;
    if uri.scheme_str() != Some("http") {
        return Err(ConnError::Refused);
    }
    let authority = uri.authority().ok_or(ConnError::Refused)?;
    let host = authority.host();
    let port = authority.port_u16().unwrap_or(80);
    // The pool's key: host and port, never user information.
    let peer = format!("{host}:{port}");
    let request = request_bytes(&uri, authority, headers, body)?;
    let mut socket = pool.take(&peer);
    if let Some(pooled) = &socket {
        // A request that could not be sent whole was never applied: it
        // goes on a new connection. Once sent, a failure is final.
        if http1::write_all(pooled, &request).await.is_err() {
            socket = None;
        }
    }
    let socket = match socket {
        Some(socket) => socket,
        None => {
            let ip_host = host.trim_start_matches('[').trim_end_matches(']');
            let socket = tokio::time::timeout(connect_timeout, TcpStream::connect((ip_host, port)))
                .await
                .map_err(|_| ConnError::Refused)?
                .map_err(|_| ConnError::Refused)?;
            socket.set_nodelay(true).map_err(|_| ConnError::Broken)?;
            http1::write_all(&socket, &request)
                .await
                .map_err(|_| ConnError::Broken)?;
            socket
        }
    };
    drop(request);
    read_head(socket, pool, peer).await
}

/// The request's bytes: head (Host without user information, no line
/// breaks from the configured headers) and body.
fn request_bytes(
    uri: &Uri,
    authority: &Authority,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Result<Vec<u8>, ConnError> {
    let host = authority.host();
    let target = uri.path_and_query().map_or("/", |p| p.as_str());
    let mut request = Vec::with_capacity(256 + body.len());
    request.extend_from_slice(b"POST ");
    request.extend_from_slice(target.as_bytes());
    request.extend_from_slice(b" HTTP/1.1\r\nHost: ");
    // Host and port only: never user information from the URL.
    request.extend_from_slice(host.as_bytes());
    if let Some(port) = authority.port() {
        request.extend_from_slice(b":");
        request.extend_from_slice(port.as_str().as_bytes());
    }
    request.extend_from_slice(b"\r\nContent-Length: ");
    request.extend_from_slice(body.len().to_string().as_bytes());
    for (name, value) in headers {
        // A line break in a configured value (a token) must not add lines.
        if name.contains(['\r', '\n']) || value.contains(['\r', '\n']) {
            return Err(ConnError::Refused);
        }
        request.extend_from_slice(b"\r\n");
        request.extend_from_slice(name.as_bytes());
        request.extend_from_slice(b": ");
        request.extend_from_slice(value.as_bytes());
    }
    request.extend_from_slice(b"\r\n\r\n");
    request.extend_from_slice(body);
    Ok(request)
}

/// Reads the response head off `socket`, after the request was sent.
async fn read_head(
    socket: TcpStream,
    pool: &Arc<Pool>,
    peer: String,
) -> Result<(Conn, Head), ConnError> {
    let mut raw = Vec::new();
    let head_end = loop {
        socket.readable().await.map_err(|_| ConnError::Broken)?;
        match http1::try_read_with(&socket, |data| raw.extend_from_slice(data)) {
            Ok(Got::Data(())) => {}
            Ok(Got::WouldBlock) => continue,
            Ok(Got::Eof) | Err(_) => return Err(ConnError::Broken),
        }
        if let Some(end) = http1::head_len(&raw) {
            break end;
        }
        if raw.len() > MAX_HEAD_BYTES {
            return Err(ConnError::Broken);
        }
    };
    let (head, body) = parse_head(&raw[..head_end])?;
    let early = raw.split_off(head_end);
    let home = head.keep_alive.then(|| (Arc::clone(pool), peer));
    Ok((
        Conn {
            socket: Some(socket),
            body,
            early,
            home,
        },
        head,
    ))
}

fn parse_head(raw: &[u8]) -> Result<(Head, BodyDecoder), ConnError> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut response = httparse::Response::new(&mut headers);
    match response.parse(raw) {
        Ok(httparse::Status::Complete(_)) => {}
        _ => return Err(ConnError::Broken),
    }
    let status = response.code.ok_or(ConnError::Broken)?;
    let mut content_type = None;
    let mut chunked = false;
    let mut length = None;
    let mut close = response.version != Some(1);
    for header in response.headers.iter() {
        let value = std::str::from_utf8(header.value)
            .map_err(|_| ConnError::Broken)?
            .trim();
        if header.name.eq_ignore_ascii_case("connection") {
            close |= value
                .split(',')
                .any(|option| option.trim().eq_ignore_ascii_case("close"));
        } else if header.name.eq_ignore_ascii_case("content-type") {
            content_type = Some(value.to_owned());
        } else if header.name.eq_ignore_ascii_case("transfer-encoding") {
            // Chunked must be the last coding (RFC 9112 §6.3).
            chunked = value
                .rsplit(',')
                .next()
                .is_some_and(|last| last.trim().eq_ignore_ascii_case("chunked"));
        } else if header.name.eq_ignore_ascii_case("content-length") {
            let parsed: u64 = value.parse().map_err(|_| ConnError::Broken)?;
            if length.is_some_and(|known| known != parsed) {
                return Err(ConnError::Broken);
            }
            length = Some(parsed);
        }
    }
    let body = if chunked {
        BodyDecoder::chunked()
    } else if let Some(length) = length {
        BodyDecoder::length(length)
    } else {
        BodyDecoder::UntilClose
    };
    let keep_alive = !close && body != BodyDecoder::UntilClose;
    Ok((
        Head {
            status,
            content_type,
            keep_alive,
        },
        body,
    ))
}

impl Conn {
    fn socket(&self) -> Result<&TcpStream, ConnError> {
        self.socket.as_ref().ok_or(ConnError::Broken)
    }

    /// Waits until the socket is readable (holding no buffer).
    pub(crate) async fn readable(&self) -> Result<(), ConnError> {
        if !self.early.is_empty() {
            return Ok(());
        }
        self.socket()?
            .readable()
            .await
            .map_err(|_| ConnError::Broken)
    }

    /// Reads what the socket has and hands the body bytes to `sink`; never
    /// waits (`None`: nothing after all, wait for readiness again).
    pub(crate) fn read(&mut self, sink: &mut impl FnMut(&[u8])) -> Result<Option<Read>, ConnError> {
        let (decoded, read) = if self.early.is_empty() {
            let (socket, body) = (
                self.socket.as_ref().ok_or(ConnError::Broken)?,
                &mut self.body,
            );
            match http1::try_read_with(socket, |data| (body.decode(data, sink), data.len())) {
                Ok(Got::Data(decoded)) => decoded,
                Ok(Got::WouldBlock) => return Ok(None),
                Ok(Got::Eof) => {
                    // Closed by the runtime: never reused.
                    self.home = None;
                    (self.body.finish().map(|()| 0), 0)
                }
                Err(_) => return Err(ConnError::Broken),
            }
        } else {
            let early = std::mem::take(&mut self.early);
            (self.body.decode(&early, sink), early.len())
        };
        let used = decoded.map_err(|_| ConnError::Broken)?;
        if used < read {
            // Bytes after the body: the connection is out of step.
            self.home = None;
        }
        Ok(Some(if self.body.is_done() {
            Read::End
        } else {
            Read::Data
        }))
    }

    /// Reads the whole body into memory, refusing more than `limit` bytes.
    pub(crate) async fn read_to_end(mut self, limit: usize) -> Result<Vec<u8>, ConnError> {
        let mut all = Vec::new();
        let mut over = false;
        loop {
            self.readable().await?;
            let read = self.read(&mut |data: &[u8]| {
                over |= all.len() + data.len() > limit;
                if !over {
                    all.extend_from_slice(data);
                }
            })?;
            if over {
                return Err(ConnError::Broken);
            }
            if read == Some(Read::End) {
                return Ok(all);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    /// How a test server answers each request on a connection.
    #[derive(Clone, Copy)]
    enum Then {
        /// Keep the connection open for the next request.
        Stay,
        /// Say `Connection: close` and close.
        SayClose,
        /// Close right after the response without saying so.
        Hangup,
    }

    /// A keep-alive HTTP/1.1 server answering every `POST` with a chunked
    /// SSE body; returns its base URL, its count of accepted connections
    /// and an empty pool.
    async fn server(then: Then) -> (String, Arc<AtomicUsize>, Arc<Pool>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = Arc::clone(&accepted);
        tokio::spawn(async move {
            loop {
                let (mut socket, _) = listener.accept().await.unwrap();
                count.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    loop {
                        let mut chunk = [0u8; 4096];
                        let n = socket.read(&mut chunk).await.unwrap_or(0);
                        if n == 0 {
                            return;
                        }
                        buf.extend_from_slice(&chunk[..n]);
                        let Some(end) = http1::head_len(&buf) else {
                            continue;
                        };
                        let text = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
                        let length: usize = text
                            .lines()
                            .find_map(|l| l.strip_prefix("content-length: "))
                            .map_or(0, |v| v.trim().parse().unwrap());
                        if buf.len() < end + length {
                            continue;
                        }
                        buf.drain(..end + length);
                        let close = matches!(then, Then::SayClose);
                        let head = format!(
                            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n{}\r\n",
                            if close { "connection: close\r\n" } else { "" }
                        );
                        let body = "data: {}\n\n";
                        let wire = format!("{head}{:x}\r\n{body}\r\n0\r\n\r\n", body.len());
                        socket.write_all(wire.as_bytes()).await.unwrap();
                        if !matches!(then, Then::Stay) {
                            return;
                        }
                    }
                });
            }
        });
        (base, accepted, Arc::default())
    }

    /// One streamed call: posts, then reads the body to its end (or, with
    /// `whole` false, drops the connection after the head).
    async fn call(pool: &Arc<Pool>, base: &str, whole: bool) -> Vec<u8> {
        let (conn, head) = post(pool, base, "/", Duration::from_secs(5), &[], b"{}")
            .await
            .unwrap();
        assert_eq!(head.status, 200);
        if whole {
            conn.read_to_end(1024).await.unwrap()
        } else {
            Vec::new()
        }
    }

    #[tokio::test]
    async fn a_finished_connection_carries_the_next_call() {
        let (base, accepted, pool) = server(Then::Stay).await;
        for _ in 0..3 {
            assert_eq!(call(&pool, &base, true).await, b"data: {}\n\n");
            assert_eq!(pool.len(), 1);
        }
        assert_eq!(accepted.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn a_connection_cut_short_or_told_to_close_is_not_kept() {
        let (base, accepted, pool) = server(Then::Stay).await;
        call(&pool, &base, false).await;
        assert_eq!(pool.len(), 0, "body not read to its end");
        call(&pool, &base, true).await;
        assert_eq!(accepted.load(Ordering::SeqCst), 2);

        let (base, accepted, pool) = server(Then::SayClose).await;
        call(&pool, &base, true).await;
        call(&pool, &base, true).await;
        assert_eq!(accepted.load(Ordering::SeqCst), 2, "Connection: close");
    }

    #[tokio::test]
    async fn a_connection_the_runtime_closed_is_replaced() {
        let (base, accepted, pool) = server(Then::Hangup).await;
        call(&pool, &base, true).await;
        assert_eq!(pool.len(), 1, "it said nothing of closing");
        // The server's close reaches this side before the next call.
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(call(&pool, &base, true).await, b"data: {}\n\n");
        assert_eq!(accepted.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn an_idle_connection_expires() {
        let (base, accepted, pool) = server(Then::Stay).await;
        call(&pool, &base, true).await;
        for idle in crate::locked(&pool.idle).iter_mut() {
            idle.since -= IDLE_MAX;
        }
        call(&pool, &base, true).await;
        assert_eq!(accepted.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn heads() {
        let raw = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\nTransfer-Encoding: gzip, chunked\r\n\r\n";
        let (head, body) = parse_head(raw).unwrap();
        assert_eq!(head.status, 200);
        assert!(head.keep_alive);
        assert_eq!(
            head.content_type.as_deref(),
            Some("text/event-stream; charset=utf-8")
        );
        assert_eq!(body, BodyDecoder::chunked());
        let (head, body) =
            parse_head(b"HTTP/1.1 401 Unauthorized\r\ncontent-length: 12\r\n\r\n").unwrap();
        assert_eq!((head.status, body), (401, BodyDecoder::length(12)));
        let (head, body) = parse_head(b"HTTP/1.0 200 OK\r\n\r\n").unwrap();
        assert_eq!(body, BodyDecoder::UntilClose);
        assert!(!head.keep_alive);
        for last in [
            &b"HTTP/1.1 200 OK\r\nConnection: keep-alive, close\r\nContent-Length: 0\r\n\r\n"[..],
            b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n",
            b"HTTP/1.1 200 OK\r\n\r\n",
        ] {
            assert!(!parse_head(last).unwrap().0.keep_alive);
        }
        for bad in [
            &b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"[..],
            b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n",
            b"SMTP ready\r\n\r\n",
        ] {
            assert_eq!(parse_head(bad), Err(ConnError::Broken));
        }
    }
}
