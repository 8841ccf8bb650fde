//! A small blocking HTTP/1.1 client for loopback tests.
//!
//! Every request is sent with `Connection: close`, so a response body ends
//! at its length, its last chunk, or the end of the connection. A streamed
//! response can be read piece by piece ([`Streaming::read_until`]) and the
//! connection dropped mid-stream ([`Streaming::hang_up`]) to test
//! disconnects. Each read has a generous socket timeout so a hung server
//! fails a test instead of hanging it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Longest a single read may block.
pub const READ_TIMEOUT: Duration = Duration::from_secs(30);

/// A request to send.
#[derive(Debug, Clone)]
pub struct Request {
    /// `GET`, `POST`, …
    pub method: String,
    /// Path and query.
    pub path: String,
    /// Extra headers (`Host`, `Content-Length` and `Connection` are added).
    pub headers: Vec<(String, String)>,
    /// Raw body.
    pub body: Vec<u8>,
}

impl Request {
    /// A `POST` of a JSON body with the headers an AG-UI client sends.
    pub fn agui(path: &str, body: &Value) -> Request {
        Request {
            method: "POST".to_owned(),
            path: path.to_owned(),
            headers: vec![
                ("Content-Type".to_owned(), "application/json".to_owned()),
                ("Accept".to_owned(), "text/event-stream".to_owned()),
            ],
            body: body.to_string().into_bytes(),
        }
    }

    /// A `GET` without body.
    pub fn get(path: &str) -> Request {
        Request {
            method: "GET".to_owned(),
            path: path.to_owned(),
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    /// Adds (or replaces) a header.
    pub fn header(mut self, name: &str, value: &str) -> Request {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Removes a header.
    pub fn without(mut self, name: &str) -> Request {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self
    }

    /// Adds `Authorization: Bearer <token>`.
    pub fn bearer(self, token: &str) -> Request {
        self.header("Authorization", &format!("Bearer {token}"))
    }

    /// Sends the request and reads the whole response.
    pub fn send(&self, addr: SocketAddr) -> Response {
        let mut streaming = self.open(addr);
        let body = streaming.read_to_end();
        Response {
            status: streaming.status,
            headers: streaming.headers.clone(),
            body,
        }
    }

    /// Sends the request and returns once the response head is read.
    pub fn open(&self, addr: SocketAddr) -> Streaming {
        let stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5))
            .unwrap_or_else(|e| panic!("connect {addr}: {e}"));
        stream.set_read_timeout(Some(READ_TIMEOUT)).ok();
        stream.set_nodelay(true).ok();
        let mut head = format!(
            "{} {} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
            self.method,
            self.path,
            self.body.len()
        );
        for (name, value) in &self.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        let mut writer = stream.try_clone().expect("clone socket");
        writer.write_all(head.as_bytes()).expect("send head");
        // The body goes out from another thread while the head is read: a
        // server may answer (413, 401) before reading all of it and close,
        // and a failed body write then is not an error of the test.
        let body = self.body.clone();
        std::thread::spawn(move || {
            let _ = writer.write_all(&body);
        });
        let mut reader = BufReader::new(stream);
        let (status, headers) = read_head(&mut reader);
        let framing = if header_of(&headers, "transfer-encoding")
            .is_some_and(|v| v.eq_ignore_ascii_case("chunked"))
        {
            Framing::Chunked
        } else if let Some(len) = header_of(&headers, "content-length") {
            Framing::Length(len.trim().parse().expect("content-length"))
        } else {
            Framing::Close
        };
        Streaming {
            reader,
            status,
            headers,
            framing,
            received: Vec::new(),
            done: false,
        }
    }
}

/// A complete response.
#[derive(Debug, Clone)]
pub struct Response {
    /// Status code.
    pub status: u16,
    /// Headers in order (names as sent).
    pub headers: Vec<(String, String)>,
    /// The de-chunked body.
    pub body: Vec<u8>,
}

impl Response {
    /// A header value (case-insensitive name).
    pub fn header(&self, name: &str) -> Option<&str> {
        header_of(&self.headers, name)
    }

