//! The resume part of the run driver (SPEC §8): preparation (expiry,
//! ensure-restored, GetTask, Pipeline recovery, reconciliation, entry
//! checks) and application (streamed or sideband permission answers,
//! question answers, cancelled answers, acceptance commits).

use serde_json::Value;

use super::requests::{self, Envelope};
use super::resume::{answer_digest, answer_text, check_entries, EntryCheck, Resolution};
use super::run::{Cont, Failure, Item, Prep, Run, StreamKind, Work};
use super::run_effects::{merge_pending, rejection, rpc_error};
use super::{expire, mark_terminal, Answer, Io};
use crate::a2a::{Method, Part, Task, TaskState};
use crate::agui::ResumeStatus;
use crate::document::ThreadDocument;
use crate::error::{ErrorCode, MessageKey, ProtocolError};
use crate::mapper::FeedOptions;

impl Run {
    /// Steps 1–4 of SPEC §8 up to the GetTask call.
    pub(super) fn prepare_resume(&mut self, doc: &mut ThreadDocument, io: &mut Io, now: i64) {
        let entries = self.entries.clone().unwrap_or_default();
        if doc.execution.task_id.is_none() || doc.execution.pending.is_empty() {
            let all_applied = !entries.is_empty()
                && entries.iter().all(|e| {
                    doc.applied_digest(&e.interrupt_id) == Some(answer_digest(e).as_str())
                });
            let error = if all_applied {
                ProtocolError::new(ErrorCode::ResumeAlreadyApplied, MessageKey::AlreadyApplied)
            } else {
                ProtocolError::new(ErrorCode::ExecutionLost, MessageKey::TaskLost)
            };
            return self.fail(doc, io, now, error, Failure::Plain);
        }
        if doc.has_expired_interrupt(now) {
            if let Some(task) = expire(doc) {
                io.cancel_task(&task);
            }
            let error =
                ProtocolError::new(ErrorCode::ExecutionExpired, MessageKey::InterruptExpired);
            return self.fail(doc, io, now, error, Failure::Plain);
        }
        self.known_before = doc.execution.pending.keys().cloned().collect();
        if let Some(session) = doc.iac_code_session_id.clone() {
            let task = doc.execution.task_id.clone().unwrap_or_default();
            let body = requests::ensure_restored_body(&doc.cwd, &session, &task);
            let id = self.http(
                io,
                "POST",
                "/iac-code/session/ensure-restored".to_owned(),
                Some(body),
            );
            self.waiting = Some((id, Cont::EnsureRestored));
            return;
        }
        self.get_task(doc, io, Cont::PrepTask);
    }

    /// Continuations of the resume part.
    pub(super) fn resume_cont_resume(
        &mut self,
        doc: &mut ThreadDocument,
        io: &mut Io,
        now: i64,
        cont: Cont,
        answer: Answer,
    ) {
        let persisted = matches!(answer, Answer::Persisted { ok: true });
        match cont {
            Cont::EnsureRestored => self.on_ensure_restored(doc, io, now, answer),
            Cont::PrepTask => self.on_prep_task(doc, io, now, answer),
            Cont::PrepPipeline => {
                if !self.apply_recovery(io, now, &answer) {
                    return self.fail_unavailable_keep(doc, io, now);
                }
                self.reconcile(doc, io, now);
            }
            Cont::PrepPersist if persisted => self.after_reconcile(doc, io, now),
            Cont::PrepPersist => self.fail_persist(doc, io, now, MessageKey::InterruptCommitFailed),
            Cont::CancelledPersist if persisted => {
                let error =
                    ProtocolError::new(ErrorCode::Cancelled, MessageKey::CancelledByResponse);
                self.fail(doc, io, now, error, Failure::Plain);
            }
            Cont::CancelledPersist => {
                self.fail_persist(doc, io, now, MessageKey::ExecutionCommitFailed)
            }
            Cont::SidebandSend(i) => self.on_sideband_sent(doc, io, now, i, answer),
            Cont::SidebandCommit(_) if !persisted => {
                self.fail_persist(doc, io, now, MessageKey::ResponseCommitFailed)
            }
            Cont::SidebandCommit(i) if i + 1 < self.plan.len() => {
                self.send_sideband(doc, io, i + 1)
            }
            Cont::SidebandCommit(_) => {
                self.accepted = true;
                self.get_task(doc, io, Cont::SidebandTask { second: false });
            }
            Cont::SidebandTask { second } => self.on_sideband_task(doc, io, now, second, answer),
            _ => {}
        }
    }

