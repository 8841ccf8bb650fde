//! `iac-agui serve` from settings to exit: pick the A2A backend, open the
//! state store, listen, and stop cleanly on SIGINT/SIGTERM or idle shutdown
//! (stop accepting, end active runs with RUN_ERROR, stop the managed child).

use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::signal::unix::{signal, Signal, SignalKind};
use tokio::sync::watch;

use crate::a2a_client::{A2aClient, A2aTimeouts};
use crate::app::{App, DescriptorBudget, HttpSettings};
use crate::backend::{ManagedChild, ManagedOptions};
use crate::config::Settings;
use crate::loops::EventLoops;
use crate::secret::Secret;
use crate::server::{serve, ConnTimeouts};
use crate::store::StateStore;
use crate::workspace::WorkspacePolicy;

/// How long active runs get to write their last event at shutdown.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// A startup failure, as one line.
#[derive(Debug)]
pub struct StartupError(pub String);

impl std::fmt::Display for StartupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StartupError {}

/// Raises the soft limit on open descriptors to the hard one, grows the
/// descriptor table to fit it (up to [`PRESIZED_DESCRIPTORS`]), and returns
/// the limit in force. Every stream holds two descriptors (its client's
/// connection and its A2A stream), so the usual soft limit of 1,024 would
/// refuse new runs from about 500 open streams on, while the hard limit is
/// usually far higher.
///
/// Call it before the process starts its threads: `main` does, and
/// [`run`] calls it again to learn the limit (a no-op by then).
pub fn raise_open_file_limit() -> Option<u64> {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).ok()?;
    let limit = if soft < hard && setrlimit(Resource::RLIMIT_NOFILE, hard, hard).is_ok() {
        tracing::debug!(from = soft, to = hard, "raised the open file limit");
        hard
    } else {
        soft
    };
    presize_descriptor_table(limit.min(PRESIZED_DESCRIPTORS));
    Some(limit)
}

/// How many descriptors the table is grown to at start: 512 KiB of kernel
/// memory, room for over 20,000 streams.
pub const PRESIZED_DESCRIPTORS: u64 = 65_536;

/// Grows the process's descriptor table to `slots` at once.
///
/// The kernel grows the table by doubling it as descriptors are opened.
/// In a process with several threads each doubling waits for an RCU grace
/// period (10-12 ms here), and every open and accept of the process waits
/// behind it: the first burst of runs after a start stalled that way
/// (BENCHMARKS.md). Grown while the process has one thread, the table
/// waits for nothing, and it never shrinks. Opening the highest
/// descriptor once is enough; if that fails, the table grows as before.
fn presize_descriptor_table(slots: u64) {
    use nix::fcntl::{fcntl, FcntlArg};
    let Some(Ok(highest)) = slots.checked_sub(1).map(i32::try_from) else {
        return;
    };
    let Ok(null) = std::fs::File::open("/dev/null") else {
        return;
    };
    if let Ok(fd) = fcntl(&null, FcntlArg::F_DUPFD_CLOEXEC(highest)) {
        let _ = nix::unistd::close(fd);
    }
}

