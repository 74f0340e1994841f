//! Trim benchmark driver, used by `bench/trim-vs-langchain.sh`.
//!
//! ```text
//! cargo run --release -p mend --example trim_bench -- [--reps N] [--keep-last K]
//!     [--protect P] [--bodies-out FILE] corpus.jsonl
//! cargo run --release -p mend --example trim_bench -- check bodies.jsonl
//! cargo run --release -p mend --example trim_bench -- first --index I corpus.jsonl
//! cargo run --release -p mend --example trim_bench -- [--reps N] counts items.jsonl
//! ```
//!
//! Trim mode reads the corpus written by `bench/trim_corpus.py` (one
//! `{"id", "kind", "budget", "body"}` per line), trims each body with `mend::trim::trim`
//! (the body's model, gpt-4o, picks o200k_base), timed in-process: the median of `--reps`
//! runs (default 15; each repetition goes round the whole corpus, so a conversation is not
//! timed with the tables its previous run warmed) after a warm-up pass over the whole
//! corpus, so the tokenizer is loaded before anything is timed. `trim` keeps no counts between calls, so each of
//! those runs is what a first call on a new history costs in a process that has its
//! tokenizer loaded ("cold"). It also times `trim_with_cache` with a warm cache (the
//! gateway case: the same conversation trimmed again), and, in a pass of its own after
//! each cold round, counting alone (`micros_count`): every history item and request field
//! through the counter trim picks, as a cold trim counts them, no check and no output,
//! the floor of a cold trim; and in the same pass counting with the two checks a trim
//! makes (`micros_count_checked`: `check_value` of the input and of the trimmed output,
//! made before any timing), the floor of a trim that verifies what it hands on. The
//! output of each trim is judged with `mend::check_value`.
//! One JSON line per conversation on stdout.
//!
//! First mode times the very first `trim` of a process (record `--index` of the corpus,
//! tokenizer load included: nothing is loaded before it) and prints `{"micros": ...}`;
//! run it in a fresh process per figure.
//!
//! Counts mode reads the items written by `bench/trim_tokenizers.py` (each history item's
//! text with Python tiktoken's `o200k_base` and `cl100k_base` counts), counts every text
//! with mend's counter and with `bpe-openai`'s, and prints one JSON line: the mismatches
//! of each against tiktoken and the median time of a pass over the items (`--reps`
//! rounds, the two alternating). It exits with 1 when mend's counts differ.
//!
//! Check mode reads a JSONL of bodies (or of `{"id", "body"}` records) and prints one JSON
//! line per body: id, valid, and the rule ids and paths of its error-severity findings.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::time::Instant;

use mend::trim::{trim, trim_with_cache, Counter, TokenCache, TrimOptions};
use mend::{CheckOptions, Dialect, Severity};
use serde_json::{json, Value};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// The allocator mend runs on where it ships as a program or an extension (the CLI and
/// its gateway, the Python binding), as `report_bench` runs: a trim's checks and its copy
/// of the kept items build and drop trees of small maps and strings.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

struct Args {
    check: bool,
    counts: bool,
    first: Option<usize>,
    reps: usize,
    keep_last: usize,
    protect: usize,
    bodies_out: Option<String>,
    input: String,
}

fn usage() -> String {
    "usage: trim_bench [--reps N] [--keep-last K] [--protect P] [--bodies-out FILE] corpus.jsonl\n       \
     trim_bench check bodies.jsonl\n       \
     trim_bench first --index I corpus.jsonl\n       \
     trim_bench [--reps N] counts items.jsonl"
        .to_string()
}

fn parse_args() -> Res<Args> {
    let mut args = Args {
        check: false,
        counts: false,
        first: None,
        reps: 15,
        keep_last: 1,
        protect: 0,
        bodies_out: None,
        input: String::new(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "check" if args.input.is_empty() && !args.check => args.check = true,
            "counts" if args.input.is_empty() && !args.check => args.counts = true,
            "first" if args.input.is_empty() && !args.check => args.first = Some(0),
            "--index" if args.first.is_some() => {
                args.first = Some(it.next().ok_or_else(usage)?.parse()?)
            }
            "--reps" => args.reps = it.next().ok_or_else(usage)?.parse()?,
            "--keep-last" => args.keep_last = it.next().ok_or_else(usage)?.parse()?,
            "--protect" => args.protect = it.next().ok_or_else(usage)?.parse()?,
            "--bodies-out" => args.bodies_out = Some(it.next().ok_or_else(usage)?),
            "-h" | "--help" => return Err(usage().into()),
            _ if args.input.is_empty() && !a.starts_with('-') => args.input = a,
            _ => return Err(format!("unexpected argument '{a}'\n{}", usage()).into()),
        }
    }
    if args.input.is_empty() {
        return Err(usage().into());
    }
    args.reps = args.reps.max(1);
    Ok(args)
}

