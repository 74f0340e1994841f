#!/usr/bin/env bash
# Compare `mend::trim` with LangChain's `trim_messages` (tiktoken counting) on the same
# generated conversations: speed as a per-conversation ratio, and how many outputs the
# provider would reject. Writes bench/results/trim-vs-langchain.md.
#
#   bench/trim-vs-langchain.sh            # everything (creates bench/.venv on first run)
#
# Environment: SEED (7), COUNT (240), REPS (15 for mend, LC_REPS 7 for LangChain),
# KEEP_LAST (1), FIRST_ROUNDS (3: fresh processes per record for the first-call figure),
# REGEN=1 to rewrite the corpus. With MEND_TARGETS set (bench/report), appends issue 17's
# target-4 rows (cold, warm, first call) to that file.
#
# Offline: tiktoken downloads its BPE files at first use. This script copies them from
# the tiktoken-rs crate in the cargo registry (the same files; their sha256 is checked)
# into bench/.tiktoken-cache under the names tiktoken looks for (the sha1 hex of the
# download URL) and points TIKTOKEN_CACHE_DIR there. Nothing else is downloaded apart
# from the pinned Python packages.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BENCH="$ROOT/bench"
VENV="$BENCH/.venv"
RAW="$BENCH/results/raw"
CORPUS="$BENCH/corpus/trim.jsonl"
SEED="${SEED:-7}"
COUNT="${COUNT:-240}"
REPS="${REPS:-15}"
LC_REPS="${LC_REPS:-7}"
KEEP_LAST="${KEEP_LAST:-1}"
FIRST_ROUNDS="${FIRST_ROUNDS:-3}"
# langchain-core 1.7.3 and later require certifi>=2026.10.19, which the registry this
# was verified against does not carry yet; 1.7.2 is the newest that installs.
PINS=("langchain-core==1.7.2" "tiktoken==0.14.0")

say() { printf '\033[1m== %s\033[0m\n' "$*" >&2; }

# 1. Python venv with the pinned packages.
if [[ ! -x "$VENV/bin/python" ]]; then
  say "creating $VENV"
  python3 -m venv "$VENV"
fi
missing=0
for p in "${PINS[@]}"; do
  "$VENV/bin/python" -m pip freeze 2>/dev/null | grep -qix "$p" || missing=1
done
if [[ $missing == 1 ]]; then
  say "installing ${PINS[*]}"
  "$VENV/bin/python" -m pip install --quiet "${PINS[@]}"
fi
PY="$VENV/bin/python"

# 2. tiktoken's BPE files, offline (sets TIKTOKEN_CACHE_DIR).
. "$BENCH/tiktoken-cache.sh"

# 3. Corpus.
if [[ ! -s "$CORPUS" || "${REGEN:-0}" == 1 ]]; then
  say "generating $COUNT conversations (seed $SEED)"
  "$PY" "$BENCH/trim_corpus.py" --seed "$SEED" --count "$COUNT" --out "$CORPUS"
fi

# 4. mend.
mkdir -p "$RAW"
say "building the trim_bench example"
cargo build --release --quiet -p mend --example trim_bench
TB="$ROOT/target/release/examples/trim_bench"
load_before="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
say "timing mend (reps $REPS, keep_last $KEEP_LAST)"
"$TB" --reps "$REPS" --keep-last "$KEEP_LAST" --bodies-out "$RAW/mend_bodies.jsonl" "$CORPUS" > "$RAW/mend.jsonl"

# 5. LangChain.
say "timing LangChain trim_messages (reps $LC_REPS)"
versions="$("$PY" "$BENCH/trim_langchain.py" "$CORPUS" --reps "$LC_REPS" --cached \
  --results "$RAW/langchain.jsonl" --bodies "$RAW/langchain_bodies.jsonl" \
  --bodies-default "$RAW/langchain_default_bodies.jsonl")"

