// mendFetch with the real SDKs from the registry (openai, @anthropic-ai/sdk, the AI SDK's
// createOpenAI, on chat and on the Responses API) against a mock upstream on 127.0.0.1:
// the body that arrives is asserted exactly. A history with an orphan tool result goes
// out repaired in repair mode; strict mode throws InvalidHistory and nothing reaches the
// mock; streams come back whole.
'use strict'
const test = require('node:test')
const assert = require('node:assert/strict')

const mend = require('..')
const { mendFetch, InvalidHistory, MendError } = mend
const { startMock } = require('./mock.js')
const OpenAI = require('openai').default
const Anthropic = require('@anthropic-ai/sdk').default

let mock
test.before(async () => {
  mock = await startMock()
})
test.after(() => mock.close())
test.beforeEach(() => {
  mock.requests.length = 0
})

/** A chat history whose tool message answers no call (the call was trimmed away). */
const chatHistory = () => [
  { role: 'system', content: 'You are a travel assistant.' },
  { role: 'user', content: 'Plan my afternoon in Lisbon.' },
  { role: 'assistant', content: 'Let me check the weather first.' },
  { role: 'tool', tool_call_id: 'call_7Gq2x', content: '{"temp_c": 21, "sky": "clear"}' },
  { role: 'user', content: 'And tomorrow?' },
]
const withoutOrphan = (messages) => messages.filter((m) => m.role !== 'tool')

/** An Anthropic history whose user turn carries a tool_result for a tool_use no turn made. */
const anthropicHistory = () => [
  { role: 'user', content: 'Weather in Lisbon?' },
  { role: 'assistant', content: [{ type: 'text', text: 'Checking.' }] },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01Orphan', content: '21 C' }, { type: 'text', text: 'And tomorrow?' }] },
]

/** The InvalidHistory in an error or its causes: the SDKs wrap what fetch throws. */
function invalidHistoryIn(e) {
  for (let cur = e, i = 0; cur && i < 5; cur = cur.cause, i++) if (cur instanceof InvalidHistory) return cur
  return null
}

const quiet = (lines) => ({ log: (line) => lines.push(line) })

