//! The thread state machine (SPEC §4–5, §7–11): admission, runs, resume,
//! cancel, disconnect, expiry and the durable document, as pure transitions.
//!
//! One [`Machine`] serves every thread of a host. Inputs go in through
//! `handle_*` methods, each taking `now_ms`; outputs come out of
//! [`Machine::poll_output`] (or [`Machine::drain`]). Effects are plain data
//! with an [`EffectId`]; the host performs them and feeds each outcome back
//! with [`Machine::handle_answer`] (the frames of one read of a stream
//! together with [`Machine::handle_frames`], so that they cost one write).
//! Fresh ids come from a seeded [`IdGen`], so the same inputs give
//! byte-identical outputs on every runtime.
//!
//! A host loop:
//! 1. before a request of a thread the machine has not loaded
//!    ([`Machine::needs_load`]), read its document and pass a [`Load`];
//! 2. [`Machine::handle_run_request`] / [`Machine::handle_cancel`] /
//!    [`Machine::handle_disconnect`] / [`Machine::handle_timeout`] /
//!    [`Machine::handle_shutdown`];
//! 3. drain outputs and perform them: write `Persist` documents of one thread
//!    in order (file name from [`crate::document::thread_key`]), open `A2a`
//!    streams, make `A2a` calls and `Http` calls, start the SSE stream on
//!    `Admitted` or answer `Refused` with its JSON envelope, emit events to
//!    the run's SSE stream, close it on `RunEnded`; answer every effect
//!    except `CloseStream` (a cancel-extension answer waits for its
//!    `CancelTask` reply, so bound that call with a timeout);
//! 4. wake the machine at [`Machine::poll_timeout`]; shut down when
//!    [`Machine::is_idle`] has held long enough (`--idle-shutdown`).
//!
//! The pieces: [`admit`] decides admission (SPEC §5) as a pure function;
//! [`check_entries`] and [`validate_payload`] are the resume entry checks
//! (SPEC §8 step 6, JSON Schema via `crate::schema`); one run driver per
//! admitted run (`run.rs`, `run_resume.rs`, `run_effects.rs`) goes from
//! `RUN_STARTED` to exactly one terminal event.
//!
//! Outputs may carry request secrets inside `A2a` requests (their purpose);
//! their `Debug` form redacts the request, and hosts must never log them.

mod admission;
mod cancel;
mod effects;
mod requests;
mod resume;
mod run;
mod run_effects;
mod run_resume;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;

use crate::a2a::StreamFrame;
use crate::document::{parse_iso_ms, ThreadDocument};
use crate::error::{ErrorCode, MessageKey, ProtocolError};
use crate::i18n::Language;
use crate::ids::IdGen;
use crate::validate::ValidatedRun;

pub use admission::{admit, Admitted};
pub use effects::{A2aBody, Answer, Config, EffectId, Load, Output};
pub use resume::{answer_digest, check_entries, validate_payload, EntryCheck, Resolution};

use cancel::{CancelStep, CancelWait};
use run::Run;

/// The sans-IO thread state machine of a host.
#[derive(Debug)]
pub struct Machine {
    // Boxed: a Thread is about 2 KB, and B-tree nodes hold 11 entries
    // inline, half of them empty on average.
    threads: BTreeMap<String, Box<Thread>>,
    io: Io,
}

impl Machine {
    /// A machine with `config`, drawing fresh ids from `seed`.
    pub fn new(config: Config, seed: u64) -> Self {
        let config = Config {
            interrupt_ttl_ms: config.interrupt_ttl_ms.max(1000),
        };
        Machine {
            threads: BTreeMap::new(),
            io: Io {
                config,
                ids: IdGen::new(seed),
                next_effect: 1,
                next_ticket: 1,
                owners: BTreeMap::new(),
                cancels: BTreeMap::new(),
                outputs: VecDeque::new(),
            },
        }
    }

    /// True when the host must read the thread's document before its next
    /// request (the machine keeps loaded threads in memory).
    pub fn needs_load(&self, thread_id: &str) -> bool {
        !self.threads.contains_key(thread_id)
    }

    /// The next output, if any.
    pub fn poll_output(&mut self) -> Option<Output> {
        self.io.outputs.pop_front()
    }

    /// Every pending output, in order.
    pub fn drain(&mut self) -> Vec<Output> {
        self.io.outputs.drain(..).collect()
    }

