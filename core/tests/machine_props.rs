//! Property test of the thread state machine: random interleavings of
//! admissions, resumes, cancels, disconnects, timers and A2A answers (stream
//! frames one by one or several together) on a few threads, checking the
//! invariants of issue 4:
//! - at most one active run per thread;
//! - every run that was not disconnected ends with exactly one terminal
//!   event, nothing follows it, and its stream passes the AG-UI verifier;
//! - a pending interrupt disappears only by cancel, expiry, an accepted
//!   answer, or a failed recovery-critical write (which cancels);
//! - an answer is sent to A2A only for a pending, not yet applied interrupt;
//! - every persisted document round-trips;
//! - a session event names a task and a session only once a successful
//!   write recorded them (or the end of their execution);
//! - every cancel-extension request is answered once its effects are
//!   (CancelTask replies succeed, are refused or fail in transport).
//!
//! Seeds are printed; rerun one with `MACHINE_PROPS_SEED=<n>`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use iac_agui_core::a2a::StreamFrame;
use iac_agui_core::agui::{EventBody, Outcome};
use iac_agui_core::document::{context_id, ThreadDocument};
use iac_agui_core::ids::IdGen;
use iac_agui_core::machine::{Answer, Config, Load, Machine, Output};
use iac_agui_core::validate::validate_run;
use iac_agui_core::verifier::Verifier;
use serde_json::{json, Value};

const THREADS: [&str; 3] = ["alpha", "beta", "gamma"];
const STEPS: usize = 400;

#[test]
fn random_interleavings_keep_the_invariants() {
    let seeds: Vec<u64> = match std::env::var("MACHINE_PROPS_SEED") {
        Ok(s) => vec![s.parse().expect("numeric seed")],
        Err(_) => (1..=60).collect(),
    };
    let mut outcomes = BTreeMap::new();
    for seed in seeds {
        println!("machine_props seed {seed}");
        World::new(seed).run(&mut outcomes);
    }
    println!("terminal outcomes over all seeds: {outcomes:?}");
    // The random world must reach the interesting paths, or the test proves little.
    for needed in [
        "interrupt",
        "success",
        "CANCELLED",
        "RESUME_PAYLOAD_INVALID",
        "A2A_PROTOCOL_ERROR",
    ] {
        assert!(
            outcomes.contains_key(needed),
            "never reached {needed}: {outcomes:?}"
        );
    }
}

/// What an outstanding effect is.
#[derive(Debug, Clone)]
enum Effect {
    Persist,
    Stream {
        thread: String,
        task: String,
    },
    Call {
        thread: String,
        method: String,
    },
    Http {
        path: String,
    },
    /// A `CancelTask`: the cancel extension waits for its reply.
    CancelTask,
}

/// Per-run bookkeeping of the test.
#[derive(Debug, Default)]
struct RunLog {
    verifier: Verifier,
    terminals: usize,
    ended: bool,
    disconnected: bool,
    /// The run's events so far, for failure messages.
    events: Vec<String>,
}

struct World {
    seed: u64,
    rng: IdGen,
    machine: Machine,
    now: i64,
    store: BTreeMap<String, Value>,
    /// The write each stored document came from, since the last restart:
    /// the host writes a thread's documents in the order they were
    /// issued, so a write answered after a newer one does not replace it.
    written: BTreeMap<String, u64>,
    effects: BTreeMap<u64, Effect>,
    persists: BTreeMap<u64, (String, Value)>,
    runs: BTreeMap<(Arc<str>, Arc<str>), RunLog>,
    active: BTreeMap<Arc<str>, Arc<str>>,
    /// Last persisted-or-current pending ids per thread, for loss checks.
    pending: BTreeMap<String, BTreeSet<String>>,
    next_run: u64,
    next_input: u64,
    next_task: u64,
    outcomes: BTreeMap<String, usize>,
    /// Cancel tickets not answered yet, by thread: a cancel deferred behind
    /// an admission may drop pending state in a later step.
    open_cancels: BTreeMap<u64, String>,
    /// Interrupt ids each resume answered with `cancelled` (a cancelled
    /// question cancels its execution).
    cancelled_entries: BTreeMap<(String, String), BTreeSet<String>>,
}

