//! A2A wire types as the iac-code runtime speaks them (A2A-WIRE.md §2–4).
//!
//! Parsing is tolerant: unknown fields are ignored, task states are read in
//! every spelling (`TASK_STATE_INPUT_REQUIRED`, `input-required`, …), and the
//! free-form `metadata` objects stay `serde_json::Value` so that float-typed
//! integers and odd shapes never fail a frame; [`crate::json::lenient_i64`]
//! reads their numbers.

use std::borrow::Cow;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

mod delta;
mod metadata;

pub use metadata::{IacCode, StatusMetadata};

/// The JSON-RPC methods the adapter calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Method {
    /// Send a message and stream the task's events (SSE).
    SendStreamingMessage,
    /// Send a message, answered with a task or a message.
    SendMessage,
    /// Read a task snapshot.
    GetTask,
    /// Cancel a task.
    CancelTask,
    /// Stream an active task's events (SSE).
    SubscribeToTask,
}

impl Method {
    /// The method name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::SendStreamingMessage => "SendStreamingMessage",
            Method::SendMessage => "SendMessage",
            Method::GetTask => "GetTask",
            Method::CancelTask => "CancelTask",
            Method::SubscribeToTask => "SubscribeToTask",
        }
    }

    /// True for the methods answered with an SSE stream.
    pub fn is_streaming(self) -> bool {
        matches!(self, Method::SendStreamingMessage | Method::SubscribeToTask)
    }
}

/// A JSON-RPC 2.0 request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonRpcRequest {
    /// Always `"2.0"`.
    pub jsonrpc: String,
    /// Request id, echoed by the response.
    pub id: String,
    /// Method name.
    pub method: String,
    /// Parameters.
    pub params: Value,
}

impl JsonRpcRequest {
    /// A request for `method` with `params`.
    pub fn new(id: impl Into<String>, method: Method, params: Value) -> Self {
        JsonRpcRequest {
            jsonrpc: "2.0".to_owned(),
            id: id.into(),
            method: method.as_str().to_owned(),
            params,
        }
    }
}

/// A JSON-RPC 2.0 response, or one frame of a streamed response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonRpcResponse {
    /// The result, on success.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The error, on failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<JsonRpcError>,
    /// The request id (null for a parse error).
    #[serde(default)]
    pub id: Value,
    /// `"2.0"`.
    #[serde(default)]
    pub jsonrpc: String,
}

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonRpcError {
    /// Error code, e.g. -32602.
    pub code: i64,
    /// Upstream text; never shown to an AG-UI caller.
    #[serde(default)]
    pub message: String,
    /// A list of `google.rpc` details, or an iac-code pass-through object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl JsonRpcError {
    /// True for the retryable pass-through error
    /// `data: {"code":"SESSION_BACKUP_NOT_READY","retryable":true}`.
    pub fn is_session_backup_not_ready(&self) -> bool {
        self.data
            .as_ref()
            .and_then(|d| d.get("code"))
            .and_then(Value::as_str)
            == Some("SESSION_BACKUP_NOT_READY")
    }
}

/// One `result` of a streamed call: exactly one of four shapes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StreamResponse {
    /// A task snapshot (first frame of a new task or of a subscription).
    Task(Task),
    /// A status update.
    StatusUpdate(TaskStatusUpdateEvent),
    /// An artifact update.
    ArtifactUpdate(TaskArtifactUpdateEvent),
    /// A message (side-band permission acknowledgement).
    Message(Message),
}

impl StreamResponse {
    /// The task id the frame names, if any.
    pub fn task_id(&self) -> Option<&str> {
        match self {
            StreamResponse::Task(t) => Some(&t.id),
            StreamResponse::StatusUpdate(s) => Some(&s.task_id),
            StreamResponse::ArtifactUpdate(a) => Some(&a.task_id),
            StreamResponse::Message(m) => m.task_id.as_deref(),
        }
    }

