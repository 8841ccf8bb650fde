//! `--spawn`: a one-command setup. The scripted A2A runtime runs inside this
//! process (its CPU is then never counted as the adapter's), the `iac-agui`
//! server runs as a child process pointed at it, with a throw-away state
//! directory that is also its only allowed workspace.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::net::TcpListener;
use tokio::process::{Child, Command};

use crate::client::get_json;

/// The running pair; dropping it kills the server.
pub(crate) struct Spawned {
    pub(crate) runtime_url: String,
    pub(crate) server_url: String,
    pub(crate) server_pid: u32,
    pub(crate) workspace: PathBuf,
    state_dir: PathBuf,
    keep_state: bool,
    server: Option<Child>,
    runtime: iac_agui_scripted_runtime::RuntimeHandle,
}

/// What to start.
pub(crate) struct SpawnOptions {
    /// The `iac-agui` binary.
    pub(crate) server_bin: PathBuf,
    /// SSE heartbeat interval of the server, in seconds.
    pub(crate) heartbeat_secs: f64,
    /// Silence of the runtime's `slow` scenario.
    pub(crate) slow_delay: Duration,
    /// Only start the runtime (for `--a2a` baselines).
    pub(crate) runtime_only: bool,
    /// Leave the state directory in place when stopping.
    pub(crate) keep_state: bool,
}

/// The `iac-agui` binary next to this one (`target/<profile>/`).
pub(crate) fn default_server_bin() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    exe.parent()
        .unwrap_or(Path::new("."))
        .join(format!("iac-agui{}", std::env::consts::EXE_SUFFIX))
}

/// Starts the runtime and, unless `runtime_only`, the server; waits until
/// the server answers `GET /health`.
pub(crate) async fn start(options: &SpawnOptions) -> Result<Spawned, String> {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| format!("the scripted runtime cannot listen: {e}"))?;
    let config = iac_agui_scripted_runtime::Config {
        slow_delay: options.slow_delay,
        ..Default::default()
    };
    let runtime = iac_agui_scripted_runtime::serve(listener, config)
        .map_err(|e| format!("the scripted runtime cannot start: {e}"))?;
    let runtime_url = runtime.url();
    let state_dir = std::env::temp_dir().join(format!("iac-agui-load-{}", std::process::id()));
    let workspace = state_dir.join("ws");
    std::fs::create_dir_all(&workspace)
        .map_err(|e| format!("cannot create {}: {e}", workspace.display()))?;
    let mut spawned = Spawned {
        runtime_url: runtime_url.clone(),
        server_url: String::new(),
        server_pid: 0,
        workspace: workspace.clone(),
        state_dir: state_dir.clone(),
        keep_state: options.keep_state,
        server: None,
        runtime,
    };
    if options.runtime_only {
        return Ok(spawned);
    }
    if !options.server_bin.exists() {
        return Err(format!(
            "{} not found: build it first (cargo build --release -p iac-agui)",
            options.server_bin.display()
        ));
    }
    let port = free_port().await?;
    let server = Command::new(&options.server_bin)
        .args(["serve", "--host", "127.0.0.1", "--port", &port.to_string()])
        .args(["--a2a-url", &runtime_url])
        .arg("--state-dir")
        .arg(state_dir.join("state"))
        .args(["--heartbeat", &options.heartbeat_secs.to_string()])
        .env("IAC_CODE_AGUI_ALLOWED_CWDS", &workspace)
        // Quiet by default so the table stays readable; RUST_LOG overrides.
        .env(
            "RUST_LOG",
            std::env::var("RUST_LOG").unwrap_or_else(|_| "warn".into()),
        )
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", options.server_bin.display()))?;
    spawned.server_pid = server.id().unwrap_or(0);
    let server = spawned.server.insert(server);
    let authority = format!("127.0.0.1:{port}");
    spawned.server_url = format!("http://{authority}/");
    let deadline = Instant::now() + Duration::from_secs(20);
    while get_json(&authority, "/health").await.is_err() {
        if Instant::now() > deadline {
            return Err("iac-agui did not answer /health within 20 s".into());
        }
        if let Ok(Some(status)) = server.try_wait() {
            return Err(format!("iac-agui exited early: {status}"));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok(spawned)
}

impl Spawned {
    /// Kills the server, stops the runtime and removes the state directory
    /// (unless it is to be kept).
    pub(crate) async fn stop(mut self) {
        if let Some(server) = self.server.as_mut() {
            let _ = server.kill().await;
        }
        self.runtime.shutdown().await;
        if !self.keep_state {
            let _ = std::fs::remove_dir_all(&self.state_dir);
        }
    }
}

/// A port that was free a moment ago (the server needs a fixed one).
async fn free_port() -> Result<u16, String> {
    let probe = TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| format!("no free port: {e}"))?;
    probe
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| format!("no free port: {e}"))
}
