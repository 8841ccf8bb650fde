//! Response bodies: a whole JSON body, or an SSE stream framed the way
//! sse-starlette frames the real runtime's (CRLF line ends, one `data:` line
//! per event, `: ping - <time>` comments on an interval).

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Frame, SizeHint};
use tokio::sync::mpsc;
use tokio::time::{Instant, Interval, MissedTickBehavior};

use crate::clock::ping_time;

/// One `data:` event whose JSON-RPC `result` is `result_json`.
pub(crate) fn data_event(result_json: &str, id_json: &str) -> String {
    format!("data: {{\"result\":{result_json},\"id\":{id_json},\"jsonrpc\":\"2.0\"}}\r\n\r\n")
}

/// A mid-stream error event (`event: error` + `data: {"error":…}`).
pub(crate) fn error_event(error_json: &str, id_json: &str) -> String {
    format!("event: error\r\ndata: {{\"error\":{error_json},\"id\":{id_json},\"jsonrpc\":\"2.0\"}}\r\n\r\n")
}

/// A response body.
#[derive(Debug)]
pub(crate) enum Body {
    /// A complete body (JSON).
    Full(Option<Bytes>),
    /// An SSE stream.
    Stream(SseStream),
}

impl Body {
    pub(crate) fn full(bytes: impl Into<Bytes>) -> Self {
        Body::Full(Some(bytes.into()))
    }
}

/// Event chunks from a channel, with keep-alive comments while it is quiet.
#[derive(Debug)]
pub(crate) struct SseStream {
    rx: mpsc::Receiver<Bytes>,
    ping: Option<Interval>,
}

impl SseStream {
    /// A stream of the chunks sent on `rx`; it ends when every sender is
    /// dropped. `ping` of zero turns keep-alive comments off.
    pub(crate) fn new(rx: mpsc::Receiver<Bytes>, ping: Duration) -> Self {
        let ping = (!ping.is_zero()).then(|| {
            let mut interval = tokio::time::interval_at(Instant::now() + ping, ping);
            interval.set_missed_tick_behavior(MissedTickBehavior::Delay);
            interval
        });
        SseStream { rx, ping }
    }
}

impl http_body::Body for Body {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.get_mut() {
            Body::Full(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            Body::Stream(stream) => {
                if let Poll::Ready(chunk) = stream.rx.poll_recv(cx) {
                    return Poll::Ready(chunk.map(|b| Ok(Frame::data(b))));
                }
                if let Some(ping) = &mut stream.ping {
                    if ping.poll_tick(cx).is_ready() {
                        let comment = format!(": ping - {}\r\n\r\n", ping_time());
                        return Poll::Ready(Some(Ok(Frame::data(Bytes::from(comment)))));
                    }
                }
                Poll::Pending
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self, Body::Full(None))
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            Body::Full(Some(b)) => SizeHint::with_exact(b.len() as u64),
            Body::Full(None) => SizeHint::with_exact(0),
            Body::Stream(_) => SizeHint::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_use_crlf_and_put_result_first() {
        assert_eq!(
            data_event("{\"task\":{}}", "\"r1\""),
            "data: {\"result\":{\"task\":{}},\"id\":\"r1\",\"jsonrpc\":\"2.0\"}\r\n\r\n"
        );
        assert!(
            error_event("{\"code\":-32603}", "7").starts_with("event: error\r\ndata: {\"error\":")
        );
    }
}
