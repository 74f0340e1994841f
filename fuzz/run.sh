#!/usr/bin/env bash
# Build every fuzz target and run each for SECONDS (default 60), one after another.
# Exits non-zero when any target crashes (a panic is a crash: every property in
# fuzz/src/lib.rs panics when it does not hold), runs one input longer than 10 s, or goes
# over 2 GiB; the input is left in fuzz/artifacts/<target>/ and the failing targets are
# named at the end.
#
#   fuzz/run.sh 10                   # a short run, as in CI
#   fuzz/run.sh 600                  # a long one, before closing a change to a parser
#   FUZZ_TARGETS="repair trim" fuzz/run.sh 60
#   FUZZ_RUNS=20000 fuzz/run.sh      # as in CI: a fixed number of inputs per target from a
#                                    # fixed seed (FUZZ_SEED, default 1), so a run is the same
#                                    # run on every machine and a CI verdict can be replayed
#
# Needs cargo-fuzz (`cargo install cargo-fuzz --locked`). On a stable toolchain the
# nightly-only flags cargo fuzz passes are allowed with RUSTC_BOOTSTRAP=1, set here.
# No sanitizer (-s none): the library forbids unsafe code, so AddressSanitizer would find
# nothing more and costs a third of the speed; debug assertions and overflow checks are on.
set -euo pipefail
cd "$(dirname "$0")"
seconds="${1:-60}"
export RUSTC_BOOTSTRAP=1
flags=(-O -a -s none)

if ! command -v cargo-fuzz >/dev/null 2>&1; then
  echo "run.sh: cargo-fuzz is not installed (cargo install cargo-fuzz --locked)" >&2
  exit 2
fi

python3 seed.py
cargo fuzz build "${flags[@]}"

targets="${FUZZ_TARGETS:-$(cargo fuzz list)}"
if [[ -n "${FUZZ_RUNS:-}" ]]; then
  budget=(-runs="$FUZZ_RUNS" -seed="${FUZZ_SEED:-1}")
  what="$FUZZ_RUNS inputs (seed ${FUZZ_SEED:-1})"
else
  budget=(-max_total_time="$seconds")
  what="${seconds}s"
fi
failed=()
for t in $targets; do
  echo "== $t: $what"
  mkdir -p "artifacts/$t" "corpus/$t" # a target seed.py gives no seeds starts empty
  if ! cargo fuzz run "${flags[@]}" "$t" "corpus/$t" -- \
      "${budget[@]}" -timeout=10 -rss_limit_mb=2048 -max_len=262144 \
      -print_final_stats=1 -close_fd_mask=1 2>"artifacts/$t.log"; then
    failed+=("$t")
    tail -n 40 "artifacts/$t.log" >&2
  else
    grep -E '^(stat::number_of_executed_units|stat::new_units_added)' "artifacts/$t.log" | tr '\n' ' '
    echo
  fi
done

if ((${#failed[@]})); then
  echo "run.sh: FAILED: ${failed[*]} (inputs in fuzz/artifacts/<target>/, logs in fuzz/artifacts/<target>.log)" >&2
  exit 1
fi
echo "run.sh: every target ran $what without a crash, timeout or out-of-memory"
