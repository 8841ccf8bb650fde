//! Resource figures of a local server process, read from `/proc` so they do
//! not depend on the load client: peak and current RSS (`VmHWM`, `VmRSS` of
//! `/proc/<pid>/status`) and CPU time (`utime + stime` of `/proc/<pid>/stat`).

use std::time::Duration;

/// Linux reports `stat` times in USER_HZ ticks, 100 per second on every
/// mainstream architecture (reading `sysconf` would need `unsafe` libc).
const TICKS_PER_SECOND: u64 = 100;

/// One reading of a process's memory and CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ProcSample {
    /// Peak resident set size, in KiB.
    pub(crate) peak_rss_kib: u64,
    /// Current resident set size, in KiB.
    pub(crate) rss_kib: u64,
    /// User + system CPU time so far.
    pub(crate) cpu: Duration,
}

/// Reads `pid`'s figures; `None` when the process is gone or not Linux.
pub(crate) fn sample(pid: u32) -> Option<ProcSample> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    Some(ProcSample {
        peak_rss_kib: status_kib(&status, "VmHWM:")?,
        rss_kib: status_kib(&status, "VmRSS:")?,
        cpu: stat_cpu(&stat)?,
    })
}

fn status_kib(status: &str, key: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with(key))?;
    line[key.len()..].split_whitespace().next()?.parse().ok()
}

/// `utime` and `stime` are fields 14 and 15; the command name (field 2) may
/// hold spaces and parentheses, so counting starts after its last `)`.
fn stat_cpu(stat: &str) -> Option<Duration> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some(Duration::from_millis(
        (utime + stime) * 1000 / TICKS_PER_SECOND,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_status_lines() {
        let status =
            "Name:\tiac-agui\nVmPeak:\t  99 kB\nVmHWM:\t   12345 kB\nVmRSS:\t    2345 kB\n";
        assert_eq!(status_kib(status, "VmHWM:"), Some(12345));
        assert_eq!(status_kib(status, "VmRSS:"), Some(2345));
        assert_eq!(status_kib(status, "VmSwap:"), None);
    }

    #[test]
    fn reads_cpu_after_a_tricky_command_name() {
        let stat = "42 (a) b (c)) S 1 42 42 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0 5 0 0";
        assert_eq!(stat_cpu(stat), Some(Duration::from_millis(3000)));
    }

    #[test]
    fn reads_this_process() {
        let own = sample(std::process::id()).expect("/proc of this process");
        assert!(own.peak_rss_kib >= own.rss_kib && own.rss_kib > 0);
    }
}