impl World {
    fn new(seed: u64) -> Self {
        World {
            seed,
            rng: IdGen::new(seed),
            machine: Machine::new(
                Config {
                    interrupt_ttl_ms: 5_000,
                },
                seed,
            ),
            now: 1_796_205_000_000,
            store: BTreeMap::new(),
            written: BTreeMap::new(),
            effects: BTreeMap::new(),
            persists: BTreeMap::new(),
            runs: BTreeMap::new(),
            active: BTreeMap::new(),
            pending: BTreeMap::new(),
            next_run: 0,
            next_input: 0,
            next_task: 0,
            outcomes: BTreeMap::new(),
            open_cancels: BTreeMap::new(),
            cancelled_entries: BTreeMap::new(),
        }
    }

    fn pick(&mut self, n: usize) -> usize {
        (self.rng.next_u64() % n as u64) as usize
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.rng.next_u64() % 100 < percent
    }

    fn run(mut self, outcomes: &mut BTreeMap<String, usize>) {
        for _ in 0..STEPS {
            self.now += (self.rng.next_u64() % 400) as i64;
            let mut excused = false;
            match self.pick(10) {
                0 | 1 => excused = self.request(),
                9 if self.chance(10) => self.restart(),
                2 if self.chance(25) => {
                    excused = true;
                    self.cancel();
                }
                3 if self.chance(40) => self.disconnect(),
                4 => {
                    excused = true;
                    self.machine.handle_timeout(self.now);
                }
                _ => self.answer_effect(),
            }
            self.drain(excused);
        }
        // Settle: answer everything still outstanding with benign outcomes.
        for _ in 0..200 {
            let Some((&id, effect)) = self.effects.iter().next() else {
                break;
            };
            let answer = match effect {
                Effect::Persist => Answer::Persisted { ok: true },
                Effect::Stream { .. } => Answer::StreamEnded,
                Effect::Call { .. } | Effect::Http { .. } | Effect::CancelTask => Answer::Failed,
            };
            self.effects.remove(&id);
            self.answer(id, answer);
            self.drain(false);
        }
        assert!(
            self.open_cancels.is_empty(),
            "seed {}: cancel tickets never answered: {:?}",
            self.seed,
            self.open_cancels
        );
        for (k, v) in &self.outcomes {
            *outcomes.entry(k.clone()).or_default() += v;
        }
        for ((thread, run), log) in &self.runs {
            if log.ended && !log.disconnected {
                assert_eq!(
                    log.terminals, 1,
                    "seed {}: run {thread}/{run} ended with {} terminal events",
                    self.seed, log.terminals
                );
                log.verifier
                    .finish()
                    .unwrap_or_else(|v| panic!("seed {}: {thread}/{run}: {v:?}", self.seed));
            }
        }
    }

    /// A random run request; true when it may expire interrupts on access.
    fn request(&mut self) -> bool {
        let thread = THREADS[self.pick(THREADS.len())].to_owned();
        self.next_run += 1;
        let run_id = format!("run-{}", self.next_run);
        let doc = self.machine.document(&thread).cloned().or_else(|| {
            let stored = self.store.get(&thread)?;
            ThreadDocument::parse(stored, &thread).ok()
        });
        let pending: Vec<String> = doc
            .as_ref()
            .map(|d| d.execution.pending.keys().cloned().collect())
            .unwrap_or_default();
        let resume = if !pending.is_empty() && self.chance(80) || self.chance(5) {
            let mut entries: Vec<Value> = pending
                .iter()
                .map(|id| {
                    let payload = if id.starts_with("ask-") {
                        [
                            json!({"selectedId": "a"}),
                            json!({"freeText": "mine"}),
                            json!({"selectedId": "zz"}),
                        ][self.pick(3)]
                        .clone()
                    } else {
                        let decision = ["allow_once", "deny", "maybe"][self.pick(3)];
                        json!({ "decision": decision })
                    };
                    match self.pick(8) {
                        0 => json!({"interruptId": id, "status": "cancelled"}),
                        1 => json!({"interruptId": id, "status": "resolved"}),
                        _ => json!({"interruptId": id, "status": "resolved", "payload": payload}),
                    }
                })
                .collect();
            if self.chance(10) {
                entries.push(json!({"interruptId": "stranger", "status": "cancelled"}));
            }
            if self.chance(10) && !entries.is_empty() {
                entries.pop();
            }
            Some(entries)
        } else {
            None
        };
        let ros = if self.chance(5) { "ros-other" } else { "ros-1" };
        let mut body = json!({
            "threadId": thread, "runId": run_id, "state": {}, "tools": [], "context": [],
            "messages": [{"id": format!("m-{run_id}"), "role": "user", "content": "hi"}],
            "forwardedProps": {"iacCode": {"schemaVersion": 1, "rosInvocationId": ros, "cwd": "/w", "userId": "u"}},
        });
        if let Some(entries) = &resume {
            let cancelled = entries
                .iter()
                .filter(|e| e["status"] == "cancelled")
                .filter_map(|e| e["interruptId"].as_str().map(str::to_owned))
                .collect();
            self.cancelled_entries
                .insert((thread.clone(), run_id.clone()), cancelled);
        }
        if let Some(entries) = resume {
            body["resume"] = Value::Array(entries);
            body["messages"] = json!([]);
        }
        let run = validate_run(&body, None).expect("the test builds valid requests");
        let load = if self.machine.needs_load(&thread) {
            match self.store.get(&thread) {
                Some(doc) => Load::Found(doc.clone()),
                None => Load::Missing,
            }
        } else {
            Load::Missing
        };
        let expiring = doc.is_some_and(|d| d.has_expired_interrupt(self.now));
        self.machine.handle_run_request(self.now, run, "/w", load);
        expiring
    }

