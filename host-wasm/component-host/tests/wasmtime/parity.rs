//! Golden parity: every `tests/golden/**.json` case replayed by the
//! component under wasmtime must give, byte for byte, the canonical JSON of
//! the case's `expected` and of the native `iac_agui_core::replay::replay`.

use std::path::{Path, PathBuf};

use iac_agui_component_host::CoreComponent;
use iac_agui_core::json::canonical_json;
use serde_json::Value;

use crate::load_component;

#[test]
fn every_golden_case_is_byte_identical_under_wasmtime() {
    let mut component = load_component();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden");
    let cases = golden_cases(&root);
    assert!(
        !cases.is_empty(),
        "no golden cases under {}",
        root.display()
    );
    let mut failures = Vec::new();
    for path in &cases {
        let name = path
            .strip_prefix(&root)
            .unwrap_or(path)
            .display()
            .to_string();
        if let Err(report) = check_case(&mut component, path) {
            failures.push(format!("── {name}\n{report}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} golden cases differ under wasmtime:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    println!("{} golden cases byte-identical under wasmtime", cases.len());
}

/// Replays one case three ways and compares the bytes.
fn check_case(component: &mut CoreComponent, path: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("unreadable: {e}"))?;
    let case: Value = serde_json::from_str(&text).map_err(|e| format!("not JSON: {e}"))?;
    let kind = case["kind"].as_str().ok_or("no string `kind`")?;
    let input = case.get("input").ok_or("no `input`")?;
    let expected = case
        .get("expected")
        .ok_or("no `expected` (bless it natively first)")?;
    let native = iac_agui_core::replay::replay(kind, input).map(|v| canonical_json(&v));
    let guest = component
        .replay(kind, &canonical_json(input))
        .map_err(|trap| format!("the component trapped: {trap:?}"))?;
    if guest != native {
        return Err(format!(
            "component and native replay differ:\n{}",
            describe(&outcome(&native), &outcome(&guest))
        ));
    }
    let guest = guest.map_err(|e| format!("replay refused the case: {e}"))?;
    let expected = canonical_json(expected);
    if guest != expected {
        return Err(format!(
            "component output differs from `expected`:\n{}",
            describe(&expected, &guest)
        ));
    }
    Ok(())
}

fn golden_cases(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let entries = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()));
        for entry in entries {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|ext| ext == "json") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

fn outcome(result: &Result<String, String>) -> String {
    match result {
        Ok(text) => text.clone(),
        Err(error) => format!("Err({error})"),
    }
}

/// Where two texts part: the byte offset, both sides around it, and the
/// first differing lines of their pretty-printed JSON.
fn describe(want: &str, got: &str) -> String {
    let at = want
        .bytes()
        .zip(got.bytes())
        .position(|(a, b)| a != b)
        .unwrap_or(want.len().min(got.len()));
    let window = |s: &str| {
        let start = floor_char(s, at.saturating_sub(60));
        let end = floor_char(s, (at + 60).min(s.len()));
        s[start..end].to_owned()
    };
    let mut report = format!(
        "  first difference at byte {at} (lengths {} vs {})\n  want …{}…\n  got  …{}…\n",
        want.len(),
        got.len(),
        window(want),
        window(got)
    );
    let pretty = |s: &str| {
        serde_json::from_str::<Value>(s)
            .ok()
            .and_then(|v| serde_json::to_string_pretty(&v).ok())
            .unwrap_or_else(|| s.to_owned())
    };
    let (want, got) = (pretty(want), pretty(got));
    let (want_lines, got_lines): (Vec<&str>, Vec<&str>) =
        (want.lines().collect(), got.lines().collect());
    let shown = (0..want_lines.len().max(got_lines.len()))
        .filter(|&i| want_lines.get(i) != got_lines.get(i))
        .take(12);
    for i in shown {
        report.push_str(&format!(
            "  line {}:\n   - {}\n   + {}\n",
            i + 1,
            want_lines.get(i).unwrap_or(&"<none>"),
            got_lines.get(i).unwrap_or(&"<none>")
        ));
    }
    report
}

fn floor_char(s: &str, mut index: usize) -> usize {
    while !s.is_char_boundary(index) {
        index -= 1;
    }
    index
}
