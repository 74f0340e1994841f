//! mend's side of `bench/report`: repair and convert timed in-process on the report
//! corpus (`bench/report_corpus.py`), with the output of every run kept for judging.
//!
//! ```text
//! cargo run --release -p mend --example report_bench -- [--reps N] [--only repair] corpus.jsonl > out.jsonl
//! ```
//!
//! For each sample it runs, after one warm-up pass over the whole corpus:
//! - `repair:<dialect>`: mend's repair on each rendered body, in its dialect with the
//!   dialect's first-party provider profile, timed two ways:
//!   - `ns`, from the in-memory body to the request bytes, as every peer is timed:
//!     `mend::repair::repair_owned` on a copy of the body made outside the timer (as
//!     LiteLLM gets a fresh deep copy of its messages outside its timer), plus
//!     `serde_json::to_vec` of the output;
//!   - `ns_bytes`, from the request bytes to the request bytes, as a gateway, the CLI
//!     or a Python caller holding bytes runs it: `mend::repair::repair_bytes` (a check
//!     of the bytes on the tape, where a valid body stops, its output being its input;
//!     else parse, repair, and the output spliced into the input's bytes). This is what the issue's target 2 is about ("a valid body
//!     costs no more than check; a repaired body is written by splicing").
//!
//!   The bytes output is checked against the other: it must parse to the same body.
//! - `convert:<target>`: `mend::convert::convert_owned` of the `openai_chat` body to
//!   `anthropic`, `gemini`, `openai_responses` and `bedrock_converse` (the direction
//!   LiteLLM and the AI SDK go), with the target model the peers get; it repairs the source and the target.
//!   Timed from the in-memory body, a copy made outside the timer (as for repair, and as
//!   LiteLLM gets its deep copy), plus `serde_json::to_vec` of the output.
//!
//! Each timing is the median of `--reps` runs (default 15). `--only repair` (or
//! `convert`) runs one kind of task; `--loop value|bytes|check` runs only repair from the
//! `Value`, repair from bytes, or check (`convert-<target>`: the conversion to
//! `target`; `floor-<target>`: what that conversion's floor times), `--reps` times over
//! the corpus with no timing and no output, for a profiler. One JSON line per sample and task:
//! `{"id", "task", "ns", "ns_bytes"?, "floor"?, "ok", "error"?, "body"?, "check_valid"?}`;
//! `floor` (repair tasks) is what any repair of the sample costs at the least, in ns:
//! `check` of the bytes, `check_value` of the body, `serialize` of the body; for a
//! conversion that succeeded, what it cannot skip: `check_source` (`check_value` of the
//! chat body), `check_target` (`check_value` of the output for its dialect) and
//! `serialize` (`serde_json::to_vec` of the output), and for Responses `map`, the bare
//! mapping of the chat body onto Responses items with nothing else done, and
//! `map_valid`, whether its output passes the Responses check; also for Responses,
//! `repair_source` (mend's repair of the chat body, its check included),
//! `repair_edits`, `check_repaired` (`check_value` of the repaired body, when repair
//! edited it), `map_repaired` (the bare mapping of the repaired body) and
//! `map_repaired_valid`;
//! `check_valid` is `mend::check_value`'s verdict on the input (repair tasks), for the
//! agreement table.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::time::Instant;

use mend::convert::{convert_owned, ConvertOptions};
use mend::repair::{repair_bytes, repair_owned, RepairOptions, Repaired, RepairedBytes};
use mend::{CheckOptions, Dialect, Severity};
use serde_json::{json, Value};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// The allocator mend runs on where it ships as a program or an extension (the CLI and
/// its gateway, the Python binding): a repair builds and drops a tree of small maps and
/// strings, whose cost glibc's malloc nearly doubles.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const DIALECTS: [(&str, Dialect, &str); 4] = [
    ("openai_chat", Dialect::OpenAiChat, "openai"),
    ("anthropic", Dialect::Anthropic, "anthropic"),
    ("gemini", Dialect::Gemini, "gemini"),
    ("openai_responses", Dialect::OpenAiResponses, "openai"),
];

