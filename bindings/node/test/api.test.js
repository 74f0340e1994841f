// The API on the recorded traffic of ../shared/fixtures, on the shipped damaged examples,
// and on bad input: every verdict is the library's, every body comes back in its form.
'use strict'
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')

const mend = require('..')
const { fixturesDir, filesNamed, example, repo } = require('./support.js')

const meta = (dir) => JSON.parse(fs.readFileSync(path.join(dir, 'meta.json'), 'utf8'))
const dialectOf = (file) => path.basename(path.dirname(path.dirname(file)))

test('every accepted request of the fixtures checks clean, as text, bytes and object alike', (t) => {
  const dir = fixturesDir(t)
  if (!dir) return
  const files = filesNamed(dir, 'request.json')
  assert.ok(files.length >= 135, `expected the 135 accepted requests, found ${files.length}`)
  const flagged = []
  for (const f of files) {
    const text = fs.readFileSync(f, 'utf8')
    const opts = { dialect: dialectOf(f), model: meta(path.dirname(f)).model }
    const report = mend.check(text, opts)
    if (report.violations.length > 0) flagged.push(`${f}: ${JSON.stringify(report.violations)}`)
    assert.deepEqual(mend.check(Buffer.from(text), opts), report, f)
    const object = JSON.parse(text)
    assert.deepEqual(mend.check(object, opts), report, f)
    // A valid body comes back as the very value given.
    const fixed = mend.repair(object, opts)
    assert.equal(fixed.changed, false, f)
    assert.equal(fixed.body, object, f)
    assert.equal(mend.repair(text, opts).body, text, f)
  }
  assert.deepEqual(flagged, [])
})

test('the requests the providers refused for their history are flagged with the rules their meta names, quoting the provider', (t) => {
  const dir = fixturesDir(t)
  if (!dir) return
  let history = 0
  for (const f of filesNamed(dir, 'rejected-request.json')) {
    const m = meta(path.dirname(f))
    const report = mend.check(fs.readFileSync(f, 'utf8'), { dialect: dialectOf(f), model: m.model, provider: m.provider })
    if (m.rejected_for !== 'history') continue
    history += 1
    const found = report.violations.map((v) => v.rule)
    for (const rule of m.expected_rules) assert.ok(found.includes(rule), `${f}: expected ${rule}, found ${found}`)
    assert.equal(report.valid, false)
    assert.ok(report.violations.some((v) => typeof v.providerError === 'string'), f)
    // And repair makes each valid.
    const fixed = mend.repair(JSON.parse(fs.readFileSync(f, 'utf8')), { dialect: dialectOf(f), model: m.model, provider: m.provider })
    assert.ok(fixed.changed && fixed.valid, `${f}: ${JSON.stringify(fixed.unrepairable)}`)
  }
  assert.equal(history, 2)
})

test('an orphan tool result: found with its rule, pointer and the provider text; repaired by dropping it or keeping it as text', () => {
  const text = example('openai_chat-orphan-tool.json')
  const report = mend.check(text)
  assert.equal(report.valid, false)
  assert.equal(report.dialect, 'openai_chat')
  assert.deepEqual(report.violations.map((v) => [v.rule, v.severity, v.path]), [['tool-result-without-call', 'error', '/messages/3']])
  assert.match(report.violations[0].providerError, /must be a response to a preceeding message with 'tool_calls'/)

  const body = JSON.parse(text)
  const fixed = mend.repair(body)
  assert.ok(fixed.valid && fixed.changed)
  assert.deepEqual(fixed.edits.map((e) => [e.rule, e.path, e.action]), [['tool-result-without-call', '/messages/3', 'drop']])
  const expected = structuredClone(body)
  expected.messages.splice(3, 1)
  assert.deepEqual(fixed.body, expected)
  assert.notEqual(fixed.body, body, 'a repaired object is a new object')
  assert.equal(body.messages.length, expected.messages.length + 1, 'the input is left as it was')

  const asText = mend.repair(text, { orphanResult: 'to-text' })
  assert.equal(typeof asText.body, 'string')
  assert.ok(asText.valid)
  assert.equal(JSON.parse(asText.body).messages.length, body.messages.length)
  const asBytes = mend.repair(Buffer.from(text))
  assert.ok(Buffer.isBuffer(asBytes.body))
  assert.deepEqual(JSON.parse(asBytes.body.toString('utf8')), expected)
})

