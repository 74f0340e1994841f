//! The result classes: plain, frozen records of what the library returned.

use pyo3::prelude::*;

/// One finding of a check.
#[pyclass(frozen, get_all, module = "mend")]
#[derive(Clone)]
pub struct Violation {
    pub rule: String,
    pub severity: String,
    pub path: String,
    pub message: String,
    pub provider_error: Option<String>,
}

impl From<&mend::Violation> for Violation {
    fn from(v: &mend::Violation) -> Self {
        Violation {
            rule: v.rule.id().to_string(),
            severity: v.severity.as_str().to_string(),
            path: v.path.clone(),
            message: v.message.clone(),
            provider_error: v.provider_error.clone(),
        }
    }
}

pub fn violations<'a>(vs: impl IntoIterator<Item = &'a mend::Violation>) -> Vec<Violation> {
    vs.into_iter().map(Violation::from).collect()
}

#[pymethods]
impl Violation {
    fn __repr__(&self) -> String {
        format!(
            "<Violation {}[{}] at {}: {}>",
            self.severity,
            self.rule,
            shown(&self.path),
            self.message
        )
    }
}

/// A check's verdict.
#[pyclass(frozen, get_all, module = "mend")]
#[derive(Clone)]
pub struct Report {
    pub valid: bool,
    pub dialect: String,
    pub provider: String,
    pub violations: Vec<Violation>,
}

impl From<&mend::Report> for Report {
    fn from(r: &mend::Report) -> Self {
        Report {
            valid: r.valid(),
            dialect: r.dialect.name().to_string(),
            provider: r.provider.to_string(),
            violations: violations(&r.violations),
        }
    }
}

#[pymethods]
impl Report {
    fn __repr__(&self) -> String {
        format!(
            "<Report {} {} ({} violation(s))>",
            self.dialect,
            if self.valid { "valid" } else { "invalid" },
            self.violations.len()
        )
    }

    fn __bool__(&self) -> bool {
        self.valid
    }
}

/// One edit repair made.
#[pyclass(frozen, get_all, module = "mend")]
#[derive(Clone)]
pub struct Edit {
    pub rule: String,
    pub path: String,
    pub action: String,
    pub detail: String,
}

impl From<&mend::Edit> for Edit {
    fn from(e: &mend::Edit) -> Self {
        Edit {
            rule: e.rule.id().to_string(),
            path: e.path.clone(),
            action: e.action.to_string(),
            detail: e.detail.clone(),
        }
    }
}

pub fn edits<'a>(es: impl IntoIterator<Item = &'a mend::Edit>) -> Vec<Edit> {
    es.into_iter().map(Edit::from).collect()
}

#[pymethods]
impl Edit {
    fn __repr__(&self) -> String {
        format!(
            "<Edit {} {} at {}: {}>",
            self.rule,
            self.action,
            shown(&self.path),
            self.detail
        )
    }
}

/// A repaired body and what was done to it.
#[pyclass(frozen, get_all, module = "mend")]
pub struct Repair {
    pub body: Py<PyAny>,
    pub valid: bool,
    pub changed: bool,
    pub dialect: String,
    pub provider: String,
    pub edits: Vec<Edit>,
    pub unrepairable: Vec<Violation>,
    pub warnings: Vec<Violation>,
}

#[pymethods]
impl Repair {
    fn __repr__(&self) -> String {
        format!(
            "<Repair {} {} ({} edit(s), {} unrepairable)>",
            self.dialect,
            if self.valid { "valid" } else { "invalid" },
            self.edits.len(),
            self.unrepairable.len()
        )
    }
}

/// A unit trim dropped.
#[pyclass(frozen, get_all, module = "mend")]
#[derive(Clone)]
pub struct Dropped {
    pub paths: Vec<String>,
    pub kind: String,
    pub tokens: usize,
}

#[pymethods]
impl Dropped {
    fn __repr__(&self) -> String {
        format!(
            "<Dropped {} {} ({} tokens)>",
            self.kind,
            self.paths.join(","),
            self.tokens
        )
    }
}

