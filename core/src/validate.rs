//! Request validation (SPEC §2, §2.1, §3) as pure functions.
//!
//! Everything that needs no I/O is judged here, so the server and the browser
//! give the same verdict. Two checks belong to the host: resolving the
//! workspace on its filesystem ([`WorkspaceVerdict`]) and decoding image
//! bytes ([`MessageKey::InvalidImage`]).

use base64::Engine as _;
use serde_json::{Map, Value};

use crate::a2a::Part;
use crate::agui::RunAgentInput;
use crate::error::{ErrorCode, MessageKey, ProtocolError};
use crate::i18n::{self, Language};
use crate::json::canonical_digest;

/// Largest `POST /` body, in bytes (12 MiB).
pub const MAX_RUN_BODY_BYTES: usize = 12 * 1024 * 1024;
/// Largest cancel body, in bytes (64 KiB).
pub const MAX_CANCEL_BODY_BYTES: usize = 64 * 1024;
/// Largest decoded image (8 MiB).
pub const MAX_IMAGE_BYTES: usize = 8 * 1024 * 1024;
/// Largest sum of decoded images of one message (10 MiB).
pub const MAX_TOTAL_IMAGE_BYTES: usize = 10 * 1024 * 1024;
/// Largest image file name, in UTF-8 bytes.
pub const MAX_IMAGE_FILENAME_BYTES: usize = 255;
/// Image media types accepted inline.
pub const IMAGE_MIME_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// A request that passed every I/O-free check.
#[derive(Debug, Clone, PartialEq)]
pub struct ValidatedRun {
    /// The parsed envelope.
    pub input: RunAgentInput,
    /// The strict `forwardedProps.iacCode` extension.
    pub iac: IacCodeProps,
    /// SHA-256 of the canonical JSON of the whole body (SPEC §4).
    pub digest: String,
    /// The language of this request's messages (SPEC §13).
    pub language: Language,
    /// The latest user message as A2A parts: present for a new run, absent
    /// for a resume (which sends none).
    pub user_message: Option<UserMessage>,
}

impl ValidatedRun {
    /// True when the request answers interrupts.
    pub fn is_resume(&self) -> bool {
        self.input.resume.is_some()
    }
}

/// The latest user message, converted to A2A parts.
#[derive(Debug, Clone, PartialEq)]
pub struct UserMessage {
    /// The AG-UI message id, reused as the A2A message id.
    pub id: String,
    /// Text and image parts in order. Image parts carry
    /// `data: {filename, bytes}` and their media type; the host may replace
    /// them with normalised images.
    pub parts: Vec<Part>,
}

/// `forwardedProps.iacCode` (SPEC §3). Secrets are redacted from `Debug`.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct IacCodeProps {
    /// `schemaVersion`, always 1.
    pub schema_version: u8,
    /// Caller identity of the current execution, 1–256 characters.
    pub ros_invocation_id: String,
    /// The workspace as sent (the host resolves it).
    pub cwd: String,
    /// Model override.
    pub model: Option<String>,
    /// LLM provider key: never stored, never logged.
    pub llm_api_key: Option<String>,
    /// Reasoning request.
    pub thinking: Option<Thinking>,
    /// Caller identity for binding and telemetry.
    pub user_id: Option<String>,
    /// Caller channel.
    pub channel: Option<String>,
    /// Request-local display language, as sent.
    pub preferred_language: Option<String>,
    /// `standard` or `rich`.
    pub candidate_presentation: Option<String>,
    /// `normal` or `pipeline`.
    pub run_mode: Option<String>,
    /// Pipeline name.
    pub pipeline_name: Option<String>,
    /// Only the Pipeline cleanup path.
    pub cleanup_only: Option<bool>,
    /// Request-local cloud credentials: secrets never stored, never logged.
    pub alibaba_cloud: Option<AlibabaCloud>,
}

