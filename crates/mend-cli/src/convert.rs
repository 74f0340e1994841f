//! `mend convert`: one body of one dialect in, the same conversation in another dialect
//! out, with every loss reported.

use std::io;

use clap::Args;
use mend::convert::{convert_owned, ConvertOptions, Note, NoteKind, Stage};
use mend::repair::{MissingResult, OrphanResult};
use mend::{CheckOptions, Dialect, Profile};
use serde_json::json;

use crate::fix::{pretty, read_one, render_like};
use crate::input::Given;
use crate::printer::Printer;
use crate::{usage_error, Status};

#[derive(Debug, Args)]
pub struct ConvertArgs {
    /// A file, or `-` for stdin
    #[arg(value_name = "FILE|-", default_value = "-")]
    input: String,
    /// The source dialect: auto, openai_chat, openai_responses, anthropic, gemini or
    /// bedrock_converse
    #[arg(long, value_name = "DIALECT", default_value = "auto")]
    from: String,
    /// The target dialect: openai_chat, openai_responses, anthropic, gemini or
    /// bedrock_converse
    #[arg(long, value_name = "DIALECT")]
    to: String,
    /// The target's provider profile (see `mend providers`); default: the one the model
    /// names, else the target's first party (openai, anthropic, gemini)
    #[arg(long, value_name = "PROVIDER")]
    provider: Option<String>,
    /// The source's provider profile, for repairing the source before converting
    #[arg(long, value_name = "PROVIDER")]
    source_provider: Option<String>,
    /// The target model (default: the source's `model`). A Gemini or Converse body has
    /// none (it is in the URL): give it to write it for a target that takes it in the
    /// body, and to pick the target's rules (Converse: Claude's `top_k`, the first turn)
    #[arg(long, value_name = "MODEL")]
    model: Option<String>,
    /// The source's model, when its body does not say (a Converse or Gemini body names
    /// none): the source repair follows its rules (a Claude history may open with the
    /// assistant), and the target's model is taken from it (a Bedrock Claude id as
    /// Anthropic names it)
    #[arg(long, value_name = "MODEL")]
    source_model: Option<String>,
    /// Convert from --from even when the body is unambiguously another dialect; what
    /// --from cannot read of it is reported lost (without it, that is bad input)
    #[arg(long)]
    force: bool,
    /// The token limit to write when the target requires one and the source has none
    #[arg(long, value_name = "TOKENS")]
    max_tokens: Option<u64>,
    /// A call without a result: synthesize an error result, or drop-call
    #[arg(long, value_name = "POLICY", default_value = "synthesize")]
    missing_result: String,
    /// A result without a call: drop it, or to-text
    #[arg(long, value_name = "POLICY", default_value = "drop")]
    orphan_result: String,
    /// Convert as it is: no repair of the source or the target; what the source breaks is
    /// reported by the target check (exit 1)
    #[arg(long)]
    no_repair: bool,
    /// One JSON object on stdout: {from, to, provider, valid, losses, notes, edits,
    /// violations, body}
    #[arg(long)]
    json: bool,
}

fn dialect(name: &str, what: &str) -> Result<Dialect, String> {
    name.parse::<Dialect>().map_err(|_| {
        format!(
            "unknown {what} dialect '{name}' (expected one of {})",
            Dialect::ALL.map(Dialect::name).join(", ")
        )
    })
}

fn policies(args: &ConvertArgs) -> Result<(MissingResult, OrphanResult), String> {
    let (missing, orphan) = crate::fix::policies(&args.missing_result, &args.orphan_result)?;
    for p in [&args.provider, &args.source_provider]
        .into_iter()
        .flatten()
    {
        if Profile::named(p).is_none() {
            return Err(format!(
                "unknown provider '{p}' (known: {})",
                Profile::names().join(", ")
            ));
        }
    }
    Ok((missing, orphan))
}

