//! Command line, environment and `--config` YAML (SPEC §14, A2A-WIRE §7.2).
//!
//! Precedence: a command-line flag, then its environment variable, then the
//! YAML file, then the default. YAML keys are the long flag names with dashes
//! or underscores. Tokens come only from the environment or the file, never
//! from flags (a flag would show in the process list).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};
use serde_yaml::Value as Yaml;

use crate::secret::Secret;

/// `iac-agui`: the AG-UI (HTTP + SSE) front end of the iac-code agent.
#[derive(Debug, Parser)]
#[command(name = "iac-agui", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve AG-UI on HTTP: `POST /` (a RunAgentInput in, an SSE stream of
    /// events out), `GET /health`, and the execution cancel extension.
    ///
    /// Secrets are read from the environment (or the config file) only:
    /// IAC_CODE_AGUI_AUTH_TOKEN (bearer token callers must send) and
    /// IAC_CODE_AGUI_A2A_TOKEN (token of an external --a2a-url runtime).
    /// Allowed workspaces: IAC_CODE_AGUI_ALLOWED_CWDS (path list), else
    /// IACCODE_A2A_ALLOWED_CWDS, else the working and temp directories.
    Serve(ServeArgs),
}

/// Flags of `serve`. Every value may also come from `--config`.
#[derive(Debug, Clone, Default, Args)]
pub struct ServeArgs {
    /// YAML file with the same keys as these flags (dashes or underscores),
    /// plus `auth_token` and `a2a_token`.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Address to listen on [default: 127.0.0.1].
    #[arg(long, env = "IAC_CODE_AGUI_HOST")]
    pub host: Option<String>,
    /// Port to listen on, 1–65535 [default: 8000].
    #[arg(long, env = "IAC_CODE_AGUI_PORT", value_parser = clap::value_parser!(u16).range(1..))]
    pub port: Option<u16>,
    /// An already running A2A runtime (http(s) on 127.0.0.1, localhost or
    /// ::1). Without it, `iac-code a2a` is started and stopped with the server.
    #[arg(long, env = "IAC_CODE_AGUI_A2A_URL", value_name = "URL")]
    pub a2a_url: Option<String>,
    /// Directory of the per-thread state files [default:
    /// $IAC_CODE_CONFIG_DIR/agui, else ~/.iac-code/agui].
    #[arg(long, env = "IAC_CODE_AGUI_STATE_DIR", value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// Exit after this many seconds with no active run and no pending
    /// interrupt (0: never) [default: 0].
    #[arg(long, value_name = "SECONDS")]
    pub idle_shutdown: Option<f64>,
    /// Lifetime of an interrupt that carries no expiry of its own, at least
    /// 1 [default: 540].
    #[arg(long, value_name = "SECONDS")]
    pub interrupt_ttl: Option<u64>,
    /// Seconds of silence before an SSE `: heartbeat` comment [default: 15].
    #[arg(long, value_name = "SECONDS")]
    pub heartbeat: Option<f64>,
    /// Browser origin allowed to call the server (repeatable; `*` for any).
    /// CORS is off when none is given.
    #[arg(long = "cors-origin", value_name = "ORIGIN")]
    pub cors_origins: Vec<String>,
    /// Log at debug level.
    #[arg(short, long)]
    pub debug: bool,
    /// Log format [default: human].
    #[arg(long, value_enum)]
    pub log_format: Option<LogFormat>,
    /// Use the built-in scripted A2A runtime instead of iac-code (a demo
    /// backend: no Python, no LLM key), and serve the web demo at /demo/.
    #[arg(long)]
    pub demo: bool,
    /// Serve the web demo's files from this directory at /demo/ (in any
    /// mode) [default with --demo: the web-demo/ directory of the source
    /// tree this binary was built from].
    #[arg(long, env = "IAC_CODE_AGUI_DEMO_DIR", value_name = "DIR")]
    pub demo_dir: Option<PathBuf>,
    /// Event loops (one thread each) that run the server's tasks, 1 to 256
    /// [default: one per core].
    #[arg(long, env = "IAC_AGUI_WORKERS", value_name = "N")]
    pub workers: Option<u16>,
}

/// How log lines look.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// One human-readable line per record.
    Human,
    /// One JSON object per record.
    Json,
}

