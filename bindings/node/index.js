// @mend/core: the addon's functions (mend.node, built from src/ by build.js or
// `npm run build`), with bad input thrown as MendError, plus ensureValid and mendFetch.
// The typings, index.d.ts, are generated from the Rust crate (header.d.ts for this file).
'use strict'

const native = loadAddon()

/** Bad input: what, where (argument, line/column, path, offset) and why. */
class MendError extends Error {
  constructor(message, details = {}) {
    super(message)
    this.name = 'MendError'
    Object.assign(this, details)
  }
}

/** A body the provider would refuse; `report` is the check that says why. */
class InvalidHistory extends MendError {
  constructor(report, where = '') {
    const errors = report.violations.filter((v) => v.severity === 'error')
    const first = errors[0]
    const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : ''
    const what = first ? `${first.rule} at ${first.path || '/'}: ${first.message}${more}` : 'invalid'
    super(`${where}the ${report.dialect} history would be refused: ${what}`, {
      code: 'invalid-history',
      argument: 'body',
      reason: what,
    })
    this.name = 'InvalidHistory'
    this.report = report
  }
}

function loadAddon() {
  try {
    return require('./mend.node')
  } catch (e) {
    if (e && e.code === 'MODULE_NOT_FOUND') {
      throw new Error(
        `@mend/core: the addon ${__dirname}/mend.node is not built; run \`npm run build\` (or \`node build.js\`) in ${__dirname}`,
      )
    }
    throw e
  }
}

// The addon throws plain Errors named MendError with the details as properties; they
// become MendError instances here, with their stack. N-API's own conversion errors (an
// option of the wrong type) become MendErrors naming the option.
const EXPECTED = {
  NumberExpected: 'a number',
  StringExpected: 'a string',
  BooleanExpected: 'a boolean',
  ObjectExpected: 'an object',
  ArrayExpected: 'an array',
}

function lift(e) {
  if (!(e instanceof Error) || e instanceof MendError) return e
  if (e.name === 'MendError') {
    Object.setPrototypeOf(e, MendError.prototype)
    return e
  }
  const field = /on \w+\.(\w+)/.exec(e.message)
  if (field && (e.code in EXPECTED || e.code === 'InvalidArg')) {
    const argument = `options.${field[1]}`
    const reason = e.code in EXPECTED ? `it must be ${EXPECTED[e.code]} (${e.message})` : e.message
    return new MendError(`${argument}: ${reason}`, { code: 'bad-option', argument, reason })
  }
  return e
}

function bad(argument, reason) {
  return new MendError(`${argument}: ${reason}`, { code: 'bad-option', argument, reason })
}

function kind(v) {
  return v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v
}

// `positional` names the arguments after the body and the type each must have; the last
// argument is the options object.
function wrap(fn, positional = []) {
  const wrapped = function (...args) {
    positional.forEach(([name, type], i) => {
      const v = args[i + 1]
      if (type && typeof v !== type) throw bad(name, `it must be a ${type}, not ${kind(v)}`)
    })
    const options = args[positional.length + 1]
    if (options !== undefined && options !== null && (typeof options !== 'object' || Array.isArray(options))) {
      throw bad('options', `it must be an object, not ${kind(options)}`)
    }
    try {
      return fn(...args)
    } catch (e) {
      throw lift(e)
    }
  }
  Object.defineProperty(wrapped, 'name', { value: fn.name })
  return wrapped
}

const check = wrap(native.check)

/** The body when the provider would take it; else InvalidHistory with the report. */
function ensureValid(body, options) {
  const report = check(body, options)
  if (!report.valid) throw new InvalidHistory(report)
  return body
}

module.exports = {
  check,
  repair: wrap(native.repair),
  trim: wrap(native.trim, [['budget', 'number']]),
  convert: wrap(native.convert, [['to', 'string']]),
  nextRequest: wrap(native.nextRequest, [['response', null]]),
  rules: native.rules,
  endpointDialect: native.endpointDialect,
  ensureValid,
  MendError,
  InvalidHistory,
}
module.exports.mendFetch = require('./fetch.js')(module.exports)
