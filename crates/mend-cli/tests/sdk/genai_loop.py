"""The official Google Gen AI SDK through `mend serve` in every mode: a
function-calling loop with thought signatures sent back, streamed and not, through a
gateway in each of off, observe, repair and strict; and a strict-mode rejection the SDK
reports as Gemini's own 400."""

import json
import os

from google import genai
from google.genai import errors, types

URLS = json.loads(os.environ["MEND_URLS"])
CONVERSATION = os.environ["E2E_CONVERSATION"]
KEY = os.environ["E2E_GEMINI_KEY"]

TOOL = types.Tool(function_declarations=[types.FunctionDeclaration(
    name="get_weather",
    description="The weather in a city",
    parameters_json_schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)])


# Kept alive here: a client closes its connections when it is collected, even while
# one of its `models` is still in use.
CLIENTS = {m: genai.Client(api_key=KEY, http_options=types.HttpOptions(base_url=u))
           for m, u in URLS.items()}


def client_for(mode: str) -> genai.Client:
    return CLIENTS[mode]


def loop(mode: str, stream: bool) -> str:
    client = client_for(mode)
    config = types.GenerateContentConfig(
        tools=[TOOL],
        http_options=types.HttpOptions(headers={"x-mend-conversation":
            f"{CONVERSATION}-{mode}-gemini-{'sse' if stream else 'json'}"}),
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )
    contents = [types.Content(role="user", parts=[types.Part(text="What is the weather in Paris?")])]
    for _ in range(4):
        parts = []
        if stream:
            for chunk in client.models.generate_content_stream(
                model="gemini-3-pro-preview", contents=contents, config=config
            ):
                if chunk.candidates and chunk.candidates[0].content and chunk.candidates[0].content.parts:
                    parts.extend(chunk.candidates[0].content.parts)
        else:
            answer = client.models.generate_content(
                model="gemini-3-pro-preview", contents=contents, config=config)
            parts = list(answer.candidates[0].content.parts)
        calls = [p.function_call for p in parts if p.function_call]
        if not calls:
            return "".join(p.text or "" for p in parts)
        assert all(p.thought_signature for p in parts if p.function_call), parts
        contents.append(types.Content(role="model", parts=parts))
        contents.append(types.Content(role="user", parts=[
            types.Part(function_response=types.FunctionResponse(
                id=c.id, name=c.name, response={"result": f"18C and sunny in {c.args['city']}"}))
            for c in calls
        ]))
    raise AssertionError("the loop never ended")


def rejected_in_strict_mode() -> str:
    broken = [
        types.Content(role="user", parts=[types.Part(text="What is the weather in Paris?")]),
        types.Content(role="model", parts=[types.Part(
            function_call=types.FunctionCall(name="get_weather", args={"city": "Paris"}),
            thought_signature=b"signature")]),
        types.Content(role="user", parts=[types.Part(text="and?")]),
    ]
    try:
        client_for("strict").models.generate_content(
            model="gemini-3-pro-preview", contents=broken,
            config=types.GenerateContentConfig(tools=[TOOL]),
        )
    except errors.ClientError as e:
        assert e.code == 400, e
        assert "number of function response parts is equal to the number of function call parts" in e.message, e.message
        assert e.status == "INVALID_ARGUMENT", e.status
        return e.message
    raise AssertionError("strict mode let a broken history through")


loops = {}
for mode in URLS:
    for stream in (True, False):
        text = loop(mode, stream)
        assert "The tool said" in text and "18C and sunny in Paris" in text, (mode, text)
        loops[f"{mode}-{'sse' if stream else 'json'}"] = text
rejected = rejected_in_strict_mode()
print(json.dumps({"sdk": "google-genai", "version": genai.__version__, "loops": loops,
                  "rejected": rejected}))