/// Runs the server on `loops` (this task on the first) until a signal or
/// idle shutdown.
///
/// # Errors
/// The backend, the state directory or the listening socket could not be
/// set up.
pub async fn run(settings: Settings, loops: EventLoops) -> Result<(), StartupError> {
    // Caught from the start: a signal that arrives while the server is still
    // starting (as soon as it listens, say) stops it cleanly once it runs.
    let signals = Signals::catch();
    let open_file_limit = raise_open_file_limit();
    let store = StateStore::open(&settings.state_dir)
        .map_err(|e| StartupError(format!("the state directory cannot be used: {e}")))?;
    let timeouts = A2aTimeouts::default();
    let mut child = None;
    let mut demo = None;
    let client = if settings.demo {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| StartupError(format!("the demo runtime cannot listen: {}", e.kind())))?;
        let token = Secret::random();
        let config = iac_agui_scripted_runtime::Config {
            token: Some(token.expose().to_owned()),
            ..Default::default()
        };
        let handle = iac_agui_scripted_runtime::serve(listener, config)
            .map_err(|e| StartupError(format!("the demo runtime cannot start: {}", e.kind())))?;
        let client = A2aClient::new(&handle.url(), Some(token), timeouts);
        tracing::info!(url = %handle.url(), "using the built-in scripted A2A runtime (demo)");
        demo = Some(handle);
        client
    } else if let Some(url) = &settings.a2a_url {
        tracing::info!(url = %url, "using an external A2A runtime");
        A2aClient::new(url, settings.a2a_token.clone(), timeouts)
    } else {
        let managed = ManagedChild::start(ManagedOptions::default())
            .await
            .map_err(|e| StartupError(e.to_string()))?;
        tracing::info!(url = %managed.url(), "started the local A2A runtime");
        let client = managed.client(timeouts);
        child = Some(managed);
        client
    };
    let listener = TcpListener::bind((settings.host.as_str(), settings.port))
        .await
        .map_err(|e| {
            StartupError(format!(
                "cannot listen on {}:{}: {}",
                settings.host,
                settings.port,
                e.kind()
            ))
        })?;
    let (shutdown_tx, shutdown_rx) = watch::channel(false);
    let http = HttpSettings {
        auth_token: settings.auth_token.clone(),
        cors_origins: settings.cors_origins.clone(),
        heartbeat: settings.heartbeat,
        interrupt_ttl: settings.interrupt_ttl,
        demo_dir: settings.demo_dir.clone(),
        // The demo runtime serves in this process: its end of each A2A
        // stream is a descriptor of ours too.
        descriptors: open_file_limit.map(|limit| DescriptorBudget {
            limit,
            per_connection: if settings.demo { 3 } else { 2 },
        }),
        ..HttpSettings::default()
    };
    let workspace = WorkspacePolicy::from_env(|k| std::env::var_os(k));
    let app = App::on_loops(
        http,
        store,
        client,
        workspace,
        shutdown_rx.clone(),
        Some(&loops),
    );
    tracing::info!(
        address = %listener.local_addr().map(|a| a.to_string()).unwrap_or_default(),
        auth = settings.auth_token.is_some(),
        "iac-agui listening"
    );
    if let Some(dir) = &settings.demo_dir {
        match crate::demo::missing_warning(dir) {
            Some(warning) => tracing::warn!("{warning}"),
            None => tracing::info!(
                url = %listener
                    .local_addr()
                    .map(|a| format!("http://{a}/demo/"))
                    .unwrap_or_default(),
                dir = %dir.display(),
                "serving the web demo"
            ),
        }
    }
    let server = tokio::spawn(serve(
        listener,
        Arc::clone(&app),
        ConnTimeouts::default(),
        shutdown_rx,
        SHUTDOWN_GRACE,
    ));
    let reason = wait_for_stop(&app, settings.idle_shutdown, signals).await;
    tracing::info!(reason, "shutting down");
    let _ = shutdown_tx.send(true);
    let _ = server.await;
    if let Some(mut child) = child {
        child.stop(Duration::from_secs(5)).await;
    }
    if let Some(demo) = demo {
        demo.shutdown().await;
    }
    Ok(())
}

/// SIGINT and SIGTERM, each caught once its handler is set (`None`: it
/// could not be).
struct Signals {
    interrupt: Option<Signal>,
    terminate: Option<Signal>,
}

impl Signals {
    fn catch() -> Signals {
        Signals {
            interrupt: signal(SignalKind::interrupt()).ok(),
            terminate: signal(SignalKind::terminate()).ok(),
        }
    }
}

/// Waits for a signal caught by `signal` (forever when it is `None`).
async fn received(signal: &mut Option<Signal>) {
    match signal {
        Some(signal) => {
            signal.recv().await;
        }
        None => std::future::pending().await,
    }
}

/// Resolves on SIGINT, SIGTERM, or after `idle` with nothing in flight.
async fn wait_for_stop(
    app: &Arc<App>,
    idle: Option<Duration>,
    mut signals: Signals,
) -> &'static str {
    tokio::select! {
        () = received(&mut signals.interrupt) => "SIGINT",
        () = received(&mut signals.terminate) => "SIGTERM",
        () = idle_for(app, idle) => "idle",
    }
}

async fn idle_for(app: &Arc<App>, idle: Option<Duration>) {
    let Some(idle) = idle else {
        return std::future::pending().await;
    };
    let every = (idle / 4).clamp(Duration::from_millis(100), Duration::from_secs(5));
    let mut idle_since = tokio::time::Instant::now();
    loop {
        tokio::time::sleep(every).await;
        if !app.is_idle() {
            idle_since = tokio::time::Instant::now();
        } else if idle_since.elapsed() >= idle {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel's size of this process's descriptor table (`FDSize`).
    fn descriptor_table_size() -> u64 {
        let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
        let line = status
            .lines()
            .find_map(|l| l.strip_prefix("FDSize:"))
            .expect("FDSize");
        line.trim().parse().expect("a number")
    }

    #[test]
    fn the_descriptor_table_is_grown_to_the_limit_at_once() {
        let limit = raise_open_file_limit().expect("the limit");
        let wanted = limit.min(PRESIZED_DESCRIPTORS);
        let size = descriptor_table_size();
        assert!(size >= wanted, "table of {size} slots, {wanted} wanted");
        // The descriptor that grew it is closed again.
        let highest = std::path::PathBuf::from(format!("/proc/self/fd/{}", wanted - 1));
        assert!(!highest.exists(), "{} is open", highest.display());
    }
}
