//! Tool calls (SPEC §6 rows "tool status" and Pipeline `tool_started` /
//! `tool_result`): one START per id and run, ARGS+END once the input is
//! complete, one RESULT per id and run, progress as a CUSTOM event.

use serde_json::{Map, Value};

use super::Mapper;
use crate::agui::EventBody;
use crate::ids::IdGen;

impl Mapper {
    /// Maps a `metadata.iac_code.tool` object.
    pub(super) fn map_tool(
        &mut self,
        tool: &Map<String, Value>,
        out: &mut Vec<EventBody>,
        ids: &mut IdGen,
    ) {
        let status = tool.get("status").and_then(Value::as_str).unwrap_or("");
        let id = match non_empty(tool.get("toolUseId")) {
            Some(id) => id.to_owned(),
            None => format!("tool-{}", ids.uuid_hex()),
        };
        let name = non_empty(tool.get("name")).unwrap_or("tool");
        match status {
            "started" => self.start_tool(&id, name, out),
            "input_complete" => {
                self.start_tool(&id, name, out);
                let args = match tool.get("toolInput") {
                    Some(input) if !input.is_null() => input.clone(),
                    _ => serde_json::json!({
                        "summary": tool.get("inputSummary").cloned().unwrap_or(Value::Null)
                    }),
                };
                self.spans
                    .finish_tool(&id, crate::json::canonical_json(&args), out);
            }
            "completed" | "failed" => {
                let result = tool.get("result").cloned().unwrap_or(Value::Null);
                self.tool_result(&id, &result, out);
            }
            "progress" => {
                let mut value = tool.clone();
                value.insert("schemaVersion".to_owned(), Value::from(1));
                out.push(EventBody::Custom {
                    name: "iac-code.tool-progress.v1".to_owned(),
                    value: Value::Object(value),
                });
            }
            _ => {}
        }
    }

    /// `TOOL_CALL_RESULT` for `id`, once per run; the content is a string as
    /// is, else compact sorted JSON.
    pub(super) fn tool_result(&mut self, id: &str, result: &Value, out: &mut Vec<EventBody>) {
        if !self.spans.claim_tool_result(id) {
            return;
        }
        let content = match result {
            Value::String(s) => s.clone(),
            other => crate::json::canonical_json(other),
        };
        out.push(EventBody::ToolCallResult {
            message_id: format!("tool-result-{id}"),
            tool_call_id: id.to_owned(),
            content,
            role: Some("tool".to_owned()),
        });
    }

    /// A tool start finalises the current text snapshot, then opens the call
    /// under the current text message.
    fn start_tool(&mut self, id: &str, name: &str, out: &mut Vec<EventBody>) {
        if let Some(current) = self.spans.current_text.clone() {
            self.finalize_text(&current);
        }
        let parent = self.spans.current_text.clone();
        self.spans.start_tool(id, name, parent, out);
    }
}

/// A non-empty string value.
pub(super) fn non_empty(value: Option<&Value>) -> Option<&str> {
    value.and_then(Value::as_str).filter(|s| !s.is_empty())
}
