//! Golden-transcript replay (`tests/golden/`, format in the golden brief):
//! a pure function from a case's `input` to its outputs as JSON, shared by
//! the native tests, the wasm build under Node and the wasm component, which
//! must all produce byte-identical canonical JSON.
//!
//! Each kind of case has its own module: `mapper` feeds A2A inputs to one
//! [`crate::mapper::Mapper`] run.

mod machine;
mod mapper;

use serde_json::Value;

/// Replays one golden case of `kind` from its `input`.
///
/// # Errors
/// An unknown kind, or an input that does not have the kind's shape.
pub fn replay(kind: &str, input: &Value) -> Result<Value, String> {
    match kind {
        "mapper" => mapper::replay(input),
        "machine" => machine::replay(input),
        other => Err(format!("unknown golden case kind `{other}`")),
    }
}
