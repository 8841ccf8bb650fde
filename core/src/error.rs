//! Protocol error codes (SPEC §12) and the stable message keys that explain them.
//!
//! A [`ProtocolError`] is what every rule of the core returns when it refuses
//! something: a stable [`ErrorCode`] for machines and a [`MessageKey`] whose
//! text, in the caller's language, comes from [`crate::catalog`].

use serde::{Deserialize, Serialize};

use crate::catalog;
use crate::i18n::Language;

/// Every error code of the protocol (SPEC §12).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[non_exhaustive]
pub enum ErrorCode {
    /// The body is not JSON.
    InvalidJson,
    /// Envelope, extension, message content or workspace invalid.
    InvalidInput,
    /// Wrong Content-Type.
    UnsupportedMediaType,
    /// Body over the limit.
    RequestTooLarge,
    /// Bearer token missing or wrong.
    Unauthorized,
    /// The Accept header rules out `text/event-stream`.
    NotAcceptable,
    /// The same request digest reused an existing run id.
    DuplicateRunId,
    /// A different request reused an existing run id.
    RunIdConflict,
    /// The thread already has an active run.
    ThreadBusy,
    /// Workspace or caller conflicts with the thread binding.
    ThreadBindingConflict,
    /// The thread waits for interrupt answers.
    ResumeRequired,
    /// Adapter, A2A task or iac-code session cannot be recovered.
    ExecutionLost,
    /// The thread state cannot be read or committed at admission.
    StateUnavailable,
    /// Cancel: no such execution.
    ExecutionNotFound,
    /// Missing pending interrupts or duplicate ids.
    IncompleteResume,
    /// The resume names an unknown interrupt.
    UnknownInterrupt,
    /// Payload missing or not valid for its schema.
    ResumePayloadInvalid,
    /// Answer already applied, or conflicts with one that was.
    ResumeAlreadyApplied,
    /// The interrupt expired.
    ExecutionExpired,
    /// Recovery-critical state could not be persisted.
    StatePersistenceFailed,
    /// The local A2A service is unavailable or refused.
    A2aUnavailable,
    /// Task, context or session identity conflicts with the mapping.
    A2aProtocolError,
    /// The A2A task ended in failure.
    A2aExecutionFailed,
    /// The execution was cancelled.
    Cancelled,
    /// Retryable: the session backup is still synchronising.
    SessionBackupNotReady,
}

impl ErrorCode {
    /// Every code, in SPEC order.
    pub const ALL: [ErrorCode; 25] = [
        ErrorCode::InvalidJson,
        ErrorCode::InvalidInput,
        ErrorCode::UnsupportedMediaType,
        ErrorCode::RequestTooLarge,
        ErrorCode::Unauthorized,
        ErrorCode::NotAcceptable,
        ErrorCode::DuplicateRunId,
        ErrorCode::RunIdConflict,
        ErrorCode::ThreadBusy,
        ErrorCode::ThreadBindingConflict,
        ErrorCode::ResumeRequired,
        ErrorCode::ExecutionLost,
        ErrorCode::StateUnavailable,
        ErrorCode::ExecutionNotFound,
        ErrorCode::IncompleteResume,
        ErrorCode::UnknownInterrupt,
        ErrorCode::ResumePayloadInvalid,
        ErrorCode::ResumeAlreadyApplied,
        ErrorCode::ExecutionExpired,
        ErrorCode::StatePersistenceFailed,
        ErrorCode::A2aUnavailable,
        ErrorCode::A2aProtocolError,
        ErrorCode::A2aExecutionFailed,
        ErrorCode::Cancelled,
        ErrorCode::SessionBackupNotReady,
    ];

