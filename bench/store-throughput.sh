#!/usr/bin/env bash
# Appends per second into the conversation store with 1, 4 and 16 concurrent writers,
# on SQLite and on PostgreSQL (skipped, saying so, when unreachable). Each writer is a
# task of one process sharing one store handle (as gateway handlers would), appending one
# ~350-byte message per call with an idempotency key: to a conversation of its own
# ("own"), or all to one conversation ("shared", the worst case: one row lock).
#   bench/store-throughput.sh            # 3 s per cell
#   SECONDS_PER_RUN=10 bench/store-throughput.sh
# Then the append and load of a 1,000-message conversation (the criterion bench
# `cargo bench -p mend-store --bench store`; skip it with SKIP_CRITERION=1). Both tables
# are printed and written to bench/results/store-throughput.md.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
secs="${SECONDS_PER_RUN:-3}"
pg="${MEND_TEST_POSTGRES:-postgres://postgres@127.0.0.1:5432/test}"

cargo build --release -q -p mend-store --bin mend-store-writer
. "$root/bench/lib.sh"
target_dir="$(cargo_target_dir)"
writer="$target_dir/release/mend-store-writer"

tmp="$(mktemp -d)"
schema="mend_bench_tp_$$"
cleanup() {
  rm -rf "$tmp"
  if command -v psql >/dev/null; then
    psql "$pg" -qc "DROP SCHEMA IF EXISTS $schema CASCADE" >/dev/null 2>&1 || true
  fi
}
trap cleanup EXIT

results="$tmp/results.jsonl"
run() { # backend-label db-url
  for mode in own shared; do
    for w in 1 4 16; do
      flag=""
      [ "$mode" = shared ] && flag="--shared-conversation"
      "$writer" --db "$2" --throughput --writers "$w" --seconds "$secs" $flag >>"$results"
    done
  done
}

run sqlite "sqlite:$tmp/throughput.db"
if "$writer" --db "$pg?schema=$schema" --throughput --writers 1 --seconds 0.1 >/dev/null 2>&1; then
  run postgres "$pg?schema=$schema"
else
  echo "skipping postgres: $pg is unreachable" >&2
fi

if [ "${SKIP_CRITERION:-0}" != 1 ]; then
  rm -rf "$target_dir/criterion/sqlite" "$target_dir/criterion/postgres" "$target_dir/criterion/baseline"
  cargo bench -q -p mend-store --bench store >&2
fi

python3 - "$results" "$root/bench/results/store-throughput.md" "$secs" "$target_dir/criterion" <<'PY'
import json, os, platform, subprocess, sys, time
rows = [json.loads(l) for l in open(sys.argv[1])]
out, secs, criterion = sys.argv[2], sys.argv[3], sys.argv[4]
cpu = platform.processor() or platform.machine()
try:
    cpu = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name"))
except Exception:
    pass
try:
    load = open("/proc/loadavg").read().split()[0]
except Exception:
    load = "?"
lines = [
    "# Store throughput: appends per second",
    "",
    f"{time.strftime('%Y-%m-%d')}, {cpu}, {os.cpu_count()} cores, load average {load} at the end",
    "(figures swing several-fold with other work on the machine's disk); {secs} s per cell; one process,".replace("{secs}", secs),
    "one store handle, one message (~350 bytes) per append with an idempotency key;",
    "SQLite with synchronous=FULL (an fsync per commit). `own`: a conversation per",
    "writer; `shared`: every writer appends to one conversation.",
    "",
    "| backend | conversations | 1 writer | 4 writers | 16 writers | 16 vs 1 |",
    "|---|---|---:|---:|---:|---:|",
]
for backend in ["sqlite", "postgres"]:
    for shared in [False, True]:
        cell = {r["writers"]: r["appends_per_s"] for r in rows
                if r["backend"] == backend and r["shared_conversation"] == shared}
        if not cell:
            continue
        ratio = cell[16] / cell[1] if cell.get(1) else float("nan")
        lines.append(f"| {backend} | {'shared' if shared else 'own'} | {cell[1]:,.0f} | {cell[4]:,.0f} | {cell[16]:,.0f} | {ratio:.2f}x |")
def median_ms(group, name):
    try:
        e = json.load(open(os.path.join(criterion, group, name, "new", "estimates.json")))
        return e["median"]["point_estimate"] / 1e6
    except Exception:
        return None
cells = [(g, n, median_ms(g, n)) for g in ["sqlite", "postgres"]
         for n in ["append_1000", "load_1000", "load_1000_parsed"]]
base = median_ms("baseline", "parse_1000")
if any(ms is not None for _, _, ms in cells):
    lines += [
        "",
        "## A 1,000-message conversation (~250 bytes a message): append, then load",
        "",
        "Criterion medians (`cargo bench -p mend-store --bench store`), one append of all",
        "1,000 messages in one transaction, then a load of all of them (as text, and",
        "parsed into JSON values). Target for SQLite: single-digit milliseconds each.",
        "",
        "| backend | append 1,000 | load 1,000 | load 1,000 + parse |",
        "|---|---:|---:|---:|",
    ]
    for g in ["sqlite", "postgres"]:
        ms = {n: v for gg, n, v in cells if gg == g}
        if all(v is None for v in ms.values()):
            continue
        fmt = lambda v: "n/a" if v is None else f"{v:.2f} ms"
        lines.append(f"| {g} | {fmt(ms['append_1000'])} | {fmt(ms['load_1000'])} | {fmt(ms['load_1000_parsed'])} |")
    if base is not None:
        lines.append("")
        lines.append(f"Baseline from the same run: `serde_json` parsing the same 1,000 messages as one array, {base:.2f} ms.")
text = "\n".join(lines) + "\n"
open(out, "w").write(text)
print(text)
PY
