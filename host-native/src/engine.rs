//! The host loop around the core's thread [`Machine`]: an actor task owns a
//! machine; it feeds inputs (requests, cancels, disconnects, timers,
//! shutdown, effect outcomes), drains outputs and performs them.
//!
//! Threads are independent of each other, so the engine runs one actor
//! ("shard") per event loop (`crate::loops`), each with its own machine,
//! and sends every request of a thread to the same shard (by a hash of its
//! id): runs on different threads are mapped in parallel and never queue
//! behind each other's frames on one task.
//!
//! Performing never blocks the actor: persists, A2A calls and streams run on
//! their own tasks and come back as [`Answer`]s; events are queued for the
//! run's SSE body, which the client's connection drains (a slow client only
//! slows its own run) and which reports a gone client as a disconnect.
//! Persists of one
//! thread are chained so they hit the disk in the order the machine issued
//! them. The host decides nothing: every protocol choice is the machine's.
//!
//! Backpressure: each A2A stream relay holds [`STREAM_CREDIT`] credits and
//! spends one per frame. The frames of one read go to the actor together
//! (the machine maps them together, see `Machine::handle_frames`), with
//! their credits, which then ride on the first event they emit; the run's
//! body gives them back once the chunk with that event is written to the
//! client (or at once when the frames emit nothing). So a relay stops
//! reading its A2A stream while the actor or its run's client is behind,
//! the actor's channel and each run's queue hold at most a few credits'
//! worth of frames, and the actor itself never awaits a send (requests,
//! disconnects and timers are never stuck behind a full queue).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use foldhash::{HashMap, HashMapExt as _};
use iac_agui_core::a2a::{Method, StreamFrame};
use iac_agui_core::machine::{Answer, Config, EffectId, Load, Machine, Output};
use iac_agui_core::validate::ValidatedRun;
use iac_agui_core::Language;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot, watch, OwnedSemaphorePermit, Semaphore};
use tokio::task::{AbortHandle, JoinHandle};

use crate::a2a_client::{A2aClient, A2aError, A2aStream};
use crate::loops::{EventLoops, Home};
use crate::sse_writer::{run_body, Record, RunBody, RunSender};
use crate::store::StateStore;

/// Frames one A2A stream may have in flight (queued for the actor, or
/// mapped into events not yet handed to the client's SSE body) before its
/// relay stops reading the stream. At 32, a busy stream reached the client
/// in writes of about 16 events; at 128 the kernel time per relayed event
/// fell by about half (BENCHMARKS.md), for at most 128 frames held per
/// stream whose client is behind.
pub const STREAM_CREDIT: usize = 128;

/// Most frames a relay hands to its actor in one message (frames that
/// arrived together: one wake-up of the actor, and one write for what they
/// teach the machine).
const RELAY_BATCH: usize = STREAM_CREDIT / 2;

/// How long a `CancelTask` may take before it counts as failed; the cancel
/// extension's answer waits for it.
const CANCEL_TASK_TIMEOUT: Duration = Duration::from_secs(10);

/// How admission ended for one request.
#[derive(Debug)]
pub enum Admission {
    /// Admitted: the SSE body to answer with, and the event loop it is best
    /// written from (the run's; `None` when the engine runs on one runtime).
    Stream(RunBody, Option<Home>),
    /// Refused before the stream: status and JSON error envelope.
    Refused {
        /// HTTP status.
        status: u16,
        /// `{"error":{…}}`.
        body: Value,
    },
    /// The engine is gone (the server is stopping).
    Unavailable,
}

/// A handle to the engine's actors.
#[derive(Debug, Clone)]
pub struct Engine {
    shards: Arc<[Shard]>,
}

#[derive(Debug)]
struct Shard {
    tx: mpsc::UnboundedSender<Msg>,
    idle: watch::Receiver<bool>,
    /// The event loop its actor runs on.
    home: Option<Home>,
}

/// What the engine needs from the rest of the host.
#[derive(Debug, Clone)]
pub struct EngineDeps {
    /// Thread documents.
    pub store: Arc<StateStore>,
    /// The A2A runtime.
    pub a2a: A2aClient,
    /// SSE heartbeat interval.
    pub heartbeat: Duration,
    /// Interrupt TTL.
    pub interrupt_ttl: Duration,
}

enum Msg {
    Run {
        run: Box<ValidatedRun>,
        cwd: String,
        load: Load,
        reply: oneshot::Sender<Admission>,
    },
    Cancel {
        execution_id: String,
        thread_id: String,
        ros_invocation_id: String,
        language: Language,
        load: Load,
        reply: oneshot::Sender<(u16, Value)>,
    },
    Answer(EffectId, Answer),
    /// A2A stream frames that came in one read (parsed on the relay's
    /// task, off the actor), with the relay credits they spent.
    Frames(EffectId, Vec<StreamFrame>, OwnedSemaphorePermit),
    Disconnected(RunKey),
}

