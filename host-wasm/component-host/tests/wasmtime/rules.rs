//! The component's rule exports give the native core's answers, and it asks
//! its host for nothing beyond what Rust's `wasm32-wasip2` std links.

use iac_agui_component_host::{resume_verdict_json, CoreComponent, Refusal, ResumeOptions};
use iac_agui_core::i18n;
use iac_agui_core::json::{canonical_digest, canonical_json};
use iac_agui_core::mapper::build_interrupt;
use iac_agui_core::resume_check::check_resume;
use iac_agui_core::validate::{self, MAX_RUN_BODY_BYTES};
use serde_json::{json, Value};

use crate::load_component;

/// What the component may import: the WASI 0.2 interfaces that Rust's std
/// links for `wasm32-wasip2` (stdio, environment, exit; README "The
/// component's imports"). Pinned exactly, without the patch version (it
/// follows the Rust toolchain), so a new import is a deliberate change.
const ALLOWED_IMPORTS: &[&str] = &[
    "wasi:cli/environment",
    "wasi:cli/exit",
    "wasi:cli/stderr",
    "wasi:cli/stdin",
    "wasi:cli/stdout",
    "wasi:cli/terminal-input",
    "wasi:cli/terminal-output",
    "wasi:cli/terminal-stderr",
    "wasi:cli/terminal-stdin",
    "wasi:cli/terminal-stdout",
    "wasi:io/error",
    "wasi:io/poll",
    "wasi:io/streams",
];

#[test]
fn imports_only_what_wasip2_std_links() {
    let component = load_component();
    let imports = component.compiled().imports();
    println!("component imports: {imports:#?}");
    let mut names = Vec::new();
    for import in &imports {
        let (name, version) = import.split_once('@').unwrap_or((import, ""));
        assert!(version.starts_with("0.2."), "{import} is not WASI 0.2");
        names.push(name);
    }
    assert_eq!(names, ALLOWED_IMPORTS, "the component's imports changed");
}

#[test]
fn run_input_verdicts_match_the_native_core() {
    let mut component = load_component();
    let mut tools = good_body();
    tools["tools"] = json!([{"name": "x", "description": "", "parameters": {}}]);
    let mut unknown_pt = good_body();
    unknown_pt["forwardedProps"]["iacCode"]["preferredLanguage"] = json!("pt_BR");
    unknown_pt["forwardedProps"]["iacCode"]["surprise"] = json!(true);
    let mut resume = good_body();
    resume["messages"] = json!([]);
    resume["resume"] = json!([{"interruptId": "i-1", "status": "cancelled"}]);
    let mut image = good_body();
    image["messages"][0]["content"] = json!([{"type": "image",
        "source": {"type": "data", "mimeType": "image/png", "value": "iVBORw0KGgo="}}]);
    let cases: Vec<(&str, Vec<u8>, Option<&str>)> = vec![
        ("good", bytes(&good_body()), None),
        (
            "good, German header",
            bytes(&good_body()),
            Some("de-DE,de;q=0.9"),
        ),
        ("not JSON", b"{\"threadId\":".to_vec(), Some("ja")),
        ("not UTF-8", vec![0xff, 0xfe, b'{'], None),
        ("not an object", b"[1,2]".to_vec(), Some("fr")),
        ("too large", vec![b' '; MAX_RUN_BODY_BYTES + 1], Some("es")),
        ("client tools", bytes(&tools), None),
        ("unknown iacCode field", bytes(&unknown_pt), Some("de")),
        ("resume", bytes(&resume), None),
        ("image", bytes(&image), None),
        ("empty object", b"{}".to_vec(), Some("zh-CN")),
    ];
    for (name, body, accept) in cases {
        let got = component
            .validate_run_input(&body, accept)
            .expect("no trap");
        let want = native_verdict(&body, accept);
        assert_eq!(summary(&got), want, "case `{name}`");
    }
}

