//! `mend`: check, inspect, repair and trim LLM conversation histories from the command line.
//!
//! A thin layer over the `mend` library: clap commands, output formatting and exit
//! codes. It never judges a history itself; every verdict comes from `mend::analyze`.
//!
//! Exit codes, for scripts: 0 every body valid (warnings allowed), 1 some body has
//! error-severity violations, 2 bad input or usage (an unreadable file, not JSON, an
//! unknown dialect or provider, a body whose history cannot be read).

mod catalog;
mod check;
mod convert;
mod fix;
mod input;
mod inspect;
mod next;
mod printer;
mod serve;
mod store;
mod style;
mod ui;

use std::io;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use mend::{CheckOptions, Dialect, Profile};

use crate::input::Given;
use crate::printer::Printer;

/// mimalloc for the whole binary: `mend serve` parses every request body into a JSON
/// tree on several threads, and glibc's malloc spent a fifth of that time in its own
/// locking and consolidation (bench/gateway-vs-litellm.sh: about 15% of the latency
/// added at 200 KB).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// How a run ended, worst wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    /// Every body valid.
    Valid,
    /// Some body has error-severity violations.
    Violations,
    /// Some input could not be checked, or the command line is wrong.
    BadInput,
    /// `trim`: the output is valid but the budget cannot be met (the instructions, the
    /// tool definitions, pinned turns and the last units are kept whole).
    OverBudget,
}

impl Status {
    fn code(self) -> u8 {
        match self {
            Status::Valid => 0,
            Status::Violations => 1,
            Status::BadInput => 2,
            Status::OverBudget => 3,
        }
    }
}

