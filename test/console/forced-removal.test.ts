/**
 * Deleting (or archiving) what others depend on, in a real Chromium against a real gateway (SQLite): the
 * gateway's refusal (409) lists the configs, prompts and guardrails it names in the dialog, nothing is
 * removed, and it is removed (`?force=true`) only when "Delete anyway" or "Archive anyway" is pressed.
 */
import type { Page } from 'playwright-core';
import { expect, it, vi } from 'vitest';
import {
  describeWithChromium,
  signedInConsoleForTests,
  STEP_TIMEOUT_MS,
  type AdminApi,
  type SignedInConsole,
} from '../helpers/chromium.js';

vi.setConfig({ testTimeout: 4 * STEP_TIMEOUT_MS });

/** An inline target: a config naming it needs nothing else stored. */
const TARGET = {
  provider: 'openai',
  api_key: 'sk-inline-0123456789',
  override_params: { model: 'gpt-4o-mini' },
};
const TEMPLATE = '[{"role":"user","content":"hi"}]';

describeWithChromium('removing what others depend on', () => {
  let console_: SignedInConsole;
  let page: Page;
  let errors: string[];
  let api: AdminApi;

  signedInConsoleForTests({ path: '/configs', heading: 'Configs' }, (started) => {
    console_ = started;
    ({ page, errors, api } = started);
  });

  async function created(path: string, body: unknown) {
    const answer = await api(path, { method: 'POST', body: JSON.stringify(body) });
    expect(answer.status, await answer.clone().text()).toBe(200);
  }

  /** Opens the console's page `name` (the key stays signed in: it is kept for the tab). */
  async function visit(page_: string, title: string) {
    await console_.open(`/${page_}`, title);
  }

  const row = (slug: string) => page.locator(`tr[data-row-id="${slug}"]`);
  const notice = () => page.getByRole('dialog').getByTestId('conflict-notice');
  const listed = () => notice().getByTestId('conflict-dependents').getByRole('listitem').allTextContents();

  /** Deletes the row `slug` through its dialog, which the gateway refuses: the dialog stays, with the refusal. */
  async function deleteRefused(slug: string) {
    await row(slug).getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete', exact: true }).click();
    await notice().waitFor();
  }

  async function deleteAnyway(slug: string) {
    await notice().getByRole('button', { name: 'Delete anyway' }).click();
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    await row(slug).waitFor({ state: 'detached' });
  }

  it('deletes a config other configs and prompts use only when "Delete anyway" is pressed', async () => {
    await created('/configs', { slug: 'shared-route', config: TARGET });
    await created('/configs', {
      slug: 'judged-route',
      config: {
        ...TARGET,
        input_guardrails: [
          { 'default.modelJudge': { instructions: 'Is it polite?', config: 'shared-route' } },
        ],
      },
    });
    await created('/prompts', { slug: 'routed-prompt', string: TEMPLATE, config: 'shared-route' });
    await visit('configs', 'Configs');

    await deleteRefused('shared-route');
    await expect
      .poll(listed)
      .toEqual([
        'config judged-route (config.input_guardrails[0].default.modelJudge.config)',
        'prompt routed-prompt (version 1)',
      ]);
    await notice()
      .getByText(/^Deleting the config "shared-route" would make calls that use it fail:/)
      .waitFor();
    // Refused, it is still there; the dialog offers deleting anyway or not, not the same request again.
    expect((await api('/configs/shared-route')).status).toBe(200);
    expect(await page.getByRole('dialog').getByRole('button', { name: 'Delete', exact: true }).count()).toBe(
      0,
    );

    // Cancelled, nothing is deleted; asked again, the gateway refuses again.
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    expect((await api('/configs/shared-route')).status).toBe(200);
    await deleteRefused('shared-route');

    await deleteAnyway('shared-route');
    expect((await api('/configs/shared-route')).status).toBe(404);
    await row('judged-route').waitFor();
    // The browser logs each refused DELETE, and nothing else.
    expect(errors).toHaveLength(2);
    for (const error of errors) expect(error).toContain('409');
  });

  it('archives a config a prompt sends its calls to only when "Archive anyway" is pressed', async () => {
    await created('/configs', { slug: 'archived-route', config: TARGET });
    await created('/prompts', { slug: 'archive-prompt', string: TEMPLATE, config: 'archived-route' });
    await visit('configs', 'Configs');

    await row('archived-route').getByRole('button', { name: 'Edit' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    await page.locator('.cm-content').click();
    await page.keyboard.press('Control+A');
    await page.keyboard.press('Delete');
    await page.keyboard.insertText(JSON.stringify({ status: 'archived' }));
    await dialog.getByRole('button', { name: 'Save' }).click();

    await notice().waitFor();
    await expect.poll(listed).toEqual(['prompt archive-prompt (version 1)']);
    await notice()
      .getByText(/^Archiving the config "archived-route"/)
      .waitFor();
    expect(await notice().getByRole('button', { name: 'Change anyway' }).count()).toBe(0);
    expect(await (await api('/configs/archived-route')).json()).toMatchObject({ status: 'active' });

    await notice().getByRole('button', { name: 'Archive anyway' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect(await (await api('/configs/archived-route')).json()).toMatchObject({ status: 'archived' });
    await row('archived-route').getByText('archived', { exact: true }).waitFor();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain('409');
  });

  it('deletes a virtual key a config names only when "Delete anyway" is pressed', async () => {
    await created('/virtual-keys', {
      slug: 'doomed-key',
      provider: 'openai',
      api_key: 'sk-doomed-0123456789',
    });
    await created('/configs', {
      slug: 'doomed-route',
      config: { strategy: { mode: 'fallback' }, targets: [TARGET, { virtual_key: 'doomed-key' }] },
    });
    await visit('virtual-keys', 'Virtual keys');

    await deleteRefused('doomed-key');
    await expect.poll(listed).toEqual(['config doomed-route (config.targets[1].virtual_key)']);
    expect((await api('/virtual-keys/doomed-key')).status).toBe(200);

    await deleteAnyway('doomed-key');
    expect((await api('/virtual-keys/doomed-key')).status).toBe(404);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain('409');
  });

  it('deletes a guardrail a config lists, and a prompt a config targets, only when "Delete anyway" is pressed', async () => {
    await created('/guardrails', {
      slug: 'listed-guard',
      guardrail: { 'default.regexMatch': { rule: 'secret', not: true }, deny: true },
    });
    await created('/prompts', { slug: 'targeted-prompt', string: TEMPLATE });
    await created('/configs', {
      slug: 'guarded-route',
      config: {
        strategy: { mode: 'fallback' },
        targets: [
          { ...TARGET, input_guardrails: ['listed-guard'] },
          { ...TARGET, prompt_id: 'targeted-prompt' },
        ],
      },
    });

    await visit('guardrails', 'Guardrails');
    await deleteRefused('listed-guard');
    await expect.poll(listed).toEqual(['config guarded-route (config.targets[0].input_guardrails[0])']);
    expect((await api('/guardrails/listed-guard')).status).toBe(200);
    await deleteAnyway('listed-guard');
    expect((await api('/guardrails/listed-guard')).status).toBe(404);

    // The gateway names only configs here, saying so before the list rather than in it.
    await visit('prompts', 'Prompts');
    await deleteRefused('targeted-prompt');
    await expect.poll(listed).toEqual(['config guarded-route (config.targets[1].prompt_id)']);
    expect((await api('/prompts/targeted-prompt')).status).toBe(200);
    await deleteAnyway('targeted-prompt');
    expect((await api('/prompts/targeted-prompt')).status).toBe(404);
    expect(errors).toHaveLength(2);
    for (const error of errors) expect(error).toContain('409');
  });
});
