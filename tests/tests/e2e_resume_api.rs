//! The official clients' own interrupt API against the live server:
//! `HttpAgent.runAgent()` ends with an interrupt, the agent's
//! `pendingInterrupts` feed `buildResumeArray`, and `runAgent({resume})`
//! completes the turn (`tests/agui-clients/resume-flow.mjs`, both clients).

use std::process::Command;

use iac_agui_tests::clients::checker_dir;
use iac_agui_tests::procs::{RuntimeOptions, ServerOptions};
use serde_json::Value;

fn flow(h: &iac_agui_tests::agui::Harness, token: Option<&str>) -> Value {
    let dir = checker_dir();
    assert!(
        dir.join("node_modules/agui-client-v1").is_dir(),
        "AG-UI client packages missing; run `.ci/e2e-setup.sh` first"
    );
    let mut command = Command::new(std::env::var("NODE").unwrap_or_else(|_| "node".to_owned()));
    command
        .arg("resume-flow.mjs")
        .arg(format!("http://{}/", h.addr()))
        .arg(h.server.workspace())
        .current_dir(&dir)
        .env_remove("IAC_AGUI_TOKEN");
    if let Some(token) = token {
        command.env("IAC_AGUI_TOKEN", token);
    }
    let output = command.output().expect("run node resume-flow.mjs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let result: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!(
            "unreadable resume-flow output ({e}): {stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    assert!(
        output.status.success(),
        "resume flow failed: {result:#}\nserver log:\n{}",
        h.server.log()
    );
    result
}

#[test]
fn client_resume_api_completes_a_permission_flow() {
    let h = iac_agui_tests::agui::Harness::start();
    let result = flow(&h, None);
    for version in ["0.0.58", "1.0.0"] {
        let run = &result[version];
        assert_eq!(run["first"]["outcome"], "interrupt", "{version}: {run}");
        assert_eq!(run["second"]["outcome"], "success", "{version}: {run}");
        assert_eq!(run["second"]["pending"], 0, "{version}: {run}");
        let types = run["second"]["types"].as_array().expect("types");
        assert!(
            types.iter().any(|t| t == "TOOL_CALL_RESULT"),
            "{version}: {run}"
        );
    }
}

#[test]
fn client_resume_api_with_auth() {
    let h = iac_agui_tests::agui::Harness::with(
        RuntimeOptions::default(),
        ServerOptions {
            auth_token: Some("resume-api-token".to_owned()),
            ..ServerOptions::default()
        },
    );
    let result = flow(&h, Some("resume-api-token"));
    assert_eq!(result["1.0.0"]["second"]["outcome"], "success", "{result}");
}
