//! SendStreamingMessage and SendMessage: new tasks, new turns on a task,
//! permission answers (streamed or side-band) and text answers to pipeline
//! questions and selections.
//!
//! Every decision is taken with the store locked, and the run it starts is
//! installed before the lock is released, so concurrent requests see either
//! the old or the new state of a task, never a mix.

use std::sync::Arc;

use bytes::Bytes;
use iac_agui_core::a2a::{JsonRpcError, Message, StreamResponse, TaskState};
use serde_json::{json, Value};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::answer::{correlates, parse_permission, PermissionAnswer};
use crate::frames::{floatify_response, permission_ack};
use crate::pipeline::{self, PipelineState};
use crate::rpc::{
    error, invalid_params, response_json, task_json, task_not_found, validation_failed, Reply,
    STREAM_CHANNEL,
};
use crate::run::{self, Sink, Step};
use crate::scenario::{self, Scenario};
use crate::server::is_protocol_id;
use crate::sse::data_event;
use crate::store::{Applied, Store, Wait};
use crate::Shared;

/// What a decision leads to.
enum Outcome {
    Reply(Reply),
    /// A unary call whose answer is the task once this run has finished.
    AwaitRun {
        join: JoinHandle<()>,
        task_id: String,
    },
}

impl From<JsonRpcError> for Outcome {
    fn from(e: JsonRpcError) -> Self {
        Outcome::Reply(Reply::Error(e))
    }
}

pub(crate) async fn send(
    shared: &Arc<Shared>,
    id_json: &str,
    params: &Value,
    streaming: bool,
) -> Reply {
    let message = match parse_message(params) {
        Ok(m) => m,
        Err(e) => return Reply::Error(e),
    };
    let outcome = {
        let mut store = shared.lock();
        let request = Request {
            shared,
            id_json,
            streaming,
        };
        request.decide(&mut store, message)
    };
    match outcome {
        Outcome::Reply(reply) => reply,
        Outcome::AwaitRun { join, task_id } => {
            let _ = join.await;
            let store = shared.lock();
            match store.tasks.get(&task_id) {
                Some(record) => {
                    let task = task_json(record.snapshot(&store.instance_id, None));
                    Reply::Result(format!("{{\"task\":{task}}}"))
                }
                None => Reply::Error(task_not_found("Task not found")),
            }
        }
    }
}

struct Request<'a> {
    shared: &'a Arc<Shared>,
    id_json: &'a str,
    streaming: bool,
}

