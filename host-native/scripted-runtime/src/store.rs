//! The runtime's task state: tasks per context, their merged metadata, waits,
//! applied answers and the run (if any) currently playing on each task.
//!
//! Everything lives behind one mutex in [`crate::Shared`]; no lock is held
//! across an await. Frames change a task only through [`Store::apply`], which
//! mirrors what the real runtime folds into its task store, so GetTask
//! snapshots show what the streams showed.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use iac_agui_core::a2a::{Message, StatusMetadata, StreamResponse, Task, TaskState, TaskStatus};
use iac_agui_core::ids::IdGen;
use serde_json::{json, Map, Value};
use tokio::sync::{mpsc, oneshot, Notify};

use crate::clock::Clock;
use crate::frames::{ToolCall, TurnIds};
use crate::pipeline::PipelineState;
use crate::run::Step;

/// History entries kept per task (GetTask asks for at most 100).
const HISTORY_CAP: usize = 200;

/// All tasks and contexts of one runtime.
#[derive(Debug)]
pub(crate) struct Store {
    pub(crate) ids: IdGen,
    pub(crate) clock: Clock,
    pub(crate) tasks: BTreeMap<String, TaskRecord>,
    pub(crate) contexts: BTreeMap<String, ContextRecord>,
    pub(crate) instance_id: String,
}

/// One A2A context: its session and its tasks, oldest first.
#[derive(Debug)]
pub(crate) struct ContextRecord {
    pub(crate) session: String,
    pub(crate) tasks: Vec<String>,
    /// ensure-restored calls still to be answered 409 (backup-not-ready).
    pub(crate) restore_holds: u32,
    /// Permission answers still to be rejected with SESSION_BACKUP_NOT_READY.
    pub(crate) answer_holds: u32,
}

/// One task.
#[derive(Debug)]
pub(crate) struct TaskRecord {
    pub(crate) ids: TurnIds,
    pub(crate) status: TaskStatus,
    pub(crate) history: Vec<Message>,
    /// The merged `metadata.iac_code` keys a snapshot shows.
    pub(crate) meta: Map<String, Value>,
    pub(crate) exec_status: &'static str,
    pub(crate) execution_id: String,
    pub(crate) failed_this_turn: bool,
    pub(crate) wait: Option<Wait>,
    /// Permission answers applied so far, by input id.
    pub(crate) applied: BTreeMap<String, Applied>,
    /// The snapshot GetTask keeps returning after a normal-mode permission
    /// answer (the real runtime's stale snapshot, A2A-WIRE §3.2).
    pub(crate) frozen: Option<Task>,
    pub(crate) run: Option<RunControl>,
    pub(crate) pipeline: Option<PipelineState>,
}

/// What a parked task waits for.
#[derive(Debug, Clone)]
pub(crate) enum Wait {
    /// A normal-mode (top-level) permission; the turn continues on answer.
    Permission {
        input: Value,
        call: ToolCall,
        stage: PermissionStage,
    },
    /// A pipeline `ask_user_question`, answered by text.
    Question { input: Value },
    /// A pipeline candidate selection, answered by text.
    Selection { input: Value },
    /// A side-band (candidate) permission; the run holds, WORKING, until the
    /// answer arrives through SendMessage.
    Sideband { input: Value, call: ToolCall },
}

impl Wait {
    pub(crate) fn input(&self) -> &Value {
        match self {
            Wait::Permission { input, .. }
            | Wait::Question { input }
            | Wait::Selection { input }
            | Wait::Sideband { input, .. } => input,
        }
    }
}

/// Where a normal-mode permission sits in its scenario.
#[derive(Debug, Clone)]
pub(crate) enum PermissionStage {
    /// The only permission of the turn.
    Single,
    /// The first of two; the second call waits next.
    FirstOfTwo { second: ToolCall },
    /// The second of two; both calls run after it.
    SecondOfTwo {
        first: ToolCall,
        first_decision: String,
    },
}

/// A permission answer already applied.
#[derive(Debug, Clone)]
pub(crate) struct Applied {
    pub(crate) tool_use_id: String,
    pub(crate) decision: String,
}