fn check_opts(d: Dialect, provider: &str) -> CheckOptions {
    CheckOptions {
        dialect: Some(d),
        provider: Some(provider.into()),
        ..Default::default()
    }
}

fn median(xs: &mut [u128]) -> u128 {
    xs.sort_unstable();
    xs.get(xs.len() / 2).copied().unwrap_or(0)
}

/// One task on one input, its argument made by `setup` outside the timer: (output
/// body or error, median ns).
fn timed<S, F>(reps: usize, setup: impl Fn() -> S, f: F) -> (Result<Value, String>, u128)
where
    F: Fn(S) -> Result<Value, String>,
{
    let mut times = Vec::with_capacity(reps);
    let mut last = Err("not run".to_string());
    for _ in 0..reps {
        let arg = setup();
        let t = Instant::now();
        let out = f(arg).and_then(|v| {
            serde_json::to_vec(&v)
                .map(|b| (v, b))
                .map_err(|e| e.to_string())
        });
        times.push(t.elapsed().as_nanos());
        last = out.map(|(v, bytes)| {
            std::hint::black_box(bytes);
            v
        });
    }
    (last, median(&mut times))
}

fn repair_opts(d: Dialect, provider: &str) -> RepairOptions {
    RepairOptions {
        check: check_opts(d, provider),
        ..Default::default()
    }
}

/// mend says it cannot repair without guessing: a rejection before sending.
fn unrepairable(r: &Repaired) -> String {
    let rules: Vec<_> = r.unrepairable.iter().map(|v| v.rule.id()).collect();
    format!("unrepairable: {}", rules.join(", "))
}

fn run_repair(body: Value, opts: &RepairOptions) -> Result<Value, String> {
    let r = repair_owned(body, opts).map_err(|e| e.to_string())?;
    if r.valid() {
        Ok(r.body)
    } else {
        Err(unrepairable(&r))
    }
}

/// Repair from bytes to bytes: (median ns, the output bytes or error).
fn timed_bytes(reps: usize, input: &[u8], opts: &RepairOptions) -> (Result<Vec<u8>, String>, u128) {
    let mut times = Vec::with_capacity(reps);
    let mut last = Err("not run".to_string());
    for _ in 0..reps {
        let t = Instant::now();
        let out = repair_bytes(input, opts)
            .map_err(|e| e.to_string())
            .and_then(|r| match r {
                RepairedBytes::AsIs(_) => Ok(None),
                RepairedBytes::Ran(r, out) if r.valid() => Ok(out),
                RepairedBytes::Ran(r, _) => Err(unrepairable(&r)),
            });
        times.push(t.elapsed().as_nanos());
        last = out.map(|o| o.unwrap_or_else(|| input.to_vec()));
    }
    (last, median(&mut times))
}

/// What any repair of a sample costs at the least, each the median ns of `reps` runs:
/// a repair from bytes checks them at least once (`check`), a repair of the in-memory
/// body checks it (`check_value`) and, as timed, writes the request bytes (`serialize`:
/// `serde_json::to_vec` of the input, as big as any repaired output within a few items).
/// The report sets the peer's time against these: a ratio no repair can pass.
fn floors(reps: usize, body: &Value, input: &[u8], opts: &CheckOptions) -> Value {
    let ns = |f: &dyn Fn()| median_ns(reps, f);
    json!({
        "check": ns(&|| {
            std::hint::black_box(mend::check(input, opts).is_ok());
        }),
        "check_value": ns(&|| {
            std::hint::black_box(mend::check_value(body, opts).is_ok());
        }),
        "serialize": ns(&|| {
            std::hint::black_box(serde_json::to_vec(body).map(|b| b.len()).ok());
        }),
    })
}

/// The median ns of `reps` runs of `f`.
fn median_ns(reps: usize, f: &dyn Fn()) -> u64 {
    let mut times: Vec<u128> = (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_nanos()
        })
        .collect();
    median(&mut times) as u64
}

/// The check options of a conversion floor's two checks: the chat source's, and the
/// target's under the model the conversion is given.
fn floor_options(to: Dialect) -> (CheckOptions, CheckOptions) {
    let chat = CheckOptions {
        dialect: Some(Dialect::OpenAiChat),
        ..Default::default()
    };
    let target = CheckOptions {
        dialect: Some(to),
        model: Some(target_model(to).into()),
        ..Default::default()
    };
    (chat, target)
}

