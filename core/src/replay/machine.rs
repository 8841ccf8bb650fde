//! Replay of `machine` golden cases: a [`Machine`] driven step by step.
//!
//! Input shape:
//! ```json
//! {"config": {"interruptTtlMs": 540000}, "seed": 1,
//!  "store": {"<threadId>": <document> | "unreadable"},
//!  "steps": [
//!    {"at": 1000, "run": <RunAgentInput body>, "workspace": "/w"?, "acceptLanguage": "pt"?},
//!    {"at": 1001, "effect": 1 | "persist" | "stream" | "call" | "http",
//!     "persisted": true | "frame": {…} | "frames": [{…}, …] | "end": true
//!     | "response": {…} | "http": {"status": 200, "body": {…}} | "failed": true},
//!    {"at": 1002, "cancel": {"executionId"?, "threadId", "rosInvocationId"}},
//!    {"at": 1003, "disconnect": {"threadId", "runId"}},
//!    {"at": 1004, "timeout": true},
//!    {"at": 1004, "shutdown": true},
//!    {"at": 1005, "restart": true}
//!  ]}
//! ```
//! A string `effect` names the newest effect of that sort. The output is one
//! entry per step (`outputs`, and `wake`, the machine's next deadline), then
//! the stored documents. Every persisted document must round-trip.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::a2a::StreamFrame;
use crate::document::ThreadDocument;
use crate::machine::{Answer, Config, Load, Machine, Output};
use crate::validate::validate_run;

/// Replays a machine case.
///
/// # Errors
/// A malformed input, or a persisted document that does not round-trip.
pub(super) fn replay(input: &Value) -> Result<Value, String> {
    let config: Config = match input.get("config") {
        Some(c) => serde_json::from_value(c.clone()).map_err(|e| format!("config: {e}"))?,
        None => Config::default(),
    };
    let seed = input.get("seed").and_then(Value::as_u64).unwrap_or(1);
    let mut store: BTreeMap<String, Value> = input
        .get("store")
        .and_then(Value::as_object)
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default();
    let steps = input
        .get("steps")
        .and_then(Value::as_array)
        .ok_or("input.steps must be an array")?;
    let mut machine = Machine::new(config, seed);
    let mut latest: BTreeMap<&'static str, u64> = BTreeMap::new();
    let mut persists: BTreeMap<u64, (String, Value)> = BTreeMap::new();
    let mut transcript = Vec::new();
    for (index, step) in steps.iter().enumerate() {
        let now = step.get("at").and_then(Value::as_i64).unwrap_or(0);
        let mut extra = Vec::new();
        if let Some(body) = step.get("run") {
            let accept = step.get("acceptLanguage").and_then(Value::as_str);
            match validate_run(body, accept) {
                Err(error) => extra.push(json!({
                    "type": "invalid",
                    "status": error.code.http_status(),
                    "code": error.code.as_str(),
                })),
                Ok(run) => {
                    let workspace = step
                        .get("workspace")
                        .and_then(Value::as_str)
                        .map_or_else(|| run.iac.cwd.clone(), str::to_owned);
                    let load = load_of(&machine, &store, &run.input.thread_id);
                    machine.handle_run_request(now, run, &workspace, load);
                }
            }
        } else if let Some(selector) = step.get("effect") {
            let id = match selector {
                Value::Number(n) => n.as_u64().ok_or("effect id")?,
                Value::String(kind) => *latest
                    .get(kind.as_str())
                    .ok_or_else(|| format!("step {index}: no {kind} effect yet"))?,
                _ => return Err(format!("step {index}: bad effect selector")),
            };
            if let Some(frames) = step.get("frames").and_then(Value::as_array) {
                // Frames that arrived together (one read of the stream).
                let frames = frames
                    .iter()
                    .map(|frame| StreamFrame::parse(&frame.to_string()))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| format!("step {index}: a frame is not a JSON object"))?;
                machine.handle_frames(now, id, frames);
            } else {
                let answer = answer_of(step).ok_or_else(|| format!("step {index}: no answer"))?;
                if answer == (Answer::Persisted { ok: true }) {
                    if let Some((thread, doc)) = persists.remove(&id) {
                        store.insert(thread, doc);
                    }
                }
                machine.handle_answer(now, id, answer);
            }
        } else if let Some(cancel) = step.get("cancel") {
            let field = |k: &str| cancel.get(k).and_then(Value::as_str).unwrap_or_default();
            let thread_id = field("threadId").to_owned();
            let load = load_of(&machine, &store, &thread_id);
            // Without `executionId`, the thread's current execution (its id
            // comes from the seeded generator, unknown to the case author).
            let current = machine
                .document(&thread_id)
                .map(|d| d.execution.execution_id.clone())
                .unwrap_or_default();
            let execution_id = cancel
                .get("executionId")
                .and_then(Value::as_str)
                .map_or(current, str::to_owned);
            let ticket = machine.handle_cancel(
                now,
                &execution_id,
                &thread_id,
                field("rosInvocationId"),
                crate::i18n::Language::En,
                load,
            );
            extra.push(json!({"type": "cancelTicket", "ticket": ticket}));
        } else if let Some(disconnect) = step.get("disconnect") {
            let field = |k: &str| {
                disconnect
                    .get(k)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
            };
            machine.handle_disconnect(now, field("threadId"), field("runId"));
        } else if step.get("shutdown").is_some() {
            machine.handle_shutdown(now);
        } else if step.get("timeout").is_some() {
            machine.handle_timeout(now);
        } else if step.get("restart").is_some() {
            machine = Machine::new(config, seed.wrapping_add(index as u64));
            latest.clear();
            persists.clear();
        } else {
            return Err(format!("step {index}: unknown step"));
        }
        let mut outputs = extra;
        for output in machine.drain() {
            record(&output, &mut latest, &mut persists)?;
            outputs.push(serde_json::to_value(&output).map_err(|e| e.to_string())?);
        }
        transcript.push(json!({"outputs": outputs, "wake": machine.poll_timeout()}));
    }
    Ok(json!({"steps": transcript, "store": store}))
}

