"""The official Anthropic SDK through `mend serve`: a streamed tool loop with signed
thinking sent back as it came, and a strict-mode rejection the SDK reports as
Anthropic's own 400."""

import json
import os

import anthropic

BASE = os.environ["MEND_URL"]
CONVERSATION = os.environ["E2E_CONVERSATION"] + "-messages"
client = anthropic.Anthropic(base_url=BASE, api_key=os.environ["E2E_ANTHROPIC_KEY"], max_retries=0)

TOOLS = [{
    "name": "get_weather",
    "description": "The weather in a city",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}]


def loop() -> str:
    messages = [{"role": "user", "content": "What is the weather in Paris?"}]
    for _ in range(4):
        with client.messages.stream(
            model="claude-opus-4-6",
            max_tokens=2048,
            thinking={"type": "enabled", "budget_tokens": 1024},
            tools=TOOLS,
            messages=messages,
            extra_headers={"x-mend-conversation": CONVERSATION},
        ) as stream:
            for _event in stream:
                pass
            final = stream.get_final_message()
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
        client.messages.create(model="claude-opus-4-6", max_tokens=100, tools=TOOLS,
                               messages=broken, extra_headers={"x-mend-mode": "strict"})
    except anthropic.BadRequestError as e:
        assert e.status_code == 400
        assert "`tool_use` ids were found without `tool_result` blocks immediately after" in e.message, e.message
        assert e.body["error"]["type"] == "invalid_request_error", e.body
        return e.message
    raise AssertionError("strict mode let a broken history through")


text = loop()
assert "The tool said" in text and "18C and sunny in Paris" in text, text
rejected = rejected_in_strict_mode()
print(json.dumps({"sdk": "anthropic", "version": anthropic.__version__, "text": text, "rejected": rejected}))