test('a repaired text or Buffer is the text given with only the changed items written anew', () => {
  const text = example('openai_chat-orphan-tool.json')
  const kept = '{\n      "role": "assistant",\n      "content": "It is 21 °C and sunny: a good afternoon for the Belém riverside."\n    }'
  assert.ok(text.includes(kept))
  const expected = JSON.parse(text)
  expected.messages.splice(3, 1)
  const asText = mend.repair(text)
  assert.ok(asText.changed && asText.valid)
  assert.equal(typeof asText.body, 'string')
  assert.ok(asText.body.includes(kept), asText.body)
  assert.ok(!asText.body.includes('call_7Gq2x'))
  assert.deepEqual(JSON.parse(asText.body), expected)
  const asBytes = mend.repair(Buffer.from(text))
  assert.ok(Buffer.isBuffer(asBytes.body))
  assert.equal(asBytes.body.toString('utf8'), asText.body)
  // A Uint8Array comes back as a Buffer when changed, as the very array when not.
  const array = new Uint8Array(Buffer.from(text))
  assert.ok(Buffer.isBuffer(mend.repair(array).body))
  const valid = new Uint8Array(Buffer.from(asText.body))
  assert.equal(mend.repair(valid).body, valid)
  const buffer = Buffer.from(asText.body)
  const again = mend.repair(buffer)
  assert.equal(again.changed, false)
  assert.equal(again.body, buffer)
  // The outcome is the one the object gives.
  const asObject = mend.repair(JSON.parse(text))
  assert.deepEqual(asObject.body, expected)
  assert.deepEqual({ ...asText, body: null }, { ...asObject, body: null })
})

test('text the fast reader leaves to serde_json (a duplicate key) is checked and repaired the same', () => {
  const text = example('openai_chat-orphan-tool.json').replace('"model": "gpt-4o",', '"model": "gpt-4o", "model": "gpt-4o",')
  const object = JSON.parse(text)
  assert.deepEqual(mend.check(text), mend.check(object))
  assert.deepEqual(mend.check(Buffer.from(text), { dialect: 'openai_chat' }), mend.check(object))
  const fixed = mend.repair(text)
  assert.ok(fixed.changed && fixed.valid)
  assert.deepEqual(JSON.parse(fixed.body), mend.repair(object).body)
  assert.throws(() => mend.repair(text, { dialect: 'gemini' }), /reads as openai_chat, not as gemini/)
  assert.equal(mend.repair(text, { dialect: 'anthropic', force: true }).dialect, 'anthropic')
})

test('every shipped example repairs to a body that checks valid, or lists what it could not repair', () => {
  for (const name of fs.readdirSync(path.join(repo, 'examples')).filter((n) => n.endsWith('.json'))) {
    const body = JSON.parse(example(name))
    const before = mend.check(body)
    const fixed = mend.repair(body)
    const after = mend.check(fixed.body, { dialect: fixed.dialect })
    assert.equal(after.valid, fixed.valid, name)
    if (before.valid) assert.equal(fixed.body, body, name)
    else assert.ok(fixed.valid || fixed.unrepairable.length > 0, name)
    // Repairing repair's output changes nothing.
    assert.equal(mend.repair(fixed.body, { dialect: fixed.dialect }).changed, false, name)
  }
})

test('gemini and converse bodies take their model from the endpoint path', () => {
  const body = JSON.parse(example('gemini-parallel-call-missing-response.json'))
  const report = mend.check(body, { endpoint: '/v1beta/models/gemini-3-pro-preview:generateContent' })
  assert.equal(report.dialect, 'gemini')
  assert.equal(report.valid, false)
  assert.equal(mend.endpointDialect('/model/us.amazon.nova-micro-v1%3A0/converse'), 'bedrock_converse')
  assert.equal(mend.endpointDialect('/v1/embeddings'), null)
})