/// A run's thread and run ids, shared with the machine's outputs.
type RunKey = (Arc<str>, Arc<str>);

impl Engine {
    /// Starts one actor per event loop of `loops`, or, without loops, one
    /// per available core on the current runtime. They stop their runs
    /// (RUN_ERROR) when `shutdown` turns true and end when every handle is
    /// gone.
    pub fn start(
        deps: EngineDeps,
        shutdown: watch::Receiver<bool>,
        loops: Option<&EventLoops>,
    ) -> Engine {
        let homes: Vec<Option<Home>> = match loops {
            Some(loops) => loops.homes().iter().cloned().map(Some).collect(),
            None => {
                let count = std::thread::available_parallelism().map_or(1, |n| n.get().min(16));
                vec![None; count]
            }
        };
        let shards = homes
            .into_iter()
            .enumerate()
            .map(|(index, home)| Shard::start(deps.clone(), shutdown.clone(), index as u64, home))
            .collect();
        Engine { shards }
    }

    /// The event loop where the runs of `thread_id` live (`None`: the
    /// engine runs on the caller's runtime).
    pub fn home(&self, thread_id: &str) -> Option<&Home> {
        self.shard(thread_id).home.as_ref()
    }

    /// The shard that owns `thread_id`.
    fn shard(&self, thread_id: &str) -> &Shard {
        // FNV-1a: stable, and cheap for short ids.
        let hash = thread_id.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        &self.shards[(hash % self.shards.len() as u64) as usize]
    }
}

impl Shard {
    fn start(
        deps: EngineDeps,
        shutdown: watch::Receiver<bool>,
        index: u64,
        home: Option<Home>,
    ) -> Shard {
        let (tx, rx) = mpsc::unbounded_channel();
        let (idle_tx, idle) = watch::channel(true);
        let mut seed = [0u8; 8];
        // Ids only need to be unique; a failed random source falls back to
        // the clock.
        if getrandom::fill(&mut seed).is_err() {
            seed = (now_ms() as u64).to_le_bytes();
        }
        let config = Config {
            interrupt_ttl_ms: deps.interrupt_ttl.as_millis() as i64,
        };
        let actor = Actor {
            machine: Machine::new(config, u64::from_le_bytes(seed) ^ index),
            self_tx: tx.downgrade(),
            deps,
            admitting: HashMap::new(),
            runs: HashMap::new(),
            cancels: HashMap::new(),
            streams: HashMap::new(),
            persists: HashMap::new(),
            persist_threads: HashMap::new(),
            credit: None,
            idle: idle_tx,
            home: home.clone(),
        };
        // The actor's own tasks (relays, persists) go where it runs.
        match &home {
            Some(home) => drop(home.spawn(actor.run(rx, shutdown))),
            None => drop(tokio::spawn(actor.run(rx, shutdown))),
        }
        Shard { tx, idle, home }
    }
}

impl Engine {
    /// Admits a validated request (SPEC §5); `cwd` is the resolved workspace
    /// and `load` the thread's stored document.
    pub async fn run(&self, run: ValidatedRun, cwd: String, load: Load) -> Admission {
        let (reply, answer) = oneshot::channel();
        let shard = self.shard(&run.input.thread_id);
        let msg = Msg::Run {
            run: Box::new(run),
            cwd,
            load,
            reply,
        };
        if shard.tx.send(msg).is_err() {
            return Admission::Unavailable;
        }
        answer.await.unwrap_or(Admission::Unavailable)
    }

    /// The cancel extension (SPEC §9): `(status, body)`, or `None` when the
    /// engine is gone.
    pub async fn cancel(
        &self,
        execution_id: &str,
        thread_id: &str,
        ros_invocation_id: &str,
        language: Language,
        load: Load,
    ) -> Option<(u16, Value)> {
        let (reply, answer) = oneshot::channel();
        self.shard(thread_id)
            .tx
            .send(Msg::Cancel {
                execution_id: execution_id.to_owned(),
                thread_id: thread_id.to_owned(),
                ros_invocation_id: ros_invocation_id.to_owned(),
                language,
                load,
                reply,
            })
            .ok()?;
        answer.await.ok()
    }

    /// True when no run is active or admitting and no loaded thread has a
    /// pending interrupt.
    pub fn is_idle(&self) -> bool {
        self.shards.iter().all(|shard| *shard.idle.borrow())
    }
}

