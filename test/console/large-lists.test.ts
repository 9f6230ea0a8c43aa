/**
 * The console with tens of thousands of rows, in a real Chromium against a real gateway (SQLite): the
 * management tables put only the rows on screen in the page, yet scrolling, the keyboard and the filter
 * reach every row; the rate-limit policies show their first page before the last is answered; the
 * analytics name the top keys without listing every key.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import {
  describeWithChromium,
  signedInConsoleForTests,
  STEP_TIMEOUT_MS,
  type SignedInConsole,
} from '../helpers/chromium.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import type { TestGateway } from '../helpers/gateway.js';

vi.setConfig({ testTimeout: 4 * STEP_TIMEOUT_MS });

const VIRTUAL_KEYS = 20_000;
const API_KEYS = 3_000;
const POLICIES = 2_500;
/** Far fewer rows than exist: what a tall screen shows and a margin either side. */
const MOST_ROWS_IN_PAGE = 100;

const slug = (i: number) => `vk-${String(i).padStart(5, '0')}`;
const row = (id: string) => `tr[data-row-id="${id}"]`;
/** The API's order (oldest first, then by id): rows made in the same millisecond are in no set order. */
let listed: string[];
let listedKeys: string[];
/** The values of bulk-key-0 and bulk-key-1, which make calls. */
const calling: string[] = [];

