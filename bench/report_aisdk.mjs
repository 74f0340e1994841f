// The Vercel AI SDK's side of `bench/report`: the request bodies its providers build
// from the same conversations, timed, outputs kept for judging.
//
//   node bench/report_aisdk.mjs CORPUS [--reps N] > out.jsonl
//
// Each sample's `aisdk` rendering (the SDK's ModelMessage[], system message included)
// goes through the public API, `generateText({ model, messages, tools, maxRetries: 0,
// allowSystemInMessages: true })`,
// with a provider whose `fetch` records the request body and stops the call there.
// That is everything the SDK does to a history before sending (prompt validation,
// `convertToLanguageModelPrompt`, the provider's message converter, JSON.stringify),
// and nothing after. Time: from the call to the moment `fetch` is entered, the median
// of `--reps` runs after one warm-up. A call that throws before `fetch` is a rejection
// before sending. Targets: Anthropic Messages, Gemini generateContent, OpenAI chat,
// OpenAI Responses and Bedrock Converse (with a Bedrock API key, so no SigV4 signing is
// timed). One JSON line per sample and target on stdout.

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { generateText, jsonSchema, tool } from 'ai';
import { createAmazonBedrock } from '@ai-sdk/amazon-bedrock';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { createOpenAI } from '@ai-sdk/openai';

const args = process.argv.slice(2);
const corpusPath = args.find((a) => !a.startsWith('--'));
const repsAt = args.indexOf('--reps');
const reps = Math.max(1, repsAt >= 0 ? Number(args[repsAt + 1]) : 7);
if (args.includes('--versions')) {
  const require = createRequire(import.meta.url);
  const v = (p) => require(`${p}/package.json`).version;
  console.log(JSON.stringify({ ai: v('ai'), '@ai-sdk/anthropic': v('@ai-sdk/anthropic'),
    '@ai-sdk/google': v('@ai-sdk/google'), '@ai-sdk/openai': v('@ai-sdk/openai'),
    '@ai-sdk/amazon-bedrock': v('@ai-sdk/amazon-bedrock'), node: process.version }));
  process.exit(0);
}

globalThis.AI_SDK_LOG_WARNINGS = false; // warnings printed per call would be timed
class Captured extends Error {}
let captured = null;
let enteredAt = 0n;
const stopFetch = async (_url, init) => {
  enteredAt = process.hrtime.bigint();
  captured = init.body;
  throw new Captured('captured');
};
const common = { apiKey: 'bench-no-network', fetch: stopFetch };
const anthropic = createAnthropic(common);
const google = createGoogleGenerativeAI(common);
const openai = createOpenAI(common);
const bedrock = createAmazonBedrock({ ...common, region: 'us-east-1' });
const TARGETS = {
  'convert:anthropic': () => anthropic('claude-sonnet-4-5'),
  'convert:gemini': () => google('gemini-2.5-flash'),
  'convert:openai_chat': () => openai.chat('gpt-4o'),
  'convert:openai_responses': () => openai.responses('gpt-4o'),
  'convert:bedrock_converse': () => bedrock('us.anthropic.claude-sonnet-4-5-20250929-v1:0'),
};
const TOOLS = ['get_weather', 'search_docs', 'read_file', 'run_sql', 'list_dir', 'http_get'];
const tools = Object.fromEntries(TOOLS.map((n) => [n, tool({
  description: `Tool ${n}`,
  inputSchema: jsonSchema({ type: 'object', properties: { q: { type: 'string' }, n: { type: 'integer' } } }),
})]));

async function once(model, messages) {
  captured = null;
  const start = process.hrtime.bigint();
  let error = null;
  try {
    await generateText({ model, messages, tools, maxRetries: 0, allowSystemInMessages: true });
    error = 'generateText returned without calling fetch';
  } catch (e) {
    if (captured === null) error = `${e?.name ?? 'Error'}: ${String(e?.message ?? e).slice(0, 300)}`;
  }
  if (captured !== null) return { body: captured, ns: Number(enteredAt - start) };
  return { error, ns: Number(process.hrtime.bigint() - start) };
}

const samples = readFileSync(corpusPath, 'utf8').split('\n').filter((l) => l.trim())
  .map((l) => JSON.parse(l)).filter((s) => s.aisdk);
const out = [];
for (const [task, make] of Object.entries(TARGETS)) {
  const model = make();
  for (const s of samples) await once(model, structuredClone(s.aisdk)); // warm-up
  for (const s of samples) {
    const times = [];
    let last;
    for (let i = 0; i < reps; i++) {
      const messages = structuredClone(s.aisdk);
      last = await once(model, messages);
      times.push(last.ns);
    }
    times.sort((a, b) => a - b);
    const rec = { id: s.id, task, ns: times[Math.floor(times.length / 2)], ok: last.error == null };
    if (last.error == null) rec.body = JSON.parse(last.body);
    else rec.error = last.error;
    out.push(JSON.stringify(rec));
  }
}
process.stdout.write(out.join('\n') + '\n');
