import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { runCliAgainst } from './run-cli.js';
import { freePort } from '../helpers/free-port.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { call } from '../management/http.js';

let gateway: TestGateway;
let fake: FakeUpstream;
let dir: string;

beforeAll(async () => {
  fake = await startFakeOpenAI({ name: 'cli' });
  gateway = await startGateway();
  dir = mkdtempSync(join(tmpdir(), 'gateway-cli-'));
});

afterAll(async () => {
  await gateway?.close();
  await fake?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Runs the CLI in-process with GATEWAY_URL and GATEWAY_API_KEY pointing at the test gateway. */
const cli = (args: string[], env: Record<string, string | undefined> = {}) =>
  runCliAgainst(gateway, args, env);

describe('gateway keys', () => {
  it('creates, lists and revokes keys; the created key works until revoked', async () => {
    const created = await cli([
      'keys',
      'create',
      '--name',
      'ci-bot',
      '--role',
      'member',
      '--metadata',
      'team=search',
      '--json',
    ]);
    expect(created.code, created.stderr).toBe(0);
    const key = created.json();
    expect(key).toMatchObject({
      name: 'ci-bot',
      role: 'member',
      metadata: { team: 'search' },
      key: expect.any(String),
    });
    expect((await call(gateway.url, key.key, 'GET', '/logs')).status).toBe(200);

    const human = await cli(['keys', 'create', '--name', 'human']);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^key\s+\S{16,}$/m);
    expect(human.stdout).toContain('cannot be shown again');

    const table = await cli(['keys', 'list']);
    expect(table.code).toBe(0);
    const lines = table.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^ID\s+NAME\s+ROLE\s+STATUS\s+PREFIX\s+CREATED\s+EXPIRES\s+LAST USED$/);
    expect(lines.some((line) => line.startsWith(key.id) && /ci-bot\s+member\s+active/.test(line))).toBe(true);
    expect(table.stdout).not.toContain(key.key);

    const listed = await cli(['keys', 'list', '--json']);
    expect(listed.json().data.map((k: { id: string }) => k.id)).toContain(key.id);

    const revoked = await cli(['keys', 'revoke', key.id]);
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toContain(`Revoked ${key.id}`);
    expect((await call(gateway.url, key.key, 'GET', '/logs')).status).toBe(401);
  });

  it('takes --url and --key over the environment, with or without /v1', async () => {
    const run = await cli(
      ['--url', `${gateway.origin}/v1/`, '--key', gateway.adminKey, 'keys', 'list', '--json'],
      {
        GATEWAY_URL: 'http://127.0.0.1:9',
        GATEWAY_API_KEY: 'wrong',
      },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.json().object).toBe('list');
  });

  it('reports API errors, a missing key and bad options on stderr with status 1', async () => {
    const badKey = await cli(['keys', 'list'], { GATEWAY_API_KEY: 'gw-not-a-real-key-000000' });
    expect(badKey.code).toBe(1);
    expect(badKey.stderr).toMatch(
      /^error: .*not valid.*\(HTTP 401, invalid_api_key, param x-gateway-api-key\)$/m,
    );

    const noKey = await cli(['keys', 'list'], { GATEWAY_API_KEY: undefined });
    expect(noKey.code).toBe(1);
    expect(noKey.stderr).toContain('GATEWAY_API_KEY');

    const badRole = await cli(['keys', 'create', '--name', 'x', '--role', 'owner']);
    expect(badRole.code).toBe(1);
    expect(badRole.stderr).toContain('owner');

    const missing = await cli(['keys', 'revoke', 'key_missing']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('(HTTP 404, not_found, param id)');

    const unreachable = await cli(['keys', 'list'], { GATEWAY_URL: 'http://127.0.0.1:9' });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain('Cannot reach the gateway');
    // Why not, rather than fetch's "fetch failed": here a port that fetch refuses to connect to at all.
    expect(unreachable.stderr).toBe(
      'error: Cannot reach the gateway at http://127.0.0.1:9/v1 (bad port: fetch does not connect to port 9)\n',
    );
    const closed = await cli(['keys', 'list'], { GATEWAY_URL: `http://127.0.0.1:${await freePort()}` });
    expect(closed.stderr).toMatch(/^error: Cannot reach the gateway at \S+ \(ECONNREFUSED\)\n$/);

    const unknown = await cli(['keys', 'nope']);
    expect(unknown.code).toBe(1);
  });

  it('creates workspaces, printing the first admin key once, and lists them', async () => {
    const created = await cli(['workspaces', 'create', '--name', 'Research', '--slug', 'cli-research']);
    expect(created.code, created.stderr).toBe(0);
    const value = /^admin key\s+(\S+)$/m.exec(created.stdout)?.[1];
    expect(value).toMatch(/^gw-/);
    expect(created.stdout).toContain('cannot be shown again');
    const who = await cli(['whoami', '--json'], { GATEWAY_API_KEY: value });
    expect(who.json()).toMatchObject({
      role: 'admin',
      scope: 'workspace',
      workspace: { slug: 'cli-research' },
    });

    const table = await cli(['workspaces', 'list']);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout.split('\n')[0]).toMatch(/^ID\s+SLUG\s+NAME\s+CREATED$/);
    expect(table.stdout).toMatch(/\scli-research\s+Research\s/);
    expect(table.stdout).not.toContain(value);
    // The new workspace's own key is refused what only the organisation's may do.
    const refused = await cli(['workspaces', 'create', '--name', 'X', '--slug', 'x'], {
      GATEWAY_API_KEY: value,
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('(HTTP 403, forbidden)');

    const deleted = await cli(['workspaces', 'delete', 'cli-research']);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stdout).toMatch(/^Deleted workspace cli-research \(ws_\S+\)$/m);
    expect((await cli(['workspaces', 'list'])).stdout).not.toContain('cli-research');
    // Its key went with it.
    expect((await cli(['whoami'], { GATEWAY_API_KEY: value })).code).toBe(1);
    const home = await cli(['workspaces', 'delete', 'default']);
    expect(home.code).toBe(1);
    expect(home.stderr).toContain('(HTTP 409, conflict');
  });

  it('rotates and deletes keys, and tells a key who it is', async () => {
    const created = (await cli(['keys', 'create', '--name', 'to-rotate', '--json'])).json();
    const rotated = await cli(['keys', 'rotate', created.id]);
    expect(rotated.code, rotated.stderr).toBe(0);
    const value = /^key\s+(\S+)$/m.exec(rotated.stdout)?.[1];
    expect(value).toMatch(/^gw-/);
    expect(rotated.stdout).toContain('cannot be shown again');
    expect((await call(gateway.url, created.key, 'GET', '/logs')).status).toBe(401);
    expect((await call(gateway.url, value, 'GET', '/logs')).status).toBe(200);

    const who = await cli(['whoami'], { GATEWAY_API_KEY: value });
    expect(who.code, who.stderr).toBe(0);
    expect(who.stdout).toMatch(/^role\s+member$/m);
    expect(who.stdout).toMatch(/^workspace\s+default$/m);
    expect(who.stdout).toMatch(/^scope\s+workspace$/m);
    expect(who.stdout).not.toContain(value);
    const whoJson = await cli(['whoami', '--json']);
    expect(whoJson.json()).toMatchObject({ object: 'api_key', role: 'admin', scope: 'organisation' });

    const deleted = await cli(['keys', 'delete', created.id]);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stdout).toBe(`Deleted ${created.id}\n`);
    expect((await call(gateway.url, value, 'GET', '/logs')).status).toBe(401);
    const again = await cli(['keys', 'delete', created.id]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('(HTTP 404, not_found, param id)');
  });

  it('says so when the address answers something that is not the gateway', async () => {
    // A web server's page where the gateway was meant: 200, but HTML.
    const page = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html><body>Welcome</body></html>');
    });
    await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(page.address() as AddressInfo).port}`;
      for (const args of [
        ['keys', 'list'],
        ['keys', 'create', '--name', 'x'],
      ]) {
        const run = await cli(args, { GATEWAY_URL: url });
        expect(run.code).toBe(1);
        expect(run.stderr).toBe(
          `error: ${url}/v1 answered HTTP 200 with a body that is not JSON: is it the gateway's address?\n`,
        );
      }
    } finally {
      page.close();
    }
  });

  it('prints help with status 0', async () => {
    const help = await cli(['--help']);
    expect(help.code).toBe(0);
    for (const name of ['keys', 'virtual-keys', 'providers', 'configs', 'logs'])
      expect(help.stdout).toContain(name);
  });
});