fn read_jsonl(path: &str) -> Res<Vec<Value>> {
    let f = std::fs::File::open(path).map_err(|e| format!("{path}: {e}"))?;
    let mut out = Vec::new();
    for (n, line) in BufReader::new(f).lines().enumerate() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(&line).map_err(|e| format!("{path}:{}: {e}", n + 1))?;
        out.push(v);
    }
    Ok(out)
}

/// OpenAI chat, judged with the `openai` profile (the provider the corpus targets).
fn chat_opts() -> CheckOptions {
    CheckOptions {
        dialect: Some(Dialect::OpenAiChat),
        provider: Some("openai".into()),
        ..Default::default()
    }
}

/// Error-severity findings of a body: (valid, rule ids, paths).
fn judge(body: &Value, opts: &CheckOptions) -> Res<(bool, Vec<&'static str>, Vec<String>)> {
    let report = mend::check_value(body, opts)?;
    let errors: Vec<_> = report
        .violations
        .iter()
        .filter(|v| v.severity == Severity::Error)
        .collect();
    Ok((
        errors.is_empty(),
        errors.iter().map(|v| v.rule.id()).collect(),
        errors.iter().map(|v| v.path.clone()).collect(),
    ))
}

fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n == 0 {
        0.0
    } else if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

fn run_check(args: &Args) -> Res<()> {
    let opts = chat_opts();
    let out = std::io::stdout();
    let mut out = BufWriter::new(out.lock());
    for (i, rec) in read_jsonl(&args.input)?.iter().enumerate() {
        let (id, body) = match rec.get("body") {
            Some(b) => (rec.get("id").cloned().unwrap_or(json!(i)), b),
            None => (json!(i), rec),
        };
        let line = match judge(body, &opts) {
            Ok((valid, rules, paths)) => {
                json!({"id": id, "valid": valid, "rules": rules, "paths": paths})
            }
            Err(e) => json!({"id": id, "valid": false, "rules": ["error"], "error": e.to_string()}),
        };
        writeln!(out, "{line}")?;
    }
    out.flush()?;
    Ok(())
}

/// What a cold trim of an OpenAI chat body counts: its messages and the request fields
/// (`tools`, `functions`, `response_format`), with the counter its model picks.
fn counted_items(body: &Value) -> (Counter, Vec<&Value>) {
    let counter = Counter::for_model(
        body.get("model").and_then(Value::as_str),
        Dialect::OpenAiChat,
    );
    let messages = body.get("messages").and_then(Value::as_array);
    let fields = ["tools", "functions", "response_format"]
        .iter()
        .filter_map(|f| body.get(*f).filter(|v| !v.is_null()));
    (
        counter,
        messages.into_iter().flatten().chain(fields).collect(),
    )
}