    /// The host crashes and restarts: runs and effects are gone, threads
    /// reload from the last successful writes.
    fn restart(&mut self) {
        self.machine = Machine::new(
            Config {
                interrupt_ttl_ms: 5_000,
            },
            self.rng.next_u64(),
        );
        self.effects.clear();
        self.persists.clear();
        self.written.clear();
        self.open_cancels.clear();
        for log in self.runs.values_mut() {
            if !log.ended {
                log.ended = true;
                log.disconnected = true;
            }
        }
        self.active.clear();
        self.pending = self
            .store
            .iter()
            .map(|(thread, doc)| {
                let ids = doc["execution"]["pending"]
                    .as_object()
                    .map(|p| p.keys().cloned().collect())
                    .unwrap_or_default();
                (thread.clone(), ids)
            })
            .collect();
    }

    fn cancel(&mut self) {
        let thread = THREADS[self.pick(THREADS.len())];
        let known = self.chance(80);
        let execution = match self.machine.document(thread) {
            Some(doc) if known => doc.execution.execution_id.clone(),
            _ => "unknown".to_owned(),
        };
        let load = match self.store.get(thread) {
            Some(doc) if self.machine.needs_load(thread) => Load::Found(doc.clone()),
            _ => Load::Missing,
        };
        let ticket = self.machine.handle_cancel(
            self.now,
            &execution,
            thread,
            "ros-1",
            iac_agui_core::Language::En,
            load,
        );
        self.open_cancels.insert(ticket, thread.to_owned());
    }

    fn disconnect(&mut self) {
        let index = self.pick(self.active.len().max(1));
        let Some((thread, run)) = self
            .active
            .iter()
            .nth(index)
            .map(|(t, r)| (t.clone(), r.clone()))
        else {
            return;
        };
        if let Some(log) = self.runs.get_mut(&(thread.clone(), run.clone())) {
            log.disconnected = true;
        }
        self.machine.handle_disconnect(self.now, &thread, &run);
    }

    fn answer_effect(&mut self) {
        if self.effects.is_empty() {
            return;
        }
        let index = self.pick(self.effects.len());
        let (id, effect) = self
            .effects
            .iter()
            .nth(index)
            .map(|(k, v)| (*k, v.clone()))
            .expect("index in range");
        let answer = match effect {
            Effect::Persist => Answer::Persisted {
                ok: self.chance(92),
            },
            Effect::Http { path } if path.contains("ensure-restored") => match self.pick(8) {
                0 => Answer::Http {
                    status: 404,
                    body: json!({"status": "not_found"}),
                },
                1 => Answer::Http {
                    status: 409,
                    body: json!({"error": {"code": "SESSION_BACKUP_NOT_READY", "retryable": true}}),
                },
                _ => Answer::Http {
                    status: 200,
                    body: json!({"status": "current"}),
                },
            },
            Effect::Http { .. } => Answer::Http {
                status: 404,
                body: json!({}),
            },
            Effect::Call { thread, method } => self.call_answer(&thread, &method),
            Effect::CancelTask => match self.pick(3) {
                0 => Answer::Failed,
                1 => Answer::Response(json!({"jsonrpc": "2.0", "id": "c",
                    "error": {"code": -32002, "message": "Task cannot be canceled"}})),
                _ => Answer::Response(json!({"jsonrpc": "2.0", "id": "c",
                    "result": {"id": "t", "status": {"state": "TASK_STATE_CANCELED"}}})),
            },
            Effect::Stream { thread, task } => {
                let roll = self.pick(100);
                if roll < 8 {
                    Answer::StreamEnded
                } else if roll < 11 {
                    Answer::Failed
                } else if roll < 40 {
                    // Frames that arrived together, in one read.
                    let mut frames = Vec::new();
                    for _ in 0..2 + self.pick(3) {
                        frames.push(StreamFrame::from_value(self.frame(&thread, &task)));
                    }
                    self.machine.handle_frames(self.now, id, frames);
                    return;
                } else {
                    Answer::Frame(StreamFrame::from_value(self.frame(&thread, &task)))
                }
            }
        };
        if !matches!(answer, Answer::Frame(_)) {
            self.effects.remove(&id);
        }
        self.answer(id, answer);
    }