/// Everything `serve` needs, resolved.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Listen address.
    pub host: String,
    /// Listen port.
    pub port: u16,
    /// External runtime (already checked to be loopback), if any.
    pub a2a_url: Option<String>,
    /// Its token.
    pub a2a_token: Option<Secret>,
    /// Token callers must send.
    pub auth_token: Option<Secret>,
    /// State root (the files live in `threads/` below it).
    pub state_dir: PathBuf,
    /// Idle shutdown (`None`: off).
    pub idle_shutdown: Option<Duration>,
    /// Interrupt TTL.
    pub interrupt_ttl: Duration,
    /// SSE heartbeat interval.
    pub heartbeat: Duration,
    /// CORS allow-list.
    pub cors_origins: Vec<String>,
    /// Debug logging.
    pub debug: bool,
    /// Log format.
    pub log_format: LogFormat,
    /// Built-in scripted runtime.
    pub demo: bool,
    /// Directory served at `/demo/` (none: not served).
    pub demo_dir: Option<PathBuf>,
    /// Event loops (threads running the server's tasks).
    pub workers: usize,
}

/// A configuration problem; `Display` is the one-line startup error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

const KEYS: [&str; 18] = [
    "host",
    "port",
    "a2a_url",
    "a2a_token",
    "auth_token",
    "state_dir",
    "idle_shutdown",
    "interrupt_ttl",
    "heartbeat",
    "cors_origin",
    "cors_origins",
    "debug",
    "log_format",
    "log_stdout",
    "demo",
    "demo_dir",
    "config",
    "workers",
];

impl Settings {
    /// Resolves flags (already merged with their env vars by clap), the
    /// config file and the env-only settings.
    ///
    /// # Errors
    /// Unreadable or invalid config file, unknown keys, values out of range,
    /// a non-loopback `a2a_url`.
    pub fn resolve(
        args: &ServeArgs,
        env: impl Fn(&str) -> Option<OsString>,
    ) -> Result<Settings, ConfigError> {
        let file = match &args.config {
            Some(path) => read_yaml(path)?,
            None => FileValues::default(),
        };
        let env_str = |k: &str| {
            env(k)
                .and_then(|v| v.into_string().ok())
                .filter(|v| !v.is_empty())
        };
        let a2a_url = match args.a2a_url.clone().or(file.string("a2a_url")?) {
            Some(url) => Some(
                crate::backend::check_external_url(&url)
                    .map_err(|e| ConfigError(format!("--a2a-url: {e}")))?,
            ),
            None => None,
        };
        let port = match args.port {
            Some(port) => port,
            None => match file.integer("port")? {
                Some(p) if (1..=65535).contains(&p) => p as u16,
                Some(_) => return Err(ConfigError("port must be between 1 and 65535".into())),
                None => 8000,
            },
        };
        let seconds = |flag: Option<f64>, key: &str| -> Result<Option<f64>, ConfigError> {
            match flag {
                Some(v) => Ok(Some(v)),
                None => file.number(key),
            }
        };
        let workers = match args.workers.map(i64::from) {
            Some(n) => Some(n),
            None => file.integer("workers")?,
        };
        let workers = match workers {
            Some(n @ 1..=256) => n as usize,
            Some(_) => return Err(ConfigError("workers must be between 1 and 256".into())),
            None => std::thread::available_parallelism().map_or(1, |n| n.get()),
        };
        let idle = seconds(args.idle_shutdown, "idle_shutdown")?.unwrap_or(0.0);
        let heartbeat = seconds(args.heartbeat, "heartbeat")?.unwrap_or(15.0);
        let ttl = seconds(args.interrupt_ttl.map(|v| v as f64), "interrupt_ttl")?.unwrap_or(540.0);
        if !idle.is_finite() || idle < 0.0 {
            return Err(ConfigError(
                "idle-shutdown must be a non-negative number of seconds".into(),
            ));
        }
        if !heartbeat.is_finite() || heartbeat <= 0.0 {
            return Err(ConfigError(
                "heartbeat must be a positive number of seconds".into(),
            ));
        }
        if !ttl.is_finite() || ttl < 1.0 {
            return Err(ConfigError(
                "interrupt-ttl must be at least 1 second".into(),
            ));
        }
        let mut cors_origins = args.cors_origins.clone();
        if cors_origins.is_empty() {
            cors_origins = file.strings("cors_origins")?;
            cors_origins.extend(file.strings("cors_origin")?);
        }
        let log_format = match args.log_format {
            Some(format) => format,
            None => match file.string("log_format")?.as_deref() {
                None | Some("human") => LogFormat::Human,
                Some("json") => LogFormat::Json,
                Some(_) => return Err(ConfigError("log_format must be human or json".into())),
            },
        };
        let state_dir = match args
            .state_dir
            .clone()
            .or(file.string("state_dir")?.map(PathBuf::from))
        {
            Some(dir) => dir,
            None => default_config_dir(&env).join("agui"),
        };
        let demo = args.demo || file.boolean("demo")?.unwrap_or(false);
        let demo_dir = match args
            .demo_dir
            .clone()
            .or(file.string("demo_dir")?.map(PathBuf::from))
        {
            Some(dir) => Some(dir),
            None => demo.then(crate::demo::default_dir),
        };
        Ok(Settings {
            host: args
                .host
                .clone()
                .or(file.string("host")?)
                .unwrap_or_else(|| "127.0.0.1".into()),
            port,
            a2a_url,
            a2a_token: env_str("IAC_CODE_AGUI_A2A_TOKEN")
                .or(file.string("a2a_token")?)
                .map(Secret::new),
            auth_token: env_str("IAC_CODE_AGUI_AUTH_TOKEN")
                .or(file.string("auth_token")?)
                .map(Secret::new),
            state_dir,
            idle_shutdown: (idle > 0.0).then(|| Duration::from_secs_f64(idle)),
            interrupt_ttl: Duration::from_secs_f64(ttl),
            heartbeat: Duration::from_secs_f64(heartbeat),
            cors_origins,
            debug: args.debug || file.boolean("debug")?.unwrap_or(false),
            log_format,
            demo,
            demo_dir,
            workers,
        })
    }
}

