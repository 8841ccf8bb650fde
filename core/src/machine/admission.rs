//! Admission of a `POST /` (SPEC §5 steps 3–9) as one pure function.

use crate::document::{ExecutionRecord, ThreadDocument};
use crate::error::{ErrorCode, MessageKey, ProtocolError};
use crate::ids::IdGen;
use crate::mapper::iso_utc;
use crate::validate::ValidatedRun;

/// An admitted request: the document to persist before the stream starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Admitted {
    /// The thread document with this run recorded (and, for a new turn, the
    /// execution rotated). The host persists it; on failure every change is
    /// rolled back by keeping the previous document.
    pub document: ThreadDocument,
    /// The A2A task of interrupts that expired on this access: cancel it.
    pub expired_task: Option<String>,
}

/// Decides admission of `run` on a thread whose stored document is `loaded`
/// (`None`: no thread yet), `busy` when the thread already has an active run.
/// `workspace` is the resolved cwd.
///
/// # Errors
/// The admission refusal, with its code (HTTP status via
/// [`ErrorCode::http_status`]).
pub fn admit(
    run: &ValidatedRun,
    workspace: &str,
    loaded: Option<&ThreadDocument>,
    busy: bool,
    now_ms: i64,
    interrupt_ttl_ms: i64,
    ids: &mut IdGen,
) -> Result<Admitted, ProtocolError> {
    let input = &run.input;
    let props = &run.iac;
    let created = loaded.is_none();
    let mut doc = match loaded {
        Some(doc) => doc.clone(),
        None if run.is_resume() => {
            return Err(refusal(ErrorCode::ExecutionLost, MessageKey::ExecutionLost))
        }
        None => ThreadDocument::new(
            &input.thread_id,
            workspace,
            props.user_id.clone(),
            ids.uuid(),
            props.ros_invocation_id.clone(),
        ),
    };
    if let Some(previous) = doc.run_digests.get(&input.run_id) {
        let code = if *previous == run.digest {
            ErrorCode::DuplicateRunId
        } else {
            ErrorCode::RunIdConflict
        };
        return Err(refusal(code, MessageKey::RunIdUsed));
    }
    if busy {
        return Err(refusal(ErrorCode::ThreadBusy, MessageKey::ThreadBusy));
    }
    if doc.cwd != workspace || doc.user_id != props.user_id {
        return Err(refusal(
            ErrorCode::ThreadBindingConflict,
            MessageKey::ThreadBindingConflict,
        ));
    }
    let mut expired_task = None;
    if run.is_resume() {
        if props.ros_invocation_id != doc.execution.ros_invocation_id {
            return Err(refusal(
                ErrorCode::ExecutionLost,
                MessageKey::ResumeMismatch,
            ));
        }
    } else {
        // An expired interrupt is rejected on access: its pending state goes,
        // so a new turn may start (a resume reports EXECUTION_EXPIRED itself).
        if doc.has_expired_interrupt(now_ms) {
            expired_task = doc.execution.task_id.take();
            doc.execution.pending.clear();
            let id = doc.execution.execution_id.clone();
            doc.terminal_execution_ids.insert(id);
        }
        if !doc.execution.pending.is_empty() {
            return Err(refusal(
                ErrorCode::ResumeRequired,
                MessageKey::ResumeRequired,
            ));
        }
        if !created {
            rotate(&mut doc, props.ros_invocation_id.clone(), ids);
        }
    }
    // Documents written by the reference carry no expiry: start the clock now.
    for pending in doc.execution.pending.values_mut() {
        if pending.expires_at.is_none() {
            pending.expires_at = Some(iso_utc(now_ms + interrupt_ttl_ms));
        }
    }
    doc.run_digests
        .insert(input.run_id.clone(), run.digest.clone());
    Ok(Admitted {
        document: doc,
        expired_task,
    })
}

/// A new normal turn on an existing thread: the old execution ends and a new
/// one starts with a fresh id and no task, cursor, open steps or digests.
fn rotate(doc: &mut ThreadDocument, ros_invocation_id: String, ids: &mut IdGen) {
    let old = doc.execution.execution_id.clone();
    doc.terminal_execution_ids.insert(old);
    doc.execution = ExecutionRecord::new(ids.uuid(), ros_invocation_id);
}

fn refusal(code: ErrorCode, key: MessageKey) -> ProtocolError {
    ProtocolError::new(code, key)
}
