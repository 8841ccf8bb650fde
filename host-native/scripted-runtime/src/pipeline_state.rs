//! `GET /iac-code/pipeline/state` (A2A-WIRE §6.1): a snapshot folded from a
//! task's pipeline journal, plus the journal events after `afterSequence`.
//! Plain JSON with ordinary integers, unlike the streamed envelopes.

use http::StatusCode;
use serde_json::{json, Map, Value};

use crate::store::TaskRecord;
use crate::Shared;

/// Answers the query string `query`; returns the status and JSON body.
pub(crate) fn handle(shared: &Shared, query: &str) -> (StatusCode, Value) {
    let params = parse_query(query);
    let get = |k: &str| {
        params
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
            .filter(|v| !v.is_empty())
    };
    let task_id = get("taskId");
    let context_id = get("contextId");
    if task_id.is_none() && context_id.is_none() {
        return bad_request("contextId or taskId is required");
    }
    let after = match get("afterSequence") {
        None => None,
        Some(s) if s.len() <= 20 && s.bytes().all(|b| b.is_ascii_digit()) => s.parse::<u64>().ok(),
        Some(_) => return bad_request("afterSequence must be a non-negative integer"),
    };
    if get("afterSequence").is_some() && after.is_none() {
        return bad_request("afterSequence must be a non-negative integer");
    }
    let flag = |k: &str| get(k).map(|v| matches!(v.to_ascii_lowercase().as_str(), "true" | "1"));
    let include_snapshot = get("includeSnapshot")
        .is_none_or(|v| !matches!(v.to_ascii_lowercase().as_str(), "false" | "0"));
    let lean = flag("lean").unwrap_or(false);
    if !include_snapshot && after.is_none() {
        return bad_request("afterSequence must be a non-negative integer");
    }
    let store = shared.lock();
    let record = match (task_id, context_id) {
        (Some(t), c) => store
            .tasks
            .get(t)
            .filter(|r| c.is_none_or(|c| r.ids.context == c)),
        (None, Some(c)) => store.contexts.get(c).and_then(|ctx| {
            ctx.tasks
                .iter()
                .rev()
                .filter_map(|t| store.tasks.get(t))
                .find(|r| r.pipeline.is_some())
        }),
        (None, None) => None,
    };
    let Some((record, journal)) = record.and_then(|r| Some((r, &r.pipeline.as_ref()?.journal)))
    else {
        return not_found();
    };
    if journal.is_empty() {
        return not_found();
    }
    let events: Vec<Value> = match after {
        Some(after) => journal
            .iter()
            .filter(|e| sequence(e) > after)
            .cloned()
            .collect(),
        None => Vec::new(),
    };
    let last = journal.iter().map(sequence).max().unwrap_or(0);
    if !include_snapshot {
        return (
            StatusCode::OK,
            json!({ "events": events, "fromSequence": after, "lastSequence": last }),
        );
    }
    let mut snapshot = fold(record, journal);
    if lean {
        if let Some(display) = snapshot.get_mut("display").and_then(Value::as_object_mut) {
            display.remove("toolResults");
        }
    }
    (
        StatusCode::OK,
        json!({ "snapshot": snapshot, "events": events }),
    )
}

fn bad_request(message: &str) -> (StatusCode, Value) {
    (StatusCode::BAD_REQUEST, json!({ "error": message }))
}

fn not_found() -> (StatusCode, Value) {
    (
        StatusCode::NOT_FOUND,
        json!({ "error": "A2A pipeline state not found" }),
    )
}

fn sequence(event: &Value) -> u64 {
    event.get("sequence").and_then(Value::as_u64).unwrap_or(0)
}

fn text<'a>(v: &'a Value, k: &str) -> &'a str {
    v.get(k).and_then(Value::as_str).unwrap_or("")
}