/// What a conversion of `source` into `output` cannot skip, each the median ns of `reps`
/// runs: the check of its source (a damaged one is repaired first), the check of its
/// output for the target (it hands on only what the target takes), and, as timed, the
/// output's serialization. The report sets the peer's time against their sum.
fn convert_floor(reps: usize, source: &Value, output: &Value, to: Dialect) -> Value {
    let ns = |f: &dyn Fn()| median_ns(reps, f);
    let (chat, target) = floor_options(to);
    let mut floor = json!({
        "check_source": ns(&|| {
            std::hint::black_box(mend::check_value(source, &chat).is_ok());
        }),
        "check_target": ns(&|| {
            std::hint::black_box(mend::check_value(output, &target).is_ok());
        }),
        "serialize": ns(&|| {
            std::hint::black_box(serde_json::to_vec(output).map(|b| b.len()).ok());
        }),
    });
    if to == Dialect::OpenAiResponses {
        // The mapping itself, at its barest: the one a conversion does that does nothing
        // else, timed on a copy made outside the timer as the conversion is.
        // `map_valid`: its output passes the target's check (so that it is a
        // conversion and not less); it does for every valid source, and a damaged one
        // is mapped with its damage.
        let mapped = bare_chat_to_responses(source.clone());
        floor["map_valid"] = json!(mend::check_value(&mapped, &target).is_ok_and(|r| r.valid()));
        floor["map"] = json!(timed_drop(reps, || source.clone(), bare_chat_to_responses));
        // A damaged source mapped as it is gives a body the target refuses: a conversion
        // whose output is accepted repairs it first. `repair_source` is mend's repair of
        // the chat body (its check included: a valid body is handed back after it), and
        // `map_repaired` the bare mapping of what it gives.
        let opts = RepairOptions {
            check: chat.clone(),
            ..Default::default()
        };
        let Ok(repaired) = repair_owned(source.clone(), &opts) else {
            return floor;
        };
        let edits = repaired.edits.len();
        let repaired = repaired.body;
        let mapped = bare_chat_to_responses(repaired.clone());
        floor["repair_edits"] = json!(edits);
        if edits > 0 {
            // A repair checks what it wrote (its second check), which the output's check
            // repeats in a conversion: timed alone, for a floor without it.
            floor["check_repaired"] = json!(ns(&|| {
                std::hint::black_box(mend::check_value(&repaired, &chat).is_ok());
            }));
        }
        floor["map_repaired_valid"] =
            json!(mend::check_value(&mapped, &target).is_ok_and(|r| r.valid()));
        floor["repair_source"] = json!(timed_drop(
            reps,
            || source.clone(),
            |copy| { repair_owned(copy, &opts).map(|r| r.body).ok() }
        ));
        floor["map_repaired"] = json!(timed_drop(
            reps,
            || repaired.clone(),
            bare_chat_to_responses
        ));
    }
    floor
}

/// The median ns of `f` on an argument `setup` makes outside the timer, its output
/// dropped outside it, as a conversion's is.
fn timed_drop<S, T>(reps: usize, setup: impl Fn() -> S, f: impl Fn(S) -> T) -> u64 {
    let mut times: Vec<u128> = (0..reps)
        .map(|_| {
            let arg = setup();
            let t = Instant::now();
            let out = std::hint::black_box(f(arg));
            let ns = t.elapsed().as_nanos();
            drop(out);
            ns
        })
        .collect();
    median(&mut times) as u64
}

