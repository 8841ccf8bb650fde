//! The JSON-RPC endpoint (`POST /`): envelope parsing, the `A2A-Version`
//! check, method dispatch, the task methods (GetTask, CancelTask,
//! SubscribeToTask, ListTasks) and the a2a-sdk error shapes.

use std::sync::Arc;

use bytes::Bytes;
use http::{header, HeaderValue, Response, StatusCode};
use iac_agui_core::a2a::{JsonRpcError, StreamResponse, Task, TaskState};
use serde_json::{json, Value};
use tokio::sync::mpsc;

use crate::frames::floatify_task;
use crate::messages;
use crate::sse::{data_event, Body, SseStream};
use crate::store::Subscriber;
use crate::Shared;

/// Capacity of a stream's chunk channel; a slow reader slows the run.
pub(crate) const STREAM_CHANNEL: usize = 16;

/// What a method produced.
#[derive(Debug)]
pub(crate) enum Reply {
    /// A unary result (its JSON text).
    Result(String),
    /// A JSON-RPC error; streaming calls get it as plain JSON, not SSE.
    Error(JsonRpcError),
    /// An SSE stream.
    Stream(mpsc::Receiver<Bytes>),
}

pub(crate) async fn handle(
    shared: &Arc<Shared>,
    version: Option<&str>,
    body: &[u8],
) -> Response<Body> {
    let request: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => return unary(&error(-32700, &e.to_string(), None), "null"),
    };
    let id_json = request
        .get("id")
        .map(Value::to_string)
        .unwrap_or_else(|| "null".to_owned());
    let Some(method) = request.get("method").and_then(Value::as_str) else {
        return unary(&error(-32600, "Invalid Request", None), &id_json);
    };
    let params = request.get("params").cloned().unwrap_or(Value::Null);
    let known = matches!(
        method,
        "SendStreamingMessage"
            | "SendMessage"
            | "GetTask"
            | "CancelTask"
            | "SubscribeToTask"
            | "ListTasks"
    );
    if !known {
        return unary(&error(-32601, "Method not found", None), &id_json);
    }
    if version != Some("1.0") {
        let v = version.unwrap_or("0.3");
        let message =
            format!("A2A version '{v}' is not supported by this handler. Expected version '1.0'.");
        return unary(
            &error(-32009, &message, Some(error_info("VERSION_NOT_SUPPORTED"))),
            &id_json,
        );
    }
    let reply = match method {
        "SendStreamingMessage" => messages::send(shared, &id_json, &params, true).await,
        "SendMessage" => messages::send(shared, &id_json, &params, false).await,
        "GetTask" => get_task(shared, &params),
        "CancelTask" => cancel_task(shared, &params),
        "SubscribeToTask" => subscribe(shared, &id_json, &params),
        _ => list_tasks(shared, &params),
    };
    match reply {
        Reply::Result(result) => {
            let text = format!("{{\"result\":{result},\"id\":{id_json},\"jsonrpc\":\"2.0\"}}");
            json_text(text)
        }
        Reply::Error(e) => unary(&e, &id_json),
        Reply::Stream(rx) => sse_response(rx, shared.config.ping_interval),
    }
}

/// A JSON-RPC error object.
pub(crate) fn error(code: i64, message: &str, data: Option<Value>) -> JsonRpcError {
    JsonRpcError {
        code,
        message: message.to_owned(),
        data,
    }
}

/// `data` with one `google.rpc.ErrorInfo` of `reason`.
pub(crate) fn error_info(reason: &str) -> Value {
    json!([{
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": reason, "domain": "a2a-protocol.org", "metadata": {}
    }])
}

/// -32602 with an INVALID_PARAMS detail (the runtime's own rejections).
pub(crate) fn invalid_params(message: &str) -> JsonRpcError {
    error(-32602, message, Some(error_info("INVALID_PARAMS")))
}

/// -32602 "Validation failed" for a request field (the SDK's validation).
pub(crate) fn validation_failed(field: &str, message: &str) -> JsonRpcError {
    error(
        -32602,
        "Validation failed",
        Some(json!([
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": "INVALID_PARAMS", "domain": "a2a-protocol.org",
                "metadata": { "errors": [{ "field": field, "message": message }] }
            },
            {
                "@type": "type.googleapis.com/google.rpc.BadRequest",
                "fieldViolations": [{ "field": field, "description": message }]
            }
        ])),
    )
}

/// -32001 TaskNotFound.
pub(crate) fn task_not_found(message: &str) -> JsonRpcError {
    error(-32001, message, Some(error_info("TASK_NOT_FOUND")))
}

/// A task as a unary result: metadata numbers as doubles.
pub(crate) fn task_json(mut task: Task) -> String {
    floatify_task(&mut task);
    serde_json::to_string(&task).unwrap_or_default()
}

/// A stream response as a unary result.
pub(crate) fn response_json(mut response: StreamResponse) -> String {
    crate::frames::floatify_response(&mut response);
    serde_json::to_string(&response).unwrap_or_default()
}

