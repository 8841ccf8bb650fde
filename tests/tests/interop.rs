//! Interop: `iac-agui serve` against the REAL `iac-code a2a` runtime (iac-code
//! 0.16.0 in the venv of `.ci/interop-setup.sh`; only the LLM is scripted, by
//! `tests/interop/fake_llm.py`), in both backend modes: `--a2a-url` at a
//! runtime started by `run_runtime.py`, and the managed child iac-agui starts
//! itself from PATH.
//!
//! One test per mode runs every scenario against one runtime and one server
//! (the runtime's start-up dominates the cost), each scenario on its own
//! thread id and workspace; a failing scenario does not hide the others, the
//! test lists every failure. Every stream passes the framing check, the
//! core's strict verifier and both official `@ag-ui/client` versions.
//!
//! Needs `bash .ci/interop-setup.sh` (venv) and `.ci/e2e-setup.sh` (Node
//! packages) and the `iac-agui` binary (`cargo build -p iac-agui`); without
//! them the tests fail with the command to run, they never skip.

#[path = "interop/harness.rs"]
mod harness;

use std::panic::{catch_unwind, AssertUnwindSafe};

use harness::{Mode, Suite, ROS};
use iac_agui_tests::agui::{ending, interrupts, resolved, session};
use iac_agui_tests::http::Request;
use iac_agui_tests::sse::{parse, Received};
use serde_json::{json, Value};

/// Pipeline mode as the real runtime knows it.
fn pipeline() -> Value {
    json!({"runMode": "pipeline", "pipelineName": "selling"})
}

#[test]
fn interop_with_a2a_url() {
    run_suite(Mode::External);
}

#[test]
fn interop_with_managed_child() {
    run_suite(Mode::Managed);
}

