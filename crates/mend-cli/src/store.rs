//! `mend store`: append to, load from, list, fork, delete and export conversations kept
//! in a store (`--db sqlite:PATH` or `--db postgres://…`), and prune old idempotency keys.
//!
//! Invariant: message text goes through untouched. Each message is read as its own bytes
//! (an element of the array, or a line of JSON Lines) with only the white space between
//! tokens taken out, so numbers, escapes, key order and duplicate keys are kept exactly,
//! and it is printed back from the stored text; nothing here parses a message into a
//! value and writes it out again.

use std::collections::HashMap;
use std::io;

use clap::{Args, Subcommand};
use mend::canonical::Conversation;
use mend::{CheckOptions, Dialect, Severity, Violation};
use mend_store::{
    default_db_url, AnyStore, AppendOptions, Appended, ConversationInfo, Error, Format,
    ListOptions, NewConversation, NewMessage, OnViolation, Span, Store, StoredMessage, Validation,
};
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

use crate::input::Source;
use crate::printer::Printer;
use crate::Status;

/// `mend store`'s arguments.
#[derive(Debug, Args)]
pub struct StoreArgs {
    /// The store: sqlite:PATH or postgres://USER@HOST:PORT/DB[?schema=NAME]
    /// [default: sqlite:$XDG_DATA_HOME/mend/mend.db, or ~/.local/share/mend/mend.db]
    #[arg(long, value_name = "URL", global = true, env = "MEND_DB")]
    db: Option<String>,
    #[command(subcommand)]
    command: StoreCommand,
}