/// `mend convert`.
pub fn run(args: &ConvertArgs, printer: &mut Printer) -> io::Result<Status> {
    let to = match dialect(&args.to, "target") {
        Ok(d) => d,
        Err(why) => return Ok(usage_error(&why, printer)),
    };
    let from = match args.from.as_str() {
        "auto" => None,
        d => match dialect(d, "source") {
            Ok(d) => Some(d),
            Err(why) => return Ok(usage_error(&why, printer)),
        },
    };
    let (missing_result, orphan_result) = match policies(args) {
        Ok(p) => p,
        Err(why) => return Ok(usage_error(&why, printer)),
    };
    let source_opts = Given {
        check: CheckOptions {
            dialect: from,
            provider: args.source_provider.clone(),
            model: args.source_model.clone(),
            ..CheckOptions::default()
        },
        force: args.force,
    };
    let (label, bytes, body) = match read_one(&args.input, &source_opts, printer) {
        Ok(x) => x,
        Err(s) => return Ok(s),
    };
    let from = match mend::resolve_dialect(&body, &source_opts.check) {
        Ok(d) => d,
        Err(e) => {
            printer.bad_input(&label, &e);
            return Ok(Status::BadInput);
        }
    };
    let opts = ConvertOptions {
        provider: args.provider.clone(),
        source_provider: args.source_provider.clone(),
        model: args.model.clone(),
        source_model: args.source_model.clone(),
        max_tokens: args.max_tokens,
        missing_result,
        orphan_result,
        no_repair: args.no_repair,
        force: args.force,
    };
    let out = match convert_owned(body, from, to, &opts) {
        Ok(o) => o,
        Err(e) => {
            printer.bad_input(&label, &e);
            return Ok(Status::BadInput);
        }
    };
    let status = if out.valid() {
        Status::Valid
    } else {
        Status::Violations
    };
    if args.json {
        let losses: Vec<&Note> = out.losses().collect();
        let others: Vec<&Note> = out
            .notes
            .iter()
            .filter(|n| n.kind != NoteKind::Lost)
            .collect();
        let report = json!({
            "from": out.from.name(),
            "to": out.to.name(),
            "provider": out.provider,
            "valid": out.valid(),
            "losses": losses,
            "notes": others,
            "edits": out.edits,
            "violations": out.violations,
            "body": out.body,
        });
        printer.out(&format!("{}\n", pretty(&report)))?;
        return Ok(status);
    }
    printer.out(&render_like(&bytes, &out.body))?;
    for n in &out.notes {
        printer.err_line(&format!(
            "mend: {label} {} {}[{}] {}",
            n.path,
            n.kind.as_str(),
            n.what,
            n.detail
        ));
    }
    for e in &out.edits {
        let stage = match e.stage {
            Stage::Source => "source",
            Stage::Target => "target",
        };
        printer.err_line(&format!(
            "mend: {label} {stage} {} {}[{}] {}",
            e.edit.path, e.edit.action, e.edit.rule, e.edit.detail
        ));
    }
    for v in &out.violations {
        printer.err_line(&format!(
            "mend: {label} target {} {}[{}] {}",
            v.path,
            v.severity.as_str(),
            v.rule,
            v.message
        ));
    }
    let count = |k: NoteKind| out.notes.iter().filter(|n| n.kind == k).count();
    let verdict = if out.valid() {
        format!("the output checks valid for {} ({})", out.to, out.provider)
    } else {
        format!(
            "the output does not check valid for {} ({})",
            out.to, out.provider
        )
    };
    printer.err_line(&format!(
        "mend: {label}: {} -> {}: {} lost, {} added, {} moved, {} changed, {} missing, {} repair edit(s); {verdict}",
        out.from,
        out.to,
        count(NoteKind::Lost),
        count(NoteKind::Added),
        count(NoteKind::Moved),
        count(NoteKind::Changed),
        count(NoteKind::Missing),
        out.edits.len()
    ));
    Ok(status)
}
