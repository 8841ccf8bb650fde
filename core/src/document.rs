//! The durable per-thread document, schema version 1 (SPEC §11).
//!
//! Field names are part of the contract: a state directory written by the
//! Python reference (iac-code 0.16.0) or by this crate must load in the other.
//! [`ThreadDocument::parse`] checks every field's type and refuses anything
//! invalid with a typed [`DocumentError`] (the host then answers
//! `503 STATE_UNAVAILABLE`); [`ThreadDocument::encode`] writes it back, as
//! the JSON text of [`ThreadDocument::to_json`].
//!
//! What is kept is a mapping, not a conversation: ids, digests and the public
//! projection of pending inputs. No message text and no secret is ever stored;
//! pending values are filtered to [`PUBLIC_INPUT_FIELDS`] on the way in and on
//! the way out.

use std::collections::{BTreeMap, BTreeSet};

use serde::de::Error as _;
use serde::ser::{Error as _, SerializeMap};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::json::{is_digest, sha256_hex};

/// The only schema version this crate reads and writes.
pub const SCHEMA_VERSION: u64 = 1;

/// The public fields of an input projection that may be stored (SPEC §11).
pub const PUBLIC_INPUT_FIELDS: [&str; 24] = [
    "schemaVersion",
    "kind",
    "requestTaskId",
    "contextId",
    "inputId",
    "toolUseId",
    "toolName",
    "title",
    "purpose",
    "effect",
    "target",
    "isReadOnly",
    "prompt",
    "safeSummary",
    "options",
    "language",
    "deploymentSummary",
    "scope",
    "subPipelineId",
    "operation",
    "displayParameters",
    "allowFreeText",
    "freeTextPrompt",
    "required",
];

/// One thread's durable record.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadDocument {
    /// The AG-UI thread id (also checked against the requested one on load).
    pub thread_id: String,
    /// `agui-` + 40 hex of SHA-256(threadId).
    pub context_id: String,
    /// The resolved workspace the thread is bound to.
    pub cwd: String,
    /// The caller the thread is bound to.
    pub user_id: Option<String>,
    /// The iac-code session, once learnt; it never changes afterwards.
    pub iac_code_session_id: Option<String>,
    /// The current execution.
    pub execution: ExecutionRecord,
    /// `runId → request digest`, for idempotency.
    pub run_digests: BTreeMap<String, String>,
    /// `(executionId, interruptId) → digest of the applied answer`.
    pub applied_resume_digests: BTreeMap<(String, String), String>,
    /// Executions that ended (cancelled, finished, rotated away).
    pub terminal_execution_ids: BTreeSet<String>,
}

/// The current execution of a thread.
#[derive(Debug, Clone, PartialEq)]
pub struct ExecutionRecord {
    /// Names the execution in the cancel extension and `iac-code.session.v1`.
    pub execution_id: String,
    /// Caller identity of the execution; a resume must repeat it.
    pub ros_invocation_id: String,
    /// The A2A task, once learnt.
    pub task_id: Option<String>,
    /// Highest Pipeline sequence seen.
    pub pipeline_sequence: u64,
    /// Pipeline steps open across runs.
    pub pipeline_open_steps: BTreeSet<String>,
    /// SHA-256 of finalised assistant texts (resume replay suppression).
    pub text_snapshot_digests: BTreeSet<String>,
    /// Interrupts waiting for an answer, by input id.
    pub pending: BTreeMap<String, PendingInput>,
}

/// One pending interrupt.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingInput {
    /// The public input projection (only [`PUBLIC_INPUT_FIELDS`]).
    pub value: Map<String, Value>,
    /// A concurrent Pipeline wait, answered through unary SendMessage.
    pub sideband: bool,
    /// ISO-8601 expiry. Documents written by the Python reference have none;
    /// the machine fills it in when it next admits a run on the thread.
    pub expires_at: Option<String>,
}

/// Why a stored document was refused. The field path is for logs only; the
/// caller sees `STATE_UNAVAILABLE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DocumentError {
    /// The document is not a JSON object.
    NotAnObject,
    /// `schemaVersion` is missing or not 1.
    UnsupportedSchema,
    /// The stored thread id is not the requested one.
    ThreadMismatch,
    /// A field is missing, ill-typed or out of range.
    InvalidField(&'static str),
}

