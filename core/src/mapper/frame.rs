//! One A2A frame or task snapshot, seen the same way whatever its shape, and
//! the order in which its parts are mapped (SPEC §6; A2A-WIRE.md §3.1).

use std::borrow::Cow;

use serde_json::{json, Value};

use super::interrupt::collect_inputs;
use super::pipeline::collect_session_id;
use super::tools::non_empty;
use super::{stamp, FeedOptions, FrameReport, Mapped, Mapper};
use crate::a2a::{
    IacCode, Message, StatusMetadata, StreamResponse, Task, TaskState, TaskStatusUpdateEvent,
};
use crate::agui::EventBody;
use crate::ids::IdGen;

/// The parts of a frame the mapper reads.
pub(super) struct FrameView<'a> {
    task_id: Option<&'a str>,
    context_id: Option<&'a str>,
    state: Option<&'a TaskState>,
    status_message: Option<&'a Message>,
    history: &'a [Message],
    iac_code: Option<IacCode<'a>>,
    artifact: Option<&'a Value>,
}

impl<'a> FrameView<'a> {
    pub(super) fn of(frame: &'a StreamResponse) -> Self {
        match frame {
            StreamResponse::Task(task) => FrameView::of_task(task),
            StreamResponse::StatusUpdate(update) => FrameView {
                task_id: Some(update.task_id.as_str()),
                context_id: Some(update.context_id.as_str()),
                state: Some(&update.status.state),
                status_message: update.status.message.as_deref(),
                history: &[],
                iac_code: update.metadata.as_ref().and_then(StatusMetadata::iac_code),
                artifact: None,
            },
            StreamResponse::ArtifactUpdate(update) => FrameView {
                task_id: Some(update.task_id.as_str()),
                context_id: Some(update.context_id.as_str()),
                state: None,
                status_message: None,
                history: &[],
                iac_code: None,
                artifact: Some(&update.artifact),
            },
            StreamResponse::Message(message) => FrameView {
                task_id: message.task_id.as_deref(),
                context_id: message.context_id.as_deref(),
                state: None,
                status_message: None,
                history: &[],
                iac_code: IacCode::of_value(message.metadata.as_ref()),
                artifact: None,
            },
        }
    }

    pub(super) fn of_task(task: &'a Task) -> Self {
        FrameView {
            task_id: Some(task.id.as_str()),
            context_id: Some(task.context_id.as_str()),
            state: Some(&task.status.state),
            status_message: task.status.message.as_deref(),
            history: &task.history,
            iac_code: IacCode::of_value(task.metadata.as_ref()),
            artifact: None,
        }
    }

    /// The frame's own ids and state, copied into a new report.
    pub(super) fn report(&self) -> FrameReport {
        let session = non_empty(self.iac_code.and_then(|c| c.get("iacCodeSessionId")));
        FrameReport {
            task_id: self.task_id.filter(|s| !s.is_empty()).map(str::to_owned),
            context_id: self.context_id.filter(|s| !s.is_empty()).map(str::to_owned),
            session_ids: session.map(str::to_owned).into_iter().collect(),
            state: self.state.cloned(),
            ..FrameReport::default()
        }
    }
}

/// The ids and state of a status update, moved out of it into a new report
/// (one per relayed delta: no copies). What is left maps as before.
pub(super) fn take_report(update: &mut TaskStatusUpdateEvent) -> FrameReport {
    let session = update
        .metadata
        .as_mut()
        .and_then(StatusMetadata::take_session_id);
    FrameReport {
        task_id: Some(std::mem::take(&mut update.task_id)).filter(|s| !s.is_empty()),
        context_id: Some(std::mem::take(&mut update.context_id)).filter(|s| !s.is_empty()),
        session_ids: session.into_iter().collect(),
        state: Some(update.status.state.clone()),
        ..FrameReport::default()
    }
}

