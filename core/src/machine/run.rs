//! The run driver: one admitted run from `RUN_STARTED` to its one terminal
//! event (SPEC §6–8, §10).
//!
//! The run waits for at most one effect at a time (`waiting`): a persist, a
//! unary call or an HTTP call. Stream frames that arrive meanwhile queue in
//! `inbox` and are mapped in order once the wait is over, so nothing that
//! depends on a write is announced before the write succeeded.
//!
//! A new turn that learns its task or session id keeps mapping the frames it
//! already has, and holds their events back (`unwritten`) until one write
//! carries the ids and whatever those frames changed. Frames that arrive
//! together ([`super::Machine::handle_frames`]) are so covered by one write:
//! a short turn whose end came with its ids is written once after admission,
//! at its end. A resume's preparation holds its events the same way, until
//! the reconciled pending set is written. The resume preparation and answer
//! application live in `run_resume.rs`.

use std::collections::{BTreeSet, VecDeque};
use std::sync::Arc;

use super::resume::Resolution;
use super::run_effects::{interrupt_of, merge_pending, rejection};
use super::{mark_terminal, Answer, EffectId, Io};
use crate::a2a::{StreamFrame, StreamResponse, Task, TaskState};
use crate::agui::{Event, EventBody, Outcome, ResumeEntry};
use crate::document::ThreadDocument;
use crate::error::{ErrorCode, MessageKey, ProtocolError};
use crate::i18n::Language;
use crate::mapper::{DurableMapperState, FeedOptions, Mapped, Mapper, RequiredInput, RunContext};
use crate::validate::{IacCodeProps, ValidatedRun};

/// One admitted run of a thread.
#[derive(Debug)]
pub(super) struct Run {
    pub(super) thread_id: Arc<str>,
    pub(super) run_id: Arc<str>,
    pub(super) language: Language,
    pub(super) props: IacCodeProps,
    pub(super) entries: Option<Vec<ResumeEntry>>,
    pub(super) mapper: Mapper,
    pub(super) done: bool,
    pub(super) session_emitted: bool,
    /// A task or session id learnt from a frame that announced nothing:
    /// in the document, not yet written. Written before the next frame (or
    /// the end of the run) announces anything (SPEC §4: "persist it before
    /// emitting anything that depends on it").
    pub(super) identity_unsaved: bool,
    /// A resume whose answers A2A accepted (all of them).
    pub(super) accepted: bool,
    /// Question answers bound to a tool: `TOOL_CALL_RESULT` once accepted.
    pub(super) resolved_tools: Vec<(String, String)>,
    /// Pipeline cursor before sideband answers, recovered before the end.
    pub(super) recovery_after: Option<u64>,
    pub(super) terminal_state: Option<TaskState>,
    pub(super) stream: Option<Stream>,
    pub(super) waiting: Option<(EffectId, Cont)>,
    pub(super) inbox: VecDeque<Item>,
    /// Answers being applied (question answers, or permission answers).
    pub(super) plan: Vec<Resolution>,
    /// Pending ids before the resume's reconciliation.
    pub(super) known_before: BTreeSet<String>,
    /// Events that wait for the run's next write, `Some` until it answers
    /// (emitted if it succeeded, dropped if not): a new turn's, from the
    /// frame that taught it its ids, or a resume's, mapped while it
    /// prepares (written with the reconciled pending set).
    pub(super) unwritten: Option<Vec<Event>>,
    pub(super) prep: Option<Prep>,
    /// Spans whose opening event reached the client: a run that fails while
    /// a frame's events were held back closes only these.
    pub(super) announced: BTreeSet<(&'static str, String)>,
}

/// The open A2A stream of a run.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Stream {
    pub(super) id: EffectId,
    pub(super) kind: StreamKind,
    pub(super) accepted: bool,
}

