//! The answer of one cancel-extension request (SPEC §9): it waits for both
//! the persist of the ended execution and the reply to its `CancelTask`, so
//! that after the 200 the runtime no longer reports the task as working.
//!
//! Any reply to the `CancelTask` counts as "done trying" (a result, a
//! JSON-RPC error such as `TASK_NOT_CANCELABLE`, a transport failure or the
//! host's timeout): the execution is ended locally either way. Only the
//! persist decides the status: 200 `cancelled`, or 503 `STATE_UNAVAILABLE`.

use serde_json::{json, Value};

use crate::error::{ErrorCode, MessageKey, ProtocolError};
use crate::i18n::Language;

/// What a cancel request still waits for.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct CancelWait {
    execution_id: String,
    language: Language,
    /// `None` until the persist answered; then whether it succeeded.
    persisted: Option<bool>,
    /// True once the `CancelTask` replied, or when there was no task.
    task_done: bool,
}

/// One answer a cancel request waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CancelStep {
    /// The persist of the ended execution finished (`true`: durable).
    Persisted(bool),
    /// The `CancelTask` replied in any way.
    TaskReplied,
}

impl CancelWait {
    /// A cancel of `execution_id`; `has_task` is false when no A2A task
    /// exists, so no `CancelTask` reply is awaited.
    pub(super) fn new(execution_id: String, language: Language, has_task: bool) -> Self {
        CancelWait {
            execution_id,
            language,
            persisted: None,
            task_done: !has_task,
        }
    }

    /// Records `step`; returns the `(status, body)` answer once nothing is
    /// awaited any more.
    pub(super) fn step(&mut self, step: CancelStep) -> Option<(u16, Value)> {
        match step {
            CancelStep::Persisted(ok) => self.persisted = Some(ok),
            CancelStep::TaskReplied => self.task_done = true,
        }
        match self.persisted {
            Some(_) if !self.task_done => None,
            Some(true) => Some((
                200,
                json!({"executionId": self.execution_id, "status": "cancelled"}),
            )),
            Some(false) => {
                let error =
                    ProtocolError::new(ErrorCode::StateUnavailable, MessageKey::StateUnavailable);
                Some((error.code.http_status(), error.envelope(self.language)))
            }
            None => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wait(has_task: bool) -> CancelWait {
        CancelWait::new("e-1".to_owned(), Language::En, has_task)
    }

    #[test]
    fn waits_for_both_in_either_order() {
        let mut first_persist = wait(true);
        assert_eq!(first_persist.step(CancelStep::Persisted(true)), None);
        let answer = first_persist.step(CancelStep::TaskReplied);
        assert_eq!(answer.map(|a| a.0), Some(200));

        let mut first_reply = wait(true);
        assert_eq!(first_reply.step(CancelStep::TaskReplied), None);
        let (status, body) = first_reply.step(CancelStep::Persisted(true)).unwrap();
        assert_eq!(status, 200);
        assert_eq!(body, json!({"executionId": "e-1", "status": "cancelled"}));
    }

    #[test]
    fn without_a_task_only_the_persist_counts() {
        let mut no_task = wait(false);
        let answer = no_task.step(CancelStep::Persisted(true));
        assert_eq!(answer.map(|a| a.0), Some(200));
    }

    #[test]
    fn a_failed_persist_answers_503_after_the_reply() {
        let mut failed = wait(true);
        assert_eq!(failed.step(CancelStep::Persisted(false)), None);
        let (status, body) = failed.step(CancelStep::TaskReplied).unwrap();
        assert_eq!(status, 503);
        assert_eq!(body["error"]["code"], "STATE_UNAVAILABLE");
    }
}
