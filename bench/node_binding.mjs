// Two builds of the Node addon (`@mend/core`'s mend.node) timed against each other in one
// process: `check` and `repair` of the report corpus's openai_chat bodies, each given as
// an object and as its JSON text, the builds run alternately round after round so the
// machine's noise falls on both alike.
//
//   node bench/node_binding.mjs OLD.node NEW.node [CORPUS] [--rounds N]
//
// CORPUS defaults to bench/corpus/report.jsonl (make it with `python3
// bench/report_corpus.py --seed 7 --valid 40 --per-damage 16 --out
// bench/corpus/report.jsonl`). A build is any mend.node (`cargo build --release -p
// mend-node` makes target/release/libmend_node.so; copy it aside to keep it). The two
// builds' outcomes are held equal first (report, repaired body), so a faster build
// that answers differently is not reported as faster. Prints per call and form the
// median over the rounds of the mean time per body, and new/old.

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import assert from 'node:assert/strict';

const args = process.argv.slice(2);
const paths = args.filter((a) => !a.startsWith('--') && !/^\d+$/.test(a));
const roundsAt = args.indexOf('--rounds');
const rounds = Math.max(1, roundsAt >= 0 ? Number(args[roundsAt + 1]) : 15);
if (paths.length < 2) {
  console.error('usage: node bench/node_binding.mjs OLD.node NEW.node [CORPUS] [--rounds N]');
  process.exit(2);
}
const require = createRequire(import.meta.url);
const builds = { old: require(paths[0]), new: require(paths[1]) };
const corpus = paths[2] ?? new URL('corpus/report.jsonl', import.meta.url).pathname;
const texts = readFileSync(corpus, 'utf8')
  .split('\n')
  .filter((l) => l.trim())
  .map((l) => JSON.parse(l).bodies?.openai_chat)
  .filter(Boolean)
  .map((b) => JSON.stringify(b));
const opts = { dialect: 'openai_chat' };
const forms = {
  object: () => texts.map((t) => JSON.parse(t)),
  string: () => texts,
};

// The same outcomes from both builds.
for (const [form, make] of Object.entries(forms)) {
  const bodies = make();
  for (const b of bodies) {
    assert.deepEqual(builds.new.check(b, opts), builds.old.check(b, opts), form);
    const [o, n] = [builds.old.repair(b, opts), builds.new.repair(b, opts)];
    const body = (r) => (typeof r.body === 'string' ? JSON.parse(r.body) : r.body);
    assert.deepEqual(body(n), body(o), form);
    assert.deepEqual({ ...n, body: null }, { ...o, body: null }, form);
  }
}

const times = {};
for (let round = 0; round <= rounds; round++) {
  for (const [form, make] of Object.entries(forms)) {
    for (const fn of ['check', 'repair']) {
      // Alternate which build goes first, so neither always runs on a warmer machine.
      const order = round % 2 ? ['new', 'old'] : ['old', 'new'];
      for (const which of order) {
        const bodies = make();
        const call = builds[which][fn];
        const t0 = process.hrtime.bigint();
        for (const b of bodies) call(b, opts);
        const ns = Number(process.hrtime.bigint() - t0) / bodies.length;
        if (round === 0) continue; // warm-up
        ((times[`${fn} ${form}`] ??= { old: [], new: [] })[which]).push(ns);
      }
    }
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
console.log(`${texts.length} openai_chat bodies, ${rounds} rounds, ${process.version}`);
console.log('call            old µs   new µs   new/old');
for (const [name, t] of Object.entries(times)) {
  const [o, n] = [median(t.old) / 1000, median(t.new) / 1000];
  console.log(`${name.padEnd(15)} ${o.toFixed(1).padStart(7)}  ${n.toFixed(1).padStart(7)}   ${(n / o).toFixed(2)}`);
}
