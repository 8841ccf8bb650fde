//! AG-UI wire types: the request body (`RunAgentInput`) and every event the
//! adapter emits (SPEC §6, AGUI.md §3).
//!
//! Serialisation is compact and deterministic: camelCase keys, absent
//! optionals omitted (never `null`), integer millisecond timestamps.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The body of `POST /`. Unknown top-level keys (`protocolVersion` from 1.0
/// clients, …) are kept in `extra` and otherwise ignored. `Debug` hides
/// `forwardedProps`: it carries request secrets (`llmApiKey`, cloud keys).
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunAgentInput {
    /// Stable conversation id.
    pub thread_id: String,
    /// This HTTP/SSE execution; never reused within the thread.
    pub run_id: String,
    /// Copied into `RUN_STARTED`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_run_id: Option<String>,
    /// Kept, not used as runtime state. The key is required; any value.
    pub state: Value,
    /// The conversation as the client sees it; a new run uses the latest user message.
    pub messages: Vec<Value>,
    /// Client tools; must be empty.
    pub tools: Vec<Value>,
    /// Kept, not yet turned into prompt context.
    pub context: Vec<Value>,
    /// Holds the `iacCode` extension. The key is required; any value.
    pub forwarded_props: Value,
    /// Answers to the pending interrupts, for a resume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume: Option<Vec<ResumeEntry>>,
    /// Unknown top-level keys, tolerated.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl core::fmt::Debug for RunAgentInput {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("RunAgentInput")
            .field("thread_id", &self.thread_id)
            .field("run_id", &self.run_id)
            .field("parent_run_id", &self.parent_run_id)
            .field("state", &self.state)
            .field("messages", &self.messages)
            .field("tools", &self.tools)
            .field("context", &self.context)
            .field("forwarded_props", &"<redacted>")
            .field("resume", &self.resume)
            .field("extra", &self.extra)
            .finish()
    }
}

/// One answer of a resume.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResumeEntry {
    /// The interrupt this answers.
    pub interrupt_id: String,
    /// `resolved` or `cancelled`.
    pub status: ResumeStatus,
    /// The answer, validated against the interrupt's `responseSchema`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<Value>,
    /// Free-form client metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

/// How a resume entry answers its interrupt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ResumeStatus {
    /// Answered with a payload.
    Resolved,
    /// Declined.
    Cancelled,
}

impl ResumeStatus {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ResumeStatus::Resolved => "resolved",
            ResumeStatus::Cancelled => "cancelled",
        }
    }
}

/// A paused run's question to the user (AGUI.md §4.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Interrupt {
    /// Correlation key, reused by `resume[].interruptId`.
    pub id: String,
    /// `tool_call` or `input_required`.
    pub reason: String,
    /// The human prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The tool call this interrupt is bound to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// JSON Schema for `resume[].payload`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_schema: Option<Value>,
    /// ISO-8601 UTC expiry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// Descriptive metadata for renderers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

/// Token usage of one (provider, model), summed over a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenUsage {
    /// Provider, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// Model family, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
    /// Total tokens.
    pub total_tokens: u64,
    /// Prompt tokens served from cache.
    pub cached_input_tokens: u64,
}

/// How a run ended when it ended with `RUN_FINISHED`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub enum Outcome {
    /// The run completed.
    Success,
    /// The run paused for user input.
    Interrupt {
        /// At least one interrupt.
        interrupts: Vec<Interrupt>,
    },
}

/// One AG-UI event: a timestamp and the event itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// Unix milliseconds, from the host's clock.
    pub timestamp: i64,
    /// The event.
    #[serde(flatten)]
    pub body: EventBody,
}

impl Event {
    /// Stamps `body` with `timestamp`.
    pub fn new(timestamp: i64, body: EventBody) -> Self {
        Event { timestamp, body }
    }

