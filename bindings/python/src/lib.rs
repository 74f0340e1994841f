//! The Python binding of mend: the native module `mend._mend`, re-exported by the
//! package `mend` (`bindings/python/python/mend`).
//!
//! Thin by design: a body crosses in (a `dict` walked into a `serde_json::Value`, or
//! `str`/`bytes` parsed by the library), the library does the work with the GIL released,
//! and the result crosses back in the type the body was given in. Options map one to one
//! onto the library's (`RepairOptions`, `TrimOptions`, `ConvertOptions`, ...). Nothing
//! here decides a verdict.
//!
//! Not for: HTTP. The drop-in `httpx` transports are Python (`mend/httpx.py`), on top
//! of `repair` and `check` over bytes.

use std::borrow::Cow;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};
use serde_json::Value;

use mend::repair::RepairedBytes;
use mend::{CheckOptions, Dialect, MissingResult, OrphanResult};

mod pyjson;
mod types;

/// mimalloc for what the binding allocates (what Python allocates is Python's): a dict
/// crossing into Rust builds a tree of small maps and strings, and glibc's malloc was a
/// third of that crossing (callgrind, `mend.check(dict)` on bench/python_binding.py's
/// histories). Memory Rust allocates is only ever freed by Rust.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use types::{Conversion, Dropped, Repair, Report, Trim};

pyo3::create_exception!(
    mend,
    MendError,
    PyValueError,
    "Bad input: not JSON, not a request body of any dialect, an unknown option. `.reason` says why; `.line`/`.column` (text) or `.path` (a JSON pointer) where, when known."
);
pyo3::create_exception!(
    mend,
    InvalidHistory,
    MendError,
    "The history would be refused by the provider; `.report` holds the check's Report."
);

/// What went wrong inside the library, carried out of the GIL-free section.
enum Failure {
    /// Text that is not JSON: where and why.
    Parse(mend::ParseError),
    /// Anything else the library refused, in its own words.
    Refused(String),
}

impl From<mend::Error> for Failure {
    fn from(e: mend::Error) -> Self {
        match e {
            mend::Error::Parse(p) => Failure::Parse(p),
            other => Failure::Refused(other.to_string()),
        }
    }
}

impl Failure {
    fn into_py(self, py: Python<'_>) -> PyErr {
        match self {
            Failure::Parse(p) => {
                let err = MendError::new_err(format!(
                    "line {}, column {}: {}",
                    p.line, p.column, p.reason
                ));
                let value = err.value(py);
                let _ = value.setattr("reason", &p.reason);
                let _ = value.setattr("line", p.line);
                let _ = value.setattr("column", p.column);
                err
            }
            Failure::Refused(reason) => bad_input(py, reason, None),
        }
    }
}

/// A `MendError` with its reason and, when known, the JSON pointer it is about.
fn bad_input(py: Python<'_>, reason: String, path: Option<&str>) -> PyErr {
    let err = MendError::new_err(match path {
        Some(p) => format!("{}: {reason}", if p.is_empty() { "/" } else { p }),
        None => reason.clone(),
    });
    let value = err.value(py);
    let _ = value.setattr("reason", &reason);
    if let Some(p) = path {
        let _ = value.setattr("path", p);
    }
    err
}

/// The form a body was given in, which is the form it is handed back in.
#[derive(Clone, Copy)]
enum Form {
    Object,
    Text,
    Bytes,
}

/// A body as given: walked into a value already, or text the library parses.
enum Source<'a> {
    Value(Value),
    Raw(Cow<'a, [u8]>),
}

impl Source<'_> {
    fn parse(self) -> Result<Value, Failure> {
        match self {
            Source::Value(v) => Ok(v),
            Source::Raw(bytes) => mend::parse_body(&bytes).map_err(Failure::Parse),
        }
    }
}

