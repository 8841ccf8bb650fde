//! How a run talks to its host: opening streams and calls, emitting events,
//! committing answers, checking identities and leaving the document in its
//! final state. The run's transitions are in `run.rs` and `run_resume.rs`.

use std::collections::BTreeSet;

use serde_json::Value;

use super::requests::{self, Envelope};
use super::resume::Resolution;
use super::run::{Cont, Failure, Run, Stream, StreamKind, Work};
use super::{mark_terminal, A2aBody, EffectId, Io, Output, Owner};
use crate::a2a::{JsonRpcError, JsonRpcRequest, Method, Part};
use crate::agui::{Event, EventBody, Interrupt};
use crate::document::{parse_iso_ms, PendingInput, ThreadDocument};
use crate::error::{ErrorCode, MessageKey, ProtocolError};
use crate::i18n::Language;
use crate::mapper::{build_interrupt, iso_utc, RequiredInput, SessionInfo};

impl Run {
    /// Opens a SendStreamingMessage stream on the thread's context.
    pub(super) fn open_message_stream(
        &mut self,
        doc: &ThreadDocument,
        io: &mut Io,
        kind: StreamKind,
        message_id: String,
        parts: &[Part],
    ) {
        let envelope = Envelope {
            message_id,
            context_id: &doc.context_id,
            task_id: doc.execution.task_id.as_deref(),
            cwd: &doc.cwd,
            props: &self.props,
            language: self.language,
        };
        let request = requests::message_send(
            Method::SendStreamingMessage,
            io.ids.uuid(),
            &envelope,
            parts,
        );
        self.open_stream(io, kind, request);
    }

    /// Opens a SubscribeToTask stream on the thread's task.
    pub(super) fn open_subscribe(&mut self, doc: &ThreadDocument, io: &mut Io, kind: StreamKind) {
        let task = doc.execution.task_id.clone().unwrap_or_default();
        let request = requests::subscribe(io.ids.uuid(), &task);
        self.open_stream(io, kind, request);
    }

    pub(super) fn open_stream(&mut self, io: &mut Io, kind: StreamKind, request: JsonRpcRequest) {
        let id = io.effect(self.owner());
        io.push(Output::A2a {
            id,
            streaming: true,
            request: A2aBody(request),
        });
        self.stream = Some(Stream {
            id,
            kind,
            accepted: false,
        });
    }

    /// A unary A2A call awaited with `cont`.
    pub(super) fn call(&mut self, io: &mut Io, request: JsonRpcRequest, cont: Cont) {
        let id = io.effect(self.owner());
        io.push(Output::A2a {
            id,
            streaming: false,
            request: A2aBody(request),
        });
        self.waiting = Some((id, cont));
    }

    /// An HTTP extension call; returns its effect id.
    pub(super) fn http(
        &mut self,
        io: &mut Io,
        method: &str,
        path: String,
        body: Option<Value>,
    ) -> EffectId {
        let id = io.effect(self.owner());
        io.push(Output::Http {
            id,
            method: method.to_owned(),
            path,
            body,
        });
        id
    }

    pub(super) fn pipeline_state(
        &mut self,
        doc: &ThreadDocument,
        io: &mut Io,
        after: u64,
    ) -> EffectId {
        let task = doc.execution.task_id.clone().unwrap_or_default();
        self.http(io, "GET", requests::pipeline_state_path(&task, after), None)
    }

    /// Records accepted answers: applied digest, pending dropped (SPEC §8
    /// "Commit"). The caller persists.
    pub(super) fn commit_answers(&mut self, doc: &mut ThreadDocument, answers: &[Resolution]) {
        for answer in answers {
            let key = (
                doc.execution.execution_id.clone(),
                answer.interrupt_id.clone(),
            );
            doc.applied_resume_digests
                .insert(key, answer.digest.clone());
            doc.execution.pending.remove(&answer.interrupt_id);
            self.mapper.mark_applied(&answer.interrupt_id);
        }
    }