    /// The context id the frame names, if any.
    pub fn context_id(&self) -> Option<&str> {
        match self {
            StreamResponse::Task(t) => Some(&t.context_id),
            StreamResponse::StatusUpdate(s) => Some(&s.context_id),
            StreamResponse::ArtifactUpdate(a) => Some(&a.context_id),
            StreamResponse::Message(m) => m.context_id.as_deref(),
        }
    }

    /// The task state the frame carries, if any.
    pub fn state(&self) -> Option<&TaskState> {
        match self {
            StreamResponse::Task(t) => Some(&t.status.state),
            StreamResponse::StatusUpdate(s) => Some(&s.status.state),
            _ => None,
        }
    }

    /// The frame's `metadata.iac_code` object, if it is one.
    pub fn iac_code(&self) -> Option<IacCode<'_>> {
        match self {
            StreamResponse::Task(t) => IacCode::of_value(t.metadata.as_ref()),
            StreamResponse::StatusUpdate(s) => s.metadata.as_ref()?.iac_code(),
            StreamResponse::ArtifactUpdate(_) => None,
            StreamResponse::Message(m) => IacCode::of_value(m.metadata.as_ref()),
        }
    }
}

/// One frame of an A2A stream, parsed once, by whoever read it off the wire.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamFrame {
    /// A `result` in one of the four shapes.
    Result(Box<StreamResponse>),
    /// An `error` member (it wins over a `result` in the same frame); one
    /// that is not a JSON-RPC error object reads as code 0.
    Error(JsonRpcError),
    /// Neither: no `error`, and a `result` that is missing or unreadable.
    Malformed,
}

impl StreamFrame {
    /// Parses an SSE `data` payload; `None` when it is not a JSON object.
    /// A status update's usual shape is read by hand (`delta.rs`); other
    /// well-formed frames straight into their types (no intermediate
    /// `Value`); anything else goes through
    /// [`StreamFrame::from_value`], so both paths decide alike.
    pub fn parse(data: &str) -> Option<StreamFrame> {
        delta::read(data).or_else(|| StreamFrame::parse_by_serde(data))
    }

    /// [`StreamFrame::parse`] of a payload the caller gives up: a message
    /// text that is most of it (a run's last frame carries the whole
    /// answer) takes over its buffer instead of being copied.
    pub fn parse_owned(mut data: String) -> Option<StreamFrame> {
        delta::take(&mut data).or_else(|| StreamFrame::parse_by_serde(&data))
    }

    fn parse_by_serde(data: &str) -> Option<StreamFrame> {
        #[derive(Deserialize)]
        struct Typed {
            #[serde(default)]
            result: Option<Box<StreamResponse>>,
            #[serde(default)]
            error: Option<JsonRpcError>,
        }
        if data.trim_start().starts_with('{') {
            if let Ok(Typed { result, error }) = serde_json::from_str::<Typed>(data) {
                return Some(match (error, result) {
                    (Some(error), _) => StreamFrame::Error(error),
                    (None, Some(result)) => StreamFrame::Result(result),
                    (None, None) => StreamFrame::Malformed,
                });
            }
        }
        match serde_json::from_str::<Value>(data) {
            Ok(value) if value.is_object() => Some(StreamFrame::from_value(value)),
            _ => None,
        }
    }

    /// Reads a JSON-RPC response object (a non-null `error` wins).
    pub fn from_value(mut frame: Value) -> StreamFrame {
        if let Some(error) = frame.get_mut("error").filter(|e| !e.is_null()) {
            return StreamFrame::Error(serde_json::from_value(error.take()).unwrap_or(
                JsonRpcError {
                    code: 0,
                    message: String::new(),
                    data: None,
                },
            ));
        }
        frame
            .get_mut("result")
            .map(Value::take)
            .and_then(|r| serde_json::from_value::<StreamResponse>(r).ok())
            .map_or(StreamFrame::Malformed, |r| StreamFrame::Result(Box::new(r)))
    }

