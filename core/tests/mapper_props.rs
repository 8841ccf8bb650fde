//! Property tests of the mapper: random A2A input sequences (valid frames with
//! random and garbage `metadata.iac_code` shapes, duplicate and out-of-order
//! Pipeline envelopes, random interrupts, snapshots, recovery bodies) never
//! panic, and the stream RUN_STARTED + mapped events + close-all + terminal
//! always passes the strict AG-UI verifier, with durable state that stays
//! well-formed. Each case is a seed; a failure prints it. Re-run one seed with
//! `MAPPER_PROPS_SEED=<n> cargo test -p iac-agui-core --test mapper_props`.

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};

use iac_agui_core::a2a::{StreamResponse, Task};
use iac_agui_core::agui::{Event, EventBody, Outcome};
use iac_agui_core::ids::IdGen;
use iac_agui_core::mapper::{DurableMapperState, FeedOptions, Mapper, RunContext};
use iac_agui_core::verifier::Verifier;
use serde_json::{json, Map, Value};

const CASES: u64 = 10_000;

#[test]
fn random_sequences_never_panic_and_verify() {
    let seeds: Vec<u64> = match std::env::var("MAPPER_PROPS_SEED") {
        Ok(seed) => vec![seed.parse().expect("MAPPER_PROPS_SEED is a u64")],
        Err(_) => (0..CASES).collect(),
    };
    let full_run = seeds.len() > 1;
    let mut seen: BTreeMap<&'static str, usize> = BTreeMap::new();
    for seed in seeds {
        let outcome = catch_unwind(AssertUnwindSafe(|| run_case(seed)));
        match outcome {
            Ok(Ok(types)) => {
                for t in types {
                    *seen.entry(t).or_default() += 1;
                }
            }
            Ok(Err(message)) => panic!("seed {seed}: {message}"),
            Err(_) => panic!("seed {seed}: the mapper panicked"),
        }
    }
    if full_run {
        // The generator must keep reaching every kind of output.
        for t in [
            "TEXT_MESSAGE_START",
            "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_END",
            "REASONING_START",
            "REASONING_MESSAGE_CONTENT",
            "REASONING_END",
            "TOOL_CALL_START",
            "TOOL_CALL_ARGS",
            "TOOL_CALL_END",
            "TOOL_CALL_RESULT",
            "STEP_STARTED",
            "STEP_FINISHED",
            "ACTIVITY_SNAPSHOT",
            "CUSTOM",
            "interrupt",
            "usage",
        ] {
            assert!(
                seen.get(t).copied().unwrap_or(0) >= 100,
                "generator rarely yields {t}: {seen:?}"
            );
        }
    }
}

#[test]
fn replaying_a_seed_is_deterministic() {
    for seed in (0..CASES).step_by(97) {
        assert_eq!(transcript(seed), transcript(seed), "seed {seed}");
    }
}

/// Runs one random sequence and checks the stream; returns the kinds of
/// output it produced.
fn run_case(seed: u64) -> Result<Vec<&'static str>, String> {
    let (events, durable, interrupted) = simulate(seed);
    let mut verifier = Verifier::expecting("thread-p", "run-p");
    for event in &events {
        let json = serde_json::to_value(event).map_err(|e| e.to_string())?;
        verifier
            .feed_json(&json)
            .map_err(|v| format!("{v}\nstream: {}", summary(&events)))?;
    }
    verifier.finish().map_err(|v| v.to_string())?;
    if let Some(EventBody::RunFinished {
        outcome: Outcome::Interrupt { interrupts },
        ..
    }) = events.last().map(|e| &e.body)
    {
        if !interrupted || interrupts.iter().any(|i| i.id.is_empty()) {
            return Err("bad interrupt outcome".to_owned());
        }
    }
    for key in &durable.pipeline_open_steps {
        if !(key.starts_with("step:") || key.starts_with("candidate:")) {
            return Err(format!("bad durable step key {key}"));
        }
    }
    for digest in &durable.text_snapshot_digests {
        if !iac_agui_core::json::is_digest(digest) {
            return Err(format!("bad digest {digest}"));
        }
    }
    let mut types: Vec<&'static str> = events.iter().map(|e| e.body.type_name()).collect();
    match events.last().map(|e| &e.body) {
        Some(EventBody::RunFinished { outcome, usage, .. }) => {
            if matches!(outcome, Outcome::Interrupt { .. }) {
                types.push("interrupt");
            }
            if usage.is_some() {
                types.push("usage");
            }
        }
        Some(EventBody::RunError { usage: Some(_), .. }) => types.push("usage"),
        _ => {}
    }
    types.sort_unstable();
    types.dedup();
    Ok(types)
}

