//! `canonicalJson` and `canonicalDigest`: the server's canonical form
//! (SPEC §4), so a page can compute the digest the server will compare for
//! duplicate run ids and applied answers.

use iac_agui_core::json::{canonical_digest, canonical_json};
use iac_agui_core::Language;
use serde_json::Value;
use wasm_bindgen::prelude::*;

use crate::error::Failure;

/// The canonical JSON text of a JSON document.
///
/// # Errors
/// `INVALID_JSON` when `json` is not JSON.
pub fn canonical(json: &str) -> Result<String, Failure> {
    parse(json).map(|v| canonical_json(&v))
}

/// SHA-256 (lowercase hex) of the canonical JSON of a JSON document.
///
/// # Errors
/// `INVALID_JSON` when `json` is not JSON.
pub fn digest(json: &str) -> Result<String, Failure> {
    parse(json).map(|v| canonical_digest(&v))
}

/// `canonicalJson(json)` for JavaScript; throws `INVALID_JSON`.
#[wasm_bindgen(js_name = canonicalJson)]
pub fn canonical_json_js(json: &str) -> Result<String, JsValue> {
    Ok(canonical(json)?)
}

/// `canonicalDigest(json)` for JavaScript; throws `INVALID_JSON`.
#[wasm_bindgen(js_name = canonicalDigest)]
pub fn canonical_digest_js(json: &str) -> Result<String, JsValue> {
    Ok(digest(json)?)
}

/// Parses in Rust rather than in JavaScript: JSON.parse would round integers
/// above 2^53 and change the digest.
fn parse(json: &str) -> Result<Value, Failure> {
    serde_json::from_str(json).map_err(|_| Failure::not_json(Language::default()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_matches_the_foundation_vector() {
        let body = r#"{"status":"resolved","payload":{"decision":"allow_once"}}"#;
        assert_eq!(
            digest(body).unwrap(),
            "289281c743b2a91d60f25b59680f04683bd82766f7a9b2eb405975140373868e"
        );
    }

    #[test]
    fn large_integers_keep_their_digits() {
        assert_eq!(
            canonical(r#"{"b":9007199254740993,"a":1}"#).unwrap(),
            r#"{"a":1,"b":9007199254740993}"#
        );
    }

    #[test]
    fn not_json_is_invalid_json() {
        assert_eq!(digest("{").unwrap_err().code, "INVALID_JSON");
    }
}
