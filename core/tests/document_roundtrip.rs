//! The schema-v1 thread document: loading, refusing, round-tripping, keys.

use iac_agui_core::document::{
    context_id, parse_iso_ms, thread_key, DocumentError, PendingInput, ThreadDocument,
};
use serde_json::{json, Value};

const D1: &str = "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0";
const D2: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

/// A document shaped exactly as iac-code 0.16.0 writes it
/// (`AguiA2AAdapter._thread_state_document`): pending entries carry only
/// `value` and `sideband`, sets are sorted arrays, ids may be `null`.
fn reference_document() -> Value {
    json!({
        "schemaVersion": 1,
        "threadId": "thread-perm-1",
        "contextId": context_id("thread-perm-1"),
        "cwd": "/workspace/ws",
        "userId": "u1",
        "iacCodeSessionId": "5f1022f2-6f0c-4f49-9b1c-111111111111",
        "execution": {
            "executionId": "0b6f9a52-93a4-4d0e-9a57-2c7e6c1f0a11",
            "rosInvocationId": "ros-thr-perm",
            "taskId": "fcc765c9-2b1e-4d7a-8a77-0f3f2f5b9c10",
            "pipelineSequence": 12,
            "pipelineOpenSteps": ["candidate:sp1:template_validating", "step:evaluate_candidates"],
            "textSnapshotDigests": [D1],
            "pending": {
                "permission-6fec5ec47c0b4643b8ef8c475ee659b1": {
                    "value": {
                        "schemaVersion": 1.0,
                        "kind": "permission",
                        "requestTaskId": "fcc765c9-2b1e-4d7a-8a77-0f3f2f5b9c10",
                        "contextId": context_id("thread-perm-1"),
                        "inputId": "permission-6fec5ec47c0b4643b8ef8c475ee659b1",
                        "toolUseId": "call_fd93c003",
                        "toolName": "bash",
                        "title": "Run a local shell command",
                        "purpose": "Execute a local command.",
                        "effect": "local_execution",
                        "target": "the current local workspace",
                        "isReadOnly": false,
                        "prompt": "Run a local shell command Allow once?",
                        "safeSummary": "bash: {\"command\":\"mkdir -p newdir\"}",
                        "options": [{"id": "allow_once", "label": "Allow once"}, {"id": "deny", "label": "Deny"}],
                        "language": "en",
                        "required": true
                    },
                    "sideband": false
                }
            }
        },
        "runDigests": {"run-1": D1, "run-2": D2},
        "appliedResumeDigests": [
            {"executionId": "0b6f9a52-93a4-4d0e-9a57-2c7e6c1f0a11", "interruptId": "permission-old", "digest": D2}
        ],
        "terminalExecutionIds": ["5d7b0c1e-0000-4000-8000-000000000001"]
    })
}

#[test]
fn a_reference_document_loads_and_round_trips_without_losing_fields() {
    let original = reference_document();
    let doc = ThreadDocument::parse(&original, "thread-perm-1").expect("loads");
    assert_eq!(doc.user_id.as_deref(), Some("u1"));
    assert_eq!(doc.execution.pipeline_sequence, 12);
    assert_eq!(doc.execution.pending.len(), 1);
    assert_eq!(
        doc.applied_digest("permission-old"),
        Some(D2),
        "applied digests are keyed by the current execution"
    );
    assert_eq!(doc.to_json(), original);
    let again = ThreadDocument::parse(&doc.to_json(), "thread-perm-1").expect("reloads");
    assert_eq!(again, doc);
}

/// The text written to a file is the stored value's, member for member
/// and in the same order (`encode` does not build the value).
#[test]
fn the_encoded_text_is_the_text_of_the_stored_value() {
    let mut value = reference_document();
    let entry = &mut value["execution"]["pending"]["permission-6fec5ec47c0b4643b8ef8c475ee659b1"];
    entry["expiresAt"] = json!("2026-12-02T10:09:00.000Z");
    let fresh = ThreadDocument::new("t", "/w", None, "e1".into(), "r1".into());
    let loaded = ThreadDocument::parse(&value, "thread-perm-1").unwrap();
    for (doc, stored) in [(&fresh, fresh.to_json()), (&loaded, value)] {
        let encoded = doc.encode();
        assert_eq!(encoded.as_bytes(), serde_json::to_vec(&stored).unwrap());
        assert_eq!(encoded.to_value(), stored);
    }
}

#[test]
fn a_new_document_round_trips_with_nulls_written() {
    let doc = ThreadDocument::new("t", "/w", None, "e1".into(), "r1".into());
    let stored = doc.to_json();
    assert_eq!(stored["userId"], Value::Null);
    assert_eq!(stored["execution"]["taskId"], Value::Null);
    assert_eq!(stored["execution"]["pending"], json!({}));
    assert_eq!(ThreadDocument::parse(&stored, "t").unwrap(), doc);
}