    /// Hands an answer to the machine; a successful write reaches the store.
    fn answer(&mut self, id: u64, answer: Answer) {
        if answer == (Answer::Persisted { ok: true }) {
            if let Some((thread, doc)) = self.persists.remove(&id) {
                if self.written.get(&thread).is_none_or(|newer| *newer < id) {
                    self.written.insert(thread.clone(), id);
                    self.store.insert(thread, doc);
                }
            }
        }
        self.machine.handle_answer(self.now, id, answer);
    }

    fn call_answer(&mut self, thread: &str, method: &str) -> Answer {
        if self.chance(5) {
            return Answer::Failed;
        }
        let task = self
            .machine
            .document(thread)
            .and_then(|d| d.execution.task_id.clone())
            .unwrap_or_else(|| "none".to_owned());
        let ctx = context_id(thread);
        match method {
            "SendMessage" if self.chance(85) => Answer::Response(json!({"result": {"message": {
                "messageId": "ack", "role": "ROLE_AGENT", "parts": [], "taskId": task, "contextId": ctx}}})),
            "GetTask" if self.chance(90) => {
                let state = ["TASK_STATE_INPUT_REQUIRED", "TASK_STATE_WORKING"][self.pick(2)];
                Answer::Response(
                    json!({"result": {"id": task, "contextId": ctx, "status": {"state": state}}}),
                )
            }
            _ => Answer::Response(json!({"error": {"code": -32602, "message": "no"}})),
        }
    }

    fn frame(&mut self, thread: &str, task: &str) -> Value {
        let ctx = context_id(thread);
        let session = if self.chance(3) {
            "S-other".to_owned()
        } else {
            format!("S-{thread}")
        };
        let task = if self.chance(3) {
            "T-wrong".to_owned()
        } else {
            task.to_owned()
        };
        let update = |state: &str, iac: Value, text: Option<&str>| {
            let mut status = json!({"state": state});
            if let Some(text) = text {
                status["message"] = json!({"messageId": format!("{task}-m"), "role": "ROLE_AGENT", "parts": [{"text": text}]});
            }
            json!({"jsonrpc": "2.0", "id": "x", "result": {"statusUpdate": {
                "taskId": task, "contextId": ctx, "status": status, "metadata": {"iac_code": iac}}}})
        };
        match self.pick(10) {
            0..=2 => update(
                "TASK_STATE_WORKING",
                json!({"iacCodeSessionId": session}),
                Some("some text"),
            ),
            3 | 4 => {
                self.next_input += 1;
                let n = self.next_input;
                let input = if self.chance(30) {
                    json!({"schemaVersion": 1.0, "kind": "ask_user_question", "requestTaskId": task,
                        "contextId": ctx, "inputId": format!("ask-{n}"), "toolUseId": format!("q-{n}"),
                        "prompt": "which?", "options": [{"id": "a", "label": "A"}, {"id": "b", "label": "B"}],
                        "required": true})
                } else {
                    json!({"schemaVersion": 1.0, "kind": "permission", "requestTaskId": task,
                        "contextId": ctx, "inputId": format!("perm-{n}"),
                        "toolUseId": format!("call-{n}"), "prompt": "ok?", "required": true})
                };
                let key = if self.chance(30) {
                    "pendingPermissions"
                } else {
                    "input"
                };
                let value = if key == "input" {
                    input
                } else {
                    json!([input])
                };
                update(
                    "TASK_STATE_INPUT_REQUIRED",
                    json!({"iacCodeSessionId": session, key: value}),
                    None,
                )
            }
            5 | 6 => update(
                "TASK_STATE_INPUT_REQUIRED",
                json!({"iacCodeSessionId": session}),
                Some("done"),
            ),
            7 => update("TASK_STATE_FAILED", json!({}), None),
            8 => update("TASK_STATE_CANCELED", json!({}), None),
            _ => json!({"jsonrpc": "2.0", "id": "x", "error": {"code": -32602, "message": "bad"}}),
        }
    }

