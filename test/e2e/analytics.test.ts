/* eslint-disable @typescript-eslint/no-explicit-any -- tests read free-form JSON answers */
/**
 * `GET /v1/analytics/…` over HTTP: calls made with the `openai` SDK through a real gateway show up in the
 * timeseries and the summary as soon as their records are written; bad parameters are 400s naming them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { client, logsOf, target, traceHeaders, userMessage } from '../routing/support.js';

let gateway: TestGateway;
let fake: FakeUpstream;

beforeAll(async () => {
  fake = await startFakeOpenAI({ name: 'analysed' });
  gateway = await startGateway();
});

afterAll(async () => {
  await gateway?.close();
  await fake?.close();
});

async function get(path: string): Promise<{ status: number; body: any }> {
  const response = await fetch(`${gateway.url}${path}`, {
    headers: { 'x-gateway-api-key': gateway.adminKey },
  });
  return { status: response.status, body: await response.json() };
}

describe('analytics API', () => {
  it('answers the calls made, by model and per minute, with tokens, cost and latency', async () => {
    const { traceId, headers } = traceHeaders();
    const user = { 'x-gateway-metadata': JSON.stringify({ _user: 'alice' }) };
    await client(gateway, target(fake), { ...headers, ...user }).chat.completions.create({
      model: 'gpt-4o-mini',
      messages: userMessage('one'),
    });
    await client(gateway, target(fake), user).chat.completions.create({
      model: 'gpt-4o',
      messages: userMessage('two'),
    });
    await expect(
      client(
        gateway,
        target(fake, { override_params: { model: 'fake-status-500' } }),
      ).chat.completions.create({
        model: 'gpt-4o',
        messages: userMessage('three'),
      }),
    ).rejects.toMatchObject({ status: 500 });
    await logsOf(gateway, traceId, 1);
    // Wait until all three are written.
    for (let i = 0; i < 100; i++) {
      const { body } = await get('/analytics/summary');
      if (body.data[0]?.requests === 3) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }

    const byModel = await get('/analytics/summary?group_by=model');
    expect(byModel.status).toBe(200);
    expect(byModel.body.object).toBe('analytics.summary');
    const rows = Object.fromEntries(byModel.body.data.map((row: any) => [row.group, row]));
    expect(rows['gpt-4o-mini']).toMatchObject({ requests: 1, errors: 0 });
    expect(rows['gpt-4o-mini'].total_tokens).toBeGreaterThan(0);
    expect(rows['gpt-4o-mini'].cost).toBeGreaterThan(0);
    expect(rows['gpt-4o-mini'].latency_ms.p50).toBeGreaterThan(0);
    expect(rows['fake-status-500'] ?? rows['gpt-4o']).toBeDefined();
    expect(byModel.body.data.reduce((sum: number, row: any) => sum + row.errors, 0)).toBe(1);

    const series = await get('/analytics/timeseries?interval=minute&group_by=metadata._user');
    expect(series.body).toMatchObject({
      object: 'analytics.timeseries',
      interval_ms: 60_000,
      group_by: 'metadata._user',
    });
    expect(
      series.body.data
        .filter((row: any) => row.group === 'alice')
        .reduce((n: number, row: any) => n + row.requests, 0),
    ).toBe(2);
    expect(series.body.data[0].bucket).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:00\.000Z$/);

    const errorsOnly = await get('/analytics/summary?status_class=5xx');
    expect(errorsOnly.body.data[0]).toMatchObject({ requests: 1, errors: 1, error_rate: 1 });
  });

  it('reads a time without a zone as UTC, whatever the server zone', async () => {
    const zone = process.env.TZ;
    process.env.TZ = 'America/New_York';
    try {
      const { status, body } = await get('/analytics/summary?from=2026-01-01T00:00&to=2026-01-01T06:00:00');
      expect(status).toBe(200);
      expect(body).toMatchObject({ from: '2026-01-01T00:00:00.000Z', to: '2026-01-01T06:00:00.000Z' });
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });

  it('grouped by workspace, reads the workspace named, and only it', async () => {
    const created = await fetch(`${gateway.url}/workspaces`, {
      method: 'POST',
      headers: { 'x-gateway-api-key': gateway.adminKey, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Quiet', slug: 'quiet' }),
    });
    expect(created.status).toBe(200);
    const quiet = (await created.json()) as { id: string };
    const all = await get('/analytics/summary?group_by=workspace&workspace_id=*');
    expect(all.body.data.length).toBeGreaterThan(0);
    for (const named of [quiet.id, 'quiet']) {
      const one = await get(`/analytics/summary?group_by=workspace&workspace_id=${named}`);
      expect(one.status).toBe(200);
      expect(one.body.data).toEqual([]);
    }
    const unknown = await get('/analytics/summary?group_by=workspace&workspace_id=ws_elsewhere');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.param).toBe('workspace_id');
  });

  it('refuses bad parameters naming them', async () => {
    for (const [query, param] of [
      ['group_by=colour', 'group_by'],
      ['group_by=metadata.team', 'group_by'],
      ['interval=week', 'interval'],
      ['from=yesterday', 'from'],
      // Free text that JavaScript's lenient date parser would read as some date.
      ['to=hello%202020', 'to'],
      ['to=June%201', 'to'],
      ['from=-5', 'from'],
      // Past what a date can hold (±8.64e15 ms): no bucket or ISO time can be written for it.
      ['to=99999999999999999', 'to'],
      ['from=8640000000000001', 'from'],
      // A day the month does not have, which Date.parse reads as one in the next month.
      ['from=2026-02-30', 'from'],
      ['to=2026-04-31T00:00:00Z', 'to'],
      ['from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z', 'from'],
      ['interval=minute&from=2026-01-01T00:00:00Z&to=2026-03-01T00:00:00Z', 'interval'],
      ['status_class=200', 'status_class'],
      // The gateway answers no 1xx or 3xx: such a filter is a mistake, not an empty chart.
      ['status_class=1xx', 'status_class'],
      ['status_class=3xx', 'status_class'],
      ['metadata._user=a&metadata.team=b', 'metadata.team'],
      ['workspace_id=ws_elsewhere', 'workspace_id'],
      // Names of Object.prototype's members are no group or interval; a repeated parameter is no value.
      ['group_by=constructor', 'group_by'],
      ['group_by=__proto__', 'group_by'],
      ['interval=valueOf', 'interval'],
      ['group_by=model&group_by=provider', 'group_by'],
      ['model=a&model=b', 'model'],
      ['provider=openai&provider=anthropic', 'provider'],
    ] as const) {
      const { status, body } = await get(`/analytics/timeseries?${query}`);
      expect([400, 404], query).toContain(status);
      expect(body.error.param, query).toBe(param);
    }
  });
});