describeWithChromium('web console with large lists', () => {
  let console_: SignedInConsole;
  let gateway: TestGateway;
  let upstream: FakeUpstream;
  let page: Page;
  let errors: string[];

  beforeAll(async () => {
    upstream = await startFakeOpenAI({ name: 'large-lists' });
  });
  afterAll(async () => {
    await upstream?.close();
  });

  signedInConsoleForTests(
    {
      path: '/virtual-keys',
      heading: 'Virtual keys',
      prepare: async (gateway) => {
        // Straight into the store: through the API this many would take minutes.
        const { store } = gateway.server.deps;
        const { id: workspace_id, organisation_id } = gateway.server.bootstrap.workspace;
        for (let i = 0; i < VIRTUAL_KEYS; i++) {
          await store.createCredential({
            organisation_id,
            workspace_id,
            kind: 'virtual_key',
            slug: slug(i),
            name: `Key number ${i}`,
            provider: 'openai',
            secret: { api_key: 'sk-test' },
          });
        }
        for (let i = 0; i < API_KEYS; i++) {
          const made = await store.createApiKey({
            organisation_id,
            workspace_id,
            name: `bulk-key-${i}`,
            role: 'member',
          });
          if (i < 2) calling.push(made.value);
        }
        for (let i = 0; i < POLICIES; i++) {
          await store.createRateLimitPolicy({
            organisation_id,
            workspace_id,
            name: `bulk-policy-${i}`,
            type: 'requests',
            unit: 'rpm',
            value: 100,
            conditions: [{ key: 'metadata.team', value: `team-${i}` }],
            group_by: [{ key: 'api_key' }],
          });
        }
        const list = async (path: string) =>
          (
            (await (
              await fetch(`${gateway.url}${path}`, { headers: { 'x-gateway-api-key': gateway.adminKey } })
            ).json()) as {
              data: { slug?: string; name?: string }[];
            }
          ).data;
        listed = (await list('/virtual-keys')).map((row) => row.slug!);
        listedKeys = (await list('/api-keys')).map((row) => row.name!);
      },
    },
    async (started) => {
      console_ = started;
      ({ gateway, page, errors } = started);
      // The first test loads the page again: this load, cut short, would count as a failed request.
      await page.waitForLoadState('networkidle');
    },
  );

  async function go(path: string, title: string) {
    await console_.open(path, title);
  }

  const rowsInPage = () => page.locator('tr[data-row-id]').count();

  /** Scrolls to the bottom until `row` is on screen: rows measured on the way change the page's height. */
  async function scrollToEndUntil(wanted: ReturnType<Page['locator']>) {
    await expect
      .poll(
        async () => {
          await page.evaluate('window.scrollTo(0, document.documentElement.scrollHeight)');
          return wanted.isVisible();
        },
        { timeout: STEP_TIMEOUT_MS, interval: 100 },
      )
      .toBe(true);
    const box = (await wanted.boundingBox())!;
    expect(box.y + box.height).toBeLessThanOrEqual(900);
    expect(box.y).toBeGreaterThanOrEqual(0);
  }

  it('shows the first of 20,000 virtual keys at once, keeps few rows in the page, and scrolls to the last', async () => {
    await go('/virtual-keys', 'Virtual keys');
    const first = page.locator(row(listed[0]));
    await first.waitFor();
    expect(await first.textContent()).toContain(`Key number ${Number(listed[0].slice(3))}`);
    await expect.poll(() => page.getByTestId('row-count').textContent()).toBe('20,000 in all');
    expect(await rowsInPage()).toBeLessThan(MOST_ROWS_IN_PAGE);

    const last = page.locator(row(listed.at(-1)!));
    await scrollToEndUntil(last);
    expect(await last.textContent()).toContain(`Key number ${Number(listed.at(-1)!.slice(3))}`);
    expect(await rowsInPage()).toBeLessThan(MOST_ROWS_IN_PAGE);
    expect(await first.count()).toBe(0);
    // The table's stripes stay on every other row wherever the scroll stopped.
    const stripes = (await page.evaluate(
      "[...document.querySelectorAll('tr[data-row-id]')].map((row) => getComputedStyle(row).backgroundColor)",
    )) as string[];
    for (let i = 1; i < stripes.length; i++) expect(stripes[i]).not.toBe(stripes[i - 1]);
    expect(errors, errors.join('\n')).toEqual([]);
  });

  it('moves with Tab through the buttons of rows that were not in the page', async () => {
    await go('/virtual-keys', 'Virtual keys');
    await page.locator(row(listed[0])).getByRole('button', { name: 'Edit' }).focus();
    expect(await page.locator(row(listed[60])).count()).toBe(0);
    // Each row has two buttons, Edit and Delete.
    // At a person's pace: a frame between presses, in which the page takes in the scroll.
    for (let i = 0; i < 120; i++) {
      await page.keyboard.press('Tab');
      await page.evaluate('new Promise(requestAnimationFrame)');
    }
    const focused = await page.evaluate(
      "document.activeElement.closest('tr')?.getAttribute('data-row-id') + ' ' + document.activeElement.textContent",
    );
    expect(focused).toBe(`${listed[60]} Edit`);
    const box = (await page.locator(row(listed[60])).boundingBox())!;
    expect(box.y).toBeGreaterThanOrEqual(0);
    expect(box.y + box.height).toBeLessThanOrEqual(900);
    expect(errors, errors.join('\n')).toEqual([]);
  });

  it('filters every row, not only those in the page, and edits the one found', async () => {
    await go('/virtual-keys', 'Virtual keys');
    await page.locator(row(listed[0])).waitFor();
    await page.getByLabel('Filter').fill('KEY NUMBER 18765');
    const found = page.locator(row(slug(18765)));
    await found.waitFor();
    await expect.poll(rowsInPage).toBe(1);
    expect(await page.getByTestId('row-count').textContent()).toBe('1 of 20,000');
    await found.getByRole('button', { name: 'Edit' }).click();
    await page.getByRole('dialog', { name: `Edit virtual key ${slug(18765)}` }).waitFor();
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'detached' });

    await page.getByLabel('Filter').fill('no such key');
    await page.getByText('None match.').waitFor();
    expect(await rowsInPage()).toBe(0);
    expect(errors, errors.join('\n')).toEqual([]);
  });

  it('keeps few of 3,000 API keys in the page and reaches the last', async () => {
    await go('/api-keys', 'API keys');
    const rows = page.locator('tr[data-key-name]');
    await page.locator(`tr[data-key-name="${listedKeys[0]}"]`).waitFor();
    await expect.poll(() => page.getByTestId('row-count').textContent()).toBe('3,001 in all');
    expect(await rows.count()).toBeLessThan(MOST_ROWS_IN_PAGE);
    await scrollToEndUntil(page.locator(`tr[data-key-name="${listedKeys.at(-1)!}"]`));
    expect(await rows.count()).toBeLessThan(MOST_ROWS_IN_PAGE);
    expect(errors, errors.join('\n')).toEqual([]);
  });

  it('shows the first page of rate-limit policies before the last is answered, then every one', async () => {
    const list = (await (
      await fetch(`${gateway.url}/policies/rate-limits?page_size=1000&current_page=2`, {
        headers: { 'x-gateway-api-key': gateway.adminKey },
      })
    ).json()) as { data: { id: string }[] };
    const lastId = list.data.at(-1)!.id;

    // The third page waits until the first rows have been seen.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const thirdPage = (url: URL) =>
      url.pathname === '/v1/policies/rate-limits' && url.searchParams.get('current_page') === '2';
    await page.route(thirdPage, async (route) => {
      await released;
      await route.continue();
    });
    try {
      await go('/rate-limits', 'Rate limits');
      await page.locator('tr[data-row-id]').first().waitFor();
      await expect.poll(() => page.getByTestId('row-count').textContent()).toBe('2,000 so far');
    } finally {
      release();
    }
    await expect.poll(() => page.getByTestId('row-count').textContent()).toBe('2,500 in all');
    await page.unroute(thirdPage);
    expect(await rowsInPage()).toBeLessThan(MOST_ROWS_IN_PAGE);
    await scrollToEndUntil(page.locator(row(lastId)));
    expect(errors, errors.join('\n')).toEqual([]);
  });

  it('names the top API keys without listing the thousands of keys of the workspace', async () => {
    const config = JSON.stringify({ provider: 'openai', api_key: 'sk-test', custom_host: upstream.url });
    for (const [index, key] of calling.entries()) {
      for (let i = 0; i <= index; i++) {
        const call = await fetch(`${gateway.url}/chat/completions`, {
          method: 'POST',
          headers: {
            'x-gateway-api-key': key,
            'x-gateway-config': config,
            'content-type': 'application/json',
          },
          body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
        });
        expect(call.status).toBe(200);
      }
    }
    const asked: string[] = [];
    page.on('request', (request) => asked.push(new URL(request.url()).pathname));
    const topKeys = page.getByTestId('top-keys');
    // The log is written in batches: load the page until both calls' keys are there.
    await expect
      .poll(
        async () => {
          await go('/analytics', 'Analytics');
          await page.waitForLoadState('networkidle');
          return topKeys.locator('tbody tr').allTextContents();
        },
        { timeout: STEP_TIMEOUT_MS, interval: 250 },
      )
      .toEqual([expect.stringMatching(/^bulk-key-12/), expect.stringMatching(/^bulk-key-01/)]);
    expect(asked).not.toContain('/v1/api-keys');
    expect(errors, errors.join('\n')).toEqual([]);
  });
});
