//! Which A2A runtime the server talks to (SPEC §14, A2A-WIRE §7.3): an
//! existing loopback runtime given by URL, or a managed `iac-code a2a` child
//! started on a free port with a fresh token, health-polled until ready and
//! stopped on exit (terminate, then kill after a grace period). Where
//! `setpriv` exists the child is also started with a parent-death signal, so
//! it does not outlive a server that was killed outright (SIGKILL, the OOM
//! killer) and had no chance to stop it.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::process::{Child, Command};

use crate::a2a_client::{A2aClient, A2aTimeouts};
use crate::secret::Secret;

/// The install command named when `iac-code` is missing.
pub const INSTALL_HINT: &str =
    "pip install 'iac-code[agui]==0.16.0' 'a2a-sdk[http-server,signing]==1.2.0'";

/// Why no backend could be set up. `Display` is the one-line startup error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BackendError {
    /// `--a2a-url` is not an http(s) URL on a loopback host.
    NotLoopback,
    /// The `iac-code` executable is not on PATH.
    NotInstalled,
    /// The child could not be started for another reason.
    SpawnFailed(String),
    /// The child exited before it was ready.
    ExitedDuringStartup(Option<i32>),
    /// The child did not answer `/health` in time.
    NotReady,
}

impl std::fmt::Display for BackendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BackendError::NotLoopback => f.write_str(
                "the A2A URL must be http(s) on a loopback host (127.0.0.1, localhost or ::1)",
            ),
            BackendError::NotInstalled => write!(
                f,
                "the `iac-code` executable was not found on PATH; install it with: {INSTALL_HINT}"
            ),
            BackendError::SpawnFailed(kind) => {
                write!(f, "the local A2A process could not be started: {kind}")
            }
            BackendError::ExitedDuringStartup(Some(code)) => {
                write!(
                    f,
                    "the local A2A process exited during startup (exit code {code})"
                )
            }
            BackendError::ExitedDuringStartup(None) => {
                f.write_str("the local A2A process exited during startup (killed by a signal)")
            }
            BackendError::NotReady => {
                f.write_str("the local A2A process did not become ready in time")
            }
        }
    }
}

impl std::error::Error for BackendError {}

/// Checks an external runtime URL and normalises it to end with `/`.
///
/// # Errors
/// [`BackendError::NotLoopback`] for any other scheme or host, or for a URL
/// with credentials, a query or a fragment.
pub fn check_external_url(raw: &str) -> Result<String, BackendError> {
    let uri: http::Uri = raw.trim().parse().map_err(|_| BackendError::NotLoopback)?;
    let scheme_ok = matches!(uri.scheme_str(), Some("http" | "https"));
    let authority = uri.authority().ok_or(BackendError::NotLoopback)?;
    let host = authority
        .host()
        .trim_start_matches('[')
        .trim_end_matches(']');
    let loopback = matches!(
        host.to_ascii_lowercase().as_str(),
        "127.0.0.1" | "localhost" | "::1"
    );
    if !scheme_ok || !loopback || authority.as_str().contains('@') || uri.query().is_some() {
        return Err(BackendError::NotLoopback);
    }
    let mut url = raw.trim().to_owned();
    if !url.ends_with('/') {
        url.push('/');
    }
    Ok(url)
}

/// How to start the managed child.
#[derive(Debug, Clone)]
pub struct ManagedOptions {
    /// The program (looked up on `path`).
    pub program: OsString,
    /// PATH for the lookup and the child (`None`: inherit).
    pub path: Option<OsString>,
    /// Extra environment for the child.
    pub env: Vec<(OsString, OsString)>,
    /// How long to wait for `/health`.
    pub ready_timeout: Duration,
    /// Poll interval.
    pub poll_every: Duration,
}

impl Default for ManagedOptions {
    fn default() -> Self {
        ManagedOptions {
            program: OsString::from("iac-code"),
            path: None,
            env: Vec::new(),
            ready_timeout: Duration::from_secs(20),
            poll_every: Duration::from_millis(100),
        }
    }
}

