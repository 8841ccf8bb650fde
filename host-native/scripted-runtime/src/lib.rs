//! A scripted A2A runtime speaking the iac-code wire. It is **not an agent**:
//! it plays fixed scenarios, chosen by a `scenario:<name>` keyword in the user
//! message, with the frame shapes of the real `iac-code a2a` 0.16.0 runtime
//! (see `A2A-WIRE.md` and the captures under `fixtures/a2a/`).
//!
//! It exists so that the AG-UI adapter can be demonstrated, tested end to end
//! and load-tested without Python or an LLM. It keeps real task state (tasks
//! per context, input waits, applied answers, cancellation, a pipeline
//! journal) and is deterministic: ids come from a seeded generator and frame
//! timestamps from a logical clock, so the same requests give the same bytes.
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use iac_agui_scripted_runtime::{serve, Config};
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! let runtime = serve(listener, Config::default())?;
//! println!("scripted A2A runtime at {}", runtime.url());
//! runtime.shutdown().await;
//! # Ok(()) }
//! ```

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

mod answer;
mod clock;
mod frames;
mod messages;
mod metronome;
mod pipeline;
mod pipeline_state;
mod rpc;
mod run;
mod scenario;
mod server;
mod sse;
mod store;

pub use scenario::SCENARIO_NAMES;

/// How a runtime behaves.
#[derive(Clone, PartialEq, Eq)]
pub struct Config {
    /// Bearer token every request must carry (`Authorization: Bearer <t>`);
    /// `None` turns authentication off, as in the real runtime.
    pub token: Option<String>,
    /// Interval of `: ping` keep-alive comments on streams (zero: none).
    pub ping_interval: Duration,
    /// Seed of the id generator (task, session, event and input ids).
    pub seed: u64,
    /// Silence of the `slow` scenario before it answers.
    pub slow_delay: Duration,
    /// How long a side-band continuation waits for a SubscribeToTask stream
    /// before it plays anyway.
    pub subscribe_grace: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            token: None,
            ping_interval: Duration::from_secs(15),
            seed: 0x1ac_a9e1,
            slow_delay: Duration::from_secs(3),
            subscribe_grace: Duration::from_secs(10),
        }
    }
}

impl std::fmt::Debug for Config {
    // The token is a secret: never print it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("ping_interval", &self.ping_interval)
            .field("seed", &self.seed)
            .field("slow_delay", &self.slow_delay)
            .field("subscribe_grace", &self.subscribe_grace)
            .finish()
    }
}

/// Starts serving on `listener` in the current tokio runtime.
///
/// # Errors
/// When the listener's local address cannot be read.
pub fn serve(listener: TcpListener, config: Config) -> std::io::Result<RuntimeHandle> {
    let addr = listener.local_addr()?;
    let shared = Arc::new(Shared {
        store: Mutex::new(store::Store::new(config.seed, clock::DEFAULT_START_MICROS)),
        config,
    });
    let (stop_tx, stop_rx) = watch::channel(false);
    let task = tokio::spawn(server::accept_loop(listener, shared, stop_rx));
    Ok(RuntimeHandle {
        addr,
        stop: stop_tx,
        task,
    })
}

/// A running scripted runtime.
#[derive(Debug)]
pub struct RuntimeHandle {
    addr: SocketAddr,
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

impl RuntimeHandle {
    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The A2A URL the adapter should use (`http://<addr>/`).
    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// Stops accepting connections and closes the open ones.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }
}

/// State shared by every connection of one runtime.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) store: Mutex<store::Store>,
    pub(crate) config: Config,
}

impl Shared {
    /// Locks the store. A panic while locked leaves the data usable (every
    /// update is a plain field write), so a poisoned lock is recovered.
    pub(crate) fn lock(&self) -> MutexGuard<'_, store::Store> {
        self.store.lock().unwrap_or_else(|p| p.into_inner())
    }
}