    fn on_ensure_restored(
        &mut self,
        doc: &mut ThreadDocument,
        io: &mut Io,
        now: i64,
        answer: Answer,
    ) {
        match answer {
            Answer::Http { status: 200, body }
                if matches!(
                    body.get("status").and_then(Value::as_str),
                    Some("current" | "restored")
                ) =>
            {
                self.get_task(doc, io, Cont::PrepTask)
            }
            Answer::Http { status: 404, .. } => {
                let error = ProtocolError::new(ErrorCode::ExecutionLost, MessageKey::SessionLost);
                self.fail(doc, io, now, error, Failure::Plain)
            }
            Answer::Http { status: 409, body }
                if body.pointer("/error/code").and_then(Value::as_str)
                    == Some("SESSION_BACKUP_NOT_READY") =>
            {
                let error = ProtocolError::new(
                    ErrorCode::SessionBackupNotReady,
                    MessageKey::SessionBackupNotReady,
                );
                self.fail(doc, io, now, error, Failure::Plain)
            }
            _ => self.fail_unavailable_keep(doc, io, now),
        }
    }

    /// Step 4: the task snapshot must be this thread's; it is mapped without
    /// Pipeline envelopes and status text, then missed Pipeline events are
    /// fetched.
    fn on_prep_task(&mut self, doc: &mut ThreadDocument, io: &mut Io, now: i64, answer: Answer) {
        let Some(task) = task_of(&answer) else {
            return match &answer {
                Answer::Response(v) => match rpc_error(v) {
                    Some(e) if e.is_session_backup_not_ready() => {
                        self.fail(doc, io, now, rejection(&e), Failure::Plain)
                    }
                    _ => self.fail_unavailable_keep(doc, io, now),
                },
                _ => self.fail_unavailable_keep(doc, io, now),
            };
        };
        if Some(&task.id) != doc.execution.task_id.as_ref() || task.context_id != doc.context_id {
            let error = ProtocolError::new(ErrorCode::A2aProtocolError, MessageKey::TaskMismatch);
            return self.fail(doc, io, now, error, Failure::Plain);
        }
        let mapped = self
            .mapper
            .feed_task(&task, FeedOptions::SNAPSHOT, now, &mut io.ids);
        let work = Work { mapped };
        if let Err(error) = self.check_identity(doc, &work) {
            return self.fail(doc, io, now, error, Failure::Plain);
        }
        let Work { mapped } = work;
        if doc.iac_code_session_id.is_none() {
            doc.iac_code_session_id = mapped.report.session_ids.first().cloned();
        }
        let meta = crate::a2a::IacCode::of_value(task.metadata.as_ref());
        self.prep = Some(Prep {
            inputs: mapped.report.inputs,
            task_terminal: matches!(
                task.status.state,
                TaskState::Completed
                    | TaskState::Failed
                    | TaskState::Canceled
                    | TaskState::Rejected
                    | TaskState::AuthRequired
            ),
            has_projection: meta
                .is_some_and(|m| m.get("input").is_some() || m.get("pendingPermissions").is_some()),
        });
        // Emitted once the reconciled pending set is written.
        self.unwritten = Some(mapped.events);
        self.sync(doc);
        let after = doc.execution.pipeline_sequence;
        let task_id = doc.execution.task_id.clone().unwrap_or_default();
        let id = self.http(
            io,
            "GET",
            requests::pipeline_state_path(&task_id, after),
            None,
        );
        self.waiting = Some((id, Cont::PrepPipeline));
    }

