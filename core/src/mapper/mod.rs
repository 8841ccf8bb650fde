//! The A2A → AG-UI mapper (SPEC §6–7): one [`Mapper`] per run turns A2A
//! frames, GetTask snapshots and Pipeline recovery responses into AG-UI
//! events whose spans stay balanced, and reports what the run's state machine
//! must check or remember (ids, state, required inputs with their built
//! [`Interrupt`]s).
//!
//! The mapper owns no identity decisions, terminal decisions or persistence:
//! the machine (`crate::machine`) does. What the mapper needs to survive a
//! restart is [`DurableMapperState`], which the machine stores in the thread
//! document (SPEC §11 field names) and hands back to the next run of the same
//! execution.
//!
//! Time and fresh ids are inputs: every call that emits events takes `now_ms`
//! (the events' timestamp), and every call that may need a fresh id takes the
//! run's [`IdGen`]. Iteration that reaches output runs over ordered sets, so
//! the same inputs give byte-identical events on every runtime.
//!
//! Typical use by a run driver:
//! 1. [`Mapper::new`] with the run's [`RunContext`] and the stored state;
//! 2. right after `RUN_STARTED`: [`Mapper::reopen_steps`];
//! 3. on a resume: [`Mapper::feed_task`] with [`FeedOptions::SNAPSHOT`], then
//!    [`Mapper::feed_pipeline_recovery`]; after A2A accepted a question answer
//!    bound to a tool: [`Mapper::tool_result_for_answer`];
//! 4. per A2A frame: [`Mapper::feed`] with [`FeedOptions::LIVE`]; emit
//!    [`Mapped::events`], check [`Mapped::report`];
//! 5. on an interrupt: [`Mapper::finalize_text_snapshots`], persist
//!    [`Mapper::durable`], then [`Mapper::close_all`] and `RUN_FINISHED` with
//!    the reported interrupts; on any other end: [`Mapper::close_all`] and the
//!    terminal event with [`Mapper::usage`].

mod frame;
mod interrupt;
mod pipeline;
mod spans;
mod text;
mod tools;
mod usage;

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::a2a::{StreamResponse, Task, TaskState};
use crate::agui::{Event, EventBody, Interrupt, TokenUsage};
use crate::i18n::Language;
use crate::ids::IdGen;

pub use interrupt::{build_interrupt, iso_utc, public_projection, standard_options};

/// Default interrupt time to live (SPEC §7: 540 s).
pub const DEFAULT_INTERRUPT_TTL_MS: i64 = 540_000;

/// Who the run is and how it speaks: fixed for the whole run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunContext {
    /// The AG-UI thread id.
    pub thread_id: String,
    /// The AG-UI run id (reasoning ids fall back to it).
    pub run_id: String,
    /// The thread's A2A context id (`agui-…`); also the default Pipeline run id.
    pub context_id: String,
    /// The run's language, for the default interrupt texts.
    #[serde(default)]
    pub language: Language,
    /// Interrupt time to live in ms, for `expiresAt` (at least 1000).
    #[serde(default = "default_ttl")]
    pub interrupt_ttl_ms: i64,
    /// Input ids of this execution whose answer was already applied; such
    /// required inputs are never reported again.
    #[serde(default)]
    pub applied_input_ids: BTreeSet<String>,
}

/// The part of the mapper that outlives a run (SPEC §6 and §11: the
/// execution's `pipelineSequence`, `pipelineOpenSteps`,
/// `textSnapshotDigests`). Serialises with those field names; sets serialise
/// as sorted arrays.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DurableMapperState {
    /// Highest Pipeline envelope sequence seen; envelopes at or below it are
    /// dropped, and recovery asks for events after it.
    #[serde(default)]
    pub pipeline_sequence: i64,
    /// Step keys (`step:<id>` / `candidate:<cand>:<id>`) of Pipeline steps
    /// started and not finished, re-opened by the next run.
    #[serde(default)]
    pub pipeline_open_steps: BTreeSet<String>,
    /// SHA-256 (hex) of every finalised assistant text, for resume replay.
    #[serde(default)]
    pub text_snapshot_digests: BTreeSet<String>,
}

/// What to map from a frame or snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeedOptions {
    /// Map `pipeline` / `pipelineBatch` envelopes.
    pub include_pipeline: bool,
    /// Map status-message text (and the history fallback).
    pub include_status_text: bool,
}

