//! Every AG-UI stream in the machine golden cases passes the strict AG-UI
//! verifier (the same rules as `@ag-ui/client`): one `RUN_STARTED`, balanced
//! spans, exactly one terminal event, nothing after it, no rejected `null`.
//! Runs whose client left (no terminal event) are checked up to that point.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use iac_agui_core::verifier::Verifier;
use serde_json::Value;

#[test]
fn machine_golden_streams_pass_the_verifier() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/golden/machine");
    let mut cases = Vec::new();
    collect(&root, &mut cases);
    assert!(cases.len() >= 60, "only {} machine cases", cases.len());
    let mut streams = 0;
    for path in cases {
        let case: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
        let steps = case["expected"]["steps"]
            .as_array()
            .unwrap_or_else(|| panic!("{}: no expected steps", path.display()));
        let mut runs: BTreeMap<(String, String), (Verifier, bool)> = BTreeMap::new();
        for output in steps
            .iter()
            .flat_map(|s| s["outputs"].as_array().cloned().unwrap_or_default())
        {
            let key = || {
                (
                    output["threadId"].as_str().unwrap_or_default().to_owned(),
                    output["runId"].as_str().unwrap_or_default().to_owned(),
                )
            };
            match output["type"].as_str() {
                Some("admitted") => {
                    let (thread, run) = key();
                    let verifier = Verifier::expecting(&thread, &run);
                    runs.insert((thread, run), (verifier, false));
                }
                Some("emit") => {
                    let (verifier, terminal) = runs.get_mut(&key()).unwrap_or_else(|| {
                        panic!("{}: event of a run never admitted", path.display())
                    });
                    let event = &output["event"];
                    verifier
                        .feed_json(event)
                        .unwrap_or_else(|v| panic!("{}: {v} at {event}", path.display()));
                    if matches!(event["type"].as_str(), Some("RUN_FINISHED" | "RUN_ERROR")) {
                        *terminal = true;
                    }
                }
                _ => {}
            }
        }
        for ((_, run), (verifier, terminal)) in runs {
            if terminal {
                verifier
                    .finish()
                    .unwrap_or_else(|v| panic!("{}: run {run}: {v}", path.display()));
            }
            streams += 1;
        }
    }
    assert!(streams >= 100, "only {streams} streams checked");
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
}
