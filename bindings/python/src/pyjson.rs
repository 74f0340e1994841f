//! Python objects <-> `serde_json::Value`, walked directly (no JSON text in between).
//!
//! A body given as a `dict` crosses once each way: in, to the `Value` the library reads;
//! out, only when the library changed it (an unchanged body is handed back as the very
//! object given). What is not JSON (a `set`, a `datetime`, a key that is not a string,
//! NaN, a cycle) is refused with the JSON pointer of where it is.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

/// Deeper than this is refused, as `serde_json` refuses text nested deeper than 128: it
/// also stops a self-containing list or dict.
const MAX_DEPTH: usize = 128;

/// Why a Python object is not JSON, and where in it.
#[derive(Debug)]
pub struct NotJson {
    /// JSON pointer of the offending value.
    pub path: String,
    /// Why.
    pub reason: String,
}

/// One step of the path to a value: a member's key or an item's index (an index is
/// written out only when an error names the path).
enum Seg {
    Key(String),
    Index(usize),
}

/// The JSON a Python object holds.
pub fn to_value(obj: &Bound<'_, PyAny>) -> Result<Value, NotJson> {
    walk(obj, &mut Vec::new(), &mut Keys::default())
}

/// The text of the key objects met so far in one walk, by the object's identity.
///
/// A body's dicts share their key objects: a literal key is interned, and `json.loads`
/// makes one object per distinct key of a document. Reading a `str` is a copy through a
/// temporary `bytes` under the stable ABI, so a key object's text is read once per walk.
/// Each key is held here while its text is, so its address names that object alone.
#[derive(Default)]
struct Keys<'py>(Vec<(Bound<'py, PyString>, String)>);

impl<'py> Keys<'py> {
    /// Enough for the keys of any request body's shapes; more are read each time.
    const MAX: usize = 64;

    fn text(&mut self, key: &Bound<'py, PyString>, path: &[Seg]) -> Result<String, NotJson> {
        if let Some((_, known)) = self.0.iter().find(|(k, _)| k.is(key)) {
            return Ok(known.clone());
        }
        let read = text(key, path)?;
        if self.0.len() < Self::MAX {
            self.0.push((key.clone(), read.clone()));
        }
        Ok(read)
    }
}

fn walk<'py>(
    obj: &Bound<'py, PyAny>,
    path: &mut Vec<Seg>,
    keys: &mut Keys<'py>,
) -> Result<Value, NotJson> {
    if path.len() > MAX_DEPTH {
        return Err(not_json(
            path,
            "nested more than 128 levels deep (or contains itself)".into(),
        ));
    }
    // The exact types first: a body is made of them, and the test is one comparison.
    if let Ok(s) = obj.cast_exact::<PyString>() {
        return text(s, path).map(Value::String);
    }
    if let Ok(d) = obj.cast_exact::<PyDict>() {
        return object(d, path, keys);
    }
    if let Ok(l) = obj.cast_exact::<PyList>() {
        return items(l.iter(), l.len(), path, keys);
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return text(s, path).map(Value::String);
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        return object(d, path, keys);
    }
    if let Ok(l) = obj.cast::<PyList>() {
        return items(l.iter(), l.len(), path, keys);
    }
    if let Ok(t) = obj.cast::<PyTuple>() {
        return items(t.iter(), t.len(), path, keys);
    }
    if obj.is_none() {
        return Ok(Value::Null);
    }
    // bool before int: True is an int to Python.
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if obj.cast::<PyInt>().is_ok() {
        if let Ok(i) = obj.extract::<i64>() {
            return Ok(Value::Number(i.into()));
        }
        if let Ok(u) = obj.extract::<u64>() {
            return Ok(Value::Number(u.into()));
        }
        return Err(not_json(
            path,
            "an int beyond 64 bits, which JSON parsers do not keep exactly".into(),
        ));
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        let f = f.value();
        return Number::from_f64(f)
            .map(Value::Number)
            .ok_or_else(|| not_json(path, format!("the float {f}, which JSON cannot write")));
    }
    Err(not_json(
        path,
        format!(
            "a {}, which is not JSON (give dicts, lists, str, int, float, bool and None)",
            type_name(obj)
        ),
    ))
}

