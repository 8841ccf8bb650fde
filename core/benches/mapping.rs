//! Mapping throughput (AG-UI events out per second) on frames shaped like
//! the real runtime's, measured along the native host's per-frame path:
//! JSON-RPC frame text → `StreamResponse` → [`Mapper::feed`] → event JSON.
//!
//! `floor` is the yardstick of issue 8: a bare serde_json loop that parses
//! one A2A frame and serialises one AG-UI event, with no mapping at all.

#[path = "common/mod.rs"]
mod common;

use std::collections::BTreeSet;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use iac_agui_core::i18n::Language;
use iac_agui_core::ids::IdGen;
use iac_agui_core::mapper::{
    DurableMapperState, FeedOptions, Mapper, RunContext, DEFAULT_INTERRUPT_TTL_MS,
};
use serde_json::{json, Value};

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20);
    targets = floor, text_deltas, tool_events, pipeline_batch
}
criterion_main!(benches);

const THINK: &str = include_str!("../tests/fixtures/a2a/out_think.raw");
const TOOL: &str = include_str!("../tests/fixtures/a2a/out_tool.raw");
const PIPE: &str = include_str!("../tests/fixtures/a2a/out_pipe1.raw");

/// Text deltas per batch: long enough that the run's opening frames do not
/// weigh on the per-event figure.
const DELTAS: usize = 1_000;
/// Tool call lifecycles per batch.
const TOOL_CALLS: usize = 100;

fn floor(c: &mut Criterion) {
    let frame = delta_frame(&frames(THINK), 7);
    let mut group = c.benchmark_group("mapping");
    group.throughput(Throughput::Elements(1));
    group.bench_function("floor_parse_serialise", |b| {
        b.iter(|| {
            let value: Value = serde_json::from_str(std::hint::black_box(&frame)).expect("JSON");
            let status = &value["result"]["statusUpdate"];
            let event = json!({
                "type": "TEXT_MESSAGE_CONTENT",
                "messageId": status["status"]["message"]["messageId"],
                "delta": status["status"]["message"]["parts"][0]["text"],
                "timestamp": 1_796_205_000_000_i64,
            });
            serde_json::to_string(&event).expect("serialisable")
        })
    });
    group.finish();
}

/// The opening frames of the `think` capture, then [`DELTAS`] text deltas.
fn text_deltas(c: &mut Criterion) {
    let captured = frames(THINK);
    let mut batch: Vec<String> = captured[..3].to_vec();
    batch.extend((0..DELTAS).map(|i| delta_frame(&captured, i)));
    bench_batch(c, "text_deltas", &batch);
}

/// [`TOOL_CALLS`] copies of the captured tool lifecycle (started, input
/// delta, input summary, usage, completed), each with its own call id.
fn tool_events(c: &mut Criterion) {
    let captured = frames(TOOL);
    let lifecycle = &captured[3..8];
    let mut batch: Vec<String> = captured[..3].to_vec();
    for i in 0..TOOL_CALLS {
        let id = format!("call_{i:08x}");
        batch.extend(lifecycle.iter().map(|f| f.replace("call_53bd8226", &id)));
    }
    bench_batch(c, "tool_events", &batch);
}

/// The captured Pipeline envelopes of `pipe1` delivered as one
/// `pipelineBatch` frame (the runtime's coalesced form), after the task
/// snapshot.
fn pipeline_batch(c: &mut Criterion) {
    let captured = frames(PIPE);
    let envelopes: Vec<Value> = captured[1..captured.len() - 1]
        .iter()
        .filter_map(|f| common::iac_code(f).get("pipeline").cloned())
        .collect();
    let mut frame: Value = serde_json::from_str(&captured[1]).expect("JSON");
    frame["result"]["statusUpdate"]["metadata"]["iac_code"] = json!({
        "iacCodeSessionId": "17cf6e4b-40c4-4784-a138-3357550fc5c8",
        "pipelineBatch": {
            "schemaVersion": "1.0",
            "extensionUri": "urn:iac-code:a2a:pipeline-events:v1",
            "events": envelopes,
        },
    });
    let batch = vec![captured[0].clone(), frame.to_string()];
    bench_batch(c, "pipeline_batch", &batch);
}

/// Feeds `batch` through a fresh mapper per iteration and reports events/s.
fn bench_batch(c: &mut Criterion, name: &str, batch: &[String]) {
    let events = relay(batch);
    assert!(events > batch.len() / 2, "{name}: the batch maps to events");
    let mut group = c.benchmark_group("mapping");
    group.throughput(Throughput::Elements(events as u64));
    group.bench_function(name, |b| b.iter(|| relay(std::hint::black_box(batch))));
    group.finish();
}

/// The host's per-frame work for one run; returns the events emitted.
fn relay(batch: &[String]) -> usize {
    let mut mapper = Mapper::new(run_context(), DurableMapperState::default());
    let mut ids = IdGen::new(7);
    let mut emitted = 0;
    for (i, data) in batch.iter().enumerate() {
        let frame = common::parse_frame(data);
        let mapped = mapper.feed(
            &frame,
            FeedOptions::LIVE,
            1_796_205_000_000 + i as i64,
            &mut ids,
        );
        for event in &mapped.events {
            std::hint::black_box(event.to_json());
        }
        emitted += mapped.events.len();
    }
    emitted
}

fn run_context() -> RunContext {
    RunContext {
        thread_id: "thread-bench".into(),
        run_id: "run-bench".into(),
        context_id: "agui-ctx-bench".into(),
        language: Language::En,
        interrupt_ttl_ms: DEFAULT_INTERRUPT_TTL_MS,
        applied_input_ids: BTreeSet::new(),
    }
}

fn frames(raw: &str) -> Vec<String> {
    common::frames(raw)
}

/// The captured text delta frame of `think`, carrying a different token.
fn delta_frame(captured: &[String], i: usize) -> String {
    let template = captured
        .iter()
        .find(|f| f.contains("A VPC is a private network."))
        .expect("the think capture has a text delta");
    template.replace("A VPC is a private network.", &format!("token {i} "))
}