    /// Step 5: reconcile the pending set with the task's projection, drop
    /// applied inputs, persist.
    fn reconcile(&mut self, doc: &mut ThreadDocument, io: &mut Io, now: i64) {
        let prep = self.prep.take().unwrap_or(Prep {
            inputs: Vec::new(),
            task_terminal: false,
            has_projection: false,
        });
        let entries = self.entries.clone().unwrap_or_default();
        let resumed_known = entries
            .iter()
            .any(|e| self.known_before.contains(&e.interrupt_id));
        let replace = prep.task_terminal || (!resumed_known && prep.has_projection);
        if let Err(error) =
            merge_pending(doc, &prep.inputs, replace, now, io.config.interrupt_ttl_ms)
        {
            return self.fail(doc, io, now, error, Failure::Plain);
        }
        let applied: Vec<String> = doc
            .execution
            .pending
            .keys()
            .filter(|id| doc.applied_digest(id).is_some())
            .cloned()
            .collect();
        for id in applied {
            let recorded = doc.applied_digest(&id).map(str::to_owned);
            if let Some(entry) = entries.iter().find(|e| e.interrupt_id == id) {
                if recorded.as_deref() != Some(answer_digest(entry).as_str()) {
                    let error = ProtocolError::new(
                        ErrorCode::ResumeAlreadyApplied,
                        MessageKey::AlreadyApplied,
                    );
                    return self.fail(doc, io, now, error, Failure::Plain);
                }
            }
            doc.execution.pending.remove(&id);
        }
        let id = self.persist(doc, io);
        self.waiting = Some((id, Cont::PrepPersist));
    }

    /// Step 6 and the start of applying.
    fn after_reconcile(&mut self, doc: &mut ThreadDocument, io: &mut Io, now: i64) {
        let entries = self.entries.clone().unwrap_or_default();
        match check_entries(doc, &entries, &self.known_before, self.language) {
            Err(error) => self.fail(doc, io, now, error, Failure::Plain),
            Ok(EntryCheck::NewInterrupts) => self.commit_interrupt(doc, io),
            Ok(EntryCheck::Apply(resolutions)) => self.apply(doc, io, now, resolutions),
        }
    }

    /// Sends the answers (SPEC §8 "Applying").
    fn apply(
        &mut self,
        doc: &mut ThreadDocument,
        io: &mut Io,
        now: i64,
        resolutions: Vec<Resolution>,
    ) {
        let mut permissions = Vec::new();
        let mut questions = Vec::new();
        let mut prompt = None;
        for resolution in resolutions {
            if resolution.pending.is_permission() {
                permissions.push(resolution);
                continue;
            }
            if resolution.status == ResumeStatus::Cancelled {
                if let Some(task) = doc.execution.task_id.clone() {
                    io.cancel_task(&task);
                }
                doc.execution.pending.clear();
                mark_terminal(doc);
                let id = io.persist(self.owner(), doc);
                self.waiting = Some((id, Cont::CancelledPersist));
                return;
            }
            let text = answer_text(&resolution.pending, &resolution.payload);
            if text.is_empty() {
                let error =
                    ProtocolError::new(ErrorCode::ResumePayloadInvalid, MessageKey::AnswerMissing);
                return self.fail(doc, io, now, error, Failure::Plain);
            }
            if let Some(tool) = resolution
                .pending
                .value
                .get("toolUseId")
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
            {
                self.resolved_tools.push((tool.to_owned(), text.clone()));
            }
            prompt = Some(text);
            questions.push(resolution);
        }
        if let Some(text) = prompt {
            self.plan = questions;
            let message_id = format!("agui-resume-{}", self.run_id);
            return self.open_message_stream(
                doc,
                io,
                StreamKind::Question,
                message_id,
                &[Part::text(text)],
            );
        }
        let sequence = doc.execution.pipeline_sequence;
        self.recovery_after = (sequence > 0).then_some(sequence);
        let all_sideband = permissions.iter().all(|p| p.pending.sideband);
        self.plan = permissions;
        if all_sideband {
            self.send_sideband(doc, io, 0);
        } else {
            self.open_permission(doc, io, 0);
        }
    }

    /// The streamed answer of `plan[index]`.
    pub(super) fn open_permission(&mut self, doc: &ThreadDocument, io: &mut Io, index: usize) {
        let Some(answer) = self.plan.get(index).cloned() else {
            return;
        };
        let part = permission_part(doc, &answer);
        let message_id = format!("agui-resume-{}-{}", self.run_id, answer.interrupt_id);
        self.open_message_stream(doc, io, StreamKind::Permission(index), message_id, &[part]);
    }

