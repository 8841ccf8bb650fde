//! The HTTP/1.1 pieces both sides of the server share: reading a socket
//! without owning a buffer, writing one out, finding the end of a head, and
//! decoding a message body's framing (RFC 9112 §6–7).
//!
//! An SSE stream can stay open for an hour while a permission waits for its
//! answer, so what a connection holds while idle is what 10,000 open streams
//! cost. A connection here waits for readiness holding no buffer, then reads
//! into a per-thread scratch buffer and decodes from there.

use std::cell::RefCell;
use std::io::{self, Read as _};

use socket2::SockRef;
use tokio::io::Interest;
use tokio::net::TcpStream;

/// Bytes one read may take off a socket.
const SCRATCH_BYTES: usize = 64 * 1024;

thread_local! {
    // Shared by every connection read on this thread; never held across an
    // `.await`.
    static SCRATCH: RefCell<Vec<u8>> = RefCell::new(vec![0; SCRATCH_BYTES]);
}

/// What one non-blocking read found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Got<R> {
    /// The peer closed its side.
    Eof,
    /// Bytes, already handed to the reader; its result.
    Data(R),
    /// Nothing after all: wait for readiness again.
    WouldBlock,
}

/// Reads what `socket` has now into the thread's scratch buffer and hands
/// it to `f`; never waits.
///
/// A read that leaves room in the buffer emptied the socket, so its
/// readiness is cleared there and then (as tokio's own `poll_read` does):
/// the next wait for readiness sleeps until more bytes come, instead of
/// returning at once for a read that finds nothing. Readiness that arrived
/// after the read is kept, and so is a closed peer.
pub(crate) fn try_read_with<R>(
    socket: &TcpStream,
    f: impl FnOnce(&[u8]) -> R,
) -> io::Result<Got<R>> {
    SCRATCH.with_borrow_mut(|scratch| {
        let mut read = None;
        let outcome = socket.try_io(Interest::READABLE, || {
            let n = (&*SockRef::from(socket)).read(scratch)?;
            read = Some(n);
            if n > 0 && n < scratch.len() {
                Err(io::ErrorKind::WouldBlock.into())
            } else {
                Ok(())
            }
        });
        match (read, outcome) {
            (Some(0), _) => Ok(Got::Eof),
            (Some(n), _) => Ok(Got::Data(f(&scratch[..n]))),
            (None, Err(e)) if e.kind() == io::ErrorKind::WouldBlock => Ok(Got::WouldBlock),
            (None, Err(e)) => Err(e),
            (None, Ok(())) => unreachable!("a successful read records its length"),
        }
    })
}