    /// The JSON-RPC response object (`Malformed` as `{"result":null}`).
    pub fn to_value(&self) -> Value {
        let member = match self {
            StreamFrame::Result(r) => ("result", serde_json::to_value(r).unwrap_or(Value::Null)),
            StreamFrame::Error(e) => ("error", serde_json::to_value(e).unwrap_or(Value::Null)),
            StreamFrame::Malformed => ("result", Value::Null),
        };
        let mut frame = Map::new();
        frame.insert("jsonrpc".into(), Value::from("2.0"));
        frame.insert(member.0.into(), member.1);
        Value::Object(frame)
    }
}

impl Serialize for StreamFrame {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_value().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for StreamFrame {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Value::deserialize(deserializer).map(StreamFrame::from_value)
    }
}

/// An A2A task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// Task id (an SDK UUID).
    pub id: String,
    /// Context id.
    #[serde(default)]
    pub context_id: String,
    /// Current status.
    pub status: TaskStatus,
    /// Message history (not reliable; see A2A-WIRE.md §3.2).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<Message>,
    /// Artifacts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<Value>,
    /// Merged metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

/// A task's status.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatus {
    /// The state.
    pub state: TaskState,
    /// Agent text, when the update carries some (boxed: most frames carry
    /// none, and a frame is moved a few times while it is parsed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Box<Message>>,
    /// RFC 3339 time, on lifecycle events only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
}

/// `result.statusUpdate`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatusUpdateEvent {
    /// Task id.
    pub task_id: String,
    /// Context id.
    #[serde(default)]
    pub context_id: String,
    /// The new status.
    pub status: TaskStatus,
    /// `metadata.iac_code` and friends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<StatusMetadata>,
}

/// `result.artifactUpdate`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskArtifactUpdateEvent {
    /// Task id.
    pub task_id: String,
    /// Context id.
    #[serde(default)]
    pub context_id: String,
    /// The artifact, kept whole for `iac-code.artifact.v1`.
    pub artifact: Value,
    /// Append to an earlier chunk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub append: Option<bool>,
    /// Last chunk of the artifact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_chunk: Option<bool>,
}

/// An A2A message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    /// Message id.
    #[serde(default)]
    pub message_id: String,
    /// Context id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_id: Option<String>,
    /// Task id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// `ROLE_USER` or `ROLE_AGENT`; those two are read without a copy
    /// (every relayed delta names its role).
    #[serde(default, deserialize_with = "read_role")]
    pub role: Cow<'static, str>,
    /// The content.
    #[serde(default)]
    pub parts: Vec<Part>,
    /// Metadata (`metadata.iac_code` on requests).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

impl Message {
    /// True for agent messages, whatever the role spelling.
    pub fn is_agent(&self) -> bool {
        self.role.eq_ignore_ascii_case("role_agent") || self.role.eq_ignore_ascii_case("agent")
    }

    /// The concatenated text of the text parts (borrowed when there is
    /// only one, as in every streamed delta).
    pub fn text(&self) -> Cow<'_, str> {
        let mut texts = self.parts.iter().filter_map(|p| p.text.as_deref());
        match (texts.next(), texts.next()) {
            (None, _) => Cow::Borrowed(""),
            (Some(only), None) => Cow::Borrowed(only),
            (Some(first), Some(second)) => {
                let mut all = format!("{first}{second}");
                all.extend(texts);
                Cow::Owned(all)
            }
        }
    }
}

fn read_role<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Cow<'static, str>, D::Error> {
    struct Visitor;
    impl serde::de::Visitor<'_> for Visitor {
        type Value = Cow<'static, str>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a role string")
        }
        fn visit_str<E: serde::de::Error>(self, raw: &str) -> Result<Self::Value, E> {
            Ok(role_of(raw))
        }
    }
    deserializer.deserialize_str(Visitor)
}

