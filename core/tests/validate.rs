//! Request validation (SPEC §2, §2.1, §3): one row per rejection rule, each
//! asserting the code and the English text, plus the accepted shapes.

use base64::Engine as _;
use iac_agui_core::a2a::Part;
use iac_agui_core::json::canonical_digest;
use iac_agui_core::validate::{
    is_safe_filename, parse_body, validate_run, workspace_error, ValidatedRun, MAX_IMAGE_BYTES,
    MAX_TOTAL_IMAGE_BYTES,
};
use iac_agui_core::{ErrorCode, Language, MessageKey};
use serde_json::{json, Value};

const ENVELOPE: &str = "Invalid AG-UI RunAgentInput envelope.";
const PROPS: &str = "Invalid iac-code forwarded properties.";
const TOOLS: &str = "Client-provided tools are not supported.";
const NEEDS_USER: &str = "A new run requires a user message.";
const REMOTE: &str = "Remote media URLs are not supported.";
const PART_TYPE: &str = "Only text and inline data images are supported.";
const MIME: &str = "The image media type is not supported.";
const BASE64: &str = "The image data is not valid base64.";
const TOO_BIG: &str = "An image exceeds the maximum size.";
const TOTAL: &str = "The total image content exceeds the maximum size.";
const CONTENT: &str = "The user message content is invalid.";

/// A body every rule accepts: a new run with one text message.
fn base() -> Value {
    json!({
        "threadId": "t-1",
        "runId": "r-1",
        "state": {},
        "messages": [{"id": "m1", "role": "user", "content": "Crie um modelo de VPC"}],
        "tools": [],
        "context": [],
        "forwardedProps": {"iacCode": {
            "schemaVersion": 1,
            "rosInvocationId": "inv-1",
            "cwd": "/workspace/s1"
        }}
    })
}

/// `base()` with `value` written at the JSON pointer `at` (the parent must exist).
fn set(at: &str, value: Value) -> Value {
    set_in(base(), at, value)
}

fn set_in(mut body: Value, at: &str, value: Value) -> Value {
    let (parent, key) = at.rsplit_once('/').expect("a JSON pointer");
    match body.pointer_mut(parent) {
        Some(Value::Object(map)) => {
            map.insert(key.to_owned(), value);
        }
        Some(Value::Array(items)) => items[key.parse::<usize>().expect("an index")] = value,
        _ => panic!("no container at {parent}"),
    }
    body
}

/// `base()` without the key at `at`.
fn unset(at: &str) -> Value {
    let mut body = base();
    let (parent, key) = at.rsplit_once('/').expect("a JSON pointer");
    let removed = body
        .pointer_mut(parent)
        .and_then(Value::as_object_mut)
        .and_then(|map| map.remove(key));
    assert!(removed.is_some(), "nothing to remove at {at}");
    body
}

fn iac(key: &str, value: Value) -> Value {
    set(&format!("/forwardedProps/iacCode/{key}"), value)
}

fn message(value: Value) -> Value {
    set("/messages", json!([value]))
}

