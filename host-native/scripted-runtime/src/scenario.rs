//! Scenario keywords and the normal-mode scripts (A2A-WIRE §3.8, §9).
//!
//! A user message chooses a scenario with `scenario:<name>` anywhere in its
//! text; without one the turn is `plain`. Normal-mode turns follow the
//! canonical shape of the captures: SUBMITTED, WORKING, deltas and tool
//! frames, usage, the full text with `assistantFinal`, and INPUT_REQUIRED as
//! the end of every turn.

use std::time::Duration;

use iac_agui_core::a2a::TaskState;
use iac_agui_core::ids::IdGen;
use serde_json::{json, Value};

use crate::clock::Clock;
use crate::frames::{ToolCall, TurnIds, DENIED_TEXT};
use crate::run::{delta_text, Step};
use crate::store::{PermissionStage, Wait};

/// Every scenario keyword (`deltas` and `slow` take `:<number>`).
pub const SCENARIO_NAMES: &[&str] = &[
    "plain",
    "think",
    "tool",
    "permission",
    "two-permissions",
    "question",
    "pipeline",
    "fail",
    "fail-retryable",
    "cancel",
    "slow",
    "context-change",
    "task-change",
    "session-change",
    "abrupt-end",
    "stream-error",
    "reject",
    "backup-not-ready",
    "deltas",
    "ticks",
];

/// A scenario chosen by a user message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Scenario {
    Plain,
    Think,
    Tool,
    Permission,
    TwoPermissions,
    Question,
    Pipeline,
    Fail,
    FailRetryable,
    Cancel,
    Slow(Option<u64>),
    ContextChange,
    TaskChange,
    SessionChange,
    AbruptEnd,
    StreamError,
    Reject,
    BackupNotReady,
    Deltas(u64),
    /// Count, milliseconds between ticks, and whether each tick goes out at
    /// its own time (`:exact`) rather than on tokio's millisecond beat.
    Ticks(u64, u64, bool),
    Unknown(String),
}

impl Scenario {
    /// Reads the `scenario:<name>` keyword of `text`.
    pub(crate) fn parse(text: &str) -> Scenario {
        let Some(at) = text.find("scenario:") else {
            return Scenario::Plain;
        };
        let rest = &text[at + "scenario:".len()..];
        let word: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':'))
            .collect();
        let (name, arg) = match word.split_once(':') {
            Some((n, a)) => (n, Some(a)),
            None => (word.as_str(), None),
        };
        let number = arg.and_then(|a| a.parse::<u64>().ok());
        match name.replace('_', "-").as_str() {
            "plain" => Scenario::Plain,
            "think" | "thinking" => Scenario::Think,
            "tool" | "readonly" => Scenario::Tool,
            "permission" => Scenario::Permission,
            "two-permissions" | "multi" => Scenario::TwoPermissions,
            "question" => Scenario::Question,
            "pipeline" => Scenario::Pipeline,
            "fail" | "llm-error" => Scenario::Fail,
            "fail-retryable" => Scenario::FailRetryable,
            "cancel" => Scenario::Cancel,
            "slow" => Scenario::Slow(number),
            "context-change" => Scenario::ContextChange,
            "task-change" => Scenario::TaskChange,
            "session-change" => Scenario::SessionChange,
            "abrupt-end" => Scenario::AbruptEnd,
            "stream-error" => Scenario::StreamError,
            "reject" => Scenario::Reject,
            "backup-not-ready" => Scenario::BackupNotReady,
            "deltas" => Scenario::Deltas(number.unwrap_or(10)),
            "ticks" => {
                // `ticks:<N>`, `ticks:<N>:<ms>` or `ticks:<N>:<ms>:exact`.
                let mut args = arg.unwrap_or("").split(':');
                let mut number = || args.next().and_then(|a| a.parse::<u64>().ok());
                let count = number().unwrap_or(100);
                let ms = number().unwrap_or(1).max(1);
                Scenario::Ticks(count, ms, args.next() == Some("exact"))
            }
            _ => Scenario::Unknown(word),
        }
    }

    /// True for the scenarios that run in pipeline mode.
    pub(crate) fn is_pipeline(&self) -> bool {
        matches!(self, Scenario::Question | Scenario::Pipeline)
    }
}

/// What a normal-mode script needs while it is built.
pub(crate) struct Builder<'a> {
    pub(crate) ids: TurnIds,
    pub(crate) gen: &'a mut IdGen,
    pub(crate) clock: &'a mut Clock,
    pub(crate) slow_delay: Duration,
}