impl core::fmt::Display for DocumentError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            DocumentError::NotAnObject => f.write_str("thread state is not a JSON object"),
            DocumentError::UnsupportedSchema => f.write_str("unsupported thread state schema"),
            DocumentError::ThreadMismatch => f.write_str("thread state belongs to another thread"),
            DocumentError::InvalidField(field) => write!(f, "invalid thread state field {field}"),
        }
    }
}

impl std::error::Error for DocumentError {}

impl ThreadDocument {
    /// A fresh thread bound to `cwd` and `user_id`, with its first execution.
    pub fn new(
        thread_id: &str,
        cwd: &str,
        user_id: Option<String>,
        execution_id: String,
        ros_invocation_id: String,
    ) -> Self {
        ThreadDocument {
            thread_id: thread_id.to_owned(),
            context_id: context_id(thread_id),
            cwd: cwd.to_owned(),
            user_id,
            iac_code_session_id: None,
            execution: ExecutionRecord::new(execution_id, ros_invocation_id),
            run_digests: BTreeMap::new(),
            applied_resume_digests: BTreeMap::new(),
            terminal_execution_ids: BTreeSet::new(),
        }
    }

    /// Reads a stored document for `expected_thread_id`.
    ///
    /// Unknown top-level and execution keys are tolerated and dropped (as the
    /// reference does); pending values are cut down to the public fields.
    ///
    /// # Errors
    /// Every invalid field gives a [`DocumentError`]; nothing panics.
    pub fn parse(value: &Value, expected_thread_id: &str) -> Result<Self, DocumentError> {
        let doc = value.as_object().ok_or(DocumentError::NotAnObject)?;
        // `1.0` is refused too: `as_u64` reads integers only.
        if doc.get("schemaVersion").and_then(Value::as_u64) != Some(SCHEMA_VERSION) {
            return Err(DocumentError::UnsupportedSchema);
        }
        let thread_id = required_str(doc, "threadId", "threadId")?;
        if thread_id != expected_thread_id {
            return Err(DocumentError::ThreadMismatch);
        }
        let context = required_str(doc, "contextId", "contextId")?;
        if context != context_id(&thread_id) {
            return Err(DocumentError::InvalidField("contextId"));
        }
        let execution = doc
            .get("execution")
            .and_then(Value::as_object)
            .ok_or(DocumentError::InvalidField("execution"))?;
        Ok(ThreadDocument {
            thread_id,
            context_id: context,
            cwd: required_str(doc, "cwd", "cwd")?,
            user_id: optional_str(doc, "userId", "userId")?,
            iac_code_session_id: optional_str(doc, "iacCodeSessionId", "iacCodeSessionId")?,
            execution: ExecutionRecord::parse(execution)?,
            run_digests: parse_run_digests(doc.get("runDigests"))?,
            applied_resume_digests: parse_applied(doc.get("appliedResumeDigests"))?,
            terminal_execution_ids: parse_id_set(
                doc.get("terminalExecutionIds"),
                "terminalExecutionIds",
            )?,
        })
    }

    /// The document as stored: every key present, `null` for absent ids,
    /// sets as sorted arrays.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The document's JSON text, as written to its file: the text of
    /// [`ThreadDocument::to_json`], without building that value.
    pub fn encode(&self) -> Encoded {
        Encoded(serde_json::to_vec(self).unwrap_or_default())
    }

    /// The digest recorded for an applied answer of this execution, if any.
    pub fn applied_digest(&self, interrupt_id: &str) -> Option<&str> {
        self.applied_resume_digests
            .get(&(self.execution.execution_id.clone(), interrupt_id.to_owned()))
            .map(String::as_str)
    }

    /// True when any pending interrupt is past its `expiresAt` at `now_ms`.
    pub fn has_expired_interrupt(&self, now_ms: i64) -> bool {
        self.execution.pending.values().any(|p| {
            p.expires_at
                .as_deref()
                .and_then(parse_iso_ms)
                .is_some_and(|at| at <= now_ms)
        })
    }

    /// True when the current execution ended.
    pub fn execution_is_terminal(&self) -> bool {
        self.terminal_execution_ids
            .contains(&self.execution.execution_id)
    }
}

impl ExecutionRecord {
    /// A new execution with no task yet.
    pub fn new(execution_id: String, ros_invocation_id: String) -> Self {
        ExecutionRecord {
            execution_id,
            ros_invocation_id,
            task_id: None,
            pipeline_sequence: 0,
            pipeline_open_steps: BTreeSet::new(),
            text_snapshot_digests: BTreeSet::new(),
            pending: BTreeMap::new(),
        }
    }

