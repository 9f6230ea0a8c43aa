/**
 * The virtual-key editor in a real Chromium against a real gateway (SQLite): the Vertex AI request types
 * are set and cleared with fields of their own, offering the choices the gateway's schema accepts, and
 * stored as the API stores them; another provider refused (409) for what names the key shows what does,
 * and is made anyway (`?force=true`) only when asked.
 */
import type { Page } from 'playwright-core';
import { expect, it, vi } from 'vitest';
import {
  describeWithChromium,
  signedInConsoleForTests,
  STEP_TIMEOUT_MS,
  type AdminApi,
} from '../helpers/chromium.js';

vi.setConfig({ testTimeout: 4 * STEP_TIMEOUT_MS });

const REQUEST_TYPE = 'Vertex AI request type (cloudb_request_type)';
const SHARED_REQUEST_TYPE = 'Vertex AI shared request type (cloudb_shared_request_type)';

interface CredentialView {
  provider: string;
  settings: Record<string, unknown>;
  secret_keys: string[];
}

describeWithChromium('virtual-key editor', () => {
  let page: Page;
  let errors: string[];
  let api: AdminApi;

  signedInConsoleForTests({ path: '/virtual-keys', heading: 'Virtual keys' }, (started) => {
    ({ page, errors, api } = started);
  });

  async function stored(slug: string): Promise<CredentialView> {
    const answer = await api(`/virtual-keys/${slug}`);
    expect(answer.status).toBe(200);
    return (await answer.json()) as CredentialView;
  }

  async function reload() {
    await page.reload();
    await page.getByRole('heading', { name: 'Virtual keys', exact: true }).waitFor();
  }

  /** Opens the editor of the row `slug`. */
  async function edit(slug: string) {
    await page.locator(`tr[data-row-id="${slug}"]`).getByRole('button', { name: 'Edit' }).click();
    await page.getByRole('dialog').waitFor();
  }

  async function save() {
    await page.getByRole('dialog').getByRole('button', { name: 'Save' }).click();
    await page.getByRole('dialog').waitFor({ state: 'detached' });
  }

  const field = (label: string) => page.getByRole('dialog').getByLabel(label, { exact: true });

  it('offers the request types the gateway accepts, and sets and clears them on a stored key', async () => {
    const created = await api('/virtual-keys', {
      method: 'POST',
      body: JSON.stringify({
        slug: 'vertex-global',
        provider: 'vertex-ai',
        cloudb_project_id: 'acme',
        cloudb_region: 'global',
        api_key: 'ya29.a-long-enough-token',
      }),
    });
    expect(created.status).toBe(200);
    await reload();

    await edit('vertex-global');
    // The choices are the gateway's own (its published schema), and "not set".
    const options = (label: string) =>
      field(label)
        .locator('option')
        .evaluateAll((nodes) => nodes.map((node) => node.getAttribute('value')));
    await expect.poll(() => options(REQUEST_TYPE)).toEqual(['', 'dedicated', 'shared']);
    await expect.poll(() => options(SHARED_REQUEST_TYPE)).toEqual(['', 'priority', 'flex']);
    expect(await field(REQUEST_TYPE).inputValue()).toBe('');
    expect(await field(SHARED_REQUEST_TYPE).inputValue()).toBe('');

    await field(REQUEST_TYPE).selectOption('shared');
    await field(SHARED_REQUEST_TYPE).selectOption('flex');
    // The body to be sent says so.
    expect(await page.locator('.cm-content').textContent()).toContain('"cloudb_shared_request_type": "flex"');
    await save();
    let view = await stored('vertex-global');
    expect(view.settings).toMatchObject({
      cloudb_request_type: 'shared',
      cloudb_shared_request_type: 'flex',
    });
    // The secret was left out of the change, so it was kept.
    expect(view.secret_keys).toEqual(['api_key']);

    // Shown again, from what the gateway lists, after a reload.
    await reload();
    await edit('vertex-global');
    expect(await field(REQUEST_TYPE).inputValue()).toBe('shared');
    expect(await field(SHARED_REQUEST_TYPE).inputValue()).toBe('flex');

    // Cleared: sent as null, so the gateway removes them.
    await field(REQUEST_TYPE).selectOption('');
    await field(SHARED_REQUEST_TYPE).selectOption('');
    await save();
    view = await stored('vertex-global');
    expect(view.settings).not.toHaveProperty('cloudb_request_type');
    expect(view.settings).not.toHaveProperty('cloudb_shared_request_type');
    expect(view.settings).toMatchObject({ cloudb_project_id: 'acme', cloudb_region: 'global' });

    await reload();
    await edit('vertex-global');
    expect(await field(REQUEST_TYPE).inputValue()).toBe('');
    expect(await field(SHARED_REQUEST_TYPE).inputValue()).toBe('');
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    expect(errors).toEqual([]);
  });

  it('sets a request type on a new key, leaving out the one not set', async () => {
    await page.getByRole('button', { name: 'New virtual key' }).click();
    await page.locator('.cm-content').click();
    await page.keyboard.press('Control+A');
    await page.keyboard.press('Delete');
    await page.keyboard.insertText(
      JSON.stringify({
        slug: 'vertex-new',
        provider: 'vertex-ai',
        cloudb_project_id: 'acme',
        cloudb_region: 'global',
        api_key: 'ya29.another-long-token',
      }),
    );
    await field(SHARED_REQUEST_TYPE).selectOption('priority');
    await save();
    await page.locator('tr[data-row-id="vertex-new"]').waitFor();
    const view = await stored('vertex-new');
    expect(view.settings).toMatchObject({ cloudb_shared_request_type: 'priority' });
    expect(view.settings).not.toHaveProperty('cloudb_request_type');

    await edit('vertex-new');
    expect(await field(SHARED_REQUEST_TYPE).inputValue()).toBe('priority');
    expect(await field(REQUEST_TYPE).inputValue()).toBe('');
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    expect(errors).toEqual([]);
  });

  it('shows what names a key given another provider, and changes it anyway only when asked', async () => {
    const key = await api('/virtual-keys', {
      method: 'POST',
      body: JSON.stringify({ slug: 'moving-key', provider: 'openai', api_key: 'sk-openai-0123456789' }),
    });
    expect(key.status).toBe(200);
    const config = await api('/configs', {
      method: 'POST',
      body: JSON.stringify({
        slug: 'uses-moving-key',
        config: {
          strategy: { mode: 'fallback' },
          targets: [{ virtual_key: 'moving-key', override_params: { model: 'gpt-4o-mini' } }],
        },
      }),
    });
    expect(config.status).toBe(200);
    await reload();

    await edit('moving-key');
    await page.locator('.cm-content').click();
    await page.keyboard.press('Control+A');
    await page.keyboard.press('Delete');
    // Another provider: the stored secret is sent again, as the gateway requires.
    await page.keyboard.insertText(
      JSON.stringify({ name: 'moving-key', provider: 'anthropic', api_key: 'sk-ant-0123456789' }),
    );
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('button', { name: 'Save' }).click();

    // Refused, naming the config and where in it the key is named; nothing was changed.
    const conflict = page.getByTestId('conflict-notice');
    await conflict.waitFor();
    const dependents = conflict.getByTestId('conflict-dependents').getByRole('listitem');
    await expect
      .poll(() => dependents.allTextContents())
      .toEqual(['config uses-moving-key (config.targets[0].virtual_key)']);
    expect((await stored('moving-key')).provider).toBe('openai');

    // A change to the body after the refusal is not what was refused: the offer goes until it is saved again.
    await page.locator('.cm-content').click();
    await page.keyboard.press('Control+End');
    await page.keyboard.insertText(' ');
    await conflict.waitFor({ state: 'detached' });
    await dialog.getByRole('button', { name: 'Save' }).click();
    await conflict.waitFor();
    expect((await stored('moving-key')).provider).toBe('openai');

    await conflict.getByRole('button', { name: 'Change anyway' }).click();
    await dialog.waitFor({ state: 'detached' });
    const view = await stored('moving-key');
    expect(view.provider).toBe('anthropic');
    expect(view.secret_keys).toEqual(['api_key']);
    await page.locator('tr[data-row-id="moving-key"]').getByText('anthropic').waitFor();
    // The config still names the key: its calls now go to the new provider.
    expect((await api('/configs/uses-moving-key')).status).toBe(200);
    // The browser logs each refused PATCH, and nothing else.
    expect(errors).toHaveLength(2);
    for (const error of errors) expect(error).toContain('409');
  });
});