/// Writes all of `bytes` (through a shared reference, so a reader of the
/// same socket can run alongside).
pub(crate) async fn write_all(socket: &TcpStream, mut bytes: &[u8]) -> io::Result<()> {
    while !bytes.is_empty() {
        socket.writable().await?;
        match socket.try_write(bytes) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The length of the head at the start of `raw` (through its blank line),
/// once it is all there. Bare LF line ends are accepted.
pub(crate) fn head_len(raw: &[u8]) -> Option<usize> {
    let mut from = 0;
    while let Some(at) = memchr::memchr(b'\n', &raw[from..]) {
        let end = from + at + 1;
        match &raw[end..] {
            [b'\n', ..] => return Some(end + 1),
            [b'\r', b'\n', ..] => return Some(end + 2),
            _ => from = end,
        }
    }
    None
}

/// A body's framing broke the rules (or the connection ended inside it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Malformed;

/// The body framing of a message, as a push decoder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum BodyDecoder {
    /// `Content-Length`: bytes still to come.
    Length(u64),
    /// No length (responses only): the body ends with the connection.
    UntilClose,
    /// `Transfer-Encoding: chunked`.
    Chunked(Chunked),
    /// The body is complete.
    Done,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Chunked {
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
    /// A decoder for `Transfer-Encoding: chunked`.
    pub(crate) fn chunked() -> Self {
        BodyDecoder::Chunked(Chunked::Size {
            size: 0,
            digits: false,
            rest: false,
        })
    }

    /// A decoder for `Content-Length: length`.
    pub(crate) fn length(length: u64) -> Self {
        if length == 0 {
            BodyDecoder::Done
        } else {
            BodyDecoder::Length(length)
        }
    }

    /// True once the whole body went through.
    pub(crate) fn is_done(&self) -> bool {
        *self == BodyDecoder::Done
    }

    /// The connection ended: fine only where the framing allows it.
    pub(crate) fn finish(&mut self) -> Result<(), Malformed> {
        match self {
            BodyDecoder::UntilClose | BodyDecoder::Done => {
                *self = BodyDecoder::Done;
                Ok(())
            }
            _ => Err(Malformed),
        }
    }

    /// Decodes `input`, handing body bytes to `sink`; returns how many input
    /// bytes it used (all of them unless the body ended inside `input`; the
    /// rest belongs to what follows the body).
    pub(crate) fn decode(
        &mut self,
        input: &[u8],
        sink: &mut impl FnMut(&[u8]),
    ) -> Result<usize, Malformed> {
        let mut at = 0;
        while at < input.len() {
            let rest = &input[at..];
            match self {
                BodyDecoder::Done => break,
                BodyDecoder::UntilClose => {
                    sink(rest);
                    at = input.len();
                }
                BodyDecoder::Length(left) => {
                    let take = rest.len().min(usize::try_from(*left).unwrap_or(usize::MAX));
                    *left -= take as u64;
                    sink(&rest[..take]);
                    at += take;
                    if *left == 0 {
                        *self = BodyDecoder::Done;
                    }
                }
                BodyDecoder::Chunked(Chunked::Data(left)) => {
                    let take = rest.len().min(usize::try_from(*left).unwrap_or(usize::MAX));
                    *left -= take as u64;
                    if *left == 0 {
                        *self = BodyDecoder::Chunked(Chunked::DataEnd);
                    }
                    sink(&rest[..take]);
                    at += take;
                }
                BodyDecoder::Chunked(state) => {
                    let byte = rest[0];
                    at += 1;
                    match state {
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
                                    .ok_or(Malformed)?;
                                *digits = true;
                            }
                            b'\n' => return Err(Malformed),
                            _ if *digits => *rest = true,
                            _ => return Err(Malformed),
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
                            _ => return Err(Malformed),
                        },
                        Chunked::Trailer { line } => match byte {
                            b'\n' if !*line => *self = BodyDecoder::Done,
                            b'\n' => *line = false,
                            b'\r' => {}
                            _ => *line = true,
                        },
                        Chunked::Data(_) => unreachable!("handled above"),
                    }
                }
            }
        }
        Ok(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// True when `socket.readable()` resolves on its first poll.
    fn ready_now(socket: &TcpStream) -> bool {
        let mut ready = std::pin::pin!(socket.readable());
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        std::future::Future::poll(ready.as_mut(), &mut cx).is_ready()
    }

    #[tokio::test]
    async fn a_read_that_empties_the_socket_waits_for_more_bytes() {
        use tokio::io::AsyncWriteExt as _;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let mut peer = TcpStream::connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        let (socket, _) = listener.accept().await.unwrap();
        let read = |socket: &TcpStream| try_read_with(socket, <[u8]>::to_vec).unwrap();

        peer.write_all(b"abc").await.unwrap();
        socket.readable().await.unwrap();
        assert_eq!(read(&socket), Got::Data(b"abc".to_vec()));
        assert!(
            !ready_now(&socket),
            "after a read that left room in the buffer, readiness waits for new bytes"
        );

        peer.write_all(b"de").await.unwrap();
        socket.readable().await.unwrap();
        assert_eq!(read(&socket), Got::Data(b"de".to_vec()));

        drop(peer);
        socket.readable().await.unwrap();
        assert_eq!(read(&socket), Got::Eof, "a closed peer stays visible");
    }

    /// Decodes `wire` cut at every split point; every cut must give the
    /// same body, the same end and the same count of bytes used.
    fn decode_every_split(make: impl Fn() -> BodyDecoder, wire: &[u8]) -> (Vec<u8>, bool, usize) {
        let mut whole = None;
        for cut in 0..=wire.len() {
            let mut decoder = make();
            let mut out = Vec::new();
            let mut used = 0;
            for part in [&wire[..cut], &wire[cut..]] {
                if decoder.is_done() {
                    break;
                }
                used += decoder
                    .decode(part, &mut |d: &[u8]| out.extend_from_slice(d))
                    .unwrap();
            }
            let got = (out, decoder.is_done(), used);
            match &whole {
                None => whole = Some(got),
                Some(first) => assert_eq!(first, &got, "cut at {cut}"),
            }
        }
        whole.unwrap()
    }

    #[test]
    fn chunked_body_at_every_split_point() {
        let wire = b"6\r\ndata: \r\n18;name=v\r\n{\"a\":1}\r\n\r\n: ping 123456\r\n0\r\nX-Trailer: 1\r\n\r\nGET /next";
        let (body, done, used) = decode_every_split(BodyDecoder::chunked, wire);
        assert_eq!(body, b"data: {\"a\":1}\r\n\r\n: ping 123456");
        assert!(done);
        assert_eq!(&wire[used..], b"GET /next");
    }

    #[test]
    fn chunked_with_bare_line_feeds_and_upper_case_sizes() {
        let (body, done, _) = decode_every_split(BodyDecoder::chunked, b"A\nabcdefghij\n0\n\n");
        assert_eq!(body, b"abcdefghij");
        assert!(done);
    }

    #[test]
    fn unfinished_chunked_body_is_not_complete() {
        let (body, done, _) = decode_every_split(BodyDecoder::chunked, b"5\r\nabc");
        assert_eq!((body.as_slice(), done), (&b"abc"[..], false));
        let mut decoder = BodyDecoder::chunked();
        decoder.decode(b"5\r\nabc", &mut |_: &[u8]| {}).unwrap();
        assert_eq!(decoder.finish(), Err(Malformed));
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
            assert_eq!(
                decoder.decode(wire, &mut |_: &[u8]| {}),
                Err(Malformed),
                "{}",
                String::from_utf8_lossy(wire)
            );
        }
    }

    #[test]
    fn length_and_close_framing() {
        let (body, done, used) = decode_every_split(|| BodyDecoder::length(5), b"hello, more");
        assert_eq!((body.as_slice(), done, used), (&b"hello"[..], true, 5));
        assert!(BodyDecoder::length(0).is_done());
        let (body, done, _) = decode_every_split(|| BodyDecoder::UntilClose, b"all of it");
        assert_eq!((body.as_slice(), done), (&b"all of it"[..], false));
        assert_eq!(BodyDecoder::UntilClose.finish(), Ok(()));
        assert_eq!(BodyDecoder::length(3).finish(), Err(Malformed));
    }

    #[test]
    fn head_ends() {
        assert_eq!(head_len(b"HTTP/1.1 200 OK\r\nA: b\r\n\r\nbody"), Some(25));
        assert_eq!(head_len(b"GET / HTTP/1.1\nHost: x\n\nrest"), Some(24));
        assert_eq!(head_len(b"GET / HTTP/1.1\r\nHost: x\r\n"), None);
        assert_eq!(head_len(b""), None);
    }
}
