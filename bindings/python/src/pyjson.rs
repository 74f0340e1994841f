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

/// The JSON a Python object holds.
pub fn to_value(obj: &Bound<'_, PyAny>) -> Result<Value, NotJson> {
    let mut path = Vec::new();
    walk(obj, &mut path)
}

fn walk(obj: &Bound<'_, PyAny>, path: &mut Vec<String>) -> Result<Value, NotJson> {
    if path.len() > MAX_DEPTH {
        return Err(not_json(
            path,
            "nested more than 128 levels deep (or contains itself)".into(),
        ));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return text(s, path).map(Value::String);
    }
    if let Ok(d) = obj.cast::<PyDict>() {
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
            let key = text(key, path)?;
            path.push(key);
            let value = walk(&v, path)?;
            let key = path.pop().unwrap_or_default();
            map.insert(key, value);
        }
        return Ok(Value::Object(map));
    }
    if let Ok(l) = obj.cast::<PyList>() {
        return items(l.iter(), l.len(), path);
    }
    if let Ok(t) = obj.cast::<PyTuple>() {
        return items(t.iter(), t.len(), path);
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

fn items<'py>(
    iter: impl Iterator<Item = Bound<'py, PyAny>>,
    len: usize,
    path: &mut Vec<String>,
) -> Result<Value, NotJson> {
    let mut out = Vec::with_capacity(len);
    for (i, item) in iter.enumerate() {
        path.push(i.to_string());
        out.push(walk(&item, path)?);
        path.pop();
    }
    Ok(Value::Array(out))
}

fn text(s: &Bound<'_, PyString>, path: &[String]) -> Result<String, NotJson> {
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

fn not_json(path: &[String], reason: String) -> NotJson {
    NotJson {
        path: pointer(path),
        reason,
    }
}

/// RFC 6901: `~` and `/` in a key are escaped.
fn pointer(path: &[String]) -> String {
    path.iter()
        .map(|p| format!("/{}", p.replace('~', "~0").replace('/', "~1")))
        .collect()
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