#[test]
fn run_input_verdicts_say_what_the_spec_says() {
    let mut component = load_component();
    let accepted = component
        .validate_run_input(&bytes(&good_body()), None)
        .expect("no trap")
        .expect("a good body is accepted");
    assert_eq!(accepted.digest, canonical_digest(&good_body()));
    assert_eq!(
        (accepted.thread_id.as_str(), accepted.run_id.as_str()),
        ("t-1", "r-1")
    );
    assert_eq!(accepted.server_checks, ["workspace"]);
    assert!(!accepted.resume);
    let refused = |component: &mut CoreComponent, body: &[u8]| -> Refusal {
        component
            .validate_run_input(body, Some("de"))
            .expect("no trap")
            .expect_err("refused")
    };
    let bad_json = refused(&mut component, b"{");
    assert_eq!(
        (bad_json.code.as_str(), bad_json.status),
        ("INVALID_JSON", 400)
    );
    assert_eq!(bad_json.language, "de");
    let too_large = refused(&mut component, &vec![b' '; MAX_RUN_BODY_BYTES + 1]);
    assert_eq!(
        (too_large.code.as_str(), too_large.status),
        ("REQUEST_TOO_LARGE", 413)
    );
}

#[test]
fn canonical_json_and_digest_match_the_native_core() {
    let mut component = load_component();
    let documents = [
        r#"{"b":1,"a":[true,null,{"z":"ü","y":1.5e300}]}"#,
        r#"{"schemaVersion":1.0,"n":-0,"big":18446744073709551615,"small":-9223372036854775808}"#,
        r#""line\nbreak \u2028 \ud83d\ude00""#,
        "[0.1, 0.30000000000000004, 1e-7, 123456789012345678901234567890]",
        "{}",
    ];
    for text in documents {
        let value: Value = serde_json::from_str(text).expect("test documents are JSON");
        let got = component.canonical_json(text).expect("no trap");
        assert_eq!(
            got.as_deref(),
            Ok(canonical_json(&value).as_str()),
            "{text}"
        );
        let got = component.canonical_digest(text).expect("no trap");
        assert_eq!(
            got.as_deref(),
            Ok(canonical_digest(&value).as_str()),
            "{text}"
        );
    }
    let refused = component.canonical_digest("{\"a\":").expect("no trap");
    assert!(refused.is_err(), "a document that is not JSON is refused");
}

#[test]
fn language_negotiation_matches_the_native_core() {
    let mut component = load_component();
    let cases = [
        (Some("ja-JP"), Some("de")),
        (Some("xx"), Some("es;q=0.4, fr;q=0.9")),
        (None, Some("*;q=0.5, pt-BR;q=0.8")),
        (None, Some("de;q=0, zh;q=abc")),
        (Some("pt_BR"), None),
        (None, None),
    ];
    for (preferred, accept) in cases {
        let got = component
            .negotiate_language(preferred, accept)
            .expect("no trap");
        assert_eq!(
            got,
            i18n::negotiate(preferred, accept).as_str(),
            "{preferred:?} {accept:?}"
        );
    }
}

#[test]
fn resume_verdicts_match_the_native_core() {
    let mut component = load_component();
    let permission = json!({"schemaVersion": 1, "kind": "permission", "inputId": "p-1",
        "toolUseId": "tu-1", "title": "Deploy?", "required": true});
    let question = json!({"schemaVersion": 1, "kind": "input_required", "inputId": "q-1",
        "prompt": "Which VPC?", "required": true, "allowFreeText": true,
        "options": [{"id": "vpc-a", "label": "A"}, {"id": "vpc-b", "label": "B"}]});
    let expires = "2026-01-01T00:09:00.000Z";
    let interrupts = json!([
        build_interrupt(&permission, expires, i18n::Language::Fr),
        build_interrupt(&question, expires, i18n::Language::Fr),
    ]);
    let before_expiry = Some(1_767_226_139_999);
    let resumes = [
        (
            json!([{"interruptId": "p-1", "status": "resolved", "payload": {"decision": "deny"}},
                {"interruptId": "q-1", "status": "resolved", "payload": {"freeText": "vpc-c"}}]),
            None,
        ),
        (
            json!([{"interruptId": "p-1", "status": "resolved", "payload": {"decision": "maybe"}},
                {"interruptId": "q-1", "status": "resolved", "payload": {"selectedId": "vpc-z"}}]),
            None,
        ),
        (json!([{"interruptId": "p-1", "status": "resolved"}]), None),
        (
            json!([{"interruptId": "p-1", "status": "cancelled"},
                {"interruptId": "p-1", "status": "cancelled"},
                {"interruptId": "nope", "status": "cancelled"}]),
            None,
        ),
        (
            json!({"threadId": "t", "resume": [{"interruptId": "q-1", "status": "cancelled"},
                {"interruptId": "p-1", "status": "cancelled"}]}),
            before_expiry,
        ),
        (
            json!([{"interruptId": "p-1", "status": "cancelled"}]),
            Some(1_767_226_140_000),
        ),
        (json!({"no": "entries"}), None),
    ];
    for (resume, now_ms) in resumes {
        let options = ResumeOptions {
            preferred_language: Some("fr".into()),
            accept_language: Some("de".into()),
            now_ms,
        };
        let verdict = component
            .validate_resume(&resume.to_string(), &interrupts.to_string(), &options)
            .expect("no trap");
        let native = check_resume(&resume, &interrupts, i18n::Language::Fr, now_ms);
        assert_eq!(
            canonical_json(&resume_verdict_json(&verdict)),
            canonical_json(&native_resume_json(&native)),
            "{resume} at {now_ms:?}"
        );
    }
    let not_json = component
        .validate_resume(
            "[",
            "[]",
            &ResumeOptions {
                preferred_language: None,
                accept_language: None,
                now_ms: None,
            },
        )
        .expect("no trap");
    assert_eq!(
        not_json.error.map(|e| e.code).as_deref(),
        Some("INVALID_JSON")
    );
}

