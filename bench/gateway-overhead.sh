#!/usr/bin/env bash
# What `mend serve` adds (issue 17, target 5), against an upstream that costs nothing: a
# Rust mock on plain hyper that drains each request and answers a fixed JSON at once,
# and a Rust load generator (keep-alive HTTP/1.1, closed loop), both
# `crates/mend-gateway/examples/gateway_overhead.rs`. For a 200 KB body of every
# dialect (the corpus's valid tool-loop histories, `examples/gen_corpus.rs`), direct to
# the mock, through a bare forwarding proxy (`bare`, `examples/bare_proxy.rs`: read the
# body whole, forward it, stream the answer back, nothing else, on mend's stack and
# runtime settings: the floor of any proxy on this machine), through the same proxy
# running one `mend::check` of each body before it sends it (`bare-check`: the floor of
# a proxy that checks first, as `repair` must), through mend in `off` (the
# proxy path without the check), in `observe` (the default mode) and in `repair` are run
# in turn, ROUNDS times (ABCDEABCDE...), at 1 and at 16 connections:
#   added p50  = median over the rounds of (p50 through mend - p50 direct of that round)
#   rps ratio  = median over the rounds of (rps through mend / rps direct of that round)
# Budgets: added p50 < 0.3 ms on one connection and < 1 ms at 16 connections; rps
# through mend >= half the direct rps at 16 connections.
#
# The machine's cores are shared by the mock, the generator and mend. Two layouts:
#   shared  nothing pinned (how one box runs all three; mend sizes its runtime itself)
#   split   mend on CPU 1, the mock and the generator on CPU 0 (taskset)
# LAYOUTS picks them (default "shared split"); the targets are read from TARGET_LAYOUT
# (default shared). mend's CPU time per request (user + system, /proc) is reported too:
# it moves less with the machine's other work than the latencies do.
#
#   bench/gateway-overhead.sh                           # ~9 minutes
#   QUICK=1 bench/gateway-overhead.sh                   # one dialect, one round, ~30 s
#   SECONDS_PER_RUN=3 ROUNDS=5 LAYOUTS=split bench/gateway-overhead.sh
#   MEND_BIN=/tmp/mend-before RESULTS_NAME=gateway-overhead-before bench/gateway-overhead.sh
#   MEND_BASE_BIN=/tmp/mend-before MODES="off observe" QUICK=1 bench/gateway-overhead.sh
#
# MEND_BASE_BIN: a second build of mend (a baseline) run beside this one, in the same
# rounds, as the modes `base-off`, `base-observe`, `base-repair`: a paired A/B of two
# binaries in one run. MODES picks mend's modes (default "off observe repair").
#
# Results: bench/results/gateway-overhead.md, raw lines in
# bench/results/raw/gateway-overhead.jsonl; with MEND_TARGETS set, one JSON line per
# target row is appended to that file; each target row's detail gives the `bare`
# proxy's figure of the same run beside mend's (the floor). Everything listens on
# 127.0.0.1 and every process started here is stopped on exit.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

SECS="${SECONDS_PER_RUN:-1.5}"
WARMUP="${WARMUP:-0.5}"
ROUNDS="${ROUNDS:-3}"
CONC="${CONCURRENCY:-16}"
LAYOUTS="${LAYOUTS:-shared split}"
TARGET_LAYOUT="${TARGET_LAYOUT:-shared}"
DIALECTS="${DIALECTS:-openai_chat openai_responses anthropic gemini bedrock_converse}"
if [ "${QUICK:-0}" = 1 ]; then
  DIALECTS="${DIALECTS_QUICK:-openai_chat}"
  ROUNDS=1
  SECS=1
fi
MOCK_PORT="${MOCK_PORT:-19400}"
OFF_PORT="${OFF_PORT:-19403}"
OBSERVE_PORT="${OBSERVE_PORT:-19401}"
REPAIR_PORT="${REPAIR_PORT:-19402}"
BARE_PORT="${BARE_PORT:-19404}"
BARE_CHECK_PORT="${BARE_CHECK_PORT:-19405}"
BASE_PORT_OFFSET="${BASE_PORT_OFFSET:-10}"
MODES="${MODES:-off observe repair}"
. "$root/bench/lib.sh"
bench_work_dir

