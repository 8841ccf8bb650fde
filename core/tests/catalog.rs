//! The message catalog: every key in every language, every code with a text.

use iac_agui_core::catalog::text;
use iac_agui_core::{ErrorCode, Language, MessageKey, ProtocolError};

/// (key, language) pairs whose translation may equal the English text
/// because the text is a pure identifier. None today: every message is a
/// sentence. Keep this list explicit so an untranslated text is a decision,
/// not an accident.
const SAME_AS_ENGLISH: &[(MessageKey, Language)] = &[];

/// Names that must survive translation verbatim wherever English uses them.
const VERBATIM: [&str; 11] = [
    "AG-UI",
    "A2A",
    "iac-code",
    "RunAgentInput",
    "threadId",
    "rosInvocationId",
    "runId",
    "Content-Type",
    "application/json",
    "text/event-stream",
    "3",
];

fn translations() -> impl Iterator<Item = Language> {
    Language::ALL.into_iter().filter(|l| *l != Language::En)
}

#[test]
fn every_key_has_a_non_empty_text_in_every_language() {
    for key in MessageKey::ALL {
        for language in Language::ALL {
            let t = text(key, language);
            assert!(!t.trim().is_empty(), "{key:?} in {language:?} is empty");
            assert_eq!(t, t.trim(), "{key:?} in {language:?} has stray spaces");
        }
    }
}

#[test]
fn every_translation_differs_from_english_unless_listed() {
    for key in MessageKey::ALL {
        let english = text(key, Language::En);
        for language in translations() {
            let listed = SAME_AS_ENGLISH.contains(&(key, language));
            let same = text(key, language) == english;
            assert_eq!(
                same, listed,
                "{key:?} in {language:?}: same as English = {same}, listed = {listed}"
            );
        }
    }
}

#[test]
fn texts_of_one_language_are_all_different() {
    // English texts are distinct, so a repeated translation is a copy-paste slip.
    for language in Language::ALL {
        for (i, a) in MessageKey::ALL.iter().enumerate() {
            for b in &MessageKey::ALL[i + 1..] {
                assert_ne!(
                    text(*a, language),
                    text(*b, language),
                    "{a:?} and {b:?} share a text in {language:?}"
                );
            }
        }
    }
}

#[test]
fn protocol_names_stay_untranslated() {
    for key in MessageKey::ALL {
        let english = text(key, Language::En);
        for name in VERBATIM.iter().filter(|n| english.contains(**n)) {
            for language in translations() {
                assert!(
                    text(key, language).contains(name),
                    "{key:?} in {language:?} lost {name:?}"
                );
            }
        }
    }
}

#[test]
fn sentences_end_like_their_english_text() {
    for key in MessageKey::ALL {
        let sentence = text(key, Language::En).ends_with('.');
        for language in translations() {
            let t = text(key, language);
            let ends = t.ends_with('.') || t.ends_with('。');
            assert_eq!(ends, sentence, "{key:?} in {language:?}: {t}");
        }
    }
}

#[test]
fn every_error_code_has_a_text_in_every_language() {
    for code in ErrorCode::ALL {
        let error = code.error();
        assert_eq!(error.code, code);
        assert_eq!(error.key, code.default_key());
        let english = error.message(Language::En);
        for language in Language::ALL {
            let t = error.message(language);
            assert!(!t.is_empty(), "{code} has no text in {language:?}");
            if language != Language::En {
                assert_ne!(t, english, "{code} is untranslated in {language:?}");
            }
        }
    }
}

#[test]
fn default_keys_say_what_their_code_means() {
    let expected = [
        (
            ErrorCode::InvalidJson,
            "The request body is not valid JSON.",
        ),
        (
            ErrorCode::InvalidInput,
            "Invalid AG-UI RunAgentInput envelope.",
        ),
        (
            ErrorCode::DuplicateRunId,
            "The AG-UI run id has already been used.",
        ),
        (
            ErrorCode::RunIdConflict,
            "The AG-UI run id has already been used.",
        ),
        (ErrorCode::ExecutionNotFound, "The execution was not found."),
        (
            ErrorCode::IncompleteResume,
            "The resume must resolve every pending interrupt exactly once.",
        ),
        (ErrorCode::ExecutionExpired, "The interrupt has expired."),
        (
            ErrorCode::SessionBackupNotReady,
            "Session backup is still synchronizing. Retry after 3 seconds.",
        ),
        (ErrorCode::Cancelled, "The execution was cancelled."),
    ];
    for (code, english) in expected {
        assert_eq!(code.error().message(Language::En), english, "{code}");
    }
}

#[test]
fn one_message_in_each_language() {
    let key = MessageKey::ToolsNotSupported;
    let expected = [
        (Language::En, "Client-provided tools are not supported."),
        (Language::Zh, "不支持客户端提供的工具。"),
        (
            Language::Es,
            "No se admiten herramientas proporcionadas por el cliente.",
        ),
        (
            Language::Fr,
            "Les outils fournis par le client ne sont pas pris en charge.",
        ),
        (
            Language::De,
            "Vom Client bereitgestellte Tools werden nicht unterstützt.",
        ),
        (
            Language::Ja,
            "クライアントが提供するツールはサポートされていません。",
        ),
        (
            Language::Pt,
            "Ferramentas fornecidas pelo cliente não são suportadas.",
        ),
    ];
    assert_eq!(expected.len(), Language::ALL.len());
    for (language, t) in expected {
        assert_eq!(text(key, language), t, "{language:?}");
    }
}

#[test]
fn envelope_and_display_use_the_catalog() {
    let error = ProtocolError::new(ErrorCode::ThreadBusy, MessageKey::ThreadBusy);
    assert_eq!(
        error.envelope(Language::Fr),
        serde_json::json!({"error": {
            "code": "THREAD_BUSY",
            "message": "Le fil AG-UI a déjà une exécution active."
        }})
    );
    assert_eq!(
        error.to_string(),
        "THREAD_BUSY: The AG-UI thread already has an active run."
    );
}

#[test]
fn interrupt_texts_are_translated() {
    assert_eq!(
        text(MessageKey::PermissionRequired, Language::Ja),
        "許可が必要です"
    );
    assert_eq!(
        text(MessageKey::InputRequired, Language::Pt),
        "Entrada necessária"
    );
}