#[test]
fn pending_expiry_is_kept_when_present() {
    let mut value = reference_document();
    let entry = &mut value["execution"]["pending"]["permission-6fec5ec47c0b4643b8ef8c475ee659b1"];
    entry["expiresAt"] = json!("2026-12-02T10:09:00.000Z");
    let doc = ThreadDocument::parse(&value, "thread-perm-1").unwrap();
    let pending = doc.execution.pending.values().next().unwrap();
    assert_eq!(
        pending.expires_at.as_deref(),
        Some("2026-12-02T10:09:00.000Z")
    );
    assert_eq!(doc.to_json(), value);
}

#[test]
fn secrets_and_unknown_projection_fields_never_survive() {
    let projection = json!({
        "inputId": "i1", "kind": "permission", "prompt": "ok?",
        "iac_code_api_key": "sk-secret", "toolInput": {"command": "rm -rf /"},
        "alibaba_cloud_access_key_secret": "s3cret"
    });
    let pending = PendingInput::new(&projection, false, None);
    let text = serde_json::to_string(&pending.value).unwrap();
    assert!(!text.contains("secret"), "{text}");
    assert!(!text.contains("toolInput"), "{text}");
    assert_eq!(pending.value.len(), 3);

    let mut value = reference_document();
    value["execution"]["pending"]["permission-6fec5ec47c0b4643b8ef8c475ee659b1"]["value"]
        ["llmApiKey"] = json!("sk-leak");
    let doc = ThreadDocument::parse(&value, "thread-perm-1").unwrap();
    assert!(!doc.to_json().to_string().contains("sk-leak"));
}

/// Damages a valid document in one place.
type Mutation = Box<dyn Fn(&mut Value)>;

#[test]
fn every_invalid_field_is_refused_with_a_typed_error() {
    let cases: Vec<(&str, Mutation, DocumentError)> = vec![
        (
            "schema 2",
            Box::new(|v| v["schemaVersion"] = json!(2)),
            DocumentError::UnsupportedSchema,
        ),
        (
            "schema float",
            Box::new(|v| v["schemaVersion"] = json!(1.0)),
            DocumentError::UnsupportedSchema,
        ),
        (
            "schema missing",
            Box::new(|v| {
                v.as_object_mut().unwrap().remove("schemaVersion");
            }),
            DocumentError::UnsupportedSchema,
        ),
        (
            "other thread",
            Box::new(|v| v["threadId"] = json!("thread-2")),
            DocumentError::ThreadMismatch,
        ),
        (
            "context",
            Box::new(|v| v["contextId"] = json!("agui-0000")),
            DocumentError::InvalidField("contextId"),
        ),
        (
            "cwd type",
            Box::new(|v| v["cwd"] = json!(3)),
            DocumentError::InvalidField("cwd"),
        ),
        (
            "cwd empty",
            Box::new(|v| v["cwd"] = json!("")),
            DocumentError::InvalidField("cwd"),
        ),
        (
            "user type",
            Box::new(|v| v["userId"] = json!(true)),
            DocumentError::InvalidField("userId"),
        ),
        (
            "session type",
            Box::new(|v| v["iacCodeSessionId"] = json!([])),
            DocumentError::InvalidField("iacCodeSessionId"),
        ),
        (
            "execution",
            Box::new(|v| v["execution"] = json!([])),
            DocumentError::InvalidField("execution"),
        ),
        (
            "execution id",
            Box::new(|v| v["execution"]["executionId"] = json!(null)),
            DocumentError::InvalidField("execution.executionId"),
        ),
        (
            "ros id",
            Box::new(|v| v["execution"]["rosInvocationId"] = json!(1)),
            DocumentError::InvalidField("execution.rosInvocationId"),
        ),
        (
            "task id",
            Box::new(|v| v["execution"]["taskId"] = json!(1)),
            DocumentError::InvalidField("execution.taskId"),
        ),
        (
            "sequence negative",
            Box::new(|v| v["execution"]["pipelineSequence"] = json!(-1)),
            DocumentError::InvalidField("execution.pipelineSequence"),
        ),
        (
            "sequence bool",
            Box::new(|v| v["execution"]["pipelineSequence"] = json!(true)),
            DocumentError::InvalidField("execution.pipelineSequence"),
        ),
        (
            "open steps",
            Box::new(|v| v["execution"]["pipelineOpenSteps"] = json!([""])),
            DocumentError::InvalidField("execution.pipelineOpenSteps"),
        ),
        (
            "text digest",
            Box::new(|v| v["execution"]["textSnapshotDigests"] = json!(["ABC"])),
            DocumentError::InvalidField("execution.textSnapshotDigests"),
        ),
        (
            "pending type",
            Box::new(|v| v["execution"]["pending"] = json!([])),
            DocumentError::InvalidField("execution.pending"),
        ),
        (
            "pending identity",
            Box::new(|v| {
                let p = v["execution"]["pending"].as_object_mut().unwrap();
                let entry = p
                    .remove("permission-6fec5ec47c0b4643b8ef8c475ee659b1")
                    .unwrap();
                p.insert("other".into(), entry);
            }),
            DocumentError::InvalidField("execution.pending"),
        ),
        (
            "pending sideband",
            Box::new(|v| {
                v["execution"]["pending"]["permission-6fec5ec47c0b4643b8ef8c475ee659b1"]
                    ["sideband"] = json!("no")
            }),
            DocumentError::InvalidField("execution.pending"),
        ),
        (
            "pending expiry",
            Box::new(|v| {
                v["execution"]["pending"]["permission-6fec5ec47c0b4643b8ef8c475ee659b1"]
                    ["expiresAt"] = json!("tomorrow")
            }),
            DocumentError::InvalidField("execution.pending"),
        ),
        (
            "run digest",
            Box::new(|v| v["runDigests"]["run-1"] = json!("xyz")),
            DocumentError::InvalidField("runDigests"),
        ),
        (
            "run digests type",
            Box::new(|v| v["runDigests"] = json!([])),
            DocumentError::InvalidField("runDigests"),
        ),
        (
            "applied digest",
            Box::new(|v| v["appliedResumeDigests"][0]["digest"] = json!(D1.to_uppercase())),
            DocumentError::InvalidField("appliedResumeDigests"),
        ),
        (
            "applied missing id",
            Box::new(|v| {
                v["appliedResumeDigests"][0]
                    .as_object_mut()
                    .unwrap()
                    .remove("interruptId");
            }),
            DocumentError::InvalidField("appliedResumeDigests"),
        ),
        (
            "terminal ids",
            Box::new(|v| v["terminalExecutionIds"] = json!([1])),
            DocumentError::InvalidField("terminalExecutionIds"),
        ),
    ];
    for (name, mutate, expected) in cases {
        let mut value = reference_document();
        mutate(&mut value);
        assert_eq!(
            ThreadDocument::parse(&value, "thread-perm-1"),
            Err(expected),
            "case {name}"
        );
    }
    assert_eq!(
        ThreadDocument::parse(&json!("x"), "thread-perm-1"),
        Err(DocumentError::NotAnObject)
    );
}

