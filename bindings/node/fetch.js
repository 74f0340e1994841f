// mendFetch: a fetch that checks or repairs each JSON request body sent to a history
// endpoint before it leaves, for the `fetch` option of the official SDKs. Responses,
// streams included, are never touched: only the request body is read.
'use strict'

const MODES = ['observe', 'repair', 'strict']

module.exports = function makeMendFetch(mend) {
  const { MendError, InvalidHistory } = mend

  function option(name, reason) {
    return new MendError(`options.${name}: ${reason}`, { code: 'bad-option', argument: `options.${name}`, reason })
  }

  return function mendFetch(options) {
    if (options === null || typeof options !== 'object') {
      throw option('mode', `mendFetch takes an options object ({ mode: ${MODES.map((m) => `'${m}'`).join(' | ')} }), not ${options === null ? 'null' : typeof options}`)
    }
    const { mode, provider, missingResult, orphanResult, onEvent } = options
    if (!MODES.includes(mode)) {
      throw option('mode', `${JSON.stringify(mode)} is not one of ${MODES.map((m) => `'${m}'`).join(', ')}`)
    }
    const inner = options.fetch ?? globalThis.fetch
    if (typeof inner !== 'function') throw option('fetch', 'it is not a function, and there is no global fetch')
    if (onEvent !== undefined && typeof onEvent !== 'function') throw option('onEvent', 'it is not a function')
    const log = options.log === false ? null : (options.log ?? ((line) => console.warn(line)))
    if (log !== null && typeof log !== 'function') throw option('log', 'it is neither a function nor false')
    // Every option value is checked now, not at the first request.
    const judged = { provider, missingResult, orphanResult }
    mend.repair('{"messages": [{"role": "user", "content": "x"}]}', { missingResult, orphanResult })

    async function fetchWithMend(input, init) {
      const req = await readRequest(input, init, mend.endpointDialect)
      if (!req) return inner(input, init)
      const { url, method, dialect, endpoint } = req
      const event = { mode, method, url, dialect, violations: [], edits: [], unrepairable: [] }
      const emit = (outcome, line) => {
        event.outcome = outcome
        if (onEvent) onEvent(event)
        if (line && log) log(`mend: ${method} ${url}: ${line}`)
      }
      if (req.text === null) {
        // A stream, a form, a compressed body: nothing mend can read before it leaves.
        if (mode === 'strict') {
          throw new MendError(`mendFetch (strict) refused ${method} ${url}: ${req.why}, so it cannot be checked`, {
            code: 'not-a-body', argument: 'body', reason: req.why,
          })
        }
        event.reason = req.why
        emit('unchecked', `not checked: ${req.why}`)
        return inner(input, init)
      }
      const opts = { ...judged, endpoint }
      if (mode === 'repair') {
        let fixed
        try {
          fixed = mend.repair(req.text, opts)
        } catch (e) {
          if (!(e instanceof MendError)) throw e
          event.reason = e.message
          emit('unchecked', `not checked: ${e.message}`)
          return inner(input, init)
        }
        event.edits = fixed.edits
        event.unrepairable = fixed.unrepairable
        if (!fixed.changed) {
          if (fixed.valid) emit('valid')
          else emit('invalid', `would be refused, and repair cannot settle it: ${describe(fixed.unrepairable)}`)
          return inner(input, init)
        }
        const said = fixed.edits.map((e) => `${e.rule} at ${e.path || '/'} (${e.action}: ${e.detail})`).join('; ')
        if (fixed.valid) emit('repaired', `repaired: ${said}`)
        else emit('partly-repaired', `repaired: ${said}; left: ${describe(fixed.unrepairable)}`)
        return send(inner, input, init, fixed.body)
      }
      let report
      try {
        report = mend.check(req.text, opts)
      } catch (e) {
        if (!(e instanceof MendError)) throw e
        if (mode === 'strict') {
          e.message = `mendFetch (strict) refused ${method} ${url}: ${e.message}`
          throw e
        }
        event.reason = e.message
        emit('unchecked', `not checked: ${e.message}`)
        return inner(input, init)
      }
      event.violations = report.violations
      if (report.valid) {
        emit('valid')
        return inner(input, init)
      }
      if (mode === 'strict') {
        emit('rejected')
        throw new InvalidHistory(report, `mendFetch (strict) refused ${method} ${url}: `)
      }
      emit('invalid', `would be refused: ${describe(report.violations)}`)
      return inner(input, init)
    }
    return fetchWithMend
  }
}

function describe(violations) {
  const errors = violations.filter((v) => v.severity === 'error')
  return errors.map((v) => `${v.rule} at ${v.path || '/'}: ${v.message}`).join('; ')
}

/** What mendFetch judges of a request: null when it is not a POST to a history endpoint. */
async function readRequest(input, init, endpointDialect) {
  const isRequest = typeof Request !== 'undefined' && input instanceof Request
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : isRequest ? input.url : String(input)
  const method = String(init?.method ?? (isRequest ? input.method : 'GET')).toUpperCase()
  if (method !== 'POST') return null
  let endpoint
  try {
    endpoint = new URL(url).pathname
  } catch {
    endpoint = url.split('?')[0]
  }
  const dialect = endpointDialect(endpoint)
  if (!dialect) return null
  const headers = new Headers(init?.headers ?? (isRequest ? input.headers : undefined))
  const base = { url, method, dialect, endpoint, text: null }
  const encoding = headers.get('content-encoding')
  if (encoding && encoding !== 'identity') return { ...base, why: `the body is ${encoding}-encoded` }
  const body = init && 'body' in init ? init.body : undefined
  if (body !== undefined && body !== null) {
    if (typeof body === 'string') return { ...base, text: body }
    if (body instanceof ArrayBuffer) return { ...base, text: new TextDecoder().decode(body) }
    if (ArrayBuffer.isView(body)) {
      return { ...base, text: new TextDecoder().decode(new Uint8Array(body.buffer, body.byteOffset, body.byteLength)) }
    }
    return { ...base, why: `the body is a ${body?.constructor?.name ?? typeof body}, not a string or bytes` }
  }
  if (isRequest && input.body !== null) return { ...base, text: await input.clone().text() }
  return null
}

/** The request again with `body` in place of its own. */
function send(inner, input, init, body) {
  const isRequest = typeof Request !== 'undefined' && input instanceof Request
  if (init && 'body' in init && init.body != null) {
    const next = { ...init, body }
    if (hasContentLength(init.headers)) {
      const headers = new Headers(init.headers)
      headers.delete('content-length')
      next.headers = headers
    }
    return inner(input, next)
  }
  if (isRequest) return inner(new Request(input, { ...init, body }))
  return inner(input, { ...init, body })
}

function hasContentLength(headers) {
  if (!headers) return false
  if (typeof headers.has === 'function') return headers.has('content-length')
  if (Array.isArray(headers)) return headers.some(([k]) => String(k).toLowerCase() === 'content-length')
  return Object.keys(headers).some((k) => k.toLowerCase() === 'content-length')
}
