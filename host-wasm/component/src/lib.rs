//! The iac-agui core as a WebAssembly component.
//!
//! An adapter and nothing more: every export of the `iac-agui:core` world
//! (`wit/world.wit`) converts its arguments, calls the function of
//! `iac-agui-core` that the native server and the browser package call, and
//! converts the answer back. No rule is decided here, so a component host
//! gives byte for byte the verdicts and transcripts of the other two.

use iac_agui_core::i18n::{self, Language};
use iac_agui_core::json::{canonical_digest, canonical_json};
use iac_agui_core::resume_check::check_resume;
use iac_agui_core::validate::{self, ValidatedRun, MAX_RUN_BODY_BYTES};
use iac_agui_core::{ErrorCode, MessageKey, ProtocolError};
use serde_json::Value;

use bindings::exports::iac_agui::core::{replay, rules};

/// The WIT bindings. The export glue is generated unsafe code (raw ABI
/// pointers), so this is the one place the crate allows it.
#[allow(unsafe_code, missing_docs, unreachable_pub, clippy::all)]
mod bindings {
    wit_bindgen::generate!({
        path: "wit",
        world: "iac-agui",
    });

    use super::Component;
    export!(Component with_types_in self);
}

/// The component's implementation of every exported interface.
struct Component;

impl rules::Guest for Component {
    fn validate_run_input(
        body: Vec<u8>,
        accept_language: Option<String>,
    ) -> Result<rules::AcceptedRun, rules::Refusal> {
        let accept_language = accept_language.as_deref();
        if body.len() > MAX_RUN_BODY_BYTES {
            let error = ProtocolError::new(ErrorCode::RequestTooLarge, MessageKey::RequestTooLarge);
            return Err(refusal(&error, i18n::negotiate(None, accept_language)));
        }
        let value = validate::parse_body(&body)
            .map_err(|error| refusal(&error, i18n::negotiate(None, accept_language)))?;
        validate::validate_run(&value, accept_language)
            .map(accepted)
            .map_err(|error| refusal(&error, validate::request_language(&value, accept_language)))
    }

    fn validate_resume(
        resume: String,
        interrupts: String,
        options: rules::ResumeOptions,
    ) -> rules::ResumeVerdict {
        let language = i18n::negotiate(
            options.preferred_language.as_deref(),
            options.accept_language.as_deref(),
        );
        let documents = serde_json::from_str::<Value>(&resume)
            .and_then(|resume| Ok((resume, serde_json::from_str::<Value>(&interrupts)?)));
        let Ok((resume, interrupts)) = documents else {
            let error = ProtocolError::new(ErrorCode::InvalidJson, MessageKey::InvalidJson);
            return rules::ResumeVerdict {
                error: Some(refusal(&error, language)),
                entries: Vec::new(),
                missing: Vec::new(),
            };
        };
        let verdict = check_resume(&resume, &interrupts, language, options.now_ms);
        rules::ResumeVerdict {
            error: verdict.error.map(|error| refusal(&error, language)),
            entries: verdict
                .entries
                .into_iter()
                .map(|entry| rules::EntryVerdict {
                    interrupt_id: entry.interrupt_id,
                    error: entry.error.map(|error| refusal(&error, language)),
                })
                .collect(),
            missing: verdict.missing,
        }
    }

    fn canonical_json(document: String) -> Result<String, String> {
        parse(&document).map(|value| canonical_json(&value))
    }

    fn canonical_digest(document: String) -> Result<String, String> {
        parse(&document).map(|value| canonical_digest(&value))
    }

    fn negotiate_language(preferred: Option<String>, accept_language: Option<String>) -> String {
        i18n::negotiate(preferred.as_deref(), accept_language.as_deref())
            .as_str()
            .to_owned()
    }
}

impl replay::Guest for Component {
    fn replay(kind: String, input: String) -> Result<String, String> {
        let input = parse(&input)?;
        iac_agui_core::replay::replay(&kind, &input).map(|output| canonical_json(&output))
    }
}

/// Reads a JSON argument; the error names only the position, never the text.
fn parse(document: &str) -> Result<Value, String> {
    serde_json::from_str(document).map_err(|error| {
        format!(
            "not a JSON document (line {}, column {})",
            error.line(),
            error.column()
        )
    })
}

fn accepted(run: ValidatedRun) -> rules::AcceptedRun {
    let has_images = run
        .user_message
        .as_ref()
        .is_some_and(|message| message.parts.iter().any(|part| part.media_type.is_some()));
    let mut server_checks = vec!["workspace".to_owned()];
    if has_images {
        server_checks.push("imageDecoding".to_owned());
    }
    rules::AcceptedRun {
        resume: run.is_resume(),
        thread_id: run.input.thread_id,
        run_id: run.input.run_id,
        digest: run.digest,
        language: run.language.as_str().to_owned(),
        server_checks,
    }
}

fn refusal(error: &ProtocolError, language: Language) -> rules::Refusal {
    rules::Refusal {
        code: error.code.as_str().to_owned(),
        status: error.code.http_status(),
        message: error.message(language).to_owned(),
        language: language.as_str().to_owned(),
        details: error.details.as_ref().map(canonical_json),
    }
}
