//! `validateRunInput`: the server's verdict on a `POST /` body, in the page.
//!
//! The body is judged in the server's order (size, JSON, envelope, the
//! `iacCode` extension, tools, content) by the very functions the server
//! calls. Two checks need the server's machine and stay there: resolving the
//! workspace on its filesystem and decoding image bytes; an accepted verdict
//! lists them in `serverChecks` so a page never mistakes "ok here" for
//! "accepted there".

use iac_agui_core::error::{ErrorCode, MessageKey, ProtocolError};
use iac_agui_core::i18n::{self, Language};
use iac_agui_core::validate::{self as core_validate, MAX_RUN_BODY_BYTES};
use serde_json::{json, Value};
use wasm_bindgen::prelude::*;

use crate::error::{from_js, to_js, Failure};

/// How the caller wants its messages: what the server would read from the
/// request headers, plus the page's own choice.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ValidateOptions {
    /// The `Accept-Language` header the request will carry.
    pub accept_language: Option<String>,
    /// The page's language, used when the body names no supported
    /// `preferredLanguage` (the body's own choice wins, as on the server).
    pub preferred_language: Option<String>,
}

impl ValidateOptions {
    /// Reads `{acceptLanguage?, preferredLanguage?}`; other keys and
    /// non-string values are ignored, as an options bag should be lenient.
    pub fn from_json(options: &Value) -> Self {
        let text = |key: &str| options.get(key).and_then(Value::as_str).map(str::to_owned);
        ValidateOptions {
            accept_language: text("acceptLanguage"),
            preferred_language: text("preferredLanguage"),
        }
    }

    /// The language of a verdict on `body` (parsed, when it was JSON).
    pub fn language(&self, body: Option<&Value>) -> Language {
        let from_body = body
            .and_then(|b| b.pointer("/forwardedProps/iacCode/preferredLanguage"))
            .and_then(Value::as_str)
            .filter(|tag| Language::from_tag(tag).is_some());
        i18n::negotiate(
            from_body.or(self.preferred_language.as_deref()),
            self.accept_language.as_deref(),
        )
    }
}

/// Judges a `POST /` body exactly as the server does before its stream
/// starts. Returns `{ok: true, threadId, runId, digest, language, resume,
/// serverChecks}` or `{ok: false, status, language, error: {code, message,
/// details}}`.
pub fn validate_run_input(body: &str, options: &ValidateOptions) -> Value {
    let parsed = serde_json::from_str::<Value>(body).ok();
    let language = options.language(parsed.as_ref());
    match judge(body, options) {
        Ok(accepted) => accepted,
        Err(error) => {
            let mut verdict = Failure::from_protocol(&error, language).verdict();
            verdict["status"] = json!(error.code.http_status());
            verdict["language"] = json!(language.as_str());
            verdict
        }
    }
}

/// `validateRunInput(body, options?)` for JavaScript.
#[wasm_bindgen(js_name = validateRunInput, unchecked_return_type = "RunInputVerdict")]
pub fn validate_run_input_js(
    body: &str,
    #[wasm_bindgen(unchecked_optional_param_type = "ValidateOptions")] options: JsValue,
) -> Result<JsValue, JsValue> {
    let options = ValidateOptions::from_json(&from_js(&options)?);
    Ok(to_js(&validate_run_input(body, &options)))
}

