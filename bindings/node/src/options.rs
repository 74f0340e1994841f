//! The options objects, camelCase as JavaScript writes them, and their reading into the
//! library's options. Every value is checked here, so a wrong one is a `MendError`
//! naming the option and what it takes, never a silent default.

use mend::{Dialect, MissingResult, OrphanResult};
use napi_derive::napi;
use serde_json::Value;

use crate::error::{from_mend, BadInput};

/// What `check` reads the body as. Every field is optional.
#[napi(object, object_to_js = false)]
#[derive(Default)]
pub struct CheckOptions {
    /// The dialect; detected from `endpoint` or the body when absent.
    #[napi(ts_type = "Dialect")]
    pub dialect: Option<String>,
    /// Read the body as `dialect` even where it reads unambiguously as another (what
    /// `dialect` cannot read of it is then reported); without it that is a `MendError`.
    pub force: Option<bool>,
    /// A provider profile (`openai`, `azure`, `groq`, `mistral`, `deepseek`, `anthropic`,
    /// `bedrock`, `vertex`, `gemini`, ...); default: the one the model names, else the
    /// dialect's own.
    pub provider: Option<String>,
    /// The model, when the body does not say (Gemini and Converse bodies never do).
    pub model: Option<String>,
    /// The URL path the body is sent to (`/v1/chat/completions`,
    /// `/v1beta/models/gemini-2.5-flash:generateContent`): tells the dialect, and the
    /// model where the path names it.
    pub endpoint: Option<String>,
}

/// What `repair` reads the body as, and its policy.
#[napi(object, object_to_js = false)]
#[derive(Default)]
pub struct RepairOptions {
    /// As for `check`.
    #[napi(ts_type = "Dialect")]
    pub dialect: Option<String>,
    /// As for `check`.
    pub force: Option<bool>,
    /// As for `check`.
    pub provider: Option<String>,
    /// As for `check`.
    pub model: Option<String>,
    /// As for `check`.
    pub endpoint: Option<String>,
    /// A call that has no result: `synthesize` (default) adds a result saying it was
    /// interrupted, `drop-call` removes the call.
    #[napi(ts_type = "'synthesize' | 'drop-call'")]
    pub missing_result: Option<String>,
    /// A result that answers no call: `drop` (default) removes it, `to-text` keeps its
    /// content as plain text.
    #[napi(ts_type = "'drop' | 'to-text'")]
    pub orphan_result: Option<String>,
    /// The text of a synthesized result (default: "Error: this tool call was interrupted
    /// and produced no output.").
    pub synthesized_text: Option<String>,
}

/// What `trim` reads the body as, and what it keeps.
#[napi(object, object_to_js = false)]
#[derive(Default)]
pub struct TrimOptions {
    /// As for `check`.
    #[napi(ts_type = "Dialect")]
    pub dialect: Option<String>,
    /// As for `check`.
    pub force: Option<bool>,
    /// As for `check`.
    pub provider: Option<String>,
    /// As for `check`; also picks the tokenizer (`o200k_base`, `cl100k_base` for OpenAI
    /// models, an estimate of 4 characters per token otherwise).
    pub model: Option<String>,
    /// As for `check`.
    pub endpoint: Option<String>,
    /// Units always kept at the end, even over budget (default 1; 0 is taken as 1).
    pub keep_last: Option<f64>,
    /// History turns pinned after the instructions (default 0).
    pub protect: Option<f64>,
}

/// How `convert` reads the source and writes the target.
#[napi(object, object_to_js = false)]
#[derive(Default)]
pub struct ConvertOptions {
    /// The source dialect; detected from the body when absent.
    #[napi(ts_type = "Dialect")]
    pub from: Option<String>,
    /// Convert from `from` even when the body reads unambiguously as another dialect.
    pub force: Option<bool>,
    /// The target's provider profile; default: the one the model names, else the target
    /// dialect's first-party provider.
    pub provider: Option<String>,
    /// The source's provider profile, for the source repair.
    pub source_provider: Option<String>,
    /// The target model, written as it is; default: the source's, as the target's
    /// provider names it.
    pub model: Option<String>,
    /// The source's model, when its body does not say (Converse, Gemini).
    pub source_model: Option<String>,
    /// The token limit to write when the target requires one and the source has none.
    pub max_tokens: Option<f64>,
    /// As for `repair`, in both repairs.
    #[napi(ts_type = "'synthesize' | 'drop-call'")]
    pub missing_result: Option<String>,
    /// As for `repair`, in both repairs.
    #[napi(ts_type = "'drop' | 'to-text'")]
    pub orphan_result: Option<String>,
    /// Convert as it is: no repair of the source nor of the target.
    pub no_repair: Option<bool>,
}

