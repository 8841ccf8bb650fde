//! Deterministic fresh ids: a small seeded PRNG, so that a run is a pure
//! function of its inputs and outputs are byte-identical on every runtime.

/// A seeded generator of UUIDv4 strings and hex ids (SplitMix64).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdGen {
    state: u64,
}

impl IdGen {
    /// A generator seeded by the host (from its own entropy in production,
    /// from a fixed value in tests).
    pub fn new(seed: u64) -> Self {
        IdGen { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// 16 random bytes shaped as a UUIDv4 (version and variant bits set).
    pub fn uuid_bytes(&mut self) -> [u8; 16] {
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&self.next_u64().to_be_bytes());
        bytes[8..].copy_from_slice(&self.next_u64().to_be_bytes());
        bytes[6] = (bytes[6] & 0x0f) | 0x40;
        bytes[8] = (bytes[8] & 0x3f) | 0x80;
        bytes
    }

    /// A UUIDv4 in its hyphenated form.
    pub fn uuid(&mut self) -> String {
        let h = crate::json::hex(&self.uuid_bytes());
        format!(
            "{}-{}-{}-{}-{}",
            &h[..8],
            &h[8..12],
            &h[12..16],
            &h[16..20],
            &h[20..]
        )
    }

    /// A UUIDv4 as 32 hex digits, no hyphens.
    pub fn uuid_hex(&mut self) -> String {
        crate::json::hex(&self.uuid_bytes())
    }
}