test('openai: repair mode sends the history without the orphan tool result, and says so', async () => {
  const lines = []
  const events = []
  const client = new OpenAI({ apiKey: 'sk-test', baseURL: `${mock.url}/v1`, fetch: mendFetch({ mode: 'repair', onEvent: (e) => events.push(e), ...quiet(lines) }) })
  const messages = chatHistory()
  const answer = await client.chat.completions.create({ model: 'gpt-4o', messages })
  assert.equal(answer.choices[0].message.content, 'It is sunny.')
  assert.equal(mock.requests.length, 1)
  assert.equal(mock.requests[0].path, '/v1/chat/completions')
  assert.deepEqual(JSON.parse(mock.requests[0].text), { model: 'gpt-4o', messages: withoutOrphan(messages) })
  assert.deepEqual(events.map((e) => [e.outcome, e.dialect, e.edits.map((x) => x.rule)]), [['repaired', 'openai_chat', ['tool-result-without-call']]])
  assert.equal(lines.length, 1)
  assert.match(lines[0], /^mend: POST http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions: repaired: tool-result-without-call at \/messages\/3 \(drop: /)
})

test('openai: a valid history goes out byte for byte as the SDK wrote it', async () => {
  const lines = []
  const client = new OpenAI({ apiKey: 'sk-test', baseURL: `${mock.url}/v1`, fetch: mendFetch({ mode: 'repair', ...quiet(lines) }) })
  const messages = withoutOrphan(chatHistory())
  await client.chat.completions.create({ model: 'gpt-4o', messages, temperature: 0.2 })
  assert.equal(mock.requests[0].text, JSON.stringify({ model: 'gpt-4o', messages, temperature: 0.2 }))
  assert.deepEqual(lines, [])
})

test('openai: a streamed request goes out repaired and its stream comes back whole', async () => {
  const client = new OpenAI({ apiKey: 'sk-test', baseURL: `${mock.url}/v1`, fetch: mendFetch({ mode: 'repair', log: false }) })
  const messages = chatHistory()
  const stream = await client.chat.completions.create({ model: 'gpt-4o', messages, stream: true })
  let text = ''
  for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? ''
  assert.equal(text, 'It is sunny.')
  assert.deepEqual(JSON.parse(mock.requests[0].text), { model: 'gpt-4o', messages: withoutOrphan(messages), stream: true })
})

test('openai: strict mode throws InvalidHistory before anything is sent', async () => {
  const events = []
  const client = new OpenAI({ apiKey: 'sk-test', baseURL: `${mock.url}/v1`, maxRetries: 0, fetch: mendFetch({ mode: 'strict', onEvent: (e) => events.push(e), log: false }) })
  await assert.rejects(client.chat.completions.create({ model: 'gpt-4o', messages: chatHistory() }), (e) => {
    // The SDK wraps whatever fetch throws as APIConnectionError; the cause is mend's.
    const invalid = invalidHistoryIn(e)
    assert.ok(invalid, `no InvalidHistory in ${e}`)
    assert.equal(invalid.report.violations[0].rule, 'tool-result-without-call')
    assert.match(invalid.message, /^mendFetch \(strict\) refused POST .*\/v1\/chat\/completions: the openai_chat history would be refused: tool-result-without-call at \/messages\/3/)
    return true
  })
  assert.equal(mock.requests.length, 0)
  assert.deepEqual(events.map((e) => e.outcome), ['rejected'])
})

test('openai: strict mode with the SDK retrying still sends nothing', async () => {
  const client = new OpenAI({ apiKey: 'sk-test', baseURL: `${mock.url}/v1`, maxRetries: 1, fetch: mendFetch({ mode: 'strict', log: false }) })
  await assert.rejects(client.chat.completions.create({ model: 'gpt-4o', messages: chatHistory() }), (e) => !!invalidHistoryIn(e))
  assert.equal(mock.requests.length, 0)
})

test('openai: observe mode sends the body unchanged and reports what the provider would refuse', async () => {
  const lines = []
  const client = new OpenAI({ apiKey: 'sk-test', baseURL: `${mock.url}/v1`, fetch: mendFetch({ mode: 'observe', ...quiet(lines) }) })
  const messages = chatHistory()
  await client.chat.completions.create({ model: 'gpt-4o', messages })
  assert.deepEqual(JSON.parse(mock.requests[0].text), { model: 'gpt-4o', messages })
  assert.equal(lines.length, 1)
  assert.match(lines[0], /would be refused: tool-result-without-call at \/messages\/3/)
})

test('anthropic: repair mode drops the orphan tool_result block; strict throws before sending', async () => {
  const client = new Anthropic({ apiKey: 'sk-ant-test', baseURL: mock.url, fetch: mendFetch({ mode: 'repair', log: false }) })
  const messages = anthropicHistory()
  const answer = await client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 256, messages })
  assert.equal(answer.content[0].text, 'It is sunny.')
  assert.equal(mock.requests[0].path, '/v1/messages')
  const expected = structuredClone(messages)
  expected[2].content.splice(0, 1)
  assert.deepEqual(JSON.parse(mock.requests[0].text), { model: 'claude-sonnet-4-5', max_tokens: 256, messages: expected })
  assert.deepEqual(mend.repair({ model: 'claude-sonnet-4-5', max_tokens: 256, messages }).body.messages, expected)

  mock.requests.length = 0
  const strict = new Anthropic({ apiKey: 'sk-ant-test', baseURL: mock.url, maxRetries: 0, fetch: mendFetch({ mode: 'strict', log: false }) })
  await assert.rejects(strict.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 256, messages }), (e) => {
    const invalid = invalidHistoryIn(e)
    assert.ok(invalid, `no InvalidHistory in ${e}`)
    assert.equal(invalid.report.dialect, 'anthropic')
    return true
  })
  assert.equal(mock.requests.length, 0)
})

test('anthropic: a streamed request goes out repaired and streams back', async () => {
  const client = new Anthropic({ apiKey: 'sk-ant-test', baseURL: mock.url, fetch: mendFetch({ mode: 'repair', log: false }) })
  const messages = anthropicHistory()
  const stream = client.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 256, messages })
  let text = ''
  stream.on('text', (t) => { text += t })
  await stream.finalMessage()
  assert.equal(text, 'It is sunny.')
  const sent = JSON.parse(mock.requests[0].text)
  assert.equal(sent.stream, true)
  assert.deepEqual(sent.messages[2].content, [{ type: 'text', text: 'And tomorrow?' }])
})