/// Reads a thread's stored document for the machine.
pub async fn load(store: &Arc<StateStore>, thread_id: &str) -> Load {
    let mut guard = store.lock(thread_id).await;
    match guard.document().await {
        Ok(Some(document)) => Load::Found(document.clone()),
        Ok(None) => Load::Missing,
        Err(error) => {
            tracing::warn!(thread_id, %error, "thread state unreadable");
            Load::Unreadable
        }
    }
}

/// Unix milliseconds from the host clock (the core never reads a clock).
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

struct Actor {
    machine: Machine,
    self_tx: mpsc::WeakUnboundedSender<Msg>,
    deps: EngineDeps,
    admitting: HashMap<RunKey, oneshot::Sender<Admission>>,
    runs: HashMap<RunKey, RunHandle>,
    cancels: HashMap<u64, oneshot::Sender<(u16, Value)>>,
    streams: HashMap<EffectId, AbortHandle>,
    persists: HashMap<String, JoinHandle<()>>,
    persist_threads: HashMap<EffectId, String>,
    /// The credits of the frames being mapped; the first event they emit
    /// carries them to the run's body.
    credit: Option<OwnedSemaphorePermit>,
    idle: watch::Sender<bool>,
    /// The event loop this actor runs on.
    home: Option<Home>,
}

struct RunHandle {
    tx: RunSender,
    started: Instant,
    code: Option<String>,
}

impl Actor {
    async fn run(
        mut self,
        mut rx: mpsc::UnboundedReceiver<Msg>,
        mut shutdown: watch::Receiver<bool>,
    ) {
        let mut stopping = false;
        loop {
            let deadline = self.machine.poll_timeout();
            let sleep = deadline.map(|at| Duration::from_millis((at - now_ms()).max(0) as u64 + 1));
            tokio::select! {
                msg = rx.recv() => match msg {
                    Some(msg) => self.handle(msg),
                    None => return,
                },
                () = sleep_for(sleep) => self.machine.handle_timeout(now_ms()),
                _ = shutdown.wait_for(|stop| *stop), if !stopping => {
                    stopping = true;
                    self.machine.handle_shutdown(now_ms());
                }
            }
            self.perform_all(None);
            // Frames that emitted nothing give their credits back now.
            self.credit = None;
            self.idle.send_if_modified(|idle| {
                let now = self.machine.is_idle();
                std::mem::replace(idle, now) != now
            });
        }
    }

    fn handle(&mut self, msg: Msg) {
        let now = now_ms();
        match msg {
            Msg::Run {
                run,
                cwd,
                load,
                reply,
            } => {
                let key: RunKey = (
                    run.input.thread_id.as_str().into(),
                    run.input.run_id.as_str().into(),
                );
                self.machine.handle_run_request(now, *run, &cwd, load);
                // A decision in this very drain belongs to this request; a
                // later one (after the admission persist) to the waiter.
                let mut mine = Some((key.clone(), reply));
                self.perform_all(Some(&mut mine));
                if let Some((key, reply)) = mine {
                    self.admitting.insert(key, reply);
                }
            }
            Msg::Cancel {
                execution_id,
                thread_id,
                ros_invocation_id,
                language,
                load,
                reply,
            } => {
                let ticket = self.machine.handle_cancel(
                    now,
                    &execution_id,
                    &thread_id,
                    &ros_invocation_id,
                    language,
                    load,
                );
                self.cancels.insert(ticket, reply);
            }
            Msg::Answer(id, answer) => {
                if matches!(answer, Answer::StreamEnded | Answer::Failed) {
                    self.streams.remove(&id);
                }
                let persisted = matches!(answer, Answer::Persisted { ok: true });
                let thread = self.persist_threads.remove(&id);
                self.machine.handle_answer(now, id, answer);
                if let Some(thread) = thread.filter(|_| persisted) {
                    self.evict_if_settled(&thread);
                }
            }
            Msg::Frames(id, frames, credit) => {
                self.credit = Some(credit);
                self.machine.handle_frames(now, id, frames);
            }
            Msg::Disconnected((thread_id, run_id)) => {
                self.machine.handle_disconnect(now, &thread_id, &run_id);
            }
        }
    }

    /// Drains and performs every output. `mine` is the request whose
    /// admission may be decided in this drain.
    fn perform_all(&mut self, mut mine: Option<&mut Option<(RunKey, oneshot::Sender<Admission>)>>) {
        while let Some(output) = self.machine.poll_output() {
            self.perform(output, mine.as_deref_mut());
        }
    }

