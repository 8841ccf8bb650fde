//! Command-line options (hand-parsed: a handful of flags).

use std::path::PathBuf;

use crate::client::Protocol;

/// What to measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Concurrent runs to completion: throughput and latency.
    Run,
    /// Many open, silent streams: memory per stream.
    Idle,
}

/// Everything the command line chose.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    pub(crate) mode: Mode,
    pub(crate) url: Option<String>,
    pub(crate) protocol: Protocol,
    pub(crate) spawn: bool,
    pub(crate) server_bin: Option<PathBuf>,
    pub(crate) pid: Option<u32>,
    pub(crate) cwd: String,
    pub(crate) scenario: String,
    pub(crate) runs: usize,
    pub(crate) concurrency: usize,
    /// Runs started per second (open loop), instead of as fast as
    /// `concurrency` allows.
    pub(crate) rate: Option<f64>,
    pub(crate) streams: usize,
    pub(crate) hold_secs: f64,
    pub(crate) heartbeat_secs: f64,
    pub(crate) threads: usize,
    pub(crate) skip_ticks: u64,
    pub(crate) keep_state: bool,
    /// Each client keeps one thread and sends its runs as turns on it.
    pub(crate) turns: bool,
    /// Each client sends its next run on its last run's connection.
    pub(crate) keep_alive: bool,
}

pub(crate) const USAGE: &str = "\
usage: iac-agui-load [run|idle] (--url URL | --spawn) [options]

  run   N runs of a scenario, C at a time (default)
  idle  K streams of a silent scenario held open; memory per stream

target:
  --url URL            AG-UI endpoint (http://host:port/), e.g. iac-agui or
                       `iac-code agui`; token from IAC_AGUI_LOAD_TOKEN
  --pid PID            the server's pid, for peak RSS and CPU per event
  --cwd DIR            forwardedProps.iacCode.cwd [default: current dir]
  --spawn              start the scripted runtime (in this process) and
                       iac-agui (child) pointed at it; implies --pid
  --server-bin PATH    iac-agui binary for --spawn [default: next to this one]
  --a2a                speak A2A straight to the runtime (the baseline);
                       with --spawn, only the runtime is started
  --keep-state         leave --spawn's state directory in place (under
                       $TMPDIR); by default it is deleted at the end
load:
  --scenario S         scripted-runtime scenario [run: deltas:1000,
                       idle: slow:3600000]
  --runs N             runs in total [default: 100]
  --concurrency C      runs (or stream openings) at once [default: 1]
  --rate R             start run i at i/R s (open loop, still at most C
                       at once); time to first event counts from that
                       moment, so a run that starts late counts its wait
                       [default: each run as soon as one of C ends]
  --streams K          idle streams [default: 1000]
  --hold SECS          how long idle streams stay open [default: 3]
  --heartbeat SECS     iac-agui heartbeat for --spawn [default: 1]
  --turns              each of the C clients keeps one thread and sends its
                       runs as successive turns on it, as a conversation
                       does [default: a new thread per run]
  --keep-alive         each client sends its next run on the connection its
                       last run ended on (HTTP/1.1 keep-alive), as a
                       browser's fetch does [default: a new connection
                       per run]
  --threads T          client worker threads [default: 1]
  --skip-ticks N       leave each run's first N ticks out of the tick
                       latency (they may wait behind the runs' admissions)
                       [default: 0]";

impl Options {
    /// Parses the arguments; `Ok(None)` for `--help`.
    pub(crate) fn parse(args: impl IntoIterator<Item = String>) -> Result<Option<Options>, String> {
        let mut o = Options {
            mode: Mode::Run,
            url: None,
            protocol: Protocol::Agui,
            spawn: false,
            server_bin: None,
            pid: None,
            cwd: std::env::current_dir()
                .map(|d| d.display().to_string())
                .unwrap_or_else(|_| ".".into()),
            scenario: String::new(),
            runs: 100,
            concurrency: 1,
            rate: None,
            streams: 1000,
            hold_secs: 3.0,
            heartbeat_secs: 1.0,
            threads: 1,
            skip_ticks: 0,
            keep_state: false,
            turns: false,
            keep_alive: false,
        };
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value"));
            match arg.as_str() {
                "-h" | "--help" => return Ok(None),
                "run" => o.mode = Mode::Run,
                "idle" => o.mode = Mode::Idle,
                "--spawn" => o.spawn = true,
                "--a2a" => o.protocol = Protocol::A2a,
                "--keep-state" => o.keep_state = true,
                "--turns" => o.turns = true,
                "--keep-alive" => o.keep_alive = true,
                "--url" => o.url = Some(value()?),
                "--server-bin" => o.server_bin = Some(PathBuf::from(value()?)),
                "--cwd" => o.cwd = value()?,
                "--scenario" => o.scenario = value()?,
                "--pid" => o.pid = Some(number(&arg, &value()?)?),
                "--runs" => o.runs = number(&arg, &value()?)?,
                "--concurrency" => o.concurrency = number(&arg, &value()?)?,
                "--rate" => o.rate = Some(number(&arg, &value()?)?),
                "--streams" => o.streams = number(&arg, &value()?)?,
                "--threads" => o.threads = number(&arg, &value()?)?,
                "--skip-ticks" => o.skip_ticks = number(&arg, &value()?)?,
                "--hold" => o.hold_secs = number(&arg, &value()?)?,
                "--heartbeat" => o.heartbeat_secs = number(&arg, &value()?)?,
                _ => return Err(format!("unknown argument {arg}")),
            }
        }
        if o.scenario.is_empty() {
            o.scenario = match o.mode {
                Mode::Run => "deltas:1000".into(),
                Mode::Idle => "slow:3600000".into(),
            };
        }
        if o.concurrency == 0 || o.threads == 0 {
            return Err("--concurrency and --threads must be at least 1".into());
        }
        if o.rate
            .is_some_and(|rate: f64| !(rate.is_finite() && rate > 0.0))
        {
            return Err("--rate must be a positive number of runs per second".into());
        }
        if !o.spawn && o.url.is_none() {
            return Err("--url or --spawn is required".into());
        }
        Ok(Some(o))
    }
}

