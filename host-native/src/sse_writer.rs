//! The AG-UI SSE writer (SPEC §1): one `data: <json>\n\n` record per event,
//! LF only, a `: heartbeat\n\n` comment after every interval of silence, and
//! prompt notice when the client goes away.
//!
//! A run's response body is a [`RunBody`]: it pulls the run's records
//! straight from the engine's channel when the connection asks for the
//! next chunk, so an event goes from the engine to the socket with no task
//! in between, and a burst of queued events goes out as one chunk. When the
//! connection drops the body before the run ended (the client closed its
//! connection, even while the run is silent), the body reports the
//! disconnect.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::future::Future as _;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body, Frame};
use tokio::sync::{mpsc, OwnedSemaphorePermit};
use tokio::time::{Instant, Sleep};

/// Default silence before a heartbeat comment.
pub const DEFAULT_HEARTBEAT: Duration = Duration::from_secs(15);

/// The heartbeat record: an SSE comment, not an event.
pub const HEARTBEAT: &[u8] = b": heartbeat\n\n";

/// A response body whose frames come from a channel; it ends when every
/// sender is gone (the tests' fake A2A runtimes stream with it).
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

/// What the engine sends a run's body.
#[derive(Debug)]
pub enum Record {
    /// An event (compact JSON, one line), and the credit of the A2A frame
    /// it came from: returned to the relay once the event is written.
    Event(String, Option<OwnedSemaphorePermit>),
    /// The run is over: the body ends after what is queued.
    End,
}

/// Most events one body chunk carries: a relay's whole credit.
const WRITE_BATCH: usize = crate::engine::STREAM_CREDIT;

/// The engine's end of a run's body.
#[derive(Debug)]
pub struct RunSender {
    queue: Arc<Mutex<Queue>>,
}

/// Records on their way from the engine to the connection. Unlike a
/// channel, it holds no memory while empty, which is how an open stream
/// spends nearly all of its life.
#[derive(Debug, Default)]
struct Queue {
    records: VecDeque<Record>,
    waker: Option<Waker>,
    sender_gone: bool,
    body_gone: bool,
}

impl RunSender {
    /// Queues a record for the body; `false` when the body is gone.
    pub fn send(&self, record: Record) -> bool {
        let waker = {
            let mut queue = crate::locked(&self.queue);
            if queue.body_gone {
                return false;
            }
            queue.records.push_back(record);
            queue.waker.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
        true
    }
}

impl Drop for RunSender {
    fn drop(&mut self) {
        let waker = {
            let mut queue = crate::locked(&self.queue);
            queue.sender_gone = true;
            queue.waker.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

/// The SSE response body of one run.
pub struct RunBody {
    queue: Arc<Mutex<Queue>>,
    interval: Duration,
    last_write: Instant,
    heartbeat: Pin<Box<Sleep>>,
    /// Credits of the chunk handed out last: the connection asks for the
    /// next chunk only once it has written that one.
    written: Vec<OwnedSemaphorePermit>,
    ended: bool,
    on_disconnect: Option<Box<dyn FnOnce() + Send + Sync>>,
}

impl std::fmt::Debug for RunBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunBody")
            .field("ended", &self.ended)
            .finish_non_exhaustive()
    }
}

/// A run's body and the engine's end of it: heartbeats after each
/// `interval` of silence; `on_disconnect` runs if the body is dropped before
/// the run ended (a [`Record::End`], or the sender dropped).
pub fn run_body(
    interval: Duration,
    on_disconnect: impl FnOnce() + Send + Sync + 'static,
) -> (RunSender, RunBody) {
    let queue = Arc::new(Mutex::new(Queue::default()));
    let now = Instant::now();
    let body = RunBody {
        queue: Arc::clone(&queue),
        interval,
        last_write: now,
        heartbeat: Box::pin(tokio::time::sleep_until(now + interval)),
        written: Vec::new(),
        ended: false,
        on_disconnect: Some(Box::new(on_disconnect)),
    };
    (RunSender { queue }, body)
}

impl Body for RunBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = &mut *self;
        this.written.clear();
        let mut records = Vec::new();
        {
            let mut queue = crate::locked(&this.queue);
            let mut count = 0;
            while !this.ended && count < WRITE_BATCH {
                match queue.records.pop_front() {
                    Some(Record::Event(json, credit)) => {
                        debug_assert!(!json.contains('\n'));
                        records.extend_from_slice(b"data: ");
                        records.extend_from_slice(json.as_bytes());
                        records.extend_from_slice(b"\n\n");
                        this.written.extend(credit);
                        count += 1;
                    }
                    Some(Record::End) => this.ended = true,
                    None => {
                        this.ended = queue.sender_gone;
                        break;
                    }
                }
            }
            if queue.records.is_empty() {
                queue.records = VecDeque::new();
                if !queue
                    .waker
                    .as_ref()
                    .is_some_and(|w| w.will_wake(cx.waker()))
                {
                    queue.waker = Some(cx.waker().clone());
                }
            }
        }
        if this.ended {
            // The run is over: dropping the body after this is no
            // disconnect, even before it was polled to its end.
            this.on_disconnect = None;
        }
        if !records.is_empty() {
            this.last_write = Instant::now();
            return Poll::Ready(Some(Ok(Frame::data(Bytes::from(records)))));
        }
        if this.ended {
            return Poll::Ready(None);
        }
        // Silence: the timer is re-armed lazily, not on every write.
        while this.heartbeat.as_mut().poll(cx).is_ready() {
            let due = this.last_write + this.interval;
            if due <= Instant::now() {
                this.last_write = Instant::now();
                let next = this.last_write + this.interval;
                this.heartbeat.as_mut().reset(next);
                return Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(HEARTBEAT)))));
            }
            this.heartbeat.as_mut().reset(due);
        }
        Poll::Pending
    }

    fn is_end_stream(&self) -> bool {
        self.ended
    }
}