    /// Task, context and session identities of a mapped frame.
    pub(super) fn check_identity(
        &self,
        doc: &ThreadDocument,
        work: &Work,
    ) -> Result<(), ProtocolError> {
        let report = &work.mapped.report;
        let protocol = |key| ProtocolError::new(ErrorCode::A2aProtocolError, key);
        if let (Some(known), Some(seen)) = (&doc.execution.task_id, &report.task_id) {
            if known != seen {
                return Err(protocol(MessageKey::TaskChanged));
            }
        }
        if report
            .context_id
            .as_ref()
            .is_some_and(|c| *c != doc.context_id)
        {
            return Err(protocol(MessageKey::ContextChanged));
        }
        let mut sessions = report.session_ids.iter();
        let first = sessions.next();
        if sessions.next().is_some() {
            return Err(protocol(MessageKey::SessionChanged));
        }
        if let (Some(known), Some(seen)) = (&doc.iac_code_session_id, first) {
            if known != seen {
                return Err(protocol(MessageKey::SessionChanged));
            }
        }
        Ok(())
    }

    /// Copies the mapper's durable state into the document.
    pub(super) fn sync(&self, doc: &mut ThreadDocument) {
        let durable = self.mapper.durable();
        let sequence = u64::try_from(durable.pipeline_sequence).unwrap_or(0);
        doc.execution.pipeline_sequence = doc.execution.pipeline_sequence.max(sequence);
        doc.execution.pipeline_open_steps = durable.pipeline_open_steps.clone();
        doc.execution.text_snapshot_digests = durable.text_snapshot_digests.clone();
    }

    /// After a terminal event: without pending interrupts the execution
    /// ends (and is cancelled first when a transport or write failed).
    pub(super) fn settle(&mut self, doc: &mut ThreadDocument, io: &mut Io, failure: Failure) {
        if failure == Failure::Persist {
            doc.execution.pending.clear();
        }
        if !doc.execution.pending.is_empty() {
            return;
        }
        if failure != Failure::Plain {
            if let Some(task) = doc.execution.task_id.clone() {
                io.cancel_task(&task);
            }
        }
        self.sync(doc);
        mark_terminal(doc);
        io.persist(Owner::BestEffort(self.thread_id.to_string()), doc);
    }

    pub(super) fn emit_session(&mut self, doc: &ThreadDocument, io: &mut Io, now: i64) {
        self.session_emitted = true;
        let info = SessionInfo {
            execution_id: doc.execution.execution_id.clone(),
            task_id: doc.execution.task_id.clone(),
            ros_invocation_id: doc.execution.ros_invocation_id.clone(),
            session_id: doc.iac_code_session_id.clone(),
        };
        let body = self.mapper.session_event(&info);
        self.emit(io, now, body);
    }

    pub(super) fn emit_run_error(&mut self, io: &mut Io, now: i64, error: &ProtocolError) {
        let body = EventBody::RunError {
            message: error.message(self.language).to_owned(),
            code: Some(error.code.as_str().to_owned()),
            usage: self.mapper.usage(),
        };
        self.emit(io, now, body);
    }

    pub(super) fn emit(&mut self, io: &mut Io, now: i64, body: EventBody) {
        self.emit_all(io, vec![Event::new(now, body)]);
    }

    pub(super) fn emit_all(&mut self, io: &mut Io, events: Vec<Event>) {
        if let Some(unwritten) = self.unwritten.as_mut() {
            unwritten.extend(events);
            return;
        }
        for event in events {
            if let Some(span) = span_of(&event.body) {
                self.announced.insert(span);
            }
            io.push(Output::Emit {
                thread_id: self.thread_id.clone(),
                run_id: self.run_id.clone(),
                event,
            });
        }
    }

    /// Closes every open span the client saw open, in the mapper's order,
    /// or will see open first (an opening held for a write, as the closing
    /// then is).
    pub(super) fn close_all(&mut self, now: i64) -> Vec<Event> {
        let unwritten: BTreeSet<_> = (self.unwritten.iter().flatten())
            .filter_map(|e| span_of(&e.body))
            .collect();
        let announced = &self.announced;
        self.mapper
            .close_all(now)
            .into_iter()
            .filter(|e| {
                span_of(&e.body)
                    .is_none_or(|span| announced.contains(&span) || unwritten.contains(&span))
            })
            .collect()
    }

    pub(super) fn end(&mut self, io: &mut Io) {
        self.done = true;
        self.waiting = None;
        io.push(Output::RunEnded {
            thread_id: self.thread_id.clone(),
            run_id: self.run_id.clone(),
        });
    }

    pub(super) fn close_stream(&mut self, io: &mut Io) {
        if let Some(stream) = self.stream.take() {
            if io.owners.remove(&stream.id).is_some() {
                io.push(Output::CloseStream { id: stream.id });
            }
        }
    }