    /// The earliest interrupt expiry of a loaded thread without an active
    /// run: wake the machine then with [`Machine::handle_timeout`].
    pub fn poll_timeout(&self) -> Option<i64> {
        self.threads
            .values()
            .filter(|t| t.run.is_none() && t.admitting.is_none())
            .flat_map(|t| t.unexpired_pending())
            .filter_map(|(_, at)| at)
            .min()
    }

    /// True when no run is active or being admitted and no loaded thread has
    /// a pending interrupt that can still be answered (for
    /// `--idle-shutdown`).
    pub fn is_idle(&self) -> bool {
        self.threads.values().all(|t| {
            t.run.is_none() && t.admitting.is_none() && t.unexpired_pending().next().is_none()
        })
    }

    /// Forgets a loaded thread that has nothing in flight, so a long-running
    /// host does not keep every thread in memory. Returns false when the
    /// thread is busy (and keeps it).
    pub fn evict(&mut self, thread_id: &str) -> bool {
        match self.threads.get(thread_id) {
            Some(t) if t.run.is_some() || t.admitting.is_some() => false,
            Some(t)
                if self
                    .io
                    .owners
                    .values()
                    .any(|o| o.thread() == Some(t.doc.thread_id.as_str())) =>
            {
                false
            }
            _ => {
                self.threads.remove(thread_id);
                true
            }
        }
    }

    /// A validated `POST /` whose workspace the host resolved (SPEC §5).
    /// `load` is read only when [`Machine::needs_load`] was true.
    ///
    /// Outputs `Refused` at once, or a `Persist` whose answer decides
    /// between `Admitted` (then the run's events) and `Refused` 503.
    pub fn handle_run_request(
        &mut self,
        now_ms: i64,
        run: ValidatedRun,
        workspace: &str,
        load: Load,
    ) {
        let thread_id = run.input.thread_id.clone();
        let run_id = run.input.run_id.clone();
        let language = run.language;
        let refuse = |io: &mut Io, error: ProtocolError| {
            io.push(Output::Refused {
                thread_id: thread_id.as_str().into(),
                run_id: run_id.as_str().into(),
                status: error.code.http_status(),
                body: error.envelope(language),
            });
        };
        let loaded = match self.threads.get(&thread_id) {
            Some(thread) => Some(thread.doc.clone()),
            None => {
                match load_document(&thread_id, load, now_ms, self.io.config.interrupt_ttl_ms) {
                    Ok(doc) => doc,
                    Err(error) => return refuse(&mut self.io, error),
                }
            }
        };
        let busy = self
            .threads
            .get(&thread_id)
            .is_some_and(|t| t.run.is_some() || t.admitting.is_some());
        let admitted = match admit(
            &run,
            workspace,
            loaded.as_ref(),
            busy,
            now_ms,
            self.io.config.interrupt_ttl_ms,
            &mut self.io.ids,
        ) {
            Ok(admitted) => admitted,
            Err(error) => {
                if let Some(doc) = loaded {
                    self.threads
                        .entry(thread_id.clone())
                        .or_insert_with(|| Box::new(Thread::new(doc)));
                }
                return refuse(&mut self.io, error);
            }
        };
        let previous = loaded;
        let thread = self
            .threads
            .entry(thread_id.clone())
            .or_insert_with(|| Box::new(Thread::new(admitted.document.clone())));
        thread.doc = admitted.document.clone();
        let pending = &thread.doc.execution.pending;
        thread.expired.retain(|id| pending.contains_key(id));
        if let Some(task_id) = &admitted.expired_task {
            self.io.cancel_task(task_id);
        }
        self.io
            .persist(Owner::Admission(thread_id.clone()), &thread.doc);
        thread.admitting = Some(Box::new(Admitting {
            previous,
            run: Box::new(run),
            disconnected: false,
        }));
    }