/// One tool result for `nextRequest`.
#[napi(object, object_to_js = false)]
pub struct ToolResult {
    /// The call id it answers.
    pub call_id: Option<String>,
    /// The tool's name: answers the first call of that name not yet answered (Gemini
    /// calls often have no id).
    pub name: Option<String>,
    /// What the tool returned: a string, or any JSON value.
    pub output: Value,
    /// The tool failed.
    pub is_error: Option<bool>,
}

/// How `nextRequest` reads the request and builds the next one.
#[napi(object, object_to_js = false)]
#[derive(Default)]
pub struct NextOptions {
    /// As for `check`, for the request.
    #[napi(ts_type = "Dialect")]
    pub dialect: Option<String>,
    /// As for `check`.
    pub force: Option<bool>,
    /// As for `check`.
    pub provider: Option<String>,
    /// As for `check`.
    pub model: Option<String>,
    /// As for `check`.
    pub endpoint: Option<String>,
    /// The results of the response's tool calls, in any order.
    pub tool_results: Option<Vec<ToolResult>>,
    /// The choice (OpenAI chat) or candidate (Gemini) to continue with (default 0).
    pub choice: Option<f64>,
    /// A next user turn to append after the results.
    pub user: Option<String>,
}

/// The check options and whether a given dialect is forced: what every call reads a
/// body as.
pub(crate) struct Given {
    pub check: mend::CheckOptions,
    pub force: bool,
}

impl Given {
    pub(crate) fn new(
        dialect: Option<&str>,
        force: Option<bool>,
        provider: Option<&str>,
        model: Option<&str>,
        endpoint: Option<&str>,
    ) -> Result<Given, BadInput> {
        let dialect = dialect.map(|d| parse_dialect(d, "dialect")).transpose()?;
        // The model a Gemini or Converse path names is the model, unless one is given.
        let model = model
            .map(str::to_string)
            .or_else(|| endpoint.and_then(Dialect::model_from_endpoint));
        Ok(Given {
            check: mend::CheckOptions {
                dialect,
                provider: provider.map(str::to_string),
                model,
                endpoint: endpoint.map(str::to_string),
            },
            force: force.unwrap_or(false),
        })
    }

    /// Hold a given dialect against the body: one the body unambiguously contradicts is
    /// bad input of `argument`, unless forced.
    pub(crate) fn confirm(&self, body: &Value, argument: &str) -> Result<(), BadInput> {
        match (self.check.dialect, self.force) {
            (Some(d), false) => mend::confirm_dialect(body, d).map_err(|e| from_mend(e, argument)),
            _ => Ok(()),
        }
    }

    /// [`Given::confirm`] for a body's JSON text: read on the tape, or parsed when the
    /// tape reader declines it (then a text that is no JSON is bad input of `argument`,
    /// with where and why).
    pub(crate) fn confirm_text(&self, text: &[u8], argument: &str) -> Result<(), BadInput> {
        match (self.check.dialect, self.force) {
            (Some(d), false) => {
                mend::confirm_dialect_bytes(text, d).map_err(|e| from_mend(e, argument))
            }
            _ => Ok(()),
        }
    }
}

/// A body with no history at all (not an object, or no history key: a `malformed`
/// finding at the body itself) is bad input of `argument`, not a verdict. A history key
/// of the wrong type is a body of the dialect with a broken history, and its finding is
/// reported like any other.
pub(crate) fn readable(
    dialect: Dialect,
    violations: &[mend::Violation],
    argument: &str,
) -> Result<(), BadInput> {
    match mend::unreadable_history(dialect, violations).filter(|v| v.path.is_empty()) {
        Some(v) => Err(BadInput::new(
            "unreadable",
            argument,
            format!("cannot read it as {dialect}: {}", v.message),
        )),
        None => Ok(()),
    }
}

impl CheckOptions {
    pub(crate) fn given(&self) -> Result<Given, BadInput> {
        Given::new(
            self.dialect.as_deref(),
            self.force,
            self.provider.as_deref(),
            self.model.as_deref(),
            self.endpoint.as_deref(),
        )
    }
}

