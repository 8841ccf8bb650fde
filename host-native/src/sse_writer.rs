//! The AG-UI SSE writer (SPEC §1): one `data: <json>\n\n` record per event,
//! LF only, each record its own body frame (so hyper flushes it at once), a
//! `: heartbeat\n\n` comment after every interval of silence, and prompt
//! notice when the client goes away.
//!
//! The response body is a [`ChannelBody`] fed by an [`SseSink`]. When hyper
//! drops the body (the client closed its connection, even while the run is
//! silent), the channel closes and [`SseSink::closed`] resolves: the run
//! driver turns that into the core's disconnect input.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body, Frame};
use tokio::sync::mpsc;
use tokio::time::Instant;

/// Default silence before a heartbeat comment.
pub const DEFAULT_HEARTBEAT: Duration = Duration::from_secs(15);

/// The heartbeat record: an SSE comment, not an event.
pub const HEARTBEAT: &[u8] = b": heartbeat\n\n";

/// Frames queued ahead of a slow client before the run waits for it.
const QUEUE: usize = 64;

/// A response body whose frames come from a channel; it ends when every
/// sender is gone.
#[derive(Debug)]
pub struct ChannelBody {
    rx: mpsc::Receiver<Bytes>,
}

impl ChannelBody {
    /// Wraps a receiver.
    pub fn new(rx: mpsc::Receiver<Bytes>) -> Self {
        ChannelBody { rx }
    }
}

impl Body for ChannelBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.rx
            .poll_recv(cx)
            .map(|chunk| chunk.map(|b| Ok(Frame::data(b))))
    }
}

/// The client went away; nothing more can be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Disconnected;

/// The writing end of one SSE response.
#[derive(Debug)]
pub struct SseSink {
    tx: mpsc::Sender<Bytes>,
    last_write: Arc<Mutex<Instant>>,
    heartbeat: tokio::task::JoinHandle<()>,
}

impl SseSink {
    /// A sink and the body to put in the response. Heartbeats start now.
    pub fn new(interval: Duration) -> (SseSink, ChannelBody) {
        let (tx, rx) = mpsc::channel(QUEUE);
        let last_write = Arc::new(Mutex::new(Instant::now()));
        let heartbeat = tokio::spawn(heartbeat(tx.clone(), Arc::clone(&last_write), interval));
        (
            SseSink {
                tx,
                last_write,
                heartbeat,
            },
            ChannelBody::new(rx),
        )
    }

    /// Writes one event record (`json` must be compact, one line).
    ///
    /// # Errors
    /// [`Disconnected`] when the client is gone.
    pub async fn send_json(&self, json: &str) -> Result<(), Disconnected> {
        self.send_all([json]).await
    }

    /// Writes event records as one body chunk, so that a burst of events
    /// costs one wake-up of the connection and one write.
    ///
    /// # Errors
    /// [`Disconnected`] when the client is gone.
    pub async fn send_all<'a>(
        &self,
        jsons: impl IntoIterator<Item = &'a str>,
    ) -> Result<(), Disconnected> {
        let mut records = Vec::new();
        for json in jsons {
            debug_assert!(!json.contains('\n'));
            records.extend_from_slice(b"data: ");
            records.extend_from_slice(json.as_bytes());
            records.extend_from_slice(b"\n\n");
        }
        self.tx
            .send(Bytes::from(records))
            .await
            .map_err(|_| Disconnected)?;
        *self.last_write.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
        Ok(())
    }

    /// Resolves when the client has gone away.
    pub async fn closed(&self) {
        self.tx.closed().await;
    }

    /// True once the client has gone away.
    pub fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }

    /// Ends the stream: no more heartbeats; the body ends once queued
    /// records are written.
    pub fn finish(self) {
        // Drop does the work.
    }
}

impl Drop for SseSink {
    fn drop(&mut self) {
        self.heartbeat.abort();
    }
}

async fn heartbeat(tx: mpsc::Sender<Bytes>, last_write: Arc<Mutex<Instant>>, interval: Duration) {
    loop {
        let due = *last_write.lock().unwrap_or_else(|e| e.into_inner()) + interval;
        tokio::select! {
            () = tokio::time::sleep_until(due) => {}
            () = tx.closed() => return,
        }
        let mut last = last_write
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .to_owned();
        if last + interval <= Instant::now() {
            if tx.send(Bytes::from_static(HEARTBEAT)).await.is_err() {
                return;
            }
            last = Instant::now();
            *last_write.lock().unwrap_or_else(|e| e.into_inner()) = last;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt as _;

    async fn next_frame(body: &mut ChannelBody) -> Option<Bytes> {
        body.frame().await.map(|f| f.unwrap().into_data().unwrap())
    }

    #[tokio::test(start_paused = true)]
    async fn records_use_lf_framing() {
        let (sink, mut body) = SseSink::new(DEFAULT_HEARTBEAT);
        sink.send_json(r#"{"type":"RUN_STARTED"}"#).await.unwrap();
        assert_eq!(
            next_frame(&mut body).await.unwrap(),
            &b"data: {\"type\":\"RUN_STARTED\"}\n\n"[..]
        );
        sink.finish();
        assert_eq!(
            next_frame(&mut body).await,
            None,
            "the body ends after finish"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn heartbeat_after_silence_only() {
        let (sink, mut body) = SseSink::new(Duration::from_secs(15));
        tokio::time::sleep(Duration::from_secs(10)).await;
        sink.send_json("{}").await.unwrap();
        assert_eq!(next_frame(&mut body).await.unwrap(), &b"data: {}\n\n"[..]);
        let start = Instant::now();
        assert_eq!(next_frame(&mut body).await.unwrap(), HEARTBEAT);
        assert_eq!(
            start.elapsed(),
            Duration::from_secs(15),
            "15 s after the last event"
        );
        assert_eq!(next_frame(&mut body).await.unwrap(), HEARTBEAT);
        assert_eq!(
            start.elapsed(),
            Duration::from_secs(30),
            "and every 15 s of silence"
        );
        drop(sink);
    }

    #[tokio::test(start_paused = true)]
    async fn dropping_the_body_is_seen_as_disconnect() {
        let (sink, body) = SseSink::new(DEFAULT_HEARTBEAT);
        assert!(!sink.is_closed());
        drop(body);
        sink.closed().await;
        assert_eq!(sink.send_json("{}").await, Err(Disconnected));
    }
}