test('trim fits a budget, keeps the instructions, never cuts a call from its result', () => {
  const long = 'many words '.repeat(300)
  const call = (id) => ({ role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'weather', arguments: '{}' } }] })
  const body = {
    model: 'gpt-4o',
    messages: [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: long },
      call('call_1'),
      { role: 'tool', tool_call_id: 'call_1', content: long },
      { role: 'user', content: 'and now?' },
      { role: 'assistant', content: 'now this.' },
      { role: 'user', content: 'thanks' },
    ],
  }
  const t = mend.trim(body, 200)
  assert.ok(t.tokensBefore > 200 && t.tokensAfter <= 200, JSON.stringify(t))
  assert.equal(t.counter, 'o200k_base')
  assert.ok(t.valid && !t.overBudget)
  assert.equal(t.body.messages[0].role, 'system')
  assert.ok(!t.body.messages.some((m) => m.role === 'tool'), 'the result went with its call')
  assert.ok(t.dropped.some((d) => d.kind === 'group' && d.paths.includes('/messages/2') && d.paths.includes('/messages/3')))
  assert.ok(mend.check(t.body).valid)

  const roomy = mend.trim(body, 100000)
  assert.equal(roomy.body, body, 'nothing to drop: the very object')
  const tight = mend.trim(JSON.stringify(body), 10, { keepLast: 1 })
  assert.equal(typeof tight.body, 'string')
  assert.ok(tight.overBudget)
})

test('a damaged body is repaired before it is trimmed, and the repairs are said', () => {
  const body = JSON.parse(example('openai_chat-orphan-tool.json'))
  const t = mend.trim(body, 100000)
  assert.deepEqual(t.repairs.map((e) => e.rule), ['tool-result-without-call'])
  assert.ok(t.valid)
  assert.notEqual(t.body, body)
})

test('convert moves a chat history to Anthropic, tool results in a user turn, with what was lost', () => {
  const chat = {
    model: 'gpt-4o',
    messages: [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'weather?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
    ],
  }
  const to = mend.convert(chat, 'anthropic')
  assert.equal(to.from, 'openai_chat')
  assert.equal(to.to, 'anthropic')
  assert.ok(to.valid)
  assert.equal(to.body.system[0].text, 'be brief')
  assert.equal(to.body.messages[2].content[0].type, 'tool_result')
  assert.ok(to.notes.some((n) => n.kind === 'added' && n.what === 'max-tokens'))
  assert.ok(Array.isArray(to.losses))
  const text = mend.convert(JSON.stringify(chat), 'gemini', { model: 'gemini-2.5-flash' })
  assert.equal(typeof text.body, 'string')
  assert.ok(JSON.parse(text.body).contents)
})

test('nextRequest appends the response and the tool results as the provider needs them', () => {
  const request = { model: 'gpt-4o', messages: [{ role: 'user', content: 'weather?' }] }
  const response = {
    id: 'chatcmpl-1', object: 'chat.completion', choices: [{
      index: 0, finish_reason: 'tool_calls',
      message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{}' } }] },
    }],
  }
  const next = mend.nextRequest(request, response, { toolResults: [{ callId: 'call_1', output: 'sunny' }] })
  assert.ok(next.valid)
  assert.deepEqual(next.calls, [{ callId: 'call_1', name: 'weather', kind: 'tool_call' }])
  assert.deepEqual(next.body.messages.map((m) => m.role), ['user', 'assistant', 'tool'])
  assert.equal(next.body.messages[2].tool_call_id, 'call_1')

  // Unanswered: not valid yet, the call is listed.
  const pending = mend.nextRequest(JSON.stringify(request), JSON.stringify(response))
  assert.equal(typeof pending.body, 'string')
  assert.equal(pending.valid, false)
  assert.deepEqual(pending.unanswered.map((c) => c.callId), ['call_1'])

  // The same from an SSE stream.
  const chunk = (delta, finish = null) => `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`
  const sse = chunk({ role: 'assistant', content: 'It is ' }) + chunk({ content: 'sunny.' }) + chunk({}, 'stop') + 'data: [DONE]\n\n'
  const streamed = mend.nextRequest(request, sse, { user: 'thanks' })
  assert.ok(streamed.valid)
  assert.deepEqual(streamed.body.messages.slice(1), [{ role: 'assistant', content: 'It is sunny.' }, { role: 'user', content: 'thanks' }])
})

