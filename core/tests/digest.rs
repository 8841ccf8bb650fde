//! The canonical digest vectors of the foundation issue (SPEC §4).

use iac_agui_core::json::{canonical_digest, canonical_json};
use serde_json::Value;

const VECTORS: [(&str, &str); 4] = [
    (
        r#"{"threadId":"t-1","runId":"r-1","state":{},"messages":[{"id":"m1","role":"user","content":"Crie um modelo de VPC"}],"tools":[],"context":[],"forwardedProps":{"iacCode":{"schemaVersion":1,"rosInvocationId":"inv-1","cwd":"/workspace/s1"}}}"#,
        "93feb30ee6f3d6b3d8ed1b89226f319cfc6b6523d0c1c9bfab5419e708846f40",
    ),
    (
        r#"{"b":[3,2,1],"a":{"z":null,"y":true,"x":false},"é":"ação","😀":"emoji","A":"\n\t\"\\","ctl":"\u0001\u007f\u2028"}"#,
        "890de830713b853a4d755bec7fd4e7561f39de730b1fd04edc12c4fc1faf0849",
    ),
    (
        r#"{"status":"resolved","payload":{"decision":"allow_once"}}"#,
        "289281c743b2a91d60f25b59680f04683bd82766f7a9b2eb405975140373868e",
    ),
    (
        r#"{"n":-12345678901234,"big":9007199254740993,"zero":0,"nested":[[],{},[{}]]}"#,
        "d347aa42ffd097c721c5e32ca865b8d3d545467d0da73b24f241307d7037fc0b",
    ),
];

#[test]
fn digest_vectors_match() {
    for (input, expected) in VECTORS {
        let value: Value = serde_json::from_str(input).unwrap();
        assert_eq!(canonical_digest(&value), expected, "input {input}");
    }
}

#[test]
fn canonical_form_sorts_keys_by_code_point_and_keeps_non_ascii() {
    let value: Value =
        serde_json::from_str(r#"{"é":1,"z":2,"A":3,"😀":4,"a":{"y":1,"x":2}}"#).unwrap();
    assert_eq!(
        canonical_json(&value),
        r#"{"A":3,"a":{"x":2,"y":1},"z":2,"é":1,"😀":4}"#
    );
}

#[test]
fn canonical_form_escapes_like_the_reference() {
    let value: Value = serde_json::from_str(r#"{"k":"\u0001\u007f\u2028\n"}"#).unwrap();
    // Control characters below 0x20 are escaped; DEL and U+2028 are written raw.
    assert_eq!(
        canonical_json(&value),
        "{\"k\":\"\\u0001\u{7f}\u{2028}\\n\"}"
    );
}
