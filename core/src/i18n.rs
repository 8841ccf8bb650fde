//! Languages of the server's own messages and their negotiation (SPEC §13).

use serde::{Deserialize, Serialize};

/// A language the message catalog speaks.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    /// English, the server default.
    #[default]
    En,
    /// Chinese.
    Zh,
    /// Spanish.
    Es,
    /// French.
    Fr,
    /// German.
    De,
    /// Japanese.
    Ja,
    /// Portuguese.
    Pt,
}

impl Language {
    /// Every supported language.
    pub const ALL: [Language; 7] = [
        Language::En,
        Language::Zh,
        Language::Es,
        Language::Fr,
        Language::De,
        Language::Ja,
        Language::Pt,
    ];

    /// The primary subtag, e.g. `"pt"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Language::En => "en",
            Language::Zh => "zh",
            Language::Es => "es",
            Language::Fr => "fr",
            Language::De => "de",
            Language::Ja => "ja",
            Language::Pt => "pt",
        }
    }

    /// Reads a language tag: lower-cased, `_` read as `-`, primary subtag
    /// only (`pt_BR` → `pt`). `None` when the language is not supported.
    pub fn from_tag(tag: &str) -> Option<Language> {
        let tag = tag.trim().to_ascii_lowercase().replace('_', "-");
        let primary = tag.split('-').next().unwrap_or_default();
        Language::ALL.into_iter().find(|l| l.as_str() == primary)
    }
}

/// Chooses the language of one request: a supported `preferredLanguage`
/// first, else the best supported `Accept-Language` entry by q-value (entries
/// with q ≤ 0, q > 1 or an unreadable q are ignored; `*` means the default),
/// else English.
pub fn negotiate(preferred: Option<&str>, accept_language: Option<&str>) -> Language {
    if let Some(lang) = preferred.and_then(Language::from_tag) {
        return lang;
    }
    accept_language
        .and_then(best_accept_language)
        .unwrap_or_default()
}

fn best_accept_language(header: &str) -> Option<Language> {
    let mut best: Option<(f64, Language)> = None;
    for entry in header.split(',') {
        let mut pieces = entry.split(';');
        let tag = pieces.next().unwrap_or_default().trim();
        if tag.is_empty() {
            continue;
        }
        let mut q = 1.0_f64;
        for param in pieces {
            let Some((name, value)) = param.split_once('=') else {
                continue;
            };
            if name.trim().eq_ignore_ascii_case("q") {
                // The first q counts, as in the reference; unreadable is NaN
                // and therefore ignored below.
                q = value.trim().parse::<f64>().unwrap_or(f64::NAN);
                break;
            }
        }
        if !q.is_finite() || q <= 0.0 || q > 1.0 {
            continue;
        }
        let lang = if tag == "*" {
            Some(Language::default())
        } else {
            Language::from_tag(tag)
        };
        let Some(lang) = lang else { continue };
        // Strictly greater: the first entry wins ties, as listed by the client.
        if best.is_none_or(|(best_q, _)| q > best_q) {
            best = Some((q, lang));
        }
    }
    best.map(|(_, lang)| lang)
}
