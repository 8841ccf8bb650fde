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
//!
//! Running the end-to-end suites (`tests/e2e_*.rs`):
//!
//! ```text
//! .ci/e2e-setup.sh              # npm ci in tests/agui-clients (Node >= 18)
//! cargo test --workspace        # builds both binaries, then runs everything
//! ```
//!
//! `cargo test -p iac-agui-tests` alone does not build the binaries of the
//! other packages: run `cargo build -p iac-agui -p iac-agui-scripted-runtime`
//! first (a binary older than its sources is refused). Without the Node
//! packages the suites fail with the setup command; they never skip.

pub mod agui;
pub mod clients;
pub mod http;
pub mod procs;
pub mod sse;
