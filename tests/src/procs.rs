//! The real binaries, started on ephemeral loopback ports.
//!
//! Binaries are looked up next to the test executable (`target/<profile>/`),
//! where `cargo test --workspace` builds them (both packages have integration
//! tests, so cargo builds their binaries). `IAC_AGUI_BIN` and
//! `IAC_AGUI_SCRIPTED_RUNTIME_BIN` override the paths. Every process is
//! killed when its handle drops, so a failing test leaves nothing behind.

use std::io::{BufRead, BufReader, Read};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crate::http::Request;

/// How long a binary may take to come up.
const STARTUP: Duration = Duration::from_secs(30);

/// A running scripted A2A runtime.
#[derive(Debug)]
pub struct ScriptedRuntime {
    child: Child,
    /// Its base URL (`http://127.0.0.1:<port>/`).
    pub url: String,
    log: Arc<Mutex<String>>,
}

/// Options of the scripted runtime.
#[derive(Debug, Clone, Default)]
pub struct RuntimeOptions {
    /// Bearer token it requires (`IACCODE_A2A_HTTP_TOKEN`).
    pub token: Option<String>,
    /// Extra flags, e.g. `["--slow-delay-ms", "200"]`.
    pub args: Vec<String>,
}

impl ScriptedRuntime {
    /// Starts `iac-agui-scripted-runtime --port 0` and waits for its URL.
    ///
    /// # Panics
    /// When the binary is missing or does not print its URL in time.
    pub fn start(options: &RuntimeOptions) -> ScriptedRuntime {
        let mut command = Command::new(binary(
            "iac-agui-scripted-runtime",
            "IAC_AGUI_SCRIPTED_RUNTIME_BIN",
        ));
        command
            .args(["--host", "127.0.0.1", "--port", "0"])
            .args(&options.args)
            .env_remove("IACCODE_A2A_HTTP_TOKEN")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(token) = &options.token {
            command.env("IACCODE_A2A_HTTP_TOKEN", token);
        }
        let mut child = command.spawn().expect("start the scripted runtime");
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut first = String::new();
        stdout.read_line(&mut first).expect("runtime stdout");
        let url = first
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| {
                let _ = child.kill();
                panic!("the scripted runtime printed no URL: {first:?}")
            })
            .to_owned();
        let log = Arc::new(Mutex::new(String::new()));
        drain(stdout, Arc::clone(&log));
        drain(
            BufReader::new(child.stderr.take().expect("stderr")),
            Arc::clone(&log),
        );
        ScriptedRuntime { child, url, log }
    }

    /// What it logged so far.
    pub fn log(&self) -> String {
        self.log.lock().map(|l| l.clone()).unwrap_or_default()
    }
}

impl Drop for ScriptedRuntime {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Options of `iac-agui serve`.
#[derive(Debug, Clone, Default)]
pub struct ServerOptions {
    /// `--a2a-url`; `None` runs `--demo`.
    pub a2a_url: Option<String>,
    /// Token of the external runtime (`IAC_CODE_AGUI_A2A_TOKEN`).
    pub a2a_token: Option<String>,
    /// Token callers must send (`IAC_CODE_AGUI_AUTH_TOKEN`).
    pub auth_token: Option<String>,
    /// `--heartbeat` seconds.
    pub heartbeat: Option<f64>,
    /// `--interrupt-ttl` seconds.
    pub interrupt_ttl: Option<u64>,
    /// Extra flags.
    pub args: Vec<String>,
}

/// A running `iac-agui serve` with its own state and workspace directories.
#[derive(Debug)]
pub struct Server {
    child: Option<Child>,
    /// Where it listens.
    pub addr: SocketAddr,
    /// Its scratch root: `state/` and `ws/` below it.
    pub root: TempDir,
    options: ServerOptions,
    log: Arc<Mutex<String>>,
}

impl Server {
    /// Starts the server and waits until `GET /health` answers.
    ///
    /// # Panics
    /// When it does not come up in time (the message carries its log).
    pub fn start(options: ServerOptions) -> Server {
        let root = TempDir::new("iac-agui-e2e");
        std::fs::create_dir_all(root.path().join("ws")).expect("workspace dir");
        let mut server = Server {
            child: None,
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            root,
            options,
            log: Arc::new(Mutex::new(String::new())),
        };
        server.spawn();
        server
    }

    /// The workspace directory runs may use as `cwd`.
    pub fn workspace(&self) -> PathBuf {
        self.root.path().join("ws")
    }

    /// The state directory.
    pub fn state_dir(&self) -> PathBuf {
        self.root.path().join("state")
    }

    /// Stops the process (SIGKILL: nothing is flushed on purpose, state on
    /// disk must already be complete) and starts it again on a new port with
    /// the same directories.
    pub fn restart(&mut self) {
        self.kill();
        self.spawn();
    }

