//! The player: plays a scenario's steps on a task, writes the frames to the
//! caller's stream and to SubscribeToTask streams, and folds them into the
//! task store.
//!
//! A run owns the task while it plays (`TaskRecord::run`). It stops early when
//! CancelTask fires its signal, and pushes the CANCELED frame itself so that
//! the open stream sees it. A client that goes away does not stop a run: the
//! real runtime keeps working, which is what pipeline recovery relies on.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use iac_agui_core::a2a::StreamResponse;
use serde_json::{json, Value};
use tokio::sync::{mpsc, oneshot, Notify};
use tokio::task::JoinHandle;

use crate::frames::{floatify_response, TurnIds};
use crate::metronome::Metronome;
use crate::sse::{data_event, error_event};
use crate::store::{RunControl, Signal, Store, Subscriber, Wait};
use crate::Shared;

/// Chunks are flushed to the socket once they reach this size (and before
/// every pause), so that load scenarios are not one syscall per frame.
const FLUSH_BYTES: usize = 32 * 1024;

/// The last deltas of a load run go through the store, so that GetTask
/// history and status end up as if every delta had.
const HISTORY_TAIL: u64 = 256;

/// One step of a scenario.
// A script holds a few dozen steps (the load scenario is one `Deltas` step),
// so boxing the frames would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub(crate) enum Step {
    /// Emit this frame.
    Frame(StreamResponse),
    /// Emit `count` text deltas (`delta-<i> `) as fast as the client reads.
    Deltas { ids: TurnIds, count: u64 },
    /// Emit `count` text deltas, one `every` interval, each sent at once
    /// and stamped with its send time (`tick-<i>@<Unix µs> `), so a client
    /// can measure what lies between the runtime and itself. With `exact`
    /// each tick goes out at its own time ([`Metronome`]), else on tokio's
    /// millisecond beat.
    Ticks {
        ids: TurnIds,
        count: u64,
        every: Duration,
        exact: bool,
    },
    /// Emit a mid-stream JSON-RPC error event.
    ErrorFrame(Value),
    /// Say nothing for a while (keep-alive comments still flow).
    Sleep(Duration),
    /// Hold the stream open until CancelTask.
    HoldUntilCancel,
    /// Wait (bounded) until a SubscribeToTask stream attaches, so that a
    /// continuation is seen live rather than only through recovery.
    AwaitSubscriber(Duration),
    /// Hold, WORKING, until a side-band answer supplies the next steps.
    AwaitAnswer,
    /// Emit this frame and, in the same store update, make the task wait
    /// for the input it announces (so no answer can come too early).
    Interrupt(StreamResponse, Wait),
    /// Append an envelope to the pipeline journal without streaming it (the
    /// real runtime's `pending_backup` copies).
    Journal(Value),
}

/// Where a run writes: the caller's stream and its JSON-RPC request id.
#[derive(Debug)]
pub(crate) struct Sink {
    pub(crate) id_json: String,
    pub(crate) tx: mpsc::Sender<Bytes>,
}

/// Installs a run on `task_id` and spawns it. Call with the store locked so
/// that no other request sees the task between the decision and the run.
pub(crate) fn start(
    shared: &Arc<Shared>,
    store: &mut Store,
    task_id: &str,
    steps: Vec<Step>,
    sink: Option<Sink>,
) -> JoinHandle<()> {
    let cancel = Arc::new(Signal::default());
    let joined = Arc::new(Notify::new());
    if let Some(record) = store.tasks.get_mut(task_id) {
        record.run = Some(RunControl {
            cancel: Arc::clone(&cancel),
            subscribers: Vec::new(),
            answer: None,
            joined: Arc::clone(&joined),
            abort: None,
        });
        record.exec_status = "working";
    }
    let player = Player {
        shared: Arc::clone(shared),
        task_id: task_id.to_owned(),
        sink,
        buf: BytesMut::new(),
        cancel,
        joined,
        answer: None,
    };
    let handle = tokio::spawn(player.play(steps.into()));
    if let Some(run) = store.tasks.get_mut(task_id).and_then(|r| r.run.as_mut()) {
        run.abort = Some(handle.abort_handle());
    }
    handle
}

struct Player {
    shared: Arc<Shared>,
    task_id: String,
    sink: Option<Sink>,
    buf: BytesMut,
    cancel: Arc<Signal>,
    joined: Arc<Notify>,
    /// Where a side-band answer's continuation arrives.
    answer: Option<oneshot::Receiver<Vec<Step>>>,
}

