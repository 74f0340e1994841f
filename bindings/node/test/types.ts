// Type-checked (tsc --noEmit --strict, by tests/it) against the generated index.d.ts:
// the API as a TypeScript user writes it. It is never run.
import OpenAI from 'openai'
import {
  check, repair, trim, convert, nextRequest, rules, ensureValid, endpointDialect,
  mendFetch, MendError, InvalidHistory,
  type Report, type Violation, type Dialect, type MendFetchEvent,
} from '..'

const body = { model: 'gpt-4o', messages: [{ role: 'user' as const, content: 'hi' }] }

const report: Report = check(body, { dialect: 'openai_chat', provider: 'openai' })
const first: Violation | undefined = report.violations[0]
const rule: string | undefined = first?.rule

const fixed = repair(body, { missingResult: 'drop-call', orphanResult: 'to-text' })
const sameShape: typeof body = fixed.body
const text: string = repair(JSON.stringify(body)).body
const bytes: Buffer = repair(Buffer.from(JSON.stringify(body))).body

const trimmed = trim(body, 8000, { keepLast: 2, protect: 1, model: 'gpt-4o' })
const tokens: number = trimmed.tokensAfter - trimmed.tokensBefore

const to = convert(body, 'anthropic', { maxTokens: 1024 })
const lost: string[] = to.losses.map((n) => `${n.kind} ${n.what} at ${n.path}`)
const target: { [key: string]: any } = to.body

const next = nextRequest(body, '{"choices": []}', { toolResults: [{ callId: 'call_1', output: { temp: 21 } }] })
const unanswered: (string | undefined)[] = next.unanswered.map((c) => c.callId)

const dialects: Dialect[] = rules().flatMap((r) => r.dialects)
const d: Dialect | null = endpointDialect('/v1/chat/completions')
const valid: typeof body = ensureValid(body)

const events: MendFetchEvent[] = []
const client = new OpenAI({ apiKey: 'sk', fetch: mendFetch({ mode: 'repair', onEvent: (e) => events.push(e), log: false }) })

try {
  ensureValid(body)
} catch (e) {
  if (e instanceof InvalidHistory) console.log(e.report.violations.length, e.code)
  else if (e instanceof MendError) console.log(e.argument, e.line, e.column, e.path)
}

export { rule, sameShape, text, bytes, tokens, lost, target, unanswered, dialects, d, valid, client }