/// What an A2A stream carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum StreamKind {
    /// The new turn's SendStreamingMessage.
    Main,
    /// The SubscribeToTask after streamed permission answers; an error
    /// (the task is no longer active) ends it like the end of the stream.
    Subscribe,
    /// The streamed question answer; its first frame accepts the answers.
    Question,
    /// The streamed answer of `plan[i]`.
    Permission(usize),
    /// The subscription after sideband answers.
    SidebandSubscribe,
}

/// Work queued behind a wait.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Item {
    Frame(EffectId, StreamFrame),
    End(EffectId),
    Failed(EffectId),
    /// A GetTask snapshot read after sideband answers, mapped like a frame.
    Task(Box<Task>),
    OpenSubscribe,
    /// The second GetTask did not show a terminal state.
    RequireTerminal,
}

/// What to do when the awaited effect answers.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Cont {
    Accepted(Box<Work>),
    Identity(Box<Work>),
    InterruptRecovery(Vec<RequiredInput>),
    InterruptCommit,
    EndRecovery,
    /// Events mapped after new ids, once they were written.
    Unwritten,
    /// The end of a new turn, written with its new ids (the task id, for
    /// a failed write to cancel); its events wait.
    Finish(Option<String>),
    EnsureRestored,
    PrepTask,
    PrepPipeline,
    PrepPersist,
    CancelledPersist,
    SidebandSend(usize),
    SidebandCommit(usize),
    SidebandTask {
        second: bool,
    },
}

/// A mapped frame on its way through the checks.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Work {
    pub(super) mapped: Mapped,
}

/// What the resume's GetTask told.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Prep {
    pub(super) inputs: Vec<RequiredInput>,
    pub(super) task_terminal: bool,
    pub(super) has_projection: bool,
}

/// How a failed run leaves its thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Failure {
    /// Pending interrupts stay; without any, the execution ends.
    Plain,
    /// Transport failure: also cancel the task when nothing is pending.
    Transport,
    /// A recovery-critical write failed: cancel the task, drop pending,
    /// end the execution.
    Persist,
}

impl Run {
    /// Starts an admitted run: `RUN_STARTED`, re-opened steps, then the A2A
    /// request (new turn) or the resume preparation.
    pub(super) fn start(
        validated: ValidatedRun,
        doc: &mut ThreadDocument,
        io: &mut Io,
        now: i64,
    ) -> Run {
        let ValidatedRun {
            input,
            iac,
            language,
            user_message,
            ..
        } = validated;
        let applied = doc
            .applied_resume_digests
            .keys()
            .filter(|(execution, _)| *execution == doc.execution.execution_id)
            .map(|(_, interrupt)| interrupt.clone())
            .collect();
        let ctx = RunContext {
            thread_id: doc.thread_id.clone(),
            run_id: input.run_id.clone(),
            context_id: doc.context_id.clone(),
            language,
            interrupt_ttl_ms: io.config.interrupt_ttl_ms,
            applied_input_ids: applied,
        };
        let durable = DurableMapperState {
            pipeline_sequence: i64::try_from(doc.execution.pipeline_sequence).unwrap_or(i64::MAX),
            pipeline_open_steps: doc.execution.pipeline_open_steps.clone(),
            text_snapshot_digests: doc.execution.text_snapshot_digests.clone(),
        };
        let mut run = Run {
            thread_id: doc.thread_id.as_str().into(),
            run_id: input.run_id.as_str().into(),
            language,
            props: iac,
            entries: input.resume.clone(),
            mapper: Mapper::new(ctx, durable),
            done: false,
            session_emitted: false,
            identity_unsaved: false,
            accepted: false,
            resolved_tools: Vec::new(),
            recovery_after: None,
            terminal_state: None,
            stream: None,
            waiting: None,
            inbox: VecDeque::new(),
            plan: Vec::new(),
            known_before: BTreeSet::new(),
            unwritten: None,
            prep: None,
            announced: BTreeSet::new(),
        };
        run.emit(
            io,
            now,
            EventBody::RunStarted {
                thread_id: doc.thread_id.clone(),
                run_id: input.run_id.clone(),
                parent_run_id: input.parent_run_id.clone(),
            },
        );
        let reopened = run.mapper.reopen_steps(now);
        run.emit_all(io, reopened);
        if run.entries.is_some() {
            run.prepare_resume(doc, io, now);
        } else {
            // Only the request needs the user's message: the run keeps none.
            let (message_id, parts) = user_message.map(|m| (m.id, m.parts)).unwrap_or_default();
            run.open_message_stream(doc, io, StreamKind::Main, message_id, &parts);
        }
        run
    }

