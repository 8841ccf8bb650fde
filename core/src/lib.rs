//! The sans-IO protocol core of iac-agui.
//!
//! It knows the rules of the AG-UI front end of the iac-code agent and
//! nothing of the world: no sockets, files, clocks, threads or global
//! randomness. Hosts (the native server, the browser package, the wasm
//! component) feed it plain values and perform the effects it returns.
//!
//! - [`agui`] and [`a2a`]: the wire types of both sides.
//! - [`validate`]: request validation (SPEC §2–3).
//! - [`error`], [`catalog`], [`i18n`]: error codes, their messages in seven
//!   languages, and language negotiation.
//! - [`json`]: canonical JSON and digests; [`ids`]: seeded fresh ids.
#![cfg_attr(not(test), warn(missing_docs))]

pub mod a2a;
pub mod agui;
pub mod catalog;
pub mod document;
pub mod error;
pub mod i18n;
pub mod ids;
pub mod json;
pub mod machine;
pub mod mapper;
pub mod replay;
pub mod resume_check;
pub mod schema;
pub mod sse;
pub mod validate;
pub mod verifier;

pub use error::{ErrorCode, MessageKey, ProtocolError};
pub use i18n::Language;
