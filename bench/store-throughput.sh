#!/usr/bin/env bash
# Appends per second into the conversation store with 1, 4 and 16 concurrent writers,
# on SQLite and on PostgreSQL (skipped, saying so, when unreachable). Each writer is a
# task of one process sharing one store handle (as gateway handlers would), appending one
# ~350-byte message per call with an idempotency key: to a conversation of its own
# ("own"), or all to one conversation ("shared", the worst case: one row lock).
#   bench/store-throughput.sh            # 3 s per cell
#   SECONDS_PER_RUN=10 bench/store-throughput.sh
# The table is printed and written to bench/results/store-throughput.md. The append and
# load of a 1,000-message conversation is the criterion bench:
#   cargo bench -p mend-store --bench store
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
secs="${SECONDS_PER_RUN:-3}"
pg="${MEND_TEST_POSTGRES:-postgres://postgres@127.0.0.1:5432/test}"

cargo build --release -q -p mend-store --bin mend-store-writer
target_dir="$(cargo metadata --format-version 1 --no-deps |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
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

python3 - "$results" "$root/bench/results/store-throughput.md" "$secs" <<'PY'
import json, os, platform, subprocess, sys, time
rows = [json.loads(l) for l in open(sys.argv[1])]
out, secs = sys.argv[2], sys.argv[3]
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
text = "\n".join(lines) + "\n"
open(out, "w").write(text)
print(text)
PY
