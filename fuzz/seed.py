#!/usr/bin/env python3
"""Build the fuzz seed corpora under fuzz/corpus/<target>/ from cases/ and the shared
fixtures (../shared/fixtures beside the clone, or $MEND_SHARED/fixtures).

Each seed is one selector byte (the dialect's index in Dialect::ALL: openai_chat 0,
openai_responses 1, anthropic 2, gemini 3) followed by the bytes under test, as
fuzz/src/lib.rs reads them. Nothing here is committed: the corpora are rebuilt on demand.
"""
import hashlib
import json
import os
import sys
from pathlib import Path

DIALECTS = ["openai_chat", "openai_responses", "anthropic", "gemini"]
REQUEST_TARGETS = ["check", "repair", "trim", "roundtrip"]

fuzz = Path(__file__).resolve().parent
root = fuzz.parent
shared = Path(os.environ.get("MEND_SHARED", root.parent / "shared"))
corpus = fuzz / "corpus"
counts = {}


def put(target, dialect, data):
    d = corpus / target
    d.mkdir(parents=True, exist_ok=True)
    seed = bytes([DIALECTS.index(dialect)]) + data
    (d / hashlib.sha1(seed).hexdigest()).write_bytes(seed)
    counts[target] = counts.get(target, 0) + 1


def request(dialect, data):
    for t in REQUEST_TARGETS:
        put(t, dialect, data)


for f in sorted((root / "cases").glob("*/*/*.json")):
    dialect = f.relative_to(root / "cases").parts[0]
    case = json.loads(f.read_text())
    request(dialect, json.dumps(case["body"], indent=1).encode())

for f in sorted((root / "examples").glob("*.json")):
    dialect = next((d for d in sorted(DIALECTS, key=len, reverse=True) if f.name.startswith(d + "-")), None)
    if dialect:
        request(dialect, f.read_bytes())

fixtures = shared / "fixtures"
if not fixtures.is_dir():
    print(f"seed.py: {fixtures} not found; seeding from cases/ and examples/ only", file=sys.stderr)
else:
    for dialect in DIALECTS:
        for f in sorted((fixtures / dialect).glob("*/*")):
            if f.name in ("request.json", "rejected-request.json"):
                request(dialect, f.read_bytes())
            elif f.name == "response.json":
                put("response", dialect, f.read_bytes())
            elif f.name == "response.sse":
                put("stream", dialect, f.read_bytes())

print("seed corpora:", ", ".join(f"{t} {n}" for t, n in sorted(counts.items())))