/// A chat body mapped onto the Responses API as a converter that only maps would do it
/// (LiteLLM's bridge does no more): every message moved into an input item or a
/// function call, every tool into a flat function tool, the rest of the body kept. No
/// check, no repair, no notes: what any conversion to Responses costs at the least
/// beyond its checks and its serialization.
fn bare_chat_to_responses(body: Value) -> Value {
    use serde_json::Map;
    let Value::Object(source) = body else {
        return body;
    };
    let mut out = Map::with_capacity(source.len() + 1);
    // Every member is read by walking its object, not by looking keys up: no hashing on
    // the way in, only the inserts' on the way out.
    for (key, value) in source {
        match (key.as_str(), value) {
            ("messages", Value::Array(messages)) => {
                let mut input = Vec::with_capacity(messages.len() + 4);
                for m in messages {
                    if let Value::Object(m) = m {
                        map_message(m, &mut input);
                    }
                }
                out.insert("input".into(), Value::Array(input));
            }
            ("tools", Value::Array(tools)) => {
                let flat = tools
                    .into_iter()
                    .filter_map(|t| match t {
                        Value::Object(t) => t.into_iter().find_map(|(k, f)| match f {
                            Value::Object(mut f) if k == "function" => {
                                f.insert("type".into(), "function".into());
                                Some(Value::Object(f))
                            }
                            _ => None,
                        }),
                        _ => None,
                    })
                    .collect();
                out.insert(key, Value::Array(flat));
            }
            ("max_tokens", n) => {
                out.insert("max_output_tokens".into(), n);
            }
            (_, value) => {
                out.insert(key, value);
            }
        }
    }
    Value::Object(out)
}

/// One chat message as Responses input items: a message item for its content, a
/// function call item for each of its tool calls, or a function call output.
fn map_message(m: serde_json::Map<String, Value>, input: &mut Vec<Value>) {
    use serde_json::Map;
    let (mut role, mut content, mut calls, mut call_id) = (None, None, None, None);
    for (k, v) in m {
        match k.as_str() {
            "role" => role = Some(v),
            "content" => content = Some(v),
            "tool_calls" => calls = Some(v),
            "tool_call_id" => call_id = Some(v),
            _ => {}
        }
    }
    if role.as_ref().and_then(Value::as_str) == Some("tool") {
        let mut item = Map::with_capacity(3);
        item.insert("type".into(), "function_call_output".into());
        item.insert("call_id".into(), call_id.unwrap_or_default());
        item.insert("output".into(), content.unwrap_or_default());
        input.push(Value::Object(item));
        return;
    }
    if let (Some(role), Some(content)) = (role, content.filter(|c| !c.is_null())) {
        let mut item = Map::with_capacity(2);
        item.insert("role".into(), role);
        item.insert("content".into(), content);
        input.push(Value::Object(item));
    }
    let Some(Value::Array(calls)) = calls else {
        return;
    };
    for call in calls {
        let Value::Object(call) = call else {
            continue;
        };
        let mut item = Map::with_capacity(4);
        item.insert("type".into(), "function_call".into());
        for (k, v) in call {
            match (k.as_str(), v) {
                ("id", id) => {
                    item.insert("call_id".into(), id);
                }
                ("function", Value::Object(f)) => {
                    for (k, v) in f {
                        if k == "name" || k == "arguments" {
                            item.insert(k, v);
                        }
                    }
                }
                _ => {}
            }
        }
        input.push(Value::Object(item));
    }
}

/// The target models of the conversions (the peers get the same ones).
fn target_model(d: Dialect) -> &'static str {
    match d {
        Dialect::Anthropic => "claude-sonnet-4-5",
        Dialect::Gemini => "gemini-2.5-flash",
        Dialect::BedrockConverse => "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        _ => "gpt-4o",
    }
}

fn run_convert(body: Value, to: Dialect) -> Result<Value, String> {
    let opts = ConvertOptions {
        model: Some(target_model(to).into()),
        ..Default::default()
    };
    let c = convert_owned(body, Dialect::OpenAiChat, to, &opts).map_err(|e| e.to_string())?;
    if c.valid() {
        Ok(c.body)
    } else {
        // mend knows the target would refuse it: a rejection before sending.
        let rules: Vec<_> = c
            .violations
            .iter()
            .filter(|v| v.severity == Severity::Error)
            .map(|v| v.rule.id())
            .collect();
        Err(format!("invalid after conversion: {}", rules.join(", ")))
    }
}

const TARGETS: [Dialect; 4] = [
    Dialect::Anthropic,
    Dialect::Gemini,
    Dialect::OpenAiResponses,
    Dialect::BedrockConverse,
];