# 5b. The very first call of a process (tokenizer load included), one fresh process per
# figure: records 0-4 of the corpus (one of each kind), FIRST_ROUNDS (3) rounds, mend and
# LangChain alternating so both see the same load.
say "timing first calls (fresh processes, $FIRST_ROUNDS rounds)"
: > "$RAW/mend_first.jsonl"
: > "$RAW/langchain_first.jsonl"
for _ in $(seq "$FIRST_ROUNDS"); do
  for i in 0 1 2 3 4; do
    "$TB" first --index "$i" --keep-last "$KEEP_LAST" "$CORPUS" >> "$RAW/mend_first.jsonl"
    "$PY" "$BENCH/trim_first.py" --index "$i" "$CORPUS" >> "$RAW/langchain_first.jsonl"
  done
done
load_after="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"

# 6. Judge LangChain's outputs with mend's checker.
say "checking LangChain's outputs"
"$TB" check "$RAW/langchain_bodies.jsonl" > "$RAW/langchain_check.jsonl"
"$TB" check "$RAW/langchain_default_bodies.jsonl" > "$RAW/langchain_default_check.jsonl"

# Cross-check with the `mend` CLI when it builds (another part of the workspace).
cli_check=""
if cargo build --release --quiet -p mend-cli 2>/dev/null && [[ -x "$ROOT/target/release/mend" ]]; then
  "$PY" -c 'import json,sys
for l in open(sys.argv[1], encoding="utf-8"):
    print(json.dumps(json.loads(l)["body"], ensure_ascii=False))' \
    "$RAW/langchain_bodies.jsonl" > "$RAW/langchain_bodies_raw.jsonl"
  if "$ROOT/target/release/mend" check --jsonl --json --dialect openai_chat --provider openai \
      "$RAW/langchain_bodies_raw.jsonl" > "$RAW/langchain_cli_check.json" 2>/dev/null \
      || [[ $? == 1 ]]; then
    cli_check="$("$PY" -c 'import json,sys
s=json.load(open(sys.argv[1]))["summary"]
print("%d bodies, %d invalid, by rule %s" % (s["bodies"], s["invalid"], json.dumps(s.get("by_rule", {}))))' \
      "$RAW/langchain_cli_check.json" 2>/dev/null || true)"
  fi
fi
[[ -n "$cli_check" ]] || cli_check="not run (the mend CLI did not build or has no --jsonl --json)"

# 7. Report.
tiktoken_rs="$(basename "$(dirname "$assets")")"
"$PY" - "$RAW/meta.json" <<EOF
import json, os, platform, subprocess, sys
meta = json.loads('''$versions''')
meta.update({
    "seed": "$SEED", "reps": "mend $REPS / LangChain $LC_REPS", "keep_last": "$KEEP_LAST",
    "mend": "$(cargo metadata --no-deps --format-version 1 2>/dev/null | "$PY" -c 'import json,sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"]=="mend"))' 2>/dev/null || echo '?') ($(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$ROOT" diff --quiet 2>/dev/null || echo ', uncommitted changes'))",
    "rustc": "$(rustc --version 2>/dev/null | cut -d' ' -f2-)",
    "mend tokenizer": "crates/mend/src/tokens.rs (pre-tokenizer, whole-token table) over the BPE of bpe-openai $(cargo metadata --format-version 1 2>/dev/null | "$PY" -c 'import json,sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"]=="bpe-openai"))' 2>/dev/null || echo '?')",
    "BPE files for Python tiktoken": "from the tiktoken-rs ${tiktoken_rs#tiktoken-rs-} crate",
    "machine": next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")),
                    platform.machine()) if os.path.exists("/proc/cpuinfo") else platform.machine(),
    "cpus": os.cpu_count(),
    "load_before": "$load_before", "load_after": "$load_after",
    "cli_check": """$cli_check""",
})
json.dump(meta, open(sys.argv[1], "w"), indent=1)
EOF
"$PY" "$BENCH/trim_report.py"
say "wrote bench/results/trim-vs-langchain.md"