/// Read a body argument: a dict (or list) is walked into JSON now, under the GIL; text
/// and bytes are borrowed and parsed later, without it.
fn read_body<'a>(py: Python<'_>, obj: &'a Bound<'_, PyAny>) -> PyResult<(Form, Source<'a>)> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok((Form::Bytes, Source::Raw(Cow::Borrowed(b.as_bytes()))));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        let text = s.to_cow().map_err(|_| {
            bad_input(
                py,
                "the body is a str with a lone surrogate, which is not valid Unicode".into(),
                None,
            )
        })?;
        let raw = match text {
            Cow::Borrowed(t) => Cow::Borrowed(t.as_bytes()),
            Cow::Owned(t) => Cow::Owned(t.into_bytes()),
        };
        return Ok((Form::Text, Source::Raw(raw)));
    }
    if obj.cast::<PyDict>().is_ok() || obj.cast::<PyList>().is_ok() {
        let v = pyjson::to_value(obj).map_err(|e| bad_input(py, e.reason, Some(&e.path)))?;
        return Ok((Form::Object, Source::Value(v)));
    }
    if obj.cast::<PyTuple>().is_ok() || obj.hasattr("keys").unwrap_or(false) {
        // A Mapping that is not a dict (a pydantic model is not one): say what to pass.
        return Err(PyTypeError::new_err(format!(
            "a request body is a dict, str or bytes, not {}: pass dict(body) or its JSON",
            type_name(obj)
        )));
    }
    Err(PyTypeError::new_err(format!(
        "a request body is a dict, str or bytes, not {}",
        type_name(obj)
    )))
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "object".into())
}

/// A changed body, ready to cross back: text forms are written without the GIL.
enum Encoded {
    Value(Value),
    Text(Vec<u8>),
}

fn encode(form: Form, body: Value) -> Encoded {
    match form {
        Form::Object => Encoded::Value(body),
        Form::Text | Form::Bytes => Encoded::Text(serde_json::to_vec(&body).unwrap_or_default()),
    }
}

/// The body to hand back: the very object given when nothing changed, else the new body
/// in the form the old one was given in.
fn deliver(
    py: Python<'_>,
    given: &Bound<'_, PyAny>,
    form: Form,
    changed: Option<Encoded>,
) -> PyResult<Py<PyAny>> {
    Ok(match changed {
        None => given.clone().unbind(),
        Some(Encoded::Value(v)) => pyjson::to_python(py, &v)?.unbind(),
        Some(Encoded::Text(bytes)) => match form {
            Form::Bytes => PyBytes::new(py, &bytes).into_any().unbind(),
            _ => PyString::new(py, &String::from_utf8_lossy(&bytes))
                .into_any()
                .unbind(),
        },
    })
}

fn dialect_arg(py: Python<'_>, name: &str, d: Option<&str>) -> PyResult<Option<Dialect>> {
    d.map(|d| {
        d.parse::<Dialect>()
            .map_err(|e| bad_input(py, format!("{name}: {e}"), None))
    })
    .transpose()
}

/// The check options from the keyword arguments; a model named by the endpoint path
/// (Gemini, Converse) is taken when none is given.
fn check_options(
    py: Python<'_>,
    dialect: Option<&str>,
    provider: Option<String>,
    model: Option<String>,
    endpoint: Option<String>,
) -> PyResult<CheckOptions> {
    let model = model.or_else(|| endpoint.as_deref().and_then(Dialect::model_from_endpoint));
    Ok(CheckOptions {
        dialect: dialect_arg(py, "dialect", dialect)?,
        provider,
        model,
        endpoint,
    })
}

/// A dialect given is held against the body, as the CLI does: a body that reads
/// unambiguously as another is bad input naming both.
fn confirmed(body: &Value, opts: &CheckOptions) -> Result<(), Failure> {
    match opts.dialect {
        Some(d) => mend::confirm_dialect(body, d).map_err(Failure::from),
        None => Ok(()),
    }
}

/// [`confirmed`] for bytes: read on the tape, or parsed when the tape reader declines them.
fn confirmed_raw(bytes: &[u8], opts: &CheckOptions) -> Result<(), Failure> {
    match opts.dialect {
        Some(d) => mend::confirm_dialect_bytes(bytes, d).map_err(Failure::from),
        None => Ok(()),
    }
}

fn missing_result_arg(py: Python<'_>, s: &str) -> PyResult<MissingResult> {
    match s.replace('_', "-").as_str() {
        "synthesize" => Ok(MissingResult::Synthesize),
        "drop-call" => Ok(MissingResult::DropCall),
        _ => Err(bad_input(
            py,
            format!("missing_result: unknown policy '{s}' (expected 'synthesize' or 'drop-call')"),
            None,
        )),
    }
}

fn orphan_result_arg(py: Python<'_>, s: &str) -> PyResult<OrphanResult> {
    match s.replace('_', "-").as_str() {
        "drop" => Ok(OrphanResult::Drop),
        "to-text" => Ok(OrphanResult::ToText),
        _ => Err(bad_input(
            py,
            format!("orphan_result: unknown policy '{s}' (expected 'drop' or 'to-text')"),
            None,
        )),
    }
}

