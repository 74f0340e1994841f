#!/usr/bin/env bash
# Run the `check` criterion bench and report how many times faster `mend::check(bytes)`
# is than a plain serde_json `Value` parse of the same bytes, measured in the same run
# (issue 17 target 1: parse time / check time >= 3 on the 200 KB and 5 MB bodies of every
# dialect). With MEND_TARGETS set, one JSON line per 200 KB and 5 MB row is appended to
# that file. Arguments go to criterion, e.g. a filter:
#   bench/check-ratios.sh             # everything (~3 minutes)
#   bench/check-ratios.sh 5MB         # only the 5 MB bodies
# The target rows are then measured again in paired rounds (`examples/check_pair.rs`: a
# batch of parses and a batch of checks back to back, 31 times, the median round's
# ratio), so that the shared host changing speed between criterion's parse and check
# measurements does not move the ratio; both figures go in the table.
# The table is printed and written to bench/results/check-ratios.md.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

stamp="$(mktemp)"
trap 'rm -f "$stamp"' EXIT
sleep 1 # so every estimate this run writes is strictly newer than the stamp

cargo bench -p mend --bench check -- "$@"

# The paired rounds, for the target sizes the filter (if any) selected.
paired="$(mktemp)"
trap 'rm -f "$stamp" "$paired"' EXIT
case "${1:-}" in
  200KB | 5MB) pair_sizes="$1" ;;
  "" | --*) pair_sizes="200KB,5MB" ;;
  *) pair_sizes="" ;;
esac
if [[ -n $pair_sizes ]]; then
  cargo run --quiet --release -p mend --example check_pair -- --sizes "$pair_sizes" > "$paired"
fi

. "$root/bench/lib.sh"
target_dir="$(cargo_target_dir)"

python3 - "$target_dir/criterion" "$stamp" "$root/bench/results/check-ratios.md" "$paired" <<'PY'
import json, os, platform, subprocess, sys, time
from pathlib import Path

crit, stamp, out = Path(sys.argv[1]), os.path.getmtime(sys.argv[2]), Path(sys.argv[3])
paired = {(p["dialect"], p["size"]): p
          for p in map(json.loads, Path(sys.argv[4]).read_text().splitlines())}
BUDGET = 3.0  # parse time / check time, at least
TARGET_SIZES = ("200KB", "5MB")
DIALECTS = ["openai_chat", "openai_responses", "anthropic", "gemini", "bedrock_converse"]
SIZES = ["5KB", "200KB", "5MB"]

def load(group, fn):
    d = crit / group / fn / "new"
    est = d / "estimates.json"
    if not est.exists() or est.stat().st_mtime < stamp:
        return None  # not measured in this run
    e = json.loads(est.read_text())
    b = json.loads((d / "benchmark.json").read_text())
    return e["median"], b.get("throughput") or {}

def fmt(ns):
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.3g} ns"

rows, targets = [], []
for size in SIZES:
    for dialect in DIALECTS:
        group = f"{dialect}-{size}"
        p, c = load(group, "parse"), load(group, "check")
        if not (p and c):
            continue
        (pm, tp), (cm, _) = p, c
        nbytes = tp.get("Bytes", 0)
        pt, ct = pm["point_estimate"], cm["point_estimate"]
        # Worst and best case of the ratio from the two medians' 95% intervals.
        lo = pm["confidence_interval"]["lower_bound"] / cm["confidence_interval"]["upper_bound"]
        hi = pm["confidence_interval"]["upper_bound"] / cm["confidence_interval"]["lower_bound"]
        ratio = pt / ct
        pair = paired.get((dialect, size))
        # The target is judged on the paired rounds where they ran (see the header).
        judged = pair["ratio"] if pair else ratio
        met = judged >= BUDGET
        rows.append([dialect, size, f"{nbytes:,}", fmt(pt), f"{nbytes / pt * 1e3:.0f}",
                     fmt(ct), f"{nbytes / ct * 1e3:.0f}", f"{ratio:.2f}x", f"{lo:.2f}–{hi:.2f}",
                     f"{pair['ratio']:.2f}x ({pair['ratio_q1']:.2f}–{pair['ratio_q3']:.2f})" if pair else "",
                     ("met" if met else "NOT MET") if size in TARGET_SIZES else ("ok" if met else "under")])
        if size in TARGET_SIZES:
            detail = f"criterion medians: parse {fmt(pt)}, check {fmt(ct)}, {ratio:.2f}x ({nbytes:,} bytes)"
            if pair:
                detail = (f"paired: median of {pair['rounds']} rounds, quartiles {pair['ratio_q1']:.2f}–"
                          f"{pair['ratio_q3']:.2f} (parse {fmt(pair['parse_ns'])}, check "
                          f"{fmt(pair['check_ns'])}); {detail}")
            targets.append({"target": 1, "label": f"check vs serde_json Value parse, {dialect} {size}",
                            "ratio": round(judged, 3), "budget": f">= {BUDGET:g}", "met": met,
                            "detail": detail})

