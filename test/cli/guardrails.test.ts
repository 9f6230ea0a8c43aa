/** `gateway guardrails …` against a real gateway: every command, as tables and as JSON, and its errors. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliAgainst } from './run-cli.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { call } from '../management/http.js';

let gateway: TestGateway;
let dir: string;

beforeAll(async () => {
  gateway = await startGateway();
  dir = mkdtempSync(join(tmpdir(), 'gateway-cli-guardrails-'));
});

afterAll(async () => {
  await gateway?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const cli = (args: string[]) => runCliAgainst(gateway, args);

const api = (method: string, path: string) => call(gateway.url, gateway.adminKey, method, path);

const blockList = { 'default.contains': { operator: 'none', words: ['forbidden'] }, deny: true };
const webhook = {
  'default.webhook': {
    webhookURL: 'https://hooks.example/v',
    headers: { Authorization: 'Bearer cli-hook-secret' },
  },
  deny: true,
};

describe('gateway guardrails', () => {
  it('deletes a guardrail a config lists only with --force', async () => {
    const created = await cli([
      'guardrails',
      'create',
      '--slug',
      'cli-listed',
      '--guardrail',
      JSON.stringify(blockList),
    ]);
    expect(created.code, created.stderr).toBe(0);
    const config = await cli([
      'configs',
      'create',
      '--slug',
      'cli-guarded',
      '--config',
      '{"provider":"openai","input_guardrails":["cli-listed"]}',
    ]);
    expect(config.code, config.stderr).toBe(0);
    const refused = await cli(['guardrails', 'delete', 'cli-listed']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('"cli-guarded" (config.input_guardrails[0])');
    expect((await api('GET', '/guardrails/cli-listed')).status).toBe(200);
    const forced = await cli(['guardrails', 'delete', 'cli-listed', '--force']);
    expect(forced.code, forced.stderr).toBe(0);
    expect((await api('GET', '/guardrails/cli-listed')).status).toBe(404);
  });

  it('creates, lists, gets, updates, lists versions and deletes', async () => {
    const inline = await cli([
      'guardrails',
      'create',
      '--slug',
      'cli-block',
      '--guardrail',
      JSON.stringify(blockList),
    ]);
    expect(inline.code, inline.stderr).toBe(0);
    expect(inline.stdout).toMatch(/^slug\s+cli-block$/m);
    expect(inline.stdout).toMatch(/^version\s+1$/m);

    const file = join(dir, 'webhook.json');
    writeFileSync(file, JSON.stringify(webhook));
    const fromFile = await cli([
      'guardrails',
      'create',
      '--slug',
      'cli-webhook',
      '--name',
      'Compliance webhook',
      '--file',
      file,
      '--json',
    ]);
    expect(fromFile.code, fromFile.stderr).toBe(0);
    expect(fromFile.json()).toMatchObject({
      object: 'guardrail',
      slug: 'cli-webhook',
      name: 'Compliance webhook',
      version: 1,
      guardrail: { 'default.webhook': { headers: { Authorization: '[REDACTED]' } } },
    });
    expect(fromFile.stdout).not.toContain('cli-hook-secret');

    const list = await cli(['guardrails', 'list']);
    expect(list.code, list.stderr).toBe(0);
    const lines = list.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^SLUG\s+NAME\s+VERSION\s+UPDATED\s+ID$/);
    expect(list.stdout).toMatch(/^cli-block\s+cli-block\s+1\s+\S+\s+grd_\S+$/m);
    expect(list.stdout).toMatch(/^cli-webhook\s+Compliance webhook\s+1\s/m);

    const got = await cli(['guardrails', 'get', 'cli-webhook']);
    expect(got.code, got.stderr).toBe(0);
    expect(got.stdout).toMatch(/^name\s+Compliance webhook$/m);
    expect(got.stdout).toContain('"Authorization": "[REDACTED]"');
    expect(got.stdout).not.toContain('cli-hook-secret');
    const byId = await cli(['guardrails', 'get', fromFile.json().id, '--json']);
    expect(byId.json().slug).toBe('cli-webhook');

    const renamed = await cli(['guardrails', 'update', 'cli-block', '--name', 'Block list']);
    expect(renamed.code, renamed.stderr).toBe(0);
    expect(renamed.stdout).toMatch(/^version\s+1$/m);
    const next = { ...blockList, deny: false };
    writeFileSync(join(dir, 'next.json'), JSON.stringify(next));
    const updated = await cli([
      'guardrails',
      'update',
      'cli-block',
      '--file',
      join(dir, 'next.json'),
      '--json',
    ]);
    expect(updated.code, updated.stderr).toBe(0);
    expect(updated.json()).toMatchObject({ name: 'Block list', version: 2, guardrail: next });
    expect((await api('GET', '/guardrails/cli-block')).body).toMatchObject({ version: 2, guardrail: next });

    const versions = await cli(['guardrails', 'versions', 'cli-block']);
    expect(versions.code, versions.stderr).toBe(0);
    const versionLines = versions.stdout.trim().split('\n');
    expect(versionLines[0]).toMatch(/^VERSION\s+CREATED\s+GUARDRAIL$/);
    expect(versionLines.slice(1).map((line) => line.split(/\s+/)[0])).toEqual(['1', '2']);
    expect(versionLines[1]).toContain('"deny":true');
    expect(versionLines[2]).toContain('"deny":false');

    const deleted = await cli(['guardrails', 'delete', 'cli-block']);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stdout).toMatch(/^Deleted guardrail cli-block \(grd_\S+\)$/m);
    expect((await api('GET', '/guardrails/cli-block')).status).toBe(404);
    const gone = await cli(['guardrails', 'get', 'cli-block']);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('HTTP 404');
  });

  it('refuses bad input before sending it and reports what the gateway refuses', async () => {
    const neither = await cli(['guardrails', 'create', '--slug', 'x']);
    expect(neither.code).toBe(1);
    expect(neither.stderr).toContain('--guardrail <json> or --file <path>');
    const both = await cli(['guardrails', 'create', '--slug', 'x', '--guardrail', '{}', '--file', 'x.json']);
    expect(both.code).toBe(1);
    expect(both.stderr).toContain('only one of');
    const badJson = await cli(['guardrails', 'create', '--slug', 'x', '--guardrail', '{nope']);
    expect(badJson.code).toBe(1);
    expect(badJson.stderr).toContain('--guardrail is not valid JSON');
    const missingFile = await cli([
      'guardrails',
      'create',
      '--slug',
      'x',
      '--file',
      join(dir, 'absent.json'),
    ]);
    expect(missingFile.code).toBe(1);
    expect(missingFile.stderr).toContain('absent.json');

    const invalid = await cli([
      'guardrails',
      'create',
      '--slug',
      'x',
      '--guardrail',
      JSON.stringify({ ...blockList, deny: 'yes' }),
    ]);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(/HTTP 400, invalid_config, param guardrail\.deny/);
    const noCheck = await cli(['guardrails', 'create', '--slug', 'x', '--guardrail', '{"deny":true}']);
    expect(noCheck.code).toBe(1);
    expect(noCheck.stderr).toContain('names no check');
    expect((await api('GET', '/guardrails/x')).status).toBe(404);

    const nothing = await cli(['guardrails', 'update', 'x']);
    expect(nothing.code).toBe(1);
    expect(nothing.stderr).toContain('Give --name');
    const missing = await cli(['guardrails', 'update', 'nope', '--name', 'n']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/No guardrail "nope" in this workspace \(HTTP 404, not_found, param id\)/);
  });

  it('lists its commands in the help', async () => {
    const help = await cli(['guardrails', '--help']);
    expect(help.code).toBe(0);
    for (const name of ['create', 'list', 'get', 'update', 'versions', 'delete']) {
      expect(help.stdout).toMatch(new RegExp(`^\\s+${name}\\b`, 'm'));
    }
    expect((await cli(['--help'])).stdout).toMatch(/^\s+guardrails\b/m);
  });
});
