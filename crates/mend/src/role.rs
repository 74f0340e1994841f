//! Who speaks: the one role vocabulary of the engine, the chain and the canonical model.
//!
//! The canonical model owns the name of a role it does not know (`Role<String>`, the
//! default); the chain borrows it from the body (`Role<&str>`, `Copy`, no allocation). In
//! the chain, [`Role::System`] stands for every instruction role (`system` and `developer`:
//! the rules treat them alike) and the turn keeps the name as written on the wire.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Who speaks in a message or turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role<S = String> {
    /// System instructions.
    System,
    /// Developer instructions (OpenAI's name for system instructions to reasoning models).
    Developer,
    /// The human side (and, in Anthropic and Gemini, the turn that carries tool results).
    User,
    /// The model.
    Assistant,
    /// A dedicated tool-result message (OpenAI chat `tool`, a Responses `*_output` item).
    Tool,
    /// Any other wire role or item kind, as written (never one of the names above).
    Other(S),
}

impl<S: AsRef<str>> Role<S> {
    /// The name in the JSON form (for [`Role::Other`], the name as written).
    pub fn as_str(&self) -> &str {
        match self {
            Role::System => "system",
            Role::Developer => "developer",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
            Role::Other(s) => s.as_ref(),
        }
    }
}

impl Role {
    /// The role of a JSON name; an unknown name is kept as [`Role::Other`].
    pub fn from_name(s: &str) -> Role {
        match s {
            "system" => Role::System,
            "developer" => Role::Developer,
            "user" => Role::User,
            "assistant" => Role::Assistant,
            "tool" => Role::Tool,
            other => Role::Other(other.to_string()),
        }
    }
}

impl<S: AsRef<str>> fmt::Display for Role<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Role {
    fn serialize<Se: Serializer>(&self, s: Se) -> Result<Se::Ok, Se::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Role {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Ok(Role::from_name(&s))
    }
}

#[cfg(test)]
mod tests {
    use super::Role;

    #[test]
    fn names_round_trip_and_unknown_names_are_kept() {
        for name in ["system", "developer", "user", "assistant", "tool", "critic"] {
            assert_eq!(Role::from_name(name).as_str(), name);
            let json = serde_json::to_string(&Role::from_name(name)).expect("serializes");
            assert_eq!(json, format!("\"{name}\""));
        }
        assert_eq!(Role::<&str>::Other("critic").as_str(), "critic");
    }
}
