//! Required inputs and the AG-UI interrupts built from them (SPEC §7).

use std::collections::BTreeSet;

use serde_json::{json, Value};

use super::{RequiredInput, RunContext};
use crate::a2a::IacCode;
use crate::agui::Interrupt;
use crate::catalog;
use crate::error::MessageKey;
use crate::i18n::Language;
use crate::ids::IdGen;

/// The public fields of an input projection (SPEC §11: what the thread
/// document may keep; anything else, secrets included, is dropped), as an
/// object; anything but an object gives an empty object.
pub fn public_projection(projection: &Value) -> Value {
    Value::Object(crate::document::public_projection(projection))
}

/// Options normalised to `[{id, title}]`: id from `id`, else
/// `candidate_index`, else the position; title from `label`, `name`,
/// `title`, else the id; repeated ids get `-2`, `-3`… suffixes.
pub fn standard_options(options: &Value) -> Vec<Value> {
    let Some(options) = options.as_array() else {
        return Vec::new();
    };
    let mut used = BTreeSet::new();
    let mut out = Vec::new();
    for (index, option) in options.iter().enumerate() {
        let (raw_id, title) = match option {
            Value::Object(o) => {
                let id = o
                    .get("id")
                    .and_then(scalar_text)
                    .or_else(|| o.get("candidate_index").and_then(scalar_text))
                    .unwrap_or_else(|| index.to_string());
                let title = ["label", "name", "title"]
                    .iter()
                    .find_map(|k| o.get(*k).and_then(scalar_text).filter(|s| !s.is_empty()));
                (id, title)
            }
            other => (
                scalar_text(other).unwrap_or_else(|| index.to_string()),
                None,
            ),
        };
        let base = if raw_id.is_empty() {
            format!("option-{}", index + 1)
        } else {
            raw_id
        };
        let mut id = base.clone();
        let mut suffix = 2;
        while used.contains(&id) {
            id = format!("{base}-{suffix}");
            suffix += 1;
        }
        used.insert(id.clone());
        let title = title.unwrap_or_else(|| base.clone());
        out.push(json!({"id": id, "title": title}));
    }
    out
}

/// The AG-UI interrupt of a (public) input projection, expiring at
/// `expires_at` (ISO-8601 UTC), default texts in `language`.
pub fn build_interrupt(projection: &Value, expires_at: &str, language: Language) -> Interrupt {
    let object = projection.as_object().cloned().unwrap_or_default();
    let text = |key: &str| {
        object
            .get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    let options = standard_options(object.get("options").unwrap_or(&Value::Null));
    let (reason, message, schema) = if text("kind").as_deref() == Some("permission") {
        let message = text("prompt")
            .or_else(|| text("title"))
            .unwrap_or_else(|| catalog::text(MessageKey::PermissionRequired, language).to_owned());
        ("tool_call", message, permission_schema())
    } else {
        let prompt = text("prompt")
            .unwrap_or_else(|| catalog::text(MessageKey::InputRequired, language).to_owned());
        let free_text =
            object.get("allowFreeText") == Some(&Value::Bool(true)) || options.is_empty();
        (
            "input_required",
            selection_message(&prompt, &options),
            selection_schema(&options, free_text),
        )
    };
    let mut metadata = object.clone();
    metadata.insert("schemaVersion".to_owned(), Value::from(1));
    metadata.insert("standardOptions".to_owned(), Value::Array(options));
    Interrupt {
        id: text("inputId").unwrap_or_default(),
        reason: reason.to_owned(),
        message: Some(message),
        tool_call_id: text("toolUseId"),
        response_schema: Some(schema),
        expires_at: Some(expires_at.to_owned()),
        metadata: Some(Value::Object(metadata)),
    }
}

/// `ms` since the Unix epoch as ISO-8601 UTC with milliseconds
/// (`2026-01-01T00:00:00.000Z`); clients compare it with their own clock.
pub fn iso_utc(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    let rem = ms.rem_euclid(86_400_000);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1000 % 60,
        rem % 1000
    )
}