impl FeedOptions {
    /// A live stream frame: everything.
    pub const LIVE: FeedOptions = FeedOptions {
        include_pipeline: true,
        include_status_text: true,
    };
    /// The GetTask snapshot of a resume (SPEC §8 step 4): no Pipeline
    /// envelopes (recovery supplies them) and no status text (it was shown).
    pub const SNAPSHOT: FeedOptions = FeedOptions {
        include_pipeline: false,
        include_status_text: false,
    };
}

impl Default for FeedOptions {
    fn default() -> Self {
        FeedOptions::LIVE
    }
}

/// A required input found in a frame (SPEC §7), ready to become pending.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RequiredInput {
    /// The interrupt id (`inputId`, or a generated `input-<hex>` when absent).
    pub input_id: String,
    /// The public projection (SPEC §11 field list), `inputId` filled in: what
    /// the thread document stores as `pending.<id>.value`.
    pub projection: Value,
    /// A concurrent Pipeline wait (candidate scope, `subPipelineId`, or a
    /// `pendingPermissions` entry), answered through unary SendMessage.
    pub sideband: bool,
    /// `requestTaskId` of the projection: must be the thread's task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_task_id: Option<String>,
    /// `contextId` of the projection: must be the thread's context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_id: Option<String>,
    /// The interrupt's `expiresAt` (also stored with the pending entry).
    pub expires_at: String,
    /// The AG-UI interrupt built from the projection.
    pub interrupt: Interrupt,
}

/// What a frame told the run, besides its events.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FrameReport {
    /// `taskId` (or a task's `id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// `contextId`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_id: Option<String>,
    /// Distinct iac-code session ids, top level first, then envelopes in
    /// order. More than one is already a conflict.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub session_ids: Vec<String>,
    /// The normalised task state, when the frame carries one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<TaskState>,
    /// Required inputs, deduplicated by input id, already-applied ones left out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<RequiredInput>,
}

/// The result of feeding one input to the mapper.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Mapped {
    /// Events to emit, in order, stamped with the call's `now_ms`.
    pub events: Vec<Event>,
    /// Ids, state and required inputs seen.
    pub report: FrameReport,
}

/// Values of `iac-code.session.v1` that the mapper does not know itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    /// The execution id.
    pub execution_id: String,
    /// The A2A task id, when known.
    pub task_id: Option<String>,
    /// The execution's `rosInvocationId`.
    pub ros_invocation_id: String,
    /// The iac-code session id, when known.
    pub session_id: Option<String>,
}

/// The stateful A2A → AG-UI mapper of one run.
#[derive(Debug, Clone)]
pub struct Mapper {
    ctx: RunContext,
    durable: DurableMapperState,
    spans: spans::Spans,
    text: text::TextState,
    pipeline: pipeline::PipelineState,
    usage: usage::UsageTotals,
}

impl Mapper {
    /// A mapper for one run, starting from the execution's stored state.
    pub fn new(ctx: RunContext, durable: DurableMapperState) -> Self {
        let pipeline = pipeline::PipelineState::new(&ctx.context_id);
        Mapper {
            ctx,
            durable,
            spans: spans::Spans::default(),
            text: text::TextState::default(),
            pipeline,
            usage: usage::UsageTotals::default(),
        }
    }

    /// The run context.
    pub fn context(&self) -> &RunContext {
        &self.ctx
    }

    /// The state to persist for the execution (read it after every feed that
    /// the machine persists, and after [`Mapper::finalize_text_snapshots`]).
    pub fn durable(&self) -> &DurableMapperState {
        &self.durable
    }

    /// Records that the answer of `input_id` was applied in this execution,
    /// so later frames repeating that input do not report it.
    pub fn mark_applied(&mut self, input_id: &str) {
        self.ctx.applied_input_ids.insert(input_id.to_owned());
    }

    /// Maps one A2A stream frame (or a unary `task`/`message` result).
    pub fn feed(
        &mut self,
        frame: &StreamResponse,
        options: FeedOptions,
        now_ms: i64,
        ids: &mut IdGen,
    ) -> Mapped {
        let view = frame::FrameView::of(frame);
        self.map_view(&view, view.report(), options, now_ms, ids)
    }

    /// [`Mapper::feed`] for a frame the caller is done with: a status
    /// update's ids move into the report instead of being copied.
    pub fn feed_owned(
        &mut self,
        mut frame: StreamResponse,
        options: FeedOptions,
        now_ms: i64,
        ids: &mut IdGen,
    ) -> Mapped {
        let StreamResponse::StatusUpdate(update) = &mut frame else {
            return self.feed(&frame, options, now_ms, ids);
        };
        let report = frame::take_report(update);
        self.map_view(&frame::FrameView::of(&frame), report, options, now_ms, ids)
    }