#[derive(Debug, Subcommand)]
enum StoreCommand {
    /// Create an empty conversation and print its id
    #[command(after_help = "Example:\n  mend store create --dialect anthropic")]
    Create {
        /// Its id [default: a fresh UUID]
        #[arg(long, value_name = "ID")]
        id: Option<String>,
        /// The dialect its messages are written in (wire messages of that dialect), or
        /// with --canonical the dialect they are read from
        #[arg(long, value_name = "DIALECT")]
        dialect: Option<String>,
        /// Keep canonical messages (mend's model), which load --as renders for any dialect
        #[arg(long)]
        canonical: bool,
        /// Who it belongs to (the gateway's scope of a caller: cred:HEX, tenant:NAME,
        /// anonymous) [default: unscoped, taken by the first caller that names it]
        #[arg(long, value_name = "SCOPE")]
        scope: Option<String>,
        /// Print the conversation as JSON
        #[arg(long)]
        json: bool,
    },
    /// Append messages to a conversation (created if it does not exist)
    #[command(
        long_about = "Append messages to a conversation, created if it does not exist.\n\n\
            The input is a JSON array of messages, one message, a request body (its \
            history is taken: messages, input or contents), or with --jsonl one message \
            per line. Each message is stored as its exact tokens and gets the next \
            sequence numbers of the conversation; the append is all or nothing. A \
            conversation of canonical messages (--canonical) stores the input read \
            through mend's canonical model instead (a request body's system \
            instructions included). With \
            --key, an append whose key the conversation has seen writes nothing and \
            answers the first append's sequences.\n\n\
            Exit codes: 0 appended (or replayed), 1 refused by --validate reject, 2 bad \
            input, an unknown conversation format, or a store error.",
        after_help = "Example:\n  mend store append chat-42 turn.json --dialect openai_chat --key turn-7 --validate reject"
    )]
    Append(AppendArgs),
    /// Print a conversation's messages, or a request body with --as
    #[command(
        long_about = "Print a conversation's messages exactly as appended: a JSON array, \
            or with --meta an array of {seq, id, role, appended_at_ms, message}.\n\n\
            With --as DIALECT, print a request body of that dialect, ready to send: the \
            history under its key (messages, input or contents), the --request file's \
            fields around it, --model, and for Anthropic max_tokens and, when the \
            history holds thinking, thinking enabled. Messages of that dialect are placed \
            as stored; canonical messages, or another dialect's, are converted through \
            mend's canonical model (a part the target cannot carry stops it with exit \
            2). The body is checked; findings go to stderr.\n\n\
            Exit codes: 0 printed (and valid with --as), 1 the body has violations, 2 \
            bad input or a store error.",
        after_help = "Example:\n  mend store load chat-42 --as openai_chat --model gpt-4o > request.json"
    )]
    Load(LoadArgs),
    /// List conversations in creation order
    #[command(after_help = "Example:\n  mend store list --limit 20")]
    List {
        /// At most this many
        #[arg(long, value_name = "N")]
        limit: Option<u32>,
        /// Only those created after this one
        #[arg(long, value_name = "ID")]
        after: Option<String>,
        /// Only those of this scope (cred:HEX, tenant:NAME, anonymous, unscoped)
        #[arg(long, value_name = "SCOPE")]
        scope: Option<String>,
        /// A JSON array
        #[arg(long)]
        json: bool,
    },
    /// Copy a conversation's messages up to a sequence into a new conversation
    #[command(after_help = "Example:\n  mend store fork chat-42 12 --id chat-42-retry")]
    Fork {
        /// The conversation
        conversation: String,
        /// The last sequence to copy (0: an empty fork)
        at: u64,
        /// The new conversation's id [default: a fresh UUID]
        #[arg(long, value_name = "ID")]
        id: Option<String>,
        /// Print the new conversation as JSON
        #[arg(long)]
        json: bool,
    },
    /// Delete a conversation (its forks stay)
    #[command(after_help = "Example:\n  mend store delete chat-42")]
    Delete {
        /// The conversation
        conversation: String,
    },
    /// Forget idempotency keys older than an age, in every conversation
    #[command(
        long_about = "Forget the idempotency keys of every conversation that are older \
            than --older-than (default 7d, the store's key lifetime). Messages are never \
            touched.\n\n\
            Keys live for a bounded time: an append with a key the conversation saw \
            within the last 7 days writes nothing and answers the first append's \
            sequences; an older key is forgotten, and an append with it writes again. \
            Each append forgets its own conversation's expired keys as it goes; this \
            command clears those of conversations nobody appends to any more (run it \
            from cron, say).",
        after_help = "Example:\n  mend store prune --older-than 24h"
    )]
    Prune {
        /// The age: a number with s, m, h or d
        #[arg(long, value_name = "AGE", default_value = "7d")]
        older_than: String,
    },
    /// Print conversations as JSON Lines, one conversation with its messages per line
    #[command(
        after_help = "Example:\n  mend store export > backup.jsonl\n  mend store export chat-42"
    )]
    Export {
        /// Conversations to export [default: all]
        conversations: Vec<String>,
    },
}