    pub(super) fn stream_is(&self, id: EffectId) -> bool {
        self.stream.as_ref().is_some_and(|s| s.id == id)
    }

    pub(super) fn owner(&self) -> Owner {
        Owner::Run {
            thread: self.thread_id.clone(),
            run_id: self.run_id.clone(),
        }
    }
}

/// Merges required inputs into the pending set (SPEC §7–8): each must belong
/// to the thread's task and context; known entries keep their expiry (a
/// sideband sighting upgrades them); `replace` drops entries not seen again.
pub(super) fn merge_pending(
    doc: &mut ThreadDocument,
    inputs: &[RequiredInput],
    replace: bool,
    now: i64,
    ttl_ms: i64,
) -> Result<(), ProtocolError> {
    let protocol = |key| ProtocolError::new(ErrorCode::A2aProtocolError, key);
    for input in inputs {
        if input
            .request_task_id
            .as_ref()
            .is_some_and(|t| Some(t) != doc.execution.task_id.as_ref())
        {
            return Err(protocol(MessageKey::InterruptOtherTask));
        }
        if input
            .context_id
            .as_ref()
            .is_some_and(|c| *c != doc.context_id)
        {
            return Err(protocol(MessageKey::InterruptOtherContext));
        }
    }
    let mut merged = if replace {
        Default::default()
    } else {
        doc.execution.pending.clone()
    };
    for input in inputs {
        let entry = match doc.execution.pending.get(&input.input_id) {
            Some(existing) => {
                let mut kept = existing.clone();
                kept.sideband |= input.sideband;
                kept
            }
            None => PendingInput::new(
                &input.projection,
                input.sideband,
                Some(stored_expiry(&input.expires_at, now, ttl_ms)),
            ),
        };
        merged.insert(input.input_id.clone(), entry);
    }
    doc.execution.pending = merged;
    Ok(())
}

/// The AG-UI interrupt of a stored pending input.
pub(super) fn interrupt_of(
    pending: &PendingInput,
    now: i64,
    ttl_ms: i64,
    language: Language,
) -> Interrupt {
    let expires = pending
        .expires_at
        .clone()
        .unwrap_or_else(|| iso_utc(now + ttl_ms));
    build_interrupt(&Value::Object(pending.value.clone()), &expires, language)
}

/// The `error` object of a JSON-RPC response, if it is one.
pub(super) fn rpc_error(frame: &Value) -> Option<JsonRpcError> {
    let error = frame.get("error")?;
    Some(
        serde_json::from_value(error.clone()).unwrap_or(JsonRpcError {
            code: 0,
            message: String::new(),
            data: None,
        }),
    )
}

/// The AG-UI error for an A2A refusal of an interrupt answer.
pub(super) fn rejection(error: &JsonRpcError) -> ProtocolError {
    if error.is_session_backup_not_ready() {
        ProtocolError::new(
            ErrorCode::SessionBackupNotReady,
            MessageKey::SessionBackupNotReady,
        )
    } else {
        ProtocolError::new(ErrorCode::A2aUnavailable, MessageKey::A2aRejectedResponse)
    }
}

/// The span an opening or closing event belongs to.
pub(super) fn span_of(body: &EventBody) -> Option<(&'static str, String)> {
    match body {
        EventBody::TextMessageStart { message_id, .. }
        | EventBody::TextMessageEnd { message_id } => Some(("text", message_id.clone())),
        EventBody::ReasoningStart { message_id } | EventBody::ReasoningEnd { message_id } => {
            Some(("reasoning", message_id.clone()))
        }
        EventBody::ReasoningMessageStart { message_id, .. }
        | EventBody::ReasoningMessageEnd { message_id } => {
            Some(("reasoning-message", message_id.clone()))
        }
        EventBody::ToolCallStart { tool_call_id, .. } | EventBody::ToolCallEnd { tool_call_id } => {
            Some(("tool", tool_call_id.clone()))
        }
        EventBody::StepStarted { step_name } | EventBody::StepFinished { step_name } => {
            Some(("step", step_name.clone()))
        }
        _ => None,
    }
}

/// The expiry to store: an upstream `expiresAt` in any offset is kept as the
/// same instant in UTC; one that does not parse (it would make the document
/// unreadable) falls back to now + TTL.
fn stored_expiry(expires_at: &str, now: i64, ttl_ms: i64) -> String {
    iso_utc(parse_iso_ms(expires_at).unwrap_or(now.saturating_add(ttl_ms)))
}