impl Request<'_> {
    fn decide(&self, store: &mut Store, mut message: Message) -> Outcome {
        if let Some(context) = &message.context_id {
            if !is_protocol_id(context) {
                return invalid_params("Invalid A2A contextId.").into();
            }
        }
        if message.message_id.is_empty() {
            message.message_id = store.ids.uuid();
        }
        let permission = match parse_permission(&message) {
            Ok(p) => p,
            Err(e) => return e.into(),
        };
        let task_id = message
            .task_id
            .clone()
            .filter(|t| !t.is_empty())
            .or_else(|| permission.as_ref().map(|p| p.task_id.clone()));
        let Some(task_id) = task_id else {
            return self.start_turn(store, message, None);
        };
        let Some(record) = store.tasks.get(&task_id) else {
            return task_not_found("Task not found").into();
        };
        if message
            .context_id
            .as_ref()
            .is_some_and(|c| *c != record.ids.context)
        {
            return invalid_params("Message contextId does not match the task contextId.").into();
        }
        message.context_id = Some(record.ids.context.clone());
        if let Some(answer) = permission {
            return self.permission_answer(store, answer);
        }
        match &record.wait {
            Some(Wait::Question { .. } | Wait::Selection { .. }) => {
                return self.text_answer(store, &task_id, &message)
            }
            Some(Wait::Permission { .. }) => {
                return invalid_params(
                    "permission_resume_invalid: the task is waiting for a permission answer.",
                )
                .into()
            }
            _ => {}
        }
        if record.is_running() {
            let stamp = store.clock.stamp();
            let ids = &store.tasks[&task_id].ids;
            let message = ids.agent_message("4", "Task is already working.");
            let frame = ids.update(
                TaskState::Failed,
                Some(message),
                Some(stamp),
                ids.with_session(json!({})),
            );
            return self.one_frame(frame);
        }
        if matches!(
            record.status.state,
            TaskState::Completed | TaskState::Canceled
        ) {
            return invalid_params(&format!(
                "Task {task_id} is in a terminal state and cannot accept messages."
            ))
            .into();
        }
        self.start_turn(store, message, Some(task_id))
    }

    /// A new turn: on a new task (first frame `task`) or on `existing`.
    fn start_turn(&self, store: &mut Store, message: Message, existing: Option<String>) -> Outcome {
        let text = message.text().into_owned();
        let scenario = Scenario::parse(&text);
        if scenario == Scenario::Reject {
            return validation_failed(
                "message.parts",
                "Rejected by scenario:reject (a scripted validation failure).",
            )
            .into();
        }
        let ids = match &existing {
            Some(task_id) => store.tasks[task_id].ids.clone(),
            None => {
                let context = message
                    .context_id
                    .clone()
                    .unwrap_or_else(|| store.ids.uuid());
                store.create_task(&context)
            }
        };
        if let Some(record) = store.tasks.get_mut(&ids.task) {
            record.begin_turn();
        }
        if scenario == Scenario::BackupNotReady {
            let context = store.context(&ids.context);
            context.restore_holds = 1;
            context.answer_holds = 1;
        }
        let mut steps = Vec::new();
        if existing.is_none() {
            steps.push(Step::Frame(ids.task_frame(echo(
                message,
                &ids.task,
                &ids.context,
            ))));
        }
        if scenario.is_pipeline() {
            let Store {
                ids: gen,
                clock,
                tasks,
                ..
            } = store;
            let Some(record) = tasks.get_mut(&ids.task) else {
                return task_not_found("Task not found").into();
            };
            let state = record
                .pipeline
                .get_or_insert_with(|| PipelineState::new(&ids.context));
            let mut b = pipeline::Builder {
                ids: &ids,
                gen,
                clock,
                state,
            };
            steps.extend(if scenario == Scenario::Question {
                pipeline::question_turn(&mut b, &text)
            } else {
                pipeline::pipeline_turn(&mut b, &text)
            });
        } else {
            let mut b = scenario::Builder {
                ids: ids.clone(),
                gen: &mut store.ids,
                clock: &mut store.clock,
                slow_delay: self.shared.config.slow_delay,
            };
            steps.extend(scenario::normal_turn(&mut b, &scenario));
        }
        self.launch(store, &ids.task, steps)
    }

    fn permission_answer(&self, store: &mut Store, answer: PermissionAnswer) -> Outcome {
        let instance = store.instance_id.clone();
        let stamp = store.clock.stamp();
        let Some(record) = store.tasks.get_mut(&answer.task_id) else {
            return task_not_found("Task not found").into();
        };
        if let Some(applied) = record.applied.get(&answer.input_id) {
            if !self.streaming {
                let task = task_json(record.snapshot(&instance, None));
                return Outcome::Reply(Reply::Result(format!("{{\"task\":{task}}}")));
            }
            let received = json!({
                "kind": "permission", "inputId": answer.input_id, "toolUseId": applied.tool_use_id,
                "decision": applied.decision, "recovered": true, "duplicate": true
            });
            let frame = record.ids.update(
                TaskState::Working,
                None,
                Some(stamp),
                json!({ "inputReceived": received }),
            );
            return self.one_frame(frame);
        }
        let pending = match &record.wait {
            Some(wait @ (Wait::Permission { .. } | Wait::Sideband { .. }))
                if wait.input().get("inputId").and_then(Value::as_str)
                    == Some(answer.input_id.as_str()) =>
            {
                wait.input().clone()
            }
            _ => {
                return invalid_params(
                    "permission_resume_invalid: pending permission is not active.",
                )
                .into()
            }
        };
        if !correlates(&answer, &pending) {
            return invalid_params(
                "input_response_mismatch: permission correlation does not match.",
            )
            .into();
        }
        let context_id = record.ids.context.clone();
        if let Some(context) = store.contexts.get_mut(&context_id) {
            if context.answer_holds > 0 {
                context.answer_holds -= 1;
                return error(
                    -32602,
                    "Session backup is still synchronizing. Retry after 3 seconds.",
                    Some(json!({ "code": "SESSION_BACKUP_NOT_READY", "retryable": true })),
                )
                .into();
            }
        }
        let Store {
            ids: gen,
            clock,
            tasks,
            ..
        } = store;
        let Some(record) = tasks.get_mut(&answer.task_id) else {
            return task_not_found("Task not found").into();
        };
        record.applied.insert(
            answer.input_id.clone(),
            Applied {
                tool_use_id: answer.tool_use_id.clone(),
                decision: answer.decision.clone(),
            },
        );
        let ids = record.ids.clone();
        match record.wait.take() {
            Some(Wait::Permission { input, call, stage }) => {
                // The real runtime keeps serving the pre-answer snapshot.
                let stale = record.live_snapshot(&instance);
                record.begin_turn();
                record.frozen = Some(stale);
                let mut b = scenario::Builder {
                    ids,
                    gen,
                    clock,
                    slow_delay: self.shared.config.slow_delay,
                };
                let steps =
                    scenario::after_permission(&mut b, &input, &call, &stage, &answer.decision);
                if self.streaming {
                    return self.launch(store, &answer.task_id, steps);
                }
                run::start(self.shared, store, &answer.task_id, steps, None);
                let task = store
                    .tasks
                    .get(&answer.task_id)
                    .map(|r| task_json(r.snapshot(&instance, None)));
                Outcome::Reply(Reply::Result(format!(
                    "{{\"task\":{}}}",
                    task.unwrap_or_default()
                )))
            }
            Some(Wait::Sideband { input, call }) => {
                record.meta.remove("pendingPermissions");
                let state = record
                    .pipeline
                    .get_or_insert_with(|| PipelineState::new(&ids.context));
                let mut b = pipeline::Builder {
                    ids: &ids,
                    gen,
                    clock,
                    state,
                };
                let grace = self.shared.config.subscribe_grace;
                let steps =
                    pipeline::after_sideband(&mut b, &input, &call, &answer.decision, grace);
                let delivered = record
                    .run
                    .as_mut()
                    .and_then(|run| run.answer.take())
                    .is_some_and(|tx| tx.send(steps).is_ok());
                if !delivered {
                    return error(-32603, "The side-band wait is no longer held.", None).into();
                }
                let ack = permission_ack(
                    &ids,
                    &gen.uuid_hex(),
                    &answer.input_id,
                    &answer.tool_use_id,
                    &answer.decision,
                );
                if self.streaming {
                    self.one_frame(ack)
                } else {
                    Outcome::Reply(Reply::Result(response_json(ack)))
                }
            }
            other => {
                record.wait = other;
                invalid_params("permission_resume_invalid: pending permission is not active.")
                    .into()
            }
        }
    }

    /// A text answer to a pipeline question or candidate selection.
    fn text_answer(&self, store: &mut Store, task_id: &str, message: &Message) -> Outcome {
        let text = message.text();
        let Store {
            ids: gen,
            clock,
            tasks,
            ..
        } = store;
        let Some(record) = tasks.get_mut(task_id) else {
            return task_not_found("Task not found").into();
        };
        let wait = record.wait.take();
        record.begin_turn();
        let ids = record.ids.clone();
        let state = record
            .pipeline
            .get_or_insert_with(|| PipelineState::new(&ids.context));
        let mut b = pipeline::Builder {
            ids: &ids,
            gen,
            clock,
            state,
        };
        let steps = match wait {
            Some(Wait::Question { input }) => pipeline::after_question(&mut b, &input, &text),
            Some(Wait::Selection { input }) => pipeline::after_selection(&mut b, &input, &text),
            _ => return invalid_params("The task is not waiting for an answer.").into(),
        };
        self.launch(store, task_id, steps)
    }

    fn launch(&self, store: &mut Store, task_id: &str, steps: Vec<Step>) -> Outcome {
        if self.streaming {
            let (tx, rx) = mpsc::channel(STREAM_CHANNEL);
            let sink = Sink {
                id_json: self.id_json.to_owned(),
                tx,
            };
            run::start(self.shared, store, task_id, steps, Some(sink));
            Outcome::Reply(Reply::Stream(rx))
        } else {
            let join = run::start(self.shared, store, task_id, steps, None);
            Outcome::AwaitRun {
                join,
                task_id: task_id.to_owned(),
            }
        }
    }

    /// A stream of exactly one frame that changes no task state.
    fn one_frame(&self, mut frame: StreamResponse) -> Outcome {
        if !self.streaming {
            return Outcome::Reply(Reply::Result(response_json(frame)));
        }
        floatify_response(&mut frame);
        let json = serde_json::to_string(&frame).unwrap_or_default();
        let (tx, rx) = mpsc::channel(1);
        let _ = tx.try_send(Bytes::from(data_event(&json, self.id_json)));
        Outcome::Reply(Reply::Stream(rx))
    }
}