fn transcript(seed: u64) -> String {
    let (events, durable, _) = simulate(seed);
    format!(
        "{}|{}",
        serde_json::to_string(&events).unwrap_or_default(),
        serde_json::to_string(&durable).unwrap_or_default()
    )
}

/// Feeds a random sequence; returns the whole stream, the durable state and
/// whether an input was reported.
fn simulate(seed: u64) -> (Vec<Event>, DurableMapperState, bool) {
    let mut rng = Rng(IdGen::new(seed ^ 0xA5A5_5A5A_0F0F_F0F0));
    let mut ids = IdGen::new(seed);
    let ctx = RunContext {
        thread_id: "thread-p".into(),
        run_id: "run-p".into(),
        context_id: "ctx-p".into(),
        language: iac_agui_core::Language::ALL[rng.below(7) as usize],
        interrupt_ttl_ms: rng.below(1_000_000) as i64,
        applied_input_ids: ["in-1".to_owned()].into_iter().collect(),
    };
    let mut durable = DurableMapperState {
        pipeline_sequence: rng.below(6) as i64,
        ..DurableMapperState::default()
    };
    for _ in 0..rng.below(3) {
        durable.pipeline_open_steps.insert(step_key(&mut rng));
    }
    if rng.chance(3) {
        durable
            .text_snapshot_digests
            .insert(iac_agui_core::json::sha256_hex(b"Hello "));
    }
    let mut mapper = Mapper::new(ctx, durable);
    let mut now = 1_767_225_600_000i64;
    let mut events = vec![Event::new(
        now,
        EventBody::RunStarted {
            thread_id: "thread-p".into(),
            run_id: "run-p".into(),
            parent_run_id: None,
        },
    )];
    if rng.chance(2) {
        events.extend(mapper.reopen_steps(now));
    }
    let mut interrupts = Vec::new();
    for _ in 0..rng.below(25) + 1 {
        now += rng.below(5) as i64;
        match rng.below(12) {
            0 => {
                let task = random_task(&mut rng);
                let options = FeedOptions {
                    include_pipeline: rng.chance(2),
                    include_status_text: rng.chance(2),
                };
                let mapped = mapper.feed_task(&task, options, now, &mut ids);
                events.extend(mapped.events);
                interrupts.extend(mapped.report.inputs);
            }
            1 => {
                let body = random_recovery(&mut rng);
                events.extend(mapper.feed_pipeline_recovery(&body, now, &mut ids).events);
            }
            2 => {
                let id = pick(&mut rng, &["call-1", "call-2", "", "q"]);
                events.extend(mapper.tool_result_for_answer(id, "answer", now));
            }
            3 => mapper.mark_applied(pick(&mut rng, &["in-2", "in-3"])),
            4 if rng.chance(4) => mapper.finalize_text_snapshots(),
            _ => {
                let frame = random_frame(&mut rng);
                let options = if rng.chance(8) {
                    FeedOptions::SNAPSHOT
                } else {
                    FeedOptions::LIVE
                };
                // Moving the ids out of the frame maps it the same way.
                let (mut twin, mut twin_ids) = (mapper.clone(), ids.clone());
                let owned = twin.feed_owned(frame.clone(), options, now, &mut twin_ids);
                let mapped = mapper.feed(&frame, options, now, &mut ids);
                assert_eq!(owned, mapped, "feed_owned differs on {frame:?}");
                events.extend(mapped.events);
                interrupts.extend(mapped.report.inputs);
            }
        }
    }
    let interrupted = !interrupts.is_empty();
    if interrupted {
        mapper.finalize_text_snapshots();
    }
    events.extend(mapper.close_all(now));
    assert!(!mapper.has_open_spans(), "spans still open after close_all");
    let outcome = if interrupted {
        Outcome::Interrupt {
            interrupts: interrupts.into_iter().map(|i| i.interrupt).collect(),
        }
    } else {
        Outcome::Success
    };
    let terminal = if rng.chance(5) {
        EventBody::RunError {
            message: "failed".into(),
            code: Some("A2A_EXECUTION_FAILED".into()),
            usage: mapper.usage(),
        }
    } else {
        EventBody::RunFinished {
            thread_id: "thread-p".into(),
            run_id: "run-p".into(),
            outcome,
            usage: mapper.usage(),
        }
    };
    events.push(Event::new(now, terminal));
    (events, mapper.durable().clone(), interrupted)
}