impl Mapper {
    /// Maps a frame: Pipeline batch then envelope, thinking, tool, usage,
    /// artifact, then text; and adds envelope session ids and required
    /// inputs to `report`, which holds the frame's own ids and state.
    pub(super) fn map_view(
        &mut self,
        view: &FrameView<'_>,
        mut report: FrameReport,
        options: FeedOptions,
        now_ms: i64,
        ids: &mut IdGen,
    ) -> Mapped {
        let mut out = Vec::new();
        let empty = serde_json::Map::new();
        let iac_code = view.iac_code.unwrap_or_else(|| IacCode::of_map(&empty));
        let batch = iac_code
            .get("pipelineBatch")
            .and_then(|b| b.get("events"))
            .and_then(Value::as_array);
        let single = iac_code.get("pipeline").and_then(Value::as_object);
        let envelopes = batch
            .into_iter()
            .flatten()
            .filter_map(Value::as_object)
            .chain(single);
        for envelope in envelopes {
            collect_session_id(envelope, &mut report);
            if options.include_pipeline {
                self.map_envelope(envelope, &mut out, ids);
            }
        }
        if let Some(thinking) = iac_code.get("thinking").filter(|t| t.is_object()) {
            self.map_thinking(thinking, None, &mut out);
        }
        if let Some(tool) = iac_code.get("tool").and_then(Value::as_object) {
            self.map_tool(tool, &mut out, ids);
        }
        if let Some(usage) = iac_code.get("usage").and_then(Value::as_object) {
            self.usage.record(usage);
        }
        if let Some(artifact) = view.artifact.and_then(Value::as_object) {
            let mut value = artifact.clone();
            value.insert("schemaVersion".to_owned(), json!(1));
            out.push(EventBody::Custom {
                name: "iac-code.artifact.v1".to_owned(),
                value: Value::Object(value),
            });
        }
        if options.include_status_text {
            self.map_frame_text(view, iac_code, &mut out, ids);
        }
        report.inputs = collect_inputs(iac_code, &self.ctx, now_ms, ids);
        Mapped {
            events: stamp(out, now_ms),
            report,
        }
    }

    /// Status text (or, once, the trailing agent messages of a snapshot's
    /// history); an `assistantFinal` repeating streamed text is skipped.
    fn map_frame_text(
        &mut self,
        view: &FrameView<'_>,
        iac_code: IacCode<'_>,
        out: &mut Vec<EventBody>,
        ids: &mut IdGen,
    ) {
        let status = view.status_message.filter(|m| is_agent(m));
        let mut text = status.map(Message::text).unwrap_or_default();
        let mut message_id = status
            .map(|m| m.message_id.as_str())
            .filter(|s| !s.is_empty());
        if text.is_empty() && !self.text.emitted {
            let (history_text, history_id) = trailing_agent_text(view.history);
            text = Cow::Owned(history_text);
            message_id = message_id.or(history_id);
        }
        let final_repeat = iac_code
            .get("assistantFinal")
            .and_then(|f| f.get("complete"))
            == Some(&Value::Bool(true));
        if text.is_empty() || (final_repeat && self.text.emitted) {
            return;
        }
        self.map_status_text(&text, message_id, out, ids);
    }
}

/// Agent role in any spelling; a message without a role counts as agent
/// text when it is a status message.
fn is_agent(message: &Message) -> bool {
    message.role.is_empty() || message.is_agent()
}

/// The text of the trailing agent messages of `history` and the last
/// message id among them.
fn trailing_agent_text(history: &[Message]) -> (String, Option<&str>) {
    let mut trailing: Vec<&Message> = Vec::new();
    for message in history.iter().rev() {
        if message.is_agent() {
            trailing.push(message);
        } else if !trailing.is_empty() {
            break;
        }
    }
    trailing.reverse();
    let mut text = String::new();
    let mut id = None;
    for message in trailing {
        if !message.message_id.is_empty() {
            id = Some(message.message_id.as_str());
        }
        text.push_str(&message.text());
    }
    (text, id)
}
