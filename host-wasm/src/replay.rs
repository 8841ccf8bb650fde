//! Golden-transcript replay in the page or under Node: the core's pure
//! `replay` function, so the wasm build is checked against the same
//! `tests/golden/` files as the native core, byte for byte.

use iac_agui_core::json::canonical_json;
use serde_json::Value;
use wasm_bindgen::prelude::*;

use crate::error::to_js;

/// Replays `input` as a case of `kind`; the outputs as canonical JSON.
///
/// # Errors
/// The core's reason as text (unknown kind, malformed input), or
/// `INVALID_JSON` when `input_json` is not JSON.
pub fn replay_json(kind: &str, input_json: &str) -> Result<String, String> {
    let input: Value =
        serde_json::from_str(input_json).map_err(|e| format!("input is not JSON: {e}"))?;
    iac_agui_core::replay::replay(kind, &input).map(|out| canonical_json(&out))
}

/// Splits a golden case file into `{kind, input, expected}`, with `input`
/// and `expected` as canonical JSON text (`expected` is `null` when the case
/// has none). Done in Rust because `JSON.parse` would turn `1.0` into `1`
/// and round large integers, changing what the core is fed.
pub fn split_case(case_json: &str) -> Result<Value, String> {
    let case: Value =
        serde_json::from_str(case_json).map_err(|e| format!("case is not JSON: {e}"))?;
    let kind = case
        .get("kind")
        .and_then(Value::as_str)
        .ok_or("missing `kind`")?;
    let input = case.get("input").ok_or("missing `input`")?;
    Ok(serde_json::json!({
        "kind": kind,
        "input": canonical_json(input),
        "expected": case.get("expected").map(canonical_json),
    }))
}

/// `replay(kind, inputJson)` for JavaScript: canonical JSON text of the
/// outputs. Throws an `Error` with the core's reason.
#[wasm_bindgen(js_name = replay)]
pub fn replay_js(
    kind: &str,
    #[wasm_bindgen(js_name = "inputJson")] input_json: &str,
) -> Result<String, JsValue> {
    replay_json(kind, input_json).map_err(|reason| js_sys::Error::new(&reason).into())
}

/// `goldenCase(caseJson)` for JavaScript: see [`split_case`].
#[wasm_bindgen(js_name = goldenCase, unchecked_return_type = "GoldenCase")]
pub fn golden_case_js(
    #[wasm_bindgen(js_name = "caseJson")] case_json: &str,
) -> Result<JsValue, JsValue> {
    split_case(case_json)
        .map(|v| to_js(&v))
        .map_err(|reason| js_sys::Error::new(&reason).into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_keeps_floats_and_big_integers() {
        let case =
            r#"{"kind":"mapper","input":{"b":11.0,"a":9007199254740993},"expected":{"z":1}}"#;
        let split = split_case(case).unwrap();
        assert_eq!(split["input"], r#"{"a":9007199254740993,"b":11.0}"#);
        assert_eq!(split["expected"], r#"{"z":1}"#);
        let no_expected = split_case(r#"{"kind":"mapper","input":{}}"#).unwrap();
        assert_eq!(no_expected["expected"], Value::Null);
    }

    #[test]
    fn unknown_kinds_and_bad_input_are_errors() {
        assert!(replay_json("nonsense", "{}").is_err());
        assert!(replay_json("mapper", "{").unwrap_err().contains("not JSON"));
    }
}
