# Large adversarial histories for the pairing walk and the repair fixes, in every
# dialect: N parallel calls answered in reverse order (par), N orphan results (orph),
# N id-less Gemini calls of distinct names answered in reverse (gm-name), one chat call
# answered N times (ch-dup), one id reused in N turns (ch-reuse), N Responses messages
# sharing one item id (rs-item), N results renamed away from their calls (ch-renamed),
# N unanswered calls (ch-unanswered), Gemini responses split over two turns (gm-split).
# Check and repair must grow linearly with N; measure with callgrind
# (docs/PERFORMANCE.md). Usage: python3 adversarial.py OUT_DIR [N...]
import json, os, sys
OUT = sys.argv[1]
os.makedirs(OUT, exist_ok=True)
def w(name, body): json.dump(body, open(f'{OUT}/{name}.json', 'w'))
for N in map(int, sys.argv[2:] or ['5000', '10000', '20000']):
    R = range(N - 1, -1, -1)
    # OpenAI chat
    tc = lambda i: {"id": f"c{i}", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    w(f'par{N}', {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": None, "tool_calls": [tc(i) for i in range(N)]}]
        + [{"role": "tool", "tool_call_id": f"c{i}", "content": "x"} for i in R]})
    w(f'orph{N}', {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}] + [{"role": "tool", "tool_call_id": f"c{i}", "content": "x"} for i in range(N)]})
    # Anthropic
    AT = [{"name": "f", "input_schema": {"type": "object", "properties": {}}}]
    an = lambda msgs: {"model": "claude-sonnet-4-5", "max_tokens": 1024, "messages": msgs, "tools": AT}
    w(f'an-par{N}', an([{"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": f"toolu_{i}", "name": "f", "input": {}} for i in range(N)]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": "x"} for i in R]}]))
    w(f'an-orph{N}', an([{"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": "x"} for i in range(N)] + [{"type": "text", "text": "hi"}]}]))
    # Responses
    rs = lambda inp: {"model": "gpt-5", "input": inp, "tools": [{"type": "function", "name": "f", "parameters": {"type": "object", "properties": {}}}]}
    w(f'rs-par{N}', rs([{"role": "user", "content": "hi"}]
        + [{"type": "function_call", "call_id": f"c{i}", "name": "f", "arguments": "{}"} for i in range(N)]
        + [{"type": "function_call_output", "call_id": f"c{i}", "output": "x"} for i in R]))
    w(f'rs-orph{N}', rs([{"role": "user", "content": "hi"}] + [{"type": "function_call_output", "call_id": f"c{i}", "output": "x"} for i in range(N)]))
    # Gemini: with ids, and by name (distinct names, answered in reverse)
    gm = lambda c, names: {"contents": c, "tools": [{"functionDeclarations": [{"name": n} for n in names]}]}
    gu = {"role": "user", "parts": [{"text": "hi"}]}
    w(f'gm-par{N}', gm([gu, {"role": "model", "parts": [{"functionCall": {"id": f"x{i}", "name": "f", "args": {}}} for i in range(N)]},
        {"role": "user", "parts": [{"functionResponse": {"id": f"x{i}", "name": "f", "response": {"r": 1}}} for i in R]}], ["f"]))
    w(f'gm-name{N}', gm([gu, {"role": "model", "parts": [{"functionCall": {"name": f"f{i}", "args": {}}} for i in range(N)]},
        {"role": "user", "parts": [{"functionResponse": {"name": f"f{i}", "response": {"r": 1}}} for i in R]}], [f"f{i}" for i in range(N)]))
    w(f'gm-orph{N}', gm([gu, {"role": "model", "parts": [{"text": "ok"}]},
        {"role": "user", "parts": [{"functionResponse": {"id": f"x{i}", "name": "f", "response": {"r": 1}}} for i in range(N)]}], ["f"]))
    # Converse
    cv = lambda m: {"messages": m, "toolConfig": {"tools": [{"toolSpec": {"name": "f", "inputSchema": {"json": {"type": "object"}}}}]}}
    cu = {"role": "user", "content": [{"text": "hi"}]}
    w(f'cv-par{N}', cv([cu, {"role": "assistant", "content": [{"toolUse": {"toolUseId": f"t{i}", "name": "f", "input": {}}} for i in range(N)]},
        {"role": "user", "content": [{"toolResult": {"toolUseId": f"t{i}", "content": [{"text": "x"}]}} for i in R]}]))
    w(f'cv-orph{N}', cv([{"role": "user", "content": [{"toolResult": {"toolUseId": f"t{i}", "content": [{"text": "x"}]}} for i in range(N)] + [{"text": "hi"}]}]))
    # Chat: the call answered N times (second answers), and calls in N turns answered late
    ch = lambda m: {"model": "gpt-4o", "messages": m}
    w(f'ch-dup{N}', ch([{"role": "user", "content": "hi"}, {"role": "assistant", "content": None, "tool_calls": [{"id": "c0", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}]
        + [{"role": "tool", "tool_call_id": "c0", "content": "x"} for i in range(N)]))
    # One id reused in every one of N turns (a client numbering calls per turn), each call
    # answered after it; and N Responses messages that share one item id
    w(f'ch-reuse{N}', ch([{"role": "user", "content": "go"}] + [m for t in range(N) for m in (
        {"role": "assistant", "content": None, "tool_calls": [{"id": "call_0", "type": "function", "function": {"name": "f", "arguments": f'{{"t": {t}}}'}}]},
        {"role": "tool", "tool_call_id": "call_0", "content": f"r{t}"})]))
    w(f'rs-item{N}', rs([{"role": "user", "content": "go"}] + [m for t in range(N) for m in (
        {"type": "message", "id": "msg_1", "role": "assistant", "content": [{"type": "output_text", "text": f"t{t}"}]},
        {"role": "user", "content": "more"})]))
    # Every tool message names an id no call has (N orphans and N unanswered calls, one
    # per step); N unanswered calls in one turn; Gemini responses of two parallel calls
    # sent in two turns at every one of N/2 steps
    w(f'ch-renamed{N}', ch([{"role": "user", "content": "go"}] + [m for i in range(N) for m in (
        {"role": "assistant", "content": None, "tool_calls": [{"id": f"call_{i}", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": f"x_{i}", "content": "ok"})]))
    w(f'ch-unanswered{N}', ch([{"role": "user", "content": "go"}, {"role": "assistant", "content": None,
        "tool_calls": [{"id": f"c{i}", "type": "function", "function": {"name": "f", "arguments": "{}"}} for i in range(N)]},
        {"role": "user", "content": "next"}]))
    w(f'gm-split{N}', gm([gu] + [m for _ in range(N // 2) for m in (
        {"role": "model", "parts": [{"functionCall": {"name": "a", "args": {}}}, {"functionCall": {"name": "b", "args": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "a", "response": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "b", "response": {}}}]})], ["a", "b"]))