/// A trimmed body.
#[pyclass(frozen, get_all, module = "mend")]
pub struct Trim {
    pub body: Py<PyAny>,
    pub valid: bool,
    pub dialect: String,
    pub counter: String,
    pub tokens_before: usize,
    pub tokens_after: usize,
    pub over_budget: bool,
    pub dropped: Vec<Dropped>,
    pub repairs: Vec<Edit>,
    pub violations: Vec<Violation>,
}

#[pymethods]
impl Trim {
    fn __repr__(&self) -> String {
        format!(
            "<Trim {} {} -> {} tokens ({} unit(s) dropped{})>",
            self.dialect,
            self.tokens_before,
            self.tokens_after,
            self.dropped.len(),
            if self.over_budget {
                ", over budget"
            } else {
                ""
            }
        )
    }
}

/// Something a conversion could not carry as it was.
#[pyclass(frozen, get_all, module = "mend")]
#[derive(Clone)]
pub struct Note {
    pub kind: String,
    pub what: String,
    pub path: String,
    pub detail: String,
}

impl From<&mend::convert::Note> for Note {
    fn from(n: &mend::convert::Note) -> Self {
        let kind = serde_json::to_value(n.kind)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        Note {
            kind,
            what: n.what.to_string(),
            path: n.path.clone(),
            detail: n.detail.clone(),
        }
    }
}

#[pymethods]
impl Note {
    fn __repr__(&self) -> String {
        format!(
            "<Note {} {} at {}: {}>",
            self.kind,
            self.what,
            shown(&self.path),
            self.detail
        )
    }
}

/// A body converted to another dialect.
#[pyclass(frozen, get_all, module = "mend")]
pub struct Conversion {
    pub body: Py<PyAny>,
    pub valid: bool,
    pub source: String,
    pub dialect: String,
    pub provider: String,
    pub model: Option<String>,
    pub losses: Vec<Note>,
    pub notes: Vec<Note>,
    pub edits: Vec<Edit>,
    pub violations: Vec<Violation>,
}

#[pymethods]
impl Conversion {
    fn __repr__(&self) -> String {
        format!(
            "<Conversion {} -> {} {} ({} loss(es))>",
            self.source,
            self.dialect,
            if self.valid { "valid" } else { "invalid" },
            self.losses.len()
        )
    }
}

/// One provider's error text for a rule, and where it was seen.
#[pyclass(frozen, get_all, module = "mend")]
#[derive(Clone)]
pub struct ProviderText {
    pub provider: String,
    pub text: String,
    pub source: String,
}

/// A rule of the catalog.
#[pyclass(frozen, get_all, module = "mend")]
#[derive(Clone)]
pub struct Rule {
    pub id: String,
    pub summary: String,
    pub dialects: Vec<String>,
    pub profiles: Vec<String>,
    pub severity: String,
    pub repair: String,
    pub repair_how: String,
    pub provider_texts: Vec<ProviderText>,
    pub doc: String,
    pub example: String,
}

impl From<mend::Rule> for Rule {
    fn from(r: mend::Rule) -> Self {
        let s = r.spec();
        let (repair, how) = match s.repair {
            mend::rules::Repair::Always(h) => ("always", h),
            mend::rules::Repair::Sometimes(h) => ("sometimes", h),
            mend::rules::Repair::Never(h) => ("never", h),
        };
        Rule {
            id: s.id.to_string(),
            summary: s.summary.to_string(),
            dialects: s.dialects.iter().map(|d| d.name().to_string()).collect(),
            profiles: s.profiles.iter().map(|p| p.to_string()).collect(),
            severity: s.severity.as_str().to_string(),
            repair: repair.to_string(),
            repair_how: how.to_string(),
            provider_texts: s
                .provider_texts
                .iter()
                .map(|t| ProviderText {
                    provider: t.provider.to_string(),
                    text: t.text.to_string(),
                    source: t.source.to_string(),
                })
                .collect(),
            doc: s.doc.to_string(),
            example: s.example.to_string(),
        }
    }
}

#[pymethods]
impl Rule {
    fn __repr__(&self) -> String {
        format!("<Rule {}: {}>", self.id, self.summary)
    }
}

/// A pointer as the CLI shows it: the root is `/`.
fn shown(path: &str) -> &str {
    if path.is_empty() {
        "/"
    } else {
        path
    }
}
