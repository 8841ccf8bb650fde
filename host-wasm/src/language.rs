//! `negotiateLanguage` and the list of supported languages (SPEC §13).

use iac_agui_core::i18n::{negotiate, Language};
use wasm_bindgen::prelude::*;

/// The language the server would answer in: a supported `preferred` tag
/// first, else the best `Accept-Language` entry, else English.
#[wasm_bindgen(js_name = negotiateLanguage, unchecked_return_type = "Language")]
pub fn negotiate_language(
    preferred: Option<String>,
    #[wasm_bindgen(js_name = "acceptLanguage")] accept_language: Option<String>,
) -> String {
    negotiate(preferred.as_deref(), accept_language.as_deref())
        .as_str()
        .to_owned()
}

/// Every language the message catalog speaks, default first.
#[wasm_bindgen(js_name = supportedLanguages, unchecked_return_type = "Language[]")]
pub fn supported_languages() -> Vec<String> {
    Language::ALL
        .iter()
        .map(|l| l.as_str().to_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preferred_wins_then_header_q_values() {
        assert_eq!(
            negotiate_language(Some("ja-JP".into()), Some("de".into())),
            "ja"
        );
        assert_eq!(
            negotiate_language(Some("xx".into()), Some("es;q=0.4, fr;q=0.9".into())),
            "fr"
        );
        assert_eq!(negotiate_language(None, None), "en");
        assert_eq!(supported_languages()[0], "en");
    }
}