    /// The wire spelling, e.g. `"THREAD_BUSY"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidJson => "INVALID_JSON",
            ErrorCode::InvalidInput => "INVALID_INPUT",
            ErrorCode::UnsupportedMediaType => "UNSUPPORTED_MEDIA_TYPE",
            ErrorCode::RequestTooLarge => "REQUEST_TOO_LARGE",
            ErrorCode::Unauthorized => "UNAUTHORIZED",
            ErrorCode::NotAcceptable => "NOT_ACCEPTABLE",
            ErrorCode::DuplicateRunId => "DUPLICATE_RUN_ID",
            ErrorCode::RunIdConflict => "RUN_ID_CONFLICT",
            ErrorCode::ThreadBusy => "THREAD_BUSY",
            ErrorCode::ThreadBindingConflict => "THREAD_BINDING_CONFLICT",
            ErrorCode::ResumeRequired => "RESUME_REQUIRED",
            ErrorCode::ExecutionLost => "EXECUTION_LOST",
            ErrorCode::StateUnavailable => "STATE_UNAVAILABLE",
            ErrorCode::ExecutionNotFound => "EXECUTION_NOT_FOUND",
            ErrorCode::IncompleteResume => "INCOMPLETE_RESUME",
            ErrorCode::UnknownInterrupt => "UNKNOWN_INTERRUPT",
            ErrorCode::ResumePayloadInvalid => "RESUME_PAYLOAD_INVALID",
            ErrorCode::ResumeAlreadyApplied => "RESUME_ALREADY_APPLIED",
            ErrorCode::ExecutionExpired => "EXECUTION_EXPIRED",
            ErrorCode::StatePersistenceFailed => "STATE_PERSISTENCE_FAILED",
            ErrorCode::A2aUnavailable => "A2A_UNAVAILABLE",
            ErrorCode::A2aProtocolError => "A2A_PROTOCOL_ERROR",
            ErrorCode::A2aExecutionFailed => "A2A_EXECUTION_FAILED",
            ErrorCode::Cancelled => "CANCELLED",
            ErrorCode::SessionBackupNotReady => "SESSION_BACKUP_NOT_READY",
        }
    }

    /// The HTTP status used when this code is answered before the SSE stream
    /// starts. Codes that only ever appear as `RUN_ERROR` answer 500, which a
    /// correct host never sends.
    pub fn http_status(self) -> u16 {
        match self {
            ErrorCode::InvalidJson | ErrorCode::InvalidInput => 400,
            ErrorCode::Unauthorized => 401,
            ErrorCode::ExecutionNotFound => 404,
            ErrorCode::NotAcceptable => 406,
            ErrorCode::DuplicateRunId
            | ErrorCode::RunIdConflict
            | ErrorCode::ThreadBusy
            | ErrorCode::ThreadBindingConflict
            | ErrorCode::ResumeRequired
            | ErrorCode::ExecutionLost => 409,
            ErrorCode::RequestTooLarge => 413,
            ErrorCode::UnsupportedMediaType => 415,
            ErrorCode::StateUnavailable => 503,
            _ => 500,
        }
    }

    /// The message a host uses when it has nothing more precise to say for
    /// this code, so that no code can ever be answered without a text.
    /// Rules that know better pick their own key (e.g. `INVALID_INPUT` with
    /// [`MessageKey::ToolsNotSupported`]).
    pub fn default_key(self) -> MessageKey {
        match self {
            ErrorCode::InvalidJson => MessageKey::InvalidJson,
            ErrorCode::InvalidInput => MessageKey::InvalidEnvelope,
            ErrorCode::UnsupportedMediaType => MessageKey::UnsupportedMediaType,
            ErrorCode::RequestTooLarge => MessageKey::RequestTooLarge,
            ErrorCode::Unauthorized => MessageKey::Unauthorized,
            ErrorCode::NotAcceptable => MessageKey::NotAcceptable,
            ErrorCode::DuplicateRunId | ErrorCode::RunIdConflict => MessageKey::RunIdUsed,
            ErrorCode::ThreadBusy => MessageKey::ThreadBusy,
            ErrorCode::ThreadBindingConflict => MessageKey::ThreadBindingConflict,
            ErrorCode::ResumeRequired => MessageKey::ResumeRequired,
            ErrorCode::ExecutionLost => MessageKey::ExecutionLost,
            ErrorCode::StateUnavailable => MessageKey::StateUnavailable,
            ErrorCode::ExecutionNotFound => MessageKey::ExecutionNotFound,
            ErrorCode::IncompleteResume => MessageKey::ResumeIncomplete,
            ErrorCode::UnknownInterrupt => MessageKey::UnknownInterrupt,
            ErrorCode::ResumePayloadInvalid => MessageKey::PayloadInvalid,
            ErrorCode::ResumeAlreadyApplied => MessageKey::AlreadyApplied,
            ErrorCode::ExecutionExpired => MessageKey::InterruptExpired,
            ErrorCode::StatePersistenceFailed => MessageKey::ExecutionCommitFailed,
            ErrorCode::A2aUnavailable => MessageKey::A2aUnavailable,
            ErrorCode::A2aProtocolError => MessageKey::TaskChanged,
            ErrorCode::A2aExecutionFailed => MessageKey::A2aExecutionFailed,
            ErrorCode::Cancelled => MessageKey::Cancelled,
            ErrorCode::SessionBackupNotReady => MessageKey::SessionBackupNotReady,
        }
    }

    /// The error of this code with its [`default_key`](Self::default_key).
    pub fn error(self) -> ProtocolError {
        ProtocolError::new(self, self.default_key())
    }
}

