//! Durable-state work per request: the canonical digest of a request body
//! (SPEC §4), the thread document encode/decode around every persist and
//! load (SPEC §11), and resume payload validation against the interrupt's
//! JSON Schema (SPEC §7–8).

#[path = "common/mod.rs"]
mod common;

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use iac_agui_core::document::{PendingInput, ThreadDocument};
use iac_agui_core::i18n::Language;
use iac_agui_core::json::{canonical_digest, sha256_hex};
use iac_agui_core::machine::validate_payload;
use serde_json::{json, Value};

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20);
    targets = digest, document, resume_validation
}
criterion_main!(benches);

const PERM: &str = include_str!("../tests/fixtures/a2a/out_perm1_a.raw");
const PIPE: &str = include_str!("../tests/fixtures/a2a/out_pipe1.raw");

fn digest(c: &mut Criterion) {
    let body = json!({
        "threadId": "thread-7f1c2a", "runId": "run-0b9e41", "state": {}, "tools": [],
        "context": [{ "description": "region", "value": "cn-hangzhou" }],
        "forwardedProps": { "iacCode": { "schemaVersion": 1, "cwd": "/workspace/ws",
            "userId": "u-42", "rosInvocationId": "ros-9c1d" } },
        "messages": (0..20).map(|i| json!({
            "id": format!("m{i}"),
            "role": if i % 2 == 0 { "user" } else { "assistant" },
            "content": "Create a VPC with two vSwitches in Hangzhou and an ECS instance in each.",
        })).collect::<Vec<_>>(),
    });
    let mut group = c.benchmark_group("state");
    group.throughput(Throughput::Elements(1));
    group.bench_function("canonical_digest_20_messages", |b| {
        b.iter(|| canonical_digest(std::hint::black_box(&body)))
    });
    group.finish();
}

/// A thread after 50 runs with two pending interrupts: encode is
/// `to_json` + bytes (what is written), decode is bytes + `parse` (what is
/// loaded).
fn document(c: &mut Criterion) {
    let doc = busy_document();
    let bytes = serde_json::to_vec(&doc.to_json()).expect("serialisable");
    let mut group = c.benchmark_group("state");
    group.throughput(Throughput::Elements(1));
    group.bench_function("document_encode", |b| {
        b.iter(|| serde_json::to_vec(&std::hint::black_box(&doc).to_json()).expect("serialisable"))
    });
    group.bench_function("document_decode", |b| {
        b.iter(|| {
            let value: Value = serde_json::from_slice(std::hint::black_box(&bytes)).expect("JSON");
            ThreadDocument::parse(&value, "thread-bench").expect("a valid document")
        })
    });
    group.finish();
}

/// One answer to a permission and one to a Pipeline question, each checked
/// against the schema built from its captured projection.
fn resume_validation(c: &mut Criterion) {
    let permission = PendingInput::new(&common::input_projection(PERM), false, None);
    let question = PendingInput::new(&common::input_projection(PIPE), false, None);
    let allow = json!({ "decision": "allow_once" });
    let answer = json!({ "freeText": "cn-hangzhou" });
    validate_payload(&permission, &allow, Language::En).expect("a valid permission answer");
    let mut group = c.benchmark_group("state");
    group.throughput(Throughput::Elements(1));
    group.bench_function("resume_validate_permission", |b| {
        b.iter(|| validate_payload(&permission, std::hint::black_box(&allow), Language::En))
    });
    group.bench_function("resume_validate_question", |b| {
        b.iter(|| validate_payload(&question, std::hint::black_box(&answer), Language::En))
    });
    group.finish();
}

fn busy_document() -> ThreadDocument {
    let mut doc = ThreadDocument::new(
        "thread-bench",
        "/workspace/ws",
        Some("u-42".into()),
        "exec-0001".into(),
        "ros-9c1d".into(),
    );
    doc.iac_code_session_id = Some("d1d88023-ca7f-4df3-8343-7eda93ecb5d5".into());
    doc.execution.task_id = Some("92368524-de55-4366-9d66-43969a1a49f1".into());
    doc.execution.pipeline_sequence = 42;
    for i in 0..50 {
        let digest = sha256_hex(format!("run-{i}").as_bytes());
        doc.run_digests
            .insert(format!("run-{i:04}"), digest.clone());
        doc.execution.text_snapshot_digests.insert(digest);
    }
    for raw in [PERM, PIPE] {
        let input = PendingInput::new(
            &common::input_projection(raw),
            false,
            Some("2026-12-02T10:00:00Z".into()),
        );
        let id = input.value["inputId"]
            .as_str()
            .expect("an input id")
            .to_owned();
        doc.execution.pending.insert(id, input);
    }
    doc
}
