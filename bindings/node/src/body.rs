//! A body crossing into Rust and back, in the form it was given: a JSON string comes
//! back as a string, bytes (`Buffer`, `Uint8Array`) as a `Buffer`, an object as an
//! object, and an unchanged body as the very value passed in.
//!
//! Objects cross as JSON text (`JSON.stringify` going in, `JSON.parse` coming out): V8's
//! own JSON code walks an object far faster than one N-API call per property would, and
//! the text keeps the object's key order for the engine, which keeps it too.
//!
//! `check` and `repair` hold a body as its text ([`Text`]) and read it on the library's
//! tape, as the CLI does; the other calls parse it into a `serde_json::Value` ([`Body`]).

use napi::bindgen_prelude::*;
use napi::JSON;
use serde_json::Value;

use crate::error::BadInput;

/// What a body argument may be. The last arm takes anything else, to refuse it with a
/// reason instead of N-API's type error.
pub(crate) type BodyArg<'env> = Either4<String, Uint8Array, Object<'env>, Unknown<'env>>;

/// The forms a body comes in, and goes back out in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    Text,
    Bytes,
    Object,
}

/// A body read from its argument.
pub(crate) struct Body<'env> {
    pub value: Value,
    pub form: Form,
    /// The argument itself, handed back when nothing changed.
    original: Unknown<'env>,
}

impl<'env> Body<'env> {
    /// Read a body argument (`argument` names it in errors).
    pub(crate) fn read(env: &'env Env, arg: BodyArg<'env>, argument: &str) -> Result<Body<'env>> {
        let bad = |b: BadInput| {
            BadInput {
                argument: argument.to_string(),
                ..b
            }
            .into_js(env)
        };
        let (value, form, original) = match arg {
            Either4::A(text) => {
                let value = mend::parse_body(text.as_bytes()).map_err(|e| bad(e.into()))?;
                let original = text.into_unknown(env)?;
                (value, Form::Text, original)
            }
            Either4::B(bytes) => {
                let value = mend::parse_body(&bytes).map_err(|e| bad(e.into()))?;
                let original = bytes.into_unknown(env)?;
                (value, Form::Bytes, original)
            }
            Either4::C(object) => {
                let text = stringify(env, &object, argument)?;
                let value = mend::parse_body(text.as_bytes()).map_err(|e| bad(e.into()))?;
                (value, Form::Object, object.to_unknown())
            }
            Either4::D(other) => return Err(not_a_body(env, &other, argument)),
        };
        Ok(Body {
            value,
            form,
            original,
        })
    }

    /// `value` in the form this body came in; the original argument when `unchanged`.
    pub(crate) fn give_back(
        &self,
        env: &'env Env,
        value: &Value,
        unchanged: bool,
    ) -> Result<Unknown<'env>> {
        if unchanged {
            return Ok(self.original);
        }
        give(env, value, self.form)
    }
}