impl core::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A refusal: the code, the stable message, and optional structured details
/// (for example the JSON-Schema failure of a resume payload). Details never
/// hold secrets or upstream text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtocolError {
    /// The protocol code.
    pub code: ErrorCode,
    /// The stable message; its text comes from the catalog.
    pub key: MessageKey,
    /// Optional machine-readable details.
    pub details: Option<serde_json::Value>,
}

impl ProtocolError {
    /// An error without details.
    pub fn new(code: ErrorCode, key: MessageKey) -> Self {
        ProtocolError {
            code,
            key,
            details: None,
        }
    }

    /// The same error with details attached.
    pub fn with_details(mut self, details: serde_json::Value) -> Self {
        self.details = Some(details);
        self
    }

    /// The message in `language`.
    pub fn message(&self, language: Language) -> &'static str {
        catalog::text(self.key, language)
    }

    /// The JSON error envelope of SPEC §1:
    /// `{"error":{"code":"…","message":"…"}}`.
    pub fn envelope(&self, language: Language) -> serde_json::Value {
        serde_json::json!({
            "error": { "code": self.code.as_str(), "message": self.message(language) }
        })
    }
}

impl core::fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}: {}", self.code, self.message(Language::En))
    }
}

impl std::error::Error for ProtocolError {}

/// Every stable, translatable message the server itself produces. Nothing from
/// upstream is ever echoed to a caller, so this list is closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum MessageKey {
    // HTTP layer
    /// "The request body is not valid JSON."
    InvalidJson,
    /// "The request body must be a JSON object."
    BodyNotObject,
    /// "The request Content-Type must be application/json."
    UnsupportedMediaType,
    /// "The request body exceeds the maximum size."
    RequestTooLarge,
    /// "A valid bearer token is required."
    Unauthorized,
    /// "The request must accept text/event-stream."
    NotAcceptable,
    // Envelope and extension (SPEC §2–3)
    /// "Invalid AG-UI RunAgentInput envelope."
    InvalidEnvelope,
    /// "Client-provided tools are not supported."
    ToolsNotSupported,
    /// "Invalid iac-code forwarded properties."
    InvalidForwardedProps,
    /// "A new run requires a user message."
    UserMessageRequired,
    // Content (SPEC §2.1)
    /// "Remote media URLs are not supported."
    RemoteMediaUrl,
    /// "Only text and inline data images are supported."
    UnsupportedContentPart,
    /// "The image media type is not supported."
    UnsupportedImageType,
    /// "The image data is not valid base64."
    InvalidImageBase64,
    /// "An image exceeds the maximum size."
    ImageTooLarge,
    /// "The total image content exceeds the maximum size."
    TotalImagesTooLarge,
    /// "The image data is invalid."
    InvalidImage,
    /// "The user message content is invalid."
    InvalidContent,
    // Workspace (SPEC §3.1)
    /// "The iac-code workspace must be an absolute path."
    WorkspaceNotAbsolute,
    /// "The iac-code workspace is invalid."
    WorkspaceInvalid,
    /// "The iac-code workspace is outside the allowed roots."
    WorkspaceOutsideRoots,
    /// "The iac-code workspace is not a directory."
    WorkspaceNotDirectory,
    /// "The iac-code workspace cannot be created."
    WorkspaceCannotCreate,
    // Admission (SPEC §5)
    /// "The AG-UI adapter state is unavailable."
    StateUnavailable,
    /// "The AG-UI run id has already been used."
    RunIdUsed,
    /// "The AG-UI thread already has an active run."
    ThreadBusy,
    /// "The AG-UI thread is already bound to another workspace or caller."
    ThreadBindingConflict,
    /// "The AG-UI thread is waiting for interrupt responses."
    ResumeRequired,
    /// "The execution to resume is no longer available."
    ExecutionLost,
    /// "The resume request does not match the interrupted run."
    ResumeMismatch,
    // Resume (SPEC §8)
    /// "The resume contains duplicate interrupt ids."
    DuplicateInterruptIds,
    /// "The resume must resolve every pending interrupt exactly once."
    ResumeIncomplete,
    /// "The resume references an unknown interrupt."
    UnknownInterrupt,
    /// "A resolved interrupt requires a payload."
    PayloadRequired,
    /// "The interrupt response payload is invalid."
    PayloadInvalid,
    /// "The interrupt response does not contain an answer."
    AnswerMissing,
    /// "The interrupt response has already been applied."
    AlreadyApplied,
    /// "The interrupt has expired."
    InterruptExpired,
    /// "The execution was cancelled by the interrupt response."
    CancelledByResponse,
    /// "The iac-code session to resume is unavailable."
    SessionLost,
    /// "The A2A task to resume is unavailable."
    TaskLost,
    /// "Session backup is still synchronizing. Retry after 3 seconds."
    SessionBackupNotReady,
    // Run (SPEC §6–7)
    /// "The execution was cancelled."
    Cancelled,
    /// "The A2A execution failed."
    A2aExecutionFailed,
    /// "The local A2A execution service is unavailable."
    A2aUnavailable,
    /// "The local A2A execution service rejected the interrupt response."
    A2aRejectedResponse,
    /// "The A2A interrupt response was not accepted."
    A2aResponseNotAccepted,
    /// "The A2A context identity changed unexpectedly."
    ContextChanged,
    /// "The A2A task identity changed unexpectedly."
    TaskChanged,
    /// "The A2A task identity does not match the interrupted run."
    TaskMismatch,
    /// "The iac-code session identity changed unexpectedly."
    SessionChanged,
    /// "An interrupt belongs to another A2A task."
    InterruptOtherTask,
    /// "An interrupt belongs to another A2A context."
    InterruptOtherContext,
    /// "The interrupted execution state could not be committed."
    InterruptCommitFailed,
    /// "The execution mapping could not be committed."
    ExecutionCommitFailed,
    /// "The execution session mapping could not be committed."
    SessionCommitFailed,
    /// "The accepted interrupt response could not be committed."
    ResponseCommitFailed,
    /// "The server is shutting down."
    ShuttingDown,
    // Cancel extension (SPEC §9)
    /// "The execution was not found."
    ExecutionNotFound,
    /// "The cancel request requires threadId and rosInvocationId."
    InvalidCancelRequest,
    // Interrupt texts (SPEC §7)
    /// "Permission required"
    PermissionRequired,
    /// "Input required"
    InputRequired,
}