fn run_trim(args: &Args) -> Res<()> {
    let corpus = read_jsonl(&args.input)?;
    let opts_for = |budget: usize| TrimOptions {
        check: chat_opts(),
        budget,
        keep_last: args.keep_last,
        protect: args.protect,
    };
    let budget_of = |rec: &Value| -> Res<usize> {
        let b = rec
            .get("budget")
            .and_then(Value::as_u64)
            .ok_or("a corpus record has no integer `budget`")?;
        Ok(usize::try_from(b)?)
    };

    // Warm-up: load the tokenizer singleton and fault in the code paths.
    for rec in &corpus {
        let body = rec.get("body").ok_or("a corpus record has no `body`")?;
        std::hint::black_box(trim(body, &opts_for(budget_of(rec)?))?);
    }

    let out = std::io::stdout();
    let mut out = BufWriter::new(out.lock());
    let mut bodies_out = match &args.bodies_out {
        Some(p) => Some(BufWriter::new(
            std::fs::File::create(p).map_err(|e| format!("{p}: {e}"))?,
        )),
        None => None,
    };
    let mut mismatched_counts = 0usize;
    // Cold timings go round the whole corpus once per repetition, so a conversation's
    // second run does not find the tokenizer's tables hot from its first.
    // Counting alone goes round in a pass of its own after each of them, for the same
    // reason.
    let mut cold: Vec<Vec<f64>> = vec![Vec::with_capacity(args.reps); corpus.len()];
    let mut counting: Vec<Vec<f64>> = vec![Vec::with_capacity(args.reps); corpus.len()];
    let mut counting_checked: Vec<Vec<f64>> = vec![Vec::with_capacity(args.reps); corpus.len()];
    let items: Vec<(Counter, Vec<&Value>)> = corpus
        .iter()
        .map(|rec| rec.get("body").map(counted_items))
        .collect::<Option<_>>()
        .ok_or("a corpus record has no `body`")?;
    // What each trim hands on, for the floor's second check.
    let outputs: Vec<Value> = corpus
        .iter()
        .map(|rec| {
            let body = rec.get("body").ok_or("a corpus record has no `body`")?;
            Ok(trim(body, &opts_for(budget_of(rec)?))?.body)
        })
        .collect::<Res<_>>()?;
    let check_opts = chat_opts();
    for _ in 0..args.reps {
        for (rec, times) in corpus.iter().zip(cold.iter_mut()) {
            let body = rec.get("body").ok_or("a corpus record has no `body`")?;
            let opts = opts_for(budget_of(rec)?);
            let t0 = Instant::now();
            std::hint::black_box(trim(std::hint::black_box(body), &opts)?);
            times.push(t0.elapsed().as_secs_f64() * 1e6);
        }
        for ((counter, its), times) in items.iter().zip(counting.iter_mut()) {
            let t0 = Instant::now();
            std::hint::black_box(counter.count_items(std::hint::black_box(its).iter().copied()));
            times.push(t0.elapsed().as_secs_f64() * 1e6);
        }
        for (((rec, (counter, its)), output), times) in corpus
            .iter()
            .zip(&items)
            .zip(&outputs)
            .zip(counting_checked.iter_mut())
        {
            let body = rec.get("body").ok_or("a corpus record has no `body`")?;
            let t0 = Instant::now();
            std::hint::black_box(mend::check_value(std::hint::black_box(body), &check_opts)?);
            std::hint::black_box(counter.count_items(std::hint::black_box(its).iter().copied()));
            std::hint::black_box(mend::check_value(
                std::hint::black_box(output),
                &check_opts,
            )?);
            times.push(t0.elapsed().as_secs_f64() * 1e6);
        }
    }
    for ((((rec, mut times), mut count_times), mut checked_times), (counter, its)) in corpus
        .iter()
        .zip(cold)
        .zip(counting)
        .zip(counting_checked)
        .zip(&items)
    {
        let body = rec.get("body").ok_or("a corpus record has no `body`")?;
        let id = rec.get("id").cloned().unwrap_or(Value::Null);
        let opts = opts_for(budget_of(rec)?);
        let t = trim(body, &opts)?;

        let mut cache = TokenCache::default();
        trim_with_cache(body, &opts, &mut cache)?;
        let mut cached = Vec::with_capacity(args.reps);
        for _ in 0..args.reps {
            let t0 = Instant::now();
            std::hint::black_box(trim_with_cache(
                std::hint::black_box(body),
                &opts,
                &mut cache,
            )?);
            cached.push(t0.elapsed().as_secs_f64() * 1e6);
        }

        let (valid, rules, paths) = judge(&t.body, &opts.check)?;
        let input = body
            .get("messages")
            .and_then(Value::as_array)
            .ok_or("a body has no `messages` array")?;
        let kept = t
            .body
            .get("messages")
            .and_then(Value::as_array)
            .ok_or("the trimmed body has no `messages` array")?;
        let has_user = kept.iter().any(|m| m.get("role") == Some(&json!("user")));
        let last_kept = kept.last() == input.last();
        if let Some(expected) = rec.get("tokens").and_then(Value::as_u64) {
            if usize::try_from(expected).ok() != Some(t.tokens_before) {
                mismatched_counts += 1;
            }
        }
        // Counting alone counts what the trim counted.
        let counted = counter.count_items(its.iter().copied());
        if counted != t.tokens_before {
            return Err(format!(
                "{id}: counting alone gives {counted} tokens, the trim {}",
                t.tokens_before
            )
            .into());
        }
        let line = json!({
            "id": id,
            "kind": rec.get("kind"),
            "micros": median(&mut times),
            "micros_cached": median(&mut cached),
            "micros_count": median(&mut count_times),
            "micros_count_checked": median(&mut checked_times),
            "budget": opts.budget,
            "tokens_before": t.tokens_before,
            "tokens_after": t.tokens_after,
            "over_budget": t.over_budget,
            "messages_before": input.len(),
            "messages_kept": kept.len(),
            "units_dropped": t.dropped.len(),
            "has_user": has_user,
            "last_kept": last_kept,
            "valid": valid && t.violations.is_empty(),
            "rules": rules,
            "paths": paths,
            "counter": t.counter.name(),
        });
        writeln!(out, "{line}")?;
        if let Some(w) = bodies_out.as_mut() {
            writeln!(w, "{}", json!({"id": id, "body": t.body}))?;
        }
    }
    out.flush()?;
    if let Some(mut w) = bodies_out {
        w.flush()?;
    }
    if mismatched_counts > 0 {
        eprintln!(
            "trim_bench: {mismatched_counts} conversation(s) where mend's tokens_before differs \
             from the corpus' `tokens`"
        );
    }
    Ok(())
}