/// A body argument held as its JSON text, for the calls that read a body on the tape
/// (`check`, `repair`): a string as its text, bytes as they are (not copied), an object
/// as its `JSON.stringify` text. No tree is built here.
pub(crate) enum Text<'env> {
    String(String),
    /// The bytes, and the very `Buffer` or `Uint8Array` given.
    Bytes(Uint8Array, Unknown<'env>),
    /// The object's JSON text, and the object.
    Object(String, Object<'env>),
}

impl<'env> Text<'env> {
    /// Read a body argument (`argument` names it in errors).
    pub(crate) fn read(env: &'env Env, arg: BodyArg<'env>, argument: &str) -> Result<Text<'env>> {
        Ok(match arg {
            Either4::A(text) => Text::String(text),
            Either4::B(mut bytes) => {
                // The argument itself (N-API holds a reference to it), for `give_back`.
                let original = (&mut bytes).into_unknown(env)?;
                Text::Bytes(bytes, original)
            }
            Either4::C(object) => Text::Object(stringify(env, &object, argument)?, object),
            Either4::D(other) => return Err(not_a_body(env, &other, argument)),
        })
    }

    /// The body's JSON text.
    pub(crate) fn bytes(&self) -> &[u8] {
        match self {
            Text::String(text) | Text::Object(text, _) => text.as_bytes(),
            Text::Bytes(bytes, _) => bytes,
        }
    }

    /// `out` (JSON text) in the form this body came in: a string, a `Buffer`, or an object
    /// (`JSON.parse` of it); with no `out`, the body given (the very value, for bytes and
    /// objects; a string equal to it).
    pub(crate) fn give_back(self, env: &'env Env, out: Option<Vec<u8>>) -> Result<Unknown<'env>> {
        let Some(out) = out else {
            return match self {
                Text::String(text) => text.into_unknown(env),
                Text::Bytes(_, original) => Ok(original),
                Text::Object(_, object) => Ok(object.to_unknown()),
            };
        };
        match self {
            Text::Bytes(..) => Buffer::from(out).into_unknown(env),
            Text::String(_) => utf8(out)?.into_unknown(env),
            Text::Object(..) => parse(env, utf8(out)?),
        }
    }
}

fn utf8(out: Vec<u8>) -> Result<String> {
    String::from_utf8(out).map_err(|e| {
        Error::new(
            Status::GenericFailure,
            format!("cannot write the body: not UTF-8 ({e})"),
        )
    })
}

/// Why a value that is none of the forms a body takes is refused.
fn not_a_body(env: &Env, other: &Unknown, argument: &str) -> Error {
    let kind = match kind_of(other) {
        Ok(kind) => kind,
        Err(e) => return e,
    };
    BadInput::new(
        "not-a-body",
        argument,
        format!(
            "{kind} was given, but a body is an object, its JSON text or its bytes (Buffer, Uint8Array)"
        ),
    )
    .into_js(env)
}

/// The bytes of an argument that is read as it is (a response: JSON, an SSE stream, or
/// Converse's binary event stream); an object is taken as its JSON text.
pub(crate) fn raw(env: &Env, arg: BodyArg, argument: &str) -> Result<Vec<u8>> {
    match arg {
        Either4::A(text) => Ok(text.into_bytes()),
        Either4::B(bytes) => Ok(bytes.to_vec()),
        Either4::C(object) => stringify(env, &object, argument).map(String::into_bytes),
        Either4::D(other) => Err(BadInput::new(
            "not-a-body",
            argument,
            format!(
                "{} was given, but it is a JSON object, its text (JSON or an SSE stream) or its bytes",
                kind_of(&other)?
            ),
        )
        .into_js(env)),
    }
}

fn kind_of(v: &Unknown) -> Result<&'static str> {
    Ok(match v.get_type()? {
        ValueType::Undefined => "undefined",
        ValueType::Null => "null",
        ValueType::Boolean => "a boolean",
        ValueType::Number => "a number",
        ValueType::BigInt => "a bigint",
        ValueType::Symbol => "a symbol",
        ValueType::Function => "a function",
        _ => "a value of another kind",
    })
}

/// `value` as a JavaScript value of `form`.
pub(crate) fn give<'env>(env: &'env Env, value: &Value, form: Form) -> Result<Unknown<'env>> {
    let text = serde_json::to_string(value).map_err(|e| {
        Error::new(
            Status::GenericFailure,
            format!("cannot write the body: {e}"),
        )
    })?;
    match form {
        Form::Text => text.into_unknown(env),
        Form::Bytes => Buffer::from(text.into_bytes()).into_unknown(env),
        Form::Object => parse(env, text),
    }
}

/// `JSON.parse(text)`.
fn parse(env: &Env, text: String) -> Result<Unknown<'_>> {
    let json: JSON = env.get_global()?.get_named_property_unchecked("JSON")?;
    let parse: Function<String, Unknown> = json.get_named_property("parse")?;
    parse.call(text)
}

/// An object as JSON text, with why when it has none (a cycle, a bigint).
pub(crate) fn stringify(env: &Env, object: &Object, argument: &str) -> Result<String> {
    let json: JSON = env.get_global()?.get_named_property_unchecked("JSON")?;
    let stringify: Function<Object, Option<String>> = json.get_named_property("stringify")?;
    match stringify.call(*object) {
        Ok(Some(text)) => Ok(text),
        Ok(None) => Err(BadInput::new(
            "not-a-body",
            argument,
            "JSON.stringify gives nothing for it (a toJSON that returns undefined?), so it is no JSON body",
        )
        .into_js(env)),
        Err(e) => Err(BadInput::new(
            "not-a-body",
            argument,
            format!("it cannot be written as JSON: {}", e.reason),
        )
        .into_js(env)),
    }
}
