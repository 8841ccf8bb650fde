//! An AG-UI event-sequence verifier: the sequencing rules of the official
//! TypeScript clients (AGUI.md §6) for both pinned versions at once —
//! `@ag-ui/client` 0.0.58 (nothing after RUN_ERROR) and 1.0.0 (reasoning
//! spans and reasoning messages tracked separately) — plus the strict checks
//! a test harness adds: the first event is RUN_STARTED with the request's
//! ids, exactly one terminal event ends the stream, nothing follows it.
//!
//! Push API: [`Verifier::feed`] each event in order, then
//! [`Verifier::finish`]. The first violation is returned; a verifier that
//! reported one should be dropped.

use std::collections::BTreeSet;
use std::fmt;

use serde_json::Value;

use crate::agui::{Event, EventBody, Outcome};

/// What went wrong, at which event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// 0-based index of the offending event (the event count for
    /// [`Verifier::finish`]).
    pub index: usize,
    /// The rule broken.
    pub rule: Rule,
}

/// The rules, each with the id or name involved.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Rule {
    /// Rule 1 (strict): the first event must be RUN_STARTED.
    FirstEventNotRunStarted,
    /// Strict: RUN_STARTED ids differ from the request's.
    RunIdsMismatch,
    /// Rules 2–4 (strict): a second RUN_STARTED in one stream.
    SecondRunStarted,
    /// Rules 3–4: an event after RUN_FINISHED or RUN_ERROR.
    EventAfterTerminal,
    /// Rule 5: TEXT_MESSAGE_START for an open message.
    TextAlreadyOpen(String),
    /// Rule 5: TEXT_MESSAGE_CONTENT / END for a message that is not open.
    TextNotOpen(String),
    /// Rule 6: TOOL_CALL_START for an open call.
    ToolAlreadyOpen(String),
    /// Rule 6: TOOL_CALL_ARGS / END for a call that is not open.
    ToolNotOpen(String),
    /// Rule 8: STEP_STARTED for an open step name.
    StepAlreadyOpen(String),
    /// Rule 8: STEP_FINISHED for a step name that is not open.
    StepNotOpen(String),
    /// Rule 11 (1.0.0): REASONING_START for an open span.
    ReasoningAlreadyOpen(String),
    /// Rule 11 (1.0.0): REASONING_END for a span that is not open.
    ReasoningNotOpen(String),
    /// Rule 11 (1.0.0): REASONING_MESSAGE_START for an open message.
    ReasoningMessageAlreadyOpen(String),
    /// Rule 11 (1.0.0): REASONING_MESSAGE_CONTENT / END for a message that is not open.
    ReasoningMessageNotOpen(String),
    /// Rules 9 and 11: RUN_FINISHED while something is open (what, which id).
    OpenAtFinish(&'static str, String),
    /// Schema: an interrupt outcome with no interrupt.
    EmptyInterrupts,
    /// Schema: a role other than the allowed literal.
    BadRole(&'static str, String),
    /// Schema: ACTIVITY_SNAPSHOT content that is not an object.
    ActivityContentNotObject,
    /// Adapter rule: an empty text delta (clients ≤ 0.0.49 reject it).
    EmptyDelta(String),
    /// Schema: an explicit `null` where the clients reject one.
    NullField(String),
    /// The JSON is not an AG-UI event this adapter may send.
    InvalidEvent(String),
    /// Strict: the stream ended without RUN_FINISHED or RUN_ERROR.
    MissingTerminal,
}

impl Rule {
    /// A stable upper-snake-case code for bindings and logs.
    pub fn code(&self) -> &'static str {
        match self {
            Rule::FirstEventNotRunStarted => "FIRST_EVENT_NOT_RUN_STARTED",
            Rule::RunIdsMismatch => "RUN_IDS_MISMATCH",
            Rule::SecondRunStarted => "SECOND_RUN_STARTED",
            Rule::EventAfterTerminal => "EVENT_AFTER_TERMINAL",
            Rule::TextAlreadyOpen(_) => "TEXT_ALREADY_OPEN",
            Rule::TextNotOpen(_) => "TEXT_NOT_OPEN",
            Rule::ToolAlreadyOpen(_) => "TOOL_ALREADY_OPEN",
            Rule::ToolNotOpen(_) => "TOOL_NOT_OPEN",
            Rule::StepAlreadyOpen(_) => "STEP_ALREADY_OPEN",
            Rule::StepNotOpen(_) => "STEP_NOT_OPEN",
            Rule::ReasoningAlreadyOpen(_) => "REASONING_ALREADY_OPEN",
            Rule::ReasoningNotOpen(_) => "REASONING_NOT_OPEN",
            Rule::ReasoningMessageAlreadyOpen(_) => "REASONING_MESSAGE_ALREADY_OPEN",
            Rule::ReasoningMessageNotOpen(_) => "REASONING_MESSAGE_NOT_OPEN",
            Rule::OpenAtFinish(..) => "OPEN_AT_FINISH",
            Rule::EmptyInterrupts => "EMPTY_INTERRUPTS",
            Rule::BadRole(..) => "BAD_ROLE",
            Rule::ActivityContentNotObject => "ACTIVITY_CONTENT_NOT_OBJECT",
            Rule::EmptyDelta(_) => "EMPTY_DELTA",
            Rule::NullField(_) => "NULL_FIELD",
            Rule::InvalidEvent(_) => "INVALID_EVENT",
            Rule::MissingTerminal => "MISSING_TERMINAL",
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "event {}: {:?}", self.index, self.rule)
    }
}