/// A named scenario; it panics on failure.
type Scenario = (&'static str, fn(&Suite));

/// Every scenario against one server in `mode`, then a restart, then the
/// client check of every stream.
fn run_suite(mode: Mode) {
    let mut suite = Suite::start(mode);
    let scenarios: [Scenario; 12] = [
        ("plain", plain),
        ("reasoning", reasoning),
        ("read_only_tool", read_only_tool),
        ("permission_allow", permission_allow),
        ("permission_deny", permission_deny),
        ("permission_cancelled", permission_cancelled),
        ("question_by_option", question_by_option),
        ("question_by_free_text", question_by_free_text),
        ("cancel_extension", cancel_extension),
        (
            "new_message_while_interrupted",
            new_message_while_interrupted,
        ),
        ("provider_failure", provider_failure),
        ("disconnect_cancels_the_task", disconnect_cancels_the_task),
    ];
    let mut failures = Vec::new();
    for (name, scenario) in scenarios {
        if let Err(why) = catch_unwind(AssertUnwindSafe(|| scenario(&suite))) {
            failures.push(format!("{name}: {}", panic_text(&why)));
        }
    }
    if let Err(why) = catch_unwind(AssertUnwindSafe(|| resume_after_restart(&mut suite))) {
        failures.push(format!("resume_after_restart: {}", panic_text(&why)));
    }
    if let Err(why) = catch_unwind(AssertUnwindSafe(|| no_secrets(&suite))) {
        failures.push(format!("secrets: {}", panic_text(&why)));
    }
    if let Err(why) = catch_unwind(AssertUnwindSafe(|| suite.check_clients())) {
        failures.push(format!("AG-UI clients: {}", panic_text(&why)));
    }
    assert!(
        failures.is_empty(),
        "{mode:?}: {} failure(s):\n{}\n--- server log ---\n{}",
        failures.len(),
        failures.join("\n\n"),
        suite.log()
    );
}

fn plain(s: &Suite) {
    let ws = s.runtime.workspace("plain");
    let r = s.run(&s.body(&ws, "plain", "run-1", "SCENARIO_PLAIN hello", json!({})));
    assert_eq!(ending(&r), "RUN_FINISHED:success", "{:?}", r.types());
    assert_eq!(text(&r), "Hello! How can I help?");
    same_shape_as_reference(&r, "plain");
    let session = session(&r).expect("session event");
    assert!(session["executionId"].is_string(), "{session}");
    assert!(
        usage_present(&r),
        "RUN_FINISHED carries the runtime's usage"
    );
}

fn reasoning(s: &Suite) {
    let ws = s.runtime.workspace("reasoning");
    let r = s.run(&s.body(&ws, "reasoning", "run-1", "SCENARIO_THINK hi", json!({})));
    assert_eq!(ending(&r), "RUN_FINISHED:success", "{:?}", r.types());
    let thinking: String = deltas(&r, "REASONING_MESSAGE_CONTENT");
    assert!(
        !thinking.is_empty(),
        "no reasoning content: {:?}",
        r.types()
    );
    assert_eq!(text(&r), "Hello after thinking.");
    same_shape_as_reference(&r, "reasoning");
    let types = r.types();
    let reasoning_end = types.iter().position(|t| *t == "REASONING_END");
    let text_start = types.iter().position(|t| *t == "TEXT_MESSAGE_START");
    assert!(
        reasoning_end.is_some() && reasoning_end < text_start,
        "reasoning closes before the answer: {types:?}"
    );
}

fn read_only_tool(s: &Suite) {
    let ws = s.runtime.workspace("tool");
    std::fs::write(ws.join("README.md"), "# interop\n").expect("seed file");
    let r = s.run(&s.body(&ws, "tool", "run-1", "SCENARIO_TOOL list", json!({})));
    assert_eq!(ending(&r), "RUN_FINISHED:success", "{:?}", r.types());
    let start = r.first_of("TOOL_CALL_START").expect("tool call");
    assert_eq!(start["toolCallName"], "glob");
    let result = r.first_of("TOOL_CALL_RESULT").expect("tool result");
    assert_eq!(result["toolCallId"], start["toolCallId"]);
    assert!(text(&r).contains("Tool glob finished"), "{}", text(&r));
    same_shape_as_reference(&r, "read_only_tool");
}

fn permission_allow(s: &Suite) {
    let answer = json!({"status": "resolved", "payload": {"decision": "allow_once"}});
    let file = permission(s, "perm-allow", "permission_allow", answer);
    let written = std::fs::read_to_string(&file)
        .unwrap_or_else(|e| panic!("{} was not written: {e}", file.display()));
    assert_eq!(written, "written-by-interop");
}

fn permission_deny(s: &Suite) {
    let answer = json!({"status": "resolved", "payload": {"decision": "deny"}});
    let file = permission(s, "perm-deny", "permission_deny", answer);
    assert!(!file.exists(), "{} written although denied", file.display());
}

fn permission_cancelled(s: &Suite) {
    let answer = json!({"status": "cancelled"});
    let file = permission(s, "perm-cancelled", "permission_cancelled", answer);
    assert!(
        !file.exists(),
        "{} written although cancelled",
        file.display()
    );
}

/// Runs the permission scenario on thread `name`, answers with `entry` and
/// returns the path of the file the command would write. The tool's result
/// reaches the client, both streams have the shape of the reference
/// adapter's `<reference>_1`/`_2`, and the thread is free for a new turn
/// afterwards (the same answer again is refused as already applied).
fn permission(s: &Suite, name: &str, reference: &str, mut entry: Value) -> std::path::PathBuf {
    let ws = s.runtime.workspace(name);
    let prompt = format!("SCENARIO_PERM file={name}.txt");
    let first = s.run(&s.body(&ws, name, "run-1", &prompt, json!({})));
    assert_eq!(
        ending(&first),
        "RUN_FINISHED:interrupt",
        "{:?}",
        first.types()
    );
    let found = interrupts(&first);
    assert_eq!(found.len(), 1, "{found:?}");
    let interrupt = &found[0];
    assert_eq!(interrupt["reason"], "tool_call", "{interrupt}");
    assert_eq!(
        interrupt.pointer("/responseSchema/properties/decision/enum"),
        Some(&json!(["allow_once", "deny"])),
        "{interrupt}"
    );
    let call = first.first_of("TOOL_CALL_START").expect("the bash call");
    assert_eq!(call["toolCallName"], "bash");
    assert_eq!(interrupt["toolCallId"], call["toolCallId"]);
    assert!(
        !ws.join(format!("{name}.txt")).exists(),
        "ran before the answer"
    );
    same_shape_as_reference(&first, &format!("{reference}_1"));

    entry["interruptId"] = interrupt["id"].clone();
    let after = s.run(&s.resume_body(&ws, name, "run-2", json!({}), json!([entry])));
    assert_eq!(
        ending(&after),
        "RUN_FINISHED:success",
        "{:?}",
        after.types()
    );
    let result = after
        .first_of("TOOL_CALL_RESULT")
        .expect("the tool's result");
    assert_eq!(result["toolCallId"], call["toolCallId"]);
    assert!(
        text(&after).contains("Tool bash finished"),
        "{}",
        text(&after)
    );
    same_shape_as_reference(&after, &format!("{reference}_2"));
    let again = s.run(&s.resume_body(&ws, name, "run-2b", json!({}), json!([entry])));
    assert_eq!(
        ending(&again),
        "RUN_ERROR:RESUME_ALREADY_APPLIED",
        "{:?}",
        again.types()
    );

    let next = s.run(&s.body(&ws, name, "run-3", "SCENARIO_PLAIN again", json!({})));
    assert_eq!(ending(&next), "RUN_FINISHED:success", "{:?}", next.types());
    ws.join(format!("{name}.txt"))
}

fn question_by_option(s: &Suite) {
    let answer = json!({"selectedId": "cn-beijing"});
    let args = question(s, "question-option", "pipeline_option", answer);
    assert!(
        args.contains("cn-beijing"),
        "the choice reaches the pipeline: {args}"
    );
}

fn question_by_free_text(s: &Suite) {
    let answer = json!({"freeText": "Shanghai, please"});
    let args = question(s, "question-text", "pipeline_free_text", answer);
    assert!(
        args.contains("Shanghai, please"),
        "the text reaches the pipeline: {args}"
    );
}

/// Runs the selling pipeline on thread `name` up to its question, answers
/// with `payload` and returns the arguments of the tool calls after the
/// answer (the `complete_step` conclusion quotes the answer). Both streams
/// have the shape of the reference adapter's `<reference>_1`/`_2`.
fn question(s: &Suite, name: &str, reference: &str, payload: Value) -> String {
    let ws = s.runtime.workspace(name);
    let first = s.run(&s.body(
        &ws,
        name,
        "run-1",
        "SCENARIO_PIPE I need a website",
        pipeline(),
    ));
    assert_eq!(
        ending(&first),
        "RUN_FINISHED:interrupt",
        "{:?}",
        first.types()
    );
    let found = interrupts(&first);
    assert_eq!(found.len(), 1, "{found:?}");
    let interrupt = &found[0];
    assert_eq!(interrupt["reason"], "input_required", "{interrupt}");
    let options: Vec<&str> = interrupt
        .pointer("/responseSchema/oneOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|b| {
            b.pointer("/properties/selectedId/const")
                .and_then(Value::as_str)
        })
        .collect();
    assert_eq!(options, ["cn-hangzhou", "cn-beijing"], "{interrupt}");
    assert!(
        first.types().contains(&"STEP_STARTED"),
        "{:?}",
        first.types()
    );
    same_shape_as_reference(&first, &format!("{reference}_1"));

    let answer = json!([resolved(&interrupt["id"], payload)]);
    let after = s.run(&s.resume_body(&ws, name, "run-2", pipeline(), answer));
    assert_eq!(
        ending(&after),
        "RUN_FINISHED:success",
        "{:?}",
        after.types()
    );
    assert!(
        after.types().contains(&"STEP_FINISHED"),
        "{:?}",
        after.types()
    );
    same_shape_as_reference(&after, &format!("{reference}_2"));
    deltas(&after, "TOOL_CALL_ARGS")
}