    /// The fail-safe rule (SPEC §11): a session event names a task and a
    /// session only once a successful write records them, or records the
    /// end of their execution.
    fn check_announced(&self, thread: &str, value: &Value) {
        let seed = self.seed;
        let stored = self
            .store
            .get(thread)
            .unwrap_or_else(|| panic!("seed {seed}: {thread} announced {value} before any write"));
        let execution = &value["executionId"];
        let ended = stored["terminalExecutionIds"]
            .as_array()
            .is_some_and(|ids| ids.contains(execution));
        let recorded = stored["execution"]["executionId"] == *execution
            && (value["taskId"].is_null() || stored["execution"]["taskId"] == value["taskId"]);
        assert!(
            ended || recorded,
            "seed {seed}: {thread} announced {value} before it was written: {stored}"
        );
        if !value["sessionId"].is_null() {
            assert_eq!(
                stored["iacCodeSessionId"], value["sessionId"],
                "seed {seed}: {thread} announced a session before it was written"
            );
        }
    }

    /// Drains outputs, records effects and checks the invariants.
    fn drain(&mut self, excused: bool) {
        let seed = self.seed;
        let outputs = self.machine.drain();
        let mut drop_reasons = BTreeSet::new();
        for output in &outputs {
            if let Output::Emit { event, .. } = output {
                if let EventBody::RunError {
                    code: Some(code), ..
                } = &event.body
                {
                    drop_reasons.insert(code.clone());
                }
            }
        }
        for output in outputs {
            if std::env::var("MACHINE_PROPS_TRACE").is_ok() {
                println!("{}", serde_json::to_string(&output).unwrap_or_default());
            }
            match output {
                Output::Admitted { thread_id, run_id } => {
                    assert!(
                        !self.active.contains_key(&thread_id),
                        "seed {seed}: second active run on {thread_id}"
                    );
                    self.active.insert(thread_id.clone(), run_id.clone());
                    let log = RunLog {
                        verifier: Verifier::expecting(&thread_id, &run_id),
                        ..RunLog::default()
                    };
                    self.runs.insert((thread_id, run_id), log);
                }
                Output::Emit {
                    thread_id,
                    run_id,
                    event,
                } => {
                    if let EventBody::Custom { name, value } = &event.body {
                        if name == "iac-code.session.v1" {
                            self.check_announced(&thread_id, value);
                        }
                    }
                    let log = self
                        .runs
                        .get_mut(&(thread_id.clone(), run_id.clone()))
                        .unwrap_or_else(|| panic!("seed {seed}: event of unknown run {run_id}"));
                    assert!(!log.ended, "seed {seed}: event after the end of {run_id}");
                    assert_eq!(
                        log.terminals, 0,
                        "seed {seed}: event after the terminal event of {run_id}"
                    );
                    log.events.push(event.to_json());
                    let outcome = match &event.body {
                        EventBody::RunFinished {
                            outcome: Outcome::Success,
                            ..
                        } => Some("success".to_owned()),
                        EventBody::RunFinished { .. } => Some("interrupt".to_owned()),
                        EventBody::RunError { code, .. } => code.clone(),
                        _ => None,
                    };
                    if let Some(outcome) = outcome {
                        *self.outcomes.entry(outcome).or_default() += 1;
                    }
                    if event.body.is_terminal() {
                        log.terminals += 1;
                    }
                    log.verifier.feed(&event.body).unwrap_or_else(|v| {
                        panic!(
                            "seed {seed}: {thread_id}/{run_id}: {v:?} in {:#?}",
                            log.events
                        )
                    });
                }
                Output::RunEnded { thread_id, run_id } => {
                    if let Some(log) = self.runs.get_mut(&(thread_id.clone(), run_id.clone())) {
                        log.ended = true;
                    }
                    if self.active.get(&thread_id) == Some(&run_id) {
                        self.active.remove(&thread_id);
                    }
                }
                Output::Persist {
                    id,
                    thread_id,
                    document,
                } => {
                    let value = document.to_value();
                    let parsed = ThreadDocument::parse(&value, &thread_id)
                        .unwrap_or_else(|e| panic!("seed {seed}: persisted document invalid: {e}"));
                    assert_eq!(
                        parsed.encode(),
                        document,
                        "seed {seed}: document round-trip"
                    );
                    self.check_pending(&parsed, excused, &drop_reasons);
                    self.effects.insert(id, Effect::Persist);
                    self.persists.insert(id, (thread_id, value));
                }
                Output::A2a {
                    id,
                    streaming,
                    request,
                } => {
                    let request = &request.0;
                    let thread = self.thread_of_context(&request.params);
                    self.check_answer_send(&thread, &request.params);
                    if request.method == "CancelTask" {
                        self.effects.insert(id, Effect::CancelTask);
                        continue;
                    }
                    if streaming {
                        let task = match request
                            .params
                            .pointer("/message/taskId")
                            .and_then(Value::as_str)
                        {
                            Some(t) => t.to_owned(),
                            None if request.method == "SubscribeToTask" => request
                                .params
                                .get("id")
                                .and_then(Value::as_str)
                                .unwrap_or_default()
                                .to_owned(),
                            None => {
                                self.next_task += 1;
                                format!("T-{}", self.next_task)
                            }
                        };
                        self.effects.insert(id, Effect::Stream { thread, task });
                    } else {
                        self.effects.insert(
                            id,
                            Effect::Call {
                                thread,
                                method: request.method.clone(),
                            },
                        );
                    }
                }
                Output::Http { id, path, .. } => {
                    self.effects.insert(id, Effect::Http { path });
                }
                Output::CloseStream { id } => {
                    self.effects.remove(&id);
                }
                Output::CancelAnswered { ticket, .. } => {
                    self.open_cancels.remove(&ticket);
                }
                Output::Refused { .. } => {}
            }
        }
        // A disconnect, cancel or finished run may free a thread.
        self.active
            .retain(|thread, _| self.machine.has_active_run(thread));
    }