    pub(super) fn run_id(&self) -> &str {
        &self.run_id
    }

    pub(super) fn is_done(&self) -> bool {
        self.done
    }

    /// Routes an effect's answer: the awaited one continues the run, stream
    /// answers queue, anything else is stale.
    pub(super) fn on_answer(
        &mut self,
        doc: &mut ThreadDocument,
        io: &mut Io,
        now: i64,
        id: EffectId,
        answer: Answer,
    ) {
        if self.done {
            return;
        }
        if let Some((waited, _)) = &self.waiting {
            if *waited == id {
                let Some((_, cont)) = self.waiting.take() else {
                    return;
                };
                self.resume_cont(doc, io, now, cont, answer);
                self.pump(doc, io, now);
                return;
            }
        }
        if self.stream.as_ref().is_some_and(|s| s.id == id) {
            let item = match answer {
                Answer::Frame(frame) => Item::Frame(id, frame),
                Answer::StreamEnded => Item::End(id),
                _ => Item::Failed(id),
            };
            if self.inbox.is_empty() && self.waiting.is_none() {
                // Nothing queued, nothing awaited: mapped now, never queued
                // (a queue of one, allocated and freed for each frame).
                self.take(doc, io, now, item);
            } else {
                self.inbox.push_back(item);
            }
            self.pump(doc, io, now);
        }
    }

    /// Frames of the current stream that arrived together: all queue
    /// before any is mapped (see the module comment).
    pub(super) fn on_frames(
        &mut self,
        doc: &mut ThreadDocument,
        io: &mut Io,
        now: i64,
        id: EffectId,
        frames: impl IntoIterator<Item = StreamFrame>,
    ) {
        if self.done || !self.stream_is(id) {
            return;
        }
        self.inbox
            .extend(frames.into_iter().map(|frame| Item::Frame(id, frame)));
        self.pump(doc, io, now);
    }

    /// Ends the run from outside: the cancel extension (`Some(error)`: the
    /// client still reads, so spans close and `RUN_ERROR` follows) or a
    /// disconnect (`None`).
    pub(super) fn abort(
        &mut self,
        _doc: &mut ThreadDocument,
        io: &mut Io,
        now: i64,
        error: Option<ProtocolError>,
    ) {
        if self.done {
            return;
        }
        self.close_stream(io);
        self.waiting = None;
        self.inbox.clear();
        self.unwritten = None;
        if let Some(error) = error {
            let closing = self.close_all(now);
            self.emit_all(io, closing);
            self.emit_run_error(io, now, &error);
        }
        self.end(io);
    }

    /// Handles queued work while nothing is awaited. Once the queue is
    /// empty, events held for a new turn's ids wait for their write.
    pub(super) fn pump(&mut self, doc: &mut ThreadDocument, io: &mut Io, now: i64) {
        while !self.done && self.waiting.is_none() {
            let Some(item) = self.inbox.pop_front() else {
                // A run may then wait an hour: it keeps no empty queue.
                self.inbox = VecDeque::new();
                if self.unwritten.is_some() {
                    let id = self.persist(doc, io);
                    self.waiting = Some((id, Cont::Unwritten));
                }
                return;
            };
            self.take(doc, io, now, item);
        }
    }