/// The first trim of the process, on record `index`: tokenizer load included.
fn run_first(args: &Args, index: usize) -> Res<()> {
    let corpus = read_jsonl(&args.input)?;
    let rec = corpus.get(index).ok_or("--index is past the corpus' end")?;
    let body = rec.get("body").ok_or("a corpus record has no `body`")?;
    let budget = rec
        .get("budget")
        .and_then(Value::as_u64)
        .ok_or("a corpus record has no integer `budget`")?;
    let opts = TrimOptions {
        check: chat_opts(),
        budget: usize::try_from(budget)?,
        keep_last: args.keep_last,
        protect: args.protect,
    };
    let t0 = Instant::now();
    let t = trim(std::hint::black_box(body), &opts)?;
    let micros = t0.elapsed().as_secs_f64() * 1e6;
    println!(
        "{}",
        json!({"id": rec.get("id"), "micros": micros, "tokens_before": t.tokens_before})
    );
    Ok(())
}

/// Mend's counts and `bpe-openai`'s against Python tiktoken's, item by item, and the time
/// of each over all items.
fn run_counts(args: &Args) -> Res<bool> {
    use mend::trim::Counter;
    let mut items = Vec::new();
    for rec in read_jsonl(&args.input)? {
        let count = |k: &str| rec.get(k).and_then(Value::as_u64).map(|n| n as usize);
        match (
            rec.get("text").and_then(Value::as_str),
            count("o200k"),
            count("cl100k"),
        ) {
            (Some(t), Some(o), Some(c)) => items.push((t.to_string(), o, c)),
            _ => return Err("an item has no `text`, `o200k` or `cl100k`".into()),
        }
    }
    let (bo, bc) = (bpe_openai::o200k_base(), bpe_openai::cl100k_base());
    let mut wrong = [0usize; 4];
    for (t, o, c) in &items {
        wrong[0] += usize::from(Counter::O200kBase.count(t) != *o);
        wrong[1] += usize::from(Counter::Cl100kBase.count(t) != *c);
        wrong[2] += usize::from(bo.count(t.as_str()) != *o);
        wrong[3] += usize::from(bc.count(t.as_str()) != *c);
    }
    // o200k_base (the trim corpus' model), the two counters alternating round by round.
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for _ in 0..args.reps {
        let t0 = Instant::now();
        let n: usize = items
            .iter()
            .map(|i| Counter::O200kBase.count(std::hint::black_box(&i.0)))
            .sum();
        ours.push(t0.elapsed().as_secs_f64() * 1e3);
        let t0 = Instant::now();
        let m: usize = items
            .iter()
            .map(|i| bo.count(std::hint::black_box(i.0.as_str())))
            .sum();
        theirs.push(t0.elapsed().as_secs_f64() * 1e3);
        std::hint::black_box((n, m));
    }
    let (ours, theirs) = (median(&mut ours), median(&mut theirs));
    println!(
        "{}",
        json!({
            "items": items.len(),
            "bytes": items.iter().map(|i| i.0.len()).sum::<usize>(),
            "mismatches": {"mend": {"o200k": wrong[0], "cl100k": wrong[1]},
                           "bpe_openai": {"o200k": wrong[2], "cl100k": wrong[3]}},
            "o200k_ms_per_pass": {"mend": ours, "bpe_openai": theirs},
            "bpe_openai_over_mend": theirs / ours,
        })
    );
    Ok(wrong[0] + wrong[1] == 0)
}

fn main() {
    let result = parse_args().and_then(|a| match (a.check, a.first) {
        _ if a.counts => run_counts(&a).map(|same| {
            if !same {
                eprintln!("trim_bench: mend's counts differ from tiktoken's");
                std::process::exit(1);
            }
        }),
        (true, _) => run_check(&a),
        (false, Some(i)) => run_first(&a, i),
        (false, None) => run_trim(&a),
    });
    if let Err(e) = result {
        eprintln!("trim_bench: {e}");
        std::process::exit(2);
    }
}