#[derive(Debug, Args)]
struct AppendArgs {
    /// The conversation
    conversation: String,
    /// A file, or `-` for stdin
    #[arg(value_name = "FILE|-", default_value = "-")]
    input: String,
    /// The dialect of the messages; recorded when the conversation is created, and
    /// checked against it when it exists
    #[arg(long, value_name = "DIALECT")]
    dialect: Option<String>,
    /// When the conversation is created here: keep canonical messages (read from the
    /// input's dialect), which load --as renders for any dialect
    #[arg(long)]
    canonical: bool,
    /// Idempotency key: an append with a key the conversation has seen writes nothing
    #[arg(long, value_name = "KEY")]
    key: Option<String>,
    /// Check the history the append leaves: reject or warn (needs a dialect)
    #[arg(long, value_name = "MODE")]
    validate: Option<String>,
    /// Provider profile for --validate
    #[arg(long, value_name = "PROVIDER")]
    provider: Option<String>,
    /// Model for --validate
    #[arg(long, value_name = "MODEL")]
    model: Option<String>,
    /// The input holds one message per line
    #[arg(long)]
    jsonl: bool,
    /// One JSON object on stdout: {conversation, created, sequences, replayed, findings}
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
struct LoadArgs {
    /// The conversation
    conversation: String,
    /// The first sequence
    #[arg(long, value_name = "SEQ", default_value_t = 1)]
    from: u64,
    /// The last sequence [default: the end]
    #[arg(long, value_name = "SEQ")]
    to: Option<u64>,
    /// Print a request body of this dialect
    #[arg(long = "as", value_name = "DIALECT")]
    as_dialect: Option<String>,
    /// The model, for --as
    #[arg(long, value_name = "MODEL")]
    model: Option<String>,
    /// Provider profile to check the --as body with
    #[arg(long, value_name = "PROVIDER")]
    provider: Option<String>,
    /// A JSON object of request fields to put around the history, for --as
    #[arg(long, value_name = "FILE")]
    request: Option<String>,
    /// Each message with its sequence, id, role and time
    #[arg(long)]
    meta: bool,
}

/// Why a store command stopped: the status, after its line on stderr.
struct Stop(Status);

type Outcome<T> = Result<T, Stop>;

fn usage(printer: &mut Printer, why: impl std::fmt::Display) -> Stop {
    printer.err_line(&format!("mend: {why}"));
    Stop(Status::BadInput)
}

fn failed(printer: &mut Printer, e: &Error) -> Stop {
    if let Error::Rejected { violations, .. } = e {
        printer.err_line("mend: store: append rejected, nothing written:");
        for v in violations {
            printer.err_line(&finding_line(v));
        }
        return Stop(Status::Violations);
    }
    printer.err_line(&format!("mend: store: {e}"));
    Stop(Status::BadInput)
}

fn finding_line(v: &Violation) -> String {
    let mut s = format!(
        "  {} {}[{}] {}",
        if v.path.is_empty() { "(body)" } else { &v.path },
        v.severity.as_str(),
        v.rule,
        v.message
    );
    if let Some(said) = &v.provider_error {
        s.push_str(&format!("\n    provider says: \"{said}\""));
    }
    s
}

fn parse_dialect(printer: &mut Printer, name: &str) -> Outcome<Dialect> {
    name.parse::<Dialect>().map_err(|e| usage(printer, e))
}

/// Run `mend store ...`.
pub fn run(args: StoreArgs, printer: &mut Printer) -> io::Result<Status> {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => return Ok(usage(printer, format!("cannot start: {e}")).0),
    };
    let outcome = runtime.block_on(async {
        let db = match args.db.or_else(default_db_url) {
            Some(db) => db,
            None => {
                return Err(usage(
                    printer,
                    "no --db given, and neither XDG_DATA_HOME nor HOME says where the default store goes",
                ))
            }
        };
        let store = AnyStore::open(&db).await.map_err(|e| failed(printer, &e))?;
        dispatch(&store, args.command, printer).await
    });
    match outcome {
        Ok(()) => Ok(Status::Valid),
        Err(Stop(status)) => Ok(status),
    }
}

/// An output write that failed is reported by `main` (a closed pipe is not a failure).
fn out(printer: &mut Printer, text: &str) -> Outcome<()> {
    printer.out(text).map_err(|e| {
        if e.kind() == io::ErrorKind::BrokenPipe {
            Stop(Status::Valid)
        } else {
            usage(printer, format!("cannot write output: {e}"))
        }
    })
}