#[test]
fn thread_keys_follow_the_spec() {
    assert_eq!(thread_key("thread-1.a_b"), "thread-1.a_b");
    assert_eq!(thread_key("Thread"), "aguiid~546872656164");
    assert_eq!(thread_key("."), "aguiid~2e");
    assert_eq!(thread_key(".."), "aguiid~2e2e");
    assert_eq!(thread_key("abc."), "aguiid~6162632e");
    assert_eq!(thread_key("con"), "aguiid~636f6e");
    assert_eq!(thread_key("com1.txt"), "aguiid~636f6d312e747874");
    assert_eq!(thread_key("com10"), "com10");
    assert_eq!(thread_key("a/b"), "aguiid~612f62");
    assert_eq!(thread_key("é"), "aguiid~c3a9");
    let long = "X".repeat(96);
    assert_eq!(thread_key(&long).len(), "aguiid~".len() + 192);
    let longer = "X".repeat(97);
    let key = thread_key(&longer);
    assert!(key.starts_with("aguihash~"), "{key}");
    assert_eq!(key.len(), "aguihash~".len() + 64);
}

#[test]
fn iso_timestamps_parse_to_unix_millis() {
    assert_eq!(parse_iso_ms("1970-01-01T00:00:00Z"), Some(0));
    assert_eq!(
        parse_iso_ms("2026-12-02T09:50:40.560657Z"),
        Some(1_796_205_040_560)
    );
    assert_eq!(
        parse_iso_ms("2000-03-01T00:00:00.5+00:00"),
        Some(951_868_800_500)
    );
    assert_eq!(parse_iso_ms("1970-01-01T08:00:00+08:00"), Some(0));
    assert_eq!(parse_iso_ms("1969-12-31T23:30:00-00:30"), Some(0));
    assert_eq!(parse_iso_ms("2026-13-02T09:50:40Z"), None);
    assert_eq!(parse_iso_ms("2026-12-02 09:50:40Z"), None);
    assert_eq!(parse_iso_ms("2026-12-02T09:50:40"), None);
}