    /// Acts on one item of the stream, in order.
    fn take(&mut self, doc: &mut ThreadDocument, io: &mut Io, now: i64, item: Item) {
        match item {
            Item::Frame(id, frame) if self.stream_is(id) => self.on_frame(doc, io, now, frame),
            Item::End(id) if self.stream_is(id) => self.on_stream_end(doc, io, now),
            Item::Failed(id) if self.stream_is(id) => self.on_stream_failed(doc, io, now),
            Item::Task(task) => {
                let frame = StreamResponse::Task(*task);
                let mapped = self
                    .mapper
                    .feed(&frame, FeedOptions::LIVE, now, &mut io.ids);
                self.identity_stage(doc, io, now, Work { mapped });
            }
            Item::OpenSubscribe => self.open_subscribe(doc, io, StreamKind::SidebandSubscribe),
            Item::RequireTerminal => self.fail(
                doc,
                io,
                now,
                ProtocolError::new(ErrorCode::A2aUnavailable, MessageKey::A2aUnavailable),
                Failure::Plain,
            ),
            _ => {}
        }
    }

    /// One frame of the current stream.
    fn on_frame(&mut self, doc: &mut ThreadDocument, io: &mut Io, now: i64, frame: StreamFrame) {
        let Some(stream) = self.stream.clone() else {
            return;
        };
        let parsed = match frame {
            StreamFrame::Result(parsed) => parsed,
            StreamFrame::Malformed => return self.fail_unavailable(doc, io, now),
            StreamFrame::Error(error) => {
                return match stream.kind {
                    StreamKind::Question | StreamKind::Permission(_) => {
                        self.fail(doc, io, now, rejection(&error), Failure::Plain)
                    }
                    StreamKind::SidebandSubscribe => self.sideband_refresh(doc, io),
                    StreamKind::Main => self.fail_unavailable(doc, io, now),
                    StreamKind::Subscribe => self.finish(doc, io, now),
                }
            }
        };
        let mapped = self
            .mapper
            .feed_owned(*parsed, FeedOptions::LIVE, now, &mut io.ids);
        let work = Work { mapped };
        let accepting = matches!(
            stream.kind,
            StreamKind::Question | StreamKind::Permission(_)
        );
        if accepting && !stream.accepted {
            if let Err(error) = self.check_identity(doc, &work) {
                return self.fail(doc, io, now, error, Failure::Plain);
            }
            if let Some(s) = self.stream.as_mut() {
                s.accepted = true;
            }
            let committed: Vec<Resolution> = match stream.kind {
                StreamKind::Permission(i) => {
                    if i + 1 == self.plan.len() {
                        self.accepted = true;
                    }
                    self.plan.get(i).cloned().into_iter().collect()
                }
                _ => {
                    self.accepted = true;
                    self.plan.clone()
                }
            };
            self.commit_answers(doc, &committed);
            let id = io.persist(self.owner(), doc);
            self.waiting = Some((id, Cont::Accepted(Box::new(work))));
            return;
        }
        self.identity_stage(doc, io, now, work);
    }

    /// Checks and records task, context and session identities; persists a
    /// newly learnt one before anything that depends on it is emitted.
    pub(super) fn identity_stage(
        &mut self,
        doc: &mut ThreadDocument,
        io: &mut Io,
        now: i64,
        work: Work,
    ) {
        if let Err(error) = self.check_identity(doc, &work) {
            return self.fail(doc, io, now, error, Failure::Plain);
        }
        let report = &work.mapped.report;
        let mut learnt = false;
        if doc.execution.task_id.is_none() {
            if let Some(task) = &report.task_id {
                doc.execution.task_id = Some(task.clone());
                learnt = true;
            }
        }
        if doc.iac_code_session_id.is_none() {
            if let Some(session) = report.session_ids.first() {
                doc.iac_code_session_id = Some(session.clone());
                learnt = true;
            }
        }
        let unsaved = learnt || self.identity_unsaved;
        if unsaved && self.entries.is_none() {
            // A new turn: the ids wait for the next write (at the end of the
            // frames at hand, or sooner), and so does what they announce.
            self.identity_unsaved = true;
            if !self.announces_nothing(doc, &work) {
                self.unwritten.get_or_insert_with(Vec::new);
            }
        } else if unsaved {
            let id = self.persist(doc, io);
            self.waiting = Some((id, Cont::Identity(Box::new(work))));
            return;
        }
        self.emit_stage(doc, io, now, work);
    }