async fn dispatch(store: &AnyStore, command: StoreCommand, printer: &mut Printer) -> Outcome<()> {
    match command {
        StoreCommand::Create {
            id,
            dialect,
            canonical,
            scope,
            json,
        } => {
            let dialect = match dialect {
                Some(d) => Some(parse_dialect(printer, &d)?),
                None => None,
            };
            let format = match (canonical, dialect) {
                (true, d) => Format::Canonical(d),
                (false, Some(d)) => Format::Wire(d),
                (false, None) => Format::Any,
            };
            let mut new = NewConversation {
                id,
                format,
                ..NewConversation::default()
            };
            if let Some(scope) = scope {
                new.scope = scope;
            }
            let info = store.create(new).await.map_err(|e| failed(printer, &e))?;
            print_info(printer, &info, json)
        }
        StoreCommand::Append(args) => append(store, args, printer).await,
        StoreCommand::Load(args) => load(store, args, printer).await,
        StoreCommand::List {
            limit,
            after,
            scope,
            json,
        } => {
            let all = store
                .list(&ListOptions {
                    limit,
                    after,
                    scope,
                })
                .await
                .map_err(|e| failed(printer, &e))?;
            if json {
                let rows: Vec<Value> = all.iter().map(info_json).collect();
                return out(printer, &format!("{}\n", pretty(&Value::Array(rows))));
            }
            let mut text = format!(
                "{:<38} {:>8}  {:<17} {:<37} {}\n",
                "ID", "MESSAGES", "FORMAT", "SCOPE", "FORKED FROM"
            );
            for c in &all {
                let from = c.forked_from.as_ref().map_or(String::new(), |f| {
                    format!("{}@{}", f.conversation, f.at_sequence)
                });
                text.push_str(&format!(
                    "{:<38} {:>8}  {:<17} {:<37} {from}\n",
                    c.id,
                    c.last_sequence,
                    c.format.name(),
                    c.scope
                ));
            }
            out(printer, &text)
        }
        StoreCommand::Fork {
            conversation,
            at,
            id,
            json,
        } => {
            let info = store
                .fork(&conversation, at, id.as_deref())
                .await
                .map_err(|e| failed(printer, &e))?;
            print_info(printer, &info, json)
        }
        StoreCommand::Delete { conversation } => {
            let gone = store
                .delete(&conversation)
                .await
                .map_err(|e| failed(printer, &e))?;
            if !gone {
                return Err(failed(printer, &Error::NotFound(conversation)));
            }
            out(printer, &format!("deleted {conversation}\n"))
        }
        StoreCommand::Export { conversations } => export(store, conversations, printer).await,
        StoreCommand::Prune { older_than } => {
            let age = parse_age(&older_than)
                .map_err(|why| usage(printer, format!("--older-than: {why}")))?;
            let gone = store
                .prune_keys(age)
                .await
                .map_err(|e| failed(printer, &e))?;
            out(
                printer,
                &format!("forgot {gone} idempotency keys older than {older_than}\n"),
            )
        }
    }
}

/// `90s`, `15m`, `24h`, `7d`.
fn parse_age(s: &str) -> Result<std::time::Duration, String> {
    let s = s.trim();
    let (n, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()));
    let n: u64 = n
        .parse()
        .map_err(|_| format!("'{s}' is not an age (a number with s, m, h or d: 24h, 7d)"))?;
    let secs = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        "" => return Err(format!("'{s}' has no unit (s, m, h or d: 24h, 7d)")),
        _ => {
            return Err(format!(
                "'{s}': '{unit}' is not a unit (s, m, h or d: 24h, 7d)"
            ))
        }
    };
    Ok(std::time::Duration::from_secs(n.saturating_mul(secs)))
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

fn info_json(c: &ConversationInfo) -> Value {
    json!({
        "id": c.id,
        "format": c.format.name(),
        "created_at_ms": c.created_at_ms,
        "last_sequence": c.last_sequence,
        "scope": c.scope,
        "forked_from": c.forked_from.as_ref().map(|f| json!({
            "conversation": f.conversation, "at_sequence": f.at_sequence})),
    })
}

fn print_info(printer: &mut Printer, info: &ConversationInfo, json: bool) -> Outcome<()> {
    if json {
        out(printer, &format!("{}\n", pretty(&info_json(info))))
    } else {
        out(printer, &format!("{}\n", info.id))
    }
}

/// What an input held.
struct Input {
    /// Its messages, each with its exact tokens.
    messages: Vec<NewMessage>,
    /// The dialect the input is written in, when it was given or a body shows it.
    dialect: Option<Dialect>,
    /// The input, when it was a whole request body.
    body: Option<Value>,
    /// The body's fields other than its history.
    left: Vec<String>,
}