fn random_frame(rng: &mut Rng) -> StreamResponse {
    let value = match rng.below(10) {
        0 => json!({"task": random_task_value(rng)}),
        1 => json!({"artifactUpdate": {"taskId": "t", "contextId": "c",
            "artifact": if rng.chance(2) { json!({"artifactId": "a", "parts": []}) } else { garbage(rng) }}}),
        2 => json!({"message": {"messageId": "m", "role": "ROLE_AGENT", "taskId": "t",
            "parts": [{"text": "ack"}], "metadata": {"iac_code": random_iac_code(rng)}}}),
        _ => {
            let mut status = json!({"state": pick(rng, &STATES)});
            if rng.chance(2) {
                status["message"] = random_message(rng);
            }
            json!({"statusUpdate": {"taskId": "t", "contextId": "c", "status": status,
                "metadata": {"iac_code": random_iac_code(rng)}}})
        }
    };
    serde_json::from_value(value).expect("generated frames are valid StreamResponses")
}

fn random_task(rng: &mut Rng) -> Task {
    serde_json::from_value(random_task_value(rng)).expect("generated tasks are valid")
}

fn random_task_value(rng: &mut Rng) -> Value {
    let history: Vec<Value> = (0..rng.below(4)).map(|_| random_message(rng)).collect();
    let mut status = json!({"state": pick(rng, &STATES)});
    if rng.chance(3) {
        status["message"] = random_message(rng);
    }
    json!({"id": "t", "contextId": "c", "status": status, "history": history,
        "metadata": {"iac_code": random_iac_code(rng)}})
}

fn random_message(rng: &mut Rng) -> Value {
    let mut message = json!({
        "role": pick(rng, &["ROLE_AGENT", "ROLE_USER", "agent", ""]),
        "parts": [{"text": random_text(rng)}],
    });
    if rng.chance(4) != rng.chance(3) {
        message["messageId"] = json!(pick(rng, &["m-1", "m-2", "t-message", ""]));
    }
    message
}

fn random_iac_code(rng: &mut Rng) -> Value {
    if rng.chance(15) {
        return garbage(rng);
    }
    let mut o = Map::new();
    if rng.chance(2) {
        o.insert(
            "iacCodeSessionId".into(),
            json!(pick(rng, &["s-1", "s-2", ""])),
        );
    }
    if rng.chance(5) {
        o.insert("thinking".into(), if rng.chance(5) { garbage(rng) } else {
            json!({"type": pick(rng, &["raw_thinking", "raw_thinking", "other"]), "text": random_text(rng)})
        });
    }
    if rng.chance(4) {
        o.insert("tool".into(), random_tool(rng));
    }
    if rng.chance(6) {
        o.insert("usage".into(), random_usage(rng));
    }
    if rng.chance(8) {
        o.insert("assistantFinal".into(), json!({"complete": rng.chance(2)}));
    }
    if rng.chance(3) {
        o.insert("pipeline".into(), random_envelope(rng));
    }
    if rng.chance(8) {
        let events: Vec<Value> = (0..rng.below(5)).map(|_| random_envelope(rng)).collect();
        o.insert("pipelineBatch".into(), json!({"events": events}));
    }
    if rng.chance(10) {
        o.insert("input".into(), random_input(rng));
    }
    if rng.chance(15) {
        let list: Vec<Value> = (0..rng.below(3)).map(|_| random_input(rng)).collect();
        o.insert("pendingPermissions".into(), json!(list));
    }
    Value::Object(o)
}