impl core::fmt::Debug for IacCodeProps {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("IacCodeProps")
            .field("ros_invocation_id", &self.ros_invocation_id)
            .field("cwd", &self.cwd)
            .field("model", &self.model)
            .field(
                "llm_api_key",
                &self.llm_api_key.as_ref().map(|_| "<redacted>"),
            )
            .field("thinking", &self.thinking)
            .field("user_id", &self.user_id)
            .field("channel", &self.channel)
            .field("preferred_language", &self.preferred_language)
            .field("candidate_presentation", &self.candidate_presentation)
            .field("run_mode", &self.run_mode)
            .field("pipeline_name", &self.pipeline_name)
            .field("cleanup_only", &self.cleanup_only)
            .field("alibaba_cloud", &self.alibaba_cloud)
            .finish()
    }
}

/// `iacCode.thinking`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Thinking {
    /// Request reasoning output.
    pub enabled: Option<bool>,
    /// Provider-specific effort.
    pub effort: Option<String>,
    /// Provider-specific positive budget.
    pub budget: Option<u64>,
}

/// `iacCode.alibabaCloud`. Secrets are redacted from `Debug`.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct AlibabaCloud {
    /// AccessKey id.
    pub access_key_id: Option<String>,
    /// AccessKey secret: never stored, never logged.
    pub access_key_secret: Option<String>,
    /// STS token: never stored, never logged.
    pub security_token: Option<String>,
    /// Default region.
    pub region_id: Option<String>,
}

impl core::fmt::Debug for AlibabaCloud {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let redact = |s: &Option<String>| s.as_ref().map(|_| "<redacted>");
        f.debug_struct("AlibabaCloud")
            .field("access_key_id", &self.access_key_id)
            .field("access_key_secret", &redact(&self.access_key_secret))
            .field("security_token", &redact(&self.security_token))
            .field("region_id", &self.region_id)
            .finish()
    }
}

/// How the host judged the workspace of a request (SPEC §3.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorkspaceVerdict {
    /// The absolute, symlink-resolved directory that is bound and sent to A2A.
    Resolved(String),
    /// Refused; the error is always `INVALID_INPUT` with a workspace message.
    Rejected(ProtocolError),
}

/// The workspace refusals a host can report.
pub fn workspace_error(key: MessageKey) -> ProtocolError {
    debug_assert!(matches!(
        key,
        MessageKey::WorkspaceNotAbsolute
            | MessageKey::WorkspaceInvalid
            | MessageKey::WorkspaceOutsideRoots
            | MessageKey::WorkspaceNotDirectory
            | MessageKey::WorkspaceCannotCreate
    ));
    invalid(key)
}

/// Parses a request body: not UTF-8 JSON → `INVALID_JSON`; JSON that is not
/// an object → `INVALID_INPUT`.
///
/// # Errors
/// The refusal, with its code.
pub fn parse_body(body: &[u8]) -> Result<Value, ProtocolError> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|_| ProtocolError::new(ErrorCode::InvalidJson, MessageKey::InvalidJson))?;
    if !value.is_object() {
        return Err(invalid(MessageKey::BodyNotObject));
    }
    Ok(value)
}

/// The language a request's messages use, read as leniently as possible so
/// that even a refused request is answered in its caller's language.
pub fn request_language(body: &Value, accept_language: Option<&str>) -> Language {
    let preferred = body
        .pointer("/forwardedProps/iacCode/preferredLanguage")
        .and_then(Value::as_str);
    i18n::negotiate(preferred, accept_language)
}

/// Validates a parsed `POST /` body (SPEC §2–3).
///
/// Checks, in order: the envelope, `forwardedProps.iacCode`, `tools`, and
/// the latest user message (for a new run). The workspace is left to the
/// host.
///
/// # Errors
/// The first refusal, always `INVALID_INPUT` with its message key.
pub fn validate_run(
    body: &Value,
    accept_language: Option<&str>,
) -> Result<ValidatedRun, ProtocolError> {
    let input = parse_envelope(body)?;
    let iac = parse_iac_code(&input.forwarded_props)?;
    if !input.tools.is_empty() {
        return Err(invalid(MessageKey::ToolsNotSupported));
    }
    let user_message = if input.resume.is_some() {
        None
    } else {
        Some(
            latest_user_message(&input.messages)?
                .ok_or_else(|| invalid(MessageKey::UserMessageRequired))?,
        )
    };
    let language = i18n::negotiate(iac.preferred_language.as_deref(), accept_language);
    Ok(ValidatedRun {
        digest: canonical_digest(body),
        input,
        iac,
        language,
        user_message,
    })
}