#[derive(Debug, Parser)]
#[command(
    name = "mend",
    version,
    about = "Keep LLM conversation histories valid for provider APIs",
    long_about = "Keep LLM conversation histories valid for provider APIs.\n\n\
        mend reads request bodies of five dialects (OpenAI chat, OpenAI Responses, \
        Anthropic Messages, Gemini, Bedrock Converse) and finds what the provider would reject with a \
        400: tool calls without results, results without calls, reasoning items that \
        lost their follower, thinking blocks out of place. Each finding names its rule, \
        the JSON pointer, and the error text the provider itself would answer with.",
    after_help = "Example:\n  mend check request.json\n\n\
        Exit codes: 0 valid, 1 violations found, 2 bad input or usage.",
    propagate_version = true
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Check request bodies and report every violation
    #[command(
        long_about = "Check request bodies and report every violation.\n\n\
            Reads files, `-` for stdin, and folders (every *.json inside, recursively, \
            sorted; every *.jsonl with --jsonl). Prints `FILE: valid (...)` or one line per \
            violation: `FILE /json/pointer error[rule] message`, then what the provider \
            would say. With several bodies, a summary by rule goes to stderr.\n\n\
            Exit codes: 0 every body valid (warnings allowed), 1 violations found, \
            2 bad input (unreadable, not JSON, unknown dialect or provider, no history).",
        after_help = "Example:\n  mend check request.json\n  mend check --jsonl --json logs/ > report.json"
    )]
    Check(CheckArgs),
    /// Show a history as a table of turns with call, result and reasoning links
    #[command(
        long_about = "Show a history as a table of turns with call, result and reasoning links.\n\n\
            One row per wire message or item: its index, JSON pointer, role or item type, \
            provider ids (rs_/msg_/fc_ item ids, call ids), links (`→ #k` a call answered \
            in row k, `← #j` a result answering row j, `→ ?` a call never answered, and \
            for a Responses reasoning item `→ #k` its follower), size in bytes, and the \
            rules it breaks. Violations follow the table.\n\n\
            Exit codes as for `mend check`.",
        after_help = "Example:\n  mend inspect examples/anthropic-text-before-tool-result.json"
    )]
    Inspect(InspectArgs),
    /// Repair a body: the fewest edits that make it valid
    #[command(
        long_about = "Repair a body: the fewest edits that make it valid.\n\n\
            The repaired body goes to stdout (the input's very bytes when nothing needs \
            doing) and the report to stderr: each edit with its rule, JSON pointer, action \
            and detail, then what could not be repaired without guessing. A call with no \
            result gets an error result saying it was interrupted (or is dropped with \
            --missing-result drop-call); a result that answers no call is dropped (or kept as \
            text with --orphan-result to-text); reasoning that lost its follower is dropped.\n\n\
            Exit codes: 0 the output is valid, 1 something stayed unrepairable, 2 bad input.",
        after_help = "Example:\n  mend repair request.json > fixed.json\n  mend repair --json - < request.json"
    )]
    Repair(RepairArgs),
    /// Trim a body to a token budget, dropping whole call groups oldest first
    #[command(
        long_about = "Trim a body to a token budget, dropping whole call groups oldest first.\n\n\
            Instructions, tool definitions and the first --protect turns always stay, and so \
            do the last --keep-last units (groups of calls with their results, or plain \
            turns), even over budget; all of them count against it. A group is never cut, so \
            no result is orphaned; the kept history starts where the dialect allows. A \
            damaged input is repaired first (the repairs are reported); one that repair \
            cannot make valid is handed back untrimmed with its violations. Tokens are \
            counted with tiktoken (o200k_base or cl100k_base, by model) for OpenAI models, \
            and estimated at 4 characters per token otherwise; the report names the \
            counter.\n\n\
            Exit codes: 0 the output is valid and within budget, 1 the input has violations \
            repair cannot settle (output untrimmed), 2 bad input, 3 the output is valid but \
            still over budget.",
        after_help = "Example:\n  mend trim --budget 8000 --keep-last 2 request.json > trimmed.json"
    )]
    Trim(TrimArgs),
    /// Convert a body to another dialect, reporting everything the target cannot carry
    #[command(
        long_about = "Convert a body to another dialect, reporting everything the target cannot carry.\n\n\
            Reads a request body of one dialect (detected, or --from) and writes the same \
            conversation as a request body of --to: messages, tool calls and results (placed \
            where the target wants them), images and files, instructions, and the settings \
            that have an equivalent (model, token limit, sampling, stop sequences, stream, \
            function tools, tool choice). What the target cannot carry is left out and \
            reported on stderr with its JSON pointer in the source: reasoning and signatures \
            of another provider, encrypted reasoning, provider item ids, server tool blocks, \
            settings and fields with no equivalent. A source that breaks its own dialect's \
            rules is repaired first; call ids are rewritten to the target provider's form \
            (OpenAI: at most 40 characters; Mistral: 9 alphanumerics; Anthropic: a-z, A-Z, \
            0-9, _ and -), the same for calls and results. The output is checked for the \
            target before it is written.\n\n\
            Exit codes: 0 the output checks valid for the target, 1 it does not, 2 bad input \
            or usage.",
        after_help = "Example:\n  mend convert --to anthropic chat-request.json > anthropic-request.json\n  mend convert --from gemini --to openai_chat --provider mistral --json - < req.json"
    )]
    Convert(convert::ConvertArgs),
    /// Run the gateway: check, repair or reject histories in front of the providers
    #[command(
        long_about = "Run the gateway: check, repair or reject histories in front of the providers.\n\n\
            Serves POST /v1/chat/completions, /v1/responses, /v1/messages, Gemini's \
            :generateContent and :streamGenerateContent and Bedrock's \
            /model/{modelId}/converse and /converse-stream, forwarding each to the upstream \
            configured for its dialect (the providers' public APIs by default), plus \
            GET /v1/models, /healthz and Prometheus /metrics. Modes: off, observe (check, \
            log, forward unchanged), repair (forward the repaired body; x-mend-repairs says \
            what was done), heal (forward unchanged; when the provider refuses the body \
            with a history error mend recognizes, repair it and retry once: x-mend-healed \
            names the rules), strict (answer 400 in the provider's own format without \
            calling upstream). A request may raise its mode with the x-mend-mode header \
            (off < observe < heal < repair < strict), and lower it only under --mode-header-lowers, \
            so a client cannot talk its way past a strict upstream; the response's \
            x-mend-mode says which mode applied.\n\n\
            Traces: with OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) \
            set, one OpenTelemetry span per exchange (GenAI conventions) and one per upstream \
            call go over OTLP/HTTP; the standard OTEL_* variables apply. Logs: one line per \
            exchange on stderr, as text or (--log-format json) one JSON object a line.\n\n\
            Conversations (--db, x-mend-conversation): each exchange is committed before the \
            client sees the end of its answer, and a conversation belongs to the caller that \
            first named it (a hash of its upstream credential, or --tenant-header); --ui \
            serves the conversation inspector at /ui.\n\n\
            Settings come from --config FILE, then MEND_* variables, then flags.",
        after_help = "Example:\n  mend serve --mode repair\n  OPENAI_BASE_URL=http://127.0.0.1:8787/v1 python agent.py"
    )]
    Serve(Box<serve::ServeArgs>),
    /// The conversation inspector in the browser, over a store (also `mend serve --ui`)
    #[command(
        long_about = "The conversation inspector in the browser, over a store (also `mend serve --ui`).\n\n\
            Serves /ui: the stored conversations (id, dialect, model, turns, last activity, \
            violations), each one as its chain (turns, reasoning, call -> result links, ids, \
            token counts per group) with every violation beside the provider's text and what \
            repair would change as a diff, and a paste box that shows the same for any request \
            body (nothing stored). With an admin token (MEND_ADMIN_TOKEN or \
            --admin-token-file) it asks for it; without one it listens on loopback only.",
        after_help = "Example:\n  mend ui --db sqlite:conversations.db\n  MEND_ADMIN_TOKEN=$(cat token) mend ui --db postgres://mend@db/mend --listen 0.0.0.0:8788"
    )]
    Ui(ui::UiArgs),
    /// List the rule catalog: each rule's dialects, profiles, severity, repair and provider text
    #[command(after_help = "Example:\n  mend rules\n  mend rules --json | jq '.[].id'")]
    Rules(ListArgs),
    /// One rule in full: what the provider enforces, its texts, its repair, and an example
    #[command(after_help = "Example:\n  mend explain tool-result-without-call")]
    Explain(ExplainArgs),
    /// List the provider profiles that --provider accepts
    #[command(after_help = "Example:\n  mend providers")]
    Providers(ListArgs),
    /// Keep conversations in a store: append, load, list, fork, delete, export
    #[command(
        after_help = "Example:\n  mend store append chat-42 turn.json --dialect openai_chat --key turn-7\n  mend store load chat-42 --as openai_chat --model gpt-4o"
    )]
    Store(store::StoreArgs),
    /// The next request: a request, its response and the tool results, as the body to send next
    #[command(
        long_about = "The next request: a request, its response and the tool results, as the body to send next.\n\n\
            Appends the response's output to the request's history exactly as the provider \
            needs it back (Responses reasoning items with their followers, rs_/msg_/fc_ ids, \
            Anthropic thinking signatures, Gemini thought signatures), then the tool results \
            where the dialect wants them: chat `tool` messages, Responses \
            `function_call_output` items, one Anthropic user message of `tool_result` blocks, \
            one Gemini user content of `functionResponse` parts, each in call order. The \
            response is a JSON body or an SSE stream. A Responses request with \
            previous_response_id gets only the new items and the response's id.\n\n\
            The body goes to stdout, checked as `mend check` would; notes, calls left without \
            a result, and violations go to stderr.\n\n\
            Exit codes: 0 the body is valid and every call answered, 1 violations or \
            unanswered calls, 2 bad input (unreadable, not JSON, a response of another \
            dialect or cut short, a provider error, a result that answers no call).",
        after_help = "Example:\n  mend next --request req.json --response resp.sse --tool-results results.json > next.json\n\n\
            results.json:\n  [{\"call_id\": \"call_7Gq2x\", \"output\": \"18C and sunny\"},\n   {\"call_id\": \"call_9Zt1\", \"output\": {\"rows\": 3}, \"is_error\": false}]"
    )]
    Next(next::NextArgs),
}