/// `IAC_CODE_CONFIG_DIR`, else `~/.iac-code`.
fn default_config_dir(env: &impl Fn(&str) -> Option<OsString>) -> PathBuf {
    if let Some(dir) = env("IAC_CODE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    let home = env("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."));
    home.join(".iac-code")
}

/// The config file's values, keys normalised to underscores.
#[derive(Debug, Default)]
struct FileValues(serde_yaml::Mapping);

fn read_yaml(path: &Path) -> Result<FileValues, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        ConfigError(format!(
            "cannot read config file {}: {}",
            path.display(),
            e.kind()
        ))
    })?;
    let value: Yaml = serde_yaml::from_str(&text)
        .map_err(|_| ConfigError(format!("config file {} is not valid YAML", path.display())))?;
    let mapping = match value {
        Yaml::Mapping(mapping) => mapping,
        Yaml::Null => serde_yaml::Mapping::new(),
        _ => {
            return Err(ConfigError(
                "the config file must be a mapping of keys to values".into(),
            ))
        }
    };
    let mut normalised = serde_yaml::Mapping::new();
    for (key, value) in mapping {
        let Some(key) = key.as_str().map(|k| k.replace('-', "_")) else {
            return Err(ConfigError("config keys must be strings".into()));
        };
        if !KEYS.contains(&key.as_str()) {
            return Err(ConfigError(format!("unknown config key `{key}`")));
        }
        normalised.insert(Yaml::from(key), value);
    }
    Ok(FileValues(normalised))
}

impl FileValues {
    fn get(&self, key: &str) -> Option<&Yaml> {
        self.0.get(key).filter(|v| !v.is_null())
    }

    fn bad(key: &str, what: &str) -> ConfigError {
        ConfigError(format!("config key `{key}` must be {what}"))
    }