describe.each([
  ['virtual-keys', (slug: string) => ({ 'x-gateway-virtual-key': slug })],
  ['providers', (slug: string) => ({ 'x-gateway-provider': `@${slug}` })],
] as const)('gateway %s', (group, select) => {
  it('creates (key from the environment), lists and deletes; the credential routes calls', async () => {
    const slug = `cli-${group}`;
    const created = await cli(
      [
        '--json',
        group,
        'create',
        '--slug',
        slug,
        '--provider',
        'openai',
        '--api-key-env',
        'CLI_TEST_PROVIDER_KEY',
        '--custom-host',
        fake.url,
        '--set',
        'vendora_organization=org-cli',
      ],
      { CLI_TEST_PROVIDER_KEY: 'sk-cli-provider-key-123456' },
    );
    expect(created.code, created.stderr).toBe(0);
    expect(created.json()).toMatchObject({
      slug,
      provider: 'openai',
      api_key_hint: '…3456',
      secret_keys: ['api_key'],
    });
    expect(created.stdout).not.toContain('sk-cli-provider-key');

    const reply = await call(
      gateway.url,
      gateway.adminKey,
      'POST',
      '/chat/completions',
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'via cli' }] },
      select(slug),
    );
    expect(reply.status, reply.text).toBe(200);
    expect(fake.requests.at(-1)?.headers.authorization).toBe('Bearer sk-cli-provider-key-123456');
    expect(fake.requests.at(-1)?.headers['openai-organization']).toBe('org-cli');

    const table = await cli([group, 'list']);
    expect(table.stdout.split('\n')[0]).toMatch(
      /^SLUG\s+NAME\s+PROVIDER\s+SECRETS\s+API KEY\s+CREATED\s+ID$/,
    );
    expect(table.stdout).toMatch(new RegExp(`^${slug}\\s+${slug}\\s+openai\\s+api_key\\s+…3456`, 'm'));

    const missingEnv = await cli([
      group,
      'create',
      '--slug',
      'x',
      '--provider',
      'openai',
      '--api-key-env',
      'NOPE_UNSET',
    ]);
    expect(missingEnv.code).toBe(1);
    expect(missingEnv.stderr).toContain('NOPE_UNSET');

    const cloud = await cli(
      [
        group,
        'create',
        '--slug',
        `${slug}-cloud`,
        '--provider',
        'bedrock',
        '--set',
        'cloudc_region=eu-west-1',
        '--set-env',
        'cloudc_access_key_id=CLI_AKID',
        '--set-env',
        'cloudc_secret_access_key=CLI_SECRET',
        '--json',
      ],
      { CLI_AKID: 'AKIACLITEST', CLI_SECRET: 'cli-secret-access-key' },
    );
    expect(cloud.code, cloud.stderr).toBe(0);
    expect(cloud.json()).toMatchObject({
      provider: 'bedrock',
      secret_keys: ['cloudc_access_key_id', 'cloudc_secret_access_key'],
      settings: { cloudc_region: 'eu-west-1' },
    });
    expect(cloud.stdout).not.toContain('cli-secret-access-key');
    expect((await cli([group, 'delete', `${slug}-cloud`])).code).toBe(0);

    const unknownProvider = await cli([group, 'create', '--slug', 'x', '--provider', 'nope']);
    expect(unknownProvider.code).toBe(1);
    expect(unknownProvider.stderr).toContain('unknown_provider');

    const deleted = await cli([group, 'delete', slug]);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect((await cli([group, 'list', '--json'])).json().data).toEqual([]);
  });
});

