//! The message catalog: every [`MessageKey`] in every [`Language`].
//!
//! Plain data, so that the browser package shows exactly the text the server
//! would. English is the protocol's own text (SPEC); the other languages are
//! this project's translations.

use crate::error::MessageKey;
use crate::i18n::Language;

/// The text of `key` in `language`.
pub fn text(key: MessageKey, language: Language) -> &'static str {
    let texts = texts(key);
    texts[Language::ALL
        .iter()
        .position(|l| *l == language)
        .unwrap_or(0)]
}

/// The texts of `key`, in the order of [`Language::ALL`]
/// (en, zh, es, fr, de, ja, pt).
fn texts(key: MessageKey) -> [&'static str; 7] {
    match key {
        MessageKey::InvalidJson => ["The request body is not valid JSON."; 7],
        MessageKey::BodyNotObject => ["The request body must be a JSON object."; 7],
        MessageKey::UnsupportedMediaType => {
            ["The request Content-Type must be application/json."; 7]
        }
        MessageKey::RequestTooLarge => ["The request body exceeds the maximum size."; 7],
        MessageKey::Unauthorized => ["A valid bearer token is required."; 7],
        MessageKey::NotAcceptable => ["The request must accept text/event-stream."; 7],
        MessageKey::InvalidEnvelope => ["Invalid AG-UI RunAgentInput envelope."; 7],
        MessageKey::ToolsNotSupported => ["Client-provided tools are not supported."; 7],
        MessageKey::InvalidForwardedProps => ["Invalid iac-code forwarded properties."; 7],
        MessageKey::UserMessageRequired => ["A new run requires a user message."; 7],
        MessageKey::RemoteMediaUrl => ["Remote media URLs are not supported."; 7],
        MessageKey::UnsupportedContentPart => {
            ["Only text and inline data images are supported."; 7]
        }
        MessageKey::UnsupportedImageType => ["The image media type is not supported."; 7],
        MessageKey::InvalidImageBase64 => ["The image data is not valid base64."; 7],
        MessageKey::ImageTooLarge => ["An image exceeds the maximum size."; 7],
        MessageKey::TotalImagesTooLarge => ["The total image content exceeds the maximum size."; 7],
        MessageKey::InvalidImage => ["The image data is invalid."; 7],
        MessageKey::InvalidContent => ["The user message content is invalid."; 7],
        MessageKey::WorkspaceNotAbsolute => ["The iac-code workspace must be an absolute path."; 7],
        MessageKey::WorkspaceInvalid => ["The iac-code workspace is invalid."; 7],
        MessageKey::WorkspaceOutsideRoots => {
            ["The iac-code workspace is outside the allowed roots."; 7]
        }
        MessageKey::WorkspaceNotDirectory => ["The iac-code workspace is not a directory."; 7],
        MessageKey::WorkspaceCannotCreate => ["The iac-code workspace cannot be created."; 7],
        MessageKey::StateUnavailable => ["The AG-UI adapter state is unavailable."; 7],
        MessageKey::RunIdUsed => ["The AG-UI run id has already been used."; 7],
        MessageKey::ThreadBusy => ["The AG-UI thread already has an active run."; 7],
        MessageKey::ThreadBindingConflict => {
            ["The AG-UI thread is already bound to another workspace or caller."; 7]
        }
        MessageKey::ResumeRequired => ["The AG-UI thread is waiting for interrupt responses."; 7],
        MessageKey::ExecutionLost => ["The execution to resume is no longer available."; 7],
        MessageKey::ResumeMismatch => ["The resume request does not match the interrupted run."; 7],
        MessageKey::DuplicateInterruptIds => ["The resume contains duplicate interrupt ids."; 7],
        MessageKey::ResumeIncomplete => {
            ["The resume must resolve every pending interrupt exactly once."; 7]
        }
        MessageKey::UnknownInterrupt => ["The resume references an unknown interrupt."; 7],
        MessageKey::PayloadRequired => ["A resolved interrupt requires a payload."; 7],
        MessageKey::PayloadInvalid => ["The interrupt response payload is invalid."; 7],
        MessageKey::AnswerMissing => ["The interrupt response does not contain an answer."; 7],
        MessageKey::AlreadyApplied => ["The interrupt response has already been applied."; 7],
        MessageKey::InterruptExpired => ["The interrupt has expired."; 7],
        MessageKey::CancelledByResponse => {
            ["The execution was cancelled by the interrupt response."; 7]
        }
        MessageKey::SessionLost => ["The iac-code session to resume is unavailable."; 7],
        MessageKey::TaskLost => ["The A2A task to resume is unavailable."; 7],
        MessageKey::SessionBackupNotReady => {
            ["Session backup is still synchronizing. Retry after 3 seconds."; 7]
        }
        MessageKey::Cancelled => ["The execution was cancelled."; 7],
        MessageKey::A2aExecutionFailed => ["The A2A execution failed."; 7],
        MessageKey::A2aUnavailable => ["The local A2A execution service is unavailable."; 7],
        MessageKey::A2aRejectedResponse => {
            ["The local A2A execution service rejected the interrupt response."; 7]
        }
        MessageKey::A2aResponseNotAccepted => ["The A2A interrupt response was not accepted."; 7],
        MessageKey::ContextChanged => ["The A2A context identity changed unexpectedly."; 7],
        MessageKey::TaskChanged => ["The A2A task identity changed unexpectedly."; 7],
        MessageKey::TaskMismatch => {
            ["The A2A task identity does not match the interrupted run."; 7]
        }
        MessageKey::SessionChanged => ["The iac-code session identity changed unexpectedly."; 7],
        MessageKey::InterruptOtherTask => ["An interrupt belongs to another A2A task."; 7],
        MessageKey::InterruptOtherContext => ["An interrupt belongs to another A2A context."; 7],
        MessageKey::InterruptCommitFailed => {
            ["The interrupted execution state could not be committed."; 7]
        }
        MessageKey::ExecutionCommitFailed => ["The execution mapping could not be committed."; 7],
        MessageKey::ResponseCommitFailed => {
            ["The accepted interrupt response could not be committed."; 7]
        }
        MessageKey::ShuttingDown => ["The server is shutting down."; 7],
        MessageKey::ExecutionNotFound => ["The execution was not found."; 7],
        MessageKey::InvalidCancelRequest => {
            ["The cancel request requires threadId and rosInvocationId."; 7]
        }
        MessageKey::PermissionRequired => ["Permission required"; 7],
        MessageKey::InputRequired => ["Input required"; 7],
    }
}