/// The snapshot the real runtime's reducer keeps, built from the journal:
/// steps with their candidates, the pending input, histories and display
/// lists.
fn fold(record: &TaskRecord, journal: &[Value]) -> Value {
    let mut steps: Vec<Value> = Vec::new();
    let mut pending: Option<Value> = None;
    let mut status = "working";
    let mut inputs = Vec::new();
    let mut messages: Vec<Value> = Vec::new();
    let mut tool_results = Vec::new();
    let mut permissions: Vec<Value> = Vec::new();
    let mut control = Map::new();
    let mut diagrams = Vec::new();
    for event in journal {
        if event.get("visibility").and_then(Value::as_str) == Some("pending_backup") {
            continue;
        }
        let data = event.get("data").cloned().unwrap_or(Value::Null);
        let created = event.get("createdAt").cloned().unwrap_or(Value::Null);
        let step_id = event
            .get("step")
            .map(|s| text(s, "id").to_owned())
            .unwrap_or_default();
        let step = steps.iter_mut().rev().find(|s| text(s, "id") == step_id);
        match text(event, "eventType") {
            "pipeline_started" => {
                control.insert("stepNames".into(), data["stepNames"].clone());
                control.insert("totalSteps".into(), data["totalSteps"].clone());
                control.insert("userRequest".into(), data["userRequest"].clone());
            }
            "step_started" => {
                let mut s = event["step"].clone();
                s["status"] = json!("running");
                s["startedAt"] = created;
                s["candidates"] = json!([]);
                steps.push(s);
            }
            "step_completed" => {
                if let Some(s) = step {
                    s["status"] = json!("completed");
                    s["completedAt"] = created;
                }
            }
            "candidate_started" => {
                if let Some(s) = step {
                    let mut c = event["candidate"].clone();
                    c["status"] = json!("running");
                    c["steps"] = json!([]);
                    push(s, "candidates", c);
                }
            }
            "candidate_step_started" | "candidate_step_completed" | "candidate_completed" => {
                let candidate_run = text(&event["candidate"], "runId").to_owned();
                let Some(c) = step
                    .and_then(|s| s["candidates"].as_array_mut())
                    .and_then(|cs| cs.iter_mut().find(|c| text(c, "runId") == candidate_run))
                else {
                    continue;
                };
                match text(event, "eventType") {
                    "candidate_step_started" => {
                        let mut cs = event["candidateStep"].clone();
                        cs["status"] = json!("running");
                        push(c, "steps", cs);
                    }
                    "candidate_step_completed" => {
                        let run = text(&event["candidateStep"], "runId").to_owned();
                        if let Some(cs) = c["steps"]
                            .as_array_mut()
                            .and_then(|v| v.iter_mut().find(|cs| text(cs, "runId") == run))
                        {
                            cs["status"] = json!("completed");
                        }
                    }
                    _ => c["status"] = json!("completed"),
                }
            }
            "input_required" => {
                let mut p = event.get("input").cloned().unwrap_or_else(|| data.clone());
                p["eventId"] = event["eventId"].clone();
                p["createdAt"] = created;
                p["scope"] = event["scope"].clone();
                p["step"] = event["step"].clone();
                if let Some(s) = step {
                    s["status"] = json!("waiting_input");
                }
                let mut history = p.clone();
                history["sequence"] = event["sequence"].clone();
                inputs.push(history);
                pending = Some(p);
                status = "waiting_input";
            }
            "input_received" => {
                pending = None;
                status = "working";
                if let Some(s) = step {
                    s["status"] = json!("running");
                }
            }
            "text_delta" => {
                let run_id = ["candidateStep", "candidate", "step"]
                    .iter()
                    .find_map(|k| event.get(*k).map(|c| text(c, "runId").to_owned()))
                    .unwrap_or_default();
                let id = format!("message-{}-{run_id}", text(event, "scope"));
                let delta = text(&data, "text");
                match messages.iter_mut().find(|m| text(m, "id") == id) {
                    Some(m) => {
                        let joined = format!("{}{delta}", text(m, "text"));
                        m["text"] = json!(joined);
                        m["updatedAt"] = created;
                    }
                    None => messages.push(json!({
                        "id": id, "runId": run_id, "scope": event["scope"], "round": 1, "text": delta,
                        "createdAt": created, "updatedAt": created
                    })),
                }
            }
            "tool_result" => tool_results.push(data),
            "permission_requested" => {
                if let Some(p) = event.get("permission") {
                    permissions.push(p.clone());
                }
            }
            "permission_resolved" => {
                let input_id = text(&data, "inputId").to_owned();
                if let Some(p) = permissions
                    .iter_mut()
                    .find(|p| text(p, "inputId") == input_id)
                {
                    p["pending"] = json!(false);
                    p["decision"] = data["decision"].clone();
                }
            }
            "diagram_shown" => diagrams.push(data),
            "pipeline_completed" => status = "completed",
            "pipeline_failed" => status = "failed",
            "pipeline_canceled" => status = "canceled",
            _ => {}
        }
    }
    let active: Vec<Value> = steps
        .iter()
        .flat_map(|s| s["candidates"].as_array().cloned().unwrap_or_default())
        .filter(|c| text(c, "status") == "running")
        .map(|c| c["runId"].clone())
        .collect();
    for key in [
        "interruptHistory",
        "rollbackHistory",
        "warningHistory",
        "handoffHistory",
        "candidateRestarts",
    ] {
        control.insert(key.into(), json!([]));
    }
    control.insert("inputHistory".into(), Value::Array(inputs));
    control.insert("activeCandidateRunIds".into(), Value::Array(active));
    let first = journal.first().cloned().unwrap_or(Value::Null);
    json!({
        "schemaVersion": "1.2", "snapshotVersion": journal.len(),
        "pipelineRunId": first["pipelineRunId"], "pipelineName": first["pipelineName"],
        "taskId": record.ids.task, "contextId": record.ids.context,
        "status": status, "lastSequence": journal.iter().map(sequence).max().unwrap_or(0),
        "generatedAt": first["createdAt"],
        "steps": steps, "pendingInput": pending,
        "pendingTerminal": null, "normalHandoff": null, "pendingNormalHandoff": null,
        "control": control,
        "display": {
            "messages": messages, "toolResults": tool_results, "permissions": permissions,
            "artifacts": [], "candidateDetails": [], "diagrams": diagrams
        },
        "stacks": { "byId": {}, "current": null, "history": [] },
        "cleanup": { "status": "none", "resources": [], "resourceCount": 0, "history": [] }
    })
}

fn push(target: &mut Value, key: &str, item: Value) {
    if let Some(list) = target.get_mut(key).and_then(Value::as_array_mut) {
        list.push(item);
    }
}

/// `key=value` pairs of a query string, percent-decoded.
fn parse_query(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (decode(k), decode(v))
        })
        .collect()
}

fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let hex = |b: u8| char::from(b).to_digit(16);
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let escaped = (b == b'%' && i + 2 < bytes.len())
            .then(|| Some(hex(bytes[i + 1])? * 16 + hex(bytes[i + 2])?))
            .flatten();
        match (b, escaped) {
            (_, Some(v)) => {
                out.push(v as u8);
                i += 3;
            }
            (b'+', None) => {
                out.push(b' ');
                i += 1;
            }
            (b, None) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_are_decoded() {
        assert_eq!(
            parse_query("taskId=a%2Db&afterSequence=10&x"),
            vec![
                ("taskId".into(), "a-b".into()),
                ("afterSequence".into(), "10".into()),
                ("x".into(), "".into())
            ]
        );
        assert_eq!(decode("100%"), "100%");
    }
}
