//! One task per run: feed an input to the run's state machine, drain its
//! effects, perform them, feed their results back.
//!
//! The driver makes no protocol decision. Its inputs are what the world did
//! (the A2A stream produced a frame, ended or broke; the client went away;
//! the server is stopping); its effects are what the machine asked for (emit
//! an event, open an A2A stream, cancel a task, finish).
//!
//! TEMPORARY: the core's thread machine (`core/src/machine/`) is not there
//! yet, so [`PassThrough`] stands in for it: no admission, no thread state,
//! no mapping beyond agent text and terminal states. It exists so that the
//! transport paths (SSE, heartbeat, disconnect → CancelTask, concurrency) are
//! real and tested; replace it with the core machine, keeping the driver.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use http::{header, HeaderValue, Response, StatusCode};
use http_body_util::BodyExt as _;
use iac_agui_core::a2a::{Method, StreamResponse, TaskState};
use iac_agui_core::agui::{Event, EventBody, Outcome};
use iac_agui_core::validate::ValidatedRun;
use iac_agui_core::{ErrorCode, Language, MessageKey, ProtocolError};
use serde_json::{json, Map, Value};

use crate::a2a_client::{A2aError, A2aFrame, A2aStream};
use crate::app::App;
use crate::router::{error_response, ResponseBody};
use crate::sse_writer::SseSink;

/// What happened, fed to the run's machine.
#[derive(Debug)]
pub enum Input {
    /// The run was admitted and its stream opened.
    Start,
    /// The requested A2A stream is open.
    StreamOpened,
    /// The requested A2A stream could not be opened.
    StreamFailed(A2aError),
    /// A frame of the open A2A stream.
    Frame(A2aFrame),
    /// The A2A stream ended cleanly.
    StreamEnded,
    /// The A2A stream broke.
    StreamBroken(A2aError),
    /// The SSE client went away.
    Disconnected,
    /// The server is shutting down.
    ShuttingDown,
}

/// What the machine asks the driver to do, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Write this event to the SSE stream.
    Emit(Event),
    /// Open an A2A streaming call; answer with `StreamOpened`/`StreamFailed`.
    OpenStream {
        /// The streaming method.
        method: Method,
        /// Its params.
        params: Value,
    },
    /// Cancel this A2A task (result ignored).
    CancelTask {
        /// The task.
        task_id: String,
    },
    /// The run is over: close the A2A stream and the SSE stream.
    Finish {
        /// The code it ended with (`None`: success or interrupt), for the log.
        code: Option<ErrorCode>,
    },
}