impl Player {
    async fn play(mut self, mut queue: VecDeque<Step>) {
        while let Some(step) = queue.pop_front() {
            if self.cancel.is_set() {
                break;
            }
            match step {
                Step::Frame(frame) => self.emit(frame).await,
                Step::Deltas { ids, count } => self.deltas(&ids, count).await,
                Step::Ticks {
                    ids,
                    count,
                    every,
                    exact,
                } => self.ticks(&ids, count, Metronome::new(every, exact)).await,
                Step::ErrorFrame(error) => {
                    let error_json = error.to_string();
                    if let Some(sink) = &self.sink {
                        self.buf
                            .extend_from_slice(error_event(&error_json, &sink.id_json).as_bytes());
                    }
                }
                Step::Sleep(duration) => {
                    self.flush().await;
                    tokio::select! {
                        _ = tokio::time::sleep(duration) => {}
                        _ = self.cancel.wait() => {}
                    }
                }
                Step::HoldUntilCancel => {
                    self.flush().await;
                    self.cancel.wait().await;
                }
                Step::AwaitSubscriber(grace) => {
                    self.flush().await;
                    tokio::select! {
                        _ = self.joined.notified() => {}
                        _ = tokio::time::sleep(grace) => {}
                        _ = self.cancel.wait() => {}
                    }
                }
                Step::AwaitAnswer => {
                    self.flush().await;
                    let Some(rx) = self.answer.take() else {
                        continue;
                    };
                    tokio::select! {
                        more = rx => {
                            if let Ok(more) = more {
                                queue.extend(more);
                            }
                        }
                        _ = self.cancel.wait() => {}
                    }
                }
                Step::Interrupt(frame, wait) => self.emit_with(frame, Some(wait)).await,
                Step::Journal(envelope) => {
                    let mut store = self.shared.lock();
                    if let Some(pipeline) = store
                        .tasks
                        .get_mut(&self.task_id)
                        .and_then(|r| r.pipeline.as_mut())
                    {
                        pipeline.journal.push(envelope);
                    }
                }
            }
        }
        if self.cancel.is_set() {
            let frame = {
                let store = self.shared.lock();
                store.tasks.get(&self.task_id).map(|record| {
                    record.ids.update(
                        record.status.state.clone(),
                        record.status.message.as_deref().cloned(),
                        record.status.timestamp.clone(),
                        record.ids.with_session(json!({})),
                    )
                })
            };
            if let Some(frame) = frame {
                self.emit(frame).await;
            }
        }
        {
            // End the run before the last bytes go out: a client that answers
            // as soon as it reads the final frame must find the task parked.
            let mut store = self.shared.lock();
            if let Some(record) = store.tasks.get_mut(&self.task_id) {
                let ours = record
                    .run
                    .as_ref()
                    .is_some_and(|run| Arc::ptr_eq(&run.cancel, &self.cancel));
                if ours {
                    record.end_run();
                }
            }
        }
        self.flush().await;
    }

    async fn emit(&mut self, frame: StreamResponse) {
        self.emit_with(frame, None).await;
    }

    async fn emit_with(&mut self, mut frame: StreamResponse, wait: Option<Wait>) {
        let subscribers: Vec<Subscriber> = {
            let mut store = self.shared.lock();
            store.apply(&self.task_id, &frame);
            let Some(record) = store.tasks.get_mut(&self.task_id) else {
                return;
            };
            if let Some(wait) = wait {
                if let Wait::Sideband { input, .. } = &wait {
                    record
                        .meta
                        .insert("pendingPermissions".to_owned(), json!([input]));
                    let (tx, rx) = oneshot::channel();
                    if let Some(run) = &mut record.run {
                        run.answer = Some(tx);
                    }
                    self.answer = Some(rx);
                }
                record.wait = Some(wait);
            }
            record
                .run
                .as_ref()
                .map(|run| run.subscribers.clone())
                .unwrap_or_default()
        };
        if self.sink.is_none() && subscribers.is_empty() {
            return;
        }
        floatify_response(&mut frame);
        let Ok(result_json) = serde_json::to_string(&frame) else {
            return;
        };
        if let Some(sink) = &self.sink {
            self.buf
                .extend_from_slice(data_event(&result_json, &sink.id_json).as_bytes());
            if self.buf.len() >= FLUSH_BYTES {
                self.flush().await;
            }
        }
        for subscriber in subscribers {
            let event = data_event(&result_json, &subscriber.id_json);
            // A subscriber that went away is not an error for the run.
            let _ = subscriber.tx.send(Bytes::from(event)).await;
        }
    }

    /// The load scenario's deltas. Frames differ only in their text, so the
    /// JSON is rendered once and the text spliced in; the task store sees
    /// only the deltas it keeps in history, and subscribers get the slow path.
    async fn deltas(&mut self, ids: &TurnIds, count: u64) {
        let mut probe = ids.text("\u{1}");
        floatify_response(&mut probe);
        let rendered = serde_json::to_string(&probe).unwrap_or_default();
        let template = rendered
            .split_once("\\u0001")
            .map(|(a, b)| (a.to_owned(), b.to_owned()));
        for i in 0..count {
            if self.cancel.is_set() {
                break;
            }
            let text = delta_text(i);
            let fast = match (&template, &self.sink) {
                (Some((pre, post)), Some(sink))
                    if count - i > HISTORY_TAIL && !self.has_subscribers() =>
                {
                    let result_json = format!("{pre}{text}{post}");
                    self.buf
                        .extend_from_slice(data_event(&result_json, &sink.id_json).as_bytes());
                    true
                }
                _ => false,
            };
            if fast {
                if self.buf.len() >= FLUSH_BYTES {
                    self.flush().await;
                }
            } else {
                self.emit(ids.text(&text)).await;
            }
        }
    }

    async fn ticks(&mut self, ids: &TurnIds, count: u64, mut beat: Metronome) {
        for i in 0..count {
            tokio::select! {
                () = beat.next() => {}
                () = self.cancel.wait() => break,
            }
            self.emit(ids.text(&tick_text(i))).await;
            self.flush().await;
        }
    }

    fn has_subscribers(&self) -> bool {
        let store = self.shared.lock();
        store
            .tasks
            .get(&self.task_id)
            .and_then(|r| r.run.as_ref())
            .is_some_and(|run| !run.subscribers.is_empty())
    }

    async fn flush(&mut self) {
        if self.buf.is_empty() {
            return;
        }
        let chunk = self.buf.split().freeze();
        let gone = match &self.sink {
            Some(sink) => sink.tx.send(chunk).await.is_err(),
            None => false,
        };
        if gone {
            // The client left; keep playing so the task state advances.
            self.sink = None;
        }
    }
}

/// The text of tick number `i`, stamped with the wall clock.
fn tick_text(i: u64) -> String {
    let micros = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros());
    format!("tick-{i}@{micros} ")
}

/// The text of delta number `i` in the `deltas:<N>` scenario.
pub(crate) fn delta_text(i: u64) -> String {
    format!("delta-{i} ")
}
