//! Frames and projections taken from the real A2A captures
//! (`core/tests/fixtures/a2a/`), shared by the benches so that every figure
//! is measured on wire shapes the runtime really sends.

#![allow(dead_code)] // each bench binary uses a different subset

use iac_agui_core::a2a::{StreamFrame, StreamResponse};
use serde_json::Value;

/// The `data:` payloads of one captured SSE response, in order.
pub(crate) fn frames(raw: &str) -> Vec<String> {
    raw.lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .map(|data| data.trim_end_matches('\r').to_owned())
        .collect()
}

/// Parses one frame the way the native host does ([`StreamFrame::parse`]).
pub(crate) fn parse_frame(data: &str) -> StreamResponse {
    match StreamFrame::parse(data) {
        Some(StreamFrame::Result(response)) => *response,
        other => panic!("not a result frame: {other:?}"),
    }
}

/// `metadata.iac_code` of a frame's status update.
pub(crate) fn iac_code(data: &str) -> Value {
    let value: Value = serde_json::from_str(data).expect("JSON");
    value
        .pointer("/result/statusUpdate/metadata/iac_code")
        .cloned()
        .unwrap_or(Value::Null)
}

/// The first required-input projection (`iac_code.input`) of a capture.
pub(crate) fn input_projection(raw: &str) -> Value {
    frames(raw)
        .iter()
        .map(|f| iac_code(f))
        .find_map(|iac| iac.get("input").cloned())
        .expect("the capture has a required input")
}