/// The controls of the run playing on a task.
#[derive(Debug)]
pub(crate) struct RunControl {
    pub(crate) cancel: Arc<Signal>,
    pub(crate) subscribers: Vec<Subscriber>,
    /// Set while the run holds for a side-band answer.
    pub(crate) answer: Option<oneshot::Sender<Vec<Step>>>,
    /// Fired when a SubscribeToTask stream attaches.
    pub(crate) joined: Arc<Notify>,
    /// Stops the player when the runtime shuts down.
    pub(crate) abort: Option<tokio::task::AbortHandle>,
}

/// A SubscribeToTask stream attached to a run.
#[derive(Debug, Clone)]
pub(crate) struct Subscriber {
    pub(crate) id_json: String,
    pub(crate) tx: mpsc::Sender<Bytes>,
}

/// A one-shot flag that async code can wait on (cancellation).
#[derive(Debug, Default)]
pub(crate) struct Signal {
    set: AtomicBool,
    notify: Notify,
}

impl Signal {
    pub(crate) fn fire(&self) {
        self.set.store(true, Ordering::SeqCst);
        self.notify.notify_waiters();
    }

    pub(crate) fn is_set(&self) -> bool {
        self.set.load(Ordering::SeqCst)
    }

    pub(crate) async fn wait(&self) {
        let notified = self.notify.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if self.is_set() {
            return;
        }
        notified.await;
    }
}

impl Store {
    pub(crate) fn new(seed: u64, clock_start: u64) -> Self {
        let mut ids = IdGen::new(seed);
        let instance_id = format!("instance-{}", ids.uuid_hex());
        Store {
            ids,
            clock: Clock::new(clock_start),
            tasks: BTreeMap::new(),
            contexts: BTreeMap::new(),
            instance_id,
        }
    }

    /// The context record, created with a fresh session on first use.
    pub(crate) fn context(&mut self, context_id: &str) -> &mut ContextRecord {
        if !self.contexts.contains_key(context_id) {
            let session = self.ids.uuid();
            self.contexts.insert(
                context_id.to_owned(),
                ContextRecord {
                    session,
                    tasks: Vec::new(),
                    restore_holds: 0,
                    answer_holds: 0,
                },
            );
        }
        self.contexts.get_mut(context_id).expect("inserted above")
    }

    /// Creates a task in `context_id` and returns its identity.
    pub(crate) fn create_task(&mut self, context_id: &str) -> TurnIds {
        let task = self.ids.uuid();
        let execution_id = format!("exec-{}", self.ids.uuid_hex());
        let context = self.context(context_id);
        context.tasks.push(task.clone());
        let ids = TurnIds {
            task: task.clone(),
            context: context_id.to_owned(),
            session: context.session.clone(),
        };
        let mut meta = Map::new();
        meta.insert("iacCodeSessionId".to_owned(), json!(ids.session));
        self.tasks.insert(
            task,
            TaskRecord {
                ids: ids.clone(),
                status: TaskStatus {
                    state: TaskState::Submitted,
                    message: None,
                    timestamp: None,
                },
                history: Vec::new(),
                meta,
                exec_status: "working",
                execution_id,
                failed_this_turn: false,
                wait: None,
                applied: BTreeMap::new(),
                frozen: None,
                run: None,
                pipeline: None,
            },
        );
        ids
    }

    /// Folds one emitted frame into its task.
    pub(crate) fn apply(&mut self, task_id: &str, frame: &StreamResponse) {
        let Some(record) = self.tasks.get_mut(task_id) else {
            return;
        };
        record.apply(frame);
    }
}

