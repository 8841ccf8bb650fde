//! The `metadata` of a status update, read without JSON maps for what every
//! update carries.
//!
//! The runtime sends `{"iac_code":{"iacCodeSessionId":"…"}}` on each status
//! update, text deltas included. Read as a `serde_json::Value`, that is two
//! maps and three strings per frame, built, looked up and freed again:
//! about a twentieth of the server's instructions per relayed event
//! (BENCHMARKS.md). [`StatusMetadata`] keeps the session id apart, so the
//! maps hold only the other members, and an empty map allocates nothing.
//! What it reads and writes is the same JSON as the `Value` it replaces.

use std::fmt;
use std::marker::PhantomData;

use serde::de::value::SeqAccessDeserializer;
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value};

/// The member of `metadata` that holds the iac-code extension.
const IAC_CODE: &str = "iac_code";
/// The member of `metadata.iac_code` that names the iac-code session.
const SESSION_ID: &str = "iacCodeSessionId";

/// A status update's `metadata`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StatusMetadata {
    /// `iac_code.iacCodeSessionId`, whatever its JSON type; only with
    /// `iac_code`.
    session_id: Option<Value>,
    /// The other members of `iac_code`, when `iac_code` is an object.
    iac_code: Option<Map<String, Value>>,
    /// The other members of `metadata`, `iac_code` among them when it is not
    /// an object.
    other: Map<String, Value>,
    /// The whole `metadata` when it is not an object (kept as it came).
    odd: Option<Value>,
}

impl StatusMetadata {
    /// `metadata.iac_code`, when it is an object.
    pub fn iac_code(&self) -> Option<IacCode<'_>> {
        self.iac_code.as_ref().map(|rest| IacCode {
            session_id: self.session_id.as_ref(),
            rest,
        })
    }

    /// `{"iac_code":{"iacCodeSessionId":session_id}}`.
    pub(super) fn of_session_id(session_id: String) -> Self {
        StatusMetadata {
            session_id: Some(Value::String(session_id)),
            iac_code: Some(Map::new()),
            ..StatusMetadata::default()
        }
    }

    /// Takes `iac_code.iacCodeSessionId` out when it is a non-empty string.
    pub(crate) fn take_session_id(&mut self) -> Option<String> {
        match self.session_id.take() {
            Some(Value::String(id)) if !id.is_empty() => Some(id),
            other => {
                self.session_id = other;
                None
            }
        }
    }

    /// The top-level values inside, for a caller that rewrites values in
    /// place (the scripted runtime writes numbers as doubles).
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut Value> {
        self.session_id
            .iter_mut()
            .chain(self.iac_code.iter_mut().flat_map(Map::values_mut))
            .chain(self.other.values_mut())
            .chain(self.odd.iter_mut())
    }

    /// The same JSON as a value.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

impl From<Value> for StatusMetadata {
    fn from(value: Value) -> Self {
        let Value::Object(mut other) = value else {
            return StatusMetadata {
                odd: Some(value),
                ..StatusMetadata::default()
            };
        };
        let mut metadata = StatusMetadata::default();
        match other.remove(IAC_CODE) {
            Some(Value::Object(mut iac_code)) => {
                metadata.session_id = iac_code.remove(SESSION_ID);
                metadata.iac_code = Some(iac_code);
            }
            Some(odd) => {
                other.insert(IAC_CODE.to_owned(), odd);
            }
            None => {}
        }
        metadata.other = other;
        metadata
    }
}

/// `metadata.iac_code` of any frame: the members of the object, wherever
/// they are kept.
#[derive(Debug, Clone, Copy)]
pub struct IacCode<'a> {
    session_id: Option<&'a Value>,
    rest: &'a Map<String, Value>,
}

impl<'a> IacCode<'a> {
    /// The object of a `metadata` JSON value's `iac_code`.
    pub fn of_value(metadata: Option<&'a Value>) -> Option<Self> {
        metadata?.get(IAC_CODE)?.as_object().map(IacCode::of_map)
    }

    /// The members of `object`.
    pub fn of_map(object: &'a Map<String, Value>) -> Self {
        IacCode {
            session_id: None,
            rest: object,
        }
    }

    /// The member `key`.
    pub fn get(&self, key: &str) -> Option<&'a Value> {
        match self.session_id {
            Some(session_id) if key == SESSION_ID => Some(session_id),
            _ => self.rest.get(key),
        }
    }
}

