#!/usr/bin/env bash
# Peak memory of `mend check` (issue 17 target 6), measured with /usr/bin/time -v on the
# release binary:
#   - one 60 MB body per dialect (a long agent conversation from the benchmark corpus
#     generator): peak RSS / body size, budget < 2;
#   - a folder of 200 KB bodies checked in one run, at 10 and at 400 files: peak RSS at
#     400 / peak RSS at 10, budget < 1.25 (memory must not grow with the number of files:
#     each file is read, checked, printed and dropped).
# The table is printed and written to bench/results/check-memory.md; with MEND_TARGETS
# set, one JSON line per row is appended to that file.
#   bench/check-memory.sh            # everything (~2 minutes after the build)
#   MEND_MEMORY_MB=20 bench/check-memory.sh   # smaller bodies, for a smoke run
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
mb="${MEND_MEMORY_MB:-60}"

cargo build --release -q -p mend-cli
cargo build --release -q -p mend --example gen_corpus
. "$root/bench/lib.sh"
target_dir="$(cargo_target_dir)"
mend="$target_dir/release/mend"
gen="$target_dir/release/examples/gen_corpus"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

"$gen" "$work/bodies" "$mb" >/dev/null
"$gen" "$work/small" >/dev/null # the corpus sizes; the 200 KB ones fill the folders

# Peak RSS in KiB of `mend check ARGS...` (its output dropped; exit 0 or 1 are verdicts).
peak() {
  local log="$work/time.log"
  /usr/bin/time -v "$mend" check "$@" >/dev/null 2>"$log" || true
  awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}' "$log"
}

rows="$work/rows.tsv"
: >"$rows"
for body in "$work"/bodies/*-"$mb"MB.json; do
  dialect="$(basename "$body" "-${mb}MB.json")"
  bytes="$(stat -c %s "$body")"
  kib="$(peak --dialect "$dialect" "$body")"
  printf 'body\t%s\t%s\t%s\n' "$dialect" "$bytes" "$kib" >>"$rows"
done

for n in 10 400; do
  dir="$work/dir-$n"
  mkdir -p "$dir"
  i=0
  while [ "$i" -lt "$n" ]; do
    for src in "$work"/small/*-200KB.json; do
      [ "$i" -lt "$n" ] || break
      # Hard links: many files, no extra disk; each is opened and read on its own.
      ln "$src" "$dir/$(printf '%04d' "$i")-$(basename "$src")"
      i=$((i + 1))
    done
  done
  kib="$(peak "$dir")"
  # The sum of the files' sizes (du counts a hard-linked file once).
  total="$(find "$dir" -type f -printf '%s\n' | awk '{s += $1} END {print s}')"
  printf 'dir\t%s\t%s\t%s\n' "$n" "$total" "$kib" >>"$rows"
done

python3 - "$rows" "$root/bench/results/check-memory.md" "$mb" <<'PY'
import json, os, platform, subprocess, sys, time
from pathlib import Path

rows, out, mb = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
BODY_BUDGET, GROWTH_BUDGET = 2.0, 1.25
bodies, dirs = [], {}
for line in rows.read_text().splitlines():
    kind, name, nbytes, kib = line.split("\t")
    if kind == "body":
        bodies.append((name, int(nbytes), int(kib) * 1024))
    else:
        dirs[int(name)] = (int(nbytes), int(kib) * 1024)

def mib(b):
    return f"{b / 2**20:.1f} MiB"

targets = []
table = ["| body | size | peak RSS | RSS / size | < 2 |", "|---|---|---|---|---|"]
for name, nbytes, rss in bodies:
    ratio = rss / nbytes
    met = ratio < BODY_BUDGET
    table.append(f"| {name} {mb} MB | {mib(nbytes)} | {mib(rss)} | {ratio:.2f} | {'met' if met else 'NOT MET'} |")
    targets.append({"target": 6, "label": f"mend check peak RSS / body size, {name} {mb} MB",
                    "ratio": round(ratio, 3), "budget": f"< {BODY_BUDGET:g}", "met": met,
                    "detail": f"peak RSS {mib(rss)} for a {mib(nbytes)} body"})
dtable = ["| files (200 KB each) | total | peak RSS |", "|---|---|---|"]
for n, (nbytes, rss) in sorted(dirs.items()):
    dtable.append(f"| {n} | {mib(nbytes)} | {mib(rss)} |")
lo, hi = min(dirs), max(dirs)
growth = dirs[hi][1] / dirs[lo][1]
gmet = growth < GROWTH_BUDGET
targets.append({"target": 6, "label": f"mend check DIR peak RSS, {hi} files / {lo} files",
                "ratio": round(growth, 3), "budget": f"< {GROWTH_BUDGET:g}", "met": gmet,
                "detail": f"{mib(dirs[lo][1])} at {lo} files, {mib(dirs[hi][1])} at {hi} files"})

def sh(*cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip()
    except Exception:
        return "?"

doc = [
    "# check memory",
    "",
    "Peak resident memory of the release `mend check` (`/usr/bin/time -v`), issue 17 target 6.",
    "Produced by `bench/check-memory.sh`.",
    "",
    f"- date: {time.strftime('%Y-%m-%d %H:%M %Z')}",
    f"- commit: {sh('git', 'rev-parse', '--short', 'HEAD')}",
    f"- machine: {os.cpu_count()} cores, {platform.system()}",
    "",
    f"## one body: peak RSS / body size (budget < {BODY_BUDGET:g})",
    "",
    *table,
    "",
    f"## a folder: peak RSS with the number of files (budget: {hi} files / {lo} files < {GROWTH_BUDGET:g})",
    "",
    *dtable,
    "",
    f"growth {growth:.2f}x: {'met' if gmet else 'NOT MET'}.",
    "",
]
text = "\n".join(doc)
out.parent.mkdir(parents=True, exist_ok=True)
out.write_text(text)
print(text)
print(f"written to {out}")
sys.path.insert(0, "bench")
import targets as target_rows  # noqa: E402

target_rows.emit(targets)
PY
