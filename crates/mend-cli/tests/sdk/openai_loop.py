"""The official OpenAI SDK through `mend serve` in every mode: a tool loop on chat
completions and on Responses, streamed and not, through a gateway in each of off,
observe, repair and strict; a repair the SDK never notices; and a strict-mode rejection
the SDK reports as the provider's own 400."""

import json
import os
import sys

import openai
from openai import OpenAI

# {"off": url, "observe": url, "repair": url, "strict": url}: one gateway per mode.
URLS = json.loads(os.environ["MEND_URLS"])
# Each loop is kept by the gateway as a conversation of this name plus mode and kind.
CONVERSATION = os.environ["E2E_CONVERSATION"]
KEY = os.environ["E2E_OPENAI_KEY"]

PARAMS = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
}


def client_for(mode: str) -> OpenAI:
    return OpenAI(base_url=URLS[mode] + "/v1", api_key=KEY, max_retries=0)


def weather(args: str) -> str:
    return f"18C and sunny in {json.loads(args)['city']}"


def chat_turn(client, messages, tools, stream, conversation):
    """One turn: the text and the tool calls, streamed or not."""
    headers = {"x-mend-conversation": conversation}
    if not stream:
        msg = client.chat.completions.create(
            model="gpt-4o", messages=messages, tools=tools, extra_headers=headers
        ).choices[0].message
        calls = [{"id": c.id, "name": c.function.name, "arguments": c.function.arguments}
                 for c in msg.tool_calls or []]
        return msg.content or "", calls
    text, calls = "", {}
    for chunk in client.chat.completions.create(
        model="gpt-4o", messages=messages, tools=tools, stream=True, extra_headers=headers
    ):
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
    return text, list(calls.values())


def chat_loop(mode: str, stream: bool) -> str:
    client = client_for(mode)
    conversation = f"{CONVERSATION}-{mode}-chat-{'sse' if stream else 'json'}"
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": PARAMS}}]
    messages = [{"role": "user", "content": "What is the weather in Paris?"}]
    for _ in range(4):
        text, calls = chat_turn(client, messages, tools, stream, conversation)
        if not calls:
            return text
        messages.append({
            "role": "assistant",
            "content": text or None,
            "tool_calls": [
                {"id": c["id"], "type": "function",
                 "function": {"name": c["name"], "arguments": c["arguments"]}}
                for c in calls
            ],
        })
        for c in calls:
            messages.append(
                {"role": "tool", "tool_call_id": c["id"], "content": weather(c["arguments"])}
            )
    raise AssertionError("the chat loop never ended")


def responses_loop(mode: str, stream: bool) -> str:
    client = client_for(mode)
    conversation = f"{CONVERSATION}-{mode}-responses-{'sse' if stream else 'json'}"
    headers = {"x-mend-conversation": conversation}
    tools = [{"type": "function", "name": "get_weather", "parameters": PARAMS}]
    items = [{"role": "user", "content": "What is the weather in Paris?"}]
    for _ in range(4):
        if stream:
            final = None
            for event in client.responses.create(
                model="gpt-5", input=items, tools=tools, stream=True, extra_headers=headers
            ):
                if event.type == "response.completed":
                    final = event.response
            assert final is not None, "no response.completed event"
        else:
            final = client.responses.create(
                model="gpt-5", input=items, tools=tools, extra_headers=headers
            )
        calls = [o for o in final.output if o.type == "function_call"]
        if not calls:
            return final.output_text
        # The reasoning item goes back with its call, encrypted content and ids intact.
        items += [o.model_dump(exclude_none=True) for o in final.output]
        for c in calls:
            items.append(
                {"type": "function_call_output", "call_id": c.call_id, "output": weather(c.arguments)}
            )
    raise AssertionError("the responses loop never ended")


BROKEN_CALL = [
    {"role": "user", "content": "What is the weather in Paris?"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_lost", "type": "function",
         "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
    {"role": "user", "content": "Never mind, say hello."},
]


def repaired_quietly() -> str:
    raw = client_for("repair").chat.completions.with_raw_response.create(
        model="gpt-4o", messages=BROKEN_CALL
    )
    assert raw.headers["x-mend-mode"] == "repair", raw.headers
    assert raw.headers["x-mend-repairs"].startswith("1;"), raw.headers
    return raw.parse().choices[0].message.content


def passed_through_unchanged(mode: str) -> str:
    """off and observe forward a broken history: the provider's own 400 comes back."""
    try:
        client_for(mode).chat.completions.create(model="gpt-4o", messages=BROKEN_CALL)
    except openai.BadRequestError as e:
        assert e.response.headers["x-mend-mode"] == mode, e.response.headers
        assert "must be followed by tool messages" in e.message, e.message
        return e.message
    raise AssertionError(f"{mode}: the upstream accepted a broken history")


def rejected_in_strict_mode() -> str:
    broken = [
        {"role": "user", "content": "hi"},
        {"role": "tool", "tool_call_id": "call_orphan", "content": "18C"},
    ]
    try:
        client_for("strict").chat.completions.create(model="gpt-4o", messages=broken)
    except openai.BadRequestError as e:
        assert e.status_code == 400
        assert "must be a response to a preceeding message with 'tool_calls'" in e.message, e.message
        assert "tool-result-without-call" in e.response.headers["x-mend-violations"]
        return e.message
    raise AssertionError("strict mode let a broken history through")


loops = {}
for mode in URLS:
    for stream in (True, False):
        chat = chat_loop(mode, stream)
        assert "The tool said" in chat and "18C and sunny in Paris" in chat, (mode, chat)
        responses = responses_loop(mode, stream)
        assert "The tool said" in responses and "18C and sunny in Paris" in responses, (mode, responses)
        loops[f"{mode}-{'sse' if stream else 'json'}"] = [chat, responses]
hello = repaired_quietly()
passed = [passed_through_unchanged(m) for m in ("off", "observe")]
rejected = rejected_in_strict_mode()
print(json.dumps({"sdk": "openai", "version": openai.__version__, "loops": loops,
                  "repaired": hello, "passed": passed, "rejected": rejected}))
sys.exit(0)