impl Serialize for StatusMetadata {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if let Some(odd) = &self.odd {
            return odd.serialize(serializer);
        }
        let iac_code = self.iac_code();
        serialize_merged(
            serializer,
            &self.other,
            iac_code.as_ref().map(|o| (IAC_CODE, o)),
        )
    }
}

/// `iac_code` as an object, the session id in its place among the rest.
impl Serialize for IacCode<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serialize_merged(
            serializer,
            self.rest,
            self.session_id.map(|v| (SESSION_ID, v)),
        )
    }
}

/// Writes `members` and `extra` as one object, in key order, as a `Value`
/// object writes them.
fn serialize_merged<S: Serializer, T: Serialize>(
    serializer: S,
    members: &Map<String, Value>,
    extra: Option<(&str, &T)>,
) -> Result<S::Ok, S::Error> {
    let mut map = serializer.serialize_map(Some(members.len() + usize::from(extra.is_some())))?;
    let mut pending = extra;
    for (key, value) in members {
        if let Some((name, extra_value)) = pending.filter(|(name, _)| key.as_str() > *name) {
            map.serialize_entry(name, extra_value)?;
            pending = None;
        }
        map.serialize_entry(key, value)?;
    }
    if let Some((name, extra_value)) = pending {
        map.serialize_entry(name, extra_value)?;
    }
    map.end()
}

impl<'de> Deserialize<'de> for StatusMetadata {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ObjectOrValue(PhantomData))
    }
}

impl FromObject for StatusMetadata {
    fn from_object<'de, A: MapAccess<'de>>(mut access: A) -> Result<Self, A::Error> {
        let mut metadata = StatusMetadata::default();
        while let Some(key) = access.next_key::<Key>()? {
            if key != Key::IacCode {
                metadata.other.insert(key.into(), access.next_value()?);
                continue;
            }
            // A repeated member replaces the earlier one, as in a `Value`.
            metadata.other.remove(IAC_CODE);
            (metadata.session_id, metadata.iac_code) = (None, None);
            match access.next_value::<IacCodeRead>()? {
                IacCodeRead::Object { session_id, rest } => {
                    (metadata.session_id, metadata.iac_code) = (session_id, Some(rest));
                }
                IacCodeRead::Other(value) => {
                    metadata.other.insert(key.into(), value);
                }
            }
        }
        Ok(metadata)
    }

    fn from_value(value: Value) -> Self {
        StatusMetadata::from(value)
    }
}

/// `metadata.iac_code` as read: an object with its session id apart, or
/// any other value.
enum IacCodeRead {
    Object {
        session_id: Option<Value>,
        rest: Map<String, Value>,
    },
    Other(Value),
}

impl<'de> Deserialize<'de> for IacCodeRead {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ObjectOrValue(PhantomData))
    }
}

impl FromObject for IacCodeRead {
    fn from_object<'de, A: MapAccess<'de>>(mut access: A) -> Result<Self, A::Error> {
        let (mut session_id, mut rest) = (None, Map::new());
        while let Some(key) = access.next_key::<Key>()? {
            let value: Value = access.next_value()?;
            if key == Key::SessionId {
                session_id = Some(value);
            } else {
                rest.insert(key.into(), value);
            }
        }
        Ok(IacCodeRead::Object { session_id, rest })
    }

    fn from_value(value: Value) -> Self {
        IacCodeRead::Other(value)
    }
}

/// A member name: the two read apart need no copy.
#[derive(PartialEq)]
enum Key {
    IacCode,
    SessionId,
    Other(String),
}

impl From<Key> for String {
    fn from(key: Key) -> String {
        match key {
            Key::IacCode => IAC_CODE.to_owned(),
            Key::SessionId => SESSION_ID.to_owned(),
            Key::Other(name) => name,
        }
    }
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_str(KeyVisitor)
    }
}

struct KeyVisitor;

impl Visitor<'_> for KeyVisitor {
    type Value = Key;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a member name")
    }

    fn visit_str<E>(self, name: &str) -> Result<Key, E> {
        Ok(match name {
            IAC_CODE => Key::IacCode,
            SESSION_ID => Key::SessionId,
            _ => Key::Other(name.to_owned()),
        })
    }
}

/// A type read from a JSON object member by member, or else from any other
/// JSON value whole.
trait FromObject: Sized {
    fn from_object<'de, A: MapAccess<'de>>(access: A) -> Result<Self, A::Error>;
    fn from_value(value: Value) -> Self;
}

struct ObjectOrValue<T>(PhantomData<T>);

impl<'de, T: FromObject> Visitor<'de> for ObjectOrValue<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, access: A) -> Result<T, A::Error> {
        T::from_object(access)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<T, A::Error> {
        Value::deserialize(SeqAccessDeserializer::new(seq)).map(T::from_value)
    }

