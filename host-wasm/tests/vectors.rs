//! The `validateRunInput` vectors, judged natively. The Node tests judge the
//! same file with the wasm build, so both runtimes must agree with it.

use iac_agui_wasm::validate::{validate_run_input, ValidateOptions};
use serde_json::Value;

#[test]
fn run_input_vectors_give_their_verdicts() {
    let text = include_str!("vectors/run-input.json");
    let file: Value = serde_json::from_str(text).expect("vectors are JSON");
    let cases = file["cases"].as_array().expect("cases");
    assert!(cases.len() > 20, "the vector file lost its cases");
    let mut failures = Vec::new();
    for case in cases {
        let body = match &case["raw"] {
            Value::String(raw) => raw.clone(),
            _ => serde_json::to_string(&case["body"]).expect("serialisable"),
        };
        let options = ValidateOptions::from_json(&case["options"]);
        let verdict = validate_run_input(&body, &options);
        if let Some(problem) = mismatch(&verdict, &case["expect"]) {
            failures.push(format!("{}: {problem}\n  verdict: {verdict}", case["name"]));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Compares the fields a vector pins; `code` and `message` sit in `error`.
fn mismatch(verdict: &Value, expect: &Value) -> Option<String> {
    for (key, want) in expect.as_object()? {
        let got = match key.as_str() {
            "code" | "message" => &verdict["error"][key],
            _ => &verdict[key],
        };
        if got != want {
            return Some(format!("{key}: want {want}, got {got}"));
        }
    }
    None
}