test('AI SDK createOpenAI({ fetch }): repair sends exactly the repaired body; strict throws InvalidHistory; streams work', async () => {
  const { createOpenAI } = await import('@ai-sdk/openai')
  const { generateText, streamText } = await import('ai')
  const messages = [
    { role: 'user', content: 'Plan my afternoon in Lisbon.' },
    { role: 'assistant', content: 'Let me check the weather first.' },
    { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_7Gq2x', toolName: 'weather', output: { type: 'text', value: '21 C, clear' } }] },
    { role: 'user', content: 'And tomorrow?' },
  ]
  const provider = (mode) => createOpenAI({ apiKey: 'sk-test', baseURL: `${mock.url}/v1`, fetch: mendFetch({ mode, log: false }) })

  // What the AI SDK writes, as observe passes it on.
  await generateText({ model: provider('observe').chat('gpt-4o'), messages })
  const written = JSON.parse(mock.requests[0].text)
  assert.ok(written.messages.some((m) => m.role === 'tool'), 'the AI SDK sends the orphan on')

  mock.requests.length = 0
  const result = await generateText({ model: provider('repair').chat('gpt-4o'), messages })
  assert.equal(result.text, 'It is sunny.')
  const sent = JSON.parse(mock.requests[0].text)
  assert.deepEqual(sent, mend.repair(written).body)
  assert.ok(!sent.messages.some((m) => m.role === 'tool'))

  mock.requests.length = 0
  await assert.rejects(generateText({ model: provider('strict').chat('gpt-4o'), messages, maxRetries: 0 }), (e) => {
    assert.ok(invalidHistoryIn(e), `no InvalidHistory in ${e}`)
    return true
  })
  assert.equal(mock.requests.length, 0)

  const streamed = streamText({ model: provider('repair').chat('gpt-4o'), messages })
  let text = ''
  for await (const t of streamed.textStream) text += t
  assert.equal(text, 'It is sunny.')
  const streamedBody = JSON.parse(mock.requests[0].text)
  assert.equal(streamedBody.stream, true)
  assert.ok(!streamedBody.messages.some((m) => m.role === 'tool'))
})

test('AI SDK on the Responses API: the orphan function_call_output goes out dropped', async () => {
  const { createOpenAI } = await import('@ai-sdk/openai')
  const { generateText } = await import('ai')
  const messages = [
    { role: 'user', content: 'Plan my afternoon in Lisbon.' },
    { role: 'assistant', content: 'Let me check the weather first.' },
    { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_7Gq2x', toolName: 'weather', output: { type: 'text', value: '21 C, clear' } }] },
    { role: 'user', content: 'And tomorrow?' },
  ]
  const provider = (mode) => createOpenAI({ apiKey: 'sk-test', baseURL: `${mock.url}/v1`, fetch: mendFetch({ mode, log: false }) })
  await generateText({ model: provider('observe').responses('gpt-4o'), messages })
  assert.equal(mock.requests[0].path, '/v1/responses')
  const written = JSON.parse(mock.requests[0].text)
  assert.ok(written.input.some((i) => i.type === 'function_call_output'), 'the AI SDK sends the orphan on')

  mock.requests.length = 0
  const result = await generateText({ model: provider('repair').responses('gpt-4o'), messages })
  assert.equal(result.text, 'It is sunny.')
  const sent = JSON.parse(mock.requests[0].text)
  assert.deepEqual(sent, mend.repair(written).body)
  assert.deepEqual(sent.input, written.input.filter((i) => i.type !== 'function_call_output'))
})

test('requests that are no history pass untouched, and mendFetch refuses bad options at once', async () => {
  const seen = []
  const inner = async (input, init) => {
    const isRequest = input instanceof Request
    seen.push([isRequest ? input.url : String(input), isRequest ? await input.text() : init?.body])
    return new Response('{}', { headers: { 'content-type': 'application/json' } })
  }
  const f = mendFetch({ mode: 'strict', fetch: inner })
  await f(`${mock.url}/v1/embeddings`, { method: 'POST', body: '{"input": "hi", "model": "m"}' })
  await f(`${mock.url}/v1/models`)
  assert.deepEqual(seen.map(([u]) => new URL(u).pathname), ['/v1/embeddings', '/v1/models'])
  // A history endpoint with a body mend cannot read: strict refuses, repair passes it on.
  await assert.rejects(f(`${mock.url}/v1/chat/completions`, { method: 'POST', body: 'not json' }), (e) => e instanceof MendError && e.code === 'not-json')
  const lines = []
  await mendFetch({ mode: 'repair', fetch: inner, ...quiet(lines) })(`${mock.url}/v1/chat/completions`, { method: 'POST', body: 'not json' })
  assert.equal(seen.at(-1)[1], 'not json')
  assert.match(lines[0], /not checked: body line 1, column 2: not JSON/)
  // A Request object carrying the body is judged too.
  await mendFetch({ mode: 'repair', fetch: inner, log: false })(new Request(`${mock.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify({ model: 'gpt-4o', messages: chatHistory() }) }))
  assert.deepEqual(JSON.parse(seen.at(-1)[1]).messages, withoutOrphan(chatHistory()))

  for (const [options, pattern] of [
    [{ mode: 'fix' }, /options\.mode: "fix" is not one of 'observe', 'repair', 'strict'/],
    [undefined, /mendFetch takes an options object/],
    [{ mode: 'repair', fetch: 5 }, /options\.fetch: it is not a function/],
    [{ mode: 'repair', orphanResult: 'keep' }, /options\.orphanResult: 'keep' is not one of/],
    [{ mode: 'repair', log: 'yes' }, /options\.log/],
  ]) {
    assert.throws(() => mendFetch(options), (e) => e instanceof MendError && pattern.test(e.message))
  }
})
