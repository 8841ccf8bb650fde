//! A string that must never reach logs, files or error messages.

/// A secret value (bearer token, API key). `Debug` and `Display` print
/// `<redacted>`; only [`Secret::expose`] gives the value, at the one place
/// that sends it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a value.
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// The value, for the header or environment variable that carries it.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// A fresh random token: 32 random bytes, base64url without padding.
    ///
    /// # Panics
    /// When the operating system has no randomness to give (nothing sane can
    /// run then).
    pub fn random() -> Self {
        use base64::Engine as _;
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).expect("the OS random source is unavailable");
        Secret(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}

impl std::fmt::Display for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}

/// Compares a presented credential with the expected one in time that does
/// not depend on where they differ (length differences still show).
pub fn constant_time_eq(presented: &[u8], expected: &[u8]) -> bool {
    if presented.len() != expected.len() {
        return false;
    }
    presented
        .iter()
        .zip(expected)
        .fold(0u8, |acc, (a, b)| acc | (a ^ b))
        == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_printed() {
        let s = Secret::new("sk-very-secret");
        assert_eq!(format!("{s:?} {s}"), "<redacted> <redacted>");
        assert_eq!(s.expose(), "sk-very-secret");
    }

    #[test]
    fn random_tokens_differ() {
        let (a, b) = (Secret::random(), Secret::random());
        assert_ne!(a, b);
        assert_eq!(a.expose().len(), 43);
    }

    #[test]
    fn comparison() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"abcd"));
        assert!(constant_time_eq(b"", b""));
    }
}