    /// True when a new turn's frame emits nothing, asks for no input, does
    /// not end the run, and does not complete the identities the session
    /// announcement needs: nothing waits for its new ids. (A task snapshot
    /// before the session id, the first frame of every turn.)
    fn announces_nothing(&self, doc: &ThreadDocument, work: &Work) -> bool {
        let report = &work.mapped.report;
        let known = doc.execution.task_id.is_some() && doc.iac_code_session_id.is_some();
        !known
            && work.mapped.events.is_empty()
            && report.inputs.is_empty()
            && !report.state.as_ref().is_some_and(TaskState::is_terminal)
    }

    /// Persists the document, with the mapper's durable state, as this
    /// run's write: it carries every id learnt so far.
    pub(super) fn persist(&mut self, doc: &mut ThreadDocument, io: &mut Io) -> EffectId {
        self.sync(doc);
        self.identity_unsaved = false;
        io.persist(self.owner(), doc)
    }

    /// Emits a checked frame's events, then looks at its inputs and state.
    fn emit_stage(&mut self, doc: &mut ThreadDocument, io: &mut Io, now: i64, work: Work) {
        self.sync(doc);
        let resuming = self.entries.is_some();
        let known = doc.execution.task_id.is_some() && doc.iac_code_session_id.is_some();
        if !self.session_emitted && ((resuming && self.accepted) || (!resuming && known)) {
            self.emit_session(doc, io, now);
        }
        if self.accepted {
            for (tool_call_id, text) in std::mem::take(&mut self.resolved_tools) {
                let events = self
                    .mapper
                    .tool_result_for_answer(&tool_call_id, &text, now);
                self.emit_all(io, events);
            }
        }
        let Work { mapped } = work;
        self.emit_all(io, mapped.events);
        if !mapped.report.inputs.is_empty() {
            return self.on_inputs(doc, io, now, mapped.report.inputs);
        }
        if let Some(state) = mapped.report.state {
            let stop = state.is_terminal();
            self.terminal_state = Some(state);
            if stop {
                self.finish(doc, io, now);
            }
        }
    }

    /// Required inputs arrived: recover missed Pipeline events first when
    /// sideband answers were sent, then merge and commit the interrupt.
    fn on_inputs(
        &mut self,
        doc: &mut ThreadDocument,
        io: &mut Io,
        now: i64,
        inputs: Vec<RequiredInput>,
    ) {
        if let Some(after) = self.recovery_after.take() {
            let id = self.pipeline_state(doc, io, after);
            self.waiting = Some((id, Cont::InterruptRecovery(inputs)));
            return;
        }
        if let Err(error) = merge_pending(doc, &inputs, false, now, io.config.interrupt_ttl_ms) {
            return self.fail(doc, io, now, error, Failure::Plain);
        }
        self.commit_interrupt(doc, io);
    }

    /// Persists the interrupted execution; the terminal event waits for it.
    pub(super) fn commit_interrupt(&mut self, doc: &mut ThreadDocument, io: &mut Io) {
        self.close_stream(io);
        self.mapper.finalize_text_snapshots();
        let id = self.persist(doc, io);
        self.waiting = Some((id, Cont::InterruptCommit));
    }

