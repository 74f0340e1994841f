#!/usr/bin/env python3
"""Build the fuzz seed corpora under fuzz/corpus/<target>/ from cases/ and the shared
fixtures (../shared/fixtures beside the clone, or $MEND_SHARED/fixtures).

Each seed is one selector byte (the dialect's index in Dialect::ALL: openai_chat 0,
openai_responses 1, anthropic 2, gemini 3, bedrock_converse 4, plus 5 times the target's
options) followed by the bytes under test, as
fuzz/src/lib.rs reads them. Nothing here is committed: the corpora are rebuilt on demand.
"""
import base64
import hashlib
import json
import os
import sys
from pathlib import Path

DIALECTS = ["openai_chat", "openai_responses", "anthropic", "gemini", "bedrock_converse"]
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
    # json_tape reads the bytes as they are: no dialect byte in front.
    d = corpus / "json_tape"
    d.mkdir(parents=True, exist_ok=True)
    (d / hashlib.sha1(data).hexdigest()).write_bytes(data)
    counts["json_tape"] = counts.get("json_tape", 0) + 1


def pair(target, selector, data):
    d = corpus / target
    d.mkdir(parents=True, exist_ok=True)
    seed = bytes([selector]) + data
    (d / hashlib.sha1(seed).hexdigest()).write_bytes(seed)
    counts[target] = counts.get(target, 0) + 1


def response_bytes(path):
    """A response file's bytes; `response.stream.txt` is the base64 of Converse's binary
    event stream."""
    if path.name == "response.stream.txt":
        return base64.b64decode("".join(path.read_text().split()))
    return path.read_bytes()


def next_seed(dialect, folder):
    """A request, a NUL byte and the response it got (next's input)."""
    req = folder / "request.json"
    for name in ("response.json", "response.sse", "response.stream.txt"):
        resp = folder / name
        if req.is_file() and resp.is_file():
            pair("next", DIALECTS.index(dialect), req.read_bytes() + b"\0" + response_bytes(resp))


for f in sorted((root / "cases").glob("*/*/*.json")):
    dialect = f.relative_to(root / "cases").parts[0]
    if dialect not in DIALECTS:
        continue
    case = json.loads(f.read_text())
    body = json.dumps(case["body"], indent=1).encode()
    request(dialect, body)
    # convert: the source dialect, plus 5 times a target (each case one).
    to = int(hashlib.sha1(body).hexdigest(), 16) % len(DIALECTS)
    pair("convert", DIALECTS.index(dialect) + len(DIALECTS) * to, body)

for f in sorted((root / "cases" / "convert").glob("*.json")):
    case = json.loads(f.read_text())
    if case.get("from") in DIALECTS and case.get("to") in DIALECTS:
        sel = DIALECTS.index(case["from"]) + len(DIALECTS) * DIALECTS.index(case["to"])
        pair("convert", sel, json.dumps(case["body"], indent=1).encode())

for folder in sorted((root / "cases" / "next").glob("*/")):
    case = json.loads((folder / "case.json").read_text()) if (folder / "case.json").is_file() else {}
    dialect = case.get("dialect") or next((d for d in DIALECTS if folder.name.startswith(d.split("_")[0])), None)
    if dialect in DIALECTS:
        next_seed(dialect, folder)

for f in sorted((root / "examples").glob("*.json")):
    dialect = next((d for d in sorted(DIALECTS, key=len, reverse=True) if f.name.startswith(d + "-")), None)
    if dialect:
        request(dialect, f.read_bytes())

fixtures = shared / "fixtures"
if not fixtures.is_dir():
    print(f"seed.py: {fixtures} not found; seeding from cases/ and examples/ only", file=sys.stderr)
else:
    for dialect in DIALECTS:
        for folder in sorted((fixtures / dialect).glob("*/")):
            next_seed(dialect, folder)
        for f in sorted((fixtures / dialect).glob("*/*")):
            if f.name in ("request.json", "rejected-request.json"):
                request(dialect, f.read_bytes())
            elif f.name == "response.json":
                put("response", dialect, f.read_bytes())
            elif f.name == "response.sse":
                put("stream", dialect, f.read_bytes())

converse = shared / "fixtures-bedrock-converse"
for folder in sorted(converse.glob("*/")):
    next_seed("bedrock_converse", folder)

print("seed corpora:", ", ".join(f"{t} {n}" for t, n in sorted(counts.items())))
