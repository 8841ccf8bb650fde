//! Aggregation of the measured runs and the printed table.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::client::{Ending, RunResult};
use crate::options::Options;
use crate::proc::ProcSample;
use crate::stats::{show, Samples};

/// What `run` mode measured.
#[derive(Debug, Default)]
pub(crate) struct RunReport {
    pub(crate) elapsed: Duration,
    /// Server figures before and after the runs.
    pub(crate) server: Option<(ProcSample, ProcSample)>,
    /// The server's RSS (KiB), every 50 ms while the runs went on.
    pub(crate) rss_timeline: Vec<u64>,
    finished: usize,
    /// Runs sent on a connection kept from their client's last run.
    reused: usize,
    failures: BTreeMap<String, usize>,
    events: u64,
    first_event: Samples,
    /// First events of the runs after the first `concurrency`, which all
    /// start at the same moment.
    first_event_after_wave: Samples,
    gaps: Samples,
    latencies: Samples,
}

/// What `idle` mode measured.
#[derive(Debug, Default)]
pub(crate) struct IdleReport {
    pub(crate) open: usize,
    pub(crate) errors: usize,
    pub(crate) open_time: Duration,
    pub(crate) first_event: Samples,
    /// Server figures before opening and while holding the streams.
    pub(crate) server: Option<(ProcSample, ProcSample)>,
    /// Streams that opened but ended before the hold did.
    pub(crate) ended_early: usize,
    failures: BTreeMap<String, usize>,
}

impl RunReport {
    /// Adds one run's figures; `after_wave`: it did not start with the
    /// first `concurrency` runs.
    pub(crate) fn add(&mut self, result: RunResult, after_wave: bool) {
        self.events += result.events;
        self.reused += usize::from(result.reused);
        if let Some(first) = result.first_event {
            self.first_event.push(first);
            if after_wave {
                self.first_event_after_wave.push(first);
            }
        }
        self.gaps.extend(result.gaps);
        self.latencies.extend(result.latencies);
        match result.ending {
            Ending::Finished => self.finished += 1,
            other => self.add_failure(other),
        }
    }

    pub(crate) fn add_failure(&mut self, ending: Ending) {
        *self.failures.entry(describe(&ending)).or_default() += 1;
    }

    pub(crate) fn errors(&self) -> usize {
        self.failures.values().sum()
    }

    pub(crate) fn print(&mut self, url: &str, options: &Options) {
        let secs = self.elapsed.as_secs_f64().max(f64::EPSILON);
        let mut rows = vec![
            row("target", url),
            row("scenario", &options.scenario),
            row(
                "runs (concurrency)",
                &match options.rate {
                    Some(rate) => format!(
                        "{} ({}, started {rate}/s)",
                        options.runs, options.concurrency
                    ),
                    None => format!("{} ({})", options.runs, options.concurrency),
                },
            ),
            row(
                "finished / errors",
                &format!("{} / {}", self.finished, self.errors()),
            ),
            row("wall time", &format!("{secs:.3} s")),
        ];
        if options.keep_alive {
            let reused = self.reused.to_string();
            rows.push(row("runs on a kept connection", &reused));
        }
        rows.extend([
            row("runs/s", &format!("{:.1}", self.finished as f64 / secs)),
            row("events", &self.events.to_string()),
            row("events/s", &format!("{:.0}", self.events as f64 / secs)),
        ]);
        rows.extend(percentiles("time to first event", &mut self.first_event));
        if options.concurrency > 1 && self.first_event_after_wave.len() > 0 {
            let label = format!("time to first event, runs {}+", options.concurrency + 1);
            rows.extend(percentiles(&label, &mut self.first_event_after_wave));
        }
        rows.extend(percentiles("event inter-arrival", &mut self.gaps));
        if self.latencies.len() > 0 {
            // Only `ticks` deltas carry their send time.
            let label = match options.skip_ticks {
                0 => "tick latency (sent → read)".to_owned(),
                n => format!("tick latency (sent → read), ticks {n}+"),
            };
            rows.extend(percentiles(&label, &mut self.latencies));
        }
        if let Some((before, after)) = self.server {
            let cpu = after.cpu.saturating_sub(before.cpu);
            rows.push(row(
                "server CPU time",
                &format!("{:.3} s", cpu.as_secs_f64()),
            ));
            if self.events > 0 {
                let per_event = cpu.as_secs_f64() * 1e6 / self.events as f64;
                rows.push(row("server CPU per event", &format!("{per_event:.2} µs")));
            }
            rows.push(row("server RSS before", &kib(before.rss_kib)));
            rows.push(row("server RSS after", &kib(after.rss_kib)));
            if let Some(through) = timeline(&self.rss_timeline) {
                rows.push(row("server RSS at 10/50/90 % of the run", &through));
            }
            rows.push(row("server peak RSS", &kib(after.peak_rss_kib)));
        }
        for (kind, count) in &self.failures {
            rows.push(row(&format!("error: {kind}"), &count.to_string()));
        }
        print_table(&rows);
    }
}

