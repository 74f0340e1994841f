//! Bad input as the JavaScript side sees it: an `Error` named `MendError` that says what,
//! where and why, with the where as data (`argument`, and `line` / `column`, `path` or
//! `offset` when there is one). `index.js` gives it the `MendError` class; this module
//! only builds the object.

use napi::bindgen_prelude::*;

/// Why an input was refused, with where it is.
#[derive(Debug, Clone, Default)]
pub(crate) struct BadInput {
    /// A stable slug: `not-json`, `not-a-body`, `undetected`, `contradicted`,
    /// `unknown-provider`, `provider-mismatch`, `unreadable`, `bad-option`,
    /// `bad-response`, `bad-tool-results`, `no-next-request`, `cannot-convert`.
    pub code: &'static str,
    /// Which argument: `body`, `request`, `response`, `to`, `budget`, `options.<name>`.
    pub argument: String,
    /// What is wrong, in a sentence.
    pub reason: String,
    /// Where in the argument, when the reason has a place.
    pub at: At,
}

/// A place in an argument.
#[derive(Debug, Clone, Default)]
pub(crate) enum At {
    #[default]
    Nowhere,
    /// 1-based line and column in a JSON text.
    Position(usize, usize),
    /// A JSON pointer.
    Path(String),
    /// A byte offset (a response stream has no useful lines).
    Offset(usize),
}

impl BadInput {
    pub(crate) fn new(code: &'static str, argument: &str, reason: impl Into<String>) -> BadInput {
        BadInput {
            code,
            argument: argument.to_string(),
            reason: reason.into(),
            ..BadInput::default()
        }
    }

    /// An option that is not one of the values it takes.
    pub(crate) fn option(name: &str, reason: impl Into<String>) -> BadInput {
        BadInput::new("bad-option", &format!("options.{name}"), reason)
    }

    pub(crate) fn at_path(mut self, path: impl Into<String>) -> BadInput {
        let path = path.into();
        if !path.is_empty() {
            self.at = At::Path(path);
        }
        self
    }

    /// The message: the argument, the position when there is one, the reason.
    fn message(&self) -> String {
        let at = match &self.at {
            At::Nowhere => String::new(),
            At::Position(line, column) => format!(" line {line}, column {column}"),
            At::Path(path) => format!(" at {path}"),
            At::Offset(offset) => format!(" byte {offset}"),
        };
        format!("{}{at}: {}", self.argument, self.reason)
    }

    /// The JavaScript error to throw.
    pub(crate) fn into_js(self, env: &Env) -> Error {
        match self.build(env) {
            Ok(e) => e,
            // Building the object failed (the engine is out of memory or shutting down):
            // the message alone still says what and why.
            Err(_) => Error::new(Status::InvalidArg, self.message()),
        }
    }

    fn build(&self, env: &Env) -> Result<Error> {
        let mut obj = env.create_error(Error::new(Status::InvalidArg, self.message()))?;
        obj.set_named_property("name", "MendError")?;
        obj.set_named_property("code", self.code)?;
        obj.set_named_property("argument", self.argument.as_str())?;
        obj.set_named_property("reason", self.reason.as_str())?;
        match &self.at {
            At::Nowhere => {}
            At::Position(line, column) => {
                obj.set_named_property("line", *line as u32)?;
                obj.set_named_property("column", *column as u32)?;
            }
            At::Path(path) => obj.set_named_property("path", path.as_str())?,
            At::Offset(offset) => obj.set_named_property("offset", *offset as f64)?,
        }
        Ok(Error::from(obj.to_unknown()))
    }
}

impl From<mend::ParseError> for BadInput {
    fn from(e: mend::ParseError) -> BadInput {
        BadInput {
            code: "not-json",
            reason: e.reason,
            at: if e.line > 0 {
                At::Position(e.line, e.column.max(1))
            } else {
                At::Nowhere
            },
            ..BadInput::default()
        }
    }
}

/// A library error as bad input of `argument`, worded for this API's option names.
pub(crate) fn from_mend(e: mend::Error, argument: &str) -> BadInput {
    use mend::Undetected;
    let (code, reason) = match e {
        mend::Error::Parse(p) => {
            let mut bad = BadInput::from(p);
            bad.argument = argument.to_string();
            return bad;
        }
        mend::Error::Undetected(Undetected::NotAnObject(kind)) => (
            "undetected",
            format!("it is {kind}, not a JSON object, so it is no request body of any dialect"),
        ),
        mend::Error::Undetected(Undetected::NoHistory) => (
            "undetected",
            "cannot tell the dialect: the body has none of the keys that hold a history (`messages`, `input`, `contents`); give options.dialect".to_string(),
        ),
        mend::Error::Undetected(Undetected::Ambiguous(ds)) => (
            "undetected",
            format!(
                "cannot tell the dialect: the body could be any of {}; give options.dialect",
                ds.iter().map(|d| d.name()).collect::<Vec<_>>().join(", ")
            ),
        ),
        mend::Error::Contradicted { given, detected } => (
            "contradicted",
            format!("the body reads as {detected}, not as {given} as given: give its dialect, or set options.force to read it as {given}, which loses what {given} cannot read"),
        ),
        e @ mend::Error::UnknownProvider { .. } => {
            return BadInput::option("provider", e.to_string()).with_code("unknown-provider")
        }
        e @ mend::Error::ProviderMismatch { .. } => {
            return BadInput::option("provider", e.to_string()).with_code("provider-mismatch")
        }
    };
    BadInput::new(code, argument, reason)
}

impl BadInput {
    fn with_code(mut self, code: &'static str) -> BadInput {
        self.code = code;
        self
    }
}