    fn parse(doc: &Map<String, Value>) -> Result<Self, DocumentError> {
        let pipeline_sequence = match doc.get("pipelineSequence") {
            None => 0,
            Some(v) if v.is_u64() => v.as_u64().unwrap_or_default(),
            Some(_) => return Err(DocumentError::InvalidField("execution.pipelineSequence")),
        };
        let open_steps = parse_id_set(doc.get("pipelineOpenSteps"), "execution.pipelineOpenSteps")?;
        let digests = parse_id_set(
            doc.get("textSnapshotDigests"),
            "execution.textSnapshotDigests",
        )?;
        if !digests.iter().all(|d| is_digest(d)) {
            return Err(DocumentError::InvalidField("execution.textSnapshotDigests"));
        }
        Ok(ExecutionRecord {
            execution_id: required_str(doc, "executionId", "execution.executionId")?,
            ros_invocation_id: required_str(doc, "rosInvocationId", "execution.rosInvocationId")?,
            task_id: optional_str(doc, "taskId", "execution.taskId")?,
            pipeline_sequence,
            pipeline_open_steps: open_steps,
            text_snapshot_digests: digests,
            pending: parse_pending(doc.get("pending"))?,
        })
    }
}

impl PendingInput {
    /// A pending entry from a projection, keeping only its public fields.
    pub fn new(projection: &Value, sideband: bool, expires_at: Option<String>) -> Self {
        PendingInput {
            value: public_projection(projection),
            sideband,
            expires_at,
        }
    }

    /// The projection's `kind` (`input_required` when absent).
    pub fn kind(&self) -> &str {
        self.value
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or("input_required")
    }

    /// True for a permission interrupt.
    pub fn is_permission(&self) -> bool {
        self.kind() == "permission"
    }
}

/// A thread document as written to its file: its JSON text.
#[derive(Clone, PartialEq, Eq)]
pub struct Encoded(Vec<u8>);

impl Encoded {
    /// The JSON text.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The JSON text, given up.
    pub fn into_bytes(self) -> Vec<u8> {
        self.0
    }

    /// The document as a JSON value.
    pub fn to_value(&self) -> Value {
        serde_json::from_slice(&self.0).unwrap_or(Value::Null)
    }
}

impl core::fmt::Debug for Encoded {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(&String::from_utf8_lossy(&self.0))
    }
}

/// Outputs are compared and replayed as JSON: the document is its value.
impl Serialize for Encoded {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let value: Value = serde_json::from_slice(&self.0).map_err(S::Error::custom)?;
        value.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Encoded {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        serde_json::to_vec(&value)
            .map(Encoded)
            .map_err(D::Error::custom)
    }
}

// The stored JSON. Members go in key order, as a `Value` object writes
// them, so that `to_json` and `encode` give the same text (tested).

impl Serialize for ThreadDocument {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        /// One `appliedResumeDigests` entry.
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Applied<'a> {
            digest: &'a str,
            execution_id: &'a str,
            interrupt_id: &'a str,
        }
        let applied: Vec<Applied> = self
            .applied_resume_digests
            .iter()
            .map(|((execution_id, interrupt_id), digest)| Applied {
                digest,
                execution_id,
                interrupt_id,
            })
            .collect();
        let mut map = serializer.serialize_map(Some(10))?;
        map.serialize_entry("appliedResumeDigests", &applied)?;
        map.serialize_entry("contextId", &self.context_id)?;
        map.serialize_entry("cwd", &self.cwd)?;
        map.serialize_entry("execution", &self.execution)?;
        map.serialize_entry("iacCodeSessionId", &self.iac_code_session_id)?;
        map.serialize_entry("runDigests", &self.run_digests)?;
        map.serialize_entry("schemaVersion", &SCHEMA_VERSION)?;
        map.serialize_entry("terminalExecutionIds", &self.terminal_execution_ids)?;
        map.serialize_entry("threadId", &self.thread_id)?;
        map.serialize_entry("userId", &self.user_id)?;
        map.end()
    }
}