fn number<T: std::str::FromStr>(flag: &str, value: &str) -> Result<T, String> {
    value
        .parse()
        .map_err(|_| format!("{flag}: not a number: {value}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Option<Options>, String> {
        Options::parse(args.iter().map(|s| s.to_string()))
    }

    #[test]
    fn defaults_depend_on_the_mode() {
        let run = parse(&["--spawn"]).unwrap().unwrap();
        assert_eq!(
            (run.mode, run.scenario.as_str()),
            (Mode::Run, "deltas:1000")
        );
        let idle = parse(&["idle", "--url", "http://127.0.0.1:8000/"])
            .unwrap()
            .unwrap();
        assert_eq!(
            (idle.mode, idle.scenario.as_str()),
            (Mode::Idle, "slow:3600000")
        );
    }

    #[test]
    fn flags_and_refusals() {
        let o = parse(&[
            "--spawn",
            "--a2a",
            "--runs",
            "7",
            "--concurrency",
            "3",
            "--hold",
            "0.5",
            "--skip-ticks",
            "100",
            "--keep-state",
            "--turns",
            "--keep-alive",
            "--rate",
            "1500",
        ])
        .unwrap()
        .unwrap();
        assert_eq!(o.rate, Some(1500.0));
        assert_eq!(parse(&["--spawn"]).unwrap().unwrap().rate, None);
        for bad in ["0", "-5", "inf"] {
            assert!(parse(&["--spawn", "--rate", bad])
                .unwrap_err()
                .contains("--rate"));
        }
        assert_eq!((o.runs, o.concurrency, o.protocol), (7, 3, Protocol::A2a));
        assert_eq!(o.skip_ticks, 100);
        assert!(o.keep_state);
        assert!(!parse(&["--spawn"]).unwrap().unwrap().keep_state);
        assert!(o.turns);
        assert!(!parse(&["--spawn"]).unwrap().unwrap().turns);
        assert!(o.keep_alive);
        assert!(!parse(&["--spawn"]).unwrap().unwrap().keep_alive);
        assert!((o.hold_secs - 0.5).abs() < f64::EPSILON);
        assert!(parse(&["--help"]).unwrap().is_none());
        assert!(parse(&[]).unwrap_err().contains("--url"));
        assert!(parse(&["--spawn", "--runs", "x"])
            .unwrap_err()
            .contains("not a number"));
        assert!(parse(&["--spawn", "--runs"])
            .unwrap_err()
            .contains("needs a value"));
        assert!(parse(&["--spawn", "--concurrency", "0"]).is_err());
        assert!(parse(&["--bogus"]).unwrap_err().contains("unknown"));
    }
}
