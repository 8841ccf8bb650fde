//! `replay("mapper", input)` is exposed to hosts (and to JavaScript through
//! the wasm package), so a malformed input must come back as `Err`, never as
//! a panic. Every mapper golden input is mutated at random places (values
//! swapped for garbage, keys dropped) and replayed; the seed is printed on
//! failure.

use std::fs;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use iac_agui_core::ids::IdGen;
use iac_agui_core::replay::replay;
use serde_json::{json, Value};

const MUTATIONS_PER_CASE: u64 = 40;

#[test]
fn mutated_golden_inputs_never_panic() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/golden/mapper");
    let mut inputs = Vec::new();
    for entry in fs::read_dir(&dir).expect("golden mapper dir").flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "json") {
            let case: Value =
                serde_json::from_str(&fs::read_to_string(&path).expect("read")).expect("json");
            inputs.push((path, case["input"].clone()));
        }
    }
    inputs.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(inputs.len() >= 40);
    for (index, (path, input)) in inputs.iter().enumerate() {
        for round in 0..MUTATIONS_PER_CASE {
            let seed = (index as u64) << 32 | round;
            let mut rng = IdGen::new(seed);
            let mut mutated = input.clone();
            for _ in 0..1 + rng.next_u64() % 4 {
                mutate(&mut mutated, &mut rng);
            }
            let outcome = catch_unwind(AssertUnwindSafe(|| replay("mapper", &mutated)));
            assert!(
                outcome.is_ok(),
                "{} seed {seed}: replay panicked on {mutated}",
                path.display()
            );
        }
    }
}

#[test]
fn replay_rejects_bad_shapes_with_errors() {
    assert!(replay("mapper", &json!(null)).is_err());
    assert!(replay("mapper", &json!({"context": {}})).is_err());
    assert!(replay(
        "mapper",
        &json!({"context": {"threadId": "t", "runId": "r"}, "steps": [{"nope": 1}]})
    )
    .is_err());
    assert!(replay("nope", &json!({})).is_err());
    let extreme = json!({"context": {"threadId": "t", "runId": "r", "interruptTtlMs": i64::MAX},
        "clock": {"startMs": i64::MAX, "tickMs": i64::MAX},
        "steps": [{"frame": {"statusUpdate": {"taskId": "x", "status": {"state": "TASK_STATE_INPUT_REQUIRED"},
            "metadata": {"iac_code": {"input": {"required": true, "inputId": "i"}}}}}}]});
    let output = replay("mapper", &extreme).expect("extreme clock values still replay");
    assert_eq!(output["outcome"], json!("interrupt"));
}

/// Replaces one random node of `value` with garbage, or drops a key.
fn mutate(value: &mut Value, rng: &mut IdGen) {
    let descend = rng.next_u64() % 3 != 0;
    match value {
        Value::Object(map) if descend && !map.is_empty() => {
            let keys: Vec<String> = map.keys().cloned().collect();
            let key = keys[(rng.next_u64() % keys.len() as u64) as usize].clone();
            if rng.next_u64() % 8 == 0 {
                map.remove(&key);
            } else if let Some(child) = map.get_mut(&key) {
                mutate(child, rng);
            }
            return;
        }
        Value::Array(items) if descend && !items.is_empty() => {
            let i = (rng.next_u64() % items.len() as u64) as usize;
            mutate(&mut items[i], rng);
            return;
        }
        _ => {}
    }
    *value = match rng.next_u64() % 9 {
        0 => Value::Null,
        1 => json!(-1),
        2 => json!(1e308),
        3 => json!("x"),
        4 => json!([]),
        5 => json!({}),
        6 => json!(i64::MIN),
        7 => json!(true),
        _ => json!({"iac_code": {"pipeline": {"sequence": -9e18, "step": {"id": ""}}}}),
    };
}
