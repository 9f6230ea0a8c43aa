/** `gateway rate-limits …` against a real gateway: every command, as tables and as JSON, and its errors. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliAgainst } from './run-cli.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { call } from '../management/http.js';

let gateway: TestGateway;

beforeAll(async () => {
  gateway = await startGateway();
});

afterAll(async () => {
  await gateway?.close();
});

const cli = (args: string[]) => runCliAgainst(gateway, args);

describe('gateway rate-limits', () => {
  it('creates, lists, gets, updates and deletes', async () => {
    const created = await cli([
      '--json',
      'rate-limits',
      'create',
      '--name',
      'per user',
      '--type',
      'tokens',
      '--unit',
      'rph',
      '--value',
      '50000',
      '--condition',
      'model=@openai/*,@anthropic/*',
      '--condition',
      'api_key=*',
      '--exclude',
      'api_key=key_a,key_b',
      '--group-by',
      'metadata.user',
    ]);
    expect(created.code, created.stderr).toBe(0);
    const id = created.json().id as string;
    const stored = await call(gateway.url, gateway.adminKey, 'GET', `/policies/rate-limits/${id}`);
    expect(stored.body).toMatchObject({
      name: 'per user',
      type: 'tokens',
      unit: 'rph',
      value: 50000,
      conditions: [
        { key: 'model', value: ['@openai/*', '@anthropic/*'] },
        { key: 'api_key', value: '*', excludes: ['key_a', 'key_b'] },
      ],
      group_by: [{ key: 'metadata.user' }],
    });

    const list = await cli(['rate-limits', 'list', '--type', 'tokens']);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toContain(id);
    expect(list.stdout).toContain('50000 tokens rph');
    expect(list.stdout).toContain('api_key=* except key_a|key_b');
    expect(list.stdout).toContain('1 of 1');

    const shown = await cli(['rate-limits', 'get', id]);
    expect(shown.stdout).toContain('metadata.user');

    const updated = await cli([
      '--json',
      'rate-limits',
      'update',
      id,
      '--value',
      '100',
      '--status',
      'archived',
    ]);
    expect(updated.code, updated.stderr).toBe(0);
    expect(updated.json()).toMatchObject({ value: 100, status: 'archived' });
    expect((await cli(['--json', 'rate-limits', 'list'])).json().total).toBe(0);
    expect((await cli(['--json', 'rate-limits', 'list', '--status', 'archived'])).json().total).toBe(1);

    const deleted = await cli(['rate-limits', 'delete', id]);
    expect(deleted.stdout).toBe(`Deleted rate-limit policy ${id}\n`);
    const gone = await cli(['rate-limits', 'get', id]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain(id);
  });

  it('says what is missing or wrong', async () => {
    const missing = await cli([
      'rate-limits',
      'create',
      '--type',
      'requests',
      '--unit',
      'rpm',
      '--value',
      '5',
    ]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('--condition');
    const orphan = await cli([
      'rate-limits',
      'create',
      '--type',
      'requests',
      '--unit',
      'rpm',
      '--value',
      '5',
      '--condition',
      'model=*',
      '--exclude',
      'api_key=x',
      '--group-by',
      'api_key',
    ]);
    expect(orphan.stderr).toContain('--condition on api_key');
    const refused = await cli([
      'rate-limits',
      'create',
      '--type',
      'requests',
      '--unit',
      'rps',
      '--value',
      '5',
      '--condition',
      'api_key=*',
      '--group-by',
      'api_key',
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('unit');
    expect((await cli(['rate-limits', 'update', 'some-id'])).stderr).toContain('at least one field');
  });
});