impl RepairOptions {
    pub(crate) fn given(&self) -> Result<Given, BadInput> {
        Given::new(
            self.dialect.as_deref(),
            self.force,
            self.provider.as_deref(),
            self.model.as_deref(),
            self.endpoint.as_deref(),
        )
    }

    pub(crate) fn library(&self, given: &Given) -> Result<mend::RepairOptions, BadInput> {
        Ok(mend::RepairOptions {
            check: given.check.clone(),
            missing_result: missing_result(self.missing_result.as_deref())?,
            orphan_result: orphan_result(self.orphan_result.as_deref())?,
            synthesized_text: self.synthesized_text.clone(),
        })
    }
}

impl TrimOptions {
    pub(crate) fn given(&self) -> Result<Given, BadInput> {
        Given::new(
            self.dialect.as_deref(),
            self.force,
            self.provider.as_deref(),
            self.model.as_deref(),
            self.endpoint.as_deref(),
        )
    }
}

impl ConvertOptions {
    pub(crate) fn library(&self) -> Result<mend::ConvertOptions, BadInput> {
        Ok(mend::ConvertOptions {
            provider: self.provider.clone(),
            source_provider: self.source_provider.clone(),
            model: self.model.clone(),
            source_model: self.source_model.clone(),
            max_tokens: self
                .max_tokens
                .map(|n| count(n, "maxTokens").map(|n| n as u64))
                .transpose()?,
            missing_result: missing_result(self.missing_result.as_deref())?,
            orphan_result: orphan_result(self.orphan_result.as_deref())?,
            no_repair: self.no_repair.unwrap_or(false),
            force: self.force.unwrap_or(false),
        })
    }
}

impl NextOptions {
    pub(crate) fn given(&self) -> Result<Given, BadInput> {
        Given::new(
            self.dialect.as_deref(),
            self.force,
            self.provider.as_deref(),
            self.model.as_deref(),
            self.endpoint.as_deref(),
        )
    }

    /// The tool results as the library takes them; each must say which call it answers.
    pub(crate) fn tool_outputs(&self) -> Result<Vec<mend::ToolOutput>, BadInput> {
        let results = self.tool_results.as_deref().unwrap_or_default();
        results
            .iter()
            .enumerate()
            .map(|(i, r)| {
                if r.call_id.is_none() && r.name.is_none() {
                    return Err(BadInput::new(
                        "bad-tool-results",
                        &format!("options.toolResults[{i}]"),
                        "it names no call: give callId (or name, for calls without ids)",
                    ));
                }
                Ok(mend::ToolOutput {
                    call_id: r.call_id.clone(),
                    name: r.name.clone(),
                    output: r.output.clone(),
                    is_error: r.is_error.unwrap_or(false),
                })
            })
            .collect()
    }
}

/// A dialect named by the caller.
pub(crate) fn parse_dialect(name: &str, option: &str) -> Result<Dialect, BadInput> {
    name.parse::<Dialect>().map_err(|why| {
        let mut bad = BadInput::option(option, why);
        if option == "to" {
            bad.argument = "to".into();
        }
        bad
    })
}

/// A count given as a JavaScript number: a whole number from 0.
pub(crate) fn count(n: f64, name: &str) -> Result<usize, BadInput> {
    if n.is_finite() && n >= 0.0 && n.fract() == 0.0 && n <= u32::MAX as f64 {
        Ok(n as usize)
    } else {
        let what = if name == "budget" {
            "budget".to_string()
        } else {
            format!("options.{name}")
        };
        Err(BadInput::new(
            "bad-option",
            &what,
            format!("{n} is not a count: it takes a whole number from 0"),
        ))
    }
}

fn missing_result(given: Option<&str>) -> Result<MissingResult, BadInput> {
    match given {
        None | Some("synthesize") => Ok(MissingResult::Synthesize),
        Some("drop-call") => Ok(MissingResult::DropCall),
        Some(other) => Err(BadInput::option(
            "missingResult",
            format!("'{other}' is not one of 'synthesize', 'drop-call'"),
        )),
    }
}

fn orphan_result(given: Option<&str>) -> Result<OrphanResult, BadInput> {
    match given {
        None | Some("drop") => Ok(OrphanResult::Drop),
        Some("to-text") => Ok(OrphanResult::ToText),
        Some(other) => Err(BadInput::option(
            "orphanResult",
            format!("'{other}' is not one of 'drop', 'to-text'"),
        )),
    }
}