impl IdleReport {
    pub(crate) fn fail(&mut self, ending: &Ending) {
        self.errors += 1;
        *self.failures.entry(describe(ending)).or_default() += 1;
    }

    pub(crate) fn print(&mut self, url: &str, options: &Options) {
        let mut rows = vec![
            row("target", url),
            row("scenario", &options.scenario),
            row(
                "streams open / errors",
                &format!("{} / {}", self.open, self.errors),
            ),
            row(
                "time to open all",
                &format!("{:.3} s", self.open_time.as_secs_f64()),
            ),
            row("held for", &format!("{} s", options.hold_secs)),
            row(
                "streams that ended while held",
                &self.ended_early.to_string(),
            ),
        ];
        rows.extend(percentiles("time to first event", &mut self.first_event));
        if let Some((before, held)) = self.server {
            rows.push(row("server RSS before", &kib(before.rss_kib)));
            rows.push(row("server RSS holding", &kib(held.rss_kib)));
            rows.push(row("server peak RSS", &kib(held.peak_rss_kib)));
            if self.open > 0 {
                let grown = held.rss_kib.saturating_sub(before.rss_kib) as f64;
                rows.push(row(
                    "server RSS per stream",
                    &format!("{:.1} KiB", grown / self.open as f64),
                ));
            }
        }
        for (kind, count) in &self.failures {
            rows.push(row(&format!("error: {kind}"), &count.to_string()));
        }
        print_table(&rows);
    }
}

fn describe(ending: &Ending) -> String {
    match ending {
        Ending::Finished => "finished".into(),
        Ending::RunError => "RUN_ERROR".into(),
        Ending::Status(code) => format!("HTTP {code}"),
        Ending::Transport(e) => format!("transport ({e})"),
        Ending::Truncated => "stream ended without a terminal event".into(),
    }
}

fn percentiles(name: &str, samples: &mut Samples) -> Vec<(String, String)> {
    let n = samples.len();
    vec![row(
        &format!("{name} p50/p95/p99"),
        &format!(
            "{} / {} / {}  (n={n})",
            show(samples.percentile(50.0)),
            show(samples.percentile(95.0)),
            show(samples.percentile(99.0)),
        ),
    )]
}

/// RSS at 10, 50 and 90 % of the run's samples; `None` for fewer than 10.
fn timeline(samples: &[u64]) -> Option<String> {
    (samples.len() >= 10).then(|| {
        [10, 50, 90]
            .map(|p| kib(samples[samples.len() * p / 100]))
            .join(" / ")
    })
}

fn kib(value: u64) -> String {
    format!("{:.1} MiB", value as f64 / 1024.0)
}

fn row(name: &str, value: &str) -> (String, String) {
    (name.to_owned(), value.to_owned())
}

fn print_table(rows: &[(String, String)]) {
    let width = rows
        .iter()
        .map(|(n, _)| n.chars().count())
        .max()
        .unwrap_or(0);
    let line = format!("+-{}-+-{}", "-".repeat(width), "-".repeat(40));
    println!("{line}");
    for (name, value) in rows {
        println!("| {name:<width$} | {value}");
    }
    println!("{line}");
}
