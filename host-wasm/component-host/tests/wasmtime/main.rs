//! The component under wasmtime, checked against the native core: the
//! golden corpus byte for byte (`parity`), the rule exports and the
//! component's imports (`rules`).
//!
//! One test binary, so the component is compiled once: it is found as in
//! [`default_component_path`] (`.ci/component.sh` builds it and sets
//! `IAC_AGUI_COMPONENT`). A missing component is a failure, not a skip.

use std::sync::OnceLock;

use iac_agui_component_host::{default_component_path, CompiledComponent, CoreComponent};

mod parity;
mod rules;

/// A fresh instance of the component, compiled once per test binary
/// (compiling is the slow part).
fn load_component() -> CoreComponent {
    static COMPILED: OnceLock<CompiledComponent> = OnceLock::new();
    COMPILED
        .get_or_init(|| {
            let path = default_component_path();
            let started = std::time::Instant::now();
            let compiled = CompiledComponent::from_file(&path).unwrap_or_else(|error| {
                panic!(
                    "cannot load the component at {}: {error:?}\n\
                     build it with .ci/component.sh (or set IAC_AGUI_COMPONENT)",
                    path.display()
                )
            });
            println!("compiled {} in {:?}", path.display(), started.elapsed());
            compiled
        })
        .handle()
}
