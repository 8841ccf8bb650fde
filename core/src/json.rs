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

/// Appends `text` as a JSON string literal, escaped as serde_json escapes
/// it: `"` and `\`, the short forms `\b \f \n \r \t`, other control
/// characters as `\u00XX` (lowercase hex), everything else as is.
pub fn push_str_literal(out: &mut String, text: &str) {
    out.push('"');
    let mut rest = text;
    // Every byte that needs an escape is ASCII, so each split falls on a
    // character boundary.
    while let Some(at) = first_to_escape(rest.as_bytes()) {
        out.push_str(&rest[..at]);
        let byte = rest.as_bytes()[at];
        match byte {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\x08' => out.push_str("\\b"),
            b'\x0c' => out.push_str("\\f"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            _ => {
                out.push_str("\\u00");
                out.push_str(&hex(&[byte]));
            }
        }
        rest = &rest[at + 1..];
    }
    out.push_str(rest);
    out.push('"');
}

/// The index of the first byte of `bytes` that a JSON string escapes (a
/// control character, `"` or `\`), eight bytes at a time. In a word, a
/// byte below 0x20 sets its top bit in `word - 0x2020…` while that bit is
/// clear in `!word`; `"` and `\` do the same once XORed to zero. The
/// lowest flagged byte is always a true match (bytes above it may be false
/// ones, from the borrow).
pub(crate) fn first_to_escape(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = u64::MAX / 255;
    const TOPS: u64 = ONES << 7;
    let mut chunks = bytes.chunks_exact(8);
    let mut offset = 0;
    for chunk in &mut chunks {
        let mut word = [0; 8];
        word.copy_from_slice(chunk);
        let word = u64::from_le_bytes(word);
        let quote = word ^ (ONES * u64::from(b'"'));
        let backslash = word ^ (ONES * u64::from(b'\\'));
        let flagged = ((word.wrapping_sub(ONES * 0x20) & !word)
            | (quote.wrapping_sub(ONES) & !quote)
            | (backslash.wrapping_sub(ONES) & !backslash))
            & TOPS;
        if flagged != 0 {
            return Some(offset + flagged.trailing_zeros() as usize / 8);
        }
        offset += 8;
    }
    let tail = chunks.remainder();
    let at = tail
        .iter()
        .position(|&b| b < 0x20 || b == b'"' || b == b'\\')?;
    Some(offset + at)
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

#[cfg(test)]
mod tests {
    use super::first_to_escape;

    fn naive(bytes: &[u8]) -> Option<usize> {
        bytes
            .iter()
            .position(|&b| b < 0x20 || b == b'"' || b == b'\\')
    }

    /// Every escaped byte at every position of the first three words, among
    /// fillers next to the matched values (0x1f/0x20, 0x21/0x23, 0x5b/0x5d,
    /// 0x7f, and UTF-8 continuation bytes).
    #[test]
    fn the_word_scan_finds_what_a_byte_loop_finds() {
        let fillers: [&str; 6] = [" ", "!#", "[]", "\u{7f}", "é", "😀x"];
        let targets = (0u8..0x20).chain([b'"', b'\\']);
        for target in targets {
            for filler in fillers {
                for before in 0..24 {
                    let mut text: Vec<u8> = filler.bytes().cycle().take(before).collect();
                    text.push(target);
                    text.extend(filler.bytes().cycle().take(13));
                    assert_eq!(first_to_escape(&text), naive(&text), "{text:?}");
                    let clean: Vec<u8> = filler.bytes().cycle().take(before).collect();
                    assert_eq!(first_to_escape(&clean), None, "{clean:?}");
                }
            }
        }
    }
}
