//! A logical clock for frame timestamps.
//!
//! Frames carry timestamps (`status.timestamp`, envelope `createdAt`), but a
//! scripted runtime that stamps them from the wall clock would make its output
//! differ on every run. The clock therefore starts at a fixed instant and moves
//! forward by a fixed step on every reading: the same requests give the same
//! bytes. Only the SSE keep-alive comment, which is about real time passing,
//! reads the system clock.

use std::time::{SystemTime, UNIX_EPOCH};

/// Microseconds since the Unix epoch at which every runtime's clock starts
/// (2026-12-02T09:50:40Z, the day the reference captures were taken).
pub(crate) const DEFAULT_START_MICROS: u64 = 1_796_205_040_000_000;

/// Distance between two readings; not a round number so that stamps look
/// like the real runtime's microsecond stamps.
const STEP_MICROS: u64 = 137;

/// A monotonic logical clock.
#[derive(Debug, Clone)]
pub(crate) struct Clock {
    micros: u64,
}

impl Clock {
    pub(crate) fn new(start_micros: u64) -> Self {
        Clock {
            micros: start_micros,
        }
    }

    /// The next reading as RFC 3339 with microseconds (`…T09:50:40.560657Z`).
    pub(crate) fn stamp(&mut self) -> String {
        self.micros += STEP_MICROS;
        rfc3339_micros(self.micros)
    }

    /// The next reading with whole seconds (`…T09:53:36Z`), the pipeline
    /// envelope `createdAt` form.
    pub(crate) fn stamp_seconds(&mut self) -> String {
        self.micros += STEP_MICROS;
        let (date, time) = civil(self.micros / 1_000_000);
        format!("{date}T{time}Z")
    }
}

/// The wall-clock time in the sse-starlette ping form
/// (`2026-12-02 09:52:18.347207+00:00`).
pub(crate) fn ping_time() -> String {
    let micros = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0);
    let (date, time) = civil(micros / 1_000_000);
    format!("{date} {time}.{:06}+00:00", micros % 1_000_000)
}

fn rfc3339_micros(micros: u64) -> String {
    let (date, time) = civil(micros / 1_000_000);
    format!("{date}T{time}.{:06}Z", micros % 1_000_000)
}

/// `(YYYY-MM-DD, HH:MM:SS)` of a Unix time in seconds (proleptic Gregorian,
/// Howard Hinnant's days-to-civil algorithm).
fn civil(secs: u64) -> (String, String) {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (
        format!("{year:04}-{month:02}-{day:02}"),
        format!("{:02}:{:02}:{:02}", rem / 3600, rem % 3600 / 60, rem % 60),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_instant_is_the_capture_day() {
        assert_eq!(
            rfc3339_micros(DEFAULT_START_MICROS),
            "2026-12-02T09:50:40.000000Z"
        );
        assert_eq!(rfc3339_micros(0), "1970-01-01T00:00:00.000000Z");
        assert_eq!(
            rfc3339_micros(951_782_400_000_001),
            "2000-02-29T00:00:00.000001Z"
        );
    }

    #[test]
    fn readings_increase() {
        let mut clock = Clock::new(DEFAULT_START_MICROS);
        let a = clock.stamp();
        let b = clock.stamp();
        assert!(a < b, "{a} < {b}");
        assert_eq!(clock.stamp_seconds(), "2026-12-02T09:50:40Z");
    }
}