    /// The compact JSON text of the event (the `data:` of one SSE record).
    pub fn to_json(&self) -> String {
        // The delta events are nearly every event of a run: they are written
        // by hand, the same bytes serde writes (tested), without its generic
        // map machinery.
        match &self.body {
            EventBody::TextMessageContent { message_id, delta } => {
                return self.delta_json("TEXT_MESSAGE_CONTENT", "messageId", message_id, delta)
            }
            EventBody::ReasoningMessageContent { message_id, delta } => {
                return self.delta_json("REASONING_MESSAGE_CONTENT", "messageId", message_id, delta)
            }
            EventBody::ToolCallArgs {
                tool_call_id,
                delta,
            } => return self.delta_json("TOOL_CALL_ARGS", "toolCallId", tool_call_id, delta),
            _ => {}
        }
        // Room for an event with its ids, so that most are written without
        // growing the buffer.
        let mut json = Vec::with_capacity(256);
        match serde_json::to_writer(&mut json, self) {
            // serde_json writes UTF-8 only.
            Ok(()) => String::from_utf8(json).unwrap_or_default(),
            Err(_) => String::new(),
        }
    }

    /// `{"timestamp":…,"type":…,"<id_key>":…,"delta":…}`, as serde writes
    /// an event of two string fields.
    fn delta_json(&self, kind: &str, id_key: &str, id: &str, delta: &str) -> String {
        // The keys, the type and a 20-digit timestamp take under 100 bytes.
        let mut json = String::with_capacity(100 + kind.len() + id.len() + delta.len());
        json.push_str("{\"timestamp\":");
        json.push_str(itoa::Buffer::new().format(self.timestamp));
        json.push_str(",\"type\":\"");
        json.push_str(kind);
        json.push_str("\",\"");
        json.push_str(id_key);
        json.push_str("\":");
        crate::json::push_str_literal(&mut json, id);
        json.push_str(",\"delta\":");
        crate::json::push_str_literal(&mut json, delta);
        json.push('}');
        json
    }
}

/// Every event the adapter emits, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum EventBody {
    /// The first event of every run.
    #[serde(rename_all = "camelCase")]
    RunStarted {
        /// The request's thread id.
        thread_id: String,
        /// The request's run id.
        run_id: String,
        /// The request's parent run id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_run_id: Option<String>,
    },
    /// A successful or interrupted end.
    #[serde(rename_all = "camelCase")]
    RunFinished {
        /// The request's thread id.
        thread_id: String,
        /// The request's run id.
        run_id: String,
        /// Success or interrupt.
        outcome: Outcome,
        /// Aggregated usage, when any was recorded.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<Vec<TokenUsage>>,
    },
    /// A failed end.
    #[serde(rename_all = "camelCase")]
    RunError {
        /// Human-readable, translated.
        message: String,
        /// The protocol error code.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<String>,
        /// Partial usage.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<Vec<TokenUsage>>,
    },
    /// Opens an assistant text message.
    #[serde(rename_all = "camelCase")]
    TextMessageStart {
        /// Message id.
        message_id: String,
        /// Always `assistant` from this adapter.
        role: String,
    },
    /// A piece of an open text message.
    #[serde(rename_all = "camelCase")]
    TextMessageContent {
        /// Message id.
        message_id: String,
        /// Non-empty text.
        delta: String,
    },
    /// Closes a text message.
    #[serde(rename_all = "camelCase")]
    TextMessageEnd {
        /// Message id.
        message_id: String,
    },
    /// Opens a reasoning span.
    #[serde(rename_all = "camelCase")]
    ReasoningStart {
        /// Span id.
        message_id: String,
    },
    /// Opens a reasoning message.
    #[serde(rename_all = "camelCase")]
    ReasoningMessageStart {
        /// Message id.
        message_id: String,
        /// Always `reasoning`.
        role: String,
    },
    /// A piece of an open reasoning message.
    #[serde(rename_all = "camelCase")]
    ReasoningMessageContent {
        /// Message id.
        message_id: String,
        /// Text.
        delta: String,
    },
    /// Closes a reasoning message.
    #[serde(rename_all = "camelCase")]
    ReasoningMessageEnd {
        /// Message id.
        message_id: String,
    },
    /// Closes a reasoning span.
    #[serde(rename_all = "camelCase")]
    ReasoningEnd {
        /// Span id.
        message_id: String,
    },
    /// Opens a tool call.
    #[serde(rename_all = "camelCase")]
    ToolCallStart {
        /// Tool call id.
        tool_call_id: String,
        /// Tool name.
        tool_call_name: String,
        /// The text message the call belongs to.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_message_id: Option<String>,
    },
    /// The call's arguments (the whole compact JSON in one delta).
    #[serde(rename_all = "camelCase")]
    ToolCallArgs {
        /// Tool call id.
        tool_call_id: String,
        /// JSON text.
        delta: String,
    },
    /// Closes a tool call.
    #[serde(rename_all = "camelCase")]
    ToolCallEnd {
        /// Tool call id.
        tool_call_id: String,
    },
    /// A tool's result; not sequenced.
    #[serde(rename_all = "camelCase")]
    ToolCallResult {
        /// `tool-result-<toolCallId>`.
        message_id: String,
        /// Tool call id.
        tool_call_id: String,
        /// The result as text.
        content: String,
        /// Always `tool`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        role: Option<String>,
    },
    /// Opens a step.
    #[serde(rename_all = "camelCase")]
    StepStarted {
        /// Step name (the key of open steps).
        step_name: String,
    },
    /// Closes a step.
    #[serde(rename_all = "camelCase")]
    StepFinished {
        /// Step name.
        step_name: String,
    },
    /// Creates or replaces an activity message.
    #[serde(rename_all = "camelCase")]
    ActivitySnapshot {
        /// Activity message id.
        message_id: String,
        /// Activity type.
        activity_type: String,
        /// A JSON object.
        content: Value,
        /// Replace an existing activity of that id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        replace: Option<bool>,
    },
    /// A namespaced extension event.
    #[serde(rename_all = "camelCase")]
    Custom {
        /// Namespaced name, e.g. `iac-code.session.v1`.
        name: String,
        /// Any JSON.
        value: Value,
    },
}