    /// The cancel extension (SPEC §9). The answer comes as `CancelAnswered`
    /// with the returned ticket (at once for 404/`already_terminal`; else
    /// once both the persist and the `CancelTask` reply, if a task exists,
    /// came back).
    pub fn handle_cancel(
        &mut self,
        now_ms: i64,
        execution_id: &str,
        thread_id: &str,
        ros_invocation_id: &str,
        language: Language,
        load: Load,
    ) -> u64 {
        let ticket = self.io.next_ticket;
        self.io.next_ticket += 1;
        if !self.threads.contains_key(thread_id) {
            match load_document(thread_id, load, now_ms, self.io.config.interrupt_ttl_ms) {
                Ok(Some(doc)) => {
                    self.threads
                        .insert(thread_id.to_owned(), Box::new(Thread::new(doc)));
                }
                Ok(None) => {
                    self.io.answer_not_found(ticket, language);
                    return ticket;
                }
                Err(error) => {
                    self.io.push(Output::CancelAnswered {
                        ticket,
                        status: error.code.http_status(),
                        body: error.envelope(language),
                    });
                    return ticket;
                }
            }
        }
        let request = CancelRequest {
            ticket,
            execution_id: execution_id.to_owned(),
            ros_invocation_id: ros_invocation_id.to_owned(),
            language,
        };
        match self.threads.get_mut(thread_id) {
            // Admission is one atomic step (SPEC §5): a cancel waits for it.
            Some(thread) if thread.admitting.is_some() => thread.deferred_cancels.push(request),
            Some(_) => self.cancel_loaded(now_ms, thread_id, request),
            None => {}
        }
        ticket
    }

    /// The client of a run went away before its terminal event (SPEC §10).
    pub fn handle_disconnect(&mut self, now_ms: i64, thread_id: &str, run_id: &str) {
        let Some(thread) = self.threads.get_mut(thread_id) else {
            return;
        };
        if let Some(admitting) = thread.admitting.as_mut() {
            if admitting.run.input.run_id == run_id {
                // Handled once the admission is decided (the run may never start).
                admitting.disconnected = true;
                return;
            }
        }
        if thread.run.as_ref().is_none_or(|r| r.run_id() != run_id) {
            return;
        }
        let Some(mut run) = thread.run.take() else {
            return;
        };
        run.abort(&mut thread.doc, &mut self.io, now_ms, None);
        if thread.doc.execution.pending.is_empty() {
            if let Some(task_id) = thread.doc.execution.task_id.clone() {
                self.io.cancel_task(&task_id);
            }
            mark_terminal(&mut thread.doc);
            self.io
                .persist(Owner::BestEffort(thread_id.to_owned()), &thread.doc);
        }
    }

    /// The server is stopping: every active run ends with `RUN_ERROR`
    /// (`A2A_UNAVAILABLE`, "The server is shutting down."). A run without
    /// pending interrupts also cancels its task and ends its execution, as
    /// after a transport failure; pending interrupts stay for a resume after
    /// the restart.
    pub fn handle_shutdown(&mut self, now_ms: i64) {
        for thread in self.threads.values_mut() {
            if let Some(mut run) = thread.run.take() {
                let error = ProtocolError::new(ErrorCode::A2aUnavailable, MessageKey::ShuttingDown);
                run.fail(
                    &mut thread.doc,
                    &mut self.io,
                    now_ms,
                    error,
                    run::Failure::Transport,
                );
            }
        }
    }

    /// Acts on abandoned interrupts whose `expiresAt` passed (SPEC §11): their
    /// A2A task is cancelled at once; their pending state is removed at the
    /// thread's next access (a resume then gets EXECUTION_EXPIRED).
    pub fn handle_timeout(&mut self, now_ms: i64) {
        for thread in self.threads.values_mut() {
            if thread.run.is_some() || thread.admitting.is_some() {
                continue;
            }
            let expired: Vec<String> = thread
                .unexpired_pending()
                .filter(|(_, at)| at.is_some_and(|at| at <= now_ms))
                .map(|(id, _)| id.clone())
                .collect();
            if expired.is_empty() {
                continue;
            }
            // Only the A2A task goes now. The pending state stays until the
            // thread's next access, which removes it and answers a resume
            // with EXECUTION_EXPIRED (SPEC §8 step 2), not EXECUTION_LOST.
            thread.expired.extend(expired);
            if let Some(task_id) = &thread.doc.execution.task_id {
                self.io.cancel_task(task_id);
            }
        }
    }

