//! Embeds the iac-agui WebAssembly component in wasmtime.
//!
//! [`CoreComponent`] loads `iac_agui_component.wasm` (crate
//! `iac-agui-component`, world `iac-agui:core/iac-agui`) once and calls its
//! exports with plain Rust values. It is the starting point for an edge
//! runtime that wants iac-agui's rules: the component decides, the host only
//! moves bytes in and out.
//!
//! The guest gets an empty WASI context: no arguments, no environment, no
//! preopened directory, no network. It imports the WASI interfaces that
//! Rust's `wasm32-wasip2` standard library links (see [`CoreComponent::imports`]),
//! and only stderr is connected, so that a panic message reaches the log.
//!
//! Every call returns `wasmtime::Result<T>`: an `Err` means the guest
//! trapped (a broken invariant, not a refusal); the instance is then thrown
//! away and the next call gets a fresh one. Refusals are ordinary values.

use std::path::{Path, PathBuf};

use wasmtime::component::{Component, Linker, ResourceTable};
use wasmtime::{Engine, Result, Store};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

pub use bindings::exports::iac_agui::core::rules::{
    AcceptedRun, EntryVerdict, Refusal, ResumeOptions, ResumeVerdict,
};

/// Environment variable naming the component file; overrides
/// [`default_component_path`].
pub const COMPONENT_ENV: &str = "IAC_AGUI_COMPONENT";

/// The component compiled for this machine: cheap to clone and to share
/// between threads; each [`CoreComponent`] made from it has its own instance.
#[derive(Clone)]
pub struct CompiledComponent {
    engine: Engine,
    component: Component,
    pre: bindings::IacAguiPre<GuestState>,
}

impl CompiledComponent {
    /// Compiles the component at `path`.
    ///
    /// # Errors
    /// The file cannot be read, is not a component, or does not export the
    /// `iac-agui:core` world.
    pub fn from_file(path: &Path) -> Result<Self> {
        let bytes = std::fs::read(path).map_err(|error| {
            wasmtime::Error::msg(format!("cannot read {}: {error}", path.display()))
        })?;
        Self::from_binary(&bytes)
    }

    /// Compiles a component from its bytes.
    ///
    /// # Errors
    /// As [`CompiledComponent::from_file`].
    pub fn from_binary(bytes: &[u8]) -> Result<Self> {
        let engine = Engine::default();
        let component = Component::from_binary(&engine, bytes)?;
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker)?;
        let pre = bindings::IacAguiPre::new(linker.instantiate_pre(&component)?)?;
        Ok(CompiledComponent {
            engine,
            component,
            pre,
        })
    }

    /// A handle that calls the component; its instance is created on the
    /// first call.
    pub fn handle(&self) -> CoreComponent {
        CoreComponent {
            compiled: self.clone(),
            live: None,
        }
    }

    /// The component's imports as `name@version` strings, sorted: the whole
    /// of what it asks from its host.
    pub fn imports(&self) -> Vec<String> {
        let ty = self.component.component_type();
        let mut names: Vec<String> = ty
            .imports(&self.engine)
            .map(|(name, _)| name.to_owned())
            .collect();
        names.sort();
        names
    }
}

/// Calls the component's exports on one instance (single-threaded, like a
/// `Store`).
pub struct CoreComponent {
    compiled: CompiledComponent,
    live: Option<Live>,
}

impl CoreComponent {
    /// Compiles the component at `path` and returns a handle to it.
    ///
    /// # Errors
    /// As [`CompiledComponent::from_file`].
    pub fn from_file(path: &Path) -> Result<Self> {
        CompiledComponent::from_file(path).map(|compiled| compiled.handle())
    }

    /// The compiled component this handle calls.
    pub fn compiled(&self) -> &CompiledComponent {
        &self.compiled
    }

    /// The server's verdict on a `POST /` body (raw bytes) before a stream
    /// opens; the workspace and image decoding are left to the caller (see
    /// [`AcceptedRun::server_checks`]).
    ///
    /// # Errors
    /// The guest trapped.
    pub fn validate_run_input(
        &mut self,
        body: &[u8],
        accept_language: Option<&str>,
    ) -> Result<std::result::Result<AcceptedRun, Refusal>> {
        self.call(|guest, store| {
            guest
                .iac_agui_core_rules()
                .call_validate_run_input(store, body, accept_language)
        })
    }

    /// The server's entry checks on a resume (`resume` and `interrupts` as
    /// JSON text; see the WIT for their shapes).
    ///
    /// # Errors
    /// The guest trapped.
    pub fn validate_resume(
        &mut self,
        resume: &str,
        interrupts: &str,
        options: &ResumeOptions,
    ) -> Result<ResumeVerdict> {
        self.call(|guest, store| {
            guest
                .iac_agui_core_rules()
                .call_validate_resume(store, resume, interrupts, options)
        })
    }

    /// The canonical JSON text of a document (`Err` when it is not JSON).
    ///
    /// # Errors
    /// The guest trapped.
    pub fn canonical_json(
        &mut self,
        document: &str,
    ) -> Result<std::result::Result<String, String>> {
        self.call(|guest, store| {
            guest
                .iac_agui_core_rules()
                .call_canonical_json(store, document)
        })
    }