impl EventBody {
    /// The `type` tag, e.g. `"RUN_STARTED"`.
    pub fn type_name(&self) -> &'static str {
        match self {
            EventBody::RunStarted { .. } => "RUN_STARTED",
            EventBody::RunFinished { .. } => "RUN_FINISHED",
            EventBody::RunError { .. } => "RUN_ERROR",
            EventBody::TextMessageStart { .. } => "TEXT_MESSAGE_START",
            EventBody::TextMessageContent { .. } => "TEXT_MESSAGE_CONTENT",
            EventBody::TextMessageEnd { .. } => "TEXT_MESSAGE_END",
            EventBody::ReasoningStart { .. } => "REASONING_START",
            EventBody::ReasoningMessageStart { .. } => "REASONING_MESSAGE_START",
            EventBody::ReasoningMessageContent { .. } => "REASONING_MESSAGE_CONTENT",
            EventBody::ReasoningMessageEnd { .. } => "REASONING_MESSAGE_END",
            EventBody::ReasoningEnd { .. } => "REASONING_END",
            EventBody::ToolCallStart { .. } => "TOOL_CALL_START",
            EventBody::ToolCallArgs { .. } => "TOOL_CALL_ARGS",
            EventBody::ToolCallEnd { .. } => "TOOL_CALL_END",
            EventBody::ToolCallResult { .. } => "TOOL_CALL_RESULT",
            EventBody::StepStarted { .. } => "STEP_STARTED",
            EventBody::StepFinished { .. } => "STEP_FINISHED",
            EventBody::ActivitySnapshot { .. } => "ACTIVITY_SNAPSHOT",
            EventBody::Custom { .. } => "CUSTOM",
        }
    }

    /// True for `RUN_FINISHED` and `RUN_ERROR`.
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            EventBody::RunFinished { .. } | EventBody::RunError { .. }
        )
    }
}