    /// The outcome of an effect. Answers to effects the machine no longer
    /// waits for (a finished run's stream, a best-effort cancel) are ignored.
    pub fn handle_answer(&mut self, now_ms: i64, id: EffectId, answer: Answer) {
        let Some(owner) = self.io.owners.get(&id).cloned() else {
            return;
        };
        let keeps_owner = matches!(answer, Answer::Frame(_));
        if !keeps_owner {
            self.io.owners.remove(&id);
        }
        match owner {
            Owner::Admission(thread_id) => self.on_admission_persisted(now_ms, &thread_id, answer),
            Owner::Cancel { ticket, .. } => {
                let ok = matches!(answer, Answer::Persisted { ok: true });
                self.io.cancel_step(ticket, CancelStep::Persisted(ok));
            }
            Owner::CancelReply(ticket) => self.io.cancel_step(ticket, CancelStep::TaskReplied),
            Owner::BestEffort(_) | Owner::TaskCancel => {}
            Owner::Run { thread, run_id } => self.hand_to_run(&thread, &run_id, |run, doc, io| {
                run.on_answer(doc, io, now_ms, id, answer);
            }),
        }
    }

    /// Frames of one A2A stream that arrived together, in order: the same
    /// as one [`Machine::handle_answer`] per frame, except that the run
    /// maps them all before it writes what they taught it, so that they
    /// cost one write.
    pub fn handle_frames(
        &mut self,
        now_ms: i64,
        id: EffectId,
        frames: impl IntoIterator<Item = StreamFrame>,
    ) {
        if let Some(Owner::Run { thread, run_id }) = self.io.owners.get(&id).cloned() {
            self.hand_to_run(&thread, &run_id, |run, doc, io| {
                run.on_frames(doc, io, now_ms, id, frames);
            });
        }
    }

    /// Hands an effect's outcome to the run that owns it, if it still runs.
    fn hand_to_run(
        &mut self,
        thread: &str,
        run_id: &str,
        hand: impl FnOnce(&mut Run, &mut ThreadDocument, &mut Io),
    ) {
        let Some(t) = self.threads.get_mut(thread) else {
            return;
        };
        let Some(run) = t.run.as_mut().filter(|r| r.run_id() == run_id) else {
            return;
        };
        hand(run, &mut t.doc, &mut self.io);
        if run.is_done() {
            t.run = None;
        }
    }

    /// The current document of a loaded thread.
    pub fn document(&self, thread_id: &str) -> Option<&ThreadDocument> {
        self.threads.get(thread_id).map(|t| &t.doc)
    }

    /// True while the thread has an admitted, unfinished run.
    pub fn has_active_run(&self, thread_id: &str) -> bool {
        self.threads.get(thread_id).is_some_and(|t| t.run.is_some())
    }

    /// The cancel extension on a loaded thread with no admission in flight.
    fn cancel_loaded(&mut self, now_ms: i64, thread_id: &str, request: CancelRequest) {
        let CancelRequest {
            ticket,
            execution_id,
            ros_invocation_id,
            language,
        } = request;
        let Some(thread) = self.threads.get_mut(thread_id) else {
            return self.io.answer_not_found(ticket, language);
        };
        let doc = &thread.doc;
        let current = doc.execution.execution_id == execution_id;
        if current && !doc.execution_is_terminal() {
            if doc.execution.ros_invocation_id != ros_invocation_id {
                return self.io.answer_not_found(ticket, language);
            }
        } else if doc.terminal_execution_ids.contains(&execution_id) {
            return self.io.push(Output::CancelAnswered {
                ticket,
                status: 200,
                body: serde_json::json!({"executionId": execution_id, "status": "already_terminal"}),
            });
        } else {
            return self.io.answer_not_found(ticket, language);
        }
        if let Some(mut run) = thread.run.take() {
            run.abort(&mut thread.doc, &mut self.io, now_ms, Some(cancelled()));
        }
        let task = thread.doc.execution.task_id.clone();
        let wait = CancelWait::new(execution_id, language, task.is_some());
        self.io.cancels.insert(ticket, wait);
        if let Some(task_id) = task {
            self.io
                .send_cancel_task(Owner::CancelReply(ticket), &task_id);
        }
        thread.doc.execution.pending.clear();
        mark_terminal(&mut thread.doc);
        let owner = Owner::Cancel {
            thread: thread_id.to_owned(),
            ticket,
        };
        self.io.persist(owner, &thread.doc);
    }

