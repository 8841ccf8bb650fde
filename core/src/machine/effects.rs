//! The plain data a host exchanges with the [`super::Machine`]: settings,
//! loaded documents, effects (`Output`) and their outcomes (`Answer`).

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::a2a::{JsonRpcRequest, StreamFrame};
use crate::agui::Event;
use crate::document::Encoded;

/// Names one effect; its answer comes back with the same id.
pub type EffectId = u64;

/// Host settings the machine needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Config {
    /// Interrupt time to live in ms (`--interrupt-ttl`, default 540 s,
    /// at least 1 s).
    pub interrupt_ttl_ms: i64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            interrupt_ttl_ms: crate::mapper::DEFAULT_INTERRUPT_TTL_MS,
        }
    }
}

/// What the host found when it read a thread's document.
#[derive(Debug, Clone, PartialEq)]
pub enum Load {
    /// No document: the thread does not exist yet.
    Missing,
    /// The stored JSON.
    Found(Value),
    /// Unreadable (I/O error, not JSON, …).
    Unreadable,
}

/// The outcome of one effect, fed back with [`super::Machine::handle_answer`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Answer {
    /// A `Persist` finished; `ok: false` when the write failed.
    Persisted {
        /// True when the document is durably stored.
        ok: bool,
    },
    /// One frame of an A2A stream (its `result` or `error`). A call the
    /// runtime rejected before streaming (a plain JSON body) comes back as
    /// one such frame. In JSON, the JSON-RPC response object.
    Frame(StreamFrame),
    /// The A2A stream ended.
    StreamEnded,
    /// The JSON-RPC response object of a unary A2A call.
    Response(Value),
    /// The response of an `Http` effect.
    Http {
        /// HTTP status.
        status: u16,
        /// The JSON body (`null` when it was not JSON).
        body: Value,
    },
    /// Connecting, sending or reading failed.
    Failed,
}

/// A JSON-RPC request for the A2A runtime. `Debug` shows only the method and
/// id because the request may carry request-local secrets.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct A2aBody(pub JsonRpcRequest);

impl core::fmt::Debug for A2aBody {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "A2aBody({} {}, <redacted>)", self.0.method, self.0.id)
    }
}

/// Everything the machine asks the host to do.
///
/// The outputs of a run name it with shared strings: a run emits an event
/// for nearly every relayed frame, and copying its two ids for each was
/// two of the 27 allocations of a relayed text delta (BENCHMARKS.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Output {
    /// The run is admitted: start the SSE stream; its events follow as `Emit`.
    #[serde(rename_all = "camelCase")]
    Admitted {
        /// Thread of the run.
        thread_id: Arc<str>,
        /// The run.
        run_id: Arc<str>,
    },
    /// The request is refused before the stream: answer `status` with `body`
    /// (the JSON error envelope).
    #[serde(rename_all = "camelCase")]
    Refused {
        /// Thread of the request.
        thread_id: Arc<str>,
        /// Run id of the request.
        run_id: Arc<str>,
        /// HTTP status.
        status: u16,
        /// `{"error":{"code","message"}}`.
        body: Value,
    },
    /// Write one AG-UI event to the run's SSE stream.
    #[serde(rename_all = "camelCase")]
    Emit {
        /// Thread of the run.
        thread_id: Arc<str>,
        /// The run.
        run_id: Arc<str>,
        /// The event.
        event: Event,
    },
    /// The run is over: close its SSE stream (its terminal event was emitted,
    /// or its client is gone).
    #[serde(rename_all = "camelCase")]
    RunEnded {
        /// Thread of the run.
        thread_id: Arc<str>,
        /// The run.
        run_id: Arc<str>,
    },
    /// Atomically replace the thread's document (SPEC §11), then answer
    /// `Persisted`. Writes of one thread must happen in order.
    #[serde(rename_all = "camelCase")]
    Persist {
        /// Effect id.
        id: EffectId,
        /// Thread whose file to write (see `document::thread_key`).
        thread_id: String,
        /// The document, as its file holds it.
        document: Encoded,
    },
    /// Send a JSON-RPC request to the A2A runtime (`A2A-Version: 1.0`, its
    /// bearer token). Streaming methods answer with `Frame`s then
    /// `StreamEnded`; unary ones with one `Response`; failures with `Failed`.
    #[serde(rename_all = "camelCase")]
    A2a {
        /// Effect id.
        id: EffectId,
        /// True for SendStreamingMessage and SubscribeToTask.
        streaming: bool,
        /// The request.
        request: A2aBody,
    },
    /// Call an iac-code HTTP extension endpoint of the runtime; answer `Http`.
    #[serde(rename_all = "camelCase")]
    Http {
        /// Effect id.
        id: EffectId,
        /// `GET` or `POST`.
        method: String,
        /// Path and query, e.g. `/iac-code/pipeline/state?taskId=…`.
        path: String,
        /// JSON body for `POST`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        body: Option<Value>,
    },
    /// Stop reading the A2A stream of that effect; no answer expected.
    #[serde(rename_all = "camelCase")]
    CloseStream {
        /// The stream's effect id.
        id: EffectId,
    },
    /// Answer a cancel-extension request.
    #[serde(rename_all = "camelCase")]
    CancelAnswered {
        /// The ticket [`super::Machine::handle_cancel`] returned.
        ticket: u64,
        /// HTTP status.
        status: u16,
        /// JSON body.
        body: Value,
    },
}