fn task_id_param(params: &Value) -> Result<String, JsonRpcError> {
    match params.get("id").and_then(Value::as_str) {
        Some(id) if !id.is_empty() => Ok(id.to_owned()),
        _ => Err(validation_failed("id", "Field required")),
    }
}

fn get_task(shared: &Shared, params: &Value) -> Reply {
    let id = match task_id_param(params) {
        Ok(id) => id,
        Err(e) => return Reply::Error(e),
    };
    let history_length = params
        .get("historyLength")
        .and_then(iac_agui_core::json::lenient_u64)
        .map(|n| n as usize);
    let store = shared.lock();
    match store.tasks.get(&id) {
        Some(record) => Reply::Result(task_json(
            record.snapshot(&store.instance_id, history_length),
        )),
        None => Reply::Error(task_not_found("Task not found")),
    }
}

/// CancelTask: a running or parked-on-a-wait task becomes CANCELED; a task
/// whose turn ended, or that is already final, is not cancelable.
fn cancel_task(shared: &Shared, params: &Value) -> Reply {
    let id = match task_id_param(params) {
        Ok(id) => id,
        Err(e) => return Reply::Error(e),
    };
    let mut guard = shared.lock();
    let store = &mut *guard;
    let stamp = store.clock.stamp();
    let Some(record) = store.tasks.get_mut(&id) else {
        return Reply::Error(task_not_found("Task not found"));
    };
    let cancelable = record.is_running() || record.wait.is_some();
    if !cancelable
        || matches!(
            record.status.state,
            TaskState::Completed | TaskState::Canceled
        )
    {
        return Reply::Error(error(
            -32002,
            "Task cannot be canceled",
            Some(error_info("TASK_NOT_CANCELABLE")),
        ));
    }
    record.status = record.ids.canceled_status(stamp);
    record.meta.remove("input");
    record.meta.remove("pendingPermissions");
    record.wait = None;
    record.frozen = None;
    match &record.run {
        // A held run (side-band wait) wakes through the signal as well.
        Some(run) => run.cancel.fire(),
        None => record.end_run(),
    }
    record.exec_status = "canceled";
    Reply::Result(task_json(record.live_snapshot(&store.instance_id)))
}

/// SubscribeToTask: a task snapshot, then the live frames of the run playing
/// on it. A task with no run (finished or parked) is "not active".
fn subscribe(shared: &Shared, id_json: &str, params: &Value) -> Reply {
    let id = match task_id_param(params) {
        Ok(id) => id,
        Err(e) => return Reply::Error(e),
    };
    let mut guard = shared.lock();
    let store = &mut *guard;
    let Some(record) = store.tasks.get_mut(&id) else {
        return Reply::Error(task_not_found("Task not found"));
    };
    if !record.is_running() {
        return Reply::Error(task_not_found(&format!("Task {id} is not active")));
    }
    let snapshot = task_json(record.live_snapshot(&store.instance_id));
    let (tx, rx) = mpsc::channel(STREAM_CHANNEL);
    let first = data_event(&format!("{{\"task\":{snapshot}}}"), id_json);
    if tx.try_send(Bytes::from(first)).is_err() {
        return Reply::Error(error(-32603, "Internal error", None));
    }
    if let Some(run) = &mut record.run {
        run.subscribers.push(Subscriber {
            id_json: id_json.to_owned(),
            tx,
        });
        run.joined.notify_one();
    }
    Reply::Stream(rx)
}

fn list_tasks(shared: &Shared, params: &Value) -> Reply {
    let context = params.get("contextId").and_then(Value::as_str);
    let store = shared.lock();
    let tasks: Vec<Value> = store
        .tasks
        .values()
        .filter(|r| context.is_none_or(|c| r.ids.context == c))
        .map(|r| {
            serde_json::from_str(&task_json(r.snapshot(&store.instance_id, Some(0))))
                .unwrap_or(Value::Null)
        })
        .collect();
    let total = tasks.len();
    Reply::Result(
        json!({ "tasks": tasks, "nextPageToken": "", "pageSize": 50, "totalSize": total })
            .to_string(),
    )
}

fn unary(error: &JsonRpcError, id_json: &str) -> Response<Body> {
    let error_json = serde_json::to_string(error).unwrap_or_default();
    json_text(format!(
        "{{\"error\":{error_json},\"id\":{id_json},\"jsonrpc\":\"2.0\"}}"
    ))
}

fn json_text(text: String) -> Response<Body> {
    let mut response = Response::new(Body::full(text));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

fn sse_response(rx: mpsc::Receiver<Bytes>, ping: std::time::Duration) -> Response<Body> {
    let mut response = Response::new(Body::Stream(SseStream::new(rx, ping)));
    *response.status_mut() = StatusCode::OK;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream; charset=utf-8"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    headers.insert(header::CONNECTION, HeaderValue::from_static("keep-alive"));
    response
}
