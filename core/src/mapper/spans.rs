//! Bookkeeping of the AG-UI spans open in one run.
//!
//! Every START goes through here and is refused when its id (or step name) is
//! already open; every CONTENT/ARGS/END is only produced for an open id. That
//! is what keeps the mapper's output valid for the AG-UI verifiers whatever
//! A2A sends (AGUI.md §6 rules 5, 6, 8, 11).

use std::collections::{BTreeMap, BTreeSet};

use crate::agui::EventBody;

/// Open text messages, reasoning spans, tool calls and steps of the run.
#[derive(Debug, Clone, Default)]
pub(super) struct Spans {
    /// Open text message ids.
    texts: BTreeSet<String>,
    /// The message that status text without an id joins, and the parent of
    /// new tool calls.
    pub(super) current_text: Option<String>,
    /// Open reasoning ids (span and message share the id).
    reasoning: BTreeSet<String>,
    /// Open tool call ids.
    tools: BTreeSet<String>,
    /// Tool ids started in this run: a START is sent once per id.
    tools_started: BTreeSet<String>,
    /// Tool ids whose result was sent in this run.
    tool_results: BTreeSet<String>,
    /// Open steps of this run: step key → AG-UI step name.
    steps: BTreeMap<String, String>,
}

impl Spans {
    pub(super) fn text_open(&self, id: &str) -> bool {
        self.texts.contains(id)
    }

    /// Opens text message `id`.
    pub(super) fn open_text(&mut self, id: &str, out: &mut Vec<EventBody>) {
        if self.texts.insert(id.to_owned()) {
            out.push(EventBody::TextMessageStart {
                message_id: id.to_owned(),
                role: "assistant".to_owned(),
            });
        }
    }

    /// Appends to open text message `id`; empty deltas are never sent.
    pub(super) fn text_content(&mut self, id: &str, delta: &str, out: &mut Vec<EventBody>) {
        if !delta.is_empty() && self.texts.contains(id) {
            out.push(EventBody::TextMessageContent {
                message_id: id.to_owned(),
                delta: delta.to_owned(),
            });
        }
    }

    /// Closes text message `id` if open; the current message moves to the
    /// first other open one. Returns whether it was open.
    pub(super) fn close_text(&mut self, id: &str, out: &mut Vec<EventBody>) -> bool {
        if !self.texts.remove(id) {
            return false;
        }
        out.push(EventBody::TextMessageEnd {
            message_id: id.to_owned(),
        });
        if self.current_text.as_deref() == Some(id) {
            self.current_text = self.texts.iter().next().cloned();
        }
        true
    }

    /// Open text ids, sorted.
    pub(super) fn open_texts(&self) -> Vec<String> {
        self.texts.iter().cloned().collect()
    }

    /// Appends reasoning to span `id`, opening span and message first.
    pub(super) fn reasoning(&mut self, id: &str, delta: &str, out: &mut Vec<EventBody>) {
        if self.reasoning.insert(id.to_owned()) {
            out.push(EventBody::ReasoningStart {
                message_id: id.to_owned(),
            });
            out.push(EventBody::ReasoningMessageStart {
                message_id: id.to_owned(),
                role: "reasoning".to_owned(),
            });
        }
        out.push(EventBody::ReasoningMessageContent {
            message_id: id.to_owned(),
            delta: delta.to_owned(),
        });
    }

    /// Closes every reasoning message and span, sorted by id.
    pub(super) fn close_reasoning(&mut self, out: &mut Vec<EventBody>) {
        for id in std::mem::take(&mut self.reasoning) {
            out.push(EventBody::ReasoningMessageEnd {
                message_id: id.clone(),
            });
            out.push(EventBody::ReasoningEnd { message_id: id });
        }
    }

    /// Starts tool call `id` unless it was started in this run already.
    pub(super) fn start_tool(
        &mut self,
        id: &str,
        name: &str,
        parent: Option<String>,
        out: &mut Vec<EventBody>,
    ) {
        if !self.tools_started.insert(id.to_owned()) {
            return;
        }
        self.tools.insert(id.to_owned());
        out.push(EventBody::ToolCallStart {
            tool_call_id: id.to_owned(),
            tool_call_name: name.to_owned(),
            parent_message_id: parent,
        });
    }

    /// Sends the arguments of open tool call `id` and closes it.
    pub(super) fn finish_tool(&mut self, id: &str, args: String, out: &mut Vec<EventBody>) {
        if !self.tools.remove(id) {
            return;
        }
        out.push(EventBody::ToolCallArgs {
            tool_call_id: id.to_owned(),
            delta: args,
        });
        out.push(EventBody::ToolCallEnd {
            tool_call_id: id.to_owned(),
        });
    }

    /// Closes every open tool call, sorted by id.
    pub(super) fn close_tools(&mut self, out: &mut Vec<EventBody>) {
        for id in std::mem::take(&mut self.tools) {
            out.push(EventBody::ToolCallEnd { tool_call_id: id });
        }
    }

    /// Records that tool `id` has its result; false when it already had one.
    pub(super) fn claim_tool_result(&mut self, id: &str) -> bool {
        self.tool_results.insert(id.to_owned())
    }

    /// Opens step `key` named `name`, unless the key or the name is open.
    pub(super) fn open_step(&mut self, key: &str, name: &str, out: &mut Vec<EventBody>) -> bool {
        if self.steps.contains_key(key) || self.step_name_open(name) {
            return false;
        }
        self.steps.insert(key.to_owned(), name.to_owned());
        out.push(EventBody::StepStarted {
            step_name: name.to_owned(),
        });
        true
    }

    /// Closes step `key` if open in this run; returns whether it was.
    pub(super) fn close_step(&mut self, key: &str, out: &mut Vec<EventBody>) -> bool {
        let Some(name) = self.steps.remove(key) else {
            return false;
        };
        out.push(EventBody::StepFinished { step_name: name });
        true
    }

    /// A zero-length STARTED+FINISHED pair for a step finished before this
    /// run opened it (the name must not be open under another key).
    pub(super) fn step_blip(&mut self, name: &str, out: &mut Vec<EventBody>) {
        if self.step_name_open(name) {
            return;
        }
        out.push(EventBody::StepStarted {
            step_name: name.to_owned(),
        });
        out.push(EventBody::StepFinished {
            step_name: name.to_owned(),
        });
    }

    /// Closes every step of this run, sorted by key.
    pub(super) fn close_steps(&mut self, out: &mut Vec<EventBody>) {
        for (_, name) in std::mem::take(&mut self.steps) {
            out.push(EventBody::StepFinished { step_name: name });
        }
    }

    pub(super) fn any_open(&self) -> bool {
        !(self.texts.is_empty()
            && self.reasoning.is_empty()
            && self.tools.is_empty()
            && self.steps.is_empty())
    }

    fn step_name_open(&self, name: &str) -> bool {
        self.steps.values().any(|n| n == name)
    }
}