/// Check a request body: what the provider would refuse, each finding with its rule,
/// JSON pointer and the provider's own error text.
#[pyfunction]
#[pyo3(signature = (body, *, dialect=None, provider=None, model=None, endpoint=None))]
fn check(
    py: Python<'_>,
    body: &Bound<'_, PyAny>,
    dialect: Option<&str>,
    provider: Option<String>,
    model: Option<String>,
    endpoint: Option<String>,
) -> PyResult<Report> {
    let opts = check_options(py, dialect, provider, model, endpoint)?;
    let (_, source) = read_body(py, body)?;
    let report = py
        .detach(|| match source {
            // Bytes and text are read on the tape, as the CLI reads them: no tree.
            Source::Raw(bytes) => Ok(mend::check_confirmed(&bytes, &opts)?),
            Source::Value(v) => {
                confirmed(&v, &opts)?;
                Ok(mend::check_value(&v, &opts)?)
            }
        })
        .map_err(|f: Failure| f.into_py(py))?;
    Ok(Report::from(&report))
}

/// Check a request body and raise `InvalidHistory` (carrying the report) when the
/// provider would refuse it; return the report (warnings only) otherwise.
#[pyfunction]
#[pyo3(signature = (body, *, dialect=None, provider=None, model=None, endpoint=None))]
fn ensure_valid(
    py: Python<'_>,
    body: &Bound<'_, PyAny>,
    dialect: Option<&str>,
    provider: Option<String>,
    model: Option<String>,
    endpoint: Option<String>,
) -> PyResult<Report> {
    let report = check(py, body, dialect, provider, model, endpoint)?;
    if report.valid {
        return Ok(report);
    }
    Err(invalid_history(py, report))
}

fn invalid_history(py: Python<'_>, report: Report) -> PyErr {
    let errors: Vec<&types::Violation> = report
        .violations
        .iter()
        .filter(|v| v.severity == "error")
        .collect();
    let first = errors
        .first()
        .map(|v| {
            let at = if v.path.is_empty() { "/" } else { &v.path };
            format!("{at} {}: {}", v.rule, v.message)
        })
        .unwrap_or_default();
    let more = match errors.len() {
        0 | 1 => String::new(),
        n => format!(" (and {} more)", n - 1),
    };
    let err = InvalidHistory::new_err(format!(
        "the {} history would be refused: {first}{more}",
        report.dialect
    ));
    if let Ok(r) = Py::new(py, report) {
        let _ = err.value(py).setattr("report", r);
    }
    err
}

/// Repair a request body: the fewest edits that make it valid.
#[pyfunction]
#[pyo3(signature = (body, *, missing_result="synthesize", orphan_result="drop",
    synthesized_text=None, dialect=None, provider=None, model=None, endpoint=None))]
#[allow(clippy::too_many_arguments)]
fn repair(
    py: Python<'_>,
    body: &Bound<'_, PyAny>,
    missing_result: &str,
    orphan_result: &str,
    synthesized_text: Option<String>,
    dialect: Option<&str>,
    provider: Option<String>,
    model: Option<String>,
    endpoint: Option<String>,
) -> PyResult<Repair> {
    let opts = mend::RepairOptions {
        check: check_options(py, dialect, provider, model, endpoint)?,
        missing_result: missing_result_arg(py, missing_result)?,
        orphan_result: orphan_result_arg(py, orphan_result)?,
        synthesized_text,
    };
    let (form, source) = read_body(py, body)?;
    let outcome = py
        .detach(|| match source {
            // Bytes and text: a valid body costs one check of the bytes; the rest is
            // written by splicing the changes into the bytes given.
            Source::Raw(bytes) => {
                confirmed_raw(&bytes, &opts.check)?;
                Ok(mend::repair::repair_bytes(&bytes, &opts)?)
            }
            Source::Value(v) => {
                confirmed(&v, &opts.check)?;
                let fixed = mend::repair::repair_owned(v, &opts)?;
                Ok(RepairedBytes::Ran(Box::new(fixed), None))
            }
        })
        .map_err(|f: Failure| f.into_py(py))?;
    let fixed = match outcome {
        RepairedBytes::AsIs(report) => {
            return Ok(Repair {
                body: body.clone().unbind(),
                valid: true,
                changed: false,
                dialect: report.dialect.name().to_string(),
                provider: report.provider.to_string(),
                edits: Vec::new(),
                unrepairable: Vec::new(),
                warnings: types::violations(&report.violations),
            });
        }
        RepairedBytes::Ran(fixed, Some(bytes)) => {
            let out = deliver(py, body, form, Some(Encoded::Text(bytes)))?;
            return Ok(repair_result(out, &fixed));
        }
        RepairedBytes::Ran(fixed, None) => *fixed,
    };
    let out = if fixed.changed() {
        // A dict: a new dict holding the objects given where the repair kept them.
        let key = fixed.dialect.history_key();
        pyjson::to_python_reusing(py, &fixed.body, body, &fixed.kept, key)?.unbind()
    } else {
        body.clone().unbind()
    };
    Ok(repair_result(out, &fixed))
}