/// The repair rows of one sample.
fn repair_rows(s: &Value, reps: usize, out: &mut impl Write) -> Res<()> {
    let id = &s["id"];
    for (name, d, provider) in DIALECTS {
        let Some(body) = s["bodies"].get(name) else {
            continue;
        };
        let opts = repair_opts(d, provider);
        let check_valid =
            mend::check_value(body, &check_opts(d, provider)).is_ok_and(|r| r.valid());
        let (res, ns) = timed(reps, || body.clone(), |b| run_repair(b, &opts));
        let input = serde_json::to_vec(body)?;
        let (res_bytes, ns_bytes) = timed_bytes(reps, &input, &opts);
        let floors = floors(reps, body, &input, &opts.check);
        // The two ways must agree: the spliced bytes parse to the repaired body.
        let res = match (res, res_bytes) {
            (Ok(b), Ok(bytes))
                if serde_json::from_slice::<Value>(&bytes).ok() != Some(b.clone()) =>
            {
                Err("the spliced bytes differ from the repaired body".to_string())
            }
            (Ok(_), Err(e)) | (Err(_), Err(e)) | (Err(e), Ok(_)) => Err(e),
            (Ok(b), Ok(_)) => Ok(b),
        };
        let task = format!("repair:{name}");
        let mut line = match res {
            Ok(b) => json!({"id": id, "task": task, "ns": ns as u64, "ns_bytes": ns_bytes as u64,
                            "ok": true, "body": b, "check_valid": check_valid}),
            Err(e) => json!({"id": id, "task": task, "ns": ns as u64, "ns_bytes": ns_bytes as u64,
                             "ok": false, "error": e, "check_valid": check_valid}),
        };
        line["floor"] = floors;
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// The convert rows of one sample.
fn convert_rows(s: &Value, reps: usize, out: &mut impl Write) -> Res<()> {
    let id = &s["id"];
    let Some(body) = s["bodies"].get("openai_chat") else {
        return Ok(());
    };
    for to in TARGETS {
        let task = format!("convert:{}", to.name());
        let (res, ns) = timed(reps, || body.clone(), |b| run_convert(b, to));
        let line = match res {
            Ok(b) => {
                let floor = convert_floor(reps, body, &b, to);
                json!({"id": id, "task": task, "ns": ns as u64, "ok": true, "body": b,
                       "floor": floor})
            }
            Err(e) => json!({"id": id, "task": task, "ns": ns as u64, "ok": false, "error": e}),
        };
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// One conversion as `--loop convert-<target>` runs it: a function of its own, so that a
/// profiler can collect it alone (`--toggle-collect=report_bench::convert_once`).
#[inline(never)]
fn convert_once(body: Value, to: Dialect) -> Res<()> {
    let out = run_convert(body, to)?;
    std::hint::black_box(serde_json::to_vec(&out)?);
    Ok(())
}

/// What one conversion's floor times (`convert_floor`), for a profiler as
/// [`convert_once`]: `copy` is `source`'s copy, made by the caller.
#[inline(never)]
fn floor_once(source: &Value, copy: Value, output: &Value, to: Dialect) {
    let (chat, target) = floor_options(to);
    std::hint::black_box(mend::check_value(source, &chat).is_ok());
    std::hint::black_box(mend::check_value(output, &target).is_ok());
    std::hint::black_box(serde_json::to_vec(output).map(|b| b.len()).ok());
    if to == Dialect::OpenAiResponses {
        std::hint::black_box(bare_chat_to_responses(copy));
    }
}

/// `--loop value|bytes`: every repair of the corpus `reps` times, untimed and with no
/// output, for a profiler (`valgrind --tool=callgrind`): only the call under study runs
/// in the loop (the inputs are made before it).
fn profile_loop(corpus: &[Value], how: &str, reps: usize) -> Res<()> {
    if let Some(target) = how.strip_prefix("convert-") {
        // The chat body of every sample converted to `target`, as timed.
        let to = TARGETS
            .into_iter()
            .find(|d| d.name() == target)
            .ok_or_else(|| format!("--loop convert-<target>: no target '{target}'"))?;
        let chats: Vec<&Value> = corpus
            .iter()
            .filter_map(|s| s["bodies"].get("openai_chat"))
            .collect();
        for _ in 0..reps {
            for body in &chats {
                convert_once((*body).clone(), to)?;
            }
        }
        return Ok(());
    }
    if let Some(target) = how.strip_prefix("floor-") {
        // What the floor of the conversion to `target` times, on the same bodies: the
        // two checks and the serialization (and, for Responses, the bare mapping).
        let to = TARGETS
            .into_iter()
            .find(|d| d.name() == target)
            .ok_or_else(|| format!("--loop floor-<target>: no target '{target}'"))?;
        let mut pairs = Vec::new();
        for s in corpus {
            if let Some(body) = s["bodies"].get("openai_chat") {
                if let Ok(out) = run_convert(body.clone(), to) {
                    pairs.push((body, out));
                }
            }
        }
        for _ in 0..reps {
            for (body, out) in &pairs {
                floor_once(body, (*body).clone(), out, to);
            }
        }
        return Ok(());
    }
    let mut inputs = Vec::new();
    for s in corpus {
        for (name, d, provider) in DIALECTS {
            if let Some(body) = s["bodies"].get(name) {
                inputs.push((
                    body.clone(),
                    serde_json::to_vec(body)?,
                    repair_opts(d, provider),
                ));
            }
        }
    }
    for _ in 0..reps {
        for (body, bytes, opts) in &inputs {
            match how {
                "value" => {
                    // As timed: the body is the caller's own copy (made here, outside a
                    // profile collected on `repair_owned`).
                    let r = repair_owned(body.clone(), opts)?;
                    std::hint::black_box(serde_json::to_vec(&r.body)?);
                }
                "bytes" => {
                    std::hint::black_box(repair_bytes(bytes, opts)?);
                }
                "check" => {
                    std::hint::black_box(mend::check(bytes, &opts.check)?);
                }
                _ => {
                    return Err(format!(
                        "--loop value, bytes, check or convert-<target>, not '{how}'"
                    )
                    .into())
                }
            }
        }
    }
    Ok(())
}

fn main() -> Res<()> {
    let mut reps = 15usize;
    let mut input = None;
    let mut only: Option<String> = None;
    let mut profile: Option<String> = None;
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--reps" => reps = it.next().ok_or("--reps N")?.parse()?,
            "--only" => only = Some(it.next().ok_or("--only repair|convert")?),
            "--loop" => {
                profile = Some(
                    it.next()
                        .ok_or("--loop value|bytes|check|convert-<target>|floor-<target>")?,
                )
            }
            _ if input.is_none() && !a.starts_with('-') => input = Some(a),
            _ => return Err(format!("unexpected argument '{a}'").into()),
        }
    }
    let input =
        input.ok_or("usage: report_bench [--reps N] [--only repair|convert] corpus.jsonl")?;
    let reps = reps.max(1);
    let (repairs, converts) = match only.as_deref() {
        None => (true, true),
        Some("repair") => (true, false),
        Some("convert") => (false, true),
        Some(o) => return Err(format!("--only repair or convert, not '{o}'").into()),
    };
    let f = std::fs::File::open(&input).map_err(|e| format!("{input}: {e}"))?;
    let mut corpus = Vec::new();
    for line in BufReader::new(f).lines() {
        let line = line?;
        if !line.trim().is_empty() {
            corpus.push(serde_json::from_str::<Value>(&line)?);
        }
    }
    if let Some(how) = profile {
        return profile_loop(&corpus, &how, reps);
    }
    // Warm-up: every task once.
    let mut sink = std::io::sink();
    for s in &corpus {
        if repairs {
            repair_rows(s, 1, &mut sink)?;
        }
        if converts {
            convert_rows(s, 1, &mut sink)?;
        }
    }
    let out = std::io::stdout();
    let mut out = BufWriter::new(out.lock());
    for s in &corpus {
        if repairs {
            repair_rows(s, reps, &mut out)?;
        }
        if converts {
            convert_rows(s, reps, &mut out)?;
        }
    }
    out.flush()?;
    Ok(())
}