/// What to read bodies as; shared by check and inspect.
#[derive(Debug, Args)]
struct Target {
    /// Dialect: auto, openai_chat, openai_responses, anthropic, gemini or bedrock_converse
    #[arg(long, value_name = "DIALECT", default_value = "auto")]
    dialect: String,
    /// Read the body as --dialect says even when it is unambiguously another dialect
    /// (without it, that is bad input naming both)
    #[arg(long)]
    force: bool,
    /// Provider profile (see `mend providers`); default: the dialect's own, or the one the model names
    #[arg(long, value_name = "PROVIDER")]
    provider: Option<String>,
    /// Model, when the body does not say (Gemini bodies never do)
    #[arg(long, value_name = "MODEL")]
    model: Option<String>,
}

impl Target {
    /// The library options, or why the command line is wrong.
    fn options(&self) -> Result<Given, String> {
        let dialect = match self.dialect.as_str() {
            "auto" => None,
            d => Some(d.parse::<Dialect>().map_err(|_| {
                format!(
                    "unknown dialect '{d}' (expected one of auto, {})",
                    Dialect::ALL.map(Dialect::name).join(", ")
                )
            })?),
        };
        if let Some(p) = &self.provider {
            if Profile::named(p).is_none() {
                return Err(format!(
                    "unknown provider '{p}' (known: {})",
                    Profile::names().join(", ")
                ));
            }
        }
        Ok(Given {
            check: CheckOptions {
                dialect,
                provider: self.provider.clone(),
                model: self.model.clone(),
                endpoint: None,
            },
            force: self.force,
        })
    }
}