/// The cancel extension stops a task that is still streaming; the thread
/// takes a new turn afterwards.
fn cancel_extension(s: &Suite) {
    let ws = s.runtime.workspace("cancel");
    let body = s.body(&ws, "cancel", "run-1", "SCENARIO_SLOW delay=0.5", json!({}));
    let mut stream = s.open(&body);
    // Running for sure: the session is announced and text is flowing.
    let so_far = stream.read_until(harness::RUN_LIMIT, |t| {
        t.contains("iac-code.session.v1") && t.contains("\"TEXT_MESSAGE_CONTENT\"")
    });
    let session = session(&parse(&complete_records(&so_far))).expect("session event");
    let path = format!(
        "/extensions/iac-code/v1/executions/{}/cancel",
        session["executionId"].as_str().expect("executionId")
    );
    let ids = json!({"threadId": "cancel", "rosInvocationId": ROS});
    let response = Request::agui(&path, &ids).send(s.addr);
    assert_eq!(response.status, 200, "{}", response.text());
    assert_eq!(
        response.json()["status"],
        "cancelled",
        "{}",
        response.text()
    );
    let text_all = s.finish(&mut stream);
    let r = s.accept(&body, &text_all);
    assert_eq!(ending(&r), "RUN_ERROR:CANCELLED", "{:?}", r.types());
    // The scripted LLM streams 40 ticks; a cancelled run never shows them all.
    assert!(deltas(&r, "TEXT_MESSAGE_CONTENT").matches("tick ").count() < 40);
    assert_task_cancelled(s, &session);

    let again = Request::agui(&path, &ids).send(s.addr);
    assert_eq!(
        again.json()["status"],
        "already_terminal",
        "{}",
        again.text()
    );
    let next = s.run(&s.body(&ws, "cancel", "run-2", "SCENARIO_PLAIN after", json!({})));
    assert_eq!(ending(&next), "RUN_FINISHED:success", "{:?}", next.types());
}

