//! The error codes of SPEC §12: wire spelling and HTTP status before SSE.

use iac_agui_core::ErrorCode;

/// SPEC §12, row by row. `None`: the code only ever appears as `RUN_ERROR`.
const TABLE: [(ErrorCode, &str, Option<u16>); 25] = [
    (ErrorCode::InvalidJson, "INVALID_JSON", Some(400)),
    (ErrorCode::InvalidInput, "INVALID_INPUT", Some(400)),
    (
        ErrorCode::UnsupportedMediaType,
        "UNSUPPORTED_MEDIA_TYPE",
        Some(415),
    ),
    (ErrorCode::RequestTooLarge, "REQUEST_TOO_LARGE", Some(413)),
    (ErrorCode::Unauthorized, "UNAUTHORIZED", Some(401)),
    (ErrorCode::NotAcceptable, "NOT_ACCEPTABLE", Some(406)),
    (ErrorCode::DuplicateRunId, "DUPLICATE_RUN_ID", Some(409)),
    (ErrorCode::RunIdConflict, "RUN_ID_CONFLICT", Some(409)),
    (ErrorCode::ThreadBusy, "THREAD_BUSY", Some(409)),
    (
        ErrorCode::ThreadBindingConflict,
        "THREAD_BINDING_CONFLICT",
        Some(409),
    ),
    (ErrorCode::ResumeRequired, "RESUME_REQUIRED", Some(409)),
    (ErrorCode::ExecutionLost, "EXECUTION_LOST", Some(409)),
    (ErrorCode::StateUnavailable, "STATE_UNAVAILABLE", Some(503)),
    (
        ErrorCode::ExecutionNotFound,
        "EXECUTION_NOT_FOUND",
        Some(404),
    ),
    (ErrorCode::IncompleteResume, "INCOMPLETE_RESUME", None),
    (ErrorCode::UnknownInterrupt, "UNKNOWN_INTERRUPT", None),
    (
        ErrorCode::ResumePayloadInvalid,
        "RESUME_PAYLOAD_INVALID",
        None,
    ),
    (
        ErrorCode::ResumeAlreadyApplied,
        "RESUME_ALREADY_APPLIED",
        None,
    ),
    (ErrorCode::ExecutionExpired, "EXECUTION_EXPIRED", None),
    (
        ErrorCode::StatePersistenceFailed,
        "STATE_PERSISTENCE_FAILED",
        None,
    ),
    (ErrorCode::A2aUnavailable, "A2A_UNAVAILABLE", None),
    (ErrorCode::A2aProtocolError, "A2A_PROTOCOL_ERROR", None),
    (ErrorCode::A2aExecutionFailed, "A2A_EXECUTION_FAILED", None),
    (ErrorCode::Cancelled, "CANCELLED", None),
    (
        ErrorCode::SessionBackupNotReady,
        "SESSION_BACKUP_NOT_READY",
        None,
    ),
];

#[test]
fn the_table_lists_every_code_in_spec_order() {
    let codes: Vec<ErrorCode> = TABLE.iter().map(|(code, _, _)| *code).collect();
    assert_eq!(codes, ErrorCode::ALL.to_vec());
}

#[test]
fn wire_spelling_matches_the_spec() {
    for (code, wire, _) in TABLE {
        assert_eq!(code.as_str(), wire);
        assert_eq!(code.to_string(), wire);
        assert_eq!(serde_json::to_value(code).unwrap(), wire);
        let read: ErrorCode = serde_json::from_value(wire.into()).unwrap();
        assert_eq!(read, code);
    }
}

#[test]
fn http_status_before_the_stream_matches_the_spec() {
    for (code, wire, status) in TABLE {
        // RUN_ERROR-only codes answer 500, which a correct host never sends.
        assert_eq!(code.http_status(), status.unwrap_or(500), "{wire}");
    }
}

#[test]
fn envelopes_carry_the_code_and_the_text() {
    for code in ErrorCode::ALL {
        let envelope = code.error().envelope(iac_agui_core::Language::Es);
        assert_eq!(envelope["error"]["code"], code.as_str());
        let message = envelope["error"]["message"].as_str().unwrap();
        assert_eq!(message, code.error().message(iac_agui_core::Language::Es));
        assert_eq!(envelope.as_object().unwrap().len(), 1);
        assert_eq!(envelope["error"].as_object().unwrap().len(), 2);
    }
}