    fn on_admission_persisted(&mut self, now_ms: i64, thread_id: &str, answer: Answer) {
        let Some(thread) = self.threads.get_mut(thread_id) else {
            return;
        };
        let Some(admitting) = thread.admitting.take() else {
            return;
        };
        let deferred = std::mem::take(&mut thread.deferred_cancels);
        let disconnected = admitting
            .disconnected
            .then(|| admitting.run.input.run_id.clone());
        self.finish_admission(now_ms, thread_id, *admitting, answer);
        if let Some(run_id) = disconnected {
            self.handle_disconnect(now_ms, thread_id, &run_id);
        }
        for request in deferred {
            self.cancel_loaded(now_ms, thread_id, request);
        }
    }

    fn finish_admission(
        &mut self,
        now_ms: i64,
        thread_id: &str,
        admitting: Admitting,
        answer: Answer,
    ) {
        let Some(thread) = self.threads.get_mut(thread_id) else {
            return;
        };
        let run = admitting.run;
        if matches!(answer, Answer::Persisted { ok: true }) {
            self.io.push(Output::Admitted {
                thread_id: thread_id.into(),
                run_id: run.input.run_id.as_str().into(),
            });
            let started = Run::start(*run, &mut thread.doc, &mut self.io, now_ms);
            if !started.is_done() {
                thread.run = Some(started);
            }
            return;
        }
        // Roll every change back (SPEC §5 step 9).
        match admitting.previous {
            Some(previous) => thread.doc = previous,
            None => {
                self.threads.remove(thread_id);
            }
        }
        let error = ProtocolError::new(ErrorCode::StateUnavailable, MessageKey::StateUnavailable);
        self.io.push(Output::Refused {
            thread_id: thread_id.into(),
            run_id: run.input.run_id.as_str().into(),
            status: 503,
            body: error.envelope(run.language),
        });
    }
}

/// A loaded thread.
#[derive(Debug)]
struct Thread {
    doc: ThreadDocument,
    run: Option<Run>,
    /// Boxed: only while the admission is being persisted.
    admitting: Option<Box<Admitting>>,
    /// Cancels that arrived while an admission was being persisted.
    deferred_cancels: Vec<CancelRequest>,
    /// Pending interrupts whose expiry the timer already acted on (their
    /// task is cancelled; the next access reports and removes them).
    expired: BTreeSet<String>,
}

/// A cancel-extension request waiting for its thread.
#[derive(Debug, Clone, PartialEq)]
struct CancelRequest {
    ticket: u64,
    execution_id: String,
    ros_invocation_id: String,
    language: Language,
}

impl Thread {
    fn new(doc: ThreadDocument) -> Self {
        Thread {
            doc,
            run: None,
            admitting: None,
            deferred_cancels: Vec::new(),
            expired: BTreeSet::new(),
        }
    }

    /// Pending interrupts the timer has not acted on yet, with their expiry.
    fn unexpired_pending(&self) -> impl Iterator<Item = (&String, Option<i64>)> {
        self.doc
            .execution
            .pending
            .iter()
            .filter(|(id, _)| !self.expired.contains(*id))
            .map(|(id, p)| (id, p.expires_at.as_deref().and_then(parse_iso_ms)))
    }
}

/// A run whose admission persist is in flight.
#[derive(Debug)]
struct Admitting {
    /// The document before admission (`None`: the thread was created).
    previous: Option<ThreadDocument>,
    run: Box<ValidatedRun>,
    /// The client left before the admission was decided.
    disconnected: bool,
}

/// Who waits for an effect's answer.
#[derive(Debug, Clone, PartialEq)]
enum Owner {
    Admission(String),
    /// The persist of a cancel-extension request (its ticket).
    Cancel {
        thread: String,
        ticket: u64,
    },
    /// The `CancelTask` of a cancel-extension request (its ticket). The
    /// wait lives in `Io::cancels`, so it never blocks eviction.
    CancelReply(u64),
    /// A write nobody waits for (it still blocks eviction until answered).
    BestEffort(String),
    /// A CancelTask whose answer is ignored; it never blocks eviction.
    TaskCancel,
    /// A run's effect; shared strings, as a stream's owner is looked up
    /// for each of its frames.
    Run {
        thread: Arc<str>,
        run_id: Arc<str>,
    },
}