impl Drop for RunBody {
    fn drop(&mut self) {
        {
            let mut queue = crate::locked(&self.queue);
            queue.body_gone = true;
            // Their credits go back to the relay.
            queue.records.clear();
        }
        if let Some(on_disconnect) = self.on_disconnect.take() {
            on_disconnect();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt as _;

    async fn next_frame(body: &mut RunBody) -> Option<Bytes> {
        body.frame().await.map(|f| f.unwrap().into_data().unwrap())
    }

    fn test_body(interval: Duration) -> (RunSender, RunBody, Arc<Mutex<bool>>) {
        let gone = Arc::new(Mutex::new(false));
        let flag = Arc::clone(&gone);
        let (tx, body) = run_body(interval, move || *flag.lock().unwrap() = true);
        (tx, body, gone)
    }

    fn event(json: &str) -> Record {
        Record::Event(json.to_owned(), None)
    }

    #[tokio::test(start_paused = true)]
    async fn records_use_lf_framing_and_a_burst_is_one_chunk() {
        let (tx, mut body, gone) = test_body(DEFAULT_HEARTBEAT);
        assert!(tx.send(event(r#"{"type":"RUN_STARTED"}"#)));
        assert!(tx.send(event("{}")));
        assert_eq!(
            next_frame(&mut body).await.unwrap(),
            &b"data: {\"type\":\"RUN_STARTED\"}\n\ndata: {}\n\n"[..]
        );
        assert!(tx.send(Record::End));
        assert_eq!(next_frame(&mut body).await, None, "the body ends after End");
        drop(body);
        assert!(!*gone.lock().unwrap(), "an ended run is no disconnect");
    }

    #[tokio::test(start_paused = true)]
    async fn the_last_chunk_tells_the_end_and_dropping_the_body_then_is_no_disconnect() {
        let (tx, mut body, gone) = test_body(DEFAULT_HEARTBEAT);
        assert!(tx.send(event("{}")));
        assert!(!body.is_end_stream());
        assert!(tx.send(Record::End));
        assert_eq!(next_frame(&mut body).await.unwrap(), &b"data: {}\n\n"[..]);
        assert!(body.is_end_stream(), "the connection may end the body here");
        drop(body);
        assert!(!*gone.lock().unwrap(), "the run had ended");
    }

    #[tokio::test(start_paused = true)]
    async fn credits_come_back_once_the_chunk_was_written() {
        let credits = Arc::new(tokio::sync::Semaphore::new(2));
        let (tx, mut body, _gone) = test_body(DEFAULT_HEARTBEAT);
        for _ in 0..2 {
            let credit = Arc::clone(&credits).try_acquire_owned().unwrap();
            assert!(tx.send(Record::Event("{}".into(), Some(credit))));
        }
        next_frame(&mut body).await.unwrap();
        assert_eq!(credits.available_permits(), 0, "held while being written");
        assert!(tx.send(event("{}")));
        next_frame(&mut body).await.unwrap();
        assert_eq!(credits.available_permits(), 2, "returned on the next poll");
    }

    #[tokio::test(start_paused = true)]
    async fn heartbeat_after_silence_only() {
        let (tx, mut body, _gone) = test_body(Duration::from_secs(15));
        tokio::time::sleep(Duration::from_secs(10)).await;
        assert!(tx.send(event("{}")));
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
    }

    #[tokio::test(start_paused = true)]
    async fn a_dropped_sender_ends_the_body_after_what_it_queued() {
        let (tx, mut body, gone) = test_body(DEFAULT_HEARTBEAT);
        assert!(tx.send(event("{}")));
        drop(tx);
        assert_eq!(next_frame(&mut body).await.unwrap(), &b"data: {}\n\n"[..]);
        assert_eq!(next_frame(&mut body).await, None);
        drop(body);
        assert!(!*gone.lock().unwrap());
    }

    #[tokio::test(start_paused = true)]
    async fn a_gone_body_refuses_records_and_returns_their_credits() {
        let credits = Arc::new(tokio::sync::Semaphore::new(1));
        let (tx, body, gone) = test_body(DEFAULT_HEARTBEAT);
        let credit = Arc::clone(&credits).try_acquire_owned().unwrap();
        assert!(tx.send(Record::Event("{}".into(), Some(credit))));
        drop(body);
        assert!(*gone.lock().unwrap());
        assert_eq!(credits.available_permits(), 1);
        assert!(!tx.send(event("{}")));
    }

    #[tokio::test(start_paused = true)]
    async fn dropping_the_body_early_is_a_disconnect() {
        let (_tx, body, gone) = test_body(DEFAULT_HEARTBEAT);
        drop(body);
        assert!(*gone.lock().unwrap());
    }
}