#[derive(Debug, Args)]
struct CheckArgs {
    /// Files, folders, or `-` for stdin
    #[arg(value_name = "FILE|-", required = true)]
    inputs: Vec<String>,
    #[command(flatten)]
    target: Target,
    /// Machine output: one JSON object on stdout; {dialect, provider, valid, violations}
    /// for one body, {results, summary} for several (files, a folder, or --jsonl)
    #[arg(long)]
    json: bool,
    /// Each input holds one request body per line (blank lines skipped)
    #[arg(long)]
    jsonl: bool,
}

#[derive(Debug, Args)]
struct InspectArgs {
    /// A file, or `-` for stdin
    #[arg(value_name = "FILE|-")]
    input: String,
    #[command(flatten)]
    target: Target,
    /// Machine output: one JSON object on stdout
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
struct RepairArgs {
    /// A file, or `-` for stdin
    #[arg(value_name = "FILE|-", default_value = "-")]
    input: String,
    #[command(flatten)]
    target: Target,
    /// A call without a result: synthesize an error result, or drop-call
    #[arg(long, value_name = "POLICY", default_value = "synthesize")]
    missing_result: String,
    /// A result without a call: drop it, or to-text
    #[arg(long, value_name = "POLICY", default_value = "drop")]
    orphan_result: String,
    /// The text of each synthesized result, to tell them from real tool output
    #[arg(long, value_name = "TEXT")]
    synthesized_text: Option<String>,
    /// One JSON object on stdout: {valid, edits, unrepairable, warnings, body}
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
struct TrimArgs {
    /// A file, or `-` for stdin
    #[arg(value_name = "FILE|-", default_value = "-")]
    input: String,
    #[command(flatten)]
    target: Target,
    /// The token budget for the whole history, instructions included
    #[arg(long, value_name = "TOKENS")]
    budget: usize,
    /// Units (call groups or plain turns) always kept at the end, even over budget
    #[arg(long, value_name = "K", default_value_t = 1)]
    keep_last: usize,
    /// History turns pinned after the instructions
    #[arg(long, value_name = "N", default_value_t = 0)]
    protect: usize,
    /// One JSON object on stdout: {valid, counter, tokens_before, tokens_after, dropped, body}
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
struct ListArgs {
    /// Machine output: a JSON array on stdout
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
struct ExplainArgs {
    /// The rule id (`mend rules` lists them)
    rule: String,
    /// Machine output: the rule's spec, its example, what check finds and what repair does
    #[arg(long)]
    json: bool,
}

fn main() -> ExitCode {
    huge_pages(false);
    let cli = Cli::parse();
    let mut printer = Printer::new();
    let status = run(cli.command, &mut printer).and_then(|s| printer.flush().map(|()| s));
    let status = match status {
        Ok(s) => s,
        // A closed pipe (`mend check . | head`) is the reader's choice, not a failure.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Status::Valid,
        Err(e) => {
            printer.err_line(&format!("mend: cannot write output: {e}"));
            Status::BadInput
        }
    };
    ExitCode::from(status.code())
}

/// Transparent huge pages on or off for the process. mimalloc asks for huge pages on its
/// arenas, so each 2 MB region a command touched (the body, the tape, the chain, the
/// rules' maps, memory freed but not yet purged) became resident whole: 8-14 MB more peak
/// RSS for `mend check` of a 60 MB body (`bench/check-memory.sh`: a seventh to a fifth of
/// the body), for no gain in a run that reads its memory once. So they are off from the
/// start of `main` (what mimalloc touched before `main`, about 4 MB, stays in huge pages),
/// and `mend serve`, long-lived and reusing its memory, turns them back on. Best effort:
/// on a kernel without the switch this does nothing.
fn huge_pages(on: bool) {
    #[cfg(target_os = "linux")]
    let _ = rustix::thread::disable_transparent_huge_pages(!on);
    #[cfg(not(target_os = "linux"))]
    let _ = on;
}

fn run(command: Command, printer: &mut Printer) -> io::Result<Status> {
    match command {
        Command::Check(args) => match args.target.options() {
            Ok(opts) => check::run(&args.inputs, args.jsonl, args.json, &opts, printer),
            Err(why) => Ok(usage_error(&why, printer)),
        },
        Command::Inspect(args) => match args.target.options() {
            Ok(opts) => inspect::run(&args.input, args.json, &opts, printer),
            Err(why) => Ok(usage_error(&why, printer)),
        },
        Command::Repair(args) => match args.target.options() {
            Ok(opts) => fix::run_repair(
                &args.input,
                &opts,
                &args.missing_result,
                &args.orphan_result,
                args.synthesized_text.as_deref(),
                args.json,
                printer,
            ),
            Err(why) => Ok(usage_error(&why, printer)),
        },
        Command::Trim(args) => match args.target.options() {
            Ok(opts) => fix::run_trim(
                &args.input,
                &opts,
                args.budget,
                args.keep_last,
                args.protect,
                args.json,
                printer,
            ),
            Err(why) => Ok(usage_error(&why, printer)),
        },
        Command::Rules(args) => catalog::rules(args.json, printer),
        Command::Explain(args) => catalog::explain(&args.rule, args.json, printer),
        Command::Providers(args) => catalog::providers(args.json, printer),
        Command::Serve(args) => {
            huge_pages(true);
            serve::run(*args, printer)
        }
        Command::Ui(args) => ui::run(args, printer),
        Command::Store(args) => store::run(args, printer),
        Command::Next(args) => next::run(args, printer),
        Command::Convert(args) => convert::run(&args, printer),
    }
}

fn usage_error(why: &str, printer: &mut Printer) -> Status {
    printer.err_line(&format!("mend: {why}"));
    Status::BadInput
}