/// A new user message on a thread parked on a permission is refused before
/// the runtime sees it (the real runtime would start a second live turn on
/// the task, A2A-WIRE-NOTES §3), and the permission stays answerable.
fn new_message_while_interrupted(s: &Suite) {
    let name = "perm-busy";
    let ws = s.runtime.workspace(name);
    let first = s.run(&s.body(
        &ws,
        name,
        "run-1",
        &format!("SCENARIO_PERM file={name}.txt"),
        json!({}),
    ));
    assert_eq!(
        ending(&first),
        "RUN_FINISHED:interrupt",
        "{:?}",
        first.types()
    );
    let refused = Request::agui(
        "/",
        &s.body(&ws, name, "run-2", "SCENARIO_PLAIN hi", json!({})),
    )
    .send(s.addr);
    assert_eq!(
        (refused.status, refused.error_code().as_str()),
        (409, "RESUME_REQUIRED"),
        "{}",
        refused.text()
    );
    let interrupt = &interrupts(&first)[0];
    let answer = json!([resolved(
        &interrupt["id"],
        json!({"decision": "allow_once"})
    )]);
    let after = s.run(&s.resume_body(&ws, name, "run-3", json!({}), answer));
    assert_eq!(
        ending(&after),
        "RUN_FINISHED:success",
        "{:?}",
        after.types()
    );
    assert!(
        ws.join(format!("{name}.txt")).exists(),
        "the allowed command ran"
    );
}