impl Owner {
    /// The thread whose state the effect touches, if any.
    fn thread(&self) -> Option<&str> {
        match self {
            Owner::Admission(t) | Owner::BestEffort(t) => Some(t),
            Owner::Cancel { thread, .. } => Some(thread),
            Owner::Run { thread, .. } => Some(thread),
            Owner::TaskCancel | Owner::CancelReply(_) => None,
        }
    }
}

/// Effect ids, fresh ids and the output queue, shared by every transition.
#[derive(Debug)]
struct Io {
    config: Config,
    ids: IdGen,
    next_effect: EffectId,
    next_ticket: u64,
    owners: BTreeMap<EffectId, Owner>,
    /// Cancel-extension requests waiting for their persist and CancelTask.
    cancels: BTreeMap<u64, CancelWait>,
    outputs: VecDeque<Output>,
}

impl Io {
    fn push(&mut self, output: Output) {
        self.outputs.push_back(output);
    }

    fn effect(&mut self, owner: Owner) -> EffectId {
        let id = self.next_effect;
        self.next_effect += 1;
        self.owners.insert(id, owner);
        id
    }

    fn persist(&mut self, owner: Owner, doc: &ThreadDocument) -> EffectId {
        let id = self.effect(owner);
        self.push(Output::Persist {
            id,
            thread_id: doc.thread_id.clone(),
            document: doc.encode(),
        });
        id
    }

    /// A best-effort CancelTask whose answer is ignored.
    fn cancel_task(&mut self, task_id: &str) {
        self.send_cancel_task(Owner::TaskCancel, task_id);
    }

    /// A CancelTask whose answer goes to `owner`.
    fn send_cancel_task(&mut self, owner: Owner, task_id: &str) {
        let id = self.effect(owner);
        let request = requests::cancel_task(self.ids.uuid(), task_id);
        self.push(Output::A2a {
            id,
            streaming: false,
            request: A2aBody(request),
        });
    }

    /// Records one answer of a cancel-extension request; answers it once
    /// nothing more is awaited.
    fn cancel_step(&mut self, ticket: u64, step: CancelStep) {
        let Some(wait) = self.cancels.get_mut(&ticket) else {
            return;
        };
        if let Some((status, body)) = wait.step(step) {
            self.cancels.remove(&ticket);
            self.push(Output::CancelAnswered {
                ticket,
                status,
                body,
            });
        }
    }

    fn answer_not_found(&mut self, ticket: u64, language: Language) {
        let error = ProtocolError::new(ErrorCode::ExecutionNotFound, MessageKey::ExecutionNotFound);
        self.push(Output::CancelAnswered {
            ticket,
            status: 404,
            body: error.envelope(language),
        });
    }
}

/// Reads a host-supplied document.
/// Pending interrupts without an expiry (documents written by the Python
/// reference) start their TTL when the thread is loaded, so the timer can
/// expire them even if no resume ever comes.
fn load_document(
    thread_id: &str,
    load: Load,
    now_ms: i64,
    ttl_ms: i64,
) -> Result<Option<ThreadDocument>, ProtocolError> {
    let unavailable =
        || ProtocolError::new(ErrorCode::StateUnavailable, MessageKey::StateUnavailable);
    let mut doc = match load {
        Load::Missing => return Ok(None),
        Load::Unreadable => return Err(unavailable()),
        Load::Found(value) => {
            ThreadDocument::parse(&value, thread_id).map_err(|_| unavailable())?
        }
    };
    for pending in doc.execution.pending.values_mut() {
        if pending.expires_at.is_none() {
            pending.expires_at = Some(crate::mapper::iso_utc(now_ms.saturating_add(ttl_ms)));
        }
    }
    Ok(Some(doc))
}

/// Ends the current execution (SPEC §9–10): recorded as terminal, task
/// forgotten so nothing can resume it.
fn mark_terminal(doc: &mut ThreadDocument) {
    let id = doc.execution.execution_id.clone();
    doc.terminal_execution_ids.insert(id);
    doc.execution.task_id = None;
}

/// Removes the pending state of an expired execution and ends it; returns
/// the task to cancel.
fn expire(doc: &mut ThreadDocument) -> Option<String> {
    let task = doc.execution.task_id.clone();
    doc.execution.pending.clear();
    mark_terminal(doc);
    task
}

fn cancelled() -> ProtocolError {
    ProtocolError::new(ErrorCode::Cancelled, MessageKey::Cancelled)
}
