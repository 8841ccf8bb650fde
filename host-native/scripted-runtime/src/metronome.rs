//! The beat of the `ticks` scenario: tick `i` is due `i` intervals after the
//! first.
//!
//! tokio's timer counts whole milliseconds, so the ticks of all runs due
//! within the same millisecond go out together: with 100 runs ticking every
//! 10 ms, about ten at once, every millisecond. That lockstep stays the
//! default (`ticks:<n>:<ms>`). With `ticks:<n>:<ms>:exact`, each run gets a
//! periodic `timerfd` on Linux, which the kernel fires to the microsecond,
//! so runs started at different moments tick at different moments, as
//! independent streams do. Elsewhere `exact` falls back to the lockstep.

use std::time::Duration;

use tokio::time::Instant;

/// Yields once per interval, the first time at once.
pub(crate) struct Metronome {
    start: Instant,
    every: Duration,
    beats: u64,
    timer: Option<kernel::Timer>,
}

impl Metronome {
    /// A beat every `every`; with `exact`, from the kernel's timer where
    /// there is one.
    pub(crate) fn new(every: Duration, exact: bool) -> Metronome {
        Metronome {
            start: Instant::now(),
            every,
            beats: 0,
            timer: exact.then(|| kernel::Timer::new(every)).flatten(),
        }
    }

    /// Waits for the next beat (returns at once if it is overdue).
    pub(crate) async fn next(&mut self) {
        let beat = u32::try_from(self.beats).unwrap_or(u32::MAX);
        self.beats += 1;
        if let Some(timer) = &mut self.timer {
            if timer.next().await.is_some() {
                return;
            }
            // A timer that fails stops being used; the beat goes on from
            // the same start.
            self.timer = None;
        }
        tokio::time::sleep_until(self.start + self.every.saturating_mul(beat)).await;
    }
}

#[cfg(target_os = "linux")]
mod kernel {
    use std::os::fd::OwnedFd;
    use std::time::Duration;

    use rustix::time::{
        timerfd_create, timerfd_settime, Itimerspec, TimerfdClockId, TimerfdFlags,
        TimerfdTimerFlags, Timespec,
    };
    use tokio::io::unix::AsyncFd;
    use tokio::io::Interest;

    /// A periodic `timerfd`, registered with the event loop.
    pub(super) struct Timer {
        fd: AsyncFd<OwnedFd>,
        /// Expirations read and not yet handed out as beats.
        owed: u64,
    }

    impl Timer {
        /// Expires at once, then every `every`.
        pub(super) fn new(every: Duration) -> Option<Timer> {
            let spec = |d: Duration| Timespec {
                tv_sec: d.as_secs().try_into().unwrap_or(i64::MAX),
                tv_nsec: d.subsec_nanos().into(),
            };
            // The smallest expiry: zero would disarm the timer.
            let soonest = Duration::from_nanos(1);
            let period = Itimerspec {
                it_interval: spec(every.max(soonest)),
                it_value: spec(soonest),
            };
            let fd = timerfd_create(
                TimerfdClockId::Monotonic,
                TimerfdFlags::NONBLOCK | TimerfdFlags::CLOEXEC,
            )
            .ok()?;
            timerfd_settime(&fd, TimerfdTimerFlags::empty(), &period).ok()?;
            // Deprecated because a type could hand out a descriptor that
            // closes while registered (the replacement is an unsafe
            // function); an `OwnedFd` keeps its descriptor for its lifetime.
            #[allow(deprecated)]
            let fd = AsyncFd::with_interest(fd, Interest::READABLE).ok()?;
            Some(Timer { fd, owed: 0 })
        }

        /// Waits for the next expiration; `None` if the timer failed.
        pub(super) async fn next(&mut self) -> Option<()> {
            while self.owed == 0 {
                let mut ready = self.fd.readable().await.ok()?;
                let mut count = [0u8; 8];
                match rustix::io::read(self.fd.get_ref(), &mut count) {
                    // A read takes every expiration so far, so the timer is
                    // not readable until the next one.
                    Ok(8) => self.owed = u64::from_ne_bytes(count),
                    Err(rustix::io::Errno::AGAIN) => {}
                    _ => return None,
                }
                ready.clear_ready();
            }
            self.owed -= 1;
            Some(())
        }
    }
}

/// No kernel timer here: `exact` keeps the millisecond beat.
#[cfg(not(target_os = "linux"))]
mod kernel {
    use std::time::Duration;

    pub(super) enum Timer {}

    impl Timer {
        pub(super) fn new(_every: Duration) -> Option<Timer> {
            None
        }

        pub(super) async fn next(&mut self) -> Option<()> {
            match *self {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// No beat comes early: the twentieth beat of a 2 ms metronome is at
    /// least 38 ms after the metronome was made, either way.
    #[tokio::test]
    async fn beats_keep_their_interval() {
        for exact in [false, true] {
            let made = Instant::now();
            let mut beat = Metronome::new(Duration::from_millis(2), exact);
            #[cfg(target_os = "linux")]
            assert_eq!(beat.timer.is_some(), exact);
            for _ in 0..20 {
                beat.next().await;
            }
            assert!(
                made.elapsed() >= Duration::from_millis(38),
                "exact: {exact}"
            );
        }
    }
}