/// A running `iac-code a2a` child.
#[derive(Debug)]
pub struct ManagedChild {
    child: Child,
    url: String,
    token: Secret,
}

impl ManagedChild {
    /// Starts the child on a free loopback port with a fresh token and waits
    /// until `GET /health` answers 200.
    ///
    /// # Errors
    /// Not installed, not startable, exited during startup, not ready in time.
    pub async fn start(options: ManagedOptions) -> Result<ManagedChild, BackendError> {
        let port = free_port().map_err(|e| BackendError::SpawnFailed(e.kind().to_string()))?;
        let token = Secret::random();
        let search = options
            .path
            .clone()
            .or_else(|| std::env::var_os("PATH"))
            .unwrap_or_default();
        let program = find_program(&options.program, &search).ok_or(BackendError::NotInstalled)?;
        // The kernel sends the signal when the thread that started the child
        // ends: the server starts it from its main task, which lives as long
        // as the process.
        let mut command = match SETPRIV.iter().map(Path::new).find(|p| is_executable(p)) {
            Some(setpriv) => {
                let mut command = Command::new(setpriv);
                command.args(["--pdeathsig", "TERM", "--"]).arg(&program);
                command
            }
            None => Command::new(&program),
        };
        command
            .args(["a2a", "--host", "127.0.0.1", "--port", &port.to_string()])
            .args(["--thinking-exposure", "all"])
            .env("IACCODE_A2A_HTTP_TOKEN", token.expose())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if let Some(path) = &options.path {
            command.env("PATH", path);
        }
        if let Some(roots) = inherited_allowed_cwds(|k| std::env::var_os(k)) {
            command.env("IACCODE_A2A_ALLOWED_CWDS", roots);
        }
        for (key, value) in &options.env {
            command.env(key, value);
        }
        let mut child = command.spawn().map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => BackendError::NotInstalled,
            kind => BackendError::SpawnFailed(kind.to_string()),
        })?;
        if let Some(out) = child.stdout.take() {
            tokio::spawn(relay_output(out, "stdout"));
        }
        if let Some(err) = child.stderr.take() {
            tokio::spawn(relay_output(err, "stderr"));
        }
        let mut managed = ManagedChild {
            child,
            url: format!("http://127.0.0.1:{port}/"),
            token,
        };
        let client = managed.client(A2aTimeouts::default());
        let deadline = tokio::time::Instant::now() + options.ready_timeout;
        loop {
            if let Ok(Some(status)) = managed.child.try_wait() {
                return Err(BackendError::ExitedDuringStartup(status.code()));
            }
            if client.health(Duration::from_millis(500)).await.is_ok() {
                return Ok(managed);
            }
            if tokio::time::Instant::now() >= deadline {
                managed.stop(Duration::from_secs(5)).await;
                return Err(BackendError::NotReady);
            }
            tokio::time::sleep(options.poll_every).await;
        }
    }

    /// The runtime's base URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// A client for the child, carrying its token.
    pub fn client(&self, timeouts: A2aTimeouts) -> A2aClient {
        A2aClient::new(&self.url, Some(self.token.clone()), timeouts)
    }

    /// The child's process id, while it runs.
    pub fn id(&self) -> Option<u32> {
        self.child.id()
    }

    /// Stops the child: SIGTERM, then SIGKILL when it has not exited within
    /// `grace`.
    pub async fn stop(&mut self, grace: Duration) {
        if let Some(pid) = self.child.id() {
            let pid = nix::unistd::Pid::from_raw(pid as i32);
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
            if tokio::time::timeout(grace, self.child.wait()).await.is_ok() {
                return;
            }
        }
        let _ = self.child.kill().await;
    }
}

/// The runtime's own allowed roots default to the adapter's: the child gets
/// `IACCODE_A2A_ALLOWED_CWDS = $IAC_CODE_AGUI_ALLOWED_CWDS` when the former
/// is unset, so a workspace the adapter accepts is not refused by the runtime.
fn inherited_allowed_cwds(env: impl Fn(&str) -> Option<OsString>) -> Option<OsString> {
    if env("IACCODE_A2A_ALLOWED_CWDS").is_some() {
        return None;
    }
    env("IAC_CODE_AGUI_ALLOWED_CWDS")
}