/// Read the messages of an input: an array, one message, a request body, or JSON Lines.
fn read_messages(bytes: &[u8], dialect: Option<Dialect>, jsonl: bool) -> Result<Input, String> {
    let text = std::str::from_utf8(bytes).map_err(|e| format!("invalid UTF-8: {e}"))?;
    let index = |e: Error, i: usize| match e {
        Error::InvalidMessage { reason, .. } => format!("message {i}: {reason}"),
        other => other.to_string(),
    };
    let mut input = Input {
        messages: Vec::new(),
        dialect,
        body: None,
        left: Vec::new(),
    };
    if jsonl {
        for (n, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let m = NewMessage::from_json(minify(line))
                .map_err(|e| format!("line {}: {}", n + 1, index(e, input.messages.len())))?;
            input.messages.push(m);
        }
        return Ok(input);
    }
    let value = mend::parse_body(bytes).map_err(|e| e.to_string())?;
    let raws: Vec<&RawValue> = match &value {
        Value::Array(_) => serde_json::from_str(text).map_err(|e| e.to_string())?,
        Value::Object(obj) => {
            let key = match dialect {
                Some(d) => obj.contains_key(d.history_key()).then(|| d.history_key()),
                None => ["messages", "input", "contents"]
                    .into_iter()
                    .find(|k| obj.get(*k).is_some_and(Value::is_array)),
            };
            match key {
                Some(key) => {
                    let fields: HashMap<&str, &RawValue> =
                        serde_json::from_str(text).map_err(|e| e.to_string())?;
                    let history = fields.get(key).map_or("[]", |r| r.get());
                    input.dialect = dialect.or_else(|| mend::detect_dialect(&value).ok());
                    input.left = obj.keys().filter(|k| *k != key).cloned().collect();
                    serde_json::from_str(history).map_err(|_| {
                        format!("/{key} is not an array of messages (a string `input` cannot be stored)")
                    })?
                }
                None => vec![serde_json::from_str(text).map_err(|e| e.to_string())?],
            }
        }
        other => {
            return Err(format!(
                "expected messages (an array, a message, or a request body), found {}",
                mend::json_kind(other)
            ))
        }
    };
    input.messages = raws
        .iter()
        .enumerate()
        .map(|(i, r)| NewMessage::from_json(minify(r.get())).map_err(|e| index(e, i)))
        .collect::<Result<Vec<_>, _>>()?;
    if !input.left.is_empty() {
        input.body = Some(value);
    }
    Ok(input)
}

/// An input's messages read into canonical messages, as if it were a request of `dialect`.
fn canonical_messages(input: &mut Input, dialect: Dialect) -> Result<Vec<NewMessage>, String> {
    let body = match input.body.take() {
        Some(b) => b,
        None => {
            let history = input
                .messages
                .iter()
                .map(|m| serde_json::from_str::<Value>(m.json()).map_err(|e| e.to_string()))
                .collect::<Result<Vec<_>, _>>()?;
            json!({ dialect.history_key(): history })
        }
    };
    let conv = Conversation::from_request(dialect, &body).map_err(|e| e.to_string())?;
    input.left = conv.request.keys().cloned().collect();
    conv.messages
        .iter()
        .enumerate()
        .map(|(i, m)| NewMessage::from_canonical(m).map_err(|e| format!("message {i}: {e}")))
        .collect()
}

