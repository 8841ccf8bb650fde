//! What every request handler shares: settings, the state store, the A2A
//! client, the workspace policy, the shutdown signal and run bookkeeping.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use crate::a2a_client::A2aClient;
use crate::secret::Secret;
use crate::store::StateStore;
use crate::workspace::WorkspacePolicy;

/// HTTP-side settings.
#[derive(Debug, Clone)]
pub struct HttpSettings {
    /// Bearer token required on `POST /` and cancel (none: auth off).
    pub auth_token: Option<Secret>,
    /// Origins allowed to call from a browser (empty: CORS off).
    pub cors_origins: Vec<String>,
    /// Silence before a `: heartbeat` comment.
    pub heartbeat: Duration,
    /// Longest time to receive a whole request body.
    pub body_timeout: Duration,
    /// Lifetime of an interrupt without its own expiry (SPEC §7).
    pub interrupt_ttl: Duration,
}

impl Default for HttpSettings {
    fn default() -> Self {
        HttpSettings {
            auth_token: None,
            cors_origins: Vec::new(),
            heartbeat: crate::sse_writer::DEFAULT_HEARTBEAT,
            body_timeout: Duration::from_secs(30),
            interrupt_ttl: Duration::from_secs(540),
        }
    }
}

/// The shared state of a running server.
#[derive(Debug)]
pub struct App {
    /// HTTP-side settings.
    pub http: HttpSettings,
    /// Thread documents.
    pub store: Arc<StateStore>,
    /// The A2A runtime.
    pub a2a: A2aClient,
    /// Allowed workspaces.
    pub workspace: WorkspacePolicy,
    shutdown: watch::Receiver<bool>,
    active_runs: AtomicUsize,
}

/// Counts a run as active while it lives.
#[derive(Debug)]
pub struct RunSlot {
    app: Arc<App>,
}

impl App {
    /// Assembles the shared state; `shutdown` turns true when the server stops.
    pub fn new(
        http: HttpSettings,
        store: Arc<StateStore>,
        a2a: A2aClient,
        workspace: WorkspacePolicy,
        shutdown: watch::Receiver<bool>,
    ) -> Arc<App> {
        Arc::new(App {
            http,
            store,
            a2a,
            workspace,
            shutdown,
            active_runs: AtomicUsize::new(0),
        })
    }

    /// A receiver of the shutdown signal.
    pub fn shutdown_signal(&self) -> watch::Receiver<bool> {
        self.shutdown.clone()
    }

    /// True once shutdown began.
    pub fn is_shutting_down(&self) -> bool {
        *self.shutdown.borrow()
    }

    /// Runs currently streaming.
    pub fn active_runs(&self) -> usize {
        self.active_runs.load(Ordering::SeqCst)
    }

    /// True when nothing is in flight (for `--idle-shutdown`).
    pub fn is_idle(&self) -> bool {
        self.active_runs() == 0
    }

    /// Marks a run active until the slot is dropped.
    pub fn run_slot(self: &Arc<Self>) -> RunSlot {
        self.active_runs.fetch_add(1, Ordering::SeqCst);
        RunSlot {
            app: Arc::clone(self),
        }
    }
}

impl Drop for RunSlot {
    fn drop(&mut self) {
        self.app.active_runs.fetch_sub(1, Ordering::SeqCst);
    }
}
