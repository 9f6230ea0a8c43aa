/**
 * A 409 `conflict` that refuses a change for what depends on it (`error.dependents`), as the CLI shows it:
 * the message, then each dependent on a line of its own, then how to force it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliAgainst } from './run-cli.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { call } from '../management/http.js';
import { chatTemplate } from '../prompts/support.js';

let gateway: TestGateway;

beforeAll(async () => {
  gateway = await startGateway();
});
afterAll(async () => {
  await gateway?.close();
});

const cli = (args: string[]) => runCliAgainst(gateway, args);
const api = (method: string, path: string, body?: unknown) =>
  call(gateway.url, gateway.adminKey, method, path, body);

async function ok(args: string[]): Promise<void> {
  const run = await cli(args);
  expect(run.code, run.stderr).toBe(0);
}

describe('a change refused for its dependents', () => {
  it('lists the configs, prompts and guardrails naming a virtual key, and --force deletes it', async () => {
    await ok(['virtual-keys', 'create', '--slug', 'dep-vk', '--provider', 'openai', '--api-key', 'sk-dep']);
    await ok(['configs', 'create', '--slug', 'dep-config', '--config', '{"virtual_key":"dep-vk"}']);
    await ok([
      'prompts',
      'create',
      '--slug',
      'dep-prompt',
      '--string',
      chatTemplate('x', '{{q}}'),
      '--config',
      '{"virtual_key":"dep-vk"}',
    ]);
    await ok([
      'guardrails',
      'create',
      '--slug',
      'dep-judge',
      '--guardrail',
      JSON.stringify({ 'default.modelJudge': { virtual_key: 'dep-vk', instructions: 'Be kind.' } }),
    ]);

    const refused = await cli(['virtual-keys', 'delete', 'dep-vk']);
    expect(refused.code).toBe(1);
    const lines = refused.stderr.split('\n');
    expect(lines[0]).toMatch(
      /^error: Deleting the virtual key "dep-vk" .*\(HTTP 409, conflict, param slug\)$/,
    );
    expect(lines).toContainEqual(expect.stringMatching(/^ {2}config +dep-config +config\.virtual_key$/));
    expect(lines).toContainEqual(expect.stringMatching(/^ {2}prompt +dep-prompt +version 1$/));
    expect(lines).toContainEqual(
      expect.stringMatching(/^ {2}guardrail +dep-judge +guardrail\.default\.modelJudge\.virtual_key$/),
    );
    expect(refused.stderr).toContain('--force');
    expect((await api('GET', '/virtual-keys/dep-vk')).status).toBe(200);

    const forced = await cli(['virtual-keys', 'delete', 'dep-vk', '--force']);
    expect(forced.code, forced.stderr).toBe(0);
    expect((await api('GET', '/virtual-keys/dep-vk')).status).toBe(404);
  });

  it("shows each prompt's versions and the reason the gateway judged", async () => {
    await ok(['prompts', 'partials', 'create', '--slug', 'dep-part', '--string', 'Hi.']);
    await ok(['prompts', 'create', '--slug', 'dep-uses', '--string', chatTemplate('{{>dep-part}}', '{{q}}')]);
    // A quote in the partial breaks the JSON messages the prompt's template renders.
    await ok(['prompts', 'partials', 'update', 'dep-part', '--string', 'Say "hi".']);

    const body = await api('PUT', '/prompts/partials/dep-part/publish', { version: 2 });
    expect(body.status).toBe(409);
    const reason = (body.body as { error: { dependents: { prompts: { reason: string }[] } } }).error
      .dependents.prompts[0].reason;
    expect(reason).toBeTruthy();

    const refused = await cli(['prompts', 'partials', 'publish', 'dep-part', '--version', '2']);
    expect(refused.code).toBe(1);
    const line = refused.stderr.split('\n').find((text) => /^ {2}prompt +dep-uses/.test(text));
    expect(line).toMatch(/^ {2}prompt +dep-uses +version 1 +\S/);
    expect(line).toContain(reason.replace(/\s+/g, ' '));
    expect(refused.stderr).toContain('--force');
  });

  it('counts the dependents the gateway left out', async () => {
    await ok(['providers', 'create', '--slug', 'dep-many', '--provider', 'openai', '--api-key', 'sk-many']);
    for (let i = 0; i < 12; i++) {
      const created = await api('POST', '/configs', {
        slug: `dep-many-${i}`,
        config: { provider: '@dep-many' },
      });
      expect(created.status, created.text).toBeLessThan(300);
    }
    const refused = await cli(['providers', 'delete', 'dep-many']);
    expect(refused.code).toBe(1);
    expect(refused.stderr.match(/^ {2}config +dep-many-\d+ +config\.provider$/gm)).toHaveLength(10);
    expect(refused.stderr).toMatch(/^ {2}and 2 more configs$/m);
  });

  it('prints no list for another 409', async () => {
    await ok(['configs', 'create', '--slug', 'dep-taken', '--config', '{"provider":"openai"}']);
    const taken = await cli([
      'configs',
      'create',
      '--slug',
      'dep-taken',
      '--config',
      '{"provider":"openai"}',
    ]);
    expect(taken.code).toBe(1);
    expect(taken.stderr.trim().split('\n')).toHaveLength(1);
    expect(taken.stderr).not.toContain('--force');
  });

  it('says in --help what --force goes past, stored guardrails included', async () => {
    for (const noun of ['virtual-keys', 'configs']) {
      const help = await cli([noun, 'delete', '--help']);
      expect(help.code).toBe(0);
      expect(help.stdout.replace(/\s+/g, ' '), noun).toMatch(/--force .*configs, prompts or guardrails/);
    }
  });
});