impl Builder<'_> {
    fn open(&mut self) -> Vec<Step> {
        vec![
            Step::Frame(self.ids.lifecycle(TaskState::Submitted, self.clock.stamp())),
            Step::Frame(self.ids.lifecycle(TaskState::Working, self.clock.stamp())),
        ]
    }

    fn close(&mut self, full_text: &str) -> Vec<Step> {
        vec![
            Step::Frame(self.ids.usage(120, 15)),
            Step::Frame(self.ids.final_text(full_text, self.clock.stamp())),
            Step::Frame(
                self.ids
                    .lifecycle(TaskState::InputRequired, self.clock.stamp()),
            ),
        ]
    }

    fn texts(&mut self, parts: &[&str]) -> Vec<Step> {
        let mut steps: Vec<Step> = parts
            .iter()
            .map(|t| Step::Frame(self.ids.text(t)))
            .collect();
        steps.extend(self.close(&parts.concat()));
        steps
    }

    fn tool(&self, status: Value) -> Step {
        Step::Frame(self.ids.working("tool", status))
    }

    fn call(&mut self, command: &str) -> ToolCall {
        ToolCall {
            id: format!("call_{}", &self.gen.uuid_hex()[..8]),
            name: "bash".to_owned(),
            input: json!({ "command": command, "description": "scripted command" }),
        }
    }

    fn permission_wait(&mut self, call: &ToolCall, stage: PermissionStage) -> Step {
        let input_id = format!("permission-{}", self.gen.uuid_hex());
        let input = call.permission_input(&self.ids, &input_id);
        let iac = self
            .ids
            .with_session(json!({ "input": input, "permission": call.pending_permission() }));
        let frame = self.ids.update(TaskState::InputRequired, None, None, iac);
        Step::Interrupt(
            frame,
            Wait::Permission {
                input,
                call: call.clone(),
                stage,
            },
        )
    }

    fn input_received(&self, input: &Value) -> Step {
        let received = json!({ "kind": "permission", "inputId": input["inputId"], "toolUseId": input["toolUseId"] });
        Step::Frame(self.ids.update(
            TaskState::Working,
            None,
            None,
            json!({ "inputReceived": received }),
        ))
    }
}

/// The steps of a normal-mode turn (`is_pipeline` scenarios are built by
/// `crate::pipeline`). `task_frame` is the first frame of a new task.
pub(crate) fn normal_turn(b: &mut Builder<'_>, scenario: &Scenario) -> Vec<Step> {
    let mut steps = b.open();
    match scenario {
        Scenario::Plain | Scenario::Question | Scenario::Pipeline | Scenario::Reject => {
            steps.extend(b.texts(&["Hello! ", "This is a scripted A2A runtime, not an agent."]));
        }
        Scenario::Unknown(name) => {
            let first = format!("Unknown scenario '{name}'. ");
            steps.extend(b.texts(&[&first, "Playing the plain scenario instead."]));
        }
        Scenario::Think => {
            let thinking = json!({ "type": "raw_thinking", "text": "Let me think about VPCs." });
            steps.push(Step::Frame(b.ids.working("thinking", thinking)));
            steps.extend(b.texts(&["A VPC is a private network.", " It has vSwitches."]));
        }
        Scenario::Tool => {
            let call = ToolCall {
                id: format!("call_{}", &b.gen.uuid_hex()[..8]),
                name: "glob".to_owned(),
                input: json!({ "pattern": "*.md" }),
            };
            steps.extend(call.announce().map(|s| b.tool(s)));
            steps.push(Step::Frame(b.ids.usage(100, 20)));
            steps.push(b.tool(call.finished("No files found", false)));
            steps.extend(b.texts(&["Tool finished: No files found"]));
        }
        Scenario::Permission | Scenario::BackupNotReady => {
            steps.push(Step::Frame(b.ids.text("I will create a file. ")));
            let call = b.call("mkdir -p newdir && touch newdir/x.txt");
            steps.extend(call.announce().map(|s| b.tool(s)));
            steps.push(Step::Frame(b.ids.usage(120, 15)));
            steps.push(b.permission_wait(&call, PermissionStage::Single));
        }
        Scenario::TwoPermissions => {
            let first = b.call("echo one > multi_one.txt");
            let second = b.call("echo two > multi_two.txt");
            steps.extend(first.announce().map(|s| b.tool(s)));
            steps.extend(second.announce().map(|s| b.tool(s)));
            steps.push(Step::Frame(b.ids.usage(100, 19)));
            steps.push(b.permission_wait(&first, PermissionStage::FirstOfTwo { second }));
        }
        Scenario::Fail => {
            let error = json!({ "errorId": &b.gen.uuid_hex()[..12], "retryable": false });
            let text = "BadRequestError: Error code: 400 - bad request from the scripted runtime";
            let message = b.ids.agent_message("message", text);
            let iac = b.ids.with_session(json!({ "error": error }));
            steps.push(Step::Frame(b.ids.update(
                TaskState::Failed,
                Some(message),
                None,
                iac,
            )));
            // As the real runtime does, the turn goes on after FAILED.
            let zero = json!({ "inputTokens": 0, "outputTokens": 0, "totalTokens": 0, "cachedInputTokens": 0 });
            steps.push(Step::Frame(b.ids.working("usage", zero)));
            steps.push(Step::Frame(b.ids.final_text("", b.clock.stamp())));
            steps.push(Step::Frame(
                b.ids.lifecycle(TaskState::InputRequired, b.clock.stamp()),
            ));
        }
        Scenario::FailRetryable => {
            let message = b
                .ids
                .agent_message("6", "A temporary error occurred. Please retry.");
            let iac = b
                .ids
                .with_session(json!({ "error": { "retryable": true } }));
            let stamp = b.clock.stamp();
            steps.push(Step::Frame(b.ids.update(
                TaskState::InputRequired,
                Some(message),
                Some(stamp),
                iac,
            )));
        }
        Scenario::Cancel => {
            // As captured: SUBMITTED, WORKING, then nothing until CancelTask.
            steps.push(Step::HoldUntilCancel);
        }
        Scenario::Slow(ms) => {
            let delay = ms.map(Duration::from_millis).unwrap_or(b.slow_delay);
            steps.push(Step::Sleep(delay));
            steps.extend(b.texts(&["late"]));
        }
        Scenario::ContextChange => {
            let mut other = b.ids.clone();
            other.context = "other-ctx".to_owned();
            steps.push(Step::Frame(
                other.text("This frame names another context. "),
            ));
            steps.extend(b.texts(&["Done."]));
        }
        Scenario::TaskChange => {
            let mut other = b.ids.clone();
            other.task = b.gen.uuid();
            steps.push(Step::Frame(other.text("This frame names another task. ")));
            steps.extend(b.texts(&["Done."]));
        }
        Scenario::SessionChange => {
            steps.push(Step::Frame(b.ids.text("First session. ")));
            let mut other = b.ids.clone();
            other.session = b.gen.uuid();
            steps.push(Step::Frame(other.text("A second session id. ")));
            steps.extend(b.texts(&["Done."]));
        }
        Scenario::AbruptEnd => {
            steps.push(Step::Frame(
                b.ids.text("This stream ends without a terminal state. "),
            ));
        }
        Scenario::StreamError => {
            steps.push(Step::ErrorFrame(
                json!({ "code": -32603, "message": "boom" }),
            ));
        }
        Scenario::Deltas(count) => {
            steps.push(Step::Deltas {
                ids: b.ids.clone(),
                count: *count,
            });
            let mut full = String::new();
            for i in 0..*count {
                full.push_str(&delta_text(i));
            }
            steps.extend(b.close(&full));
        }
        Scenario::Ticks(count, ms, exact) => {
            steps.push(Step::Ticks {
                ids: b.ids.clone(),
                count: *count,
                every: Duration::from_millis(*ms),
                exact: *exact,
            });
            // The texts carry send times, so the final one is left out.
            steps.extend(b.close(""));
        }
    }
    steps
}