echo "== building (release)" >&2
cargo build --release -q -p mend-cli
cargo build --release -q -p mend-gateway --example gateway_overhead --example bare_proxy
cargo run --release -q -p mend --example gen_corpus -- "$work/corpus" >/dev/null
target_dir="$(cargo_target_dir)"
bin="$target_dir/release"
# MEND_BIN: another build of mend to measure (a baseline), with this tree's mock and load.
mend_bin="${MEND_BIN:-$bin/mend}"
base_bin="${MEND_BASE_BIN:-}"
cpus="$(nproc)"

# Each dialect's endpoint and credentials header (the mock checks none; mend passes
# them through), and its 200 KB body without `stream` (the mock answers JSON).
endpoint() {
  case "$1" in
    openai_chat) echo "/v1/chat/completions" ;;
    openai_responses) echo "/v1/responses" ;;
    anthropic) echo "/v1/messages" ;;
    gemini) echo "/v1beta/models/gemini-2.0-flash:generateContent" ;;
    bedrock_converse) echo "/model/anthropic.claude-3-5-sonnet-20241022-v2:0/converse" ;;
  esac
}
credentials() {
  case "$1" in
    anthropic) echo "x-api-key: sk-ant-bench" ;;
    gemini) echo "x-goog-api-key: bench" ;;
    *) echo "authorization: Bearer sk-bench" ;;
  esac
}
for d in $DIALECTS; do
  python3 - "$work/corpus/$d-200KB.json" "$work/body-$d.json" <<'PY'
import json, sys
body = json.load(open(sys.argv[1]))
body.pop("stream", None)
open(sys.argv[2], "w").write(json.dumps(body, separators=(",", ":")))
PY
done

name="${RESULTS_NAME:-gateway-overhead}"
raw="$root/bench/results/raw/$name.jsonl"
mkdir -p "$(dirname "$raw")"
: >"$raw"

# One layout: start the mock and the two gateways under its pinning, run every dialect
# at 1 and CONC connections, stop them.
run_layout() {
  local layout="$1" pin_mend=() pin_load=()
  if [ "$layout" = split ] && [ "$cpus" -ge 2 ]; then
    pin_mend=(taskset -c 1)
    pin_load=(taskset -c 0)
  fi
  local lpids=()
  "${pin_load[@]}" "$bin/examples/gateway_overhead" mock "127.0.0.1:$MOCK_PORT" >/dev/null &
  lpids+=($!)
  # The floor: the bare proxy, pinned as mend is.
  "${pin_mend[@]}" "$bin/examples/bare_proxy" "127.0.0.1:$BARE_PORT" "127.0.0.1:$MOCK_PORT" >/dev/null &
  lpids+=($!)
  local targets=(--target "direct=127.0.0.1:$MOCK_PORT" --target "bare=127.0.0.1:$BARE_PORT"
    --cpu-pid "bare=$!") ports=("$MOCK_PORT" "$BARE_PORT")
  # The floor of a proxy that checks before it sends: the bare proxy and mend's check.
  "${pin_mend[@]}" "$bin/examples/bare_proxy" "127.0.0.1:$BARE_CHECK_PORT" "127.0.0.1:$MOCK_PORT" \
    --check >/dev/null &
  lpids+=($!)
  targets+=(--target "bare-check=127.0.0.1:$BARE_CHECK_PORT" --cpu-pid "bare-check=$!")
  ports+=("$BARE_CHECK_PORT")
  local builds=("$mend_bin:") mode port name
  [ -n "$base_bin" ] && builds+=("$base_bin:base-")
  for build in "${builds[@]}"; do
    for mode in $MODES; do
      case "$mode" in
        off) port="$OFF_PORT" ;;
        observe) port="$OBSERVE_PORT" ;;
        repair) port="$REPAIR_PORT" ;;
        *) echo "MODES: unknown mode $mode" >&2; return 1 ;;
      esac
      name="${build##*:}$mode"
      [ "$name" != "$mode" ] && port=$((port + BASE_PORT_OFFSET))
      # mend as users run it: default log level (one `exchange` line a request, to a file).
      MEND_OPENAI_BASE_URL="http://127.0.0.1:$MOCK_PORT" \
        MEND_ANTHROPIC_BASE_URL="http://127.0.0.1:$MOCK_PORT" \
        MEND_GEMINI_BASE_URL="http://127.0.0.1:$MOCK_PORT" \
        MEND_BEDROCK_BASE_URL="http://127.0.0.1:$MOCK_PORT" \
        "${pin_mend[@]}" "${build%:*}" serve --listen "127.0.0.1:$port" --mode "$mode" \
        2>"$work/mend-$layout-$name.log" &
      lpids+=($!)
      targets+=(--target "$name=127.0.0.1:$port" --cpu-pid "$name=$!")
      ports+=("$port")
    done
  done
  pids+=("${lpids[@]}")
  for port in "${ports[@]}"; do
    wait_port "$port" 10
  done
  for d in $DIALECTS; do
    for conns in 1 "$CONC"; do
      echo "== $layout: $d, $conns connection(s)" >&2
      "${pin_load[@]}" "$bin/examples/gateway_overhead" load \
        --body "$work/body-$d.json" --path "$(endpoint "$d")" \
        --header "$(credentials "$d")" --header "anthropic-version: 2023-06-01" \
        "${targets[@]}" --connections "$conns" --seconds "$SECS" --warmup "$WARMUP" --rounds "$ROUNDS" |
        python3 -c 'import json,sys