fn repair_result(body: Py<PyAny>, fixed: &mend::Repaired) -> Repair {
    Repair {
        body,
        valid: fixed.valid(),
        changed: fixed.changed(),
        dialect: fixed.dialect.name().to_string(),
        provider: fixed.provider.to_string(),
        edits: types::edits(&fixed.edits),
        unrepairable: types::violations(&fixed.unrepairable),
        warnings: types::violations(&fixed.warnings),
    }
}

/// Item token counts kept for the process, so trimming a growing history again only
/// counts its new items (bounded: `TokenCache::LIMIT` items, then it starts over).
static TRIM_COUNTS: std::sync::LazyLock<std::sync::Mutex<mend::trim::TokenCache>> =
    std::sync::LazyLock::new(Default::default);

/// `mend::trim` through the process' count memo; a thread that finds it busy counts
/// afresh rather than wait. The body is the binding's own copy of what crossed: its kept
/// items are moved into the output, not copied.
fn trim_memoized(v: Value, opts: &mend::TrimOptions) -> Result<mend::Trimmed, mend::Error> {
    match TRIM_COUNTS.try_lock() {
        Ok(mut memo) => mend::trim::trim_owned_with_cache(v, opts, &mut memo),
        Err(std::sync::TryLockError::Poisoned(p)) => {
            // A panic left it half written: start over.
            let mut memo = p.into_inner();
            *memo = Default::default();
            TRIM_COUNTS.clear_poison();
            mend::trim::trim_owned_with_cache(v, opts, &mut memo)
        }
        Err(std::sync::TryLockError::WouldBlock) => mend::trim::trim_owned(v, opts),
    }
}

/// Trim a request body to a token budget, dropping whole call groups oldest first.
#[pyfunction]
#[pyo3(signature = (body, budget, *, keep_last=1, protect=0, model=None, dialect=None,
    provider=None))]
#[allow(clippy::too_many_arguments)]
fn trim(
    py: Python<'_>,
    body: &Bound<'_, PyAny>,
    budget: usize,
    keep_last: usize,
    protect: usize,
    model: Option<String>,
    dialect: Option<&str>,
    provider: Option<String>,
) -> PyResult<Trim> {
    let opts = mend::TrimOptions {
        check: check_options(py, dialect, provider, model, None)?,
        budget,
        keep_last,
        protect,
    };
    let (form, source) = read_body(py, body)?;
    let (t, changed) = py
        .detach(|| {
            let v = source.parse()?;
            confirmed(&v, &opts.check)?;
            let mut t = trim_memoized(v, &opts)?;
            let changed = (!t.dropped.is_empty() || !t.repairs.is_empty())
                .then(|| encode(form, std::mem::take(&mut t.body)));
            Ok((t, changed))
        })
        .map_err(|f: Failure| f.into_py(py))?;
    // A dict trimmed without repairs is the given dict less some history items: hand back
    // a new dict and list holding the kept items themselves, instead of building them again.
    let changed = match (&changed, kept_items(py, body, &t)?) {
        (Some(Encoded::Value(_)), Some(dict)) => return trim_result(dict, t),
        _ => changed,
    };
    trim_result(deliver(py, body, form, changed)?, t)
}

