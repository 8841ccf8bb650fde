//! Measures what the component costs: its size, the time to compile it, and
//! the mean per-call time of `validate-resume`, `validate-run-input` and of
//! one replay step under wasmtime, next to the same core calls made
//! natively. Not a test: figures depend on the machine.
//!
//! ```text
//! cargo run --release -p iac-agui-component-host --example measure [-- <iterations>]
//! ```
//!
//! Every wasmtime call includes what an embedder pays: copying the
//! arguments into the guest, the guest's JSON parsing, and lifting the
//! result. The native side parses the same JSON text, so both do the same
//! work.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use iac_agui_component_host::{default_component_path, CompiledComponent, ResumeOptions};
use iac_agui_core::json::canonical_json;
use iac_agui_core::resume_check::check_resume;
use iac_agui_core::{i18n, validate};
use serde_json::Value;

fn main() -> Result<(), String> {
    let iterations: u32 = match std::env::args().nth(1) {
        Some(n) => n.parse().map_err(|_| format!("not a count: {n}"))?,
        None => 2000,
    };
    let path = default_component_path();
    let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    println!("component: {} ({} bytes)", path.display(), bytes.len());

    let started = Instant::now();
    let compiled = CompiledComponent::from_binary(&bytes).map_err(|e| format!("{e:?}"))?;
    println!(
        "compile (cranelift, once per process): {:?}",
        started.elapsed()
    );
    let mut guest = compiled.handle();
    let started = Instant::now();
    guest
        .negotiate_language(None, None)
        .map_err(|e| format!("{e:?}"))?;
    println!("instantiate + first call: {:?}", started.elapsed());

    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/data");
    let read = |name: &str| std::fs::read_to_string(data.join(name)).expect("example data");
    let (request, resume, interrupts) = (
        read("request.json"),
        read("resume.json"),
        read("interrupts.json"),
    );
    let options = ResumeOptions {
        preferred_language: None,
        accept_language: None,
        now_ms: Some(0),
    };

    println!("\n| call | wasmtime | native | ratio |\n|---|---|---|---|");
    let wasm = mean(iterations, || {
        let verdict = guest.validate_resume(&resume, &interrupts, &options);
        assert!(verdict.expect("no trap").error.is_none());
    });
    let native = mean(iterations, || {
        let resume: Value = serde_json::from_str(&resume).expect("JSON");
        let interrupts: Value = serde_json::from_str(&interrupts).expect("JSON");
        let verdict = check_resume(&resume, &interrupts, i18n::Language::En, Some(0));
        assert!(black_box(verdict).error.is_none());
    });
    row("validate-resume (2 answers)", wasm, native);

    let wasm = mean(iterations, || {
        let verdict = guest.validate_run_input(request.as_bytes(), Some("en"));
        assert!(verdict.expect("no trap").is_ok());
    });
    let native = mean(iterations, || {
        let body = validate::parse_body(request.as_bytes()).expect("JSON object");
        assert!(black_box(validate::validate_run(&body, Some("en"))).is_ok());
    });
    row("validate-run-input", wasm, native);

    let cases = golden_cases();
    let steps: usize = cases.iter().map(|(_, _, steps)| steps).sum();
    let rounds = (iterations / 100).max(1);
    let wasm = mean(rounds, || {
        for (kind, input, _) in &cases {
            black_box(guest.replay(kind, input).expect("no trap")).expect("replays");
        }
    });
    let native = mean(rounds, || {
        for (kind, input, _) in &cases {
            let input: Value = serde_json::from_str(input).expect("JSON");
            let output = iac_agui_core::replay::replay(kind, &input).expect("replays");
            black_box(canonical_json(&output));
        }
    });
    let per_step = |total: Duration| total / u32::try_from(steps).unwrap_or(u32::MAX);
    row(
        &format!("replay, per step ({} cases, {steps} steps)", cases.len()),
        per_step(wasm),
        per_step(native),
    );
    Ok(())
}

/// Mean wall time of `f` over `n` calls, after a few warm-up calls.
fn mean(n: u32, mut f: impl FnMut()) -> Duration {
    for _ in 0..n.min(20) {
        f();
    }
    let started = Instant::now();
    for _ in 0..n {
        f();
    }
    started.elapsed() / n
}

fn row(name: &str, wasm: Duration, native: Duration) {
    let ratio = wasm.as_secs_f64() / native.as_secs_f64().max(f64::MIN_POSITIVE);
    println!("| {name} | {wasm:.1?} | {native:.1?} | {ratio:.1}× |");
}

/// Every golden case as (kind, canonical input text, number of steps).
fn golden_cases() -> Vec<(String, String, usize)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden");
    let mut dirs = vec![root];
    let mut files: Vec<PathBuf> = Vec::new();
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("golden directory") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "json") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
        .iter()
        .map(|path| {
            let case: Value =
                serde_json::from_str(&std::fs::read_to_string(path).expect("readable"))
                    .expect("JSON");
            let input = &case["input"];
            let steps = ["steps", "reopenSteps"]
                .iter()
                .filter_map(|key| input[key].as_array().map(Vec::len))
                .sum::<usize>()
                .max(1);
            let kind = case["kind"].as_str().expect("kind").to_owned();
            (kind, canonical_json(input), steps)
        })
        .collect()
}