    /// Kills the process.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// What it logged so far (stdout and stderr).
    pub fn log(&self) -> String {
        self.log.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// The options it was started with.
    pub fn options(&self) -> &ServerOptions {
        &self.options
    }

    /// Starts the process on a free port. The port is probed free and then
    /// released, so another process may take it first: an early exit is
    /// retried on a new port (twice) before it fails the test.
    fn spawn(&mut self) {
        for attempt in 1..=3 {
            match self.spawn_on(free_port()) {
                Ok(()) => return,
                Err(status) if attempt < 3 => {
                    if let Ok(mut log) = self.log.lock() {
                        log.push_str(&format!(
                            "[e2e] startup attempt {attempt} ended with {status}; retrying\n"
                        ));
                    }
                }
                Err(status) => panic!("iac-agui exited with {status} at startup:\n{}", self.log()),
            }
        }
    }

    fn spawn_on(&mut self, port: u16) -> Result<(), std::process::ExitStatus> {
        let mut command = Command::new(binary("iac-agui", "IAC_AGUI_BIN"));
        command
            .arg("serve")
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .arg("--state-dir")
            .arg(self.state_dir())
            .env("IAC_CODE_AGUI_ALLOWED_CWDS", self.workspace())
            .env("IAC_CODE_CONFIG_DIR", self.root.path().join("config"))
            .env("HOME", self.root.path())
            .env_remove("IAC_CODE_AGUI_AUTH_TOKEN")
            .env_remove("IAC_CODE_AGUI_A2A_TOKEN")
            .env_remove("IAC_CODE_AGUI_A2A_URL")
            .env_remove("IAC_CODE_AGUI_PORT")
            .env_remove("IAC_CODE_AGUI_HOST")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        match &self.options.a2a_url {
            Some(url) => command.args(["--a2a-url", url]),
            None => command.arg("--demo"),
        };
        if let Some(seconds) = self.options.heartbeat {
            command.args(["--heartbeat", &seconds.to_string()]);
        }
        if let Some(seconds) = self.options.interrupt_ttl {
            command.args(["--interrupt-ttl", &seconds.to_string()]);
        }
        if let Some(token) = &self.options.auth_token {
            command.env("IAC_CODE_AGUI_AUTH_TOKEN", token);
        }
        if let Some(token) = &self.options.a2a_token {
            command.env("IAC_CODE_AGUI_A2A_TOKEN", token);
        }
        command.args(&self.options.args);
        let mut child = command.spawn().expect("start iac-agui");
        drain(
            BufReader::new(child.stdout.take().expect("stdout")),
            Arc::clone(&self.log),
        );
        drain(
            BufReader::new(child.stderr.take().expect("stderr")),
            Arc::clone(&self.log),
        );
        self.addr = SocketAddr::from(([127, 0, 0, 1], port));
        self.child = Some(child);
        let deadline = Instant::now() + STARTUP;
        loop {
            if let Some(status) = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                self.child = None;
                return Err(status);
            }
            // Its own log naming the address tells this server from another
            // process that may have taken the port.
            let bound = self.log().contains(&format!("127.0.0.1:{port}"));
            if bound && TcpStream::connect_timeout(&self.addr, Duration::from_millis(200)).is_ok() {
                let health = Request::get("/health").send(self.addr);
                if health.status == 200 && health.text().contains("\"ag-ui\"") {
                    return Ok(());
                }
            }
            assert!(
                Instant::now() < deadline,
                "iac-agui did not come up:\n{}",
                self.log()
            );
            thread::sleep(Duration::from_millis(25));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A directory removed on drop.
#[derive(Debug)]
pub struct TempDir(PathBuf);

impl TempDir {
    /// Creates a fresh directory under the system temp dir.
    pub fn new(prefix: &str) -> TempDir {
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let path =
            std::env::temp_dir().join(format!("{prefix}-{}-{n}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&path).expect("temp dir");
        TempDir(std::fs::canonicalize(&path).unwrap_or(path))
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A port that was free a moment ago (bind to 0, read, release).
pub fn free_port() -> u16 {
    TcpListener::bind(("127.0.0.1", 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("ephemeral port")
}

/// The path of a workspace binary.
///
/// # Panics
/// When it is not built (the message says how to build it).
pub fn binary(name: &str, env_override: &str) -> PathBuf {
    if let Some(path) = std::env::var_os(env_override) {
        return PathBuf::from(path);
    }
    let exe = std::env::current_exe().expect("test executable path");
    // target/<profile>/deps/<test> -> target/<profile>/<name>
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target profile dir");
    let path = profile_dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.is_file(),
        "{} is not built; run `cargo build -p iac-agui -p iac-agui-scripted-runtime` \
         (or `cargo test --workspace`, which builds it) or set {env_override}",
        path.display()
    );
    let mut sources = vec!["core/src", "host-native/scripted-runtime/src"];
    if name == "iac-agui" {
        sources.push("host-native/src");
    }
    let allow_stale = std::env::var_os("IAC_AGUI_ALLOW_STALE_BINARIES").is_some();
    if let Some(newer) = newer_source(&path, &sources).filter(|_| !allow_stale) {
        panic!(
            "{} is older than {}; rebuild it with `cargo build -p iac-agui -p \
             iac-agui-scripted-runtime` (or run `cargo test --workspace`), or set \
             IAC_AGUI_ALLOW_STALE_BINARIES=1 to test it anyway",
            path.display(),
            newer.display()
        );
    }
    path
}

/// A file under `sources` (workspace-relative) modified after `binary` was
/// built: `cargo test -p iac-agui-tests` alone does not rebuild
/// other packages' binaries, and testing a stale one would mislead.
fn newer_source(binary: &Path, sources: &[&str]) -> Option<PathBuf> {
    let built = std::fs::metadata(binary).and_then(|m| m.modified()).ok()?;
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent()?;
    let mut stack: Vec<PathBuf> = sources.iter().map(|d| workspace.join(d)).collect();
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs")
                && entry
                    .metadata()
                    .and_then(|m| m.modified())
                    .is_ok_and(|m| m > built)
            {
                return Some(path);
            }
        }
    }
    None
}

fn drain<R: Read + Send + 'static>(reader: BufReader<R>, log: Arc<Mutex<String>>) {
    thread::spawn(move || {
        for line in reader.lines() {
            let Ok(line) = line else { break };
            if let Ok(mut log) = log.lock() {
                log.push_str(&line);
                log.push('\n');
            }
        }
    });
}
