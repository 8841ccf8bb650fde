//! `iac-agui-load`: drives an AG-UI endpoint (iac-agui, the Python
//! `iac-code agui`, or any other implementation) with concurrent runs of a
//! scripted-runtime scenario and prints a table of what it measured.
//!
//! ```text
//! iac-agui-load [run|idle] (--url URL | --spawn) [options]
//! ```
//! See `--help` for the options. Server-side figures (peak RSS, CPU time
//! per relayed event) come from `/proc/<pid>` and need `--pid` or
//! `--spawn`, so they do not depend on this client's own speed. The bearer
//! token, if the endpoint needs one, comes from `IAC_AGUI_LOAD_TOKEN`.

mod client;
mod options;
mod proc;
mod report;
mod scan;
mod spawn;
mod stats;

use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use client::{Ending, Protocol, Target};
use options::{Mode, Options};
use report::{IdleReport, RunReport};

// The client shares the machine with the server it measures: with
// glibc's malloc it ran a third slower (BENCHMARKS.md), and the server
// lacked the CPU it took. The server uses the same allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let options = match Options::parse(std::env::args().skip(1)) {
        Ok(Some(options)) => options,
        Ok(None) => {
            println!("{}", options::USAGE);
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("iac-agui-load: {message}\n\n{}", options::USAGE);
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(options.threads)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("iac-agui-load: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(options)) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(message) => {
            eprintln!("iac-agui-load: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Runs the chosen mode; `Ok(false)` when any run failed.
async fn run(options: Options) -> Result<bool, String> {
    let spawned = if options.spawn {
        Some(
            spawn::start(&spawn::SpawnOptions {
                server_bin: options
                    .server_bin
                    .clone()
                    .unwrap_or_else(spawn::default_server_bin),
                heartbeat_secs: options.heartbeat_secs,
                slow_delay: Duration::from_secs(3600),
                runtime_only: options.protocol == Protocol::A2a,
                keep_state: options.keep_state,
            })
            .await?,
        )
    } else {
        None
    };
    let (url, pid, cwd) = match &spawned {
        Some(s) if options.protocol == Protocol::A2a => (
            s.runtime_url.clone(),
            None,
            s.workspace.display().to_string(),
        ),
        Some(s) => (
            s.server_url.clone(),
            Some(s.server_pid),
            s.workspace.display().to_string(),
        ),
        None => (
            options.url.clone().ok_or("--url or --spawn is required")?,
            options.pid,
            options.cwd.clone(),
        ),
    };
    let (authority, path) = Target::parse_url(&url)?;
    let target = Arc::new(Target {
        authority,
        path,
        token: std::env::var("IAC_AGUI_LOAD_TOKEN")
            .ok()
            .filter(|t| !t.is_empty()),
        protocol: options.protocol,
        cwd,
        scenario: options.scenario.clone(),
        skip_ticks: options.skip_ticks,
        nonce: nonce(),
    });
    let ok = match options.mode {
        Mode::Run => {
            let mut report = drive_runs(&target, &options, pid).await;
            report.print(&url, &options);
            report.errors() == 0
        }
        Mode::Idle => {
            let mut report = hold_idle(&target, &options, pid).await;
            report.print(&url, &options);
            report.errors == 0 && report.ended_early == 0
        }
    };
    if let Some(spawned) = spawned {
        spawned.stop().await;
    }
    Ok(ok)
}

/// `runs` runs, at most `concurrency` at once.
async fn drive_runs(target: &Arc<Target>, options: &Options, pid: Option<u32>) -> RunReport {
    let before = pid.and_then(proc::sample);
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    // The server's RSS through the run (flat, or growing with events?).
    let (stop_sampling, mut stopped) = tokio::sync::watch::channel(false);
    let sampler = tokio::spawn(async move {
        let mut samples = Vec::new();
        while let Some(sample) = pid.and_then(proc::sample) {
            samples.push(sample.rss_kib);
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(50)) => {}
                _ = stopped.changed() => break,
            }
        }
        samples
    });
    let workers: Vec<_> = (0..options.concurrency.min(options.runs))
        .map(|worker| {
            let target = Arc::clone(target);
            let next = Arc::clone(&next);
            let (runs, rate, turns) = (options.runs, options.rate, options.turns);
            let keep_alive = options.keep_alive;
            tokio::spawn(async move {
                let mut results = Vec::new();
                let mut kept = None;
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= runs {
                        return results;
                    }
                    // Open loop: the run's moment, and how late it starts
                    // after it (all `concurrency` runs were busy).
                    let late = match rate {
                        Some(rate) => {
                            let slot = started + Duration::from_secs_f64(i as f64 / rate);
                            tokio::time::sleep_until(slot.into()).await;
                            slot.elapsed()
                        }
                        None => Duration::ZERO,
                    };
                    // With --turns each worker holds one thread, so its runs
                    // follow one another on it; otherwise every run opens a
                    // thread of its own.
                    let thread = if turns { worker } else { i };
                    let connection = keep_alive.then_some(&mut kept);
                    let mut result = target.run(i, thread, connection).await;
                    result.first_event = result.first_event.map(|first| first + late);
                    results.push((i, result));
                }
            })
        })
        .collect();
    let mut report = RunReport::default();
    for worker in workers {
        match worker.await {
            Ok(results) => results
                .into_iter()
                .for_each(|(i, r)| report.add(r, i >= options.concurrency)),
            Err(e) => report.add_failure(Ending::Transport(format!("worker: {e}"))),
        }
    }
    report.elapsed = started.elapsed();
    let _ = stop_sampling.send(true);
    report.rss_timeline = sampler.await.unwrap_or_default();
    let after = pid.and_then(proc::sample);
    report.server = before.zip(after);
    report
}

/// Opens `streams` streams, waits for each to start, holds them, samples
/// the server's memory, then closes them all.
async fn hold_idle(target: &Arc<Target>, options: &Options, pid: Option<u32>) -> IdleReport {
    let baseline = pid.and_then(proc::sample);
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let gate = Arc::new(tokio::sync::Semaphore::new(options.concurrency.max(1)));
    let started = Instant::now();
    let openers: Vec<_> = (0..options.streams)
        .map(|i| {
            let target = Arc::clone(target);
            let gate = Arc::clone(&gate);
            let stop = stop_rx.clone();
            tokio::spawn(async move {
                let permit = gate.acquire_owned().await;
                let mut opened = target.open(i, i, None).await?;
                let first = opened.first_event().await?;
                drop(permit);
                let holder = tokio::spawn(opened.drain(stop));
                Ok::<_, Ending>((first, holder))
            })
        })
        .collect();
    let mut report = IdleReport::default();
    let mut holders = Vec::new();
    for opener in openers {
        match opener.await {
            Ok(Ok((first, holder))) => {
                report.first_event.push(first);
                holders.push(holder);
            }
            Ok(Err(ending)) => report.fail(&ending),
            Err(e) => report.fail(&Ending::Transport(e.to_string())),
        }
    }
    report.open_time = started.elapsed();
    report.open = holders.len();
    tokio::time::sleep(Duration::from_secs_f64(options.hold_secs)).await;
    let held = pid.and_then(proc::sample);
    report.server = baseline.zip(held);
    let _ = stop_tx.send(true);
    for holder in holders {
        if !holder.await.unwrap_or(false) {
            report.ended_early += 1;
        }
    }
    report
}

/// Distinguishes this invocation's thread ids from those of earlier runs
/// against the same state directory.
fn nonce() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!("{:x}{:x}", nanos, std::process::id())
}
