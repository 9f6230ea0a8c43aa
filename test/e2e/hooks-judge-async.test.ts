/**
 * A model-judged check waits for its judge's answer, not for the async hooks of the judge's own config:
 * a judge config that sends every judgement to a slow audit log (an async `default.log`) judges as fast
 * as one without it, and the audit is still written. The `openai` SDK against a real gateway, a fake
 * judge model and a slow log receiver.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { client as managementClient } from '../management/http.js';
import { client, target } from '../routing/support.js';

const SLOW_MS = 3000;
// A judged call that ends well before the audit answers did not wait for it.
const WELL_BEFORE_MS = SLOW_MS - 1000;

let gateway: TestGateway;
let fake: FakeUpstream;
let judge: FakeUpstream;
let audit: Server;
let auditUrl: string;
let audited = 0;

beforeAll(async () => {
  [gateway, fake, judge] = await Promise.all([
    startGateway(),
    startFakeOpenAI({ name: 'judged' }),
    startFakeOpenAI({ name: 'judge' }),
  ]);
  audit = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      setTimeout(() => {
        audited += 1;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{}');
      }, SLOW_MS);
    });
  });
  await new Promise<void>((resolve) => audit.listen(0, '127.0.0.1', resolve));
  auditUrl = `http://127.0.0.1:${(audit.address() as AddressInfo).port}/audit`;
});

afterAll(async () => {
  audit?.closeAllConnections();
  await Promise.all([
    gateway?.close(),
    fake?.close(),
    judge?.close(),
    new Promise<void>((resolve) => (audit ? audit.close(() => resolve()) : resolve())),
  ]);
});

describe('a judge whose config has an async hook', () => {
  it('judges without waiting for it', async () => {
    const admin = managementClient(gateway.url, gateway.adminKey);
    const judgeConfig = {
      ...target(judge),
      override_params: { model: 'judge-model' },
      output_guardrails: [{ id: 'audit', async: true, 'default.log': { logURL: auditUrl } }],
    };
    expect((await admin.post('/configs', { slug: 'audited-judge', config: judgeConfig })).status).toBe(200);
    const config = {
      ...target(fake),
      output_guardrails: [
        {
          id: 'judged',
          deny: true,
          'default.modelJudge': { config: 'audited-judge', instructions: 'Be polite.', timeout: 10_000 },
        },
      ],
    };
    judge.enqueue({ text: '{"verdict": true, "explanation": "polite enough"}' });
    const started = performance.now();
    const answer = await client(gateway, config).chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'thank you' }],
    });
    expect(answer.choices[0].message.content).toBe('[judged] thank you');
    expect(performance.now() - started).toBeLessThan(WELL_BEFORE_MS);
    await expect.poll(() => audited, { timeout: SLOW_MS + 2000 }).toBe(1);
  });
});