    /// Maps a GetTask (or CancelTask / SendMessage) task snapshot; on a resume
    /// pass [`FeedOptions::SNAPSHOT`].
    pub fn feed_task(
        &mut self,
        task: &Task,
        options: FeedOptions,
        now_ms: i64,
        ids: &mut IdGen,
    ) -> Mapped {
        let view = frame::FrameView::of_task(task);
        self.map_view(&view, view.report(), options, now_ms, ids)
    }

    /// Maps the 200 body of `GET /iac-code/pipeline/state`:
    /// `ACTIVITY_SNAPSHOT` of the snapshot, then the journal events not seen
    /// yet. A body without a `snapshot` object maps to nothing.
    pub fn feed_pipeline_recovery(
        &mut self,
        state: &Value,
        now_ms: i64,
        ids: &mut IdGen,
    ) -> Mapped {
        let mut out = Vec::new();
        let mut report = FrameReport::default();
        self.recover_pipeline(state, &mut out, &mut report, ids);
        Mapped {
            events: stamp(out, now_ms),
            report,
        }
    }

    /// `STEP_STARTED` for every durable open Pipeline step (sorted by key);
    /// call right after `RUN_STARTED` of a later run of the same execution.
    pub fn reopen_steps(&mut self, now_ms: i64) -> Vec<Event> {
        let mut out = Vec::new();
        let keys: Vec<String> = self.durable.pipeline_open_steps.iter().cloned().collect();
        for key in keys {
            let name = pipeline::step_name(&key);
            self.spans.open_step(&key, &name, &mut out);
        }
        stamp(out, now_ms)
    }

    /// `TOOL_CALL_RESULT` of a question bound to `tool_call_id` that the
    /// resumed run answered with `text` (SPEC §6 "Tools"); nothing when that
    /// tool already has a result in this run.
    pub fn tool_result_for_answer(
        &mut self,
        tool_call_id: &str,
        text: &str,
        now_ms: i64,
    ) -> Vec<Event> {
        let mut out = Vec::new();
        self.tool_result(tool_call_id, &Value::String(text.to_owned()), &mut out);
        stamp(out, now_ms)
    }

    /// Closes every open span in SPEC order: reasoning, tool calls, text
    /// messages, steps. Durable open steps stay durable.
    pub fn close_all(&mut self, now_ms: i64) -> Vec<Event> {
        let mut out = Vec::new();
        self.spans.close_reasoning(&mut out);
        self.spans.close_tools(&mut out);
        self.close_texts(&mut out);
        self.spans.close_steps(&mut out);
        stamp(out, now_ms)
    }

    /// Keeps the digest of every message text produced so far in this run
    /// (call before persisting an interrupt).
    pub fn finalize_text_snapshots(&mut self) {
        let texts = self.text.take_all();
        self.durable.text_snapshot_digests.extend(texts);
    }

    /// Usage summed per (provider, model) in first-seen order; `None` when
    /// nothing was recorded (the key is then omitted).
    pub fn usage(&self) -> Option<Vec<TokenUsage>> {
        self.usage.aggregate()
    }

    /// The `iac-code.session.v1` value (SPEC §6).
    pub fn session_value(&self, info: &SessionInfo) -> Value {
        serde_json::json!({
            "schemaVersion": 1,
            "threadId": self.ctx.thread_id,
            "aguiRunId": self.ctx.run_id,
            "executionId": info.execution_id,
            "contextId": self.ctx.context_id,
            "taskId": info.task_id,
            "rosInvocationId": info.ros_invocation_id,
            "sessionId": info.session_id,
        })
    }

    /// The `iac-code.session.v1` CUSTOM event.
    pub fn session_event(&self, info: &SessionInfo) -> EventBody {
        EventBody::Custom {
            name: "iac-code.session.v1".to_owned(),
            value: self.session_value(info),
        }
    }

    /// True while any span of this run is open.
    pub fn has_open_spans(&self) -> bool {
        self.spans.any_open()
    }
}

fn default_ttl() -> i64 {
    DEFAULT_INTERRUPT_TTL_MS
}

/// Stamps event bodies with one timestamp.
fn stamp(bodies: Vec<EventBody>, now_ms: i64) -> Vec<Event> {
    bodies
        .into_iter()
        .map(|body| Event::new(now_ms, body))
        .collect()
}
