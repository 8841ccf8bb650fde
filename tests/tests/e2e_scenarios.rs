//! Every scripted-runtime scenario through the real `iac-agui` binary over
//! loopback: the terminal event each must end with, the events that show the
//! mapping happened, and every stream through both official AG-UI clients.

use iac_agui_tests::agui::{ending, session, Harness};
use iac_agui_tests::procs::{RuntimeOptions, ServerOptions};

/// `(scenario keyword, expected ending, event types that must appear)`.
const SCENARIOS: &[(&str, &str, &[&str])] = &[
    ("plain", "RUN_FINISHED:success", &["TEXT_MESSAGE_CONTENT"]),
    (
        "think",
        "RUN_FINISHED:success",
        &[
            "REASONING_START",
            "REASONING_MESSAGE_CONTENT",
            "REASONING_END",
            "TEXT_MESSAGE_CONTENT",
        ],
    ),
    (
        "tool",
        "RUN_FINISHED:success",
        &[
            "TOOL_CALL_START",
            "TOOL_CALL_ARGS",
            "TOOL_CALL_END",
            "TOOL_CALL_RESULT",
        ],
    ),
    (
        "deltas:25",
        "RUN_FINISHED:success",
        &["TEXT_MESSAGE_CONTENT"],
    ),
    (
        "slow:300",
        "RUN_FINISHED:success",
        &["TEXT_MESSAGE_CONTENT"],
    ),
    (
        "permission",
        "RUN_FINISHED:interrupt",
        &["TOOL_CALL_START", "TOOL_CALL_END"],
    ),
    (
        "two-permissions",
        "RUN_FINISHED:interrupt",
        &["TOOL_CALL_START"],
    ),
    ("question", "RUN_FINISHED:interrupt", &[]),
    (
        "pipeline",
        "RUN_FINISHED:interrupt",
        &["STEP_STARTED", "STEP_FINISHED"],
    ),
    ("fail", "RUN_ERROR:A2A_EXECUTION_FAILED", &[]),
    ("fail-retryable", "RUN_FINISHED:success", &[]),
    ("context-change", "RUN_ERROR:A2A_PROTOCOL_ERROR", &[]),
    ("task-change", "RUN_ERROR:A2A_PROTOCOL_ERROR", &[]),
    ("session-change", "RUN_ERROR:A2A_PROTOCOL_ERROR", &[]),
    ("abrupt-end", "RUN_ERROR:A2A_EXECUTION_FAILED", &[]),
    ("stream-error", "RUN_ERROR:A2A_UNAVAILABLE", &[]),
    ("reject", "RUN_ERROR:A2A_UNAVAILABLE", &[]),
    (
        "backup-not-ready",
        "RUN_FINISHED:interrupt",
        &["TOOL_CALL_START"],
    ),
    (
        "no-such-scenario",
        "RUN_FINISHED:success",
        &["TEXT_MESSAGE_CONTENT"],
    ),
];

#[test]
fn every_scenario_ends_as_scripted() {
    let h = Harness::start();
    let mut wrong = Vec::new();
    for (i, (scenario, expected, must_have)) in SCENARIOS.iter().enumerate() {
        let thread = format!("scenario-{i}");
        let received = h.run(&h.body(&thread, "run-1", &format!("run scenario:{scenario} please")));
        let got = ending(&received);
        if got != *expected {
            wrong.push(format!(
                "{scenario}: ended {got}, expected {expected}: {:?}",
                received.types()
            ));
        }
        let types = received.types();
        for kind in *must_have {
            if !types.contains(kind) {
                wrong.push(format!("{scenario}: no {kind} in {types:?}"));
            }
        }
        assert_eq!(types.first(), Some(&"RUN_STARTED"), "{scenario}");
        let started = &received.events[0];
        assert_eq!(started["threadId"], thread.as_str(), "{scenario}");
        assert_eq!(started["runId"], "run-1", "{scenario}");
    }
    assert!(
        wrong.is_empty(),
        "\n{}\nserver log:\n{}",
        wrong.join("\n"),
        h.server.log()
    );
    h.check_clients();
}

