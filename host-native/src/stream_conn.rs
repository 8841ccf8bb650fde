//! A streamed A2A call on a TCP connection of its own, without hyper.
//!
//! An A2A stream can stay open for an hour while a permission waits for its
//! answer, so what it holds while idle is what 10,000 open streams cost.
//! hyper's client keeps two 8 KiB buffers, a dispatch channel and a
//! connection task per connection, and wakes that task before the reader
//! for every chunk. Here the reader owns the socket: it waits for
//! readiness holding no buffer, reads into a per-thread scratch buffer, and
//! decodes the body framing straight into the SSE parser.
//!
//! Only what a streamed call needs: one `POST`, a response head, and a body
//! framed by `Transfer-Encoding: chunked`, `Content-Length` or the end of the
//! connection. The connection is never reused; dropping it closes it.

use std::cell::RefCell;
use std::io;
use std::time::Duration;

use http::Uri;
use tokio::io::AsyncWriteExt as _;
use tokio::net::TcpStream;

/// Largest response head accepted.
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// Most response header lines accepted.
const MAX_HEADERS: usize = 64;
/// Bytes one read may take off a socket.
const SCRATCH_BYTES: usize = 64 * 1024;

thread_local! {
    // Shared by every connection read on this thread; never held across an
    // `.await`, so an idle connection owns no read buffer.
    static SCRATCH: RefCell<Vec<u8>> = RefCell::new(vec![0; SCRATCH_BYTES]);
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
    /// Some body bytes went to the sink (maybe none, after framing only).
    Data,
    /// The body is complete.
    End,
    /// The socket had nothing after all; wait for readiness again.
    Nothing,
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
    let mut socket = tokio::time::timeout(connect_timeout, TcpStream::connect((ip_host, port)))
        .await
        .map_err(|_| ConnError::Refused)?
        .map_err(|_| ConnError::Refused)?;
    socket.set_nodelay(true).map_err(|_| ConnError::Broken)?;

    let target = uri.path_and_query().map_or("/", |p| p.as_str());
    let mut request = Vec::with_capacity(256 + body.len());
    request.extend_from_slice(b"POST ");
    request.extend_from_slice(target.as_bytes());
    request.extend_from_slice(b" HTTP/1.1\r\nHost: ");
    request.extend_from_slice(authority.as_str().as_bytes());
    request.extend_from_slice(b"\r\nConnection: close\r\nContent-Length: ");
    request.extend_from_slice(body.len().to_string().as_bytes());
    for (name, value) in headers {
        request.extend_from_slice(b"\r\n");
        request.extend_from_slice(name.as_bytes());
        request.extend_from_slice(b": ");
        request.extend_from_slice(value.as_bytes());
    }
    request.extend_from_slice(b"\r\n\r\n");
    request.extend_from_slice(body);
    socket
        .write_all(&request)
        .await
        .map_err(|_| ConnError::Broken)?;
    drop(request);

    let mut raw = Vec::new();
    let head_end = loop {
        socket.readable().await.map_err(|_| ConnError::Broken)?;
        let got = SCRATCH.with_borrow_mut(|scratch| match socket.try_read(scratch) {
            Ok(0) => Err(ConnError::Broken),
            Ok(n) => {
                raw.extend_from_slice(&scratch[..n]);
                Ok(true)
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(false),
            Err(_) => Err(ConnError::Broken),
        })?;
        if got {
            if let Some(end) = memchr::memmem::find(&raw, b"\r\n\r\n") {
                break end + 4;
            }
            if raw.len() > MAX_HEAD_BYTES {
                return Err(ConnError::Broken);
            }
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
        BodyDecoder::Length(length)
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
    /// waits. A `sink` error stops the read and is returned as is.
    pub(crate) fn read<E>(
        &mut self,
        sink: &mut impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<Result<Read, E>, ConnError> {
        if !self.early.is_empty() {
            let early = std::mem::take(&mut self.early);
            return self.body.decode(&early, sink);
        }
        let (socket, body) = (&self.socket, &mut self.body);
        SCRATCH.with_borrow_mut(|scratch| match socket.try_read(scratch) {
            Ok(0) => body.finish().map(|()| Ok(Read::End)),
            Ok(n) => body.decode(&scratch[..n], sink),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(Ok(Read::Nothing)),
            Err(_) => Err(ConnError::Broken),
        })
    }

    /// Reads the whole body into memory, refusing more than `limit` bytes.
    pub(crate) async fn read_to_end(mut self, limit: usize) -> Result<Vec<u8>, ConnError> {
        let mut all = Vec::new();
        loop {
            self.readable().await?;
            let mut sink = |data: &[u8]| {
                if all.len() + data.len() > limit {
                    return Err(());
                }
                all.extend_from_slice(data);
                Ok(())
            };
            match self.read(&mut sink)? {
                Ok(Read::End) => return Ok(all),
                Ok(Read::Data | Read::Nothing) => {}
                Err(()) => return Err(ConnError::Broken),
            }
        }
    }
}

/// The body framing of a response (RFC 9112 §6), as a push decoder.
#[derive(Debug, Clone, PartialEq, Eq)]
enum BodyDecoder {
    /// `Content-Length`: bytes still to come.
    Length(u64),
    /// No length: the body ends with the connection.
    UntilClose,
    /// `Transfer-Encoding: chunked`.
    Chunked(Chunked),
    /// The body is complete; anything after it is ignored.
    Done,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chunked {
    /// Reading a chunk-size line: the size so far, whether a hex digit was
    /// seen, whether the extensions after it have started.
    Size { size: u64, digits: bool, rest: bool },
    /// Inside a chunk's data: bytes left.
    Data(u64),
    /// After a chunk's data: its line break.
    DataEnd,
    /// The trailer section: whether the current line has any byte.
    Trailer { line: bool },
}

impl BodyDecoder {
    fn chunked() -> Self {
        BodyDecoder::Chunked(Chunked::Size {
            size: 0,
            digits: false,
            rest: false,
        })
    }

    /// The connection ended: fine only where the framing allows it.
    fn finish(&mut self) -> Result<(), ConnError> {
        match self {
            BodyDecoder::UntilClose | BodyDecoder::Done | BodyDecoder::Length(0) => {
                *self = BodyDecoder::Done;
                Ok(())
            }
            _ => Err(ConnError::Broken),
        }
    }

    fn decode<E>(
        &mut self,
        mut input: &[u8],
        sink: &mut impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<Result<Read, E>, ConnError> {
        loop {
            match self {
                BodyDecoder::Done => return Ok(Ok(Read::End)),
                BodyDecoder::UntilClose => {
                    return Ok(sink(input).map(|()| Read::Data));
                }
                BodyDecoder::Length(left) => {
                    let take = input
                        .len()
                        .min(usize::try_from(*left).unwrap_or(usize::MAX));
                    *left -= take as u64;
                    if let Err(e) = sink(&input[..take]) {
                        return Ok(Err(e));
                    }
                    if *left == 0 {
                        *self = BodyDecoder::Done;
                        return Ok(Ok(Read::End));
                    }
                    return Ok(Ok(Read::Data));
                }
                BodyDecoder::Chunked(state) => {
                    let Some((&byte, after)) = input.split_first() else {
                        return Ok(Ok(Read::Data));
                    };
                    match state {
                        Chunked::Data(left) => {
                            let take = input
                                .len()
                                .min(usize::try_from(*left).unwrap_or(usize::MAX));
                            *left -= take as u64;
                            if *left == 0 {
                                *state = Chunked::DataEnd;
                            }
                            if let Err(e) = sink(&input[..take]) {
                                return Ok(Err(e));
                            }
                            input = &input[take..];
                            continue;
                        }
                        Chunked::Size { size, digits, rest } => match byte {
                            b'\n' if *digits => {
                                *state = if *size == 0 {
                                    Chunked::Trailer { line: false }
                                } else {
                                    Chunked::Data(*size)
                                };
                            }
                            b'0'..=b'9' | b'a'..=b'f' | b'A'..=b'F' if !*rest => {
                                let digit = u64::from((byte as char).to_digit(16).unwrap_or(0));
                                *size = size
                                    .checked_mul(16)
                                    .and_then(|s| s.checked_add(digit))
                                    .ok_or(ConnError::Broken)?;
                                *digits = true;
                            }
                            b'\n' => return Err(ConnError::Broken),
                            _ if *digits => *rest = true,
                            _ => return Err(ConnError::Broken),
                        },
                        Chunked::DataEnd => match byte {
                            b'\r' => {}
                            b'\n' => {
                                *state = Chunked::Size {
                                    size: 0,
                                    digits: false,
                                    rest: false,
                                };
                            }
                            _ => return Err(ConnError::Broken),
                        },
                        Chunked::Trailer { line } => match byte {
                            b'\n' if !*line => {
                                *self = BodyDecoder::Done;
                                return Ok(Ok(Read::End));
                            }
                            b'\n' => *line = false,
                            b'\r' => {}
                            _ => *line = true,
                        },
                    }
                    input = after;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Decodes `wire` cut at every split point; every cut must give the
    /// same body and the same end.
    fn decode_every_split(mut make: impl FnMut() -> BodyDecoder, wire: &[u8]) -> (Vec<u8>, Read) {
        let mut whole = None;
        for cut in 0..=wire.len() {
            let mut decoder = make();
            let mut out = Vec::new();
            let mut last = Read::Data;
            for part in [&wire[..cut], &wire[cut..]] {
                let mut sink = |d: &[u8]| -> Result<(), ()> {
                    out.extend_from_slice(d);
                    Ok(())
                };
                last = decoder.decode(part, &mut sink).unwrap().unwrap();
            }
            match &whole {
                None => whole = Some((out, last)),
                Some(first) => assert_eq!(first, &(out, last), "cut at {cut}"),
            }
        }
        whole.unwrap()
    }

    #[test]
    fn chunked_body_at_every_split_point() {
        let wire = b"6\r\ndata: \r\n18;name=v\r\n{\"a\":1}\r\n\r\n: ping 123456\r\n0\r\nX-Trailer: 1\r\n\r\nignored";
        let (body, end) = decode_every_split(BodyDecoder::chunked, wire);
        assert_eq!(body, b"data: {\"a\":1}\r\n\r\n: ping 123456");
        assert_eq!(end, Read::End);
    }

    #[test]
    fn chunked_with_bare_line_feeds_and_upper_case_sizes() {
        let wire = b"A\nabcdefghij\n0\n\n";
        let (body, end) = decode_every_split(BodyDecoder::chunked, wire);
        assert_eq!(body, b"abcdefghij");
        assert_eq!(end, Read::End);
    }

    #[test]
    fn unfinished_chunked_body_is_not_complete() {
        let (body, end) = decode_every_split(BodyDecoder::chunked, b"5\r\nabc");
        assert_eq!((body.as_slice(), end), (&b"abc"[..], Read::Data));
        let mut decoder = BodyDecoder::chunked();
        let mut sink = |_: &[u8]| -> Result<(), ()> { Ok(()) };
        decoder.decode(b"5\r\nabc", &mut sink).unwrap().unwrap();
        assert_eq!(decoder.finish(), Err(ConnError::Broken));
    }

    #[test]
    fn bad_chunk_framing_is_refused() {
        for wire in [
            &b"zz\r\n"[..],
            b"\r\n",
            b"3\r\nabcX",
            b"fffffffffffffffff\r\n",
        ] {
            let mut decoder = BodyDecoder::chunked();
            let mut sink = |_: &[u8]| -> Result<(), ()> { Ok(()) };
            assert_eq!(
                decoder.decode(wire, &mut sink).map(|r| r.unwrap()),
                Err(ConnError::Broken),
                "{}",
                String::from_utf8_lossy(wire)
            );
        }
    }

    #[test]
    fn length_and_close_framing() {
        let (body, end) = decode_every_split(|| BodyDecoder::Length(5), b"hello, more");
        assert_eq!((body.as_slice(), end), (&b"hello"[..], Read::End));
        let (body, end) = decode_every_split(|| BodyDecoder::UntilClose, b"all of it");
        assert_eq!((body.as_slice(), end), (&b"all of it"[..], Read::Data));
        assert_eq!(BodyDecoder::UntilClose.finish(), Ok(()));
        assert_eq!(BodyDecoder::Length(3).finish(), Err(ConnError::Broken));
    }

    #[test]
    fn a_sink_error_stops_the_read() {
        let mut decoder = BodyDecoder::chunked();
        let mut sink = |_: &[u8]| -> Result<(), &str> { Err("full") };
        assert_eq!(decoder.decode(b"3\r\nabc\r\n", &mut sink), Ok(Err("full")));
    }

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
        assert_eq!((head.status, body), (401, BodyDecoder::Length(12)));
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
