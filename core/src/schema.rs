//! A small JSON Schema validator for the response schemas the core builds
//! (SPEC §7): `type`, `enum`, `const`, `properties`, `required`,
//! `additionalProperties`, `items`, `oneOf`, `anyOf`, `allOf`, `not`,
//! `minLength`/`maxLength`, `minItems`/`maxItems`, `minimum`/`maximum`.
//! Other keywords are ignored, as JSON Schema ignores unknown keywords.
//!
//! Why not a general crate: the `jsonschema` crate seeds its hash maps from
//! the operating system's randomness, which on `wasm32-unknown-unknown`
//! means importing JavaScript (`getrandom` → `wasm-bindgen`), and the core
//! must build for wasm without host imports. Every schema this validator
//! sees was produced by [`crate::mapper::build_interrupt`], so the subset is
//! closed and tested against each of them.

use serde_json::{Map, Value};

/// One failure: where in the instance (a JSON Pointer) and which keyword.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaError {
    /// JSON Pointer to the failing value (`""` is the whole instance).
    pub instance_path: String,
    /// The keyword that refused it.
    pub keyword: &'static str,
}

/// Every failure of `instance` against `schema`, in schema order; empty
/// when the instance is valid. Error texts never contain instance values.
pub fn validate(schema: &Value, instance: &Value) -> Vec<SchemaError> {
    let mut errors = Vec::new();
    check(schema, instance, "", &mut errors);
    errors
}

/// True when `instance` is valid against `schema`.
pub fn is_valid(schema: &Value, instance: &Value) -> bool {
    validate(schema, instance).is_empty()
}

fn check(schema: &Value, instance: &Value, path: &str, errors: &mut Vec<SchemaError>) {
    let schema = match schema {
        Value::Bool(true) => return,
        Value::Bool(false) => return fail(errors, path, "false"),
        Value::Object(s) => s,
        // A schema that is neither an object nor a boolean accepts nothing.
        _ => return fail(errors, path, "schema"),
    };
    if let Some(ty) = schema.get("type") {
        if !type_matches(ty, instance) {
            fail(errors, path, "type");
        }
    }
    if let Some(Value::Array(allowed)) = schema.get("enum") {
        if !allowed.iter().any(|a| json_eq(a, instance)) {
            fail(errors, path, "enum");
        }
    }
    if let Some(constant) = schema.get("const") {
        if !json_eq(constant, instance) {
            fail(errors, path, "const");
        }
    }
    match instance {
        Value::Object(object) => check_object(schema, object, path, errors),
        Value::Array(items) => check_array(schema, items, path, errors),
        Value::String(s) => {
            let len = s.chars().count() as u64;
            if bound(schema, "minLength").is_some_and(|min| len < min) {
                fail(errors, path, "minLength");
            }
            if bound(schema, "maxLength").is_some_and(|max| len > max) {
                fail(errors, path, "maxLength");
            }
        }
        Value::Number(n) => {
            let n = n.as_f64().unwrap_or(f64::NAN);
            if schema
                .get("minimum")
                .and_then(Value::as_f64)
                .is_some_and(|m| n < m)
            {
                fail(errors, path, "minimum");
            }
            if schema
                .get("maximum")
                .and_then(Value::as_f64)
                .is_some_and(|m| n > m)
            {
                fail(errors, path, "maximum");
            }
        }
        _ => {}
    }
    check_combinators(schema, instance, path, errors);
}

fn check_object(
    schema: &Map<String, Value>,
    object: &Map<String, Value>,
    path: &str,
    errors: &mut Vec<SchemaError>,
) {
    if let Some(Value::Array(required)) = schema.get("required") {
        if required
            .iter()
            .filter_map(Value::as_str)
            .any(|k| !object.contains_key(k))
        {
            fail(errors, path, "required");
        }
    }
    let properties = schema.get("properties").and_then(Value::as_object);
    for (key, value) in object {
        let child = format!("{path}/{}", escape_pointer(key));
        match properties.and_then(|p| p.get(key)) {
            Some(sub) => check(sub, value, &child, errors),
            None => match schema.get("additionalProperties") {
                Some(Value::Bool(false)) => fail(errors, path, "additionalProperties"),
                Some(sub @ Value::Object(_)) => check(sub, value, &child, errors),
                _ => {}
            },
        }
    }
}

fn check_array(
    schema: &Map<String, Value>,
    items: &[Value],
    path: &str,
    errors: &mut Vec<SchemaError>,
) {
    let len = items.len() as u64;
    if bound(schema, "minItems").is_some_and(|min| len < min) {
        fail(errors, path, "minItems");
    }
    if bound(schema, "maxItems").is_some_and(|max| len > max) {
        fail(errors, path, "maxItems");
    }
    if let Some(sub) = schema.get("items") {
        for (i, item) in items.iter().enumerate() {
            check(sub, item, &format!("{path}/{i}"), errors);
        }
    }
}

fn check_combinators(
    schema: &Map<String, Value>,
    instance: &Value,
    path: &str,
    errors: &mut Vec<SchemaError>,
) {
    let branches = |key: &str| {
        schema
            .get(key)
            .and_then(Value::as_array)
            .map(|b| b.iter().filter(|s| is_valid_at(s, instance)).count())
    };
    if branches("oneOf").is_some_and(|valid| valid != 1) {
        fail(errors, path, "oneOf");
    }
    if branches("anyOf") == Some(0) {
        fail(errors, path, "anyOf");
    }
    if let Some(Value::Array(all)) = schema.get("allOf") {
        for sub in all {
            check(sub, instance, path, errors);
        }
    }
    if schema
        .get("not")
        .is_some_and(|sub| is_valid_at(sub, instance))
    {
        fail(errors, path, "not");
    }
}

fn is_valid_at(schema: &Value, instance: &Value) -> bool {
    let mut errors = Vec::new();
    check(schema, instance, "", &mut errors);
    errors.is_empty()
}

fn type_matches(ty: &Value, instance: &Value) -> bool {
    let one = |name: &str| match name {
        "object" => instance.is_object(),
        "array" => instance.is_array(),
        "string" => instance.is_string(),
        "boolean" => instance.is_boolean(),
        "null" => instance.is_null(),
        "number" => instance.is_number(),
        "integer" => instance
            .as_f64()
            .is_some_and(|f| f.fract() == 0.0 && f.is_finite()),
        _ => false,
    };
    match ty {
        Value::String(name) => one(name),
        Value::Array(names) => names.iter().filter_map(Value::as_str).any(one),
        _ => false,
    }
}

/// JSON equality where numbers compare by value (`1` equals `1.0`).
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_eq(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

fn bound(schema: &Map<String, Value>, key: &str) -> Option<u64> {
    schema.get(key).and_then(Value::as_u64)
}

fn escape_pointer(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn fail(errors: &mut Vec<SchemaError>, path: &str, keyword: &'static str) {
    errors.push(SchemaError {
        instance_path: path.to_owned(),
        keyword,
    });
}