fn load_of(machine: &Machine, store: &BTreeMap<String, Value>, thread_id: &str) -> Load {
    if !machine.needs_load(thread_id) {
        return Load::Missing;
    }
    match store.get(thread_id) {
        None => Load::Missing,
        Some(Value::String(s)) if s == "unreadable" => Load::Unreadable,
        Some(doc) => Load::Found(doc.clone()),
    }
}

fn answer_of(step: &Value) -> Option<Answer> {
    if let Some(ok) = step.get("persisted").and_then(Value::as_bool) {
        return Some(Answer::Persisted { ok });
    }
    if let Some(frame) = step.get("frame") {
        // As the native host reads it: one parse of the SSE data; data that
        // is not a JSON object fails the stream.
        return Some(match StreamFrame::parse(&frame.to_string()) {
            Some(frame) => Answer::Frame(frame),
            None => Answer::Failed,
        });
    }
    if step.get("end").is_some() {
        return Some(Answer::StreamEnded);
    }
    if let Some(response) = step.get("response") {
        return Some(Answer::Response(response.clone()));
    }
    if let Some(http) = step.get("http") {
        let status = http.get("status").and_then(Value::as_u64)?;
        return Some(Answer::Http {
            status: u16::try_from(status).ok()?,
            body: http.get("body").cloned().unwrap_or(Value::Null),
        });
    }
    step.get("failed").map(|_| Answer::Failed)
}

/// Remembers the newest effect of each sort and checks that every persisted
/// document round-trips.
fn record(
    output: &Output,
    latest: &mut BTreeMap<&'static str, u64>,
    persists: &mut BTreeMap<u64, (String, Value)>,
) -> Result<(), String> {
    match output {
        Output::Persist {
            id,
            thread_id,
            document,
        } => {
            let value = document.to_value();
            let parsed = ThreadDocument::parse(&value, thread_id)
                .map_err(|e| format!("persisted document does not load: {e}"))?;
            if parsed.encode() != *document {
                return Err("persisted document does not round-trip".to_owned());
            }
            latest.insert("persist", *id);
            persists.insert(*id, (thread_id.clone(), value));
        }
        Output::A2a {
            id,
            streaming,
            request,
        } => {
            if *streaming {
                latest.insert("stream", *id);
            } else if request.0.method != "CancelTask" {
                latest.insert("call", *id);
            }
        }
        Output::Http { id, .. } => {
            latest.insert("http", *id);
        }
        _ => {}
    }
    Ok(())
}