    /// The unary SendMessage of sideband answer `plan[index]`.
    fn send_sideband(&mut self, doc: &ThreadDocument, io: &mut Io, index: usize) {
        let Some(answer) = self.plan.get(index).cloned() else {
            return;
        };
        let part = permission_part(doc, &answer);
        let envelope = Envelope {
            message_id: format!("agui-resume-{}", answer.interrupt_id),
            context_id: &doc.context_id,
            task_id: doc.execution.task_id.as_deref(),
            cwd: &doc.cwd,
            props: &self.props,
            language: self.language,
        };
        let request =
            requests::message_send(Method::SendMessage, io.ids.uuid(), &envelope, &[part]);
        self.call(io, request, Cont::SidebandSend(index));
    }

    fn on_sideband_sent(
        &mut self,
        doc: &mut ThreadDocument,
        io: &mut Io,
        now: i64,
        index: usize,
        answer: Answer,
    ) {
        let Answer::Response(response) = answer else {
            return self.fail_unavailable_keep(doc, io, now);
        };
        if let Some(error) = rpc_error(&response) {
            return self.fail(doc, io, now, rejection(&error), Failure::Plain);
        }
        let Some(committed) = self.plan.get(index).cloned() else {
            return;
        };
        self.commit_answers(doc, &[committed]);
        let id = self.persist(doc, io);
        self.waiting = Some((id, Cont::SidebandCommit(index)));
    }

    /// After sideband answers: one authoritative GetTask, then a
    /// subscription; a second GetTask must show a terminal state.
    fn on_sideband_task(
        &mut self,
        doc: &mut ThreadDocument,
        io: &mut Io,
        now: i64,
        second: bool,
        answer: Answer,
    ) {
        let Some(task) = task_of(&answer) else {
            return self.fail_unavailable_keep(doc, io, now);
        };
        let terminal = task.status.state.is_terminal();
        self.inbox.push_back(Item::Task(Box::new(task)));
        if !terminal {
            self.inbox.push_back(if second {
                Item::RequireTerminal
            } else {
                Item::OpenSubscribe
            });
        }
    }

    /// The sideband subscription errored or ended early: read the task again.
    pub(super) fn sideband_refresh(&mut self, doc: &ThreadDocument, io: &mut Io) {
        self.close_stream(io);
        self.get_task(doc, io, Cont::SidebandTask { second: true });
    }

    fn get_task(&mut self, doc: &ThreadDocument, io: &mut Io, cont: Cont) {
        let task = doc.execution.task_id.clone().unwrap_or_default();
        let request = requests::get_task(io.ids.uuid(), &task);
        self.call(io, request, cont);
    }

    /// A2A unavailable while interrupts stay pending for a retry.
    fn fail_unavailable_keep(&mut self, doc: &mut ThreadDocument, io: &mut Io, now: i64) {
        let error = ProtocolError::new(ErrorCode::A2aUnavailable, MessageKey::A2aUnavailable);
        self.fail(doc, io, now, error, Failure::Plain);
    }
}

/// The permission data part of an answer.
fn permission_part(doc: &ThreadDocument, answer: &Resolution) -> Part {
    let decision = if answer.status == ResumeStatus::Cancelled {
        "deny".to_owned()
    } else {
        answer
            .payload
            .get("decision")
            .and_then(Value::as_str)
            .unwrap_or("deny")
            .to_owned()
    };
    let tool = answer
        .pending
        .value
        .get("toolUseId")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let task = doc.execution.task_id.as_deref().unwrap_or_default();
    requests::permission_part(task, &answer.interrupt_id, tool, &decision)
}

/// The task of a GetTask / SendMessage response (`result` is a bare task or
/// `{"task": …}`).
fn task_of(answer: &Answer) -> Option<Task> {
    let Answer::Response(response) = answer else {
        return None;
    };
    let result = response.get("result")?;
    let value = result.get("task").unwrap_or(result);
    serde_json::from_value(value.clone()).ok()
}
