//! Judges a run request and a resume with the iac-agui component, the way an
//! edge runtime would before forwarding them to the server.
//!
//! ```text
//! cargo run -p iac-agui-component-host --example judge -- \
//!     <request.json> <resume.json> <interrupts.json> [accept-language]
//! ```
//!
//! `request.json` and `resume.json` are `POST /` bodies (the resume answers
//! interrupts in its `resume` array); `interrupts.json` is the `interrupts`
//! array of the `RUN_FINISHED` outcome the resume answers. Prints one JSON
//! verdict per line (`request`, `resume`, `answers`); a refusal is a
//! verdict, not a failure of the program. The answers are judged at the
//! current time, so interrupts past their `expiresAt` make them
//! `EXECUTION_EXPIRED`.
//! The component is found as in `default_component_path` (set
//! `IAC_AGUI_COMPONENT` to point elsewhere).

use std::path::PathBuf;
use std::process::ExitCode;

use iac_agui_component_host::{
    default_component_path, resume_verdict_json, verdict_json, CoreComponent, ResumeOptions,
};
use serde_json::json;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("judge: {error}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [request, resume, interrupts, rest @ ..] = args.as_slice() else {
        return Err(
            "usage: judge <request.json> <resume.json> <interrupts.json> [accept-language]".into(),
        );
    };
    let accept_language = rest.first().map(String::as_str);
    let read = |path: &String| {
        std::fs::read(PathBuf::from(path)).map_err(|error| format!("cannot read {path}: {error}"))
    };
    let (request, resume, interrupts) = (read(request)?, read(resume)?, read(interrupts)?);
    let now_ms = || {
        // The host owns the clock; the component is only told the time.
        let since_epoch = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        i64::try_from(since_epoch.as_millis()).unwrap_or(i64::MAX)
    };

    let path = default_component_path();
    let mut component = CoreComponent::from_file(&path)
        .map_err(|error| format!("cannot load {}: {error:?}", path.display()))?;
    let trapped = |error: wasmtime::Error| format!("the component trapped: {error:?}");

    let verdict = component
        .validate_run_input(&request, accept_language)
        .map_err(trapped)?;
    println!("{}", json!({"request": verdict_json(&verdict)}));

    let verdict = component
        .validate_run_input(&resume, accept_language)
        .map_err(trapped)?;
    println!("{}", json!({"resume": verdict_json(&verdict)}));

    let text = |bytes: Vec<u8>, what: &str| {
        String::from_utf8(bytes).map_err(|_| format!("{what} is not UTF-8"))
    };
    let options = ResumeOptions {
        preferred_language: None,
        accept_language: accept_language.map(str::to_owned),
        now_ms: Some(now_ms()),
    };
    let verdict = component
        .validate_resume(
            &text(resume, "the resume")?,
            &text(interrupts, "the interrupts")?,
            &options,
        )
        .map_err(trapped)?;
    println!("{}", json!({"answers": resume_verdict_json(&verdict)}));
    Ok(())
}