fn good_body() -> Value {
    json!({
        "threadId": "t-1", "runId": "r-1", "state": {}, "tools": [], "context": [],
        "messages": [{"id": "m-1", "role": "user", "content": "hello"}],
        "forwardedProps": {"iacCode": {"schemaVersion": 1, "rosInvocationId": "ros-1", "cwd": "/w"}},
    })
}

fn bytes(value: &Value) -> Vec<u8> {
    serde_json::to_vec(value).expect("serialisable")
}

/// The comparable parts of a verdict: accepted → thread, run, digest,
/// language, resume; refused → code, status, message, language, details.
fn summary(verdict: &Result<iac_agui_component_host::AcceptedRun, Refusal>) -> Value {
    match verdict {
        Ok(run) => json!([
            "ok",
            run.thread_id,
            run.run_id,
            run.digest,
            run.language,
            run.resume
        ]),
        Err(refusal) => json!([
            "refused",
            refusal.code,
            refusal.status,
            refusal.message,
            refusal.language,
            refusal.details
        ]),
    }
}

/// The native core's verdict on the same bytes, in the server's order.
fn native_verdict(body: &[u8], accept: Option<&str>) -> Value {
    let refused = |error: iac_agui_core::ProtocolError, language: i18n::Language| {
        json!([
            "refused",
            error.code.as_str(),
            error.code.http_status(),
            error.message(language),
            language.as_str(),
            error.details.as_ref().map(canonical_json)
        ])
    };
    if body.len() > MAX_RUN_BODY_BYTES {
        let error = iac_agui_core::ProtocolError::new(
            iac_agui_core::ErrorCode::RequestTooLarge,
            iac_agui_core::MessageKey::RequestTooLarge,
        );
        return refused(error, i18n::negotiate(None, accept));
    }
    let value = match validate::parse_body(body) {
        Ok(value) => value,
        Err(error) => return refused(error, i18n::negotiate(None, accept)),
    };
    match validate::validate_run(&value, accept) {
        Ok(run) => json!([
            "ok",
            run.input.thread_id,
            run.input.run_id,
            run.digest,
            run.language.as_str(),
            run.is_resume()
        ]),
        Err(error) => refused(error, validate::request_language(&value, accept)),
    }
}

/// The native verdict in the JSON shape of `resume_verdict_json`, built
/// here independently of the host library.
fn native_resume_json(verdict: &iac_agui_core::resume_check::ResumeVerdict) -> Value {
    let language = i18n::Language::Fr;
    let error = |e: &Option<iac_agui_core::ProtocolError>| match e {
        None => Value::Null,
        Some(e) => json!({"code": e.code.as_str(), "message": e.message(language),
            "details": e.details.clone().unwrap_or(Value::Null)}),
    };
    let entries: Vec<Value> = verdict
        .entries
        .iter()
        .map(|entry| {
            json!({"interruptId": entry.interrupt_id, "ok": entry.error.is_none(),
            "error": error(&entry.error)})
        })
        .collect();
    json!({"ok": verdict.error.is_none(), "error": error(&verdict.error),
        "entries": entries, "missing": verdict.missing})
}
