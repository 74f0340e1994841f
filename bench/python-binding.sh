#!/usr/bin/env bash
# mend's Python binding against LiteLLM (repair) and LangChain (trim), in one process:
# installs the binding with the documented command (`pip install ./bindings/python`, a
# release build) into bench/.venv beside the pinned peers, then runs
# bench/python_binding.py and prints its table (also written to
# bench/results/python-binding.md).
set -euo pipefail
BENCH="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(dirname "$BENCH")"
VENV="$BENCH/.venv"
# The same pins as bench/report.
PINS=("langchain-core==1.7.2" "tiktoken==0.14.0" "litellm==1.103.7")

[[ -x "$VENV/bin/python" ]] || python3 -m venv "$VENV"
PY="$VENV/bin/python"
missing=0
for p in "${PINS[@]}"; do
  "$PY" -m pip freeze 2>/dev/null | grep -qix "$p" || missing=1
done
[[ $missing == 0 ]] || "$PY" -m pip install --quiet "${PINS[@]}"
"$PY" -m pip install --quiet --disable-pip-version-check "$ROOT/bindings/python"

. "$BENCH/tiktoken-cache.sh"

mkdir -p "$BENCH/results"
"$PY" "$BENCH/python_binding.py" "$@" | tee "$BENCH/results/python-binding.md"
