//! Canonical JSON, digests and lenient number reading.
//!
//! The canonical form (SPEC §4) is compact JSON with object keys sorted by
//! code point and non-ASCII characters written as is. `serde_json::Value`
//! keeps objects in a `BTreeMap`, whose byte order of UTF-8 keys is code-point
//! order, so compact serialisation of a `Value` already is canonical.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// The canonical JSON text of `value`.
pub fn canonical_json(value: &Value) -> String {
    // Serialising a `Value` cannot fail: every key is a string.
    serde_json::to_string(value).unwrap_or_default()
}

/// SHA-256 (lowercase hex) of the canonical JSON of `value`.
pub fn canonical_digest(value: &Value) -> String {
    sha256_hex(canonical_json(value).as_bytes())
}

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// Lowercase hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[(b >> 4) as usize] as char);
        out.push(DIGITS[(b & 15) as usize] as char);
    }
    out
}

/// True when `s` is 64 lowercase hex digits (a SHA-256 digest).
pub fn is_digest(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Reads an integer that may arrive as a float with a zero fraction (A2A
/// metadata numbers are protobuf doubles: `11.0`).
pub fn lenient_i64(value: &Value) -> Option<i64> {
    if let Some(i) = value.as_i64() {
        return Some(i);
    }
    let f = value.as_f64()?;
    // 2^63 as f64; anything at or past it does not fit.
    (f.fract() == 0.0 && f.abs() < (1u64 << 63) as f64).then_some(f as i64)
}

/// [`lenient_i64`] for non-negative counts.
pub fn lenient_u64(value: &Value) -> Option<u64> {
    if let Some(u) = value.as_u64() {
        return Some(u);
    }
    lenient_i64(value).and_then(|i| u64::try_from(i).ok())
}