/// The given dict with its history list replaced by the items `t` kept (the same
/// objects), when `t` only dropped items of that list; `None` otherwise.
fn kept_items(
    py: Python<'_>,
    given: &Bound<'_, PyAny>,
    t: &mend::Trimmed,
) -> PyResult<Option<Py<PyAny>>> {
    if t.dropped.is_empty() || !t.repairs.is_empty() {
        return Ok(None);
    }
    let Ok(dict) = given.cast::<PyDict>() else {
        return Ok(None);
    };
    let key = t.dialect.history_key();
    let Some(list) = dict.get_item(key)? else {
        return Ok(None);
    };
    let Ok(list) = list.cast::<PyList>() else {
        return Ok(None);
    };
    let prefix = format!("/{key}/");
    let mut dropped = std::collections::BTreeSet::new();
    for path in t.dropped.iter().flat_map(|d| &d.paths) {
        match path
            .strip_prefix(&prefix)
            .and_then(|i| i.parse::<usize>().ok())
        {
            Some(i) if i < list.len() => dropped.insert(i),
            _ => return Ok(None),
        };
    }
    let kept = PyList::empty(py);
    for (i, item) in list.iter().enumerate() {
        if !dropped.contains(&i) {
            kept.append(item)?;
        }
    }
    let out = dict.copy()?;
    out.set_item(key, kept)?;
    Ok(Some(out.into_any().unbind()))
}

fn trim_result(body: Py<PyAny>, t: mend::Trimmed) -> PyResult<Trim> {
    let counter = serde_json::to_value(t.counter)
        .ok()
        .and_then(|c| c.as_str().map(str::to_string))
        .unwrap_or_default();
    Ok(Trim {
        body,
        valid: t.violations.is_empty(),
        dialect: t.dialect.name().to_string(),
        counter,
        tokens_before: t.tokens_before,
        tokens_after: t.tokens_after,
        over_budget: t.over_budget,
        dropped: t
            .dropped
            .iter()
            .map(|d| Dropped {
                paths: d.paths.clone(),
                kind: d.kind.to_string(),
                tokens: d.tokens,
            })
            .collect(),
        repairs: types::edits(&t.repairs),
        violations: types::violations(&t.violations),
    })
}

/// Convert a request body to another dialect, with what could not be carried.
#[pyfunction]
#[pyo3(signature = (body, to, *, source=None, provider=None, model=None,
    source_provider=None, source_model=None, max_tokens=None,
    missing_result="synthesize", orphan_result="drop", repair=true, force=false))]
#[allow(clippy::too_many_arguments)]
fn convert(
    py: Python<'_>,
    body: &Bound<'_, PyAny>,
    to: &str,
    source: Option<&str>,
    provider: Option<String>,
    model: Option<String>,
    source_provider: Option<String>,
    source_model: Option<String>,
    max_tokens: Option<u64>,
    missing_result: &str,
    orphan_result: &str,
    repair: bool,
    force: bool,
) -> PyResult<Conversion> {
    let to = dialect_arg(py, "to", Some(to))?.unwrap_or(Dialect::OpenAiChat);
    let from = dialect_arg(py, "source", source)?;
    let opts = mend::ConvertOptions {
        provider,
        source_provider,
        model,
        source_model,
        max_tokens,
        missing_result: missing_result_arg(py, missing_result)?,
        orphan_result: orphan_result_arg(py, orphan_result)?,
        no_repair: !repair,
        force,
    };
    let (form, raw) = read_body(py, body)?;
    let (c, out) = py
        .detach(|| {
            let v = raw.parse()?;
            let from = match from {
                Some(d) => d,
                None => mend::detect_dialect(&v)
                    .map_err(|e| Failure::Refused(e.to_string().replace("--dialect", "source=")))?,
            };
            let mut c = mend::convert_owned(v, from, to, &opts)
                .map_err(|e| Failure::Refused(e.to_string()))?;
            let out = encode(form, std::mem::take(&mut c.body));
            Ok((c, out))
        })
        .map_err(|f: Failure| f.into_py(py))?;
    Ok(Conversion {
        body: deliver(py, body, form, Some(out))?,
        valid: c.valid(),
        source: c.from.name().to_string(),
        dialect: c.to.name().to_string(),
        provider: c.provider.to_string(),
        model: c.model.clone(),
        losses: c.losses().map(types::Note::from).collect(),
        notes: c.notes.iter().map(types::Note::from).collect(),
        edits: c.edits.iter().map(|s| types::Edit::from(&s.edit)).collect(),
        violations: types::violations(&c.violations),
    })
}

/// The next request after `response`: its output appended to the history exactly as the
/// provider needs it back, then the tool results where the dialect wants them.
#[pyfunction]
#[pyo3(signature = (request, response, *, tool_results=None, user=None, choice=0,
    dialect=None, provider=None, model=None))]