    fn perform(
        &mut self,
        output: Output,
        mine: Option<&mut Option<(RunKey, oneshot::Sender<Admission>)>>,
    ) {
        match output {
            Output::Admitted { thread_id, run_id } => {
                let key = (thread_id, run_id);
                let (engine, gone) = (self.self_tx.clone(), key.clone());
                let (tx, body) = run_body(self.deps.heartbeat, move || {
                    send(&engine, Msg::Disconnected(gone));
                });
                self.runs.insert(
                    key.clone(),
                    RunHandle {
                        tx,
                        started: Instant::now(),
                        code: None,
                    },
                );
                // A requester that went away drops the body, which reports
                // the disconnect.
                let _ = self
                    .reply_to(&key, mine)
                    .map(|r| r.send(Admission::Stream(body, self.home.clone())));
            }
            Output::Refused {
                thread_id,
                run_id,
                status,
                body,
            } => {
                let key = (thread_id, run_id);
                if let Some(reply) = self.reply_to(&key, mine) {
                    let _ = reply.send(Admission::Refused { status, body });
                }
            }
            Output::Emit {
                thread_id,
                run_id,
                event,
            } => {
                if let Some(run) = self.runs.get_mut(&(thread_id, run_id)) {
                    if let iac_agui_core::agui::EventBody::RunError { code, .. } = &event.body {
                        run.code = code.clone();
                    }
                    let credit = self.credit.take();
                    let _ = run.tx.send(Record::Event(event.to_json(), credit));
                }
            }
            Output::RunEnded { thread_id, run_id } => {
                let key = (thread_id, run_id);
                if let Some(run) = self.runs.remove(&key) {
                    let _ = run.tx.send(Record::End);
                    tracing::info!(
                        target: "iac_agui::run",
                        thread_id = %key.0,
                        run_id = %key.1,
                        code = run.code.as_deref().unwrap_or("OK"),
                        duration_ms = run.started.elapsed().as_millis() as u64,
                        "run ended"
                    );
                }
            }
            Output::Persist {
                id,
                thread_id,
                document,
            } => {
                // Written while its run's request waits for an answer: the
                // admission, before the client's first byte.
                let admission = mine
                    .as_deref()
                    .is_some_and(|m| m.as_ref().is_some_and(|(key, _)| *key.0 == *thread_id));
                self.persist(id, thread_id, document.into_bytes(), admission)
            }
            Output::A2a {
                id,
                streaming,
                request,
            } => {
                let client = self.deps.a2a.clone();
                let tx = self.self_tx.clone();
                let request = request.0;
                tracing::debug!(method = %request.method, effect = id, "A2A call");
                if streaming {
                    // A task of its own, sized to reading the stream: an
                    // open stream may wait an hour, and a task is as large
                    // as its largest branch.
                    let opening = Box::pin(async move { client.stream_raw(&request).await });
                    let task = tokio::spawn(relay_stream(opening, id, tx));
                    self.streams.insert(id, task.abort_handle());
                    return;
                }
                tokio::spawn(async move {
                    // A cancel extension call waits for its CancelTask
                    // (SPEC §9): a runtime that never answers must not
                    // hold it for the hour a resumed turn may take.
                    let limit = (request.method == Method::CancelTask.as_str())
                        .then_some(CANCEL_TASK_TIMEOUT);
                    let call = client.call_raw(&request);
                    let result = match limit {
                        Some(limit) => tokio::time::timeout(limit, call)
                            .await
                            .unwrap_or(Err(A2aError::Timeout)),
                        None => call.await,
                    };
                    let answer = match result {
                        Ok(response) => Answer::Response(response),
                        Err(error) => failed(&error),
                    };
                    send(&tx, Msg::Answer(id, answer));
                });
            }
            Output::Http {
                id,
                method,
                path,
                body,
            } => {
                let client = self.deps.a2a.clone();
                let tx = self.self_tx.clone();
                tokio::spawn(async move {
                    let answer = match client.http_json(&method, &path, body.as_ref()).await {
                        Ok((status, body)) => Answer::Http { status, body },
                        Err(error) => failed(&error),
                    };
                    send(&tx, Msg::Answer(id, answer));
                });
            }
            Output::CloseStream { id } => {
                // Dropping the stream closes its connection at once.
                if let Some(task) = self.streams.remove(&id) {
                    task.abort();
                }
            }
            Output::CancelAnswered {
                ticket,
                status,
                body,
            } => {
                if let Some(reply) = self.cancels.remove(&ticket) {
                    let _ = reply.send((status, body));
                }
            }
        }
    }

