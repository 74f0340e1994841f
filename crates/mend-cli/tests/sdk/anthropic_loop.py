"""The official Anthropic SDK through `mend serve` in every mode: a tool loop with
signed thinking sent back as it came, streamed and not, through a gateway in each of
off, observe, repair and strict; and a strict-mode rejection the SDK reports as
Anthropic's own 400."""

import json
import os

import anthropic

URLS = json.loads(os.environ["MEND_URLS"])
CONVERSATION = os.environ["E2E_CONVERSATION"]
KEY = os.environ["E2E_ANTHROPIC_KEY"]

TOOLS = [{
    "name": "get_weather",
    "description": "The weather in a city",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}]


def client_for(mode: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=URLS[mode], api_key=KEY, max_retries=0)


def loop(mode: str, stream: bool) -> str:
    client = client_for(mode)
    args = dict(
        model="claude-opus-4-6",
        max_tokens=2048,
        thinking={"type": "enabled", "budget_tokens": 1024},
        tools=TOOLS,
        extra_headers={"x-mend-conversation":
                       f"{CONVERSATION}-{mode}-messages-{'sse' if stream else 'json'}"},
    )
    messages = [{"role": "user", "content": "What is the weather in Paris?"}]
    for _ in range(4):
        if stream:
            with client.messages.stream(messages=messages, **args) as s:
                for _event in s:
                    pass
                final = s.get_final_message()
        else:
            final = client.messages.create(messages=messages, **args)
        uses = [b for b in final.content if b.type == "tool_use"]
        if not uses:
            return "".join(b.text for b in final.content if b.type == "text")
        assert final.content[0].type == "thinking" and final.content[0].signature, final.content
        # The assistant turn goes back whole: the signed thinking block first.
        messages.append({"role": "assistant", "content": final.content})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": u.id, "content": f"18C and sunny in {u.input['city']}"}
            for u in uses
        ]})
    raise AssertionError("the loop never ended")


def rejected_in_strict_mode() -> str:
    broken = [
        {"role": "user", "content": "What is the weather in Paris?"},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_lost", "name": "get_weather", "input": {"city": "Paris"}}]},
        {"role": "user", "content": "and?"},
    ]
    try:
        client_for("strict").messages.create(
            model="claude-opus-4-6", max_tokens=100, tools=TOOLS, messages=broken)
    except anthropic.BadRequestError as e:
        assert e.status_code == 400
        assert "`tool_use` ids were found without `tool_result` blocks immediately after" in e.message, e.message
        assert e.body["error"]["type"] == "invalid_request_error", e.body
        assert e.response.headers["x-mend-mode"] == "strict"
        return e.message
    raise AssertionError("strict mode let a broken history through")


loops = {}
for mode in URLS:
    for stream in (True, False):
        text = loop(mode, stream)
        assert "The tool said" in text and "18C and sunny in Paris" in text, (mode, text)
        loops[f"{mode}-{'sse' if stream else 'json'}"] = text
rejected = rejected_in_strict_mode()
print(json.dumps({"sdk": "anthropic", "version": anthropic.__version__, "loops": loops,
                  "rejected": rejected}))