/// The rest of a turn after a normal-mode permission answer.
pub(crate) fn after_permission(
    b: &mut Builder<'_>,
    input: &Value,
    call: &ToolCall,
    stage: &PermissionStage,
    decision: &str,
) -> Vec<Step> {
    let mut steps = vec![b.input_received(input)];
    let outcome = |call: &ToolCall, decision: &str| {
        if decision == "deny" {
            call.finished(DENIED_TEXT, true)
        } else {
            call.finished("Exit code: 0", false)
        }
    };
    match stage {
        PermissionStage::Single => {
            steps.push(b.tool(outcome(call, decision)));
            if decision == "deny" {
                steps.extend(b.texts(&["The tool call was denied, ", "so nothing was changed."]));
            } else {
                steps.extend(b.texts(&["Tool finished: Exit code: 0"]));
            }
        }
        PermissionStage::FirstOfTwo { second } => {
            let stage = PermissionStage::SecondOfTwo {
                first: call.clone(),
                first_decision: decision.to_owned(),
            };
            steps.push(b.permission_wait(second, stage));
        }
        PermissionStage::SecondOfTwo {
            first,
            first_decision,
        } => {
            steps.push(b.tool(outcome(first, first_decision)));
            steps.push(b.tool(outcome(call, decision)));
            steps.extend(b.texts(&["The tool calls finished. ", "All done."]));
        }
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keywords_choose_scenarios() {
        assert_eq!(Scenario::parse("hello"), Scenario::Plain);
        assert_eq!(
            Scenario::parse("Write a file. scenario:permission"),
            Scenario::Permission
        );
        assert_eq!(
            Scenario::parse("scenario:deltas:100000"),
            Scenario::Deltas(100_000)
        );
        assert_eq!(
            Scenario::parse("scenario:ticks:500"),
            Scenario::Ticks(500, 1, false)
        );
        assert_eq!(
            Scenario::parse("scenario:ticks:500:10"),
            Scenario::Ticks(500, 10, false)
        );
        assert_eq!(
            Scenario::parse("scenario:ticks:500:10:exact"),
            Scenario::Ticks(500, 10, true)
        );
        assert_eq!(
            Scenario::parse("scenario:ticks"),
            Scenario::Ticks(100, 1, false)
        );
        assert_eq!(
            Scenario::parse("scenario:slow:250 please"),
            Scenario::Slow(Some(250))
        );
        assert_eq!(Scenario::parse("scenario:llm_error"), Scenario::Fail);
        assert_eq!(
            Scenario::parse("scenario:nope"),
            Scenario::Unknown("nope".into())
        );
        for name in SCENARIO_NAMES {
            assert!(
                !matches!(
                    Scenario::parse(&format!("scenario:{name}")),
                    Scenario::Unknown(_)
                ),
                "{name} must be known"
            );
        }
    }
}