/// A permission interrupt and a pipeline question survive a restart of
/// iac-agui (and, in managed mode, of the runtime child it starts): the
/// resumes are accepted, the command runs, the answer reaches the pipeline.
fn resume_after_restart(s: &mut Suite) {
    let name = "restart";
    let ws = s.runtime.workspace(name);
    let first = s.run(&s.body(
        &ws,
        name,
        "run-1",
        &format!("SCENARIO_PERM file={name}.txt"),
        json!({}),
    ));
    assert_eq!(
        ending(&first),
        "RUN_FINISHED:interrupt",
        "{:?}",
        first.types()
    );
    let interrupt = interrupts(&first)[0].clone();
    // A pipeline question parked across the same restart.
    let pipe_ws = s.runtime.workspace("restart-question");
    let question = s.run(&s.body(
        &pipe_ws,
        "restart-question",
        "run-1",
        "SCENARIO_PIPE I need a website",
        pipeline(),
    ));
    assert_eq!(
        ending(&question),
        "RUN_FINISHED:interrupt",
        "{:?}",
        question.types()
    );
    let asked = interrupts(&question)[0].clone();
    s.restart();
    let refused = Request::agui(
        "/",
        &s.body(&ws, name, "run-2", "SCENARIO_PLAIN hi", json!({})),
    )
    .send(s.addr);
    assert_eq!(
        (refused.status, refused.error_code().as_str()),
        (409, "RESUME_REQUIRED"),
        "{}",
        refused.text()
    );
    let answer = json!([resolved(
        &interrupt["id"],
        json!({"decision": "allow_once"})
    )]);
    let after = s.run(&s.resume_body(&ws, name, "run-3", json!({}), answer));
    assert_eq!(
        ending(&after),
        "RUN_FINISHED:success",
        "{:?}",
        after.types()
    );
    let result = after
        .first_of("TOOL_CALL_RESULT")
        .expect("the tool's result");
    assert_eq!(result["toolCallId"], interrupt["toolCallId"]);
    let written = std::fs::read_to_string(ws.join(format!("{name}.txt")))
        .expect("file written after the restart");
    assert_eq!(written, "written-by-interop");

    let answer = json!([resolved(&asked["id"], json!({"selectedId": "cn-hangzhou"}))]);
    let answered = s.run(&s.resume_body(&pipe_ws, "restart-question", "run-2", pipeline(), answer));
    assert_eq!(
        ending(&answered),
        "RUN_FINISHED:success",
        "{:?}",
        answered.types()
    );
    let args = deltas(&answered, "TOOL_CALL_ARGS");
    assert!(
        args.contains("cn-hangzhou"),
        "the choice reaches the pipeline: {args}"
    );
}

/// A provider failure: the FAILED status text (the provider's error) comes
/// as assistant text, then RUN_ERROR `A2A_EXECUTION_FAILED` (A2A-WIRE S10),
/// although the real runtime's stream goes on to INPUT_REQUIRED after its
/// FAILED frame (A2A-WIRE-NOTES §2); the thread takes a new turn afterwards.
fn provider_failure(s: &Suite) {
    let ws = s.runtime.workspace("fail");
    let r = s.run(&s.body(&ws, "fail", "run-1", "SCENARIO_FAIL now", json!({})));
    assert_eq!(
        ending(&r),
        "RUN_ERROR:A2A_EXECUTION_FAILED",
        "{:?}",
        r.types()
    );
    let said = text(&r);
    assert!(
        said.contains("Error code: 400"),
        "the provider's error reaches the client as text: {said:?} in {:?}",
        r.types()
    );
    let next = s.run(&s.body(&ws, "fail", "run-2", "SCENARIO_PLAIN again", json!({})));
    assert_eq!(ending(&next), "RUN_FINISHED:success", "{:?}", next.types());
}

