// A mock upstream on 127.0.0.1 for the SDKs: records every request (method, path, exact
// body text) and answers as OpenAI chat or Anthropic Messages would, streamed when the
// body asks for it.
'use strict'
const http = require('node:http')

function chatReply(body) {
  const base = { id: 'chatcmpl-mock', created: 1, model: body.model }
  if (!body.stream) {
    return { json: { ...base, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'It is sunny.' }, finish_reason: 'stop' }], usage: { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 } } }
  }
  const chunk = (delta, finish = null) => ({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })
  const events = [chunk({ role: 'assistant', content: 'It is ' }), chunk({ content: 'sunny.' }), chunk({}, 'stop')]
  return { sse: events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join('') + 'data: [DONE]\n\n' }
}

function anthropicReply(body) {
  const message = { id: 'msg_mock', type: 'message', role: 'assistant', model: body.model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 9, output_tokens: 3 } }
  if (!body.stream) {
    return { json: { ...message, content: [{ type: 'text', text: 'It is sunny.' }], stop_reason: 'end_turn' } }
  }
  const events = [
    ['message_start', { type: 'message_start', message }],
    ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }],
    ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'It is ' } }],
    ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'sunny.' } }],
    ['content_block_stop', { type: 'content_block_stop', index: 0 }],
    ['message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 3 } }],
    ['message_stop', { type: 'message_stop' }],
  ]
  return { sse: events.map(([name, data]) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`).join('') }
}

function responsesReply(body) {
  return {
    json: {
      id: 'resp_mock', object: 'response', created_at: 1, status: 'completed', model: body.model, error: null, incomplete_details: null,
      output: [{ type: 'message', id: 'msg_mock', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'It is sunny.', annotations: [] }] }],
      usage: { input_tokens: 9, input_tokens_details: { cached_tokens: 0 }, output_tokens: 3, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 12 },
    },
  }
}

/** Start the mock; `requests` fills as they arrive. */
async function startMock() {
  const requests = []
  const server = http.createServer((req, res) => {
    const chunks = []
    req.on('data', (c) => chunks.push(c))
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8')
      requests.push({ method: req.method, path: req.url, text, headers: req.headers })
      let body
      try {
        body = JSON.parse(text)
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' })
        return res.end(JSON.stringify({ error: { message: 'not JSON', type: 'invalid_request_error' } }))
      }
      const reply = req.url.includes('/messages') ? anthropicReply(body) : req.url.endsWith('/responses') ? responsesReply(body) : chatReply(body)
      if (reply.json) {
        res.writeHead(200, { 'content-type': 'application/json' })
        return res.end(JSON.stringify(reply.json))
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
      res.end(reply.sse)
    })
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address()
  return { url: `http://127.0.0.1:${port}`, requests, close: () => new Promise((r) => server.close(r)) }
}

module.exports = { startMock }