    fn string(&self, key: &str) -> Result<Option<String>, ConfigError> {
        match self.get(key) {
            None => Ok(None),
            Some(Yaml::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(Self::bad(key, "a string")),
        }
    }

    fn integer(&self, key: &str) -> Result<Option<i64>, ConfigError> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => v
                .as_i64()
                .map(Some)
                .ok_or_else(|| Self::bad(key, "an integer")),
        }
    }

    fn number(&self, key: &str) -> Result<Option<f64>, ConfigError> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => v
                .as_f64()
                .map(Some)
                .ok_or_else(|| Self::bad(key, "a number")),
        }
    }

    fn boolean(&self, key: &str) -> Result<Option<bool>, ConfigError> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => v
                .as_bool()
                .map(Some)
                .ok_or_else(|| Self::bad(key, "true or false")),
        }
    }

    fn strings(&self, key: &str) -> Result<Vec<String>, ConfigError> {
        match self.get(key) {
            None => Ok(Vec::new()),
            Some(Yaml::String(s)) => Ok(vec![s.clone()]),
            Some(Yaml::Sequence(items)) => items
                .iter()
                .map(|i| {
                    i.as_str()
                        .map(str::to_owned)
                        .ok_or_else(|| Self::bad(key, "a list of strings"))
                })
                .collect(),
            Some(_) => Err(Self::bad(key, "a string or a list of strings")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory as _;

    fn no_env(_: &str) -> Option<OsString> {
        None
    }

    fn parse(args: &[&str]) -> ServeArgs {
        let cli =
            Cli::try_parse_from(std::iter::once("iac-agui").chain(args.iter().copied())).unwrap();
        let Command::Serve(args) = cli.command;
        args
    }

    #[test]
    fn help_explains_every_flag() {
        let mut cmd = Cli::command();
        let serve = cmd.find_subcommand_mut("serve").unwrap();
        let help = serve.render_long_help().to_string();
        for flag in [
            "--config",
            "--host",
            "--port",
            "--a2a-url",
            "--state-dir",
            "--idle-shutdown",
            "--interrupt-ttl",
            "--heartbeat",
            "--cors-origin",
            "--debug",
            "--log-format",
            "--demo",
            "--demo-dir",
            "--workers",
            "IAC_CODE_AGUI_AUTH_TOKEN",
        ] {
            assert!(help.contains(flag), "{flag} missing from --help");
        }
        Cli::command().debug_assert();
    }

    #[test]
    fn defaults() {
        let env = |k: &str| (k == "HOME").then(|| OsString::from("/home/u"));
        let s = Settings::resolve(&parse(&["serve"]), env).unwrap();
        assert_eq!((s.host.as_str(), s.port), ("127.0.0.1", 8000));
        assert_eq!(s.state_dir, PathBuf::from("/home/u/.iac-code/agui"));
        assert_eq!(s.idle_shutdown, None);
        assert_eq!(s.interrupt_ttl, Duration::from_secs(540));
        assert_eq!(s.heartbeat, Duration::from_secs(15));
        assert!(s.cors_origins.is_empty() && s.auth_token.is_none() && s.a2a_url.is_none());
        let env = |k: &str| (k == "IAC_CODE_CONFIG_DIR").then(|| OsString::from("/cfg"));
        let s = Settings::resolve(&parse(&["serve"]), env).unwrap();
        assert_eq!(s.state_dir, PathBuf::from("/cfg/agui"));
    }

    #[test]
    fn workers_default_to_the_cores_and_bounds_are_checked() {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let s = Settings::resolve(&parse(&["serve"]), no_env).unwrap();
        assert_eq!(s.workers, cores);
        let s = Settings::resolve(&parse(&["serve", "--workers", "3"]), no_env).unwrap();
        assert_eq!(s.workers, 3);
        for bad in ["0", "257"] {
            let err = Settings::resolve(&parse(&["serve", "--workers", bad]), no_env).unwrap_err();
            assert!(err.0.contains("workers must be between 1 and 256"), "{bad}");
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.yaml");
        std::fs::write(&path, "workers: 5\n").unwrap();
        let config = path.to_str().unwrap();
        let s = Settings::resolve(&parse(&["serve", "--config", config]), no_env).unwrap();
        assert_eq!(s.workers, 5);
    }

    #[test]
    fn port_range_and_loopback_url() {
        assert!(Cli::try_parse_from(["iac-agui", "serve", "--port", "0"]).is_err());
        assert!(Cli::try_parse_from(["iac-agui", "serve", "--port", "65536"]).is_err());
        let err = Settings::resolve(
            &parse(&["serve", "--a2a-url", "http://10.1.1.1:4/"]),
            no_env,
        )
        .unwrap_err();
        assert!(err.0.contains("loopback"));
        let s = Settings::resolve(
            &parse(&["serve", "--a2a-url", "http://localhost:41242"]),
            no_env,
        )
        .unwrap();
        assert_eq!(s.a2a_url.as_deref(), Some("http://localhost:41242/"));
    }

    #[test]
    fn yaml_with_dashes_or_underscores_below_flags_and_env() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.yaml");
        std::fs::write(
            &path,
            "host: 0.0.0.0\nport: 9001\nstate-dir: /s\nidle_shutdown: 2.5\ninterrupt-ttl: 60\n\
             auth_token: from-file\na2a-token: file-a2a\ncors-origin: [\"https://a.example\"]\ndebug: true\n\
             log_format: json\nlog_stdout: false\n",
        )
        .unwrap();
        let config = path.to_str().unwrap();
        let env = |k: &str| (k == "IAC_CODE_AGUI_A2A_TOKEN").then(|| OsString::from("env-a2a"));
        let s = Settings::resolve(
            &parse(&["serve", "--config", config, "--port", "7000"]),
            env,
        )
        .unwrap();
        assert_eq!(
            (s.host.as_str(), s.port),
            ("0.0.0.0", 7000),
            "the flag wins over the file"
        );
        assert_eq!(s.state_dir, PathBuf::from("/s"));
        assert_eq!(s.idle_shutdown, Some(Duration::from_millis(2500)));
        assert_eq!(s.interrupt_ttl, Duration::from_secs(60));
        assert_eq!(s.auth_token.as_ref().map(Secret::expose), Some("from-file"));
        assert_eq!(
            s.a2a_token.as_ref().map(Secret::expose),
            Some("env-a2a"),
            "env wins over the file"
        );
        assert_eq!(s.cors_origins, ["https://a.example"]);
        assert!(s.debug);
        assert_eq!(s.log_format, LogFormat::Json);
    }

    #[test]
    fn bad_files_are_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        for (text, needle) in [
            ("nope: 1\n", "unknown config key `nope`"),
            ("port: \"80\"\n", "`port` must be an integer"),
            ("port: 70000\n", "between 1 and 65535"),
            ("- a\n", "mapping"),
            ("interrupt_ttl: 0\n", "at least 1 second"),
            (": : :\n", "YAML"),
        ] {
            let path = dir.path().join("bad.yaml");
            std::fs::write(&path, text).unwrap();
            let args = parse(&["serve", "--config", path.to_str().unwrap()]);
            let err = Settings::resolve(&args, no_env).unwrap_err();
            assert!(err.0.contains(needle), "{text:?} → {err}");
        }
        let args = parse(&["serve", "--config", "/definitely/missing.yaml"]);
        assert!(Settings::resolve(&args, no_env)
            .unwrap_err()
            .0
            .contains("cannot read"));
    }

    #[test]
    fn demo_dir_with_demo_or_alone() {
        let s = Settings::resolve(&parse(&["serve"]), no_env).unwrap();
        assert_eq!(s.demo_dir, None, "not served without --demo or --demo-dir");
        let s = Settings::resolve(&parse(&["serve", "--demo"]), no_env).unwrap();
        assert_eq!(s.demo_dir, Some(crate::demo::default_dir()));
        let s = Settings::resolve(&parse(&["serve", "--demo-dir", "/d"]), no_env).unwrap();
        assert_eq!((s.demo, s.demo_dir), (false, Some(PathBuf::from("/d"))));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.yaml");
        std::fs::write(&path, "demo: true\ndemo-dir: /from-file\n").unwrap();
        let args = parse(&["serve", "--config", path.to_str().unwrap()]);
        let s = Settings::resolve(&args, no_env).unwrap();
        assert_eq!(
            (s.demo, s.demo_dir),
            (true, Some(PathBuf::from("/from-file")))
        );
    }

    #[test]
    fn tokens_never_printed() {
        let env =
            |k: &str| (k == "IAC_CODE_AGUI_AUTH_TOKEN").then(|| OsString::from("tok-abc-123"));
        let s = Settings::resolve(&parse(&["serve"]), env).unwrap();
        assert!(!format!("{s:?}").contains("tok-abc-123"));
    }
}