fn random_tool(rng: &mut Rng) -> Value {
    if rng.chance(10) {
        return garbage(rng);
    }
    let mut tool = json!({"status": pick(rng, &["started", "input_complete", "completed", "failed", "progress", "input_delta", "?"])});
    if !rng.chance(6) {
        tool["toolUseId"] = json!(pick(rng, &["call-1", "call-2", "call-3", ""]));
    }
    if rng.chance(2) {
        tool["name"] = json!(pick(rng, &["bash", "glob", ""]));
    }
    if rng.chance(2) {
        tool["toolInput"] = garbage(rng);
    }
    if rng.chance(2) {
        tool["result"] = garbage(rng);
    }
    tool
}

fn random_usage(rng: &mut Rng) -> Value {
    json!({"provider": pick(rng, &["openai", "dashscope", ""]), "model": pick(rng, &["a", "b"]),
        "inputTokens": garbage_number(rng), "outputTokens": garbage_number(rng),
        "totalTokens": garbage_number(rng), "cachedInputTokens": garbage_number(rng)})
}

fn random_envelope(rng: &mut Rng) -> Value {
    if rng.chance(12) {
        return garbage(rng);
    }
    let event_type = pick(rng, &EVENT_TYPES);
    let mut e = json!({"eventType": event_type, "scope": pick(rng, &["step", "candidate_step", "pipeline", ""])});
    if rng.chance(5) != rng.chance(7) {
        e["eventId"] = json!(format!("evt-{}", rng.below(12)));
    }
    e["sequence"] = match rng.below(6) {
        0 => garbage(rng),
        1 => json!(rng.below(20) as f64),
        _ => json!(rng.below(20)),
    };
    if rng.chance(3) {
        e["iacCodeSessionId"] = json!(pick(rng, &["s-1", "s-2"]));
    }
    if rng.chance(4) {
        e["pipelineRunId"] = json!(pick(rng, &["p-1", "p-2", ""]));
    }
    if rng.chance(3) != rng.chance(5) {
        e["step"] = coordinate(rng);
    }
    if rng.chance(3) {
        e["candidate"] = coordinate(rng);
        if rng.chance(2) {
            e["candidateStep"] = coordinate(rng);
        }
    }
    e["data"] = match event_type {
        "text_delta" => json!({"text": random_text(rng)}),
        "thinking_delta" => json!({"type": "raw_thinking", "text": random_text(rng)}),
        "tool_started" => {
            json!({"toolName": "t", "toolUseId": pick(rng, &["call-1", "call-4"]), "input": garbage(rng)})
        }
        "tool_result" => {
            json!({"toolUseId": pick(rng, &["call-1", "call-4", ""]), "isError": rng.chance(2), "result": garbage(rng)})
        }
        "usage" => random_usage(rng),
        _ => garbage(rng),
    };
    e
}

fn coordinate(rng: &mut Rng) -> Value {
    match rng.below(8) {
        0 => garbage(rng),
        1 => json!({}),
        _ => {
            json!({"id": pick(rng, &["a", "b", "candidate:x:a", ""]), "runId": pick(rng, &["r-1", "r-2"])})
        }
    }
}