async fn append(store: &AnyStore, args: AppendArgs, printer: &mut Printer) -> Outcome<()> {
    let given = match &args.dialect {
        Some(d) => Some(parse_dialect(printer, d)?),
        None => None,
    };
    let on_violation = parse_on_violation(printer, args.validate.as_deref())?;
    let source = if args.input == "-" {
        Source::Stdin
    } else {
        Source::File(args.input.clone().into())
    };
    let label = source.label();
    let bytes = source
        .read()
        .map_err(|b| usage(printer, format!("{label}: {b}")))?;
    let mut input = read_messages(&bytes, given, args.jsonl)
        .map_err(|why| usage(printer, format!("{label}: {why}")))?;
    let existing = match store.info(&args.conversation).await {
        Ok(info) => Some(info),
        Err(Error::NotFound(_)) => None,
        Err(e) => return Err(failed(printer, &e)),
    };
    let wire = input.dialect;
    let format = match &existing {
        Some(info) => info.format,
        None if args.canonical => Format::Canonical(wire),
        None => wire.map_or(Format::Any, Format::Wire),
    };
    let messages = messages_to_store(printer, &args.conversation, &label, &mut input, format)?;
    if !input.left.is_empty() {
        printer.err_line(&format!(
            "mend: {label}: stored the history only; not stored: {}",
            input.left.join(", ")
        ));
    }
    let dialect = given.or(match format {
        Format::Wire(d) => Some(d),
        Format::Canonical(from) => from,
        Format::Any => None,
    });
    let validation = validation_for(printer, &args, on_violation, dialect.or(wire))?;
    let created = existing.is_none()
        && create_conversation(store, printer, &args.conversation, format).await?;
    let options = AppendOptions {
        idempotency_key: args.key.clone(),
        validation,
        ..AppendOptions::default()
    };
    let done = store
        .append(&args.conversation, &messages, &options)
        .await
        .map_err(|e| failed(printer, &e))?;
    report_append(printer, &args, created, &done, messages.len())
}

/// `--validate`: what a violation does to the append (`None`: not checked).
fn parse_on_violation(printer: &mut Printer, given: Option<&str>) -> Outcome<Option<OnViolation>> {
    match given {
        None => Ok(None),
        Some("reject") => Ok(Some(OnViolation::Reject)),
        Some("warn") => Ok(Some(OnViolation::Warn)),
        Some(other) => Err(usage(
            printer,
            format!("unknown --validate '{other}' (expected reject or warn)"),
        )),
    }
}

/// The input's messages as the conversation stores them: as they came for a wire
/// conversation of the same dialect (or one of any format), read into canonical messages
/// for a canonical one. A dialect the conversation does not hold is refused.
fn messages_to_store(
    printer: &mut Printer,
    conv: &str,
    label: &str,
    input: &mut Input,
    format: Format,
) -> Outcome<Vec<NewMessage>> {
    match (format, input.dialect) {
        (Format::Wire(have), Some(d)) if have != d => Err(usage(
            printer,
            format!("conversation '{conv}' holds {have} messages, not {d}"),
        )),
        (Format::Canonical(Some(from)), Some(d)) if from != d => Err(usage(
            printer,
            format!("conversation '{conv}' holds canonical messages read from {from}; {d} messages would mix in {d}'s wire details"),
        )),
        (Format::Canonical(_), Some(d)) => canonical_messages(input, d)
            .map_err(|why| usage(printer, format!("{label}: {why}"))),
        (Format::Canonical(_), None) => {
            // No dialect to read them from: they must be canonical messages already.
            for (i, m) in input.messages.iter().enumerate() {
                if let Err(e) = serde_json::from_str::<mend::canonical::Message>(m.json()) {
                    return Err(usage(
                        printer,
                        format!("{label}: message {i} is not a canonical message ({e}); give --dialect to read wire messages"),
                    ));
                }
            }
            Ok(std::mem::take(&mut input.messages))
        }
        _ => Ok(std::mem::take(&mut input.messages)),
    }
}

/// The store's check of the appended history, when `--validate` asks for one; it needs
/// a dialect.
fn validation_for(
    printer: &mut Printer,
    args: &AppendArgs,
    on_violation: Option<OnViolation>,
    dialect: Option<Dialect>,
) -> Outcome<Option<Validation>> {
    match (on_violation, dialect) {
        (None, _) => Ok(None),
        (Some(mode), Some(d)) => {
            let mut v = Validation::new(d);
            v.on_violation = mode;
            v.provider = args.provider.clone();
            v.model = args.model.clone();
            Ok(Some(v))
        }
        (Some(_), None) => Err(usage(
            printer,
            "--validate needs a dialect: give --dialect, or append to a conversation created with one",
        )),
    }
}