/// Starts a validated run: answers with the SSE response and drives the run
/// on its own task.
pub async fn start(app: &Arc<App>, run: ValidatedRun, cwd: String) -> Response<ResponseBody> {
    if app.is_shutting_down() {
        let error = ProtocolError::new(ErrorCode::A2aUnavailable, MessageKey::ShuttingDown);
        return error_response(&error, run.language);
    }
    let (sink, body) = SseSink::new(app.http.heartbeat);
    let machine = PassThrough::new(&run, &cwd);
    let driver = Driver {
        app: Arc::clone(app),
        sink,
        stream: None,
        thread_id: run.input.thread_id.clone(),
        run_id: run.input.run_id.clone(),
        started: Instant::now(),
    };
    tokio::spawn(driver.drive(machine));
    let mut response = Response::new(body.boxed());
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

/// The cancel extension (SPEC §9).
///
/// TEMPORARY: without the thread machine no execution is known, so every
/// well-formed cancel is `404 EXECUTION_NOT_FOUND`.
pub async fn cancel(
    _app: &Arc<App>,
    _thread_id: &str,
    _ros_invocation_id: &str,
    _execution_id: &str,
    language: Language,
) -> Response<ResponseBody> {
    let error = ProtocolError::new(ErrorCode::ExecutionNotFound, MessageKey::ExecutionNotFound);
    let mut response = error_response(&error, language);
    *response.status_mut() = StatusCode::NOT_FOUND;
    response
}

/// Unix milliseconds from the host clock (the core never reads a clock).
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

struct Driver {
    app: Arc<App>,
    sink: SseSink,
    stream: Option<A2aStream>,
    thread_id: String,
    run_id: String,
    started: Instant,
}

impl Driver {
    async fn drive(mut self, mut machine: PassThrough) {
        let _slot = self.app.run_slot();
        let mut shutdown = self.app.shutdown_signal();
        let mut input = Input::Start;
        loop {
            let effects = machine.handle(input, now_ms());
            let mut next = None;
            for effect in effects {
                if let Some(result) = self.perform(effect).await {
                    next = Some(result);
                }
            }
            input = match next {
                Some(Step::Input(input)) => input,
                Some(Step::Finished) => return,
                None => self.wait(&mut shutdown).await,
            };
        }
    }

    /// Performs one effect; returns the input it produced, if any.
    async fn perform(&mut self, effect: Effect) -> Option<Step> {
        match effect {
            Effect::Emit(event) => {
                if self.sink.send_json(&event.to_json()).await.is_err() {
                    return Some(Step::Input(Input::Disconnected));
                }
                None
            }
            Effect::OpenStream { method, params } => {
                let opened = tokio::select! {
                    opened = self.app.a2a.stream(method, params) => opened,
                    () = self.sink.closed() => return Some(Step::Input(Input::Disconnected)),
                };
                Some(Step::Input(match opened {
                    Ok(stream) => {
                        self.stream = Some(stream);
                        Input::StreamOpened
                    }
                    Err(error) => Input::StreamFailed(error),
                }))
            }
            Effect::CancelTask { task_id } => {
                // The answer does not matter (a finished task is not
                // cancelable); the attempt is bounded by the client timeout.
                let result = self
                    .app
                    .a2a
                    .call(Method::CancelTask, json!({ "id": task_id }))
                    .await;
                tracing::debug!(thread_id = %self.thread_id, run_id = %self.run_id, ok = result.is_ok(), "A2A task cancel");
                None
            }
            Effect::Finish { code } => {
                self.stream = None;
                tracing::info!(
                    target: "iac_agui::run",
                    thread_id = %self.thread_id,
                    run_id = %self.run_id,
                    code = code.map_or("OK", ErrorCode::as_str),
                    duration_ms = self.started.elapsed().as_millis() as u64,
                    "run finished"
                );
                Some(Step::Finished)
            }
        }
    }

    /// Waits for the next thing the world does.
    async fn wait(&mut self, shutdown: &mut tokio::sync::watch::Receiver<bool>) -> Input {
        let stream = self.stream.as_mut();
        tokio::select! {
            biased;
            () = self.sink.closed() => Input::Disconnected,
            _ = shutdown.wait_for(|stopping| *stopping) => Input::ShuttingDown,
            input = next_frame(stream) => input,
        }
    }
}

enum Step {
    Input(Input),
    Finished,
}

async fn next_frame(stream: Option<&mut A2aStream>) -> Input {
    let Some(stream) = stream else {
        return std::future::pending().await;
    };
    match stream.next().await {
        Some(Ok(frame)) => Input::Frame(frame),
        Some(Err(error)) => Input::StreamBroken(error),
        None => Input::StreamEnded,
    }
}

/// TEMPORARY stand-in for the core's run machine (see the module docs).
#[derive(Debug)]
pub struct PassThrough {
    thread_id: String,
    run_id: String,
    parent_run_id: Option<String>,
    language: Language,
    params: Value,
    task_id: Option<String>,
    open_text: Option<String>,
    done: bool,
}

impl PassThrough {
    /// A machine for one validated request.
    pub fn new(run: &ValidatedRun, cwd: &str) -> Self {
        PassThrough {
            thread_id: run.input.thread_id.clone(),
            run_id: run.input.run_id.clone(),
            parent_run_id: run.input.parent_run_id.clone(),
            language: run.language,
            params: message_params(run, cwd),
            task_id: None,
            open_text: None,
            done: false,
        }
    }

    /// Feeds one input; returns the effects to perform in order.
    pub fn handle(&mut self, input: Input, now: i64) -> Vec<Effect> {
        if self.done {
            return Vec::new();
        }
        let emit = |body| Effect::Emit(Event::new(now, body));
        match input {
            Input::Start => vec![
                emit(EventBody::RunStarted {
                    thread_id: self.thread_id.clone(),
                    run_id: self.run_id.clone(),
                    parent_run_id: self.parent_run_id.clone(),
                }),
                Effect::OpenStream {
                    method: Method::SendStreamingMessage,
                    params: self.params.clone(),
                },
            ],
            Input::StreamOpened => Vec::new(),
            Input::StreamFailed(_) | Input::StreamBroken(_) => {
                self.fail(now, ErrorCode::A2aUnavailable, MessageKey::A2aUnavailable)
            }
            Input::StreamEnded => self.fail(
                now,
                ErrorCode::A2aExecutionFailed,
                MessageKey::A2aExecutionFailed,
            ),
            Input::Frame(A2aFrame::Error(_)) => {
                self.fail(now, ErrorCode::A2aUnavailable, MessageKey::A2aUnavailable)
            }
            Input::Frame(A2aFrame::Event(frame)) => self.frame(&frame, now),
            Input::Disconnected => {
                self.done = true;
                let mut effects: Vec<Effect> = self
                    .task_id
                    .clone()
                    .map(|task_id| Effect::CancelTask { task_id })
                    .into_iter()
                    .collect();
                effects.push(Effect::Finish {
                    code: Some(ErrorCode::Cancelled),
                });
                effects
            }
            Input::ShuttingDown => {
                self.fail(now, ErrorCode::A2aUnavailable, MessageKey::ShuttingDown)
            }
        }
    }

    fn frame(&mut self, frame: &StreamResponse, now: i64) -> Vec<Effect> {
        if self.task_id.is_none() {
            self.task_id = frame.task_id().map(str::to_owned);
        }
        let mut effects = Vec::new();
        if let StreamResponse::StatusUpdate(update) = frame {
            if let Some(message) = update.status.message.as_ref().filter(|m| m.is_agent()) {
                let text = message.text();
                if !text.is_empty() {
                    let id = message.message_id.clone();
                    if self.open_text.as_deref() != Some(id.as_str()) {
                        effects.extend(self.close_text(now));
                        effects.push(Effect::Emit(Event::new(
                            now,
                            EventBody::TextMessageStart {
                                message_id: id.clone(),
                                role: "assistant".to_owned(),
                            },
                        )));
                        self.open_text = Some(id.clone());
                    }
                    effects.push(Effect::Emit(Event::new(
                        now,
                        EventBody::TextMessageContent {
                            message_id: id,
                            delta: text,
                        },
                    )));
                }
            }
        }
        match frame.state() {
            Some(TaskState::Completed | TaskState::InputRequired) => {
                self.done = true;
                effects.extend(self.close_text(now));
                effects.push(Effect::Emit(Event::new(
                    now,
                    EventBody::RunFinished {
                        thread_id: self.thread_id.clone(),
                        run_id: self.run_id.clone(),
                        outcome: Outcome::Success,
                        usage: None,
                    },
                )));
                effects.push(Effect::Finish { code: None });
            }
            Some(TaskState::Canceled) => {
                effects.extend(self.fail(now, ErrorCode::Cancelled, MessageKey::Cancelled));
            }
            Some(state) if state.is_terminal() => effects.extend(self.fail(
                now,
                ErrorCode::A2aExecutionFailed,
                MessageKey::A2aExecutionFailed,
            )),
            _ => {}
        }
        effects
    }

    fn close_text(&mut self, now: i64) -> Option<Effect> {
        let message_id = self.open_text.take()?;
        Some(Effect::Emit(Event::new(
            now,
            EventBody::TextMessageEnd { message_id },
        )))
    }

    fn fail(&mut self, now: i64, code: ErrorCode, key: MessageKey) -> Vec<Effect> {
        self.done = true;
        let mut effects: Vec<Effect> = self.close_text(now).into_iter().collect();
        if code == ErrorCode::A2aUnavailable {
            if let Some(task_id) = self.task_id.clone() {
                effects.push(Effect::CancelTask { task_id });
            }
        }
        let error = ProtocolError::new(code, key);
        effects.push(Effect::Emit(Event::new(
            now,
            EventBody::RunError {
                message: error.message(self.language).to_owned(),
                code: Some(code.as_str().to_owned()),
                usage: None,
            },
        )));
        effects.push(Effect::Finish { code: Some(code) });
        effects
    }
}

/// The A2A `SendStreamingMessage` params of a new run (A2A-WIRE §2.1).
/// Request secrets travel to the runtime here and nowhere else.
pub fn message_params(run: &ValidatedRun, cwd: &str) -> Value {
    let iac = &run.iac;
    let mut meta = Map::new();
    let mut put = |key: &str, value: Option<Value>| {
        if let Some(value) = value {
            meta.insert(key.to_owned(), value);
        }
    };
    put("cwd", Some(cwd.into()));
    put(
        "rosInvocationId",
        Some(iac.ros_invocation_id.clone().into()),
    );
    put("preferredLanguage", Some(run.language.as_str().into()));
    put(
        "cleanupOnly",
        Some(iac.cleanup_only.unwrap_or(false).into()),
    );
    put("iac_code_model", iac.model.clone().map(Value::from));
    put("iac_code_api_key", iac.llm_api_key.clone().map(Value::from));
    put("user_id", iac.user_id.clone().map(Value::from));
    put("channel", iac.channel.clone().map(Value::from));
    put(
        "candidatePresentation",
        iac.candidate_presentation.clone().map(Value::from),
    );
    put("run_mode", iac.run_mode.clone().map(Value::from));
    put("pipeline_name", iac.pipeline_name.clone().map(Value::from));
    put(
        "thinking",
        iac.thinking.as_ref().map(|t| {
            let mut thinking = Map::new();
            thinking.insert("enabled".into(), t.enabled.unwrap_or(true).into());
            if let Some(effort) = &t.effort {
                thinking.insert("effort".into(), effort.clone().into());
            }
            if let Some(budget) = t.budget {
                thinking.insert("budget".into(), budget.into());
            }
            Value::Object(thinking)
        }),
    );
    if let Some(cloud) = &iac.alibaba_cloud {
        put(
            "alibaba_cloud_access_key_id",
            cloud.access_key_id.clone().map(Value::from),
        );
        put(
            "alibaba_cloud_access_key_secret",
            cloud.access_key_secret.clone().map(Value::from),
        );
        put(
            "alibaba_cloud_security_token",
            cloud.security_token.clone().map(Value::from),
        );
        put(
            "alibaba_cloud_region_id",
            cloud.region_id.clone().map(Value::from),
        );
    }
    let (message_id, parts) = run
        .user_message
        .as_ref()
        .map(|m| {
            (
                m.id.clone(),
                serde_json::to_value(&m.parts).unwrap_or_default(),
            )
        })
        .unwrap_or_default();
    json!({
        "message": {
            "messageId": message_id,
            "role": "ROLE_USER",
            "parts": parts,
            "metadata": { "iac_code": meta },
            "contextId": iac_agui_core::document::context_id(&run.input.thread_id),
        },
        "configuration": { "acceptedOutputModes": ["text/plain"] },
    })
}

/// How long a stopping server waits for runs to write their last event.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);