impl TaskRecord {
    fn apply(&mut self, frame: &StreamResponse) {
        let StreamResponse::StatusUpdate(update) = frame else {
            if let StreamResponse::Task(task) = frame {
                self.status = task.status.clone();
            }
            return;
        };
        let state = update.status.state.clone();
        if state == TaskState::Working {
            if let Some(message) = &update.status.message {
                if self.history.len() >= HISTORY_CAP {
                    self.history.remove(0);
                }
                self.history.push(Message::clone(message));
            }
        }
        if state == TaskState::Failed {
            self.failed_this_turn = true;
        }
        let iac = update.metadata.as_ref().and_then(StatusMetadata::iac_code);
        if let Some(iac) = iac {
            if let Some(permission) = iac.get("permission") {
                self.meta
                    .insert("permission".to_owned(), permission.clone());
            }
            let mut envelopes: Vec<&Value> = Vec::new();
            if let Some(batch) = iac
                .get("pipelineBatch")
                .and_then(|b| b.get("events"))
                .and_then(Value::as_array)
            {
                envelopes.extend(batch.iter());
            }
            if let Some(envelope) = iac.get("pipeline") {
                envelopes.push(envelope);
            }
            if let Some(last) = envelopes.last() {
                self.meta.insert("pipeline".to_owned(), (*last).clone());
            }
            if let Some(pipeline) = &mut self.pipeline {
                for envelope in envelopes {
                    pipeline.journal.push(envelope.clone());
                }
            }
        }
        match (
            state == TaskState::InputRequired,
            iac.and_then(|m| m.get("input")),
        ) {
            (true, Some(input)) => {
                self.meta.insert("input".to_owned(), input.clone());
            }
            _ => {
                self.meta.remove("input");
            }
        }
        self.status = update.status.clone();
    }

    /// True while a run is playing on the task and has not been told to
    /// stop (a canceled run only pushes its CANCELED frame).
    pub(crate) fn is_running(&self) -> bool {
        self.run.as_ref().is_some_and(|run| !run.cancel.is_set())
    }

    /// The GetTask view: status, the last `history_length` messages and the
    /// merged metadata with an `executionControl` snapshot.
    pub(crate) fn snapshot(&self, instance_id: &str, history_length: Option<usize>) -> Task {
        let mut task = match &self.frozen {
            Some(frozen) => frozen.clone(),
            None => self.live_snapshot(instance_id),
        };
        if let Some(limit) = history_length {
            let skip = task.history.len().saturating_sub(limit);
            task.history.drain(..skip);
        }
        task
    }

    /// The snapshot as of now, ignoring any frozen one.
    pub(crate) fn live_snapshot(&self, instance_id: &str) -> Task {
        let mut iac = self.meta.clone();
        iac.insert(
            "executionControl".to_owned(),
            self.execution_control(instance_id),
        );
        Task {
            id: self.ids.task.clone(),
            context_id: self.ids.context.clone(),
            status: self.status.clone(),
            history: self.history.clone(),
            artifacts: Vec::new(),
            metadata: Some(json!({ "iac_code": iac })),
        }
    }

    fn execution_control(&self, instance_id: &str) -> Value {
        let running = self.is_running();
        let blockers = if running {
            json!([{ "kind": "execution", "count": 1 }])
        } else {
            json!([])
        };
        json!({
            "taskId": self.ids.task, "contextId": self.ids.context,
            "executionId": self.execution_id, "phase": "running",
            "executionStatus": self.exec_status,
            "revision": 0, "persistedRevision": 0, "connectionEpoch": -1,
            "pauseId": null, "pauseReason": null, "terminationReason": null,
            "releaseReady": false, "pauseComplete": false, "streamAvailable": running,
            "blockers": blockers, "externalOperations": [],
            "backup": { "status": "not_requested" },
            "serverInstanceId": instance_id, "expiresAt": null, "commitError": null
        })
    }

    /// Starts a new turn: clears the per-turn flags and the frozen snapshot.
    pub(crate) fn begin_turn(&mut self) {
        self.failed_this_turn = false;
        self.frozen = None;
        self.exec_status = "working";
    }

    /// Records the end of a run.
    pub(crate) fn end_run(&mut self) {
        self.run = None;
        self.exec_status = if self.status.state == TaskState::Canceled {
            "canceled"
        } else if self.failed_this_turn {
            "failed"
        } else if self.status.state == TaskState::Completed {
            "completed"
        } else {
            "input-required"
        };
    }
}