    fn visit_bool<E>(self, v: bool) -> Result<T, E> {
        Ok(T::from_value(Value::from(v)))
    }

    fn visit_i64<E>(self, v: i64) -> Result<T, E> {
        Ok(T::from_value(Value::from(v)))
    }

    fn visit_u64<E>(self, v: u64) -> Result<T, E> {
        Ok(T::from_value(Value::from(v)))
    }

    fn visit_f64<E>(self, v: f64) -> Result<T, E> {
        Ok(T::from_value(Value::from(v)))
    }

    fn visit_str<E>(self, v: &str) -> Result<T, E> {
        Ok(T::from_value(Value::from(v)))
    }

    fn visit_unit<E>(self) -> Result<T, E> {
        Ok(T::from_value(Value::Null))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Shapes around the fast path: keys sorting before and after the two
    /// kept apart, odd `iac_code` and `metadata` values, repeated members.
    const CASES: &[&str] = &[
        r#"{"iac_code":{"iacCodeSessionId":"s-1"}}"#,
        r#"{"a":1,"iac_code":{"assistantFinal":{"complete":true},"iacCodeSessionId":"s-1","usage":{"inputTokens":3.0}},"z":[1,2]}"#,
        r#"{"iac_code":{"usage":{"inputTokens":3}}}"#,
        r#"{"iac_code":{"iacCodeSessionId":7}}"#,
        r#"{"iac_code":"not an object","other":{}}"#,
        r#"{"iac_code":null}"#,
        r#"{"iac_code":{"iacCodeSessionId":"s-1"},"iac_code":{"tool":{}}}"#,
        r#"{"iac_code":{"iacCodeSessionId":"s-1"},"iac_code":[1]}"#,
        r#"{"iac_code":[1],"iac_code":{"iacCodeSessionId":"s-1"}}"#,
        r#"{"iac_code":{"iacCodeSessionId":"s-1","iacCodeSessionId":"s-2"}}"#,
        r#"{"b":true}"#,
        r#"{}"#,
        r#""text""#,
        r#"[{"iac_code":{}}]"#,
        r#"-1.5"#,
        r#"false"#,
        r#"null"#,
    ];

    #[test]
    fn reads_and_writes_the_same_json_as_a_value() {
        for text in CASES {
            let value: Value = serde_json::from_str(text).unwrap();
            let read: StatusMetadata = serde_json::from_str(text).unwrap();
            assert_eq!(
                serde_json::to_string(&read).unwrap(),
                serde_json::to_string(&value).unwrap(),
                "{text}"
            );
            assert_eq!(read.to_value(), value, "{text}");
            assert_eq!(StatusMetadata::from(value.clone()), read, "{text}");
            let from_value: StatusMetadata = serde_json::from_value(value.clone()).unwrap();
            assert_eq!(from_value, read, "{text}");
        }
    }

    #[test]
    fn iac_code_members_read_as_in_the_value() {
        for text in CASES {
            let value: Value = serde_json::from_str(text).unwrap();
            let read: StatusMetadata = serde_json::from_str(text).unwrap();
            let object = value.get("iac_code").and_then(Value::as_object);
            assert_eq!(read.iac_code().is_some(), object.is_some(), "{text}");
            let (Some(iac), Some(object)) = (read.iac_code(), object) else {
                continue;
            };
            for (key, member) in object {
                assert_eq!(iac.get(key), Some(member), "{text}: {key}");
            }
            assert_eq!(iac.get("absent"), None);
            if !object.contains_key(SESSION_ID) {
                assert_eq!(iac.get(SESSION_ID), None, "{text}");
            }
        }
    }

    #[test]
    fn the_usual_update_keeps_no_map() {
        let read: StatusMetadata =
            serde_json::from_str(r#"{"iac_code":{"iacCodeSessionId":"s-1"}}"#).unwrap();
        assert!(read.other.is_empty() && read.iac_code.as_ref().is_some_and(Map::is_empty));
        assert_eq!(read.session_id, Some(Value::from("s-1")));
    }

    #[test]
    fn values_mut_reaches_every_member() {
        let text = CASES[1];
        let mut read: StatusMetadata = serde_json::from_str(text).unwrap();
        read.values_mut().for_each(|v| *v = Value::Null);
        assert_eq!(
            read.to_value(),
            serde_json::json!({"a": null, "iac_code": {"assistantFinal": null,
                "iacCodeSessionId": null, "usage": null}, "z": null})
        );
    }
}
