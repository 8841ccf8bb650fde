//! The `{code, message, details}` error shape of every export.

use iac_agui_core::{ErrorCode, Language, MessageKey, ProtocolError};
use serde_json::{json, Value};
use wasm_bindgen::prelude::*;

/// A refusal as JavaScript sees it: the stable protocol code, its message in
/// the chosen language, and optional machine-readable details.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// The protocol code, e.g. `"INVALID_INPUT"`.
    pub code: &'static str,
    /// The catalog text in the chosen language.
    pub message: &'static str,
    /// Details such as the JSON-Schema failure of a resume payload.
    pub details: Option<Value>,
}

impl Failure {
    /// The failure of a core refusal, translated.
    pub fn from_protocol(error: &ProtocolError, language: Language) -> Self {
        Failure {
            code: error.code.as_str(),
            message: error.message(language),
            details: error.details.clone(),
        }
    }

    /// A document argument that is not JSON.
    pub(crate) fn not_json(language: Language) -> Self {
        let error = ProtocolError::new(ErrorCode::InvalidJson, MessageKey::InvalidJson);
        Failure::from_protocol(&error, language)
    }

    /// `{code, message, details}`; `details` is `null` when absent so that
    /// the shape is the same for every error.
    pub fn to_json(&self) -> Value {
        json!({
            "code": self.code,
            "message": self.message,
            "details": self.details.clone().unwrap_or(Value::Null),
        })
    }

    /// The verdict of a refused document: `{ok: false, error}`.
    pub fn verdict(&self) -> Value {
        json!({ "ok": false, "error": self.to_json() })
    }
}

/// Throws a failure as a JavaScript `Error` named `IacAguiError` that also
/// carries `code` and `details`, so callers can branch on the code while
/// keeping a stack trace.
impl From<Failure> for JsValue {
    fn from(failure: Failure) -> JsValue {
        let error = js_sys::Error::new(failure.message);
        error.set_name("IacAguiError");
        let details = failure.details.as_ref().map_or(JsValue::NULL, to_js);
        // Setting a property on a fresh ordinary object cannot fail.
        let _ = js_sys::Reflect::set(&error, &"code".into(), &failure.code.into());
        let _ = js_sys::Reflect::set(&error, &"details".into(), &details);
        error.into()
    }
}

/// Turns a JSON value into the equivalent JavaScript value by parsing its
/// canonical text, so numbers and key order match what the server sends.
pub(crate) fn to_js(value: &Value) -> JsValue {
    let text = iac_agui_core::json::canonical_json(value);
    // The text was produced by serde_json, so JSON.parse accepts it.
    js_sys::JSON::parse(&text).unwrap_or(JsValue::NULL)
}

/// Reads a plain JavaScript value as JSON (`undefined`/`null` → `{}`, the
/// empty options bag).
pub(crate) fn from_js(options: &JsValue) -> Result<Value, JsValue> {
    if options.is_undefined() || options.is_null() {
        return Ok(Value::Object(Default::default()));
    }
    let text = js_sys::JSON::stringify(options)?;
    let text = String::from(text);
    serde_json::from_str(&text)
        .map_err(|_| js_sys::TypeError::new("expected a plain JSON value").into())
}