for l in sys.stdin:
    d = json.loads(l); d.update(layout=sys.argv[1], dialect=sys.argv[2]); print(json.dumps(d))' \
          "$layout" "$d" | tee -a "$raw" >&2
    done
  done
  for p in "${lpids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${lpids[@]}"; do wait "$p" 2>/dev/null || true; done
  # The bodies are valid: mend must have repaired nothing and failed nothing.
  if grep -q "WARN\|ERROR" "$work"/mend-"$layout"-*.log; then
    echo "mend serve logged problems:" >&2
    grep -h "WARN\|ERROR" "$work"/mend-"$layout"-*.log | head -20 >&2
  fi
}

for layout in $LAYOUTS; do
  run_layout "$layout"
done

python3 - "$raw" "$root/bench/results/$name.md" "$CONC" "$SECS" "$ROUNDS" "$TARGET_LAYOUT" <<'PY'
import json, os, platform, statistics, subprocess, sys
raw, out, conc, secs, rounds, target_layout = sys.argv[1:7]
conc = int(conc)
runs = [json.loads(l) for l in open(raw) if l.strip()]
med = lambda xs: statistics.median(xs) if xs else float("nan")
def sel(layout, dialect, target, c):
    return {r["round"]: r for r in runs if r["layout"] == layout and r["dialect"] == dialect
            and r["target"] == target and r["connections"] == c}
def pair(layout, dialect, mode, c):
    d, m = sel(layout, dialect, "direct", c), sel(layout, dialect, mode, c)
    rs = sorted(set(d) & set(m))
    if not rs:
        return None
    return {
        "direct_p50": med([d[r]["p50_us"] for r in rs]), "mend_p50": med([m[r]["p50_us"] for r in rs]),
        "added_p50": med([m[r]["p50_us"] - d[r]["p50_us"] for r in rs]),
        "direct_rps": med([d[r]["rps"] for r in rs]), "mend_rps": med([m[r]["rps"] for r in rs]),
        "rps_ratio": med([m[r]["rps"] / d[r]["rps"] for r in rs if d[r]["rps"] > 0]),
        "cpu": med([m[r]["cpu_us_per_request"] for r in rs if m[r].get("cpu_us_per_request") is not None]),
        "errors": sum(m[r]["errors"] + d[r]["errors"] for r in rs),
    }
try:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
except OSError:
    commit = "?"
try:
    load = " / ".join(open("/proc/loadavg").read().split()[:2])
except OSError:
    load = "?"