test('rules() is the catalog: each rule flags its own example', () => {
  const rules = mend.rules()
  assert.ok(rules.length >= 20)
  const ids = new Set(rules.map((r) => r.id))
  assert.equal(ids.size, rules.length)
  for (const r of rules) {
    assert.ok(['always', 'sometimes', 'never'].includes(r.repair.availability), r.id)
    assert.ok(r.dialects.length > 0 && r.summary && r.doc, r.id)
    const example = JSON.parse(r.example)
    const dialect = r.dialects.find((d) => {
      try {
        return mend.check(example, { dialect: d, force: true }).violations.some((v) => v.rule === r.id)
      } catch {
        return false
      }
    })
    assert.ok(dialect, `${r.id}: its example is not flagged with it`)
  }
})

test('ensureValid hands back a valid body and throws InvalidHistory with the report otherwise', () => {
  const ok = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }
  assert.equal(mend.ensureValid(ok), ok)
  const bad = JSON.parse(example('openai_chat-orphan-tool.json'))
  assert.throws(() => mend.ensureValid(bad), (e) => {
    assert.ok(e instanceof mend.InvalidHistory && e instanceof mend.MendError && e instanceof Error)
    assert.equal(e.name, 'InvalidHistory')
    assert.equal(e.code, 'invalid-history')
    assert.equal(e.report.violations[0].rule, 'tool-result-without-call')
    assert.match(e.message, /tool-result-without-call at \/messages\/3/)
    return true
  })
})

