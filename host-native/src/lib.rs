//! The native host of iac-agui: sockets, files and A2A I/O around the
//! sans-IO core.
//!
//! The host makes no protocol decision of its own. It parses and bounds HTTP
//! requests, resolves workspaces and images on this machine, stores thread
//! documents, talks to the A2A runtime, writes the SSE stream, and feeds every
//! result back to the core.

pub mod a2a_client;
pub mod app;
pub mod backend;
pub mod config;
pub mod demo;
pub mod engine;
mod http1;
pub mod images;
pub mod logging;
pub mod loops;
pub mod router;
pub mod secret;
pub mod server;
pub mod service;
pub mod sse_writer;
pub mod store;
mod stream_conn;
pub mod workspace;

/// Locks `mutex`, also after a panic elsewhere poisoned it: what it guards
/// stays consistent across every critical section here.
pub(crate) fn locked<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}