fn object<'py>(
    d: &Bound<'py, PyDict>,
    path: &mut Vec<Seg>,
    keys: &mut Keys<'py>,
) -> Result<Value, NotJson> {
    let mut map = Map::with_capacity(d.len());
    for (k, v) in d.iter() {
        let Ok(key) = k.cast::<PyString>() else {
            return Err(not_json(
                path,
                format!(
                    "a dict key is {} ({}), but JSON object keys are strings",
                    type_name(&k),
                    k.repr().map(|r| r.to_string()).unwrap_or_default()
                ),
            ));
        };
        let key = keys.text(key, path)?;
        path.push(Seg::Key(key));
        let value = walk(&v, path, keys)?;
        if let Some(Seg::Key(key)) = path.pop() {
            map.insert(key, value);
        }
    }
    Ok(Value::Object(map))
}

fn items<'py>(
    iter: impl Iterator<Item = Bound<'py, PyAny>>,
    len: usize,
    path: &mut Vec<Seg>,
    keys: &mut Keys<'py>,
) -> Result<Value, NotJson> {
    let mut out = Vec::with_capacity(len);
    for (i, item) in iter.enumerate() {
        path.push(Seg::Index(i));
        out.push(walk(&item, path, keys)?);
        path.pop();
    }
    Ok(Value::Array(out))
}

fn text(s: &Bound<'_, PyString>, path: &[Seg]) -> Result<String, NotJson> {
    s.to_cow().map(|c| c.into_owned()).map_err(|_| {
        not_json(
            path,
            "a str with a lone surrogate, which is not valid Unicode".into(),
        )
    })
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "object".into())
}

fn not_json(path: &[Seg], reason: String) -> NotJson {
    NotJson {
        path: pointer(path),
        reason,
    }
}

/// RFC 6901: `~` and `/` in a key are escaped.
fn pointer(path: &[Seg]) -> String {
    path.iter()
        .map(|p| match p {
            Seg::Key(k) => format!("/{}", k.replace('~', "~0").replace('/', "~1")),
            Seg::Index(i) => format!("/{i}"),
        })
        .collect()
}

/// The Python object for a repaired body, built on the object it was read from
/// (`given`): a new dict, in the body's key order, whose members are the very objects of
/// `given` where the repair kept them (every member but the history and the members in
/// `kept.members`), and whose history is a new list holding `given`'s own item objects
/// where the repair kept them (`kept.history`), new objects for the rest. `given` is the
/// object the body was read from (a caller that changes it while the call runs without
/// the GIL gets what it changed); a body that is not a dict is built anew.
pub fn to_python_reusing<'py>(
    py: Python<'py>,
    body: &Value,
    given: &Bound<'py, PyAny>,
    kept: &mend::repair::Kept,
    history_key: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let (Value::Object(members), Ok(given)) = (body, given.cast::<PyDict>()) else {
        return to_python(py, body);
    };
    let dict = PyDict::new(py);
    for (k, v) in members {
        let old = given.get_item(k)?;
        let value = match (old, &kept.history) {
            (Some(old), Some(origin)) if k == history_key => history(py, v, &old, origin)?,
            (Some(old), _) if !kept.members.contains(&k.as_str()) => old,
            _ => to_python(py, v)?,
        };
        dict.set_item(k, value)?;
    }
    Ok(dict.into_any())
}

/// A repaired history as a new list: item `k` is `old[origin[k]]` where that is kept.
fn history<'py>(
    py: Python<'py>,
    items: &Value,
    old: &Bound<'py, PyAny>,
    origin: &[Option<usize>],
) -> PyResult<Bound<'py, PyAny>> {
    let Value::Array(items) = items else {
        return to_python(py, items);
    };
    // An origin that does not fit the items (it always does) reuses nothing.
    let fits = items.len() == origin.len();
    let old_len = old.len().unwrap_or(0);
    let list = PyList::empty(py);
    for (k, item) in items.iter().enumerate() {
        match origin.get(k).copied().flatten() {
            Some(i) if fits && i < old_len => list.append(old.get_item(i)?)?,
            _ => list.append(to_python(py, item)?)?,
        }
    }
    Ok(list.into_any())
}

/// The Python object for a JSON value: dicts (in the value's key order), lists, str,
/// int, float, bool and None.
pub fn to_python<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else {
                PyFloat::new(py, n.as_f64().unwrap_or(f64::NAN)).into_any()
            }
        }
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(a) => {
            let list = PyList::empty(py);
            for item in a {
                list.append(to_python(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(o) => {
            let dict = PyDict::new(py);
            for (k, item) in o {
                dict.set_item(k, to_python(py, item)?)?;
            }
            dict.into_any()
        }
    })
}