fn content(parts: Value) -> Value {
    set("/messages/0/content", parts)
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn image(mime: &str, value: &str) -> Value {
    json!({"type": "image", "source": {"type": "data", "mimeType": mime, "value": value}})
}

fn png(len: usize) -> String {
    b64(&vec![0x89; len])
}

fn named_image(filename: Value) -> Value {
    let mut part = image("image/png", &png(4));
    part["metadata"] = json!({ "filename": filename });
    part
}

fn chars(c: char, n: usize) -> String {
    std::iter::repeat_n(c, n).collect()
}

/// Asserts every row is refused with its code and English text.
fn assert_rejected(rows: Vec<(&str, Value, &str)>) {
    for (name, body, english) in rows {
        let error = match validate_run(&body, None) {
            Ok(_) => panic!("{name}: accepted"),
            Err(error) => error,
        };
        assert_eq!(error.code, ErrorCode::InvalidInput, "{name}");
        assert_eq!(error.message(Language::En), english, "{name}");
        assert_eq!(error.code.http_status(), 400, "{name}");
    }
}

fn accepted(body: &Value) -> ValidatedRun {
    validate_run(body, None).unwrap_or_else(|e| panic!("refused with {e}: {body}"))
}

#[test]
fn body_must_be_a_json_object() {
    for raw in [
        &b"{"[..],
        b"",
        b"\xff\xfe",
        b"{\"a\":1}x",
        b"nul",
        b"{'a':1}",
    ] {
        let error = parse_body(raw).unwrap_err();
        assert_eq!(error.code, ErrorCode::InvalidJson, "{raw:?}");
        assert_eq!(
            error.message(Language::En),
            "The request body is not valid JSON."
        );
    }
    for raw in [&b"[]"[..], b"null", b"\"x\"", b"1", b"true"] {
        let error = parse_body(raw).unwrap_err();
        assert_eq!(error.code, ErrorCode::InvalidInput, "{raw:?}");
        assert_eq!(
            error.message(Language::En),
            "The request body must be a JSON object."
        );
    }
    assert_eq!(parse_body(base().to_string().as_bytes()).unwrap(), base());
}

#[test]
fn envelope_rules() {
    let mut rows = Vec::new();
    for key in [
        "threadId",
        "runId",
        "state",
        "messages",
        "tools",
        "context",
        "forwardedProps",
    ] {
        rows.push(("missing standard key", unset(&format!("/{key}")), ENVELOPE));
    }
    rows.extend([
        ("threadId number", set("/threadId", json!(1)), ENVELOPE),
        ("threadId null", set("/threadId", Value::Null), ENVELOPE),
        ("threadId empty", set("/threadId", json!("")), ENVELOPE),
        ("runId number", set("/runId", json!(7)), ENVELOPE),
        ("runId empty", set("/runId", json!("")), ENVELOPE),
        (
            "parentRunId number",
            set("/parentRunId", json!(3)),
            ENVELOPE,
        ),
        ("messages object", set("/messages", json!({})), ENVELOPE),
        ("messages null", set("/messages", Value::Null), ENVELOPE),
        (
            "tools object",
            set("/tools", json!({"name": "x"})),
            ENVELOPE,
        ),
        (
            "tools entry without name",
            set("/tools", json!([{}])),
            ENVELOPE,
        ),
        (
            "tools entry not object",
            set("/tools", json!([5])),
            ENVELOPE,
        ),
        ("context string", set("/context", json!("x")), ENVELOPE),
        (
            "context entry number",
            set("/context", json!([5])),
            ENVELOPE,
        ),
        (
            "context without description",
            set("/context", json!([{"value": "v"}])),
            ENVELOPE,
        ),
        (
            "context value not string",
            set("/context", json!([{"description": "d", "value": 1}])),
            ENVELOPE,
        ),
        ("resume object", set("/resume", json!({})), ENVELOPE),
        (
            "resume without interruptId",
            set("/resume", json!([{"status": "resolved"}])),
            ENVELOPE,
        ),
        (
            "resume interruptId number",
            set("/resume", json!([{"interruptId": 1, "status": "resolved"}])),
            ENVELOPE,
        ),
        (
            "resume without status",
            set("/resume", json!([{"interruptId": "i1"}])),
            ENVELOPE,
        ),
        (
            "resume unknown status",
            set("/resume", json!([{"interruptId": "i1", "status": "maybe"}])),
            ENVELOPE,
        ),
        (
            "resume status upper case",
            set(
                "/resume",
                json!([{"interruptId": "i1", "status": "RESOLVED"}]),
            ),
            ENVELOPE,
        ),
    ]);
    assert_rejected(rows);
}

#[test]
fn message_shapes_per_role() {
    assert_rejected(vec![
        ("message not object", message(json!("hi")), ENVELOPE),
        (
            "message without id",
            message(json!({"role": "user", "content": "x"})),
            ENVELOPE,
        ),
        (
            "message id number",
            message(json!({"id": 1, "role": "user", "content": "x"})),
            ENVELOPE,
        ),
        (
            "message without role",
            message(json!({"id": "m", "content": "x"})),
            ENVELOPE,
        ),
        (
            "unknown role",
            message(json!({"id": "m", "role": "robot", "content": "x"})),
            ENVELOPE,
        ),
        (
            "user without content",
            message(json!({"id": "m", "role": "user"})),
            ENVELOPE,
        ),
        (
            "user content number",
            message(json!({"id": "m", "role": "user", "content": 5})),
            ENVELOPE,
        ),
        (
            "user content object",
            message(json!({"id": "m", "role": "user", "content": {"type": "text"}})),
            ENVELOPE,
        ),
        (
            "assistant content number",
            message(json!({"id": "m", "role": "assistant", "content": 5})),
            ENVELOPE,
        ),
        (
            "assistant toolCalls object",
            message(json!({"id": "m", "role": "assistant", "toolCalls": {}})),
            ENVELOPE,
        ),
        (
            "system without content",
            message(json!({"id": "m", "role": "system"})),
            ENVELOPE,
        ),
        (
            "developer content array",
            message(json!({"id": "m", "role": "developer", "content": []})),
            ENVELOPE,
        ),
        (
            "reasoning content number",
            message(json!({"id": "m", "role": "reasoning", "content": 1})),
            ENVELOPE,
        ),
        (
            "tool without toolCallId",
            message(json!({"id": "m", "role": "tool", "content": "ok"})),
            ENVELOPE,
        ),
        (
            "tool without content",
            message(json!({"id": "m", "role": "tool", "toolCallId": "c"})),
            ENVELOPE,
        ),
        (
            "tool error number",
            message(
                json!({"id": "m", "role": "tool", "content": "x", "toolCallId": "c", "error": 1}),
            ),
            ENVELOPE,
        ),
        (
            "activity without activityType",
            message(json!({"id": "m", "role": "activity", "content": {}})),
            ENVELOPE,
        ),
        (
            "activity content string",
            message(json!({"id": "m", "role": "activity", "activityType": "a", "content": "x"})),
            ENVELOPE,
        ),
    ]);
}

#[test]
fn well_formed_messages_of_every_role_are_accepted() {
    let body = set(
        "/messages",
        json!([
            {"id": "s", "role": "system", "content": "be brief"},
            {"id": "d", "role": "developer", "content": "dev"},
            {"id": "u0", "role": "user", "content": [{"type": "audio"}]},
            {"id": "a", "role": "assistant", "content": "hi", "toolCalls": [], "metadata": {"x": 1}},
            {"id": "a2", "role": "assistant"},
            {"id": "t", "role": "tool", "content": "out", "toolCallId": "c", "error": "boom"},
            {"id": "r", "role": "reasoning", "content": "hmm"},
            {"id": "act", "role": "activity", "activityType": "plan", "content": {"steps": []}},
            {"id": "u1", "role": "user", "content": "the latest"}
        ]),
    );
    let run = accepted(&body);
    // Only the latest user message is judged and converted.
    let user = run.user_message.expect("a user message");
    assert_eq!(user.id, "u1");
    assert_eq!(user.parts, vec![Part::text("the latest")]);
}

#[test]
fn forwarded_props_container() {
    assert_rejected(vec![
        (
            "forwardedProps string",
            set("/forwardedProps", json!("x")),
            PROPS,
        ),
        (
            "forwardedProps array",
            set("/forwardedProps", json!([])),
            PROPS,
        ),
        (
            "forwardedProps null",
            set("/forwardedProps", Value::Null),
            PROPS,
        ),
        ("iacCode missing", set("/forwardedProps", json!({})), PROPS),
        (
            "sibling of iacCode",
            set("/forwardedProps/other", json!(1)),
            PROPS,
        ),
        (
            "iacCode string",
            set("/forwardedProps/iacCode", json!("x")),
            PROPS,
        ),
        (
            "iacCode null",
            set("/forwardedProps/iacCode", Value::Null),
            PROPS,
        ),
        (
            "iacCode array",
            set("/forwardedProps/iacCode", json!([])),
            PROPS,
        ),
    ]);
}

#[test]
fn iac_code_required_fields() {
    let mut rows = Vec::new();
    for key in ["schemaVersion", "rosInvocationId", "cwd"] {
        rows.push((
            "missing required field",
            unset(&format!("/forwardedProps/iacCode/{key}")),
            PROPS,
        ));
    }
    rows.extend([
        (
            "schemaVersion string",
            iac("schemaVersion", json!("1")),
            PROPS,
        ),
        (
            "schemaVersion float",
            iac("schemaVersion", json!(1.0)),
            PROPS,
        ),
        ("schemaVersion 2", iac("schemaVersion", json!(2)), PROPS),
        ("schemaVersion 0", iac("schemaVersion", json!(0)), PROPS),
        ("schemaVersion -1", iac("schemaVersion", json!(-1)), PROPS),
        (
            "schemaVersion true",
            iac("schemaVersion", json!(true)),
            PROPS,
        ),
        (
            "schemaVersion null",
            iac("schemaVersion", Value::Null),
            PROPS,
        ),
        (
            "rosInvocationId empty",
            iac("rosInvocationId", json!("")),
            PROPS,
        ),
        (
            "rosInvocationId 257 chars",
            iac("rosInvocationId", json!(chars('r', 257))),
            PROPS,
        ),
        (
            "rosInvocationId 257 multi-byte chars",
            iac("rosInvocationId", json!(chars('é', 257))),
            PROPS,
        ),
        (
            "rosInvocationId number",
            iac("rosInvocationId", json!(5)),
            PROPS,
        ),
        (
            "rosInvocationId null",
            iac("rosInvocationId", Value::Null),
            PROPS,
        ),
        ("cwd number", iac("cwd", json!(1)), PROPS),
        ("cwd array", iac("cwd", json!(["/w"])), PROPS),
        ("cwd null", iac("cwd", Value::Null), PROPS),
    ]);
    assert_rejected(rows);
}

#[test]
fn iac_code_optional_fields_are_strictly_typed() {
    assert_rejected(vec![
        ("model number", iac("model", json!(5)), PROPS),
        // Optional means "may be absent", not "may be null" (SPEC §3 types).
        ("model null", iac("model", Value::Null), PROPS),
        (
            "llmApiKey object",
            iac("llmApiKey", json!({"k": "v"})),
            PROPS,
        ),
        ("userId number", iac("userId", json!(42)), PROPS),
        ("channel bool", iac("channel", json!(true)), PROPS),
        (
            "preferredLanguage number",
            iac("preferredLanguage", json!(7)),
            PROPS,
        ),
        ("pipelineName array", iac("pipelineName", json!([])), PROPS),
        ("cleanupOnly 1", iac("cleanupOnly", json!(1)), PROPS),
        ("cleanupOnly 0", iac("cleanupOnly", json!(0)), PROPS),
        (
            "cleanupOnly string",
            iac("cleanupOnly", json!("true")),
            PROPS,
        ),
        (
            "candidatePresentation unknown",
            iac("candidatePresentation", json!("fancy")),
            PROPS,
        ),
        (
            "candidatePresentation case",
            iac("candidatePresentation", json!("Rich")),
            PROPS,
        ),
        (
            "candidatePresentation number",
            iac("candidatePresentation", json!(1)),
            PROPS,
        ),
        ("runMode unknown", iac("runMode", json!("batch")), PROPS),
        ("runMode case", iac("runMode", json!("PIPELINE")), PROPS),
        ("runMode empty", iac("runMode", json!("")), PROPS),
    ]);
}

#[test]
fn iac_code_unknown_fields_are_refused() {
    assert_rejected(vec![
        ("unknown field", iac("surprise", json!(1)), PROPS),
        ("snake_case alias", iac("schema_version", json!(1)), PROPS),
        ("case variant", iac("CWD", json!("/w")), PROPS),
        // The reference accepts these two; SPEC §3 does not list them.
        ("llmHeaders", iac("llmHeaders", json!({"x": "y"})), PROPS),
        ("activeGuidance", iac("activeGuidance", json!(true)), PROPS),
    ]);
}

#[test]
fn thinking_is_strict() {
    let rows = [
        ("thinking string", json!("on")),
        ("thinking array", json!([])),
        ("thinking null", Value::Null),
        ("thinking unknown field", json!({"level": "high"})),
        ("thinking enabled string", json!({"enabled": "true"})),
        ("thinking enabled 1", json!({"enabled": 1})),
        ("thinking effort number", json!({"effort": 3})),
        ("thinking budget 0", json!({"budget": 0})),
        ("thinking budget negative", json!({"budget": -5})),
        ("thinking budget fraction", json!({"budget": 1.5})),
        ("thinking budget float", json!({"budget": 1024.0})),
        ("thinking budget string", json!({"budget": "1024"})),
        ("thinking budget null", json!({"budget": null})),
    ];
    assert_rejected(
        rows.into_iter()
            .map(|(name, value)| (name, iac("thinking", value), PROPS))
            .collect(),
    );
}

#[test]
fn alibaba_cloud_is_strict() {
    let rows = [
        ("alibabaCloud string", json!("ak")),
        ("alibabaCloud null", Value::Null),
        ("accessKeyId number", json!({"accessKeyId": 5})),
        ("accessKeySecret bool", json!({"accessKeySecret": true})),
        ("securityToken object", json!({"securityToken": {}})),
        ("regionId null", json!({"regionId": null})),
        ("unknown field", json!({"endpoint": "x"})),
        ("case variant", json!({"AccessKeyId": "x"})),
    ];
    assert_rejected(
        rows.into_iter()
            .map(|(name, value)| (name, iac("alibabaCloud", value), PROPS))
            .collect(),
    );
}

#[test]
fn every_iac_code_field_is_read() {
    let body = set(
        "/forwardedProps/iacCode",
        json!({
            "schemaVersion": 1,
            "rosInvocationId": chars('é', 256),
            "cwd": "/workspace/s1",
            "model": "qwen-max",
            "llmApiKey": "sk-test",
            "thinking": {"enabled": true, "effort": "high", "budget": 2048},
            "userId": "u-9",
            "channel": "console",
            "preferredLanguage": "ja-JP",
            "candidatePresentation": "rich",
            "runMode": "pipeline",
            "pipelineName": "selling",
            "cleanupOnly": false,
            "alibabaCloud": {"accessKeyId": "id", "accessKeySecret": "s", "securityToken": "t", "regionId": "cn-hangzhou"}
        }),
    );
    let props = accepted(&body).iac;
    assert_eq!(props.schema_version, 1);
    assert_eq!(props.ros_invocation_id.chars().count(), 256);
    assert_eq!(props.cwd, "/workspace/s1");
    assert_eq!(props.model.as_deref(), Some("qwen-max"));
    assert_eq!(props.llm_api_key.as_deref(), Some("sk-test"));
    let thinking = props.thinking.as_ref().expect("thinking");
    assert_eq!(thinking.enabled, Some(true));
    assert_eq!(thinking.effort.as_deref(), Some("high"));
    assert_eq!(thinking.budget, Some(2048));
    assert_eq!(props.user_id.as_deref(), Some("u-9"));
    assert_eq!(props.channel.as_deref(), Some("console"));
    assert_eq!(props.preferred_language.as_deref(), Some("ja-JP"));
    assert_eq!(props.candidate_presentation.as_deref(), Some("rich"));
    assert_eq!(props.run_mode.as_deref(), Some("pipeline"));
    assert_eq!(props.pipeline_name.as_deref(), Some("selling"));
    assert_eq!(props.cleanup_only, Some(false));
    let cloud = props.alibaba_cloud.as_ref().expect("alibabaCloud");
    assert_eq!(cloud.access_key_id.as_deref(), Some("id"));
    assert_eq!(cloud.access_key_secret.as_deref(), Some("s"));
    assert_eq!(cloud.security_token.as_deref(), Some("t"));
    assert_eq!(cloud.region_id.as_deref(), Some("cn-hangzhou"));

    // Boundaries and the other enum values.
    for body in [
        iac("rosInvocationId", json!(chars('r', 256))),
        iac("rosInvocationId", json!("x")),
        iac("candidatePresentation", json!("standard")),
        iac("runMode", json!("normal")),
        iac("thinking", json!({})),
        iac("thinking", json!({"budget": 1})),
        iac("alibabaCloud", json!({})),
        iac("cleanupOnly", json!(true)),
        iac("cwd", json!("")),
    ] {
        accepted(&body);
    }
}

#[test]
fn tools_must_be_empty() {
    assert_rejected(vec![
        (
            "one tool",
            set("/tools", json!([{"name": "search"}])),
            TOOLS,
        ),
        (
            "tool with schema",
            set(
                "/tools",
                json!([{"name": "a", "description": "d", "parameters": {}}]),
            ),
            TOOLS,
        ),
    ]);
}

#[test]
fn a_new_run_needs_a_user_message() {
    assert_rejected(vec![
        ("no messages", set("/messages", json!([])), NEEDS_USER),
        (
            "only an assistant message",
            message(json!({"id": "a", "role": "assistant", "content": "hi"})),
            NEEDS_USER,
        ),
    ]);
}

#[test]
fn content_part_types() {
    assert_rejected(vec![
        (
            "remote image",
            content(
                json!([{"type": "image", "source": {"type": "url", "value": "https://x/y.png"}}]),
            ),
            REMOTE,
        ),
        (
            "remote image with mime",
            content(
                json!([{"type": "image", "source": {"type": "url", "value": "https://x", "mimeType": "image/png"}}]),
            ),
            REMOTE,
        ),
        (
            "audio",
            content(
                json!([{"type": "audio", "source": {"type": "data", "mimeType": "audio/wav", "value": "AAAA"}}]),
            ),
            PART_TYPE,
        ),
        (
            "video",
            content(json!([{"type": "video", "source": {"type": "url", "value": "https://x"}}])),
            PART_TYPE,
        ),
        (
            "document",
            content(
                json!([{"type": "document", "source": {"type": "data", "mimeType": "application/pdf", "value": "AAAA"}}]),
            ),
            PART_TYPE,
        ),
        (
            "binary",
            content(
                json!([{"type": "binary", "mimeType": "application/octet-stream", "data": "AAAA"}]),
            ),
            PART_TYPE,
        ),
        (
            "unknown part type",
            content(json!([{"type": "sticker", "id": 1}])),
            PART_TYPE,
        ),
        (
            "unsupported part after a good one",
            content(json!([{"type": "text", "text": "see"}, {"type": "audio"}])),
            PART_TYPE,
        ),
    ]);
}

#[test]
fn malformed_parts() {
    assert_rejected(vec![
        ("no parts", content(json!([])), CONTENT),
        ("part string", content(json!(["hi"])), CONTENT),
        ("part null", content(json!([null])), CONTENT),
        (
            "part without type",
            content(json!([{"text": "x"}])),
            CONTENT,
        ),
        ("part type number", content(json!([{"type": 1}])), CONTENT),
        (
            "text without text",
            content(json!([{"type": "text"}])),
            CONTENT,
        ),
        (
            "text number",
            content(json!([{"type": "text", "text": 5}])),
            CONTENT,
        ),
        (
            "image without source",
            content(json!([{"type": "image"}])),
            CONTENT,
        ),
        (
            "image source string",
            content(json!([{"type": "image", "source": "data:image/png;base64,AAAA"}])),
            CONTENT,
        ),
        (
            "image source without type",
            content(
                json!([{"type": "image", "source": {"mimeType": "image/png", "value": "AAAA"}}]),
            ),
            CONTENT,
        ),
        (
            "image source unknown type",
            content(
                json!([{"type": "image", "source": {"type": "file", "mimeType": "image/png", "value": "AAAA"}}]),
            ),
            CONTENT,
        ),
        (
            "image without mimeType",
            content(json!([{"type": "image", "source": {"type": "data", "value": "AAAA"}}])),
            CONTENT,
        ),
        (
            "image without value",
            content(
                json!([{"type": "image", "source": {"type": "data", "mimeType": "image/png"}}]),
            ),
            CONTENT,
        ),
        (
            "image value number",
            content(
                json!([{"type": "image", "source": {"type": "data", "mimeType": "image/png", "value": 7}}]),
            ),
            CONTENT,
        ),
    ]);
}

#[test]
fn image_media_types() {
    let rows = [
        "image/svg+xml",
        "image/bmp",
        "image/tiff",
        "text/plain",
        "",
        "image/png; q=1",
        "png",
        "image/jpg",
    ];
    assert_rejected(
        rows.into_iter()
            .map(|mime| ("bad mime", content(json!([image(mime, &png(4))])), MIME))
            .collect(),
    );
    for mime in [
        "image/png",
        "image/jpeg",
        "image/gif",
        "image/webp",
        "IMAGE/PNG",
        "Image/WebP",
    ] {
        let run = accepted(&content(json!([image(mime, &png(4))])));
        let parts = run.user_message.unwrap().parts;
        assert_eq!(
            parts[0].media_type.as_deref(),
            Some(mime.to_ascii_lowercase().as_str())
        );
    }
}

#[test]
fn image_base64_is_strict() {
    let rows = [
        ("non-alphabet", "!!!!"),
        ("url-safe alphabet", "-_-_"),
        ("missing padding", "aGVsbG8"),
        ("extra padding", "aGVsbG8=="),
        ("padding inside", "aG=sbG8="),
        ("trailing newline", "aGVsbG8=\n"),
        ("inner space", "aGVs bG8="),
        ("line-wrapped", "aGVs\r\nbG8="),
        ("non-zero trailing bits", "aGVsbG9="),
        ("lone character", "a"),
        ("non-ASCII", "aGVsbG8é"),
    ];
    assert_rejected(
        rows.into_iter()
            .map(|(name, value)| (name, content(json!([image("image/png", value)])), BASE64))
            .collect(),
    );
    let run = accepted(&content(json!([image("image/gif", "aGVsbG8=")])));
    let part = &run.user_message.unwrap().parts[0];
    assert_eq!(part.data.as_ref().unwrap()["bytes"], "aGVsbG8=");
}

#[test]
fn image_sizes() {
    let max = MAX_IMAGE_BYTES;
    let half = MAX_TOTAL_IMAGE_BYTES / 2;
    assert_rejected(vec![
        (
            "one image over 8 MiB",
            content(json!([image("image/png", &png(max + 1))])),
            TOO_BIG,
        ),
        (
            "two images over 10 MiB together",
            content(json!([
                image("image/png", &png(half)),
                image("image/jpeg", &png(half + 1))
            ])),
            TOTAL,
        ),
        (
            "three images of 4 MiB",
            content(json!([
                image("image/png", &png(4 << 20)),
                {"type": "text", "text": "between"},
                image("image/png", &png(4 << 20)),
                image("image/png", &png(4 << 20))
            ])),
            TOTAL,
        ),
    ]);
    accepted(&content(json!([image("image/png", &png(max))])));
    accepted(&content(json!([
        image("image/png", &png(half)),
        image("image/webp", &png(half))
    ])));
}

#[test]
fn parts_are_converted_exactly() {
    let bytes = b"\x89PNG\r\n\x1a\nfake";
    let mut chart = image("image/PNG", &b64(bytes));
    chart["metadata"] = json!({"filename": "chart.png", "note": "kept out"});
    let body = content(json!([
        {"type": "text", "text": "Look:"},
        chart,
        image("image/jpeg", &b64(b"jpeg")),
        {"type": "text", "text": ""}
    ]));
    let run = accepted(&body);
    let user = run.user_message.expect("a new run has a user message");
    assert_eq!(user.id, "m1");
    let wire: Vec<Value> = user
        .parts
        .iter()
        .map(|p| serde_json::to_value(p).unwrap())
        .collect();
    assert_eq!(
        wire,
        vec![
            json!({"text": "Look:"}),
            json!({"data": {"filename": "chart.png", "bytes": b64(bytes)}, "mediaType": "image/png"}),
            json!({"data": {"filename": "agui-image-3", "bytes": b64(b"jpeg")}, "mediaType": "image/jpeg"}),
            json!({"text": ""}),
        ]
    );
    let plain = accepted(&base()).user_message.unwrap();
    assert_eq!(
        serde_json::to_string(&plain.parts).unwrap(),
        r#"[{"text":"Crie um modelo de VPC"}]"#
    );
}

#[test]
fn image_file_names() {
    let kept = [
        "chart.png".to_owned(),
        "résumé photo.jpeg".to_owned(),
        ".hidden".to_owned(),
        "COM0.png".to_owned(),
        "console.png".to_owned(),
        chars('a', 255),
        // 127 two-byte characters and one more byte: 255 bytes.
        format!("{}x", chars('é', 127)),
    ];
    for name in kept {
        let run = accepted(&content(json!([named_image(json!(name))])));
        let data = run.user_message.unwrap().parts[0].data.clone().unwrap();
        assert_eq!(data["filename"], json!(name), "{name:?} should be kept");
    }
    let replaced = [
        json!(chars('a', 256)),
        json!(chars('é', 128)),
        json!(""),
        json!("."),
        json!(".."),
        json!("../x.png"),
        json!("a/b.png"),
        json!("/etc/passwd"),
        json!("a\\b.png"),
        json!("C:evil.png"),
        json!("x\u{1}.png"),
        json!("tab\there.png"),
        json!("line\n.png"),
        json!("what?.png"),
        json!("star*.png"),
        json!("pipe|.png"),
        json!("quote\".png"),
        json!("angle<.png"),
        json!("trailing."),
        json!("trailing "),
        json!("CON"),
        json!("nul.png"),
        json!("Lpt9.txt"),
        json!("COM¹.png"),
        json!(5),
        json!(null),
    ];
    for name in replaced {
        let run = accepted(&content(json!([
            {"type": "text", "text": "first"},
            named_image(name.clone())
        ])));
        let data = run.user_message.unwrap().parts[1].data.clone().unwrap();
        assert_eq!(
            data["filename"], "agui-image-2",
            "{name} should be replaced"
        );
    }
    // Metadata that is not an object is ignored the same way.
    let mut part = image("image/png", &png(1));
    part["metadata"] = json!("chart.png");
    let run = accepted(&content(json!([part])));
    assert_eq!(
        run.user_message.unwrap().parts[0].data.as_ref().unwrap()["filename"],
        "agui-image-1"
    );
    assert!(!is_safe_filename("COM1"));
    assert!(is_safe_filename("COM10"));
}

#[test]
fn only_the_latest_user_message_is_judged() {
    let body = set(
        "/messages",
        json!([
            {"id": "old", "role": "user", "content": [{"type": "video"}]},
            {"id": "a", "role": "assistant", "content": "ok"},
            {"id": "new", "role": "user", "content": [{"type": "text", "text": "fine"}]}
        ]),
    );
    assert_eq!(accepted(&body).user_message.unwrap().id, "new");
    let body = set(
        "/messages",
        json!([
            {"id": "old", "role": "user", "content": "fine"},
            {"id": "new", "role": "user", "content": [{"type": "video"}]}
        ]),
    );
    assert_rejected(vec![("latest user message judged", body, PART_TYPE)]);
}

#[test]
fn a_resume_needs_no_messages() {
    let resume = json!([
        {"interruptId": "i1", "status": "resolved", "payload": {"decision": "allow_once"}, "metadata": {"ui": 1}},
        {"interruptId": "i2", "status": "cancelled"}
    ]);
    let body = set_in(set("/messages", json!([])), "/resume", resume);
    let run = accepted(&body);
    assert!(run.is_resume());
    assert!(run.user_message.is_none());
    assert_eq!(run.input.resume.as_ref().map(Vec::len), Some(2));
    // Nor is the content of old messages judged on a resume.
    let body = set_in(
        content(json!([{"type": "video"}])),
        "/resume",
        json!([{"interruptId": "i1", "status": "cancelled"}]),
    );
    assert!(accepted(&body).user_message.is_none());
    // A resume still obeys the other rules.
    let body = set_in(set("/tools", json!([{"name": "x"}])), "/resume", json!([]));
    assert_rejected(vec![("resume with tools", body, TOOLS)]);
}

#[test]
fn unknown_top_level_keys_are_tolerated() {
    let body = set_in(
        set_in(
            set("/protocolVersion", json!("1.0")),
            "/x-trace",
            json!({"a": [1]}),
        ),
        "/parentRunId",
        json!("r-0"),
    );
    let run = accepted(&body);
    assert_eq!(run.input.extra.get("protocolVersion"), Some(&json!("1.0")));
    assert_eq!(run.input.extra.get("x-trace"), Some(&json!({"a": [1]})));
    assert_eq!(run.input.parent_run_id.as_deref(), Some("r-0"));
    // Any JSON is a valid state; messages may carry extra keys.
    accepted(&set("/state", Value::Null));
    accepted(&set("/state", json!([1, "two"])));
    accepted(&set("/messages/0/metadata", json!({"client": "web"})));
    accepted(&set(
        "/context",
        json!([{"description": "d", "value": "v", "extra": 1}]),
    ));
}

#[test]
fn the_digest_and_language_come_with_the_verdict() {
    let body = base();
    let run = accepted(&body);
    assert_eq!(
        run.digest,
        "93feb30ee6f3d6b3d8ed1b89226f319cfc6b6523d0c1c9bfab5419e708846f40"
    );
    assert_eq!(run.digest, canonical_digest(&body));
    assert_eq!(run.language, Language::En);
    let run = validate_run(&iac("preferredLanguage", json!("pt_BR")), Some("de")).unwrap();
    assert_eq!(run.language, Language::Pt);
    let run = validate_run(&base(), Some("fr;q=0.4, zh;q=0.6")).unwrap();
    assert_eq!(run.language, Language::Zh);
}

#[test]
fn workspace_refusals_are_invalid_input() {
    let cases = [
        (
            MessageKey::WorkspaceNotAbsolute,
            "The iac-code workspace must be an absolute path.",
        ),
        (
            MessageKey::WorkspaceOutsideRoots,
            "The iac-code workspace is outside the allowed roots.",
        ),
        (
            MessageKey::WorkspaceNotDirectory,
            "The iac-code workspace is not a directory.",
        ),
        (
            MessageKey::WorkspaceCannotCreate,
            "The iac-code workspace cannot be created.",
        ),
        (
            MessageKey::WorkspaceInvalid,
            "The iac-code workspace is invalid.",
        ),
    ];
    for (key, english) in cases {
        let error = workspace_error(key);
        assert_eq!(error.code, ErrorCode::InvalidInput);
        assert_eq!(error.message(Language::En), english);
    }
}

#[test]
fn debug_output_never_shows_secrets() {
    let body = set(
        "/forwardedProps/iacCode",
        json!({
            "schemaVersion": 1,
            "rosInvocationId": "inv-1",
            "cwd": "/workspace/s1",
            "llmApiKey": "sk-LLM-SECRET-1",
            "alibabaCloud": {
                "accessKeyId": "LTAI-visible-id",
                "accessKeySecret": "AK-SECRET-2",
                "securityToken": "STS-SECRET-3"
            }
        }),
    );
    let run = accepted(&body);
    let shown = [
        format!("{:?}", run.iac),
        format!("{:#?}", run.iac),
        format!("{run:?}"),
    ];
    for text in shown {
        for secret in ["sk-LLM-SECRET-1", "AK-SECRET-2", "STS-SECRET-3"] {
            assert!(!text.contains(secret), "{secret} leaked into {text}");
        }
        assert!(text.contains("<redacted>"));
    }
    // The id is not a secret and stays visible for debugging.
    assert!(format!("{:?}", run.iac).contains("LTAI-visible-id"));
    // Refusals carry no input either.
    let error = validate_run(&iac("llmApiKey", json!(["sk-LLM-SECRET-1"])), None).unwrap_err();
    assert!(!format!("{error:?} {error}").contains("SECRET"));
}