/// Sequence state of one stream (one run).
#[derive(Debug, Clone, Default)]
pub struct Verifier {
    expected_ids: Option<(String, String)>,
    index: usize,
    started: bool,
    ended: bool,
    texts: BTreeSet<String>,
    tools: BTreeSet<String>,
    steps: BTreeSet<String>,
    reasoning: BTreeSet<String>,
    reasoning_messages: BTreeSet<String>,
}

impl Verifier {
    /// A verifier that does not check the RUN_STARTED ids.
    pub fn new() -> Self {
        Verifier::default()
    }

    /// A verifier that also requires RUN_STARTED to carry these ids.
    pub fn expecting(thread_id: &str, run_id: &str) -> Self {
        Verifier {
            expected_ids: Some((thread_id.to_owned(), run_id.to_owned())),
            ..Verifier::default()
        }
    }

    /// Checks the next event.
    ///
    /// # Errors
    /// The first rule the event breaks.
    pub fn feed(&mut self, event: &EventBody) -> Result<(), Violation> {
        let result = self.check(event);
        self.index += 1;
        result.map_err(|rule| Violation {
            index: self.index - 1,
            rule,
        })
    }

    /// Checks the next event given as JSON (as sent on the wire): it must
    /// parse as an adapter event and carry no rejected `null`.
    ///
    /// # Errors
    /// [`Rule::InvalidEvent`], [`Rule::NullField`], or the rule it breaks.
    pub fn feed_json(&mut self, event: &Value) -> Result<(), Violation> {
        if let Err(rule) = check_json_shape(event) {
            self.index += 1;
            return Err(Violation {
                index: self.index - 1,
                rule,
            });
        }
        match serde_json::from_value::<Event>(event.clone()) {
            Ok(parsed) => self.feed(&parsed.body),
            Err(e) => {
                self.index += 1;
                Err(Violation {
                    index: self.index - 1,
                    rule: Rule::InvalidEvent(e.to_string()),
                })
            }
        }
    }

    /// Ends the stream.
    ///
    /// # Errors
    /// [`Rule::MissingTerminal`] when no terminal event was seen.
    pub fn finish(&self) -> Result<(), Violation> {
        if self.ended {
            Ok(())
        } else {
            Err(Violation {
                index: self.index,
                rule: Rule::MissingTerminal,
            })
        }
    }

    fn check(&mut self, event: &EventBody) -> Result<(), Rule> {
        if self.ended {
            return Err(Rule::EventAfterTerminal);
        }
        if !self.started {
            let EventBody::RunStarted {
                thread_id, run_id, ..
            } = event
            else {
                return Err(Rule::FirstEventNotRunStarted);
            };
            if let Some((t, r)) = &self.expected_ids {
                if t != thread_id || r != run_id {
                    return Err(Rule::RunIdsMismatch);
                }
            }
            self.started = true;
            return Ok(());
        }
        match event {
            EventBody::RunStarted { .. } => Err(Rule::SecondRunStarted),
            EventBody::RunFinished { outcome, .. } => {
                if let Outcome::Interrupt { interrupts } = outcome {
                    if interrupts.is_empty() {
                        return Err(Rule::EmptyInterrupts);
                    }
                }
                self.check_all_closed()?;
                self.ended = true;
                Ok(())
            }
            EventBody::RunError { .. } => {
                self.ended = true;
                Ok(())
            }
            EventBody::TextMessageStart { message_id, role } => {
                if !matches!(role.as_str(), "assistant" | "developer" | "system" | "user") {
                    return Err(Rule::BadRole("TEXT_MESSAGE_START", role.clone()));
                }
                open(&mut self.texts, message_id, Rule::TextAlreadyOpen)
            }
            EventBody::TextMessageContent { message_id, delta } => {
                if delta.is_empty() {
                    return Err(Rule::EmptyDelta(message_id.clone()));
                }
                need(&self.texts, message_id, Rule::TextNotOpen)
            }
            EventBody::TextMessageEnd { message_id } => {
                close(&mut self.texts, message_id, Rule::TextNotOpen)
            }
            EventBody::ToolCallStart { tool_call_id, .. } => {
                open(&mut self.tools, tool_call_id, Rule::ToolAlreadyOpen)
            }
            EventBody::ToolCallArgs { tool_call_id, .. } => {
                need(&self.tools, tool_call_id, Rule::ToolNotOpen)
            }
            EventBody::ToolCallEnd { tool_call_id } => {
                close(&mut self.tools, tool_call_id, Rule::ToolNotOpen)
            }
            EventBody::ToolCallResult { role, .. } => match role.as_deref() {
                None | Some("tool") => Ok(()),
                Some(other) => Err(Rule::BadRole("TOOL_CALL_RESULT", other.to_owned())),
            },
            EventBody::StepStarted { step_name } => {
                open(&mut self.steps, step_name, Rule::StepAlreadyOpen)
            }
            EventBody::StepFinished { step_name } => {
                close(&mut self.steps, step_name, Rule::StepNotOpen)
            }
            EventBody::ReasoningStart { message_id } => {
                open(&mut self.reasoning, message_id, Rule::ReasoningAlreadyOpen)
            }
            EventBody::ReasoningEnd { message_id } => {
                close(&mut self.reasoning, message_id, Rule::ReasoningNotOpen)
            }
            EventBody::ReasoningMessageStart { message_id, role } => {
                if role != "reasoning" {
                    return Err(Rule::BadRole("REASONING_MESSAGE_START", role.clone()));
                }
                open(
                    &mut self.reasoning_messages,
                    message_id,
                    Rule::ReasoningMessageAlreadyOpen,
                )
            }
            EventBody::ReasoningMessageContent { message_id, .. } => need(
                &self.reasoning_messages,
                message_id,
                Rule::ReasoningMessageNotOpen,
            ),
            EventBody::ReasoningMessageEnd { message_id } => close(
                &mut self.reasoning_messages,
                message_id,
                Rule::ReasoningMessageNotOpen,
            ),
            EventBody::ActivitySnapshot { content, .. } => {
                if content.is_object() {
                    Ok(())
                } else {
                    Err(Rule::ActivityContentNotObject)
                }
            }
            EventBody::Custom { .. } => Ok(()),
        }
    }