// Bad input: [what is called, code, argument, where, message pattern].
const circular = { messages: [] }
circular.self = circular
const BAD = [
  [() => mend.check('{"messages": [1,'), 'not-json', 'body', { line: 1, column: 16 }, /truncated JSON/],
  [() => mend.check('{"messages": [}'), 'not-json', 'body', { line: 1, column: 15 }, /not JSON/],
  [() => mend.check(Buffer.from([0x7b, 0xff])), 'not-json', 'body', { line: 1, column: 2 }, /invalid UTF-8/],
  [() => mend.check(''), 'not-json', 'body', {}, /empty input/],
  [() => mend.check('{\n  "messages": [\n    {"role": "user",, "content": "hi"}\n  ]\n}'), 'not-json', 'body', { line: 3, column: 21 }, /not JSON: key must be a string/],
  [() => mend.check(Buffer.from('{"messages": [\n  {"role": "user"')), 'not-json', 'body', { line: 2, column: 17 }, /truncated JSON/],
  [() => mend.repair('{"messages": [\n  {"role": "user"'), 'not-json', 'body', { line: 2, column: 17 }, /truncated JSON/],
  [() => mend.repair(Buffer.from('{"messages": [}')), 'not-json', 'body', { line: 1, column: 15 }, /not JSON/],
  [() => mend.ensureValid('{"messages": [}'), 'not-json', 'body', { line: 1, column: 15 }, /not JSON/],
  [() => mend.repair(example('openai_chat-orphan-tool.json'), { dialect: 'gemini' }), 'contradicted', 'body', {}, /reads as openai_chat, not as gemini/],
  [() => mend.repair(Buffer.from('{}'), { dialect: 'openai_chat' }), 'unreadable', 'body', {}, /no `messages` array/],
  [() => mend.check(42), 'not-a-body', 'body', {}, /a number was given/],
  [() => mend.check(undefined), 'not-a-body', 'body', {}, /undefined was given/],
  [() => mend.check(circular), 'not-a-body', 'body', {}, /circular/],
  [() => mend.check({ a: 1n }), 'not-a-body', 'body', {}, /BigInt/],
  [() => mend.check({ hello: 1 }), 'undetected', 'body', {}, /none of the keys that hold a history/],
  [() => mend.check([1, 2]), 'undetected', 'body', {}, /an array, not a JSON object/],
  [() => mend.check({}, { dialect: 'openai_chat' }), 'unreadable', 'body', {}, /no `messages` array/],
  [() => mend.check(example('openai_chat-orphan-tool.json'), { dialect: 'gemini' }), 'contradicted', 'body', {}, /reads as openai_chat, not as gemini/],
  [() => mend.check('{}', { dialect: 'klingon' }), 'bad-option', 'options.dialect', {}, /unknown dialect 'klingon'/],
  [() => mend.check('{"model": "gpt-4o", "messages": []}', { provider: 'nope' }), 'unknown-provider', 'options.provider', {}, /unknown provider 'nope'/],
  [() => mend.check('{"contents": []}', { provider: 'openai', dialect: 'gemini' }), 'provider-mismatch', 'options.provider', {}, /does not serve/],
  [() => mend.check('{"messages": []}', 'gpt-4o'), 'bad-option', 'options', {}, /must be an object/],
  [() => mend.check('{"messages": []}', { force: 'yes' }), 'bad-option', 'options.force', {}, /must be a boolean/],
  [() => mend.repair('{"messages": []}', { missingResult: 'guess' }), 'bad-option', 'options.missingResult', {}, /'guess' is not one of 'synthesize', 'drop-call'/],
  [() => mend.repair('{"messages": []}', { orphanResult: 'keep' }), 'bad-option', 'options.orphanResult', {}, /'keep' is not one of 'drop', 'to-text'/],
  [() => mend.trim('{"messages": []}', -1), 'bad-option', 'budget', {}, /-1 is not a count/],
  [() => mend.trim('{"messages": []}', 1.5), 'bad-option', 'budget', {}, /1.5 is not a count/],
  [() => mend.trim('{"messages": []}', '100'), 'bad-option', 'budget', {}, /must be a number, not string/],
  [() => mend.trim('{"messages": []}', 100, { keepLast: NaN }), 'bad-option', 'options.keepLast', {}, /NaN is not a count/],
  [() => mend.convert('{"messages": [{"role": "user", "content": "hi"}]}', 'klingon'), 'bad-option', 'to', {}, /unknown dialect 'klingon'/],
  [() => mend.convert('{"messages": []}'), 'bad-option', 'to', {}, /must be a string, not undefined/],
  [() => mend.nextRequest('{"model": "gpt-4o", "messages": []}', '{"choices": [}'), 'bad-response', 'response', { offset: 13 }, /cannot read it as the openai_chat response/],
  [() => mend.nextRequest('{"model": "gpt-4o", "messages": []}', '{"object": "chat.completion"}'), 'bad-response', 'response', {}, /no `choices`/],
  [
    () => mend.nextRequest('{"model": "gpt-4o", "messages": []}', { choices: [{ index: 0, message: { role: 'assistant', content: 'hi' } }] }, { toolResults: [{ callId: 'call_9', output: 'x' }] }),
    'no-next-request', 'options.toolResults', {}, /answers call id "call_9", which no call of the response has/,
  ],
  [
    () => mend.nextRequest('{"model": "gpt-4o", "messages": []}', { choices: [{ index: 0, message: { role: 'assistant', content: 'hi' } }] }, { toolResults: [{ output: 'x' }] }),
    'bad-tool-results', 'options.toolResults[0]', {}, /it names no call: give callId/,
  ],
  [() => mend.nextRequest('{"model": "gpt-4o", "messages": []}', '{}', { toolResults: [{ callId: 'a' }] }), 'bad-option', 'options.toolResults', {}, /Missing field `output`/],
]

test('bad input is a MendError that says what, where and why', () => {
  for (const [call, code, argument, where, pattern] of BAD) {
    assert.throws(call, (e) => {
      assert.ok(e instanceof mend.MendError, `${call}: ${e && e.stack}`)
      assert.ok(e instanceof Error)
      assert.equal(e.name, 'MendError')
      assert.equal(e.code, code, `${call}: ${e.message}`)
      assert.equal(e.argument, argument, `${call}: ${e.message}`)
      for (const [k, v] of Object.entries(where)) assert.equal(e[k], v, `${call}: ${k} of ${e.message}`)
      assert.match(e.message, pattern, String(call))
      assert.ok(e.message.startsWith(argument), e.message)
      return true
    }, String(call))
  }
})