/// The standard envelope: required keys with their types, non-empty ids,
/// well-formed messages, context entries and tools.
fn parse_envelope(body: &Value) -> Result<RunAgentInput, ProtocolError> {
    let bad = || invalid(MessageKey::InvalidEnvelope);
    let input: RunAgentInput = serde_json::from_value(body.clone()).map_err(|_| bad())?;
    if input.thread_id.is_empty() || input.run_id.is_empty() {
        return Err(bad());
    }
    if !input.messages.iter().all(message_is_well_formed) {
        return Err(bad());
    }
    let context_ok = input.context.iter().all(|c| {
        c.get("description").is_some_and(Value::is_string)
            && c.get("value").is_some_and(Value::is_string)
    });
    let tools_ok = input
        .tools
        .iter()
        .all(|t| t.get("name").is_some_and(Value::is_string));
    if !context_ok || !tools_ok {
        return Err(bad());
    }
    Ok(input)
}

/// The per-role message shapes of AG-UI (AGUI.md §5). Unknown keys are
/// tolerated; user content parts are judged later, with their own messages.
fn message_is_well_formed(message: &Value) -> bool {
    let Some(m) = message.as_object() else {
        return false;
    };
    let is_str = |k: &str| m.get(k).is_some_and(Value::is_string);
    let opt_str = |k: &str| m.get(k).is_none_or(Value::is_string);
    if !is_str("id") {
        return false;
    }
    match m.get("role").and_then(Value::as_str) {
        Some("developer" | "system" | "reasoning") => is_str("content"),
        Some("assistant") => opt_str("content") && m.get("toolCalls").is_none_or(Value::is_array),
        Some("user") => matches!(m.get("content"), Some(Value::String(_) | Value::Array(_))),
        Some("tool") => is_str("content") && is_str("toolCallId") && opt_str("error"),
        Some("activity") => {
            is_str("activityType") && m.get("content").is_some_and(Value::is_object)
        }
        _ => false,
    }
}

/// `forwardedProps.iacCode`, strictly: unknown fields and wrong types are
/// refused, nothing is coerced.
fn parse_iac_code(forwarded_props: &Value) -> Result<IacCodeProps, ProtocolError> {
    let bad = || invalid(MessageKey::InvalidForwardedProps);
    let props = forwarded_props.as_object().ok_or_else(bad)?;
    if props.keys().any(|k| k != "iacCode") {
        return Err(bad());
    }
    let mut fields = Strict::new(props.get("iacCode").cloned().ok_or_else(bad)?).ok_or_else(bad)?;
    if fields.take("schemaVersion").and_then(|v| v.as_u64()) != Some(1) {
        return Err(bad());
    }
    let ros_invocation_id = fields.string("rosInvocationId")?.ok_or_else(bad)?;
    if ros_invocation_id.is_empty() || ros_invocation_id.chars().count() > 256 {
        return Err(bad());
    }
    let cwd = fields.string("cwd")?.ok_or_else(bad)?;
    let thinking = match fields.take("thinking") {
        None => None,
        Some(value) => {
            let mut t = Strict::new(value).ok_or_else(bad)?;
            let budget = match t.take("budget") {
                None => None,
                Some(b) => Some(b.as_u64().filter(|b| *b > 0).ok_or_else(bad)?),
            };
            let thinking = Thinking {
                enabled: t.boolean("enabled")?,
                effort: t.string("effort")?,
                budget,
            };
            t.finish()?;
            Some(thinking)
        }
    };
    let alibaba_cloud = match fields.take("alibabaCloud") {
        None => None,
        Some(value) => {
            let mut a = Strict::new(value).ok_or_else(bad)?;
            let cloud = AlibabaCloud {
                access_key_id: a.string("accessKeyId")?,
                access_key_secret: a.string("accessKeySecret")?,
                security_token: a.string("securityToken")?,
                region_id: a.string("regionId")?,
            };
            a.finish()?;
            Some(cloud)
        }
    };
    let one_of = |value: Option<String>, allowed: &[&str]| match value {
        Some(v) if !allowed.contains(&v.as_str()) => Err(bad()),
        other => Ok(other),
    };
    let props = IacCodeProps {
        schema_version: 1,
        ros_invocation_id,
        cwd,
        model: fields.string("model")?,
        llm_api_key: fields.string("llmApiKey")?,
        thinking,
        user_id: fields.string("userId")?,
        channel: fields.string("channel")?,
        preferred_language: fields.string("preferredLanguage")?,
        candidate_presentation: one_of(
            fields.string("candidatePresentation")?,
            &["standard", "rich"],
        )?,
        run_mode: one_of(fields.string("runMode")?, &["normal", "pipeline"])?,
        pipeline_name: fields.string("pipelineName")?,
        cleanup_only: fields.boolean("cleanupOnly")?,
        alibaba_cloud,
    };
    fields.finish()?;
    Ok(props)
}

