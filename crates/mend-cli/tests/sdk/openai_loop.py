"""The official OpenAI SDK through `mend serve`: a streamed tool loop on chat
completions and on Responses, a repair the SDK never notices, and a strict-mode
rejection the SDK reports as the provider's own 400."""

import json
import os
import sys

import openai
from openai import OpenAI

BASE = os.environ["MEND_URL"]
# Each loop is kept by the gateway as a conversation of this name plus a suffix.
CONVERSATION = os.environ["E2E_CONVERSATION"]
client = OpenAI(base_url=BASE + "/v1", api_key=os.environ["E2E_OPENAI_KEY"], max_retries=0)

PARAMS = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
}


def weather(args: str) -> str:
    return f"18C and sunny in {json.loads(args)['city']}"


def chat_loop() -> str:
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": PARAMS}}]
    messages = [{"role": "user", "content": "What is the weather in Paris?"}]
    for _ in range(4):
        stream = client.chat.completions.create(
            model="gpt-4o", messages=messages, tools=tools, stream=True,
            extra_headers={"x-mend-conversation": CONVERSATION + "-chat"},
        )
        text, calls = "", {}
        for chunk in stream:
            if not chunk.choices:
                continue
            delta = chunk.choices[0].delta
            text += delta.content or ""
            for tc in delta.tool_calls or []:
                c = calls.setdefault(tc.index, {"id": None, "name": "", "arguments": ""})
                c["id"] = tc.id or c["id"]
                if tc.function:
                    c["name"] += tc.function.name or ""
                    c["arguments"] += tc.function.arguments or ""
        if not calls:
            return text
        messages.append(
            {
                "role": "assistant",
                "content": text or None,
                "tool_calls": [
                    {"id": c["id"], "type": "function",
                     "function": {"name": c["name"], "arguments": c["arguments"]}}
                    for c in calls.values()
                ],
            }
        )
        for c in calls.values():
            messages.append(
                {"role": "tool", "tool_call_id": c["id"], "content": weather(c["arguments"])}
            )
    raise AssertionError("the chat loop never ended")


def responses_loop() -> str:
    tools = [{"type": "function", "name": "get_weather", "parameters": PARAMS}]
    items = [{"role": "user", "content": "What is the weather in Paris?"}]
    for _ in range(4):
        final = None
        for event in client.responses.create(
            model="gpt-5", input=items, tools=tools, stream=True,
            extra_headers={"x-mend-conversation": CONVERSATION + "-responses"},
        ):
            if event.type == "response.completed":
                final = event.response
        assert final is not None, "no response.completed event"
        calls = [o for o in final.output if o.type == "function_call"]
        if not calls:
            return "".join(
                part.text
                for o in final.output
                if o.type == "message"
                for part in o.content
                if part.type == "output_text"
            )
        # The reasoning item goes back with its call, encrypted content and ids intact.
        items += [o.model_dump(exclude_none=True) for o in final.output]
        for c in calls:
            items.append(
                {"type": "function_call_output", "call_id": c.call_id, "output": weather(c.arguments)}
            )
    raise AssertionError("the responses loop never ended")


def repaired_quietly() -> str:
    broken = [
        {"role": "user", "content": "What is the weather in Paris?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_lost", "type": "function",
             "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
        {"role": "user", "content": "Never mind, say hello."},
    ]
    raw = client.chat.completions.with_raw_response.create(
        model="gpt-4o", messages=broken, extra_headers={"x-mend-mode": "repair"}
    )
    assert raw.headers["x-mend-repairs"].startswith("1;"), raw.headers
    return raw.parse().choices[0].message.content


def rejected_in_strict_mode() -> str:
    broken = [
        {"role": "user", "content": "hi"},
        {"role": "tool", "tool_call_id": "call_orphan", "content": "18C"},
    ]
    try:
        client.chat.completions.create(
            model="gpt-4o", messages=broken, extra_headers={"x-mend-mode": "strict"}
        )
    except openai.BadRequestError as e:
        assert e.status_code == 400
        assert "must be a response to a preceeding message with 'tool_calls'" in e.message, e.message
        assert "tool-result-without-call" in e.response.headers["x-mend-violations"]
        return e.message
    raise AssertionError("strict mode let a broken history through")


chat = chat_loop()
assert "The tool said" in chat and "18C and sunny in Paris" in chat, chat
responses = responses_loop()
assert "The tool said" in responses and "18C and sunny in Paris" in responses, responses
hello = repaired_quietly()
rejected = rejected_in_strict_mode()
print(json.dumps({"sdk": "openai", "version": openai.__version__, "chat": chat,
                  "responses": responses, "repaired": hello, "rejected": rejected}))
sys.exit(0)
