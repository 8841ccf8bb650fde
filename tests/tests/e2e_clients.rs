//! The golden corpus through the official AG-UI clients (no server needed).
//!
//! Every golden case is replayed with `iac_agui_core::replay::replay`; the
//! AG-UI events it emits are grouped per run, framed exactly as the server
//! frames them (`data: <compact JSON>\n\n`) and run through
//! `@ag-ui/client@0.0.58` and `@ag-ui/client@1.0.0` (`tests/agui-clients`).
//! Both must accept every stream. A second test proves the checker can say
//! no: known-bad streams must be rejected by exactly the clients whose rules
//! they break.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use iac_agui_core::replay::replay;
use iac_agui_tests::clients::{check_streams, rejection, Verdicts};
use iac_agui_tests::sse::frame;
use serde_json::{json, Value};

#[test]
fn every_golden_stream_is_accepted_by_both_clients() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("golden");
    let mut cases = Vec::new();
    collect(&root, &mut cases);
    cases.sort();
    assert!(cases.len() >= 40, "only {} golden cases", cases.len());

    let mut streams = Vec::new();
    let mut complete = BTreeMap::new();
    for path in &cases {
        let name = path
            .strip_prefix(&root)
            .unwrap_or(path)
            .display()
            .to_string();
        for (run, events, is_complete) in case_streams(path) {
            let stream_name = format!("{name} [{run}]");
            complete.insert(stream_name.clone(), is_complete);
            streams.push((stream_name, frame(&events)));
        }
    }
    assert!(
        streams.len() >= cases.len() / 2,
        "too few streams: {}",
        streams.len()
    );

    let mut failures = Vec::new();
    for (name, verdicts) in check_streams(&streams) {
        let problem = if complete[&name] {
            rejection(&verdicts)
        } else {
            // A machine case may stop mid-run: the stream so far must pass.
            only_failures(&verdicts)
        };
        if let Some(problem) = problem {
            failures.push(format!("{name}: {problem}"));
        }
    }
    println!(
        "{} streams from {} golden cases checked",
        streams.len(),
        cases.len()
    );
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn checker_rejects_known_bad_streams() {
    let good = frame(&[
        json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r", "timestamp": 1}),
        json!({"type": "REASONING_START", "messageId": "z", "timestamp": 2}),
        json!({"type": "REASONING_MESSAGE_START", "messageId": "z", "role": "reasoning"}),
        json!({"type": "REASONING_MESSAGE_CONTENT", "messageId": "z", "delta": "hmm"}),
        json!({"type": "REASONING_MESSAGE_END", "messageId": "z"}),
        json!({"type": "REASONING_END", "messageId": "z"}),
        json!({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"}),
        json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "héllo ✓"}),
        json!({"type": "TEXT_MESSAGE_END", "messageId": "m"}),
        json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r",
               "outcome": {"type": "success"}}),
    ]);
    let without = |kind: &str| -> String {
        good.split_inclusive("\n\n")
            .filter(|record| !record.contains(&format!("\"type\":\"{kind}\"")))
            .collect()
    };
    let cases: Vec<(&str, String, [bool; 2])> = vec![
        ("good", good.clone(), [true, true]),
        ("crlf framing", good.replace('\n', "\r\n"), [false, false]),
        (
            "event after RUN_FINISHED",
            good.clone()
                + &frame(&[
                    json!({"type": "TEXT_MESSAGE_START", "messageId": "x", "role": "assistant"}),
                ]),
            [false, false],
        ),
        (
            "open reasoning at finish",
            without("REASONING_END"),
            [true, false],
        ),
        (
            "open text at finish",
            without("TEXT_MESSAGE_END"),
            [false, false],
        ),
        (
            "first event not RUN_STARTED",
            good.split_once("\n\n")
                .map(|(_, rest)| rest.to_owned())
                .unwrap_or_default(),
            [false, false],
        ),
        (
            "explicit null code",
            frame(&[
                json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r"}),
                json!({"type": "RUN_ERROR", "message": "boom", "code": null}),
            ]),
            [false, false],
        ),
        (
            "unknown outcome key",
            good.replace(r#"{"type":"success"}"#, r#"{"type":"success","extra":1}"#),
            [false, true],
        ),
    ];
    let streams: Vec<(String, String)> = cases
        .iter()
        .map(|(name, sse, _)| ((*name).to_owned(), sse.clone()))
        .collect();
    let verdicts = check_streams(&streams);
    let mut wrong = Vec::new();
    for ((name, _, expected), (_, verdicts)) in cases.iter().zip(&verdicts) {
        let got = [verdicts["0.0.58"].ok, verdicts["1.0.0"].ok];
        if got != *expected {
            wrong.push(format!("{name}: accepted by [0.0.58, 1.0.0] = {got:?}, expected {expected:?}: {verdicts:?}"));
        }
    }
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
    // The strict reading used for server streams also flags the 1.0.0
    // warning about the stripped key, and a missing terminal event.
    assert!(rejection(&verdicts[0].1).is_none(), "{:?}", verdicts[0].1);
    assert!(rejection(&verdicts[7].1).is_some());
    let cut = check_streams(&[("cut".to_owned(), without("RUN_FINISHED"))]);
    let reason = rejection(&cut[0].1).expect("a stream without a terminal event is flagged");
    assert!(reason.contains("no terminal event"), "{reason}");
}

/// The streams of one case: `(run, events, complete)`.
fn case_streams(path: &Path) -> Vec<(String, Vec<Value>, bool)> {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let case: Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let kind = case["kind"].as_str().unwrap_or_default();
    let output =
        replay(kind, &case["input"]).unwrap_or_else(|e| panic!("{}: replay: {e}", path.display()));
    match kind {
        "mapper" => {
            let events = output["events"].as_array().cloned().unwrap_or_default();
            if events.is_empty() {
                return Vec::new();
            }
            vec![("mapper".to_owned(), events, true)]
        }
        "machine" => machine_streams(&output),
        other => panic!("{}: unknown kind {other}", path.display()),
    }
}

/// Groups the `emit` outputs of a machine case by run, in order of first
/// appearance; a run is complete when its last event is terminal.
fn machine_streams(output: &Value) -> Vec<(String, Vec<Value>, bool)> {
    let mut order: Vec<String> = Vec::new();
    let mut runs: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    let emits = output["steps"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|step| step["outputs"].as_array())
        .flatten()
        .filter(|o| o["type"] == "emit");
    for emit in emits {
        let key = format!(
            "{}/{}",
            emit["threadId"].as_str().unwrap_or(""),
            emit["runId"].as_str().unwrap_or("")
        );
        if !runs.contains_key(&key) {
            order.push(key.clone());
        }
        runs.entry(key).or_default().push(emit["event"].clone());
    }
    order
        .into_iter()
        .map(|key| {
            let events = runs.remove(&key).unwrap_or_default();
            let complete = events
                .last()
                .and_then(|e| e["type"].as_str())
                .is_some_and(|t| t == "RUN_FINISHED" || t == "RUN_ERROR");
            (key, events, complete)
        })
        .collect()
}

/// Failures and warnings only (no terminal-event requirement).
fn only_failures(verdicts: &Verdicts) -> Option<String> {
    let problems: Vec<String> = verdicts
        .iter()
        .filter(|(_, v)| !v.ok || !v.warnings.is_empty())
        .map(|(version, v)| format!("{version}: {:?} {:?}", v.error, v.warnings))
        .collect();
    (!problems.is_empty()).then(|| problems.join("; "))
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
}
