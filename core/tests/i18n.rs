//! Language negotiation (SPEC §13): `preferredLanguage` first, then the best
//! `Accept-Language` entry, then English.

use iac_agui_core::i18n::negotiate;
use iac_agui_core::validate::request_language;
use iac_agui_core::Language;
use serde_json::json;

#[test]
fn tags_are_read_by_their_primary_subtag() {
    let cases = [
        ("pt", Some(Language::Pt)),
        ("pt_BR", Some(Language::Pt)),
        ("pt-br", Some(Language::Pt)),
        ("ZH-cn", Some(Language::Zh)),
        ("zh-Hant-TW", Some(Language::Zh)),
        ("  de ", Some(Language::De)),
        ("JA", Some(Language::Ja)),
        ("es_419", Some(Language::Es)),
        ("fr-CA", Some(Language::Fr)),
        ("en-GB", Some(Language::En)),
        ("ko", None),
        ("portuguese", None),
        ("", None),
        ("*", None),
        ("-pt", None),
    ];
    for (tag, expected) in cases {
        assert_eq!(Language::from_tag(tag), expected, "tag {tag:?}");
    }
}

#[test]
fn preferred_language_wins_over_accept_language() {
    let cases = [
        (Some("pt_BR"), Some("de"), Language::Pt),
        (Some("ZH-cn"), Some("fr;q=1"), Language::Zh),
        (Some("en"), Some("ja"), Language::En),
        // Unsupported or empty preferences fall back to the header…
        (Some("ko"), Some("es"), Language::Es),
        (Some(""), Some("ja"), Language::Ja),
        (Some("*"), Some("de"), Language::De),
        // …and then to English.
        (Some("ko"), None, Language::En),
        (None, None, Language::En),
    ];
    for (preferred, header, expected) in cases {
        assert_eq!(
            negotiate(preferred, header),
            expected,
            "preferred {preferred:?}, header {header:?}"
        );
    }
}

#[test]
fn accept_language_is_chosen_by_q_value() {
    let cases = [
        ("fr", Language::Fr),
        ("fr;q=0.5, de;q=0.9", Language::De),
        ("en-US,en;q=0.9,zh-CN;q=0.8", Language::En),
        ("ko, ja;q=0.2", Language::Ja),
        ("ko-KR;q=1, pt-PT;q=0.1", Language::Pt),
        ("es;q=0.001", Language::Es),
        ("es;q=1.0", Language::Es),
        ("es;q=1", Language::Es),
        ("es;Q=0.4, fr;q=0.3", Language::Es),
        ("fr ; q = 0.7 , de ; q = 0.6", Language::Fr),
        ("ja;level=1;q=0.8, de;q=0.7", Language::Ja),
        // The first q of an entry counts.
        ("fr;q=0.9;q=0.1, de;q=0.5", Language::Fr),
        // `*` stands for the default language, English.
        ("*", Language::En),
        ("es;q=0.4, *;q=0.5", Language::En),
        ("*;q=0.1, zh;q=0.2", Language::Zh),
    ];
    for (header, expected) in cases {
        assert_eq!(negotiate(None, Some(header)), expected, "header {header:?}");
    }
}

#[test]
fn unusable_q_values_are_ignored() {
    let cases = [
        "ja;q=0",
        "ja;q=0.0",
        "ja;q=-0.5",
        "ja;q=1.5",
        "ja;q=1.0001",
        "ja;q=NaN",
        "ja;q=nan",
        "ja;q=inf",
        "ja;q=-inf",
        "ja;q=infinity",
        "ja;q=abc",
        "ja;q=",
        "ja;q=0.5x",
        "ja;q=1e400",
    ];
    for header in cases {
        assert_eq!(
            negotiate(None, Some(header)),
            Language::En,
            "header {header:?}"
        );
        // A usable entry after an unusable one still counts.
        let with_fallback = format!("{header}, de;q=0.1");
        assert_eq!(
            negotiate(None, Some(&with_fallback)),
            Language::De,
            "header {with_fallback:?}"
        );
    }
}

#[test]
fn ties_go_to_the_first_listed_entry() {
    let cases = [
        ("fr, de", Language::Fr),
        ("de, fr", Language::De),
        ("de;q=0.8, fr;q=0.8", Language::De),
        ("ko;q=0.8, fr;q=0.8, de;q=0.8", Language::Fr),
        ("*;q=0.5, ja;q=0.5", Language::En),
        ("ja;q=0.5, *;q=0.5", Language::Ja),
    ];
    for (header, expected) in cases {
        assert_eq!(negotiate(None, Some(header)), expected, "header {header:?}");
    }
}

#[test]
fn empty_or_useless_headers_give_english() {
    for header in ["", " ", ",", " , ,", ";q=0.5", "ko, xx-YY", "q=0.5"] {
        assert_eq!(
            negotiate(None, Some(header)),
            Language::En,
            "header {header:?}"
        );
    }
}

#[test]
fn a_request_language_is_read_even_from_an_invalid_body() {
    // A refused request is still answered in its caller's language.
    let body = json!({"forwardedProps": {"iacCode": {"preferredLanguage": "de-AT", "bogus": 1}}});
    assert_eq!(request_language(&body, Some("fr")), Language::De);
    let body = json!({"forwardedProps": {"iacCode": {"preferredLanguage": 7}}});
    assert_eq!(request_language(&body, Some("fr")), Language::Fr);
    assert_eq!(request_language(&json!([1, 2]), Some("ja")), Language::Ja);
    assert_eq!(request_language(&json!({}), None), Language::En);
}

#[test]
fn language_serialises_as_its_subtag() {
    for language in Language::ALL {
        assert_eq!(
            serde_json::to_value(language).unwrap(),
            json!(language.as_str())
        );
        assert_eq!(Language::from_tag(language.as_str()), Some(language));
    }
}
