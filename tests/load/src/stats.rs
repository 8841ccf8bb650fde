//! Percentiles over recorded samples (nearest-rank, exact: every sample is
//! kept, so the tails are real and not histogram buckets).

use std::time::Duration;

/// Samples of one measured quantity.
#[derive(Debug, Default, Clone)]
pub(crate) struct Samples {
    values: Vec<Duration>,
}

impl Samples {
    pub(crate) fn push(&mut self, value: Duration) {
        self.values.push(value);
    }

    pub(crate) fn extend(&mut self, other: Samples) {
        self.values.extend(other.values);
    }

    pub(crate) fn len(&self) -> usize {
        self.values.len()
    }

    /// The `p`-th percentile (0 < p ≤ 100) by nearest rank; `None` when
    /// there are no samples.
    pub(crate) fn percentile(&mut self, p: f64) -> Option<Duration> {
        if self.values.is_empty() {
            return None;
        }
        self.values.sort_unstable();
        let rank = ((p / 100.0) * self.values.len() as f64).ceil() as usize;
        Some(self.values[rank.clamp(1, self.values.len()) - 1])
    }
}

/// A duration as a short human figure (µs below 1 ms, ms above).
pub(crate) fn show(d: Option<Duration>) -> String {
    match d {
        None => "-".into(),
        Some(d) if d < Duration::from_millis(1) => format!("{} µs", d.as_micros()),
        Some(d) => format!("{:.2} ms", d.as_secs_f64() * 1000.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn nearest_rank_percentiles() {
        let mut s = Samples::default();
        for v in (1..=100).rev() {
            s.push(ms(v));
        }
        assert_eq!(s.percentile(50.0), Some(ms(50)));
        assert_eq!(s.percentile(99.0), Some(ms(99)));
        assert_eq!(s.percentile(100.0), Some(ms(100)));
        assert_eq!(s.percentile(0.1), Some(ms(1)));
    }

    #[test]
    fn empty_and_single() {
        assert_eq!(Samples::default().percentile(50.0), None);
        let mut s = Samples::default();
        s.push(ms(7));
        assert_eq!(s.percentile(99.0), Some(ms(7)));
    }

    #[test]
    fn shows_units() {
        assert_eq!(show(None), "-");
        assert_eq!(show(Some(Duration::from_micros(250))), "250 µs");
        assert_eq!(show(Some(ms(12))), "12.00 ms");
    }
}