    fn reply_to(
        &mut self,
        key: &RunKey,
        mine: Option<&mut Option<(RunKey, oneshot::Sender<Admission>)>>,
    ) -> Option<oneshot::Sender<Admission>> {
        if let Some(slot) = mine {
            if slot.as_ref().is_some_and(|(k, _)| k == key) {
                return slot.take().map(|(_, reply)| reply);
            }
        }
        self.admitting.remove(key)
    }

    /// Forgets a thread whose state is all on disk and that waits for
    /// nothing (no run, no pending interrupt): the next request reloads it,
    /// so memory does not grow with the number of threads ever seen.
    /// Threads with pending interrupts stay, so their expiry timer fires.
    fn evict_if_settled(&mut self, thread_id: &str) {
        let settled = !self.machine.has_active_run(thread_id)
            && self
                .machine
                .document(thread_id)
                .is_some_and(|doc| doc.execution.pending.is_empty());
        if settled && self.machine.evict(thread_id) {
            self.deps.store.forget(thread_id);
        }
    }

    fn persist(&mut self, id: EffectId, thread_id: String, document: Vec<u8>, admission: bool) {
        self.persist_threads.insert(id, thread_id.clone());
        let previous = self.persists.remove(&thread_id);
        let store = Arc::clone(&self.deps.store);
        let tx = self.self_tx.clone();
        let thread = thread_id.clone();
        let task = tokio::spawn(async move {
            if let Some(previous) = previous {
                let _ = previous.await;
            }
            let result = store.lock(&thread).await.persist(document, admission).await;
            if let Err(error) = &result {
                tracing::warn!(thread_id = %thread, %error, "thread state write failed");
            }
            send(
                &tx,
                Msg::Answer(id, Answer::Persisted { ok: result.is_ok() }),
            );
        });
        self.persists.retain(|_, task| !task.is_finished());
        self.persists.insert(thread_id, task);
    }
}

/// Relays one streaming A2A call as `Frame`s then `StreamEnded` (or
/// `Failed`). A call refused with a plain JSON-RPC error is one frame.
/// Each frame spends one of the stream's credits; with none left the relay
/// waits (and so stops reading the stream) until the actor and the run's
/// body have caught up.
async fn relay_stream(
    opening: Pin<Box<dyn Future<Output = Result<A2aStream, A2aError>> + Send>>,
    id: EffectId,
    tx: mpsc::WeakUnboundedSender<Msg>,
) {
    let tx = &tx;
    // The opening call (with the request and the client) is boxed and
    // freed once the stream is open: an open stream may wait an hour,
    // holding only what reading it needs.
    let mut stream = match opening.await {
        Ok(stream) => stream,
        Err(A2aError::Rpc(error)) => {
            send(
                tx,
                Msg::Answer(id, Answer::Frame(StreamFrame::Error(error))),
            );
            send(tx, Msg::Answer(id, Answer::StreamEnded));
            return;
        }
        Err(error) => {
            send(tx, Msg::Answer(id, failed(&error)));
            return;
        }
    };
    let credits = Arc::new(Semaphore::new(STREAM_CREDIT));
    loop {
        match stream.next().await {
            Some(Ok(frame)) => {
                // Frames that came with this one go in the same message.
                let mut frames = vec![frame];
                let mut failure = None;
                while frames.len() < RELAY_BATCH {
                    match stream.next_buffered() {
                        Some(Ok(frame)) => frames.push(frame),
                        Some(Err(error)) => {
                            failure = Some(error);
                            break;
                        }
                        None => break,
                    }
                }
                // The semaphore is never closed, so acquiring only waits.
                let Ok(credit) = Arc::clone(&credits)
                    .acquire_many_owned(frames.len() as u32)
                    .await
                else {
                    return;
                };
                send(tx, Msg::Frames(id, frames, credit));
                if let Some(error) = failure {
                    send(tx, Msg::Answer(id, failed(&error)));
                    return;
                }
            }
            Some(Err(error)) => {
                send(tx, Msg::Answer(id, failed(&error)));
                return;
            }
            None => {
                send(tx, Msg::Answer(id, Answer::StreamEnded));
                return;
            }
        }
    }
}

fn failed(error: &A2aError) -> Answer {
    tracing::debug!(%error, "A2A effect failed");
    Answer::Failed
}

fn send(tx: &mpsc::WeakUnboundedSender<Msg>, msg: Msg) {
    if let Some(tx) = tx.upgrade() {
        let _ = tx.send(msg);
    }
}

async fn sleep_for(duration: Option<Duration>) {
    match duration {
        Some(duration) => tokio::time::sleep(duration).await,
        None => std::future::pending().await,
    }
}