/// The required inputs of one frame's `metadata.iac_code`: `input` then
/// `pendingPermissions[]`, `required: true` only, deduplicated by input id,
/// already-applied ones dropped.
pub(super) fn collect_inputs(
    iac_code: IacCode<'_>,
    ctx: &RunContext,
    now_ms: i64,
    ids: &mut IdGen,
) -> Vec<RequiredInput> {
    let mut candidates: Vec<(&Value, bool)> = Vec::new();
    if let Some(direct) = iac_code.get("input") {
        let sideband = direct.get("scope").and_then(Value::as_str) == Some("candidate")
            || direct.get("subPipelineId").is_some_and(Value::is_string);
        candidates.push((direct, sideband));
    }
    if let Some(Value::Array(pending)) = iac_code.get("pendingPermissions") {
        candidates.extend(pending.iter().map(|p| (p, true)));
    }
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for (candidate, sideband) in candidates {
        if candidate.get("required") != Some(&Value::Bool(true)) {
            continue;
        }
        let given_id = candidate
            .get("inputId")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty());
        let key = given_id
            .map(str::to_owned)
            .unwrap_or_else(|| crate::json::canonical_json(candidate));
        if !seen.insert(key) {
            continue;
        }
        if given_id.is_some_and(|id| ctx.applied_input_ids.contains(id)) {
            continue;
        }
        let mut projection = public_projection(candidate);
        let input_id = match given_id {
            Some(id) => id.to_owned(),
            None => format!("input-{}", ids.uuid_hex()),
        };
        if let Value::Object(o) = &mut projection {
            o.insert("inputId".to_owned(), Value::String(input_id.clone()));
        }
        let expires_at = candidate
            .get("expiresAt")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .unwrap_or_else(|| iso_utc(now_ms.saturating_add(ctx.interrupt_ttl_ms.max(1000))));
        let interrupt = build_interrupt(&projection, &expires_at, ctx.language);
        let field = |key: &str| {
            candidate
                .get(key)
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        out.push(RequiredInput {
            input_id,
            request_task_id: field("requestTaskId"),
            context_id: field("contextId"),
            projection,
            sideband,
            expires_at,
            interrupt,
        });
    }
    out
}

/// The permission answer schema: `{decision: allow_once | deny}`, closed.
fn permission_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"decision": {"type": "string", "enum": ["allow_once", "deny"]}},
        "required": ["decision"],
        "additionalProperties": false
    })
}

/// One closed branch per option (`selectedId` const), plus a free-text
/// branch when allowed.
fn selection_schema(options: &[Value], free_text: bool) -> Value {
    let mut branches: Vec<Value> = options
        .iter()
        .map(|o| {
            json!({
                "type": "object",
                "properties": {"selectedId": {"type": "string", "const": o["id"], "title": o["title"]}},
                "required": ["selectedId"],
                "additionalProperties": false
            })
        })
        .collect();
    if free_text {
        branches.push(json!({
            "type": "object",
            "properties": {"freeText": {"type": "string", "minLength": 1}},
            "required": ["freeText"],
            "additionalProperties": false
        }));
    }
    json!({ "oneOf": branches })
}

/// The prompt followed by one `- <id>: <title>` line per option.
fn selection_message(prompt: &str, options: &[Value]) -> String {
    let mut message = prompt.to_owned();
    for option in options {
        let id = option["id"].as_str().unwrap_or_default();
        let title = option["title"].as_str().unwrap_or_default();
        message.push_str(&format!("\n- {id}: {title}"));
    }
    message
}

/// A scalar as text: strings as is, integral numbers without a fraction,
/// other numbers and booleans as JSON; null, arrays and objects give `None`.
fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(_) => Some(match crate::json::lenient_i64(value) {
            Some(i) => i.to_string(),
            None => value.to_string(),
        }),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// (year, month, day) of a day count since 1970-01-01 (Howard Hinnant's
/// `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_utc_formats_known_instants() {
        assert_eq!(iso_utc(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso_utc(1_767_225_600_000), "2026-01-01T00:00:00.000Z");
        assert_eq!(iso_utc(951_782_400_123), "2000-02-29T00:00:00.123Z");
        assert_eq!(iso_utc(1_767_225_599_999), "2025-12-31T23:59:59.999Z");
    }

    #[test]
    fn options_get_ids_titles_and_suffixes() {
        let options = json!([
            {"id": "a", "label": "A"},
            {"id": "a", "name": "Another"},
            {"candidate_index": 2.0},
            {"label": "No id"},
            "plain",
            {"id": "", "title": "Empty"},
            {"id": "a"}
        ]);
        let got = standard_options(&options);
        assert_eq!(
            got,
            vec![
                json!({"id": "a", "title": "A"}),
                json!({"id": "a-2", "title": "Another"}),
                json!({"id": "2", "title": "2"}),
                json!({"id": "3", "title": "No id"}),
                json!({"id": "plain", "title": "plain"}),
                json!({"id": "option-6", "title": "Empty"}),
                json!({"id": "a-3", "title": "a"}),
            ]
        );
    }
}