impl Serialize for ExecutionRecord {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(7))?;
        map.serialize_entry("executionId", &self.execution_id)?;
        map.serialize_entry("pending", &self.pending)?;
        map.serialize_entry("pipelineOpenSteps", &self.pipeline_open_steps)?;
        map.serialize_entry("pipelineSequence", &self.pipeline_sequence)?;
        map.serialize_entry("rosInvocationId", &self.ros_invocation_id)?;
        map.serialize_entry("taskId", &self.task_id)?;
        map.serialize_entry("textSnapshotDigests", &self.text_snapshot_digests)?;
        map.end()
    }
}

impl Serialize for PendingInput {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2 + usize::from(self.expires_at.is_some())))?;
        if let Some(expires_at) = &self.expires_at {
            map.serialize_entry("expiresAt", expires_at)?;
        }
        map.serialize_entry("sideband", &self.sideband)?;
        map.serialize_entry("value", &self.value)?;
        map.end()
    }
}

/// The projection cut down to [`PUBLIC_INPUT_FIELDS`]; a non-object gives an
/// empty map.
pub fn public_projection(projection: &Value) -> Map<String, Value> {
    projection
        .as_object()
        .map(|o| {
            o.iter()
                .filter(|(k, _)| PUBLIC_INPUT_FIELDS.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .unwrap_or_default()
}

/// The A2A context id of a thread: `agui-` + the first 40 hex digits of
/// SHA-256(threadId) (SPEC §4).
pub fn context_id(thread_id: &str) -> String {
    let digest = sha256_hex(thread_id.as_bytes());
    format!("agui-{}", &digest[..40])
}

/// The file stem of a thread's document (SPEC §11): the id itself when it is
/// a safe lowercase name, else `aguiid~<hex of UTF-8>` when that fits in 200
/// characters, else `aguihash~<sha256 hex>`. Lowercase keeps distinct ids
/// distinct on case-insensitive filesystems.
pub fn thread_key(thread_id: &str) -> String {
    if is_plain_key(thread_id) {
        return thread_id.to_owned();
    }
    let encoded = format!("aguiid~{}", crate::json::hex(thread_id.as_bytes()));
    if encoded.len() <= MAX_KEY_STEM {
        return encoded;
    }
    format!("aguihash~{}", sha256_hex(thread_id.as_bytes()))
}

/// Parses an ISO-8601 timestamp (`YYYY-MM-DDTHH:MM:SS[.fff…]` then `Z` or
/// `±HH:MM`) into Unix milliseconds.
pub fn parse_iso_ms(text: &str) -> Option<i64> {
    let (body, offset_ms) = split_offset(text)?;
    let (date, time) = body.split_once('T')?;
    let mut d = date.splitn(3, '-');
    let year: i64 = digits(d.next()?, 4)?;
    let month: i64 = digits(d.next()?, 2)?;
    let day: i64 = digits(d.next()?, 2)?;
    let (hms, fraction) = match time.split_once('.') {
        Some((hms, f)) => (hms, Some(f)),
        None => (time, None),
    };
    let mut t = hms.splitn(3, ':');
    let hour: i64 = digits(t.next()?, 2)?;
    let minute: i64 = digits(t.next()?, 2)?;
    let second: i64 = digits(t.next()?, 2)?;
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let millis = match fraction {
        None => 0,
        Some(f) if !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()) => {
            let mut padded: String = f.chars().take(3).collect();
            while padded.len() < 3 {
                padded.push('0');
            }
            padded.parse::<i64>().ok()?
        }
        Some(_) => return None,
    };
    let days = days_from_civil(year, month, day);
    Some(((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + millis - offset_ms)
}

/// Splits `Z` or a `±HH:MM` offset off a timestamp; the offset in ms.
fn split_offset(text: &str) -> Option<(&str, i64)> {
    if let Some(body) = text.strip_suffix('Z') {
        return Some((body, 0));
    }
    let at = text.len().checked_sub(6)?;
    let (body, offset) = (text.get(..at)?, text.get(at..)?);
    let sign = match offset.as_bytes().first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let (hours, minutes) = offset[1..].split_once(':')?;
    let minutes = digits(hours, 2)? * 60 + digits(minutes, 2)?;
    Some((body, sign * minutes * 60_000))
}

const MAX_KEY_STEM: usize = 200;

const RESERVED_BASENAMES: [&str; 22] = [
    "CON", "PRN", "AUX", "NUL", "COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8",
    "COM9", "LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9",
];

fn is_plain_key(id: &str) -> bool {
    if id.is_empty()
        || id == "."
        || id == ".."
        || id.ends_with('.')
        || !id.bytes().all(|b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'_' | b'.' | b'-')
        })
    {
        return false;
    }
    // Windows treats `con.txt` like `con`: the base name is what precedes the first dot.
    let base = id.split('.').next().unwrap_or(id).to_ascii_uppercase();
    !RESERVED_BASENAMES.contains(&base.as_str())
}

fn digits(text: &str, len: usize) -> Option<i64> {
    (text.len() == len && text.bytes().all(|b| b.is_ascii_digit()))
        .then(|| text.parse().ok())
        .flatten()
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
/// algorithm), so no calendar library is needed in the core.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn required_str(
    doc: &Map<String, Value>,
    key: &str,
    field: &'static str,
) -> Result<String, DocumentError> {
    match doc.get(key) {
        Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
        _ => Err(DocumentError::InvalidField(field)),
    }
}

fn optional_str(
    doc: &Map<String, Value>,
    key: &str,
    field: &'static str,
) -> Result<Option<String>, DocumentError> {
    match doc.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if !s.is_empty() => Ok(Some(s.clone())),
        _ => Err(DocumentError::InvalidField(field)),
    }
}

fn parse_id_set(
    value: Option<&Value>,
    field: &'static str,
) -> Result<BTreeSet<String>, DocumentError> {
    let Some(value) = value else {
        return Ok(BTreeSet::new());
    };
    let items = value.as_array().ok_or(DocumentError::InvalidField(field))?;
    items
        .iter()
        .map(|v| match v {
            Value::String(s) if !s.is_empty() => Ok(s.clone()),
            _ => Err(DocumentError::InvalidField(field)),
        })
        .collect()
}

fn parse_run_digests(value: Option<&Value>) -> Result<BTreeMap<String, String>, DocumentError> {
    const FIELD: &str = "runDigests";
    let map = value
        .and_then(Value::as_object)
        .ok_or(DocumentError::InvalidField(FIELD))?;
    map.iter()
        .map(|(run_id, digest)| match digest {
            Value::String(d) if !run_id.is_empty() && is_digest(d) => {
                Ok((run_id.clone(), d.clone()))
            }
            _ => Err(DocumentError::InvalidField(FIELD)),
        })
        .collect()
}

fn parse_applied(
    value: Option<&Value>,
) -> Result<BTreeMap<(String, String), String>, DocumentError> {
    const FIELD: &str = "appliedResumeDigests";
    let items = value
        .and_then(Value::as_array)
        .ok_or(DocumentError::InvalidField(FIELD))?;
    let mut applied = BTreeMap::new();
    for item in items {
        let entry = item.as_object().ok_or(DocumentError::InvalidField(FIELD))?;
        let execution_id = required_str(entry, "executionId", FIELD)?;
        let interrupt_id = required_str(entry, "interruptId", FIELD)?;
        let digest = required_str(entry, "digest", FIELD)?;
        if !is_digest(&digest) {
            return Err(DocumentError::InvalidField(FIELD));
        }
        applied.insert((execution_id, interrupt_id), digest);
    }
    Ok(applied)
}

fn parse_pending(value: Option<&Value>) -> Result<BTreeMap<String, PendingInput>, DocumentError> {
    const FIELD: &str = "execution.pending";
    let Some(value) = value else {
        return Ok(BTreeMap::new());
    };
    let map = value
        .as_object()
        .ok_or(DocumentError::InvalidField(FIELD))?;
    let mut pending = BTreeMap::new();
    for (input_id, raw) in map {
        let entry = raw.as_object().ok_or(DocumentError::InvalidField(FIELD))?;
        let projection = entry
            .get("value")
            .filter(|v| v.is_object())
            .ok_or(DocumentError::InvalidField(FIELD))?;
        let sideband = match entry.get("sideband") {
            None => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => return Err(DocumentError::InvalidField(FIELD)),
        };
        let expires_at = match entry.get("expiresAt") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if parse_iso_ms(s).is_some() => Some(s.clone()),
            Some(_) => return Err(DocumentError::InvalidField(FIELD)),
        };
        let input = PendingInput::new(projection, sideband, expires_at);
        if input.value.get("inputId").and_then(Value::as_str) != Some(input_id.as_str()) {
            return Err(DocumentError::InvalidField(FIELD));
        }
        pending.insert(input_id.clone(), input);
    }
    Ok(pending)
}
