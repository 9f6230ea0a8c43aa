/**
 * The web console in a real Chromium against a real gateway (SQLite) and a fake provider: sign-in, every
 * page loads without an error, a call made with the `openai` SDK shows up in the logs and its detail, a key
 * is created and revoked through the UI, and the config editor refuses an invalid config before saving.
 */
import OpenAI from 'openai';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import {
  describeWithChromium,
  launchChromium,
  signedInConsoleForTests,
  STEP_TIMEOUT_MS,
  type AdminApi,
  type SignedInConsole,
} from '../helpers/chromium.js';
import { postChat, type TestGateway } from '../helpers/gateway.js';

vi.setConfig({ testTimeout: 4 * STEP_TIMEOUT_MS });

describeWithChromium('web console', () => {
  let console_: SignedInConsole;
  let gateway: TestGateway;
  let upstream: FakeUpstream;
  let page: Page;
  let errors: string[];
  let api: AdminApi;

  beforeAll(async () => {
    upstream = await startFakeOpenAI({ name: 'console' });
  });
  afterAll(async () => {
    await upstream?.close();
  });

  // Not signed in: the first test signs in.
  signedInConsoleForTests({}, (started) => {
    console_ = started;
    ({ gateway, page, errors, api } = started);
  });

  async function go(path: string) {
    await console_.open(path);
  }

  /** Signs in afresh, with `key`, where the page is. */
  async function signInWith(key: string) {
    // The page shown under the key signed in before may still be loading: a reload would cut its requests,
    // which the errors collected count as failed.
    await page.waitForLoadState('networkidle');
    await page.evaluate('sessionStorage.clear()');
    await page.reload();
    await page.getByLabel('Gateway API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  async function heading(text: string) {
    await page.getByRole('heading', { name: text, exact: true }).waitFor();
  }

  it('refuses a wrong key and signs in with a good one, kept for the tab only', async () => {
    await go('/');
    await page.getByLabel('Gateway API key').fill('gw-not-a-key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('Not signed in').waitFor();
    expect(await page.evaluate('sessionStorage.length')).toBe(0);

    await page.getByLabel('Gateway API key').fill(gateway.adminKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await heading('Logs');
    expect(await page.evaluate("sessionStorage.getItem('gateway-console-api-key')")).toBe(gateway.adminKey);
    expect(await page.evaluate('localStorage.length')).toBe(0);
    // The wrong key's 401 is the only error so far.
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain('401');
  });

  it('loads every page without an error, and a reload of a deep link', async () => {
    const pages: [string, string][] = [
      ['/logs', 'Logs'],
      ['/analytics', 'Analytics'],
      ['/api-keys', 'API keys'],
      ['/virtual-keys', 'Virtual keys'],
      ['/configs', 'Configs'],
      ['/prompts', 'Prompts'],
      ['/guardrails', 'Guardrails'],
      ['/rate-limits', 'Rate limits'],
    ];
    for (const [path, title] of pages) {
      await go(path);
      await heading(title);
      await page.waitForLoadState('networkidle');
      expect(await page.getByRole('alert').count(), path).toBe(0);
    }
    expect(errors).toEqual([]);
  });

  it('shows a call made with the openai SDK in the logs, found by metadata, with its detail', async () => {
    const traceId = `console-${Date.now()}`;
    const client = new OpenAI({
      baseURL: gateway.url,
      apiKey: 'unused',
      maxRetries: 0,
      defaultHeaders: {
        'x-gateway-api-key': gateway.adminKey,
        'x-gateway-config': JSON.stringify({
          provider: 'openai',
          api_key: 'sk-test',
          custom_host: upstream.url,
        }),
        'x-gateway-trace-id': traceId,
        'x-gateway-metadata': JSON.stringify({ team: 'Console-Search' }),
      },
    });
    const answer = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hello console' }],
    });
    expect(answer.choices[0].message.content).toBeTruthy();

    await go('/logs');
    await heading('Logs');
    await page.getByLabel('Search metadata').fill('console-search');
    // The log is written in batches: apply until the record is there.
    const row = page.locator('[data-log-id]');
    await expect
      .poll(
        async () => {
          await page.getByRole('button', { name: 'Apply' }).click();
          await page.waitForLoadState('networkidle');
          return row.count();
        },
        { timeout: STEP_TIMEOUT_MS, interval: 250 },
      )
      .toBe(1);
    expect(await row.textContent()).toContain('team=Console-Search');
    expect(await row.textContent()).toContain('gpt-4o-mini');

    await page.getByLabel('Search metadata').fill('no-such-metadata');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('No log records match.').waitFor();

    await page.getByLabel('Search metadata').fill('console-search');
    await page.getByRole('button', { name: 'Apply' }).click();
    await row.click();
    await page.getByTestId('log-trace-id').waitFor();
    expect(await page.getByTestId('log-trace-id').textContent()).toBe(traceId);
    expect(await page.getByTestId('log-status').textContent()).toBe('200');
    expect(await page.getByTestId('log-cost').textContent()).toMatch(/^\$\d/);
    expect(await page.getByTestId('json-request').textContent()).toContain('hello console');
    expect(await page.getByTestId('json-answer').textContent()).toContain(answer.choices[0].message.content!);

    await go('/analytics');
    await page.getByTestId('top-models').getByText('gpt-4o-mini').waitFor();
    expect(errors).toEqual([]);
  });

  it('keeps the logs filters in the URL: a link or a reload shows the same records', async () => {
    await go('/logs?search=console-search&range=all');
    await heading('Logs');
    const rows = page.locator('[data-log-id]');
    await expect.poll(() => rows.count()).toBe(1);
    await page.reload();
    await expect.poll(() => rows.count()).toBe(1);
    expect(await page.getByLabel('Search metadata').inputValue()).toBe('console-search');
    expect(await page.locator('input[name="range"]').inputValue()).toBe('all');

    await rows.click();
    const traceId = (await page.getByTestId('log-trace-id').textContent())!;
    await page.getByRole('link', { name: 'all its records' }).click();
    await expect.poll(() => page.getByLabel('Trace id').inputValue()).toBe(traceId);
    expect(new URL(page.url()).searchParams.get('trace_id')).toBe(traceId);
    await expect.poll(() => rows.count()).toBe(1);
    expect(errors).toEqual([]);
  });

  it('shows the logs of the latest filters, even when an earlier list answers after them', async () => {
    const config = { provider: 'openai', api_key: 'sk-test', custom_host: upstream.url };
    const call = await postChat(
      gateway,
      config,
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'race' }] },
      { 'x-gateway-metadata': JSON.stringify({ team: 'race-match' }) },
    );
    expect(call.status).toBe(200);
    const found = async () =>
      ((await (await api('/logs?search=race-match')).json()) as { data: unknown[] }).data.length;
    await expect.poll(found).toBe(1);

    // The unfiltered list (the page's first) answers a second and a half late: after the search.
    const unfiltered = (url: URL) => url.pathname === '/v1/logs' && !url.searchParams.has('search');
    await page.route(unfiltered, async (route) => {
      await new Promise((resolve) => setTimeout(resolve, 1500));
      await route.continue();
    });
    const late = page.waitForResponse((response) => unfiltered(new URL(response.url())));
    await go('/logs');
    await heading('Logs');
    await page.getByLabel('Search metadata').fill('race-match');
    await page.getByRole('button', { name: 'Apply' }).click();
    await late;
    await page.waitForLoadState('networkidle');
    await page.unroute(unfiltered);
    const rows = page.locator('[data-log-id]');
    expect(await rows.count()).toBe(1);
    expect(await rows.textContent()).toContain('team=race-match');
  });

  it("shows a request's attempts however many records share its trace id", async () => {
    const target = { provider: 'openai', api_key: 'sk-test', custom_host: upstream.url };
    const trace = { 'x-gateway-trace-id': `busy-${Date.now()}` };
    const chat = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'busy trace' }] };
    const fellBack = await postChat(
      gateway,
      {
        strategy: { mode: 'fallback' },
        targets: [{ ...target, override_params: { model: 'fake-status-500' } }, target],
      },
      chat,
      { ...trace, 'x-gateway-metadata': JSON.stringify({ busy: 'fell-back' }) },
    );
    expect(fellBack.status).toBe(200);
    for (let batch = 0; batch < 10; batch++) {
      const calls = Array.from({ length: 10 }, () => postChat(gateway, target, chat, trace));
      for (const call of await Promise.all(calls)) expect(call.status).toBe(200);
    }
    const traced = async () =>
      (
        (await (await api(`/logs?trace_id=${trace['x-gateway-trace-id']}&limit=1000`)).json()) as {
          data: unknown[];
        }
      ).data.length;
    await expect.poll(traced).toBe(103);
    const request = (
      (await (await api('/logs?metadata.busy=fell-back')).json()) as {
        data: { id: string; is_attempt: boolean }[];
      }
    ).data.find((record) => !record.is_attempt)!;

    await go(`/logs/${request.id}`);
    const attempts = page.getByTestId('attempts-table').locator('tr', { hasText: 'attempt' });
    await expect.poll(() => attempts.count()).toBe(2);
    expect(await attempts.first().textContent()).toContain('fake-status-500');

    // From an attempt: its request and the other attempt.
    await attempts.first().getByRole('link').click();
    await page.getByTestId('log-status').getByText('500').waitFor();
    const table = page.getByTestId('attempts-table');
    await expect.poll(() => table.locator('tr', { hasText: request.id }).count()).toBe(1);
    expect(await table.locator('tr', { hasText: 'attempt' }).count()).toBe(1);
    expect(errors).toEqual([]);
  });

  it('draws the analytics over every bucket of the range, empty ones included', async () => {
    await go('/analytics');
    await heading('Analytics');
    const ticks = page
      .locator('.mantine-Card-root', { hasText: 'Requests and errors' })
      .locator('.recharts-xAxis-tick-labels .recharts-cartesian-axis-tick-value');
    for (const range of ['1h', '24h', '7d']) {
      await page.getByText(range, { exact: true }).click();
      await page.waitForLoadState('networkidle');
      // Requests made in this test file fall in one minute; the axis still spans the hour (or the week).
      await expect.poll(() => ticks.count()).toBeGreaterThan(3);
      const labels = await ticks.allTextContents();
      expect(new Set(labels).size, labels.join(' | ')).toBe(labels.length);
    }
    expect(errors).toEqual([]);
  });

  it('creates a key, shows its secret once, and revokes it', async () => {
    await go('/api-keys');
    await heading('API keys');
    await page.getByLabel('Name').fill('console-made');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = (await page.getByTestId('new-key-secret').textContent())!.trim();
    expect(secret.length).toBeGreaterThan(20);
    const using = (key: string) =>
      fetch(`${gateway.url}/logs?limit=1`, { headers: { 'x-gateway-api-key': key } });
    expect((await using(secret)).status).toBe(200);
    await page.getByRole('button', { name: 'Done' }).click();

    const row = page.locator('tr[data-key-name="console-made"]');
    expect(await row.getByTestId('key-status').textContent()).toBe('active');
    expect(await page.content()).not.toContain(secret);
    await row.getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click();
    await row.getByText('revoked').waitFor();
    expect((await using(secret)).status).toBe(401);
    expect(errors).toEqual([]);
  });

  it('copies a new key where the page has no Clipboard API (plain http under a name)', async () => {
    const other = await launchChromium(['--host-resolver-rules=MAP gateway.internal 127.0.0.1']);
    try {
      const context = await other.newContext();
      await context.grantPermissions(['clipboard-read'], { origin: gateway.origin });
      const insecure = await context.newPage();
      insecure.setDefaultTimeout(STEP_TIMEOUT_MS);
      await insecure.goto(`http://gateway.internal:${new URL(gateway.origin).port}/console/api-keys`);
      expect(await insecure.evaluate('isSecureContext')).toBe(false);
      await insecure.getByLabel('Gateway API key').fill(gateway.adminKey);
      await insecure.getByRole('button', { name: 'Sign in' }).click();
      await insecure.getByLabel('Name').fill('copied-over-http');
      await insecure.getByRole('button', { name: 'Create key' }).click();
      const secret = (await insecure.getByTestId('new-key-secret').textContent())!.trim();
      await insecure.getByRole('button', { name: 'Copy' }).click();
      await insecure.getByRole('button', { name: 'Copied' }).waitFor();

      // Read back where the Clipboard API is: the gateway's own loopback origin.
      const reader = await context.newPage();
      await reader.goto(`${gateway.origin}/console/`);
      expect(await reader.evaluate('navigator.clipboard.readText()')).toBe(secret);
    } finally {
      await other.close();
    }
  });

  it('refuses an invalid config in the editor and saves a valid one', async () => {
    await go('/configs');
    await heading('Configs');

    async function submit(body: unknown) {
      const editor = page.locator('.cm-content');
      await editor.click();
      await page.keyboard.press('Control+A');
      await page.keyboard.press('Delete');
      await page.keyboard.insertText(JSON.stringify(body, null, 2));
      await page.getByRole('dialog').getByRole('button', { name: 'Save' }).click();
    }

    await page.getByRole('button', { name: 'New config' }).click();
    await submit({ slug: 'bad-config', config: { retry: { attempts: 'three' }, targets: [{ bogus: 1 }] } });
    const problems = page.getByTestId('editor-problems');
    await problems.waitFor();
    expect(await problems.textContent()).toContain('config.retry.attempts');
    expect(await problems.textContent()).toContain('config.targets[0]');
    expect(
      ((await (await api('/configs/bad-config')).json()) as { error: { code: string } }).error.code,
    ).toBe('not_found');

    await submit({
      slug: 'good-config',
      name: 'Good',
      config: { retry: { attempts: 2 }, provider: 'openai' },
    });
    await page.locator('tr[data-row-id="good-config"]').waitFor();
    const stored = (await (await api('/configs/good-config')).json()) as { config: unknown };
    expect(stored.config).toEqual({ retry: { attempts: 2 }, provider: 'openai' });
    expect(errors).toEqual([]);
  });

  it('creates, changes and deletes a guardrail through the JSON editor', async () => {
    await go('/guardrails');
    await heading('Guardrails');
    const editor = page.locator('.cm-content');
    const replace = async (body: unknown) => {
      await editor.click();
      await page.keyboard.press('Control+A');
      await page.keyboard.press('Delete');
      await page.keyboard.insertText(JSON.stringify(body));
      await page.getByRole('dialog').getByRole('button', { name: 'Save' }).click();
    };
    await page.getByRole('button', { name: 'New guardrail' }).click();
    await replace({
      slug: 'ui-words',
      guardrail: { 'default.contains': { operator: 'none', words: ['x'] } },
    });
    const row = page.locator('tr[data-row-id="ui-words"]');
    await row.waitFor();

    // The gateway's own refusal (an unknown check) is shown in the editor, naming the field.
    await row.getByRole('button', { name: 'Edit' }).click();
    await replace({ guardrail: { 'default.nope': {} } });
    expect(await page.getByTestId('editor-problems').textContent()).toContain('guardrail.default.nope');
    await replace({
      name: 'UI words',
      guardrail: { 'default.contains': { operator: 'none', words: ['y'] } },
    });
    await row.getByText('UI words').waitFor();
    const stored = (await (await api('/guardrails/ui-words')).json()) as { version: number; name: string };
    expect(stored).toMatchObject({ version: 2, name: 'UI words' });

    // Both versions, the latest first, each as it was saved.
    await row.getByRole('button', { name: 'Versions' }).click();
    const versions = page.getByTestId('versions').locator('[data-version]');
    await versions.first().waitFor();
    expect(
      await versions.evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-version'))),
    ).toEqual(['2', '1']);
    expect(await versions.nth(0).locator('pre').textContent()).toContain('"y"');
    expect(await versions.nth(1).locator('pre').textContent()).toContain('"x"');
    await page.keyboard.press('Escape');
    await page.getByTestId('versions').waitFor({ state: 'detached' });

    await row.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await row.waitFor({ state: 'detached' });
    expect((await api('/guardrails/ui-words')).status).toBe(404);
  });

  it('changes a prompt through the JSON editor and publishes the new version', async () => {
    const created = await api('/prompts', {
      method: 'POST',
      body: JSON.stringify({
        slug: 'ui-prompt',
        string: '[{"role":"user","content":"One {{x}}"}]',
        parameters: { model: 'gpt-4o-mini' },
      }),
    });
    expect(created.status).toBe(200);
    await go('/prompts');
    await heading('Prompts');
    const row = page.locator('tr[data-row-id="ui-prompt"]');
    await row.getByRole('button', { name: 'Edit' }).click();
    await page.locator('.cm-content').click();
    await page.keyboard.press('Control+A');
    await page.keyboard.press('Delete');
    await page.keyboard.insertText(
      JSON.stringify({
        string: '[{"role":"user","content":"Two {{x}}"}]',
        parameters: { model: 'gpt-4o-mini' },
      }),
    );
    await page.getByRole('dialog').getByRole('button', { name: 'Save' }).click();

    await row.getByRole('button', { name: 'Publish v2' }).click();
    await row.getByRole('button', { name: 'Publish v2' }).waitFor({ state: 'detached' });
    const stored = (await (await api('/prompts/ui-prompt')).json()) as { published_version: number };
    expect(stored.published_version).toBe(2);
    expect(errors).toEqual([]);
  });

  it('lists every rate-limit policy, past the first page and archived ones too', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 101; i++) {
      const created = await api('/policies/rate-limits', {
        method: 'POST',
        body: JSON.stringify({
          name: `paged-${i}`,
          conditions: [{ key: 'metadata.team', value: `team-${i}` }],
          group_by: [{ key: 'api_key' }],
          type: 'requests',
          unit: 'rpm',
          value: 100,
        }),
      });
      ids.push(((await created.json()) as { id: string }).id);
    }
    const archive = await api(`/policies/rate-limits/${ids[0]}`, {
      method: 'PUT',
      body: JSON.stringify({ status: 'archived' }),
    });
    expect(archive.status).toBe(200);

    await go('/rate-limits');
    await heading('Rate limits');
    const row = (id: string) => page.locator(`tr[data-row-id="${id}"]`);
    await expect.poll(() => page.getByTestId('row-count').textContent()).toBe('101 in all');
    // The archived one comes after the active ones: the last row.
    await expect
      .poll(async () => {
        await page.evaluate('window.scrollTo(0, document.documentElement.scrollHeight)');
        return row(ids[0]).isVisible();
      })
      .toBe(true);
    expect(await row(ids[0]).textContent()).toContain('archived');
    // Policies made in the same second are listed in no set order: the one made last is found by name.
    await page.getByLabel('Filter').fill('paged-100');
    await row(ids[100]).waitFor();
    expect(errors).toEqual([]);
  });

  it("shows a new workspace's key that workspace only, and analytics saying there is nothing yet", async () => {
    const created = await api('/workspaces', {
      method: 'POST',
      body: JSON.stringify({ name: 'Empty', slug: 'empty' }),
    });
    const { admin_key } = (await created.json()) as { admin_key: { key: string } };
    await go('/logs');
    await signInWith(admin_key.key);
    await page.getByText('No log records match.').waitFor();
    await go('/analytics');
    await heading('Analytics');
    for (const top of ['top-models', 'top-keys']) {
      await expect.poll(() => page.getByTestId(top).textContent()).toBe('No requests in this range.');
    }
    expect(await page.getByTestId('analytics-totals').textContent()).toContain('Requests0');
    expect(errors).toEqual([]);
  });

  it('shows a member key its logs and analytics, and no management page, asking the gateway nothing it refuses', async () => {
    const created = await api('/api-keys', {
      method: 'POST',
      body: JSON.stringify({ name: 'reader', role: 'member' }),
    });
    const { key, key_prefix } = (await created.json()) as { key: string; key_prefix: string };
    await go('/guardrails');
    await signInWith(key);
    // Signed in where it was: the guardrails page, which a member may not read.
    await heading('Guardrails');
    await page.getByRole('alert').getByText('Admin key needed').waitFor();
    // Who is signed in, by name and the key's listed prefix: never more of the key's value.
    const signedInAs = await page.getByTestId('signed-in-as').textContent();
    expect(signedInAs).toContain('reader (member)');
    expect(signedInAs).toContain(`${key_prefix}…`);
    expect(signedInAs).not.toContain(key.slice(0, key_prefix.length + 1));
    for (const hidden of ['API keys', 'Configs', 'Guardrails', 'Rate limits'])
      expect(await page.getByRole('link', { name: hidden, exact: true }).count(), hidden).toBe(0);
    await go('/logs');
    await heading('Logs');
    await page.waitForLoadState('networkidle');
    expect(await page.getByRole('alert').count()).toBe(0);
    await go('/analytics');
    await heading('Analytics');
    await page.waitForLoadState('networkidle');
    expect(await page.getByRole('alert').count()).toBe(0);
    await go('/configs');
    await page.getByRole('alert').getByText('Admin key needed').waitFor();
    // Not a 403 among them: the console knew the key's role before it asked.
    expect(errors, errors.join('\n')).toEqual([]);
  });

  it('signs out when the gateway stops taking the key, saying why', async () => {
    const created = await api('/api-keys', {
      method: 'POST',
      body: JSON.stringify({ name: 'revoked-while-signed-in', role: 'admin' }),
    });
    const { id, key } = (await created.json()) as { id: string; key: string };
    await go('/logs');
    await signInWith(key);
    await heading('Logs');

    expect((await api(`/api-keys/${id}/revoke`, { method: 'POST' })).status).toBe(200);
    await page.getByRole('link', { name: 'Configs' }).click();
    await page.getByRole('alert').getByText('Signed out').waitFor();
    await page.getByLabel('Gateway API key').waitFor();
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
  });
});