    /// The stream ended or the task reached a terminal state.
    pub(super) fn finish(&mut self, doc: &mut ThreadDocument, io: &mut Io, now: i64) {
        self.close_stream(io);
        if let Some(after) = self.recovery_after.take() {
            let id = self.pipeline_state(doc, io, after);
            self.waiting = Some((id, Cont::EndRecovery));
            return;
        }
        let unsaved = self.identity_unsaved;
        if unsaved {
            // The session announcement names the task: nothing below goes
            // out before the ids are written, with the end.
            self.unwritten.get_or_insert_with(Vec::new);
        }
        if !self.session_emitted {
            self.emit_session(doc, io, now);
        }
        let closing = self.close_all(now);
        self.emit_all(io, closing);
        self.emit_terminal(io, now);
        if unsaved {
            let task = doc.execution.task_id.clone();
            if doc.execution.pending.is_empty() {
                mark_terminal(doc);
            }
            let id = self.persist(doc, io);
            self.waiting = Some((id, Cont::Finish(task)));
            return;
        }
        self.settle(doc, io, Failure::Plain);
        self.end(io);
    }

    /// `RUN_FINISHED` or `RUN_ERROR`, by the task's terminal state.
    fn emit_terminal(&mut self, io: &mut Io, now: i64) {
        match self.terminal_state {
            Some(TaskState::Completed | TaskState::InputRequired) => {
                let body = EventBody::RunFinished {
                    thread_id: self.thread_id.to_string(),
                    run_id: self.run_id.to_string(),
                    outcome: Outcome::Success,
                    usage: self.mapper.usage(),
                };
                self.emit(io, now, body);
            }
            Some(TaskState::Canceled) => self.emit_run_error(
                io,
                now,
                &ProtocolError::new(ErrorCode::Cancelled, MessageKey::Cancelled),
            ),
            _ => self.emit_run_error(
                io,
                now,
                &ProtocolError::new(
                    ErrorCode::A2aExecutionFailed,
                    MessageKey::A2aExecutionFailed,
                ),
            ),
        }
    }

    /// Ends the run with `RUN_ERROR` after closing its spans.
    pub(super) fn fail(
        &mut self,
        doc: &mut ThreadDocument,
        io: &mut Io,
        now: i64,
        error: ProtocolError,
        failure: Failure,
    ) {
        self.close_stream(io);
        self.waiting = None;
        self.inbox.clear();
        self.unwritten = None;
        let closing = self.close_all(now);
        self.emit_all(io, closing);
        self.emit_run_error(io, now, &error);
        self.settle(doc, io, failure);
        self.end(io);
    }

    /// A2A refused or failed: cancel the task (nothing pending), `A2A_UNAVAILABLE`.
    pub(super) fn fail_unavailable(&mut self, doc: &mut ThreadDocument, io: &mut Io, now: i64) {
        let error = ProtocolError::new(ErrorCode::A2aUnavailable, MessageKey::A2aUnavailable);
        self.fail(doc, io, now, error, Failure::Transport);
    }

    /// A recovery-critical write failed.
    pub(super) fn fail_persist(
        &mut self,
        doc: &mut ThreadDocument,
        io: &mut Io,
        now: i64,
        key: MessageKey,
    ) {
        let error = ProtocolError::new(ErrorCode::StatePersistenceFailed, key);
        self.fail(doc, io, now, error, Failure::Persist);
    }

