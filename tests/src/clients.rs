//! The official AG-UI TypeScript clients as a test oracle.
//!
//! Every stream goes through `tests/agui-clients/check.mjs`, which hands it to
//! a real `HttpAgent` of `@ag-ui/client@0.0.58` and of `@ag-ui/client@1.0.0`
//! (SSE parser, zod schemas, `verifyEvents`, reducer: the published code).
//! The packages come from `npm ci` in `tests/agui-clients` (`.ci/e2e-setup.sh`);
//! when they are missing the check panics with that command instead of
//! skipping, so a CI without Node cannot pass silently.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde::Deserialize;
use serde_json::json;

/// The client versions the checker runs, in its output order.
pub const CLIENT_VERSIONS: [&str; 2] = ["0.0.58", "1.0.0"];

/// What one client made of one stream.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct ClientVerdict {
    /// `runAgent()` resolved.
    pub ok: bool,
    /// The error `runAgent()` rejected with.
    #[serde(default)]
    pub error: Option<String>,
    /// Events delivered to subscribers before the end or the failure.
    pub events: usize,
    /// Their types.
    pub types: Vec<String>,
    /// The last delivered event was RUN_FINISHED or RUN_ERROR.
    pub terminal: bool,
    /// What the client printed with console.warn/error (1.0.0 reports
    /// stripped keys and dropped events this way).
    pub warnings: Vec<String>,
    /// `outcome.type` of a final RUN_FINISHED.
    #[serde(default)]
    pub outcome: Option<String>,
}

/// Verdicts of every client for one stream, keyed by client version.
pub type Verdicts = BTreeMap<String, ClientVerdict>;

/// Runs several named SSE texts through every client in one Node process.
///
/// # Panics
/// When Node or the installed packages are missing, or the checker output
/// cannot be read (the message says how to install them).
pub fn check_streams(streams: &[(String, String)]) -> Vec<(String, Verdicts)> {
    let dir = checker_dir();
    assert!(
        dir.join("node_modules/@ag-ui/client").is_dir()
            && dir.join("node_modules/agui-client-v1").is_dir(),
        "the AG-UI client packages are not installed in {}; run `.ci/e2e-setup.sh` \
         (or `npm ci --prefix tests/agui-clients`) first",
        dir.display()
    );
    let mut child = Command::new(node())
        .arg("check.mjs")
        .arg("--jsonl")
        .current_dir(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start `node` (needed for the AG-UI client check): {e}"));
    let mut input = String::new();
    for (name, sse) in streams {
        input.push_str(&json!({"name": name, "sse": sse}).to_string());
        input.push('\n');
    }
    let mut stdin = child.stdin.take().expect("piped stdin");
    // Write from a thread: the checker answers while it reads, so a large
    // batch would otherwise fill both pipes and deadlock.
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child.wait_with_output().expect("node checker output");
    writer
        .join()
        .expect("writer thread")
        .expect("write to the checker");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let mut results = Vec::new();
    for line in stdout.lines().filter(|l| !l.trim().is_empty()) {
        #[derive(Deserialize)]
        struct Line {
            name: String,
            verdicts: Verdicts,
        }
        let parsed: Line = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("unreadable checker line {line:?}: {e}"));
        results.push((parsed.name, parsed.verdicts));
    }
    assert_eq!(
        results.len(),
        streams.len(),
        "the checker answered {} of {} streams; stderr:\n{}",
        results.len(),
        streams.len(),
        String::from_utf8_lossy(&output.stderr)
    );
    results
}

/// Runs one SSE text through every client.
pub fn check(sse: &str) -> Verdicts {
    check_streams(&[("stream".to_owned(), sse.to_owned())])
        .pop()
        .expect("one verdict")
        .1
}

/// Why the clients did not fully accept a stream, or `None` when every
/// client ran it to a terminal event without a failure or a warning.
pub fn rejection(verdicts: &Verdicts) -> Option<String> {
    let mut reasons = Vec::new();
    for version in CLIENT_VERSIONS {
        match verdicts.get(version) {
            None => reasons.push(format!("{version}: no verdict")),
            Some(v) if !v.ok => reasons.push(format!(
                "{version}: {} (after {:?})",
                v.error.as_deref().unwrap_or("failed"),
                v.types
            )),
            Some(v) if !v.terminal => {
                reasons.push(format!("{version}: no terminal event (got {:?})", v.types))
            }
            Some(v) if !v.warnings.is_empty() => {
                reasons.push(format!("{version}: warnings {:?}", v.warnings))
            }
            Some(_) => {}
        }
    }
    (!reasons.is_empty()).then(|| reasons.join("; "))
}

/// Asserts that every client accepts a complete stream (see [`rejection`]).
///
/// # Panics
/// When a client rejects it; the message carries the stream.
pub fn assert_accepted(what: &str, sse: &str) {
    if let Some(reason) = rejection(&check(sse)) {
        panic!("AG-UI clients rejected {what}: {reason}\n--- stream ---\n{sse}");
    }
}

/// `tests/agui-clients`.
pub fn checker_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("agui-clients")
}

/// The Node executable (`NODE` overrides `node` on the PATH).
fn node() -> String {
    std::env::var("NODE").unwrap_or_else(|_| "node".to_owned())
}