layouts = [l for l in dict.fromkeys(r["layout"] for r in runs)]
order = ["bare", "bare-check", "off", "observe", "repair"]
named = set(r["target"] for r in runs) - {"direct"}
modes = [m for m in order if m in named] + [f"base-{m}" for m in order if f"base-{m}" in named]
dialects = [d for d in dict.fromkeys(r["dialect"] for r in runs)]
ms = lambda us: f"{us / 1000:.3f} ms"
lines = ["# What mend serve adds, against an upstream that costs nothing", "",
         f"Machine: {platform.machine()}, {os.cpu_count()} CPUs shared by the mock, the load generator and mend, "
         f"{platform.system()} {platform.release()}, load average {load} (1 / 5 min) at the end; commit {commit}. "
         f"Mock and load: `examples/gateway_overhead.rs` (plain hyper, one thread each, keep-alive HTTP/1.1, closed loop). "
         f"mend: release build, default log level. Each run {secs} s after warm-up; direct, the bare proxy and "
         f"mend's modes alternate, {rounds} round(s); figures are medians over the rounds of each round's difference or ratio. "
         f"Layouts: `shared` nothing pinned; `split` mend on CPU 1, mock and load on CPU 0. "
         f"`bare` is the floor of any proxy here: `examples/bare_proxy.rs` reads the body whole, forwards it and streams "
         f"the answer back, nothing else, on mend's stack and runtime settings; `bare-check` is the same proxy "
         f"running one `mend::check` of each body before it sends it: the floor of a proxy that checks first. "
         f"Mode `off` is mend's proxy path without looking at the body. "
         f"CPU/request: mend's user + system time over the run divided by its requests.", ""]
targets = []
for layout in layouts:
    for c in [1, conc]:
        lines += [f"## {layout}, {c} connection(s), 200 KB bodies", "",
                  "| dialect | mode | direct p50 | mend p50 | added p50 | direct rps | mend rps | mend/direct rps | mend CPU/request | errors |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for mode in modes:
            for d in dialects:
                p = pair(layout, d, mode, c)
                if not p:
                    continue
                lines.append(f"| {d} | {mode} | {ms(p['direct_p50'])} | {ms(p['mend_p50'])} | {ms(p['added_p50'])} | "
                             f"{p['direct_rps']:.0f} | {p['mend_rps']:.0f} | {p['rps_ratio']:.2f} | "
                             f"{p['cpu']:.0f} µs | {p['errors']} |")
        lines.append("")
# Target rows: per mode, the worst dialect of the target layout.
for mode in ["observe", "repair"]:
    for c, key, budget, ok, fmt in [
        (1, "added_p50", "< 0.3 ms", lambda v: v < 300, "added p50, 1 connection"),
        (conc, "added_p50", "< 1 ms", lambda v: v < 1000, f"added p50, {conc} connections"),
        (conc, "rps_ratio", ">= 0.5", lambda v: v >= 0.5, f"rps through mend / direct, {conc} connections"),
    ]:
        ps = [(d, pair(target_layout, d, mode, c)) for d in dialects]
        ps = [(d, p) for d, p in ps if p]
        if not ps:
            continue
        worst = (max if key == "added_p50" else min)(ps, key=lambda dp: dp[1][key])
        d, p = worst
        value = p[key] / 1000 if key == "added_p50" else p[key]
        detail = (f"direct p50 {ms(p['direct_p50'])}, mend p50 {ms(p['mend_p50'])}" if key == "added_p50"
                  else f"direct {p['direct_rps']:.0f} rps, mend {p['mend_rps']:.0f} rps")
        # The floors: the bare proxy's figure for the same dialect, connections and rounds,
        # and the bare proxy's with mend's check before it sends.
        for name, what in [("bare", "bare proxy"), ("bare-check", "bare proxy + check")]:
            floor = pair(target_layout, d, name, c)
            if floor:
                detail += (f"; floor ({what}) {floor[key] / 1000:.3f} ms added" if key == "added_p50"
                           else f"; floor ({what}) {floor[key]:.2f} of direct")
        targets.append({"target": 5,
                        "label": f"gateway {fmt}, {mode} mode, 200 KB (worst: {d}; layout {target_layout})",
                        "ratio": round(value, 3), "budget": budget, "met": bool(ok(p[key])),
                        "detail": f"{detail}; mend CPU {p['cpu']:.0f} µs/request"})
lines += ["## Targets (issue 17, target 5)", "", "| target | value | budget | met | detail |", "|---|---|---|---|---|"]
for t in targets:
    unit = " ms" if "added" in t["label"] else ""
    lines.append(f"| {t['label']} | {t['ratio']}{unit} | {t['budget']} | {'met' if t['met'] else 'NOT MET'} | {t['detail']} |")
lines += ["", "Reproduce: `bench/gateway-overhead.sh` (raw runs in `bench/results/raw/gateway-overhead.jsonl`)."]
open(out, "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
sys.path.insert(0, "bench")
import targets as target_rows  # noqa: E402

target_rows.emit(targets)
PY