/// Reads a strict object field by field; `finish` refuses leftovers.
struct Strict {
    rest: Map<String, Value>,
}

impl Strict {
    fn new(value: Value) -> Option<Self> {
        match value {
            Value::Object(rest) => Some(Strict { rest }),
            _ => None,
        }
    }

    fn take(&mut self, key: &str) -> Option<Value> {
        self.rest.remove(key)
    }

    fn string(&mut self, key: &str) -> Result<Option<String>, ProtocolError> {
        match self.take(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(invalid(MessageKey::InvalidForwardedProps)),
        }
    }

    fn boolean(&mut self, key: &str) -> Result<Option<bool>, ProtocolError> {
        match self.take(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(b)),
            Some(_) => Err(invalid(MessageKey::InvalidForwardedProps)),
        }
    }

    fn finish(self) -> Result<(), ProtocolError> {
        if self.rest.is_empty() {
            Ok(())
        } else {
            Err(invalid(MessageKey::InvalidForwardedProps))
        }
    }
}

/// The newest user message as A2A parts (SPEC §2.1), or `None` when the
/// conversation has no user message.
fn latest_user_message(messages: &[Value]) -> Result<Option<UserMessage>, ProtocolError> {
    let Some(message) = messages
        .iter()
        .rev()
        .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))
    else {
        return Ok(None);
    };
    let id = message
        .get("id")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let parts = match message.get("content") {
        Some(Value::String(text)) => vec![Part::text(text.clone())],
        // The runtime refuses a message without parts (-32602); refusing it
        // here keeps the runId unconsumed.
        Some(Value::Array(items)) if items.is_empty() => {
            return Err(invalid(MessageKey::InvalidContent))
        }
        Some(Value::Array(items)) => content_parts(items)?,
        _ => return Err(invalid(MessageKey::InvalidContent)),
    };
    Ok(Some(UserMessage { id, parts }))
}

fn content_parts(items: &[Value]) -> Result<Vec<Part>, ProtocolError> {
    let mut parts = Vec::with_capacity(items.len());
    let mut total_image_bytes = 0usize;
    for item in items {
        let Some(part) = item.as_object() else {
            return Err(invalid(MessageKey::InvalidContent));
        };
        match part.get("type").and_then(Value::as_str) {
            Some("text") => {
                let text = part.get("text").and_then(Value::as_str);
                parts.push(Part::text(
                    text.ok_or_else(|| invalid(MessageKey::InvalidContent))?,
                ));
            }
            Some("image") => {
                let (mime, bytes) = inline_image(part)?;
                total_image_bytes += bytes.len();
                if total_image_bytes > MAX_TOTAL_IMAGE_BYTES {
                    return Err(invalid(MessageKey::TotalImagesTooLarge));
                }
                let fallback = format!("agui-image-{}", parts.len() + 1);
                let filename = part
                    .get("metadata")
                    .and_then(|m| m.get("filename"))
                    .and_then(Value::as_str)
                    .filter(|f| is_safe_filename(f))
                    .map_or(fallback, str::to_owned);
                parts.push(image_part(&filename, &mime, &bytes));
            }
            Some(_) => return Err(invalid(MessageKey::UnsupportedContentPart)),
            None => return Err(invalid(MessageKey::InvalidContent)),
        }
    }
    Ok(parts)
}

