#!/usr/bin/env python3
"""LiteLLM's side of `bench/report`: its history sanitizing and its request
transformations, timed in-process on the report corpus, outputs kept for judging.

Tasks, on each sample's `openai_chat` body (LiteLLM's input format):

- `repair:openai_chat`: `sanitize_messages_for_tool_calling` (litellm's
  prompt_templates factory), the pass LiteLLM runs on OpenAI-format messages when
  `litellm.modify_params = True`: it adds a result to calls without one, drops results
  that answer no call in the previous assistant message, fills empty text and keeps the
  last of duplicated results.
- `convert:anthropic`: `AnthropicConfig.transform_request` (which runs
  `anthropic_messages_pt`, the sanitizer included).
- `convert:gemini`: `_transform_request_body` (Gemini API, `generateContent` body).
- `convert:openai_responses`: the Responses bridge's
  `convert_chat_completion_messages_to_responses_api`.
- `convert:bedrock_converse`: `AmazonConverseConfig._transform_request` (the Converse
  body LiteLLM posts to `/model/{id}/converse`).

Each under `modify_params=True` (LiteLLM's documented switch for fixing histories,
timed) and `False` (its default; outputs only). The timing is the median of `--reps`
runs after one warm-up, of the call plus `json.dumps` of the request body; every run
gets a fresh deep copy of the messages (made outside the timer), since LiteLLM may
change them in place. One JSON line per sample, task and mode on stdout.
"""

from __future__ import annotations

import argparse
import copy
import json
import logging
import os
import sys
import time
import warnings

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network at import
warnings.filterwarnings("ignore")

import litellm  # noqa: E402
from litellm.completion_extras.litellm_responses_transformation.transformation import (  # noqa: E402
    LiteLLMResponsesTransformationHandler,
)
from litellm.litellm_core_utils.prompt_templates.factory import (  # noqa: E402
    sanitize_messages_for_tool_calling,
)
from litellm.llms.anthropic.chat.transformation import AnthropicConfig  # noqa: E402
from litellm.llms.bedrock.chat.converse_transformation import AmazonConverseConfig  # noqa: E402
from litellm.llms.vertex_ai.gemini.transformation import _transform_request_body  # noqa: E402
from litellm.llms.vertex_ai.gemini.vertex_and_google_ai_studio_gemini import (  # noqa: E402
    VertexGeminiConfig,
)

logging.getLogger("LiteLLM").setLevel(logging.CRITICAL)
litellm.suppress_debug_info = True

ANTHROPIC_MODEL = "claude-sonnet-4-5"
GEMINI_MODEL = "gemini-2.5-flash"
CONVERSE_MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
RESPONSES_MODEL = "gpt-4o"


def repair_chat(body: dict, msgs: list) -> dict:
    out = dict(body)
    out["messages"] = sanitize_messages_for_tool_calling(msgs)
    return out


def to_anthropic(body: dict, msgs: list) -> dict:
    cfg = AnthropicConfig()
    params = cfg.map_openai_params({"tools": body.get("tools", []), "max_tokens": 4096}, {},
                                   ANTHROPIC_MODEL, drop_params=False)
    out = cfg.transform_request(ANTHROPIC_MODEL, msgs, params, {}, {})
    out.setdefault("model", ANTHROPIC_MODEL)
    return out


def to_gemini(body: dict, msgs: list) -> dict:
    params = VertexGeminiConfig().map_openai_params({"tools": body.get("tools", [])}, {},
                                                    GEMINI_MODEL, drop_params=False)
    return dict(_transform_request_body(msgs, GEMINI_MODEL, params, "gemini", {}, None))


_BRIDGE = LiteLLMResponsesTransformationHandler()


def to_responses(body: dict, msgs: list) -> dict:
    items, instructions = _BRIDGE.convert_chat_completion_messages_to_responses_api(msgs)
    out = {"model": RESPONSES_MODEL, "input": items}
    if instructions is not None:
        out["instructions"] = instructions
    return out


def to_converse(body: dict, msgs: list) -> dict:
    cfg = AmazonConverseConfig()
    params = cfg.map_openai_params({"tools": body.get("tools", [])}, {}, CONVERSE_MODEL, drop_params=False)
    return dict(cfg._transform_request(CONVERSE_MODEL, msgs, params, {}, {}))


TASKS = {"repair:openai_chat": repair_chat, "convert:anthropic": to_anthropic,
         "convert:gemini": to_gemini, "convert:openai_responses": to_responses,
         "convert:bedrock_converse": to_converse}


def plain(v):
    """LiteLLM returns TypedDicts and sometimes pydantic objects: make it JSON."""
    return json.loads(json.dumps(v, default=lambda o: o.model_dump() if hasattr(o, "model_dump") else str(o)))


def run(fn, body: dict, reps: int):
    times = []
    out = err = None
    for _ in range(reps):
        msgs = copy.deepcopy(body["messages"])
        t = time.perf_counter_ns()
        try:
            out = fn(body, msgs)
            json.dumps(out, default=str)
            err = None
        except Exception as e:  # LiteLLM raising is a rejection before sending
            err = "%s: %s" % (type(e).__name__, str(e)[:300])
        times.append(time.perf_counter_ns() - t)
    times.sort()
    return (None if err else out), err, times[len(times) // 2]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus")
    ap.add_argument("--reps", type=int, default=7)
    a = ap.parse_args()
    samples = [json.loads(line) for line in open(a.corpus, encoding="utf-8") if line.strip()]
    samples = [s for s in samples if "openai_chat" in s["bodies"]]
    w = sys.stdout
    for modify in (True, False):
        litellm.modify_params = modify
        reps = a.reps if modify else 1
        for name, fn in TASKS.items():
            for s in samples:  # warm-up
                run(fn, s["bodies"]["openai_chat"], 1)
            for s in samples:
                out, err, ns = run(fn, s["bodies"]["openai_chat"], reps)
                rec = {"id": s["id"], "task": name, "modify_params": modify, "ok": err is None,
                       "ns": ns if modify else None}
                if err is None:
                    rec["body"] = plain(out)
                else:
                    rec["error"] = err
                w.write(json.dumps(rec) + "\n")
    w.flush()


if __name__ == "__main__":
    main()