describe('gateway configs', () => {
  it('creates from --config and --file, lists and gets (credentials redacted)', async () => {
    const inline = await cli([
      'configs',
      'create',
      '--slug',
      'cli-inline',
      '--config',
      JSON.stringify({ provider: 'openai', api_key: 'sk-cli-config-secret', custom_host: fake.url }),
    ]);
    expect(inline.code, inline.stderr).toBe(0);
    expect(inline.stdout).toMatch(/^slug\s+cli-inline$/m);

    // The virtual keys the file's config names must exist when it is stored.
    for (const slug of ['a', 'b']) {
      const key = await call(gateway.url, gateway.adminKey, 'POST', '/virtual-keys', {
        slug,
        provider: 'openai',
        api_key: `sk-cli-fallback-${slug}`,
      });
      expect(key.status, key.text).toBe(200);
    }
    const file = join(dir, 'fallback.json');
    writeFileSync(
      file,
      JSON.stringify({
        strategy: { mode: 'fallback' },
        targets: [{ virtual_key: 'a' }, { virtual_key: 'b' }],
      }),
    );
    const fromFile = await cli([
      'configs',
      'create',
      '--slug',
      'cli-file',
      '--name',
      'Fallback',
      '--file',
      file,
      '--json',
    ]);
    expect(fromFile.code, fromFile.stderr).toBe(0);
    expect(fromFile.json()).toMatchObject({ slug: 'cli-file', name: 'Fallback', version: 1 });

    const list = await cli(['configs', 'list']);
    expect(list.stdout).toMatch(/^cli-inline\s+cli-inline\s+1\s+active/m);
    expect(list.stdout).toMatch(/^cli-file\s+Fallback\s+1\s+active/m);

    const got = await cli(['configs', 'get', 'cli-inline']);
    expect(got.code).toBe(0);
    expect(got.stdout).toContain('"api_key": "[REDACTED]"');
    expect(got.stdout).not.toContain('sk-cli-config-secret');
    const gotJson = await cli(['configs', 'get', fromFile.json().id, '--json']);
    expect(gotJson.json().config.targets).toHaveLength(2);

    // The stored config routes a call.
    const reply = await call(
      gateway.url,
      gateway.adminKey,
      'POST',
      '/chat/completions',
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'cli config' }] },
      { 'x-gateway-config': 'cli-inline' },
    );
    expect(reply.status, reply.text).toBe(200);
  });

  it('refuses bad input before and after sending it', async () => {
    const both = await cli(['configs', 'create', '--slug', 'x']);
    expect(both.code).toBe(1);
    expect(both.stderr).toContain('exactly one of --config');
    const badJson = await cli(['configs', 'create', '--slug', 'x', '--config', '{nope']);
    expect(badJson.code).toBe(1);
    expect(badJson.stderr).toContain('not valid JSON');
    const invalid = await cli(['configs', 'create', '--slug', 'x', '--config', '{"retry":{"attempts":"x"}}']);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain('param config.retry.attempts');
    const missing = await cli(['configs', 'get', 'nope']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('HTTP 404');
  });
});