/// The A2A part the iac-code runtime reads for an image:
/// `{"data":{"filename":F,"bytes":B64},"mediaType":M}`.
pub fn image_part(filename: &str, media_type: &str, bytes: &[u8]) -> Part {
    let encoded = base64::engine::general_purpose::STANDARD.encode(bytes);
    Part {
        data: Some(serde_json::json!({ "filename": filename, "bytes": encoded })),
        media_type: Some(media_type.to_owned()),
        ..Part::default()
    }
}

/// Checks an inline image part and returns its lower-cased media type and
/// decoded bytes.
fn inline_image(part: &Map<String, Value>) -> Result<(String, Vec<u8>), ProtocolError> {
    let source = part
        .get("source")
        .and_then(Value::as_object)
        .ok_or_else(|| invalid(MessageKey::InvalidContent))?;
    match source.get("type").and_then(Value::as_str) {
        Some("data") => {}
        Some("url") => return Err(invalid(MessageKey::RemoteMediaUrl)),
        _ => return Err(invalid(MessageKey::InvalidContent)),
    }
    let (Some(mime), Some(value)) = (
        source.get("mimeType").and_then(Value::as_str),
        source.get("value").and_then(Value::as_str),
    ) else {
        return Err(invalid(MessageKey::InvalidContent));
    };
    let mime = mime.to_ascii_lowercase();
    if !IMAGE_MIME_TYPES.contains(&mime.as_str()) {
        return Err(invalid(MessageKey::UnsupportedImageType));
    }
    // A cheap bound before decoding: 4 base64 characters carry 3 bytes.
    if value.len() / 4 * 3 > MAX_IMAGE_BYTES + 3 {
        return Err(invalid(MessageKey::ImageTooLarge));
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(value)
        .map_err(|_| invalid(MessageKey::InvalidImageBase64))?;
    if bytes.len() > MAX_IMAGE_BYTES {
        return Err(invalid(MessageKey::ImageTooLarge));
    }
    Ok((mime, bytes))
}

/// A plain file name: at most 255 UTF-8 bytes, no path separators, drive
/// letters, control or Windows-forbidden characters, not `.`/`..`, no
/// trailing dot or space, and no Windows device name (`CON`, `nul.png`,
/// `COM¹.gif`, …): the runtime writes the file under this name, possibly on
/// Windows.
pub fn is_safe_filename(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_IMAGE_FILENAME_BYTES
        && name != "."
        && name != ".."
        && !name.ends_with(['.', ' '])
        && !name.chars().any(|c| {
            (c as u32) < 32 || matches!(c, '<' | '>' | ':' | '"' | '/' | '\\' | '|' | '?' | '*')
        })
        && !is_windows_device_name(name)
}

/// True when the part before the first dot names a Windows device; Windows
/// reads superscript digits as digits there.
fn is_windows_device_name(name: &str) -> bool {
    let stem = name.split('.').next().unwrap_or_default();
    let stem: String = stem
        .chars()
        .map(|c| match c {
            '¹' => '1',
            '²' => '2',
            '³' => '3',
            c => c.to_ascii_uppercase(),
        })
        .collect();
    match stem.as_str() {
        "CON" | "PRN" | "AUX" | "NUL" => true,
        _ => ["COM", "LPT"].iter().any(|prefix| {
            stem.strip_prefix(prefix).is_some_and(|digit| {
                matches!(digit, "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9")
            })
        }),
    }
}

fn invalid(key: MessageKey) -> ProtocolError {
    ProtocolError::new(ErrorCode::InvalidInput, key)
}