/// Create the conversation the append goes to; whether this call created it (someone
/// else may have made it meanwhile: the append then goes to theirs).
async fn create_conversation(
    store: &AnyStore,
    printer: &mut Printer,
    conv: &str,
    format: Format,
) -> Outcome<bool> {
    let new = NewConversation::with_id(conv).format(format);
    match store.create(new).await {
        Ok(_) => Ok(true),
        Err(Error::AlreadyExists(_)) => Ok(false),
        Err(e) => Err(failed(printer, &e)),
    }
}

/// What the append did: the store's findings on stderr, then the sequences written (or
/// the replay of an earlier append with the same key), as text or JSON.
fn report_append(
    printer: &mut Printer,
    args: &AppendArgs,
    created: bool,
    done: &Appended,
    count: usize,
) -> Outcome<()> {
    for f in &done.findings {
        printer.err_line(&format!(
            "mend: {}: {}",
            args.conversation,
            finding_line(f).trim_start()
        ));
    }
    if args.json {
        let report = json!({
            "conversation": args.conversation,
            "created": created,
            "sequences": done.sequences,
            "replayed": done.replayed,
            "findings": done.findings.iter().map(|v| serde_json::to_value(v).unwrap_or(Value::Null)).collect::<Vec<_>>(),
        });
        return out(printer, &format!("{}\n", pretty(&report)));
    }
    let range = match (done.sequences.first(), done.sequences.last()) {
        (Some(a), Some(b)) if a == b => format!("sequence {a}"),
        (Some(a), Some(b)) => format!("sequences {a}..{b}"),
        _ => "no sequences".to_string(),
    };
    let what = if done.replayed {
        format!(
            "{}: key {} was already appended as {range}; nothing written\n",
            args.conversation,
            args.key.as_deref().unwrap_or("")
        )
    } else {
        format!(
            "{}: appended {count} message{} as {range}\n",
            args.conversation,
            if count == 1 { "" } else { "s" }
        )
    };
    out(printer, &what)
}

/// JSON text without the white space between its tokens; the tokens themselves (string
/// escapes, number spellings) untouched. The input is valid JSON.
fn minify(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in text.chars() {
        if in_string {
            out.push(c);
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if !matches!(c, ' ' | '\n' | '\r' | '\t') {
            out.push(c);
        }
    }
    out
}

/// `[raw, raw, ...]` with each message's stored text (on one line each: a message
/// appended with line breaks between its tokens loses them here).
fn raw_array(messages: &[StoredMessage], sep: &str) -> String {
    let mut s = String::with_capacity(messages.iter().map(|m| m.raw.len() + 2).sum::<usize>() + 4);
    s.push('[');
    for (i, m) in messages.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push_str(sep);
        if m.raw.contains(['\n', '\r']) {
            s.push_str(&minify(&m.raw));
        } else {
            s.push_str(&m.raw);
        }
    }
    if !messages.is_empty() {
        s.push_str(sep);
    }
    s.push(']');
    s
}

