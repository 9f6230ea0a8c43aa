/**
 * What rendering a stored prompt adds to a call, in-process: a 2 KB chat template reading 10 variables,
 * rendered from its cached parse (as a call does once the version is in the lookups cache), then parsed
 * into messages and checked with the chat body schema. Bounded: a warm-up, then N timed renders, one at
 * a time. `npx tsx bench/prompt-render.ts [iterations]`; prints p50 / p99 in microseconds as JSON.
 */
import { performance } from 'node:perf_hooks';
import { renderPrompt, type PartialLoader } from '../src/gateway/prompts/render-prompt.js';
import type { PromptDocument } from '../src/store/types.js';
import { round, summarise } from './stats.js';

const ITERATIONS = Number(process.argv[2] ?? 20_000);
const WARM_UP = 2_000;

const names = Array.from({ length: 10 }, (_, i) => `var${i}`);
const filler = 'Answer in the customer\u2019s language, cite the policy section, and keep it short. ';
const messages = [
  { role: 'system', content: `${filler.repeat(12)}Tone: {{var0}}. Product: {{var1}}. Plan: {{var2}}.` },
  {
    role: 'user',
    content:
      `${filler.repeat(11)}Customer {{var3}} ({{var4}}) from {{var5}} asks about {{var6}}: {{var7}}. ` +
      'Order {{var8}}, opened {{var9}}.',
  },
];
const template = JSON.stringify(messages);

const version: { prompt: PromptDocument } = {
  prompt: { template_type: 'chat', string: template, parameters: { model: 'gpt-4o-mini', temperature: 0.2 } },
};
const variables = Object.fromEntries(
  names.map((name, i) => [
    name,
    i === 7 ? 'Why was I charged "twice"?\nSee {{invoice}} <b>' : `value-${i} é`,
  ]),
);
const noPartials: PartialLoader = async () => undefined;
const input = { variables, allowUnknownVariables: false, overrides: {}, stream: undefined };

async function main(): Promise<void> {
  for (let i = 0; i < WARM_UP; i++) await renderPrompt(version, input, noPartials);
  const samples: number[] = [];
  for (let i = 0; i < ITERATIONS; i++) {
    const started = performance.now();
    await renderPrompt(version, input, noPartials);
    samples.push((performance.now() - started) * 1000);
  }
  const { p50, p90, p99, mean } = summarise(samples);
  console.log(
    JSON.stringify({
      template_bytes: Buffer.byteLength(template),
      variables: names.length,
      iterations: ITERATIONS,
      p50_us: round(p50, 1),
      p90_us: round(p90, 1),
      p99_us: round(p99, 1),
      mean_us: round(mean, 1),
      node: process.version,
    }),
  );
}

await main();
