/**
 * The screenshots of docs/console.md: a gateway on a fresh SQLite store and a fake provider, seeded with
 * calls and with one of each managed resource, photographed page by page in Debian's Chromium.
 *
 *   npm run build && npm run docs:console     # writes docs/console/*.png
 */
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { startFakeOpenAI } from '../test/fakes/openai/server.js';
import { ensureConsoleBuilt, launchChromium } from '../test/helpers/chromium.js';
import { startGateway } from '../test/helpers/gateway.js';

const OUT = fileURLToPath(new URL('../docs/console/', import.meta.url));
const MODELS = ['gpt-4o-mini', 'gpt-4o', 'gpt-4.1-mini'];
const TEAMS = ['search', 'support', 'billing'];

ensureConsoleBuilt();
mkdirSync(OUT, { recursive: true });
const upstream = await startFakeOpenAI({ name: 'demo', latencyMs: 40 });
const gateway = await startGateway();

async function manage(path: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: { 'x-gateway-api-key': gateway.adminKey, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as Record<string, unknown>;
}

try {
  await manage('/virtual-keys', {
    slug: 'openai-prod',
    name: 'OpenAI production',
    provider: 'openai',
    api_key: 'sk-demo-000000000000WXYZ',
    custom_host: upstream.url,
  });
  await manage('/configs', {
    slug: 'chat-fallback',
    name: 'Chat with fallback',
    config: {
      strategy: { mode: 'fallback' },
      retry: { attempts: 2 },
      targets: [
        { virtual_key: 'openai-prod' },
        { provider: 'openai', api_key: 'sk-demo', custom_host: upstream.url },
      ],
    },
  });
  await manage('/guardrails', {
    slug: 'no-secrets',
    name: 'No secrets',
    guardrail: { 'default.regexMatch': { rule: 'sk-[A-Za-z0-9]{20,}', not: true }, deny: true },
  });
  await manage('/prompts', {
    slug: 'summary',
    name: 'Summary',
    string: '[{"role":"user","content":"Summarise: {{text}}"}]',
    parameters: { model: 'gpt-4o-mini' },
    virtual_key: 'openai-prod',
  });
  await manage('/policies/rate-limits', {
    name: 'Requests per team',
    conditions: [{ key: 'metadata.team', value: '*' }],
    group_by: [{ key: 'metadata.team' }],
    type: 'requests',
    unit: 'rpm',
    value: 600,
  });
  const keys = [
    await manage('/api-keys', { name: 'search-service', role: 'member' }),
    await manage('/api-keys', { name: 'support-bot', role: 'member' }),
  ];

  for (let i = 0; i < 36; i++) {
    const key = i % 3 === 0 ? gateway.adminKey : String(keys[i % 2].key);
    const client = new OpenAI({
      baseURL: gateway.url,
      apiKey: 'unused',
      maxRetries: 0,
      defaultHeaders: {
        'x-gateway-api-key': key,
        'x-gateway-config': 'chat-fallback',
        'x-gateway-metadata': JSON.stringify({ team: TEAMS[i % 3], _user: `user-${i % 5}` }),
      },
    });
    // Every seventh call asks the fake for an upstream error, so the error charts have something to show.
    const model = i % 7 === 6 ? 'fake-status-400' : MODELS[i % 3];
    await client.chat.completions
      .create({
        model,
        messages: [{ role: 'user', content: `Question ${i}: what is the capital of France?` }],
      })
      .catch(() => undefined);
  }
  await new Promise((resolve) => setTimeout(resolve, 500));

  const browser = await launchChromium();
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  page.setDefaultTimeout(15_000);
  const shot = async (name: string, fullPage = false) => {
    await page.waitForLoadState('networkidle');
    await page.waitForTimeout(600); // the charts' entry animation
    await page.screenshot({ path: `${OUT}${name}.png`, fullPage });
    console.log(`docs/console/${name}.png`);
  };

  await page.goto(`${gateway.origin}/console/`);
  await shot('sign-in');
  await page.getByLabel('Gateway API key').fill(gateway.adminKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('[data-log-id]').first().waitFor();
  await shot('logs');
  await page.locator('[data-log-id]', { hasText: 'gpt-4o', hasNotText: 'attempt' }).first().click();
  await page.getByTestId('log-trace-id').waitFor();
  await shot('log-detail', true);
  await page.goto(`${gateway.origin}/console/logs`);
  await page.locator('[data-log-id]', { hasText: 'fake-status-400', hasNotText: 'attempt' }).first().click();
  await page.getByTestId('attempts-table').waitFor();
  await shot('log-detail-attempts');
  await page.goto(`${gateway.origin}/console/analytics`);
  await page.getByTestId('top-models').getByText('gpt-4o-mini').waitFor();
  await page.getByRole('radio', { name: '1h' }).dispatchEvent('click');
  await shot('analytics', true);
  for (const name of ['api-keys', 'virtual-keys', 'configs', 'prompts', 'guardrails', 'rate-limits']) {
    await page.goto(`${gateway.origin}/console/${name}`);
    await shot(name);
  }
  await page.goto(`${gateway.origin}/console/configs`);
  await page.getByRole('button', { name: 'New config' }).click();
  await page.locator('.cm-content').click();
  await page.keyboard.press('Control+A');
  await page.keyboard.insertText(
    JSON.stringify(
      {
        slug: 'broken',
        config: { retry: { attempts: 'three' }, targets: [{ virtual_key: 'openai-prod', wieght: 2 }] },
      },
      null,
      2,
    ),
  );
  await page.getByRole('dialog').getByRole('button', { name: 'Save' }).click();
  await page.getByTestId('editor-problems').waitFor();
  await shot('config-editor');
  await browser.close();
} finally {
  await gateway.close();
  await upstream.close();
}