async fn load(store: &AnyStore, args: LoadArgs, printer: &mut Printer) -> Outcome<()> {
    let span = Span {
        from: args.from,
        to: args.to,
    };
    let Some(name) = &args.as_dialect else {
        let messages = store
            .load(&args.conversation, span)
            .await
            .map_err(|e| failed(printer, &e))?;
        if !args.meta {
            return out(printer, &format!("{}\n", raw_array(&messages, "\n")));
        }
        let mut text = String::from("[");
        for (i, m) in messages.iter().enumerate() {
            let head = json!({"seq": m.seq, "id": m.id, "role": m.role, "appended_at_ms": m.appended_at_ms});
            let head = serde_json::to_string(&head).unwrap_or_default();
            let head = head.strip_suffix('}').unwrap_or(&head);
            text.push_str(if i == 0 { "\n" } else { ",\n" });
            text.push_str(&format!("{head},\"message\":{}}}", minify(&m.raw)));
        }
        text.push_str(if messages.is_empty() { "]\n" } else { "\n]\n" });
        return out(printer, &text);
    };
    let dialect = parse_dialect(printer, name)?;
    let info = store
        .info(&args.conversation)
        .await
        .map_err(|e| failed(printer, &e))?;
    let request = match &args.request {
        None => Map::new(),
        Some(path) => {
            let bytes = Source::File(path.into())
                .read()
                .map_err(|b| usage(printer, format!("{path}: {b}")))?;
            match mend::parse_body(&bytes) {
                Ok(Value::Object(m)) => m,
                Ok(other) => {
                    return Err(usage(
                        printer,
                        format!(
                            "{path}: --request is a JSON object, not {}",
                            mend::json_kind(&other)
                        ),
                    ))
                }
                Err(e) => return Err(usage(printer, format!("{path}: {e}"))),
            }
        }
    };
    let messages = store
        .load(&args.conversation, span)
        .await
        .map_err(|e| failed(printer, &e))?;
    let values = mend_store::values(&messages).map_err(|e| {
        usage(
            printer,
            format!(
                "conversation '{}': a stored message does not parse: {e}",
                args.conversation
            ),
        )
    })?;
    let exact = matches!(info.format, Format::Any) || info.format == Format::Wire(dialect);
    let (body, notes) = mend_store::render::render_converted(
        info.format,
        values,
        dialect,
        &request,
        args.model.as_deref(),
    )
    .map_err(|e| failed(printer, &e))?;
    // What a conversion from the stored dialect could not carry, as `mend convert` says it.
    for n in &notes {
        printer.err_line(&format!(
            "mend: {}: {} {}[{}] {}",
            args.conversation,
            n.path,
            n.kind.as_str(),
            n.what,
            n.detail
        ));
    }
    // Messages already of this dialect are printed with their stored bytes in place;
    // converted ones as the writer made them.
    let text = if exact {
        splice(&body, dialect.history_key(), &raw_array(&messages, ""))
    } else {
        body.to_string()
    };
    let opts = CheckOptions {
        dialect: Some(dialect),
        provider: args.provider.clone(),
        model: args.model.clone(),
        endpoint: None,
    };
    let report = mend::check_value(&body, &opts).map_err(|e| usage(printer, e))?;
    out(printer, &format!("{text}\n"))?;
    for v in &report.violations {
        printer.err_line(&format!(
            "mend: {}: {}",
            args.conversation,
            finding_line(v).trim_start()
        ));
    }
    if report
        .violations
        .iter()
        .any(|v| v.severity == Severity::Error)
    {
        return Err(Stop(Status::Violations));
    }
    Ok(())
}

/// The body as compact JSON, with `history` (exact text) as the value of `key`.
fn splice(body: &Value, key: &str, history: &str) -> String {
    let Value::Object(fields) = body else {
        return body.to_string();
    };
    let mut s = String::from("{");
    for (i, (k, v)) in fields.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push_str(&Value::String(k.clone()).to_string());
        s.push(':');
        if k == key {
            s.push_str(history);
        } else {
            s.push_str(&v.to_string());
        }
    }
    s.push('}');
    s
}

async fn export(store: &AnyStore, ids: Vec<String>, printer: &mut Printer) -> Outcome<()> {
    let mut infos = Vec::new();
    if ids.is_empty() {
        let mut after = None;
        loop {
            let page = store
                .list(&ListOptions {
                    limit: Some(500),
                    after: after.clone(),
                    ..ListOptions::default()
                })
                .await
                .map_err(|e| failed(printer, &e))?;
            let Some(last) = page.last() else { break };
            after = Some(last.id.clone());
            infos.extend(page);
        }
    } else {
        for id in &ids {
            infos.push(store.info(id).await.map_err(|e| failed(printer, &e))?);
        }
    }
    for info in infos {
        let messages = match store.load(&info.id, Span::ALL).await {
            Ok(m) => m,
            // Deleted since it was listed.
            Err(Error::NotFound(_)) if ids.is_empty() => continue,
            Err(e) => return Err(failed(printer, &e)),
        };
        let mut head = info_json(&info);
        if let Value::Object(m) = &mut head {
            m.insert("messages".into(), Value::Array(Vec::new()));
        }
        let line = splice(&head, "messages", &raw_array(&messages, ""));
        out(printer, &format!("{line}\n"))?;
    }
    Ok(())
}