    fn check_all_closed(&self) -> Result<(), Rule> {
        let groups: [(&'static str, &BTreeSet<String>); 5] = [
            ("text message", &self.texts),
            ("tool call", &self.tools),
            ("step", &self.steps),
            ("reasoning", &self.reasoning),
            ("reasoning message", &self.reasoning_messages),
        ];
        for (what, set) in groups {
            if let Some(id) = set.iter().next() {
                return Err(Rule::OpenAtFinish(what, id.clone()));
            }
        }
        Ok(())
    }
}

/// Verifies a whole stream with [`Verifier::new`].
///
/// # Errors
/// The first violation.
pub fn verify(events: &[EventBody]) -> Result<(), Violation> {
    let mut verifier = Verifier::new();
    for event in events {
        verifier.feed(event)?;
    }
    verifier.finish()
}

fn open(set: &mut BTreeSet<String>, id: &str, rule: fn(String) -> Rule) -> Result<(), Rule> {
    if set.insert(id.to_owned()) {
        Ok(())
    } else {
        Err(rule(id.to_owned()))
    }
}

fn need(set: &BTreeSet<String>, id: &str, rule: fn(String) -> Rule) -> Result<(), Rule> {
    if set.contains(id) {
        Ok(())
    } else {
        Err(rule(id.to_owned()))
    }
}

fn close(set: &mut BTreeSet<String>, id: &str, rule: fn(String) -> Rule) -> Result<(), Rule> {
    if set.remove(id) {
        Ok(())
    } else {
        Err(rule(id.to_owned()))
    }
}

/// Wire-level checks serde cannot make: an object with an integer
/// `timestamp`, and no `null` at the top level, in an interrupt or in a
/// usage entry (except the three the clients tolerate).
fn check_json_shape(event: &Value) -> Result<(), Rule> {
    let Some(object) = event.as_object() else {
        return Err(Rule::InvalidEvent("not an object".to_owned()));
    };
    const TOLERATED: [&str; 3] = ["outcome", "parentMessageId", "value"];
    for (key, value) in object {
        if value.is_null() && !TOLERATED.contains(&key.as_str()) {
            return Err(Rule::NullField(key.clone()));
        }
    }
    // Optional in AG-UI, but this adapter always stamps its events.
    match object.get("timestamp") {
        None => return Err(Rule::InvalidEvent("missing timestamp".to_owned())),
        Some(ts) if !(ts.is_i64() || ts.is_u64()) => {
            return Err(Rule::InvalidEvent("timestamp is not an integer".to_owned()));
        }
        Some(_) => {}
    }
    let nested = [
        (
            "outcome.interrupts[]",
            object.get("outcome").and_then(|o| o.get("interrupts")),
        ),
        ("usage[]", object.get("usage")),
    ];
    for (path, list) in nested {
        for item in list.and_then(Value::as_array).into_iter().flatten() {
            if let Some((key, _)) = item
                .as_object()
                .and_then(|fields| fields.iter().find(|(_, v)| v.is_null()))
            {
                return Err(Rule::NullField(format!("{path}.{key}")));
            }
        }
    }
    Ok(())
}