    /// SHA-256 (hex) of the canonical JSON of a document.
    ///
    /// # Errors
    /// The guest trapped.
    pub fn canonical_digest(
        &mut self,
        document: &str,
    ) -> Result<std::result::Result<String, String>> {
        self.call(|guest, store| {
            guest
                .iac_agui_core_rules()
                .call_canonical_digest(store, document)
        })
    }

    /// The language the server would answer in.
    ///
    /// # Errors
    /// The guest trapped.
    pub fn negotiate_language(
        &mut self,
        preferred: Option<&str>,
        accept_language: Option<&str>,
    ) -> Result<String> {
        self.call(|guest, store| {
            guest
                .iac_agui_core_rules()
                .call_negotiate_language(store, preferred, accept_language)
        })
    }

    /// Replays a golden case (`kind` and the JSON text of its `input`);
    /// the outputs come back as canonical JSON text.
    ///
    /// # Errors
    /// The guest trapped.
    pub fn replay(
        &mut self,
        kind: &str,
        input: &str,
    ) -> Result<std::result::Result<String, String>> {
        self.call(|guest, store| guest.iac_agui_core_replay().call_replay(store, kind, input))
    }

    /// Runs `f` on the live instance, creating it first if needed; a trap
    /// discards the instance, whose state can no longer be trusted.
    fn call<T>(
        &mut self,
        f: impl FnOnce(&bindings::IacAgui, &mut Store<GuestState>) -> Result<T>,
    ) -> Result<T> {
        let live = match self.live.take() {
            Some(live) => live,
            None => self.instantiate()?,
        };
        let Live {
            mut store,
            instance,
        } = live;
        let result = f(&instance, &mut store);
        if result.is_ok() {
            self.live = Some(Live { store, instance });
        }
        result
    }

    fn instantiate(&self) -> Result<Live> {
        let state = GuestState {
            ctx: WasiCtx::builder().inherit_stderr().build(),
            table: ResourceTable::new(),
        };
        let mut store = Store::new(&self.compiled.engine, state);
        let instance = self.compiled.pre.instantiate(&mut store)?;
        Ok(Live { store, instance })
    }
}

/// Where `.ci/component.sh` leaves the size-optimised component:
/// `$IAC_AGUI_COMPONENT` if set, else
/// `<target dir>/wasm32-wasip2/component/iac_agui_component.wasm`, the target
/// dir being `$CARGO_TARGET_DIR` or the workspace's `target/`.
pub fn default_component_path() -> PathBuf {
    if let Some(path) = std::env::var_os(COMPONENT_ENV) {
        return PathBuf::from(path);
    }
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"),
        PathBuf::from,
    );
    target.join("wasm32-wasip2/component/iac_agui_component.wasm")
}

/// The generated bindings of the `iac-agui` world.
#[allow(missing_docs, unreachable_pub)]
mod bindings {
    wasmtime::component::bindgen!({
        path: "../component/wit",
        world: "iac-agui",
    });
}

/// A store with its instance; they live and die together.
struct Live {
    store: Store<GuestState>,
    instance: bindings::IacAgui,
}

/// What the guest's WASI imports see: an empty context and its resources.
struct GuestState {
    ctx: WasiCtx,
    table: ResourceTable,
}

impl WasiView for GuestState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.ctx,
            table: &mut self.table,
        }
    }
}

/// A run-input verdict as JSON, in the shape of the browser package's
/// `validateRunInput`: `{ok: true, threadId, runId, digest, language,
/// resume, serverChecks}` or `{ok: false, status, language, error: {code,
/// message, details}}`.
pub fn verdict_json(verdict: &std::result::Result<AcceptedRun, Refusal>) -> serde_json::Value {
    match verdict {
        Ok(run) => serde_json::json!({
            "ok": true,
            "threadId": run.thread_id,
            "runId": run.run_id,
            "digest": run.digest,
            "language": run.language,
            "resume": run.resume,
            "serverChecks": run.server_checks,
        }),
        Err(refusal) => serde_json::json!({
            "ok": false,
            "status": refusal.status,
            "language": refusal.language,
            "error": refusal_json(refusal),
        }),
    }
}

/// A refusal as `{code, message, details}`; `details` is `null` when absent.
pub fn refusal_json(refusal: &Refusal) -> serde_json::Value {
    let details = refusal
        .details
        .as_deref()
        .and_then(|text| serde_json::from_str(text).ok())
        .unwrap_or(serde_json::Value::Null);
    serde_json::json!({
        "code": refusal.code,
        "message": refusal.message,
        "details": details,
    })
}

/// A resume verdict as JSON, in the shape of the browser package's
/// `validateResume`: `{ok, error, entries: [{interruptId, ok, error}],
/// missing}`, errors as [`refusal_json`] or `null`.
pub fn resume_verdict_json(verdict: &ResumeVerdict) -> serde_json::Value {
    let error = |e: &Option<Refusal>| e.as_ref().map_or(serde_json::Value::Null, refusal_json);
    let entries: Vec<serde_json::Value> = verdict
        .entries
        .iter()
        .map(|entry| {
            serde_json::json!({
                "interruptId": entry.interrupt_id,
                "ok": entry.error.is_none(),
                "error": error(&entry.error),
            })
        })
        .collect();
    serde_json::json!({
        "ok": verdict.error.is_none(),
        "error": error(&verdict.error),
        "entries": entries,
        "missing": verdict.missing,
    })
}