#[allow(clippy::too_many_arguments)]
fn next_request(
    py: Python<'_>,
    request: &Bound<'_, PyAny>,
    response: &Bound<'_, PyAny>,
    tool_results: Option<&Bound<'_, PyAny>>,
    user: Option<String>,
    choice: usize,
    dialect: Option<&str>,
    provider: Option<String>,
    model: Option<String>,
) -> PyResult<Py<PyAny>> {
    let nopts = mend::NextOptions {
        choice,
        user,
        model: model.clone(),
    };
    let opts = check_options(py, dialect, provider, model, None)?;
    let (form, req) = read_body(py, request)?;
    let reply_bytes: Cow<'_, [u8]> = match read_body(py, response)? {
        (_, Source::Raw(b)) => b,
        (_, Source::Value(v)) => Cow::Owned(serde_json::to_vec(&v).unwrap_or_default()),
    };
    let results = match tool_results {
        None => Vec::new(),
        Some(r) => tool_outputs(py, r)?,
    };
    let next = py
        .detach(|| {
            let request = req.parse()?;
            confirmed(&request, &opts)?;
            let dialect = mend::resolve_dialect(&request, &opts)?;
            let reply = mend::next::read_reply(dialect, &reply_bytes).map_err(|e| {
                Failure::Refused(format!(
                    "response, byte {}: cannot read it as a {dialect} response: {}",
                    e.offset, e.reason
                ))
            })?;
            let next = mend::next_request(&request, dialect, &reply, &results, &nopts)
                .map_err(|e| Failure::Refused(e.to_string()))?;
            Ok(encode(form, next.body))
        })
        .map_err(|f: Failure| f.into_py(py))?;
    deliver(py, request, form, Some(next))
}

/// Tool results: a `{call_id: output}` mapping, or the CLI's list of
/// `{"call_id" | "name", "output", "is_error"?}`.
fn tool_outputs(py: Python<'_>, given: &Bound<'_, PyAny>) -> PyResult<Vec<mend::ToolOutput>> {
    // Said as `tool_results/0/output: ...`; `.path` is the pointer into the results.
    let bad = |path: String, reason: String| {
        let err = MendError::new_err(format!("tool_results{path}: {reason}"));
        let value = err.value(py);
        let _ = value.setattr("reason", &reason);
        let _ = value.setattr("path", &path);
        err
    };
    let v = pyjson::to_value(given).map_err(|e| bad(e.path, e.reason))?;
    match v {
        Value::Object(map) => Ok(map
            .into_iter()
            .map(|(id, output)| mend::ToolOutput::answer(id, output))
            .collect()),
        list => mend::ToolOutput::list_from_json(&list).map_err(|e| bad(e.path, e.reason)),
    }
}

/// The rule catalog, in catalog order.
#[pyfunction]
fn rules() -> Vec<types::Rule> {
    mend::Rule::ALL
        .iter()
        .map(|r| types::Rule::from(*r))
        .collect()
}

/// The dialect of a history endpoint path (`/v1/chat/completions` is `openai_chat`), or
/// `None` for any other path: what the transports act on.
#[pyfunction]
fn _endpoint_dialect(path: &str) -> Option<&'static str> {
    Dialect::from_endpoint(path).map(Dialect::name)
}

#[pymodule]
#[pyo3(name = "_mend")]
fn native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("MendError", py.get_type::<MendError>())?;
    m.add("InvalidHistory", py.get_type::<InvalidHistory>())?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(ensure_valid, m)?)?;
    m.add_function(wrap_pyfunction!(repair, m)?)?;
    m.add_function(wrap_pyfunction!(trim, m)?)?;
    m.add_function(wrap_pyfunction!(convert, m)?)?;
    m.add_function(wrap_pyfunction!(next_request, m)?)?;
    m.add_function(wrap_pyfunction!(rules, m)?)?;
    m.add_function(wrap_pyfunction!(_endpoint_dialect, m)?)?;
    m.add_class::<types::Report>()?;
    m.add_class::<types::Violation>()?;
    m.add_class::<types::Repair>()?;
    m.add_class::<types::Edit>()?;
    m.add_class::<types::Trim>()?;
    m.add_class::<types::Dropped>()?;
    m.add_class::<types::Conversion>()?;
    m.add_class::<types::Note>()?;
    m.add_class::<types::Rule>()?;
    m.add_class::<types::ProviderText>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
