//! Golden transcripts: every `tests/golden/**/*.json` case is replayed
//! through `iac_agui_core::replay::replay` and its canonical JSON compared
//! with the case's `expected`. On a mismatch the case path and a line diff of
//! the pretty-printed JSON are printed. `BLESS=1 cargo test -p iac-agui-tests
//! --test golden` rewrites `expected` instead (review the diff!);
//! `GOLDEN_FILTER=mapper/` limits both to the paths containing that text.
//!
//! Mapper cases are complete AG-UI streams, so their events also go through
//! the strict AG-UI verifier; the events a machine case emits are verified
//! per run (sequencing only: a machine case may stop mid-run).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use iac_agui_core::json::canonical_json;
use iac_agui_core::replay::replay;
use iac_agui_core::verifier::Verifier;
use serde_json::{Map, Value};

#[test]
fn golden_cases_replay_exactly() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("golden");
    let bless = std::env::var("BLESS").is_ok_and(|v| v == "1");
    // GOLDEN_FILTER=<path substring> replays (and blesses) only those cases.
    let filter = std::env::var("GOLDEN_FILTER").unwrap_or_default();
    let mut cases = Vec::new();
    collect(&root, &mut cases);
    cases.retain(|p| p.to_string_lossy().contains(filter.as_str()));
    cases.sort();
    assert!(
        !cases.is_empty(),
        "no golden cases under {}",
        root.display()
    );
    let mut failures = Vec::new();
    for path in &cases {
        if let Err(message) = run_case(path, bless) {
            failures.push(format!("{}: {message}", path.display()));
        }
    }
    println!("{} golden cases, {} failed", cases.len(), failures.len());
    assert!(failures.is_empty(), "\n{}", failures.join("\n\n"));
}

#[test]
fn mapper_corpus_has_enough_cases() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("golden/mapper");
    let mut cases = Vec::new();
    collect(&root, &mut cases);
    assert!(cases.len() >= 40, "only {} mapper cases", cases.len());
}

fn run_case(path: &Path, bless: bool) -> Result<(), String> {
    let text = fs::read_to_string(path).map_err(|e| e.to_string())?;
    let case: Value = serde_json::from_str(&text).map_err(|e| format!("invalid JSON: {e}"))?;
    let kind = case
        .get("kind")
        .and_then(Value::as_str)
        .ok_or("missing `kind`")?;
    let input = case.get("input").ok_or("missing `input`")?;
    let output = replay(kind, input)?;
    match kind {
        "mapper" => verify_stream(input, &output)?,
        "machine" => verify_emits(&output)?,
        _ => {}
    }
    let expected = case.get("expected");
    if bless {
        if expected != Some(&output) {
            let mut updated: Map<String, Value> = case.as_object().cloned().unwrap_or_default();
            updated.insert("expected".to_owned(), output);
            let pretty =
                serde_json::to_string_pretty(&Value::Object(updated)).map_err(|e| e.to_string())?;
            fs::write(path, pretty + "\n").map_err(|e| e.to_string())?;
        }
        return Ok(());
    }
    let expected = expected.ok_or("missing `expected` (run with BLESS=1)")?;
    if canonical_json(expected) == canonical_json(&output) {
        return Ok(());
    }
    let want = serde_json::to_string_pretty(expected).unwrap_or_default();
    let got = serde_json::to_string_pretty(&output).unwrap_or_default();
    Err(format!(
        "output differs from `expected` (- expected, + actual):\n{}",
        line_diff(&want, &got)
    ))
}

/// Runs the events of a mapper case through the strict verifier.
fn verify_stream(input: &Value, output: &Value) -> Result<(), String> {
    let thread = input.pointer("/context/threadId").and_then(Value::as_str);
    let run = input.pointer("/context/runId").and_then(Value::as_str);
    let mut verifier = match (thread, run) {
        (Some(t), Some(r)) => Verifier::expecting(t, r),
        _ => Verifier::new(),
    };
    let events = output
        .get("events")
        .and_then(Value::as_array)
        .ok_or("output has no events")?;
    for event in events {
        verifier
            .feed_json(event)
            .map_err(|v| format!("verifier: {v}"))?;
    }
    verifier.finish().map_err(|v| format!("verifier: {v}"))
}

/// Runs the AG-UI events a machine case emits through the verifier, one
/// stream per (thread, run). A case may stop in the middle of a run, so the
/// terminal-event check is left to the machine's own cases.
fn verify_emits(output: &Value) -> Result<(), String> {
    let mut streams: BTreeMap<(String, String), Verifier> = BTreeMap::new();
    let outputs = output
        .get("steps")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|step| step.get("outputs").and_then(Value::as_array))
        .flatten();
    for emitted in outputs.filter(|o| o.get("type").and_then(Value::as_str) == Some("emit")) {
        let field = |k: &str| {
            emitted
                .get(k)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        let (thread, run) = (field("threadId"), field("runId"));
        let verifier = streams
            .entry((thread.clone(), run.clone()))
            .or_insert_with(|| Verifier::expecting(&thread, &run));
        let event = emitted.get("event").ok_or("emit without event")?;
        verifier
            .feed_json(event)
            .map_err(|v| format!("verifier (run {run}): {v}"))?;
    }
    Ok(())
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

/// A unified-style line diff (LCS), with 3 lines of context.
fn line_diff(a: &str, b: &str) -> String {
    let a: Vec<&str> = a.lines().collect();
    let b: Vec<&str> = b.lines().collect();
    let (n, m) = (a.len(), b.len());
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let mut ops: Vec<(char, &str)> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            ops.push((' ', a[i]));
            i += 1;
            j += 1;
        } else if j < m && (i == n || lcs[i][j + 1] >= lcs[i + 1][j]) {
            ops.push(('+', b[j]));
            j += 1;
        } else {
            ops.push(('-', a[i]));
            i += 1;
        }
    }
    let changed: Vec<usize> = (0..ops.len()).filter(|&k| ops[k].0 != ' ').collect();
    let mut out = String::new();
    let mut last_printed: Option<usize> = None;
    for (k, (tag, line)) in ops.iter().enumerate() {
        let near = changed.iter().any(|&c| c.abs_diff(k) <= 3);
        if !near {
            continue;
        }
        if last_printed.is_some_and(|l| l + 1 != k) {
            out.push_str("@@\n");
        }
        out.push_str(&format!("{tag} {line}\n"));
        last_printed = Some(k);
    }
    out
}
