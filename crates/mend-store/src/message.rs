//! Messages going in and coming out.
//!
//! Invariant: the JSON text of a message is decided once, when the [`NewMessage`] is
//! made, and from then on only copied: the database holds it verbatim and
//! [`StoredMessage::raw`] is the same bytes. The store reads nothing out of it but the
//! `role` (or `type`) and `id` columns.

use serde_json::Value;

use crate::Error;

/// A message to append: a JSON object with a `role` (or, for a Responses item such as
/// `function_call` or `reasoning`, a `type`), kept as exact JSON text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewMessage {
    json: String,
    role: String,
    id: Option<String>,
}

impl NewMessage {
    /// From a parsed message. The text kept is its compact serialization (key order as
    /// in the value, which `preserve_order` keeps as parsed).
    pub fn from_value(message: &Value) -> Result<NewMessage, Error> {
        let (role, id) =
            head(message).map_err(|reason| Error::InvalidMessage { index: 0, reason })?;
        let json = serde_json::to_string(message).map_err(|e| Error::InvalidMessage {
            index: 0,
            reason: e.to_string(),
        })?;
        Ok(NewMessage { json, role, id })
    }

    /// From JSON text, kept verbatim: white space, key order and escapes come back
    /// exactly as given.
    pub fn from_json(text: impl Into<String>) -> Result<NewMessage, Error> {
        let json = text.into();
        let value: Value = serde_json::from_str(&json).map_err(|e| Error::InvalidMessage {
            index: 0,
            reason: format!("not JSON: {e}"),
        })?;
        let (role, id) =
            head(&value).map_err(|reason| Error::InvalidMessage { index: 0, reason })?;
        Ok(NewMessage { json, role, id })
    }

    /// From a canonical message, in its JSON form (its `id`, when set, is the stored id).
    pub fn from_canonical(message: &mend::canonical::Message) -> Result<NewMessage, Error> {
        let value = serde_json::to_value(message).map_err(|e| Error::InvalidMessage {
            index: 0,
            reason: e.to_string(),
        })?;
        NewMessage::from_value(&value)
    }

    /// Many messages from values, errors naming the index.
    pub fn from_values<'a>(
        messages: impl IntoIterator<Item = &'a Value>,
    ) -> Result<Vec<NewMessage>, Error> {
        messages
            .into_iter()
            .enumerate()
            .map(|(i, m)| NewMessage::from_value(m).map_err(|e| at_index(e, i)))
            .collect()
    }

    /// The JSON text that will be stored.
    pub fn json(&self) -> &str {
        &self.json
    }

    /// Its role, or the item type of a role-less item.
    pub fn role(&self) -> &str {
        &self.role
    }

    /// Its own `id`, when it carries one; the store makes one up otherwise.
    pub fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }
}

/// Re-index a message error for its place in a batch.
pub(crate) fn at_index(e: Error, index: usize) -> Error {
    match e {
        Error::InvalidMessage { reason, .. } => Error::InvalidMessage { index, reason },
        other => other,
    }
}

fn head(message: &Value) -> Result<(String, Option<String>), String> {
    let Some(obj) = message.as_object() else {
        return Err(format!(
            "a message is a JSON object, not {}",
            mend::json_kind(message)
        ));
    };
    let role = match (obj.get("role"), obj.get("type")) {
        (Some(Value::String(r)), _) if !r.is_empty() => r.clone(),
        (Some(other), _) if !other.is_null() => {
            return Err(format!(
                "`role` is {}, not a string",
                mend::json_kind(other)
            ))
        }
        (_, Some(Value::String(t))) if !t.is_empty() => t.clone(),
        _ => return Err("a message needs a `role` (or, for a Responses item, a `type`)".into()),
    };
    let id = match obj.get("id") {
        Some(Value::String(id)) if !id.is_empty() => Some(id.clone()),
        _ => None,
    };
    Ok((role, id))
}

/// A message as loaded: its place, its ids, and its text exactly as appended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredMessage {
    /// Its sequence number in the conversation (from 1, without gaps).
    pub seq: u64,
    /// A stable id: the message's own `id` when it had one, else one the store made
    /// when it was appended. Forks keep it.
    pub id: String,
    /// Its role, or the item type of a role-less item.
    pub role: String,
    /// The JSON text, byte for byte as appended.
    pub raw: String,
    /// Unix time of the append, in milliseconds.
    pub appended_at_ms: i64,
}

impl StoredMessage {
    /// The message parsed (key order kept).
    pub fn value(&self) -> Result<Value, serde_json::Error> {
        serde_json::from_str(&self.raw)
    }

    /// The message as a canonical message (of a conversation in
    /// [`Format::Canonical`](crate::Format)), with the stored id when it had none.
    pub fn canonical(&self) -> Result<mend::canonical::Message, serde_json::Error> {
        let mut m: mend::canonical::Message = serde_json::from_str(&self.raw)?;
        if m.id.is_none() {
            m.id = Some(self.id.clone());
        }
        Ok(m)
    }
}

/// The messages of a load, parsed.
pub fn values(messages: &[StoredMessage]) -> Result<Vec<Value>, serde_json::Error> {
    messages.iter().map(StoredMessage::value).collect()
}

/// Make an append's rows: the id each message is stored under.
pub(crate) fn ids_for(messages: &[NewMessage]) -> Vec<String> {
    messages
        .iter()
        .map(|m| m.id().map_or_else(crate::fresh_id, str::to_string))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_is_kept_verbatim_and_role_or_type_is_read() {
        let m = NewMessage::from_json("{ \"type\": \"reasoning\",\"id\":\"rs_1\" }").unwrap();
        assert_eq!(m.json(), "{ \"type\": \"reasoning\",\"id\":\"rs_1\" }");
        assert_eq!((m.role(), m.id()), ("reasoning", Some("rs_1")));
        let m = NewMessage::from_value(&json!({"role": "user", "content": "é"})).unwrap();
        assert_eq!(m.json(), r#"{"role":"user","content":"é"}"#);
        assert_eq!(m.id(), None);
    }

    #[test]
    fn what_is_not_a_message_is_refused_with_its_index() {
        for bad in [json!([1]), json!({"content": "x"}), json!({"role": 3})] {
            assert!(NewMessage::from_value(&bad).is_err(), "{bad}");
        }
        let err = NewMessage::from_values(&[json!({"role": "user"}), json!("x")]).unwrap_err();
        assert!(
            matches!(err, Error::InvalidMessage { index: 1, .. }),
            "{err}"
        );
        assert!(NewMessage::from_json("{\"role\":\"user\"} trailing").is_err());
    }
}