#[test]
fn a_run_reports_its_session_and_usage() {
    let h = Harness::start();
    let received = h.run(&h.body("usage-thread", "run-1", "scenario:tool"));
    let session = session(&received).expect("an iac-code.session.v1 event");
    assert_eq!(session["threadId"], "usage-thread");
    assert_eq!(session["aguiRunId"], "run-1");
    assert_eq!(session["rosInvocationId"], iac_agui_tests::agui::ROS);
    for key in ["executionId", "contextId", "taskId", "sessionId"] {
        assert!(
            session[key].as_str().is_some_and(|s| !s.is_empty()),
            "{key} in {session}"
        );
    }
    let finished = received.last().expect("terminal event");
    let usage = finished["usage"].as_array().expect("usage on RUN_FINISHED");
    assert!(!usage.is_empty());
    for entry in usage {
        let input = entry["inputTokens"].as_u64().expect("integer inputTokens");
        let output = entry["outputTokens"]
            .as_u64()
            .expect("integer outputTokens");
        assert!(input + output > 0, "{entry}");
    }
    // A second turn on the same thread keeps its context and session.
    let second = h.run(&h.body("usage-thread", "run-2", "scenario:plain"));
    let again = iac_agui_tests::agui::session(&second).expect("session event");
    assert_eq!(again["contextId"], session["contextId"]);
    assert_eq!(again["sessionId"], session["sessionId"]);
    assert_ne!(
        again["executionId"], session["executionId"],
        "a normal turn rotates the execution"
    );
    h.check_clients();
}

#[test]
fn runtime_bearer_token_is_sent() {
    let h = Harness::with(
        RuntimeOptions {
            token: Some("a2a-secret-e2e".to_owned()),
            ..RuntimeOptions::default()
        },
        ServerOptions::default(),
    );
    let received = h.run(&h.body("token-thread", "run-1", "scenario:plain"));
    assert_eq!(ending(&received), "RUN_FINISHED:success");
    assert!(
        !h.server.log().contains("a2a-secret-e2e"),
        "the token reached the log"
    );
    h.check_clients();
}

#[test]
fn request_secrets_reach_neither_disk_nor_logs() {
    let h = Harness::with(
        RuntimeOptions::default(),
        ServerOptions {
            args: vec!["--debug".to_owned()],
            ..ServerOptions::default()
        },
    );
    let mut body = h.body("secrets", "run-1", "scenario:permission");
    body["forwardedProps"]["iacCode"]["llmApiKey"] = serde_json::json!("sk-e2e-llm-key-7f3a");
    body["forwardedProps"]["iacCode"]["alibabaCloud"] = serde_json::json!({
        "accessKeyId": "LTAI-e2e-id",
        "accessKeySecret": "e2e-access-secret-91c2",
        "securityToken": "e2e-sts-token-5d7e",
    });
    let received = h.run(&body);
    assert_eq!(ending(&received), "RUN_FINISHED:interrupt");
    let secrets = [
        "sk-e2e-llm-key-7f3a",
        "e2e-access-secret-91c2",
        "e2e-sts-token-5d7e",
    ];
    let stream = serde_json::to_string(&received.events).expect("events");
    let log = h.server.log();
    let mut files = Vec::new();
    let mut stack = vec![h.server.root.path().to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.push((path.clone(), std::fs::read(&path).unwrap_or_default()));
            }
        }
    }
    assert!(!files.is_empty(), "no state written");
    for secret in secrets {
        assert!(!stream.contains(secret), "{secret} in the stream");
        assert!(!log.contains(secret), "{secret} in the server log");
        for (path, bytes) in &files {
            let text = String::from_utf8_lossy(bytes);
            assert!(!text.contains(secret), "{secret} in {}", path.display());
        }
    }
    h.check_clients();
}