fn random_input(rng: &mut Rng) -> Value {
    if rng.chance(8) {
        return garbage(rng);
    }
    let mut input = json!({"required": !rng.chance(4), "kind": pick(rng, &["permission", "ask_user_question", "candidate_selection", ""])});
    if !rng.chance(6) {
        input["inputId"] = json!(pick(rng, &["in-1", "in-2", "in-3", "in-4", ""]));
    }
    if rng.chance(2) {
        input["options"] = match rng.below(3) {
            0 => garbage(rng),
            1 => {
                json!([{"id": "a", "label": "A"}, {"id": "a"}, "x", 3, null, {"candidate_index": 1.5}])
            }
            _ => json!([{"label": "only"}]),
        };
    }
    for key in [
        "prompt",
        "title",
        "toolUseId",
        "scope",
        "subPipelineId",
        "expiresAt",
        "allowFreeText",
    ] {
        if rng.chance(3) {
            input[key] = if rng.chance(2) {
                json!(random_text(rng))
            } else {
                garbage(rng)
            };
        }
    }
    input
}

fn random_recovery(rng: &mut Rng) -> Value {
    if rng.chance(6) {
        return garbage(rng);
    }
    let events: Vec<Value> = (0..rng.below(5)).map(|_| random_envelope(rng)).collect();
    let snapshot = if rng.chance(5) {
        garbage(rng)
    } else {
        json!({"pipelineRunId": pick(rng, &["p-1", ""]), "lastSequence": garbage_number(rng)})
    };
    json!({"snapshot": snapshot, "events": events})
}

fn random_text(rng: &mut Rng) -> String {
    pick(
        rng,
        &["", "Hello ", "Hello world", "ü→✓ ", "\n", "Hello wor"],
    )
    .to_owned()
}

fn garbage_number(rng: &mut Rng) -> Value {
    match rng.below(7) {
        0 => json!(-5),
        1 => json!(1.5),
        2 => json!(1e300),
        3 => json!("12"),
        4 => Value::Null,
        _ => json!(rng.below(1000)),
    }
}

fn garbage(rng: &mut Rng) -> Value {
    match rng.below(8) {
        0 => Value::Null,
        1 => json!(true),
        2 => json!(-3.25),
        3 => json!("text"),
        4 => json!([1, {"a": null}]),
        5 => json!({}),
        6 => json!({"nested": {"k": [null, "v"]}}),
        _ => json!(u64::MAX),
    }
}

fn step_key(rng: &mut Rng) -> String {
    pick(
        rng,
        &["step:a", "step:b", "candidate:r-1:a", "candidate:x:b"],
    )
    .to_owned()
}

fn pick<'a>(rng: &mut Rng, items: &[&'a str]) -> &'a str {
    items[rng.below(items.len() as u64) as usize]
}

fn summary(events: &[Event]) -> String {
    events
        .iter()
        .map(|e| serde_json::to_string(e).unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n")
}

const STATES: [&str; 8] = [
    "TASK_STATE_WORKING",
    "TASK_STATE_WORKING",
    "TASK_STATE_SUBMITTED",
    "TASK_STATE_INPUT_REQUIRED",
    "TASK_STATE_COMPLETED",
    "TASK_STATE_FAILED",
    "canceled",
    "weird",
];

const EVENT_TYPES: [&str; 20] = [
    "step_started",
    "step_completed",
    "step_failed",
    "candidate_step_started",
    "candidate_step_completed",
    "candidate_step_failed",
    "input_received",
    "text_delta",
    "text_delta",
    "thinking_delta",
    "tool_started",
    "tool_result",
    "usage",
    "pipeline_started",
    "candidate_selected",
    "tool_progress",
    "backup_committed",
    "message_started",
    "",
    "nonsense",
];

/// A tiny RNG over the core's SplitMix64.
struct Rng(IdGen);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.0.next_u64() % n
        }
    }

    /// True with probability 1/n.
    fn chance(&mut self, n: u64) -> bool {
        self.below(n) == 0
    }
}
