//! Request validation (SPEC §2–3): a small text request, and one carrying
//! 10 MiB of inline images (base64 decode dominates).

use std::time::Duration;

use base64::Engine as _;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use iac_agui_core::validate::{parse_body, validate_run};
use serde_json::{json, Value};

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20);
    targets = small_request, image_request
}
criterion_main!(benches);

/// A typical first turn: a few history messages, the iac-code extension,
/// one text message.
fn small_request(c: &mut Criterion) {
    let body = serde_json::to_vec(&request(json!(
        "Create a VPC with two vSwitches in Hangzhou."
    )))
    .expect("serialisable");
    let mut group = c.benchmark_group("validate");
    group.throughput(Throughput::Elements(1));
    group.bench_function("small_request", |b| {
        b.iter(|| {
            let value = parse_body(std::hint::black_box(&body)).expect("valid JSON");
            validate_run(&value, Some("en-US,en;q=0.8")).expect("valid request")
        })
    });
    group.finish();
}

/// Two 5 MiB images: the largest total a message may carry.
fn image_request(c: &mut Criterion) {
    let image = pseudo_random_bytes(5 * 1024 * 1024);
    let encoded = base64::engine::general_purpose::STANDARD.encode(&image);
    let part = |name: &str| {
        json!({
            "type": "image",
            "source": { "type": "data", "mimeType": "image/png", "value": encoded },
            "metadata": { "filename": name },
        })
    };
    let content = json!([
        { "type": "text", "text": "What is wrong in these diagrams?" },
        part("a.png"),
        part("b.png"),
    ]);
    let body = serde_json::to_vec(&request(content)).expect("serialisable");
    let mut group = c.benchmark_group("validate");
    group.throughput(Throughput::Bytes(body.len() as u64));
    group.sample_size(10);
    group.bench_function("images_10MiB", |b| {
        b.iter(|| {
            let value = parse_body(std::hint::black_box(&body)).expect("valid JSON");
            validate_run(&value, None).expect("valid request")
        })
    });
    group.finish();
}

fn request(content: Value) -> Value {
    json!({
        "threadId": "thread-7f1c2a",
        "runId": "run-0b9e41",
        "state": {},
        "tools": [],
        "context": [{ "description": "region", "value": "cn-hangzhou" }],
        "forwardedProps": { "iacCode": {
            "schemaVersion": 1,
            "cwd": "/workspace/ws",
            "userId": "u-42",
            "rosInvocationId": "ros-9c1d",
            "preferredLanguage": "en",
        }},
        "messages": [
            { "id": "m1", "role": "user", "content": "What can you build?" },
            { "id": "m2", "role": "assistant", "content": "VPCs, ECS instances, RDS databases and more." },
            { "id": "m3", "role": "user", "content": content },
        ],
    })
}

/// Incompressible bytes without a clock or global RNG (xorshift).
fn pseudo_random_bytes(len: usize) -> Vec<u8> {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect()
}