    /// The body as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body as JSON.
    ///
    /// # Panics
    /// When it is not JSON.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "status {} body is not JSON ({e}): {}",
                self.status,
                self.text()
            )
        })
    }

    /// `error.code` of a JSON error body.
    pub fn error_code(&self) -> String {
        self.json()
            .pointer("/error/code")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    }
}

/// A response whose body is still arriving.
#[derive(Debug)]
pub struct Streaming {
    reader: BufReader<TcpStream>,
    /// Status code.
    pub status: u16,
    /// Headers in order.
    pub headers: Vec<(String, String)>,
    framing: Framing,
    received: Vec<u8>,
    done: bool,
}

#[derive(Debug, Clone, Copy)]
enum Framing {
    Chunked,
    Length(usize),
    Close,
}

impl Streaming {
    /// A header value (case-insensitive name).
    pub fn header(&self, name: &str) -> Option<&str> {
        header_of(&self.headers, name)
    }

    /// Everything received so far, as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.received).into_owned()
    }

    /// Reads until `done(text so far)` holds or the body ends; returns the
    /// text so far.
    ///
    /// # Panics
    /// When `limit` passes first (the message shows what arrived).
    pub fn read_until(&mut self, limit: Duration, done: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + limit;
        while !done(&self.text()) {
            assert!(
                !self.done,
                "stream ended before the expected text:\n{}",
                self.text()
            );
            assert!(
                Instant::now() < deadline,
                "nothing expected within {limit:?}; received:\n{}",
                self.text()
            );
            self.read_piece();
        }
        self.text()
    }

    /// Reads the rest of the body.
    pub fn read_to_end(&mut self) -> Vec<u8> {
        while !self.done {
            self.read_piece();
        }
        self.received.clone()
    }

    /// Closes the connection without reading further.
    pub fn hang_up(self) {
        let _ = self.reader.get_ref().shutdown(Shutdown::Both);
    }

    /// Reads one chunk (or up to 8 KiB of an unchunked body).
    fn read_piece(&mut self) {
        match self.framing {
            Framing::Chunked => {
                let mut line = String::new();
                self.reader.read_line(&mut line).expect("chunk size line");
                let size_text = line.trim().split(';').next().unwrap_or("");
                if line.is_empty() {
                    self.done = true;
                    return;
                }
                let size = usize::from_str_radix(size_text, 16)
                    .unwrap_or_else(|_| panic!("bad chunk size line {line:?}"));
                if size == 0 {
                    // Trailers end with an empty line; the server closes after.
                    let mut rest = String::new();
                    while self
                        .reader
                        .read_line(&mut rest)
                        .map(|n| n > 2)
                        .unwrap_or(false)
                    {
                        rest.clear();
                    }
                    self.done = true;
                    return;
                }
                let mut chunk = vec![0; size + 2];
                self.reader.read_exact(&mut chunk).expect("chunk data");
                assert_eq!(&chunk[size..], b"\r\n", "chunk not followed by CRLF");
                self.received.extend_from_slice(&chunk[..size]);
            }
            Framing::Length(total) => {
                let mut buf = vec![0; (total - self.received.len()).min(8192)];
                if buf.is_empty() {
                    self.done = true;
                    return;
                }
                let n = self.reader.read(&mut buf).expect("body read");
                assert!(n > 0, "connection closed before Content-Length was read");
                self.received.extend_from_slice(&buf[..n]);
                self.done = self.received.len() == total;
            }
            Framing::Close => {
                let mut buf = [0; 8192];
                let n = self.reader.read(&mut buf).unwrap_or(0);
                self.received.extend_from_slice(&buf[..n]);
                self.done = n == 0;
            }
        }
    }
}

fn read_head(reader: &mut BufReader<TcpStream>) -> (u16, Vec<(String, String)>) {
    let mut status_line = String::new();
    reader.read_line(&mut status_line).expect("status line");
    let status = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("bad status line {status_line:?}"));
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).expect("header line");
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            headers.push((name.trim().to_owned(), value.trim().to_owned()));
        }
    }
    (status, headers)
}

fn header_of<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}
