//! What every request handler shares: settings, the state store, the A2A
//! client, the workspace policy, the shutdown signal and run bookkeeping.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
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
    /// The process's descriptors, shared out between connections (none:
    /// no limit is enforced).
    pub descriptors: Option<DescriptorBudget>,
}

/// How many connections the process's limit on open descriptors leaves
/// room for. A run holds a descriptor for its client's connection and one
/// for its A2A stream (a third when the runtime serves in this process,
/// `--demo`); the store, the A2A connection pools and the process itself
/// are kept [`RESERVED_DESCRIPTORS`]. A request that would go past the
/// budget is refused with `503 STATE_UNAVAILABLE` before anything of its
/// thread is read, so that the runs already admitted never fail for want
/// of a descriptor (a state write or an A2A connection mid-run).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DescriptorBudget {
    /// The limit on open descriptors (`RLIMIT_NOFILE`).
    pub limit: u64,
    /// Descriptors a connection may need while its run streams.
    pub per_connection: u64,
}

/// Descriptors kept back from the connections: the store's batches, the
/// idle A2A connections kept for reuse, and 64 for the process itself
/// (standard streams, event loops, the listener, signals).
pub const RESERVED_DESCRIPTORS: u64 = crate::store::MOST_DESCRIPTORS
    + crate::stream_conn::POOL_MAX as u64
    + crate::a2a_client::UNARY_POOL_MAX as u64
    + 64;

impl DescriptorBudget {
    /// The connections that fit in the budget.
    pub fn connections(&self) -> usize {
        let room = self.limit.saturating_sub(RESERVED_DESCRIPTORS) / self.per_connection.max(1);
        usize::try_from(room).unwrap_or(usize::MAX)
    }
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
            descriptors: None,
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
    /// Open client connections (counted by `server::serve`).
    connections: Arc<AtomicUsize>,
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
            connections: Arc::default(),
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

    /// The count of open client connections, shared with the server.
    pub fn connections(&self) -> &Arc<AtomicUsize> {
        &self.connections
    }

    /// True while the open connections (this request's among them) fit in
    /// the descriptor budget: a new run may be admitted, and a connection
    /// may stay open for another request.
    pub fn has_room(&self) -> bool {
        let open = self.connections.load(Ordering::Relaxed);
        self.http
            .descriptors
            .is_none_or(|budget| open <= budget.connections())
    }

    /// True when no run is active or admitting and no interrupt is pending
    /// (for `--idle-shutdown`).
    pub fn is_idle(&self) -> bool {
        self.engine.is_idle()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_leaves_the_reserve_and_shares_the_rest() {
        let budget = |limit, per_connection| DescriptorBudget {
            limit,
            per_connection,
        };
        assert_eq!(
            budget(RESERVED_DESCRIPTORS + 20_001, 2).connections(),
            10_000
        );
        assert_eq!(
            budget(RESERVED_DESCRIPTORS + 20_001, 3).connections(),
            6_667
        );
        assert_eq!(budget(RESERVED_DESCRIPTORS - 1, 2).connections(), 0);
        // README.md and ARCHITECTURE.md name the reserve.
        assert_eq!(RESERVED_DESCRIPTORS, 548);
        // RLIM_INFINITY
        assert!(budget(u64::MAX, 2).connections() > 1 << 40);
    }
}
