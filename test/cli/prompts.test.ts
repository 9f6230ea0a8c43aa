/** `gateway prompts …` against a real gateway and a fake provider: every command, as tables and as JSON. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { runCliAgainst } from './run-cli.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { chatTemplate, fakeTarget } from '../prompts/support.js';

let gateway: TestGateway;
let fake: FakeUpstream;

beforeAll(async () => {
  fake = await startFakeOpenAI({ name: 'cli-prompts' });
  gateway = await startGateway();
});
afterAll(async () => {
  await gateway?.close();
  await fake?.close();
});

const cli = (args: string[]) => runCliAgainst(gateway, args);

describe('gateway prompts', () => {
  it('creates, updates, publishes, lists, renders, runs and deletes a prompt and a partial', async () => {
    const partial = await cli([
      'prompts',
      'partials',
      'create',
      '--slug',
      'cli-tone',
      '--string',
      'Be {{tone}}.',
    ]);
    expect(partial.code, partial.stderr).toBe(0);
    expect(partial.stdout).toContain('cli-tone');

    const created = await cli([
      'prompts',
      'create',
      '--slug',
      'cli-prompt',
      '--name',
      'CLI prompt',
      '--string',
      chatTemplate('{{>cli-tone}}', 'Say {{word}}'),
      '--parameters',
      '{"model": "gpt-4o-mini"}',
      '--config',
      JSON.stringify(fakeTarget(fake)),
      '--json',
    ]);
    expect(created.code, created.stderr).toBe(0);
    expect(created.json()).toMatchObject({ slug: 'cli-prompt', version: 1, published_version: 1 });

    const updated = await cli([
      'prompts',
      'update',
      'cli-prompt',
      '--string',
      chatTemplate('{{>cli-tone}} v2', 'Say {{word}}'),
      '--parameters',
      '{"model": "gpt-4o-mini"}',
      '--config',
      JSON.stringify(fakeTarget(fake)),
      '--json',
    ]);
    expect(updated.json()).toMatchObject({ version: 2, published_version: 1 });

    const listed = await cli(['prompts', 'list', '--name', 'CLI']);
    expect(listed.stdout).toMatch(/SLUG\s+NAME\s+LATEST\s+PUBLISHED/);
    expect(listed.stdout).toContain('cli-prompt');

    const rendered = await cli([
      'prompts',
      'render',
      'cli-prompt',
      '--variables',
      '{"tone": "calm", "word": "hi"}',
      '--json',
    ]);
    expect(rendered.code, rendered.stderr).toBe(0);
    expect(rendered.json().body.messages[0].content).toBe('Be calm.');
    // The request once: not again as the `data` some SDKs read.
    expect(Object.keys(rendered.json()).sort()).toEqual([
      'body',
      'endpoint',
      'object',
      'prompt_id',
      'slug',
      'version',
    ]);
    const shown = await cli([
      'prompts',
      'render',
      'cli-prompt',
      '--variables',
      '{"tone": "calm", "word": "hi"}',
    ]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout.split('Be calm.').length - 1).toBe(1);

    const published = await cli(['prompts', 'publish', 'cli-prompt', '--version', '2', '--json']);
    expect(published.code, published.stderr).toBe(0);
    expect(published.json().published_version).toBe(2);

    const run = await cli([
      'prompts',
      'run',
      'cli-prompt',
      '--variables',
      '{"tone": "calm", "word": "hi"}',
      '--body',
      '{"temperature": 0}',
      '--json',
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.json()).toMatchObject({ status: 'success', headers: { 'x-gateway-prompt-version': '2' } });

    const versions = await cli(['prompts', 'versions', 'cli-prompt']);
    expect(versions.stdout).toMatch(/VERSION\s+CREATED\s+TEMPLATE/);
    expect((await cli(['prompts', 'version', 'cli-prompt', '1', '--json'])).json().version).toBe(1);

    const bad = await cli(['prompts', 'run', 'cli-prompt', '--variables', '{"tone": "calm"}']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('word');

    expect((await cli(['prompts', 'delete', 'cli-prompt'])).stdout).toContain('Deleted prompt cli-prompt');
    expect((await cli(['prompts', 'partials', 'delete', 'cli-tone'])).code).toBe(0);
  });

  it('deletes or publishes a partial that prompts include only with --force', async () => {
    expect((await cli(['prompts', 'partials', 'create', '--slug', 'cli-sig', '--string', 'Bye.'])).code).toBe(
      0,
    );
    const prompt = await cli([
      'prompts',
      'create',
      '--slug',
      'cli-signed',
      '--string',
      chatTemplate('{{>cli-sig}}', '{{q}}'),
    ]);
    expect(prompt.code, prompt.stderr).toBe(0);
    const next = await cli(['prompts', 'partials', 'update', 'cli-sig', '--string', 'Say "bye".']);
    expect(next.code, next.stderr).toBe(0);
    const publish = await cli(['prompts', 'partials', 'publish', 'cli-sig', '--version', '2']);
    expect(publish.code).not.toBe(0);
    expect(publish.stderr).toContain('cli-signed');
    const forcedPublish = await cli([
      'prompts',
      'partials',
      'publish',
      'cli-sig',
      '--version',
      '2',
      '--force',
    ]);
    expect(forcedPublish.code, forcedPublish.stderr).toBe(0);
    // The prompt works again; a delete would break it.
    const back = await cli(['prompts', 'partials', 'publish', 'cli-sig', '--version', '1']);
    expect(back.code, back.stderr).toBe(0);
    const remove = await cli(['prompts', 'partials', 'delete', 'cli-sig']);
    expect(remove.code).not.toBe(0);
    expect(remove.stderr).toContain('cli-signed');
    const forced = await cli(['prompts', 'partials', 'delete', 'cli-sig', '--force']);
    expect(forced.code, forced.stderr).toBe(0);
  });

  it('deletes a config a prompt sends its calls to, or a prompt a config names, only with --force', async () => {
    const config = await cli([
      'configs',
      'create',
      '--slug',
      'cli-route',
      '--config',
      '{"provider":"openai"}',
    ]);
    expect(config.code, config.stderr).toBe(0);
    const routed = await cli([
      'prompts',
      'create',
      '--slug',
      'cli-routed',
      '--string',
      chatTemplate('x', '{{q}}'),
      '--config',
      'cli-route',
    ]);
    expect(routed.code, routed.stderr).toBe(0);
    const naming = await cli([
      'configs',
      'create',
      '--slug',
      'cli-naming',
      '--config',
      JSON.stringify({ strategy: { mode: 'fallback' }, targets: [{ prompt_id: 'cli-routed' }] }),
    ]);
    expect(naming.code, naming.stderr).toBe(0);

    const config409 = await cli(['configs', 'delete', 'cli-route']);
    expect(config409.code).not.toBe(0);
    expect(config409.stderr).toContain('"cli-routed" (version 1)');
    const prompt409 = await cli(['prompts', 'delete', 'cli-routed']);
    expect(prompt409.code).not.toBe(0);
    expect(prompt409.stderr).toContain('"cli-naming" (config.targets[0].prompt_id)');

    const forcedPrompt = await cli(['prompts', 'delete', 'cli-routed', '--force']);
    expect(forcedPrompt.code, forcedPrompt.stderr).toBe(0);
    // No live prompt sends its calls to it any more.
    const config200 = await cli(['configs', 'delete', 'cli-route']);
    expect(config200.code, config200.stderr).toBe(0);
    expect(config200.stdout).toContain('Deleted config cli-route');
    expect((await cli(['configs', 'delete', 'cli-naming', '--force'])).code).toBe(0);
  });

  it('deletes a virtual key that a config names only with --force', async () => {
    const key = await cli([
      'virtual-keys',
      'create',
      '--slug',
      'cli-vk',
      '--provider',
      'openai',
      '--api-key',
      'sk-cli-vk',
    ]);
    expect(key.code, key.stderr).toBe(0);
    const config = await cli([
      'configs',
      'create',
      '--slug',
      'cli-vk-use',
      '--config',
      '{"virtual_key":"cli-vk"}',
    ]);
    expect(config.code, config.stderr).toBe(0);
    const refused = await cli(['virtual-keys', 'delete', 'cli-vk']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('"cli-vk-use" (config.virtual_key)');
    const forced = await cli(['virtual-keys', 'delete', 'cli-vk', '--force']);
    expect(forced.code, forced.stderr).toBe(0);
  });
});
