//! Browser and Node bindings of the iac-agui core.
//!
//! A thin adapter: every rule lives in `iac-agui-core`, so a page judges a
//! request, a resume or an event stream exactly as the server does. The
//! JavaScript surface is a handful of functions:
//!
//! - documents go in as JSON strings (the very bytes a `fetch` would send,
//!   so size and syntax are judged on what the server receives);
//! - results come out as plain JavaScript objects, typed precisely in the
//!   generated `.d.ts` (see [`TS_TYPES`]);
//! - a refusal is a verdict `{ok: false, error: {code, message, details}}`
//!   with the message in the negotiated language; misuse of the API (a
//!   document that is not JSON where JSON is required) throws an `Error`
//!   whose `code`, `message` and `details` have the same shape.
//!
//! Every export has a plain Rust twin in its module, returning
//! `serde_json::Value`, so that the behaviour is unit-tested natively and
//! the wasm layer only converts.

use wasm_bindgen::prelude::*;

pub mod digest;
mod error;
pub mod language;
pub mod replay;
pub mod resume;
pub mod resume_check;
pub mod stream;
pub mod validate;

pub use error::Failure;

/// Installs the panic hook, so that a broken invariant shows its message in
/// the browser console instead of a bare `unreachable` trap.
#[wasm_bindgen(start)]
fn start() {
    console_error_panic_hook::set_once();
}

/// The TypeScript types the exports refer to by name.
#[wasm_bindgen(typescript_custom_section)]
pub const TS_TYPES: &'static str = include_str!("types.d.ts");