/// The checks in server order; the accepted verdict on success.
fn judge(body: &str, options: &ValidateOptions) -> Result<Value, ProtocolError> {
    if body.len() > MAX_RUN_BODY_BYTES {
        return Err(ProtocolError::new(
            ErrorCode::RequestTooLarge,
            MessageKey::RequestTooLarge,
        ));
    }
    let value = core_validate::parse_body(body.as_bytes())?;
    let run = core_validate::validate_run(&value, options.accept_language.as_deref())?;
    let has_images = run
        .user_message
        .as_ref()
        .is_some_and(|m| m.parts.iter().any(|p| p.media_type.is_some()));
    let mut server_checks = vec!["workspace"];
    if has_images {
        server_checks.push("imageDecoding");
    }
    Ok(json!({
        "ok": true,
        "threadId": run.input.thread_id,
        "runId": run.input.run_id,
        "digest": run.digest,
        "language": options.language(Some(&value)).as_str(),
        "resume": run.is_resume(),
        "serverChecks": server_checks,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(iac: Value, messages: Value) -> String {
        json!({
            "threadId": "t-1", "runId": "r-1", "state": {}, "messages": messages,
            "tools": [], "context": [], "forwardedProps": {"iacCode": iac},
        })
        .to_string()
    }

    fn iac() -> Value {
        json!({"schemaVersion": 1, "rosInvocationId": "inv-1", "cwd": "/w"})
    }

    fn user(content: Value) -> Value {
        json!([{"id": "m1", "role": "user", "content": content}])
    }

    #[test]
    fn accepts_a_plain_run_and_reports_the_digest_of_the_body() {
        let text = body(iac(), user(json!("hi")));
        let verdict = validate_run_input(&text, &ValidateOptions::default());
        let parsed: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(verdict["ok"], true);
        assert_eq!(
            verdict["digest"],
            iac_agui_core::json::canonical_digest(&parsed)
        );
        assert_eq!(verdict["serverChecks"], json!(["workspace"]));
        assert_eq!(verdict["resume"], false);
    }

    #[test]
    fn refuses_in_server_order_with_status() {
        let verdict = validate_run_input("{", &ValidateOptions::default());
        assert_eq!(verdict["error"]["code"], "INVALID_JSON");
        assert_eq!(verdict["status"], 400);
        let verdict = validate_run_input("[]", &ValidateOptions::default());
        assert_eq!(verdict["error"]["code"], "INVALID_INPUT");
        let huge = " ".repeat(MAX_RUN_BODY_BYTES + 1);
        let verdict = validate_run_input(&huge, &ValidateOptions::default());
        assert_eq!(verdict["error"]["code"], "REQUEST_TOO_LARGE");
        assert_eq!(verdict["status"], 413);
    }

    #[test]
    fn body_language_wins_then_page_language_then_header() {
        let mut with_pt = iac();
        with_pt["preferredLanguage"] = json!("pt_BR");
        with_pt["unknown"] = json!(1);
        let options = ValidateOptions {
            accept_language: Some("de".into()),
            preferred_language: Some("fr".into()),
        };
        let verdict = validate_run_input(&body(with_pt, user(json!("x"))), &options);
        let pt = iac_agui_core::catalog::text(MessageKey::InvalidForwardedProps, Language::Pt);
        assert_eq!(verdict["error"]["message"], pt);
        assert_eq!(verdict["language"], "pt");
        let mut bad = iac();
        bad["unknown"] = json!(1);
        let verdict = validate_run_input(&body(bad.clone(), user(json!("x"))), &options);
        let fr = iac_agui_core::catalog::text(MessageKey::InvalidForwardedProps, Language::Fr);
        assert_eq!(verdict["error"]["message"], fr);
        assert_eq!(verdict["language"], "fr");
        let header_only = ValidateOptions {
            accept_language: Some("de".into()),
            preferred_language: None,
        };
        let verdict = validate_run_input(&body(bad, user(json!("x"))), &header_only);
        let de = iac_agui_core::catalog::text(MessageKey::InvalidForwardedProps, Language::De);
        assert_eq!(verdict["error"]["message"], de);
        assert_eq!(verdict["language"], "de");
    }

    #[test]
    fn images_leave_decoding_to_the_server() {
        let content = json!([{"type": "image",
            "source": {"type": "data", "mimeType": "image/png", "value": "iVBORw0KGgo="}}]);
        let verdict = validate_run_input(&body(iac(), user(content)), &ValidateOptions::default());
        assert_eq!(verdict["ok"], true, "{verdict}");
        assert_eq!(
            verdict["serverChecks"],
            json!(["workspace", "imageDecoding"])
        );
    }
}
