//! Damaged bodies never panic the checker: every accepted fixture request is mutated in
//! deterministic ways (items deleted, duplicated, swapped, replaced by other JSON types,
//! ids stripped, content retyped, deep nesting and huge strings injected) and each
//! mutant must give a verdict or a clean error.

use mend::{CheckOptions, Dialect};
use serde_json::{json, Value};
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::support::{files_named, shared_dir};

const ID_KEYS: [&str; 8] = [
    "id",
    "call_id",
    "tool_call_id",
    "tool_use_id",
    "role",
    "type",
    "signature",
    "content",
];

/// A small deterministic generator, so a failure names a reproducible mutant.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

fn deep(n: usize) -> Value {
    let mut v = json!(1);
    for _ in 0..n {
        v = json!([v]);
    }
    v
}

/// One mutant of `body`'s history array at `key`, chosen by `rng`.
fn mutate(body: &Value, key: &str, rng: &mut Lcg) -> Value {
    let mut b = body.clone();
    let Some(items) = b.get_mut(key).and_then(Value::as_array_mut) else {
        return json!({ key: rng.next() });
    };
    let n = items.len();
    match rng.below(10) {
        0 if n > 0 => {
            items.remove(rng.below(n));
        }
        1 if n > 0 => {
            let i = rng.below(n);
            let dup = items[i].clone();
            items.insert(i, dup);
        }
        2 if n > 1 => {
            let i = rng.below(n - 1);
            items.swap(i, i + 1);
        }
        3 if n > 0 => {
            let i = rng.below(n);
            items[i] = [
                json!(null),
                json!(7),
                json!("x"),
                json!([]),
                json!({}),
                json!(true),
            ][rng.below(6)]
            .clone();
        }
        4 if n > 0 => {
            let i = rng.below(n);
            strip_key(&mut items[i], ID_KEYS[rng.below(ID_KEYS.len())], rng);
        }
        5 if n > 0 => {
            let i = rng.below(n);
            retype_somewhere(&mut items[i], rng);
        }
        6 if n > 0 => {
            let i = rng.below(n);
            if let Some(o) = items[i].as_object_mut() {
                o.insert("content".into(), deep(120));
            }
        }
        7 if n > 0 => {
            let i = rng.below(n);
            if let Some(o) = items[i].as_object_mut() {
                o.insert("content".into(), json!("x".repeat(1 << 16)));
            }
        }
        8 => {
            let cut = rng.below(n + 1);
            items.truncate(cut);
        }
        _ => {
            // Move one item to another place.
            if n > 1 {
                let it = items.remove(rng.below(n));
                let to = rng.below(n);
                items.insert(to, it);
            }
        }
    }
    b
}

/// Remove `key` from the value or from one object nested in it.
fn strip_key(v: &mut Value, key: &str, rng: &mut Lcg) {
    match v {
        Value::Object(o) => {
            if o.shift_remove(key).is_some() {
                return;
            }
            let vals: Vec<&mut Value> = o.values_mut().collect();
            let k = vals.len();
            if k > 0 {
                let pick = rng.below(k);
                if let Some(inner) = vals.into_iter().nth(pick) {
                    strip_key(inner, key, rng);
                }
            }
        }
        Value::Array(a) if !a.is_empty() => {
            let i = rng.below(a.len());
            strip_key(&mut a[i], key, rng);
        }
        _ => {}
    }
}

/// Replace one nested value by a value of another type.
fn retype_somewhere(v: &mut Value, rng: &mut Lcg) {
    match v {
        Value::Object(o) if !o.is_empty() && rng.below(3) > 0 => {
            let k = rng.below(o.len());
            if let Some((_, inner)) = o.iter_mut().nth(k) {
                retype_somewhere(inner, rng);
            }
        }
        Value::Array(a) if !a.is_empty() && rng.below(3) > 0 => {
            let i = rng.below(a.len());
            retype_somewhere(&mut a[i], rng);
        }
        other => {
            *other = match other {
                Value::String(_) => json!(42),
                Value::Number(_) => json!({"x": 1}),
                Value::Object(_) => json!("text"),
                Value::Array(_) => json!(null),
                _ => json!([1, 2]),
            };
        }
    }
}

#[test]
fn mutated_fixture_bodies_never_panic_the_checker() {
    let Some(shared) = shared_dir() else { return };
    let files = files_named(&shared.join("fixtures"), "request.json");
    let per_body = 10_000 / files.len().max(1) + 1;
    let mut rng = Lcg(0x5eed);
    let mut total = 0;
    for f in &files {
        let dialect: Dialect = f
            .parent()
            .and_then(|p| p.parent())
            .and_then(|p| p.file_name())
            .and_then(|n| n.to_str())
            .and_then(|n| n.parse().ok())
            .expect("fixture under a dialect folder");
        let body = mend::parse_body(&std::fs::read(f).expect("readable")).expect("fixture is JSON");
        for k in 0..per_body {
            let mutant = mutate(&body, dialect.history_key(), &mut rng);
            for opts in [
                CheckOptions {
                    dialect: Some(dialect),
                    ..Default::default()
                },
                CheckOptions::default(),
            ] {
                let started = std::time::Instant::now();
                let r = catch_unwind(AssertUnwindSafe(|| {
                    mend::check_value(&mutant, &opts).map(|r| r.valid())
                }));
                assert!(r.is_ok(), "{} mutant {k} panicked: {}", f.display(), mutant);
                assert!(
                    started.elapsed().as_secs() < 5,
                    "{} mutant {k} took too long",
                    f.display()
                );
                total += 1;
            }
        }
    }
    eprintln!("checked {total} mutants without a panic");
}
