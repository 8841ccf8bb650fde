//! The core's JSON Schema validator against the response schemas the core
//! builds (SPEC §7), and the keywords it supports.

use iac_agui_core::i18n::Language;
use iac_agui_core::mapper::build_interrupt;
use iac_agui_core::schema::{is_valid, validate};
use serde_json::{json, Value};

fn schema_of(projection: Value) -> Value {
    build_interrupt(&projection, "2026-01-01T00:00:00.000Z", Language::En)
        .response_schema
        .expect("every interrupt has a response schema")
}

fn paths(schema: &Value, instance: &Value) -> Vec<(String, &'static str)> {
    validate(schema, instance)
        .into_iter()
        .map(|e| (e.instance_path, e.keyword))
        .collect()
}

#[test]
fn permission_schema_accepts_only_the_two_decisions() {
    let schema = schema_of(json!({"kind": "permission", "inputId": "p-1", "required": true}));
    assert!(is_valid(&schema, &json!({"decision": "allow_once"})));
    assert!(is_valid(&schema, &json!({"decision": "deny"})));
    assert_eq!(
        paths(&schema, &json!({"decision": "allow_always"})),
        [("/decision".to_owned(), "enum")]
    );
    assert_eq!(
        paths(&schema, &json!({"decision": 1})),
        [
            ("/decision".to_owned(), "type"),
            ("/decision".to_owned(), "enum")
        ]
    );
    assert_eq!(paths(&schema, &json!({})), [(String::new(), "required")]);
    assert_eq!(
        paths(&schema, &json!({"decision": "deny", "note": "x"})),
        [(String::new(), "additionalProperties")]
    );
    assert_eq!(paths(&schema, &json!("deny")), [(String::new(), "type")]);
}

#[test]
fn selection_schema_takes_one_known_option_or_free_text() {
    let with_free_text = schema_of(json!({
        "kind": "ask_user_question", "inputId": "ask-1", "required": true, "allowFreeText": true,
        "options": [{"id": "cn-hangzhou", "label": "Hangzhou"}, {"id": "cn-beijing", "label": "Beijing"}]
    }));
    assert!(is_valid(
        &with_free_text,
        &json!({"selectedId": "cn-beijing"})
    ));
    assert!(is_valid(&with_free_text, &json!({"freeText": "Shanghai"})));
    for bad in [
        json!({"selectedId": "cn-shanghai"}),
        json!({"freeText": ""}),
        json!({"selectedId": "cn-beijing", "freeText": "x"}),
        json!({"selectedId": "cn-beijing", "extra": true}),
        json!({}),
        json!(null),
    ] {
        assert_eq!(
            paths(&with_free_text, &bad),
            [(String::new(), "oneOf")],
            "{bad}"
        );
    }

    let options_only = schema_of(json!({
        "kind": "candidate_selection", "inputId": "in-1", "required": true,
        "options": [{"id": "0", "label": "ECS + RDS"}]
    }));
    assert!(is_valid(&options_only, &json!({"selectedId": "0"})));
    assert!(!is_valid(
        &options_only,
        &json!({"freeText": "something else"})
    ));

    let no_options =
        schema_of(json!({"kind": "ask_user_question", "inputId": "ask-2", "required": true}));
    assert!(is_valid(&no_options, &json!({"freeText": "anything"})));
}

#[test]
fn general_keywords() {
    let schema = json!({
        "type": "object",
        "properties": {
            "n": {"type": "integer", "minimum": 1, "maximum": 3},
            "list": {"type": "array", "items": {"const": 1.0}, "minItems": 1, "maxItems": 2},
            "s": {"type": ["string", "null"], "maxLength": 2},
            "a/b": {"not": {"type": "boolean"}}
        },
        "additionalProperties": {"type": "string"},
        "anyOf": [{"required": ["n"]}, {"required": ["s"]}],
        "allOf": [{"type": "object"}]
    });
    assert!(is_valid(
        &schema,
        &json!({"n": 2, "list": [1], "s": null, "extra": "ok"})
    ));
    assert_eq!(
        paths(&schema, &json!({"n": 2.5})),
        [("/n".to_owned(), "type")]
    );
    assert_eq!(
        paths(&schema, &json!({"n": 0})),
        [("/n".to_owned(), "minimum")]
    );
    assert_eq!(
        paths(&schema, &json!({"n": 4})),
        [("/n".to_owned(), "maximum")]
    );
    assert_eq!(
        paths(&schema, &json!({"n": 1, "list": []})),
        [("/list".to_owned(), "minItems")]
    );
    assert_eq!(
        paths(&schema, &json!({"n": 1, "list": [1, 1, 1]})),
        [("/list".to_owned(), "maxItems")]
    );
    assert_eq!(
        paths(&schema, &json!({"n": 1, "list": [2]})),
        [("/list/0".to_owned(), "const")]
    );
    assert_eq!(
        paths(&schema, &json!({"s": "abc"})),
        [("/s".to_owned(), "maxLength")]
    );
    assert_eq!(
        paths(&schema, &json!({"n": 1, "a/b": true})),
        [("/a~1b".to_owned(), "not")]
    );
    assert_eq!(
        paths(&schema, &json!({"n": 1, "extra": 5})),
        [("/extra".to_owned(), "type")]
    );
    assert_eq!(
        paths(&schema, &json!({"list": [1]})),
        [(String::new(), "anyOf")]
    );
    assert!(is_valid(&json!(true), &json!({"anything": 1})));
    assert_eq!(paths(&json!(false), &json!(1)), [(String::new(), "false")]);
}

#[test]
fn string_lengths_count_characters_not_bytes() {
    let schema = json!({"type": "string", "minLength": 2, "maxLength": 2});
    assert!(!is_valid(&schema, &json!("ação")));
    assert!(is_valid(&schema, &json!("çã")));
    assert!(is_valid(&schema, &json!("😀😀")));
}
