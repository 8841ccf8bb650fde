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
//! connection. The connection is never reused; dropping it closes it.

use std::time::Duration;

use http::Uri;
use tokio::net::TcpStream;

use crate::http1::{self, BodyDecoder, Got};

/// Largest response head accepted.
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// Most response header lines accepted.
const MAX_HEADERS: usize = 64;

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
}

/// An open connection whose response head has been read.
#[derive(Debug)]
pub(crate) struct Conn {
    socket: TcpStream,
    body: BodyDecoder,
    /// Body bytes that came with the head, not yet handed out.
    early: Vec<u8>,
}

/// What one read of the body produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Read {
    /// Some bytes arrived (maybe framing only).
    Data,
    /// The body is complete.
    End,
}

/// Opens a connection to `base` + `path` (within `connect_timeout`), sends
/// one `POST` with `body` and the extra `headers`, and reads the response
/// head.
pub(crate) async fn post(
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
    let ip_host = host.trim_start_matches('[').trim_end_matches(']');
    let socket = tokio::time::timeout(connect_timeout, TcpStream::connect((ip_host, port)))
        .await
        .map_err(|_| ConnError::Refused)?
        .map_err(|_| ConnError::Refused)?;
    socket.set_nodelay(true).map_err(|_| ConnError::Broken)?;

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
    request.extend_from_slice(b"\r\nConnection: close\r\nContent-Length: ");
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
    http1::write_all(&socket, &request)
        .await
        .map_err(|_| ConnError::Broken)?;
    drop(request);

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
    Ok((
        Conn {
            socket,
            body,
            early,
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
    for header in response.headers.iter() {
        let value = std::str::from_utf8(header.value)
            .map_err(|_| ConnError::Broken)?
            .trim();
        if header.name.eq_ignore_ascii_case("content-type") {
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
    Ok((
        Head {
            status,
            content_type,
        },
        body,
    ))
}

impl Conn {
    /// Waits until the socket is readable (holding no buffer).
    pub(crate) async fn readable(&self) -> Result<(), ConnError> {
        if !self.early.is_empty() {
            return Ok(());
        }
        self.socket.readable().await.map_err(|_| ConnError::Broken)
    }

    /// Reads what the socket has and hands the body bytes to `sink`; never
    /// waits (`None`: nothing after all, wait for readiness again).
    pub(crate) fn read(&mut self, sink: &mut impl FnMut(&[u8])) -> Result<Option<Read>, ConnError> {
        let decoded = if self.early.is_empty() {
            let body = &mut self.body;
            match http1::try_read_with(&self.socket, |data| body.decode(data, sink)) {
                Ok(Got::Data(decoded)) => decoded,
                Ok(Got::WouldBlock) => return Ok(None),
                Ok(Got::Eof) => body.finish().map(|()| 0),
                Err(_) => return Err(ConnError::Broken),
            }
        } else {
            let early = std::mem::take(&mut self.early);
            self.body.decode(&early, sink)
        };
        decoded.map_err(|_| ConnError::Broken)?;
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

    #[test]
    fn heads() {
        let raw = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\nTransfer-Encoding: gzip, chunked\r\n\r\n";
        let (head, body) = parse_head(raw).unwrap();
        assert_eq!(head.status, 200);
        assert_eq!(
            head.content_type.as_deref(),
            Some("text/event-stream; charset=utf-8")
        );
        assert_eq!(body, BodyDecoder::chunked());
        let (head, body) =
            parse_head(b"HTTP/1.1 401 Unauthorized\r\ncontent-length: 12\r\n\r\n").unwrap();
        assert_eq!((head.status, body), (401, BodyDecoder::length(12)));
        let (_, body) = parse_head(b"HTTP/1.0 200 OK\r\n\r\n").unwrap();
        assert_eq!(body, BodyDecoder::UntilClose);
        for bad in [
            &b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"[..],
            b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n",
            b"SMTP ready\r\n\r\n",
        ] {
            assert_eq!(parse_head(bad), Err(ConnError::Broken));
        }
    }
}