REPAIR_BUDGET = 3.0
repair_rows = []
for size in SIZES:
    for dialect in DIALECTS:
        group = f"{dialect}-{size}-damaged"
        p, r = load(group, "parse"), load(group, "repair")
        if not (p and r):
            continue
        (pm, tp), (rm, _) = p, r
        pt, rt = pm["point_estimate"], rm["point_estimate"]
        ratio = rt / pt
        repair_rows.append([dialect, size, f"{tp.get('Bytes', 0):,}", fmt(pt), fmt(rt), f"{ratio:.2f}x",
                            "ok" if ratio <= REPAIR_BUDGET else "OVER"])

if not rows:
    sys.exit("no parse/check pair was measured in this run (check the filter)")

head = ["dialect", "size", "bytes", "parse (median)", "parse MB/s", "check (median)",
        "check MB/s", "parse/check", "95% range", "paired (quartiles)", f">= {BUDGET:g}x"]
table = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
table += ["| " + " | ".join(r) + " |" for r in rows]

def sh(*cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip()
    except Exception:
        return "?"

cpu = "?"
try:
    cpu = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name"))
except Exception:
    pass
over = [r for r in rows if r[-1] == "NOT MET"]
doc = [
    "# check vs parse",
    "",
    "`mend::check(bytes)` against `serde_json::from_slice::<Value>(bytes)` on the same body,",
    "both measured in the same `cargo bench -p mend --bench check` run (criterion medians).",
    f"Issue 17 target 1: check at least {BUDGET:g}x faster than the parse (parse time / check",
    "time) on the 200 KB and 5 MB bodies of every dialect; the 5 KB rows are shown, not judged.",
    "The target rows are judged on paired rounds (`examples/check_pair.rs`): a batch of parses",
    "and a batch of checks back to back, 31 rounds, the order alternating, the median round's",
    "ratio with its quartiles; criterion's two medians are measured seconds apart, and the",
    "shared host's speed moves between them.",
    "`check` reads the bytes onto a tape (`mend::json`) and includes that pass.",
    "Produced by `bench/check-ratios.sh`.",
    "",
    f"- date: {time.strftime('%Y-%m-%d %H:%M %Z')}",
    f"- commit: {sh('git', 'rev-parse', '--short', 'HEAD')}"
    + (" (dirty tree)" if sh('git', 'status', '--porcelain') not in ("", "?") else ""),
    f"- rustc: {sh('rustc', '--version')}",
    f"- machine: {cpu}, {os.cpu_count()} cores, {platform.system()} (shared; expect noise)",
    "",
    *table,
    "",
    f"{len(targets) - len(over)} of {len(targets)} target rows met"
    + (f"; not met: {', '.join(r[0] + ' ' + r[1] for r in over)}" if over else "") + ".",
    "",
]
if repair_rows:
    rhead = ["dialect", "size", "bytes", "parse (median)", "parse + repair (median)", "ratio", f"<= {REPAIR_BUDGET}x"]
    doc += [
        "## check + repair vs parse",
        "",
        "`mend::parse_body` + `mend::repair::repair` on a damaged copy of each body (every 37th",
        "history item removed, every 53rd duplicated; in the short 5 KB histories the second",
        "item removed and the last doubled),",
        "against a plain parse of the same bytes.",
        f"DESIGN.md budget: at most {REPAIR_BUDGET}x.",
        "",
        "| " + " | ".join(rhead) + " |",
        "|" + "|".join("---" for _ in rhead) + "|",
        *["| " + " | ".join(r) + " |" for r in repair_rows],
        "",
    ]
text = "\n".join(doc)
out.parent.mkdir(parents=True, exist_ok=True)
out.write_text(text)
print()
print(text)
print(f"written to {out}")
sys.path.insert(0, "bench")
import targets as target_rows  # noqa: E402

target_rows.emit(targets)
PY
