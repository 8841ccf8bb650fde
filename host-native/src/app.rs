//! What every request handler shares: settings, the state store, the A2A
//! client, the workspace policy, the shutdown signal and run bookkeeping.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use crate::a2a_client::A2aClient;
use crate::engine::{Engine, EngineDeps};
use crate::loops::EventLoops;
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
    /// Directory served at `/demo/` (none: `/demo/` is not served).
    pub demo_dir: Option<PathBuf>,
}

impl Default for HttpSettings {
    fn default() -> Self {
        HttpSettings {
            auth_token: None,
            cors_origins: Vec::new(),
            heartbeat: crate::sse_writer::DEFAULT_HEARTBEAT,
            body_timeout: Duration::from_secs(30),
            interrupt_ttl: Duration::from_secs(540),
            demo_dir: None,
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
    /// The core's thread machine, behind its actor.
    pub engine: Engine,
    shutdown: watch::Receiver<bool>,
}

impl App {
    /// Assembles the shared state and starts the engine on the current
    /// runtime; `shutdown` turns true when the server stops (active runs
    /// then end with RUN_ERROR).
    pub fn new(
        http: HttpSettings,
        store: Arc<StateStore>,
        a2a: A2aClient,
        workspace: WorkspacePolicy,
        shutdown: watch::Receiver<bool>,
    ) -> Arc<App> {
        App::on_loops(http, store, a2a, workspace, shutdown, None)
    }

    /// As [`App::new`], with one engine shard per event loop of `loops`.
    pub fn on_loops(
        http: HttpSettings,
        store: Arc<StateStore>,
        a2a: A2aClient,
        workspace: WorkspacePolicy,
        shutdown: watch::Receiver<bool>,
        loops: Option<&EventLoops>,
    ) -> Arc<App> {
        let engine = Engine::start(
            EngineDeps {
                store: Arc::clone(&store),
                a2a: a2a.clone(),
                heartbeat: http.heartbeat,
                interrupt_ttl: http.interrupt_ttl,
            },
            shutdown.clone(),
            loops,
        );
        Arc::new(App {
            http,
            store,
            a2a,
            workspace,
            engine,
            shutdown,
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

    /// True when no run is active or admitting and no interrupt is pending
    /// (for `--idle-shutdown`).
    pub fn is_idle(&self) -> bool {
        self.engine.is_idle()
    }
}