/// A role as read: the runtime's two spellings without a copy.
fn role_of(raw: &str) -> Cow<'static, str> {
    match raw {
        "ROLE_AGENT" => Cow::Borrowed("ROLE_AGENT"),
        "ROLE_USER" => Cow::Borrowed("ROLE_USER"),
        other => Cow::Owned(other.to_owned()),
    }
}

/// One part of a message: text, data, raw bytes or a URL.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Part {
    /// Text content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// JSON data (permission answers, images as `{filename, bytes}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    /// Base64 bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<String>,
    /// A file URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Part-level file name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
    /// Media type; absent means text/plain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    /// Part metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

impl Part {
    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        Part {
            text: Some(text.into()),
            ..Part::default()
        }
    }

    /// A JSON data part with `mediaType: application/json`.
    pub fn json(data: Value) -> Self {
        Part {
            data: Some(data),
            media_type: Some("application/json".to_owned()),
            ..Part::default()
        }
    }
}

/// A task state, read in any spelling.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TaskState {
    /// `submitted`.
    Submitted,
    /// `working`.
    Working,
    /// `input-required`: a wait, or the normal end of an iac-code turn.
    InputRequired,
    /// `completed`.
    Completed,
    /// `failed`.
    Failed,
    /// `canceled`.
    Canceled,
    /// `rejected`.
    Rejected,
    /// `auth-required`.
    AuthRequired,
    /// Anything else, normalised.
    Other(String),
}

impl TaskState {
    /// Reads a state: lower-cased, `task_state_` dropped, `_` → `-`.
    pub fn parse(raw: &str) -> TaskState {
        // The runtime's own spelling, on every status frame: no allocation.
        match raw {
            "TASK_STATE_WORKING" => return TaskState::Working,
            "TASK_STATE_SUBMITTED" => return TaskState::Submitted,
            _ => {}
        }
        let lower = raw.trim().to_ascii_lowercase();
        let stripped = lower.strip_prefix("task_state_").unwrap_or(&lower);
        match stripped.replace('_', "-").as_str() {
            "submitted" => TaskState::Submitted,
            "working" => TaskState::Working,
            "input-required" => TaskState::InputRequired,
            "completed" => TaskState::Completed,
            "failed" => TaskState::Failed,
            "canceled" | "cancelled" => TaskState::Canceled,
            "rejected" => TaskState::Rejected,
            "auth-required" => TaskState::AuthRequired,
            other => TaskState::Other(other.to_owned()),
        }
    }

    /// The normalised kebab-case name.
    pub fn as_str(&self) -> &str {
        match self {
            TaskState::Submitted => "submitted",
            TaskState::Working => "working",
            TaskState::InputRequired => "input-required",
            TaskState::Completed => "completed",
            TaskState::Failed => "failed",
            TaskState::Canceled => "canceled",
            TaskState::Rejected => "rejected",
            TaskState::AuthRequired => "auth-required",
            TaskState::Other(s) => s,
        }
    }

    /// The wire enum name, e.g. `TASK_STATE_INPUT_REQUIRED`.
    pub fn wire_name(&self) -> String {
        format!(
            "TASK_STATE_{}",
            self.as_str().replace('-', "_").to_ascii_uppercase()
        )
    }

    /// True for states after which the task does nothing more by itself
    /// (`input-required` included: iac-code ends every normal turn with it),
    /// which are the states that end an AG-UI run (SPEC §6).
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            TaskState::InputRequired
                | TaskState::Completed
                | TaskState::Failed
                | TaskState::Canceled
                | TaskState::Rejected
                | TaskState::AuthRequired
        )
    }
}

impl Serialize for TaskState {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.wire_name())
    }
}

impl<'de> Deserialize<'de> for TaskState {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = TaskState;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a task state string")
            }
            fn visit_str<E: serde::de::Error>(self, raw: &str) -> Result<TaskState, E> {
                Ok(TaskState::parse(raw))
            }
        }
        // A visitor rather than a `String`: the state is read without a copy.
        deserializer.deserialize_str(Visitor)
    }
}