    /// Continues after the awaited effect answered.
    fn resume_cont(
        &mut self,
        doc: &mut ThreadDocument,
        io: &mut Io,
        now: i64,
        cont: Cont,
        answer: Answer,
    ) {
        let persisted = matches!(answer, Answer::Persisted { ok: true });
        if matches!(answer, Answer::Persisted { .. }) {
            // Every write of the run carries what its held events need.
            if let Some(events) = self.unwritten.take().filter(|_| persisted) {
                self.emit_all(io, events);
            }
        }
        match cont {
            Cont::Accepted(work) if persisted => self.identity_stage(doc, io, now, *work),
            Cont::Accepted(_) => self.fail_persist(doc, io, now, MessageKey::ResponseCommitFailed),
            Cont::Identity(work) if persisted => self.emit_stage(doc, io, now, *work),
            Cont::Identity(_) => self.fail_persist(doc, io, now, MessageKey::ExecutionCommitFailed),
            Cont::InterruptRecovery(inputs) => {
                self.apply_recovery(io, now, &answer);
                self.on_inputs(doc, io, now, inputs);
            }
            Cont::InterruptCommit if persisted => self.finish_interrupted(doc, io, now),
            Cont::InterruptCommit => {
                self.fail_persist(doc, io, now, MessageKey::InterruptCommitFailed)
            }
            Cont::EndRecovery => {
                self.apply_recovery(io, now, &answer);
                self.finish(doc, io, now);
            }
            Cont::Unwritten if persisted => {}
            Cont::Unwritten => self.fail_persist(doc, io, now, MessageKey::ExecutionCommitFailed),
            Cont::Finish(_) if persisted => self.end(io),
            Cont::Finish(task) => {
                // The write would have ended the execution; the failure
                // cancels its task, as any failed write of new ids does.
                doc.execution.task_id = task;
                self.fail_persist(doc, io, now, MessageKey::ExecutionCommitFailed);
            }
            other => self.resume_cont_resume(doc, io, now, other, answer),
        }
    }

    /// `RUN_FINISHED` with every pending interrupt, after the commit persisted.
    fn finish_interrupted(&mut self, doc: &mut ThreadDocument, io: &mut Io, now: i64) {
        if !self.session_emitted {
            self.emit_session(doc, io, now);
        }
        let closing = self.close_all(now);
        self.emit_all(io, closing);
        let interrupts = doc
            .execution
            .pending
            .values()
            .map(|p| interrupt_of(p, now, io.config.interrupt_ttl_ms, self.language))
            .collect();
        let body = EventBody::RunFinished {
            thread_id: self.thread_id.to_string(),
            run_id: self.run_id.to_string(),
            outcome: Outcome::Interrupt { interrupts },
            usage: self.mapper.usage(),
        };
        self.emit(io, now, body);
        self.end(io);
    }

    /// Maps a `GET /iac-code/pipeline/state` answer (200 only; 404 means no
    /// Pipeline). Events recovered here are emitted, or join the events
    /// held for a write.
    pub(super) fn apply_recovery(&mut self, io: &mut Io, now: i64, answer: &Answer) -> bool {
        match answer {
            Answer::Http { status: 200, body } => {
                let mapped = self.mapper.feed_pipeline_recovery(body, now, &mut io.ids);
                self.emit_all(io, mapped.events);
                true
            }
            Answer::Http { status: 404, .. } => true,
            _ => false,
        }
    }

    fn on_stream_end(&mut self, doc: &mut ThreadDocument, io: &mut Io, now: i64) {
        let Some(stream) = self.stream.take() else {
            return;
        };
        io.owners.remove(&stream.id);
        match stream.kind {
            StreamKind::Question | StreamKind::Permission(_) if !stream.accepted => {
                let error = ProtocolError::new(
                    ErrorCode::A2aUnavailable,
                    MessageKey::A2aResponseNotAccepted,
                );
                self.fail(doc, io, now, error, Failure::Plain);
            }
            StreamKind::Permission(i) if i + 1 < self.plan.len() => {
                self.open_permission(doc, io, i + 1)
            }
            StreamKind::Permission(_) => self.open_subscribe(doc, io, StreamKind::Subscribe),
            StreamKind::SidebandSubscribe => {
                self.stream = Some(stream);
                self.sideband_refresh(doc, io);
            }
            StreamKind::Main | StreamKind::Question | StreamKind::Subscribe => {
                self.finish(doc, io, now)
            }
        }
    }

    fn on_stream_failed(&mut self, doc: &mut ThreadDocument, io: &mut Io, now: i64) {
        match self.stream.as_ref().map(|s| s.kind) {
            Some(StreamKind::SidebandSubscribe) => self.sideband_refresh(doc, io),
            _ => self.fail_unavailable(doc, io, now),
        }
    }
}