impl MessageKey {
    /// Every key, in declaration order. The catalog tests walk this list, so
    /// a key missing here would escape them: the exhaustive `position` match
    /// of this file's tests stops compiling when a variant is added, as a
    /// reminder to list it here too.
    pub const ALL: [MessageKey; 62] = [
        MessageKey::InvalidJson,
        MessageKey::BodyNotObject,
        MessageKey::UnsupportedMediaType,
        MessageKey::RequestTooLarge,
        MessageKey::Unauthorized,
        MessageKey::NotAcceptable,
        MessageKey::InvalidEnvelope,
        MessageKey::ToolsNotSupported,
        MessageKey::InvalidForwardedProps,
        MessageKey::UserMessageRequired,
        MessageKey::RemoteMediaUrl,
        MessageKey::UnsupportedContentPart,
        MessageKey::UnsupportedImageType,
        MessageKey::InvalidImageBase64,
        MessageKey::ImageTooLarge,
        MessageKey::TotalImagesTooLarge,
        MessageKey::InvalidImage,
        MessageKey::InvalidContent,
        MessageKey::WorkspaceNotAbsolute,
        MessageKey::WorkspaceInvalid,
        MessageKey::WorkspaceOutsideRoots,
        MessageKey::WorkspaceNotDirectory,
        MessageKey::WorkspaceCannotCreate,
        MessageKey::StateUnavailable,
        MessageKey::RunIdUsed,
        MessageKey::ThreadBusy,
        MessageKey::ThreadBindingConflict,
        MessageKey::ResumeRequired,
        MessageKey::ExecutionLost,
        MessageKey::ResumeMismatch,
        MessageKey::DuplicateInterruptIds,
        MessageKey::ResumeIncomplete,
        MessageKey::UnknownInterrupt,
        MessageKey::PayloadRequired,
        MessageKey::PayloadInvalid,
        MessageKey::AnswerMissing,
        MessageKey::AlreadyApplied,
        MessageKey::InterruptExpired,
        MessageKey::CancelledByResponse,
        MessageKey::SessionLost,
        MessageKey::TaskLost,
        MessageKey::SessionBackupNotReady,
        MessageKey::Cancelled,
        MessageKey::A2aExecutionFailed,
        MessageKey::A2aUnavailable,
        MessageKey::A2aRejectedResponse,
        MessageKey::A2aResponseNotAccepted,
        MessageKey::ContextChanged,
        MessageKey::TaskChanged,
        MessageKey::TaskMismatch,
        MessageKey::SessionChanged,
        MessageKey::InterruptOtherTask,
        MessageKey::InterruptOtherContext,
        MessageKey::InterruptCommitFailed,
        MessageKey::ExecutionCommitFailed,
        MessageKey::SessionCommitFailed,
        MessageKey::ResponseCommitFailed,
        MessageKey::ShuttingDown,
        MessageKey::ExecutionNotFound,
        MessageKey::InvalidCancelRequest,
        MessageKey::PermissionRequired,
        MessageKey::InputRequired,
    ];
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The position of `key` in [`MessageKey::ALL`]. The match is exhaustive
    /// on purpose: a new variant does not compile here until it gets a
    /// position, which is the reminder to add it to `ALL` as well.
    fn position(key: MessageKey) -> usize {
        match key {
            MessageKey::InvalidJson => 0,
            MessageKey::BodyNotObject => 1,
            MessageKey::UnsupportedMediaType => 2,
            MessageKey::RequestTooLarge => 3,
            MessageKey::Unauthorized => 4,
            MessageKey::NotAcceptable => 5,
            MessageKey::InvalidEnvelope => 6,
            MessageKey::ToolsNotSupported => 7,
            MessageKey::InvalidForwardedProps => 8,
            MessageKey::UserMessageRequired => 9,
            MessageKey::RemoteMediaUrl => 10,
            MessageKey::UnsupportedContentPart => 11,
            MessageKey::UnsupportedImageType => 12,
            MessageKey::InvalidImageBase64 => 13,
            MessageKey::ImageTooLarge => 14,
            MessageKey::TotalImagesTooLarge => 15,
            MessageKey::InvalidImage => 16,
            MessageKey::InvalidContent => 17,
            MessageKey::WorkspaceNotAbsolute => 18,
            MessageKey::WorkspaceInvalid => 19,
            MessageKey::WorkspaceOutsideRoots => 20,
            MessageKey::WorkspaceNotDirectory => 21,
            MessageKey::WorkspaceCannotCreate => 22,
            MessageKey::StateUnavailable => 23,
            MessageKey::RunIdUsed => 24,
            MessageKey::ThreadBusy => 25,
            MessageKey::ThreadBindingConflict => 26,
            MessageKey::ResumeRequired => 27,
            MessageKey::ExecutionLost => 28,
            MessageKey::ResumeMismatch => 29,
            MessageKey::DuplicateInterruptIds => 30,
            MessageKey::ResumeIncomplete => 31,
            MessageKey::UnknownInterrupt => 32,
            MessageKey::PayloadRequired => 33,
            MessageKey::PayloadInvalid => 34,
            MessageKey::AnswerMissing => 35,
            MessageKey::AlreadyApplied => 36,
            MessageKey::InterruptExpired => 37,
            MessageKey::CancelledByResponse => 38,
            MessageKey::SessionLost => 39,
            MessageKey::TaskLost => 40,
            MessageKey::SessionBackupNotReady => 41,
            MessageKey::Cancelled => 42,
            MessageKey::A2aExecutionFailed => 43,
            MessageKey::A2aUnavailable => 44,
            MessageKey::A2aRejectedResponse => 45,
            MessageKey::A2aResponseNotAccepted => 46,
            MessageKey::ContextChanged => 47,
            MessageKey::TaskChanged => 48,
            MessageKey::TaskMismatch => 49,
            MessageKey::SessionChanged => 50,
            MessageKey::InterruptOtherTask => 51,
            MessageKey::InterruptOtherContext => 52,
            MessageKey::InterruptCommitFailed => 53,
            MessageKey::ExecutionCommitFailed => 54,
            MessageKey::SessionCommitFailed => 55,
            MessageKey::ResponseCommitFailed => 56,
            MessageKey::ShuttingDown => 57,
            MessageKey::ExecutionNotFound => 58,
            MessageKey::InvalidCancelRequest => 59,
            MessageKey::PermissionRequired => 60,
            MessageKey::InputRequired => 61,
        }
    }

    #[test]
    fn all_lists_every_key_once_in_order() {
        for (index, key) in MessageKey::ALL.into_iter().enumerate() {
            assert_eq!(position(key), index, "{key:?}");
        }
    }

    #[test]
    fn every_code_has_a_default_key_of_its_own_family() {
        for code in ErrorCode::ALL {
            let error = ProtocolError::new(code, code.default_key());
            assert!(!error.message(Language::En).is_empty(), "{code}");
        }
        assert_eq!(
            ErrorCode::SessionBackupNotReady.default_key(),
            MessageKey::SessionBackupNotReady
        );
        assert_eq!(
            ErrorCode::IncompleteResume.default_key(),
            MessageKey::ResumeIncomplete
        );
    }
}
