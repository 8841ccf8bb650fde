//! Shared helpers of the cross-crate test suites.
//!
//! - [`agui`]: the end-to-end harness (runtime + server + stream checks).
//! - [`clients`]: runs SSE text through the official AG-UI TypeScript
//!   clients (`tests/agui-clients/check.mjs`, Node) and returns their verdicts.
//! - [`sse`]: frames events exactly as the server does and splits a received
//!   body back into events and comments.
//! - [`http`]: a small blocking HTTP/1.1 client for loopback tests, able to
//!   read a streamed body incrementally and to hang up mid-stream.
//! - [`procs`]: starts the `iac-agui` and scripted-runtime binaries on
//!   ephemeral loopback ports and stops them when dropped.

pub mod agui;
pub mod clients;
pub mod http;
pub mod procs;
pub mod sse;
