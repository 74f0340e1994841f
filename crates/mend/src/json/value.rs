//! A `serde_json::Value` built from a tape: for a body the check found errors in, repair
//! needs the tree, and the tape already holds every span, length and unescaped size, so
//! building from it skips what `serde_json::from_slice` would do again (validating,
//! scanning strings, growing maps and strings as they fill).

use serde_json::{Map, Number, Value};

use super::{Kind, Node};

impl Node<'_> {
    /// The value as a tree, equal to what `serde_json::from_slice` makes of its bytes;
    /// `None` for a number `serde_json` would refuse (out of `f64`'s range), so that the
    /// caller hands the bytes to `serde_json` for its error.
    pub fn to_value(&self) -> Option<Value> {
        Some(match self.kind() {
            Kind::Null => Value::Null,
            Kind::Bool => Value::Bool(self.as_bool()?),
            Kind::Number => Value::Number(self.number_text()?.parse::<Number>().ok()?),
            Kind::String => Value::String(self.to_str()?.into_owned()),
            Kind::Array => {
                let mut items = Vec::with_capacity(self.len());
                for item in self.items() {
                    items.push(item.to_value()?);
                }
                Value::Array(items)
            }
            Kind::Object => {
                let mut map = Map::with_capacity(self.len());
                for (key, value) in self.members() {
                    map.insert(key.to_string(), value.to_value()?);
                }
                Value::Object(map)
            }
        })
    }
}