/// The request's message, checked the way the SDK validates it.
fn parse_message(params: &Value) -> Result<Message, JsonRpcError> {
    let Some(raw) = params.get("message").filter(|m| m.is_object()) else {
        return Err(validation_failed("message", "Field required"));
    };
    let message: Message = serde_json::from_value(raw.clone())
        .map_err(|e| validation_failed("message", &e.to_string()))?;
    if message.parts.is_empty() {
        return Err(validation_failed(
            "message.parts",
            "Field must contain at least one element.",
        ));
    }
    for (i, part) in message.parts.iter().enumerate() {
        if part.text.is_none() && part.data.is_none() && part.raw.is_none() && part.url.is_none() {
            return Err(validation_failed(
                &format!("message.parts[{i}]"),
                "Part must have content.",
            ));
        }
    }
    if message.role != "ROLE_USER" {
        return Err(validation_failed(
            "message.role",
            "Input should be 'ROLE_USER'.",
        ));
    }
    Ok(message)
}

/// The user message as the first task frame echoes it: ids filled in and
/// only `llm_headers` stripped (the real runtime echoes keys back).
fn echo(mut message: Message, task_id: &str, context_id: &str) -> Message {
    message.task_id = Some(task_id.to_owned());
    message.context_id = Some(context_id.to_owned());
    if let Some(iac) = message
        .metadata
        .as_mut()
        .and_then(|m| m.get_mut("iac_code"))
        .and_then(Value::as_object_mut)
    {
        iac.remove("llm_headers");
    }
    message
}