/// Logs the child's output line by line (target `iac_agui::runtime`), so
/// that it reaches the server's log in the server's format (one JSON object
/// per line with `--log-format json`) instead of interleaving raw text.
/// Reads to the end whatever the bytes are, so the child never blocks on a
/// full pipe.
async fn relay_output(stream: impl tokio::io::AsyncRead + Unpin, name: &'static str) {
    use tokio::io::AsyncBufReadExt as _;
    let mut lines = tokio::io::BufReader::new(stream).split(b'\n');
    while let Ok(Some(line)) = lines.next_segment().await {
        let line = String::from_utf8_lossy(&line);
        let line = line.trim_end_matches('\r');
        tracing::info!(target: "iac_agui::runtime", stream = name, "{line}");
    }
}

/// Where `setpriv` (util-linux) may be; never looked up on PATH.
const SETPRIV: [&str; 2] = ["/usr/bin/setpriv", "/bin/setpriv"];

/// `program` as exec would find it: a name with a slash as it is, any other
/// in the first directory of `path` that holds an executable file of it.
fn find_program(program: &OsStr, path: &OsStr) -> Option<PathBuf> {
    if program.as_bytes().contains(&b'/') {
        return Some(PathBuf::from(program));
    }
    std::env::split_paths(path)
        .map(|dir| dir.join(program))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Asks the OS for a free loopback port (bind :0, read it, release it).
fn free_port() -> std::io::Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(listener.local_addr()?.port())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn external_urls_must_be_loopback() {
        for ok in [
            "http://127.0.0.1:41242",
            "http://localhost:1/",
            "https://[::1]:8443/",
            "HTTP://LOCALHOST:9",
        ] {
            let url = check_external_url(ok).unwrap();
            assert!(url.ends_with('/'), "{ok}");
        }
        for bad in [
            "http://10.0.0.1:41242/",
            "http://example.com/",
            "ftp://127.0.0.1/",
            "127.0.0.1:41242",
            "http://user:pw@127.0.0.1/",
            "http://127.0.0.1.evil.com/",
            "http://localhost.:1/",
            "",
        ] {
            assert_eq!(
                check_external_url(bad),
                Err(BackendError::NotLoopback),
                "{bad}"
            );
        }
    }

    #[test]
    fn allowed_cwds_are_inherited_only_when_unset() {
        let both = |k: &str| Some(OsString::from(format!("value-of-{k}")));
        assert_eq!(
            inherited_allowed_cwds(both),
            None,
            "the runtime's own setting wins"
        );
        let agui_only =
            |k: &str| (k == "IAC_CODE_AGUI_ALLOWED_CWDS").then(|| OsString::from("/a:/b"));
        assert_eq!(
            inherited_allowed_cwds(agui_only),
            Some(OsString::from("/a:/b"))
        );
        assert_eq!(inherited_allowed_cwds(|_| None), None);
    }

    #[test]
    fn programs_are_found_as_exec_would() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        for d in [&a, &b] {
            std::fs::create_dir(d).unwrap();
        }
        std::fs::write(a.join("tool"), "not executable").unwrap();
        std::fs::write(b.join("tool"), "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(b.join("tool"), std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = std::env::join_paths([&a, &b]).unwrap();
        assert_eq!(
            find_program(OsStr::new("tool"), &path),
            Some(b.join("tool"))
        );
        assert_eq!(find_program(OsStr::new("missing"), &path), None);
        assert_eq!(find_program(OsStr::new("tool"), OsStr::new("")), None);
        assert_eq!(
            find_program(OsStr::new("./x/tool"), &path),
            Some(PathBuf::from("./x/tool")),
            "a path is taken as it is"
        );
    }

    #[test]
    fn missing_executable_message_names_the_install_command() {
        let message = BackendError::NotInstalled.to_string();
        assert!(message.contains(
            "pip install 'iac-code[agui]==0.16.0' 'a2a-sdk[http-server,signing]==1.2.0'"
        ));
        assert!(!message.contains('\n'));
    }
}