describe('gateway logs', () => {
  it('lists the records of real calls, as a table and as JSON, with filters', async () => {
    const headers = {
      authorization: 'Bearer sk-logs',
      'x-gateway-provider': 'openai',
      'x-gateway-custom-host': fake.url,
    };
    const body = { model: 'gpt-logs-model', messages: [{ role: 'user', content: 'log me' }] };
    expect(
      (await call(gateway.url, gateway.adminKey, 'POST', '/chat/completions', body, headers)).status,
    ).toBe(200);

    let page: { data: Array<{ model: string; status: number }> } = { data: [] };
    for (let i = 0; i < 100 && page.data.length === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      page = (await cli(['logs', 'list', '--model', 'gpt-logs-model', '--json'])).json();
    }
    expect(page.data.length).toBeGreaterThan(0);
    expect(page.data.every((record) => record.model === 'gpt-logs-model')).toBe(true);

    const table = await cli(['logs', 'list', '--model', 'gpt-logs-model', '--limit', '5']);
    expect(table.code).toBe(0);
    expect(table.stdout.split('\n')[0]).toMatch(
      /^TIME\s+STATUS\s+ENDPOINT\s+PROVIDER\s+MODEL\s+MS\s+TOKENS\s+COST \$\s+ERROR\s+ID$/,
    );
    expect(table.stdout).toMatch(/200\s+POST \/v1\/chat\/completions\s+openai\s+gpt-logs-model/);

    const none = await cli(['logs', 'list', '--model', 'no-such-model']);
    expect(none.stdout).toBe('(none)\n');
    const badLimit = await cli(['logs', 'list', '--limit', 'many']);
    expect(badLimit.code).toBe(1);
  });

  it('works with a member key', async () => {
    const member = (await cli(['keys', 'create', '--name', 'reader', '--json'])).json();
    const run = await cli(['logs', 'list', '--json'], { GATEWAY_API_KEY: member.key });
    expect(run.code, run.stderr).toBe(0);
    const forbidden = await cli(['keys', 'list'], { GATEWAY_API_KEY: member.key });
    expect(forbidden.code).toBe(1);
    expect(forbidden.stderr).toContain('HTTP 403');
  });
});