    /// Pending interrupts only disappear for an allowed reason.
    fn check_pending(&mut self, doc: &ThreadDocument, excused: bool, reasons: &BTreeSet<String>) {
        let now: BTreeSet<String> = doc.execution.pending.keys().cloned().collect();
        let before = self
            .pending
            .insert(doc.thread_id.clone(), now.clone())
            .unwrap_or_default();
        let cancelling = self.open_cancels.values().any(|t| *t == doc.thread_id);
        let allowed = excused
            || cancelling
            || ["CANCELLED", "EXECUTION_EXPIRED", "STATE_PERSISTENCE_FAILED"]
                .iter()
                .any(|c| reasons.contains(*c));
        let answered_cancelled = self
            .active
            .get(doc.thread_id.as_str())
            .and_then(|run| {
                self.cancelled_entries
                    .get(&(doc.thread_id.clone(), run.to_string()))
            })
            .cloned()
            .unwrap_or_default();
        for gone in before.difference(&now) {
            // A cancelled question cancels the whole execution.
            if !answered_cancelled.is_empty() {
                continue;
            }
            let applied = doc
                .applied_resume_digests
                .keys()
                .any(|(_, interrupt)| interrupt == gone);
            assert!(
                applied || allowed,
                "seed {}: pending interrupt {gone} of {} lost ({reasons:?})",
                self.seed,
                doc.thread_id
            );
        }
    }

    /// An answer goes to A2A only for a pending interrupt not applied yet.
    fn check_answer_send(&self, thread: &str, params: &Value) {
        let Some(message) = params.get("message") else {
            return;
        };
        let id = message
            .get("messageId")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if !id.starts_with("agui-resume-") {
            return;
        }
        let Some(doc) = self.machine.document(thread) else {
            panic!("seed {}: answer for an unloaded thread", self.seed);
        };
        let parts = message
            .get("parts")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for part in parts {
            let Some(input) = part.pointer("/data/inputId").and_then(Value::as_str) else {
                continue;
            };
            assert!(
                doc.execution.pending.contains_key(input) && doc.applied_digest(input).is_none(),
                "seed {}: answer for {input} re-sent or not pending",
                self.seed
            );
        }
    }

    fn thread_of_context(&self, params: &Value) -> String {
        let ctx = params.pointer("/message/contextId").and_then(Value::as_str);
        let task = params.get("id").and_then(Value::as_str);
        THREADS
            .iter()
            .find(|t| {
                Some(context_id(t).as_str()) == ctx
                    || self
                        .machine
                        .document(t)
                        .is_some_and(|d| d.execution.task_id.as_deref() == task && task.is_some())
            })
            .map_or_else(String::new, |t| (*t).to_owned())
    }
}