/// A client that hangs up during a run gets its task cancelled; the thread
/// is free again for a new turn.
fn disconnect_cancels_the_task(s: &Suite) {
    let ws = s.runtime.workspace("disconnect");
    let body = s.body(
        &ws,
        "disconnect",
        "run-1",
        "SCENARIO_SLOW delay=0.5",
        json!({}),
    );
    let mut stream = s.open(&body);
    let so_far = stream.read_until(harness::RUN_LIMIT, |t| {
        t.contains("iac-code.session.v1") && t.contains("\"TEXT_MESSAGE_CONTENT\"")
    });
    let session = session(&parse(&complete_records(&so_far))).expect("session event");
    stream.hang_up();
    // The server notices the hang-up at its next write; until the run is
    // settled the thread is busy, so poll for a free thread.
    let deadline = std::time::Instant::now() + harness::RUN_LIMIT;
    let mut attempt = 2;
    let next = loop {
        let body = s.body(
            &ws,
            "disconnect",
            &format!("run-{attempt}"),
            "SCENARIO_PLAIN after",
            json!({}),
        );
        let mut stream = Request::agui("/", &body).open(s.addr);
        if stream.status == 200 {
            let text = s.finish(&mut stream);
            break s.accept(&body, &text);
        }
        let refused = String::from_utf8_lossy(&stream.read_to_end()).into_owned();
        assert!(
            refused.contains("THREAD_BUSY"),
            "{}: {refused}",
            stream.status
        );
        assert!(
            std::time::Instant::now() < deadline,
            "the thread stayed busy"
        );
        attempt += 1;
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    assert_eq!(ending(&next), "RUN_FINISHED:success", "{:?}", next.types());
    assert_task_cancelled(s, &session);
}

/// In external mode, asks the runtime itself: the run's task becomes
/// CANCELED. Polled: iac-agui sends CancelTask best-effort next to its
/// answer and its terminal event, not before them (A2A-WIRE-NOTES §9).
fn assert_task_cancelled(s: &Suite, session: &Value) {
    let params = json!({"id": session["taskId"], "historyLength": 0});
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    while let Some(task) = s.runtime_rpc("GetTask", params.clone()) {
        let state = task.pointer("/result/status/state").and_then(Value::as_str);
        if state == Some("TASK_STATE_CANCELED") {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the runtime's task was never cancelled: {task}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// The run has the event sequence (types, CUSTOM names) the Python
/// reference adapter streamed for the same scenario against the same
/// runtime (`tests/interop/captures-agui/<reference>.sse`).
fn same_shape_as_reference(r: &Received, reference: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("interop/captures-agui")
        .join(format!("{reference}.sse"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reference capture {}: {e}", path.display()));
    let expected = shape(&parse(&text));
    assert_eq!(
        shape(r),
        expected,
        "event sequence differs from the reference adapter's {reference}"
    );
}

/// Event types (CUSTOM with its name), a run of deltas of one kind counted
/// once: how many delta events carry a text depends on timing (the pipeline
/// runtime coalesces deltas that fall in one 20 ms batch), not on the
/// protocol.
fn shape(r: &Received) -> Vec<String> {
    const DELTAS: [&str; 3] = [
        "TEXT_MESSAGE_CONTENT",
        "REASONING_MESSAGE_CONTENT",
        "TOOL_CALL_ARGS",
    ];
    let mut shape: Vec<String> = Vec::new();
    for event in &r.events {
        let kind = match event["name"].as_str() {
            Some(name) if event["type"] == "CUSTOM" => format!("CUSTOM:{name}"),
            _ => event["type"].as_str().unwrap_or("?").to_owned(),
        };
        if DELTAS.contains(&kind.as_str()) && shape.last() == Some(&kind) {
            continue;
        }
        shape.push(kind);
    }
    shape
}

/// Neither the LLM key the runtime uses nor the runtime's bearer token
/// reaches iac-agui's log (the managed child's output included) or its state
/// files.
fn no_secrets(s: &Suite) {
    let env = s.runtime.env();
    let mut secrets = vec![env["IAC_CODE_API_KEY"].clone()];
    if s.mode == Mode::External {
        secrets.push(s.runtime.ready["token"].as_str().expect("token").to_owned());
    }
    let mut places = vec![("server log".to_owned(), s.log())];
    let state = s.runtime.root.join("agui-state");
    for path in files_under(&state) {
        let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap_or_default()).into_owned();
        places.push((path.display().to_string(), text));
    }
    assert!(places.len() > 1, "no state files under {}", state.display());
    for secret in &secrets {
        assert!(secret.len() >= 8, "a real secret to look for");
        for (place, text) in &places {
            assert!(!text.contains(secret.as_str()), "a secret is in {place}");
        }
    }
}

fn files_under(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(files_under(&path));
        } else {
            found.push(path);
        }
    }
    found
}

/// The concatenated `delta`s of every event of type `kind`.
fn deltas(r: &Received, kind: &str) -> String {
    r.events
        .iter()
        .filter(|e| e["type"] == kind)
        .filter_map(|e| e["delta"].as_str())
        .collect()
}

/// The assistant's text.
fn text(r: &Received) -> String {
    deltas(r, "TEXT_MESSAGE_CONTENT")
}

fn usage_present(r: &Received) -> bool {
    r.last()
        .and_then(|e| e["usage"].as_array())
        .is_some_and(|u| u.iter().any(|entry| entry["totalTokens"].is_number()))
}

/// The complete records of a partially read stream.
fn complete_records(text: &str) -> String {
    match text.rfind("\n\n") {
        Some(end) => text[..end + 2].to_owned(),
        None => String::new(),
    }
}

fn panic_text(payload: &Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_else(|| "panic".to_owned())
}
