/**
 * Stored responses against every Store implementation (store.test.ts runs it on SQLite and PostgreSQL):
 * a response and its input items written together, updated as the answer ends, private to their
 * workspace, paged in order, and deleted with their items.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/types.js';
import { newTenant, type StoreHarness } from './store-contract.js';

export function responsesContract(makeHarness: () => Promise<StoreHarness>): void {
  let harness: StoreHarness;
  let store: Store;

  beforeAll(async () => {
    harness = await makeHarness();
    store = await harness.open(randomBytes(32));
  });
  afterAll(async () => {
    await store?.close();
    await harness?.cleanup();
  });

  const responseId = () => `resp_${randomBytes(8).toString('hex')}`;
  const items = (n: number) =>
    Array.from({ length: n }, (_, i) => ({
      id: `msg_${i}_${randomBytes(4).toString('hex')}`,
      item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: `item ${i}` }] },
    }));
  const texts = (page: { data: Array<{ item: Record<string, unknown> }> } | undefined) =>
    page?.data.map((stored) => (stored.item.content as Array<{ text: string }>)[0]!.text);

  describe('stored responses', () => {
    it('are written with their items, updated, and private to their workspace', async () => {
      const { ws, other } = await newTenant(store, 'Responding');
      const id = responseId();
      const input_items = items(3);
      await store.createResponse({
        workspace_id: ws.id,
        id,
        previous_response_id: null,
        status: 'in_progress',
        body: { id, status: 'in_progress', output: [] },
        input_items,
      });
      expect(await store.getResponse(ws.id, id)).toMatchObject({
        id,
        status: 'in_progress',
        previous_response_id: null,
        body: { id, status: 'in_progress', output: [] },
      });
      expect((await store.listResponseInputItems(ws.id, id, { limit: 100, order: 'asc' }))?.data).toEqual(
        input_items,
      );

      const body = { id, status: 'completed', output: [{ type: 'message', content: [] }] };
      expect(await store.updateResponse(ws.id, id, { status: 'completed', body })).toBe(true);
      expect((await store.getResponse(ws.id, id))?.body).toEqual(body);

      expect(await store.getResponse(other.id, id)).toBeUndefined();
      expect((await store.getResponseChain(other.id, id, 10)).responses).toEqual([]);
      expect(await store.listResponseInputItems(other.id, id, { limit: 20, order: 'asc' })).toBeUndefined();
      expect(await store.updateResponse(other.id, id, { status: 'failed', body: {} })).toBe(false);
      expect(await store.deleteResponse(other.id, id)).toBe(false);
      expect((await store.getResponse(ws.id, id))?.status).toBe('completed');
    });

    it('page their input items by position, either way, after or before an item', async () => {
      const { ws } = await newTenant(store, 'Paging');
      const id = responseId();
      const input_items = items(5);
      const ids = input_items.map((item) => item.id);
      await store.createResponse({
        workspace_id: ws.id,
        id,
        previous_response_id: null,
        status: 'completed',
        body: {},
        input_items,
      });
      const page = (query: Parameters<Store['listResponseInputItems']>[2]) =>
        store.listResponseInputItems(ws.id, id, query);
      expect(texts(await page({ limit: 2, order: 'asc' }))).toEqual(['item 0', 'item 1']);
      expect((await page({ limit: 2, order: 'asc' }))?.has_more).toBe(true);
      expect((await page({ limit: 5, order: 'asc' }))?.has_more).toBe(false);
      expect(texts(await page({ limit: 2, order: 'asc', after: ids[1] }))).toEqual(['item 2', 'item 3']);
      expect(texts(await page({ limit: 2, order: 'desc' }))).toEqual(['item 4', 'item 3']);
      expect(texts(await page({ limit: 10, order: 'desc', after: ids[3] }))).toEqual([
        'item 2',
        'item 1',
        'item 0',
      ]);
      expect(texts(await page({ limit: 10, order: 'asc', before: ids[2] }))).toEqual(['item 0', 'item 1']);
      // `before` alone is the previous page: the items just before it, in the list's order.
      expect(await page({ limit: 2, order: 'asc', before: ids[4] })).toMatchObject({ has_more: true });
      expect(texts(await page({ limit: 2, order: 'asc', before: ids[4] }))).toEqual(['item 2', 'item 3']);
      expect(texts(await page({ limit: 2, order: 'desc', before: ids[0] }))).toEqual(['item 2', 'item 1']);
      expect(texts(await page({ limit: 10, order: 'asc', after: ids[0], before: ids[4] }))).toEqual([
        'item 1',
        'item 2',
        'item 3',
      ]);
    });

    it('give their whole chain, oldest first, and say where it breaks', async () => {
      const { ws, other } = await newTenant(store, 'Chain');
      const ids = [responseId(), responseId(), responseId(), responseId()];
      const itemsOf = ids.map(() => items(2));
      for (const [n, id] of ids.entries()) {
        await store.createResponse({
          workspace_id: ws.id,
          id,
          previous_response_id: n === 0 ? null : ids[n - 1]!,
          status: 'completed',
          body: { id, output: [{ n }] },
          input_items: itemsOf[n]!,
        });
      }
      const whole = await store.getResponseChain(ws.id, ids[3]!, 100);
      expect(whole.missing).toBeUndefined();
      expect(whole.responses.map((r) => r.id)).toEqual(ids);
      expect(whole.responses.map((r) => r.input_items)).toEqual(itemsOf);
      expect(whole.responses[2]!.body).toEqual({ id: ids[2], output: [{ n: 2 }] });

      const cut = await store.getResponseChain(ws.id, ids[3]!, 2);
      expect(cut.responses.map((r) => r.id)).toEqual(ids.slice(2));
      expect(cut.missing).toBe(ids[1]);

      expect(await store.getResponseChain(other.id, ids[3]!, 100)).toEqual({
        responses: [],
        missing: ids[3],
      });
      await store.deleteResponse(ws.id, ids[1]!);
      const broken = await store.getResponseChain(ws.id, ids[3]!, 100);
      expect(broken.responses.map((r) => r.id)).toEqual(ids.slice(2));
      expect(broken.missing).toBe(ids[1]);
    });

    it('keep their chain and go with their items when deleted', async () => {
      const { ws } = await newTenant(store, 'Chained');
      const first = responseId();
      const second = responseId();
      for (const [id, previous] of [
        [first, null],
        [second, first],
      ] as const) {
        await store.createResponse({
          workspace_id: ws.id,
          id,
          previous_response_id: previous,
          status: 'completed',
          body: { id },
          input_items: items(1),
        });
      }
      expect((await store.getResponse(ws.id, second))?.previous_response_id).toBe(first);
      expect(await store.deleteResponse(ws.id, first)).toBe(true);
      expect(await store.getResponse(ws.id, first)).toBeUndefined();
      expect(await store.listResponseInputItems(ws.id, first, { limit: 20, order: 'asc' })).toBeUndefined();
      const rows = await harness.raw('select count(*) as n from response_input_items where response_id = ?', [
        first,
      ]);
      expect(Number(rows[0]!.n)).toBe(0);
      expect(await store.deleteResponse(ws.id, first)).toBe(false);
    });

    describe('background responses', () => {
      const call = {
        caller: { id: 'key_1', organisation_id: 'org_1', workspace_id: 'ws_1' },
        headers: { authorization: 'Bearer sk-secret-provider-key', 'x-gateway-provider': 'openai' },
        metadata: {},
        trace_id: 'trace-1',
      };

      it('keep their run encrypted, change status only from the statuses named, and keep events in order', async () => {
        const { ws, other } = await newTenant(store, 'Backgrounding');
        const id = responseId();
        const event = (n: number) => ({
          sequence_number: n,
          event: JSON.stringify({ type: 't', sequence_number: n }),
        });
        await store.createResponse({
          workspace_id: ws.id,
          id,
          previous_response_id: null,
          status: 'queued',
          body: { id, status: 'queued' },
          input_items: items(1),
          run: { call, request: { model: 'gpt-4o', stream: true } },
          events: [event(0), event(1)],
        });
        expect(await store.responseRun(ws.id, id)).toEqual({
          call,
          request: { model: 'gpt-4o', stream: true },
        });
        expect(await store.responseRun(other.id, id)).toBeUndefined();
        const [row] = await harness.raw('select call_encrypted from response_runs where response_id = ?', [
          id,
        ]);
        expect(String(row!.call_encrypted)).not.toContain('sk-secret-provider-key');

        await store.appendResponseEvents(id, [event(2), event(3)]);
        expect(await store.lastResponseEvent(id)).toBe(3);
        expect((await store.listResponseEvents(id, 1, 10)).map((e) => e.sequence_number)).toEqual([2, 3]);
        expect((await store.listResponseEvents(id, -1, 2)).map((e) => e.sequence_number)).toEqual([0, 1]);
        expect(await store.lastResponseEvent(responseId())).toBe(-1);

        const running = ['queued', 'in_progress'];
        expect(await store.updateResponse(ws.id, id, { status: 'cancelled', body: { id } }, running)).toBe(
          true,
        );
        expect(
          await store.updateResponse(ws.id, id, { status: 'completed', body: { id } }, ['in_progress']),
        ).toBe(false);
        expect((await store.getResponse(ws.id, id))?.status).toBe('cancelled');

        // Pruned once ended long enough ago; the response itself stays.
        expect(await store.pruneResponseRuns(Date.now() - 60_000)).toBe(0);
        expect(await store.pruneResponseRuns(Date.now() + 1)).toBe(4);
        expect(await store.lastResponseEvent(id)).toBe(-1);
        expect(await store.responseRun(ws.id, id)).toBeUndefined();
        expect((await store.getResponse(ws.id, id))?.status).toBe('cancelled');
      });

      it('keep the runs and events of responses that have not ended, and lose them with their response', async () => {
        const { ws } = await newTenant(store, 'StillRunning');
        const id = responseId();
        await store.createResponse({
          workspace_id: ws.id,
          id,
          previous_response_id: null,
          status: 'in_progress',
          body: { id },
          input_items: [],
          run: { call, request: {} },
          events: [{ sequence_number: 0, event: '{}' }],
        });
        await store.pruneResponseRuns(Date.now() + 1);
        expect(await store.lastResponseEvent(id)).toBe(0);
        expect(await store.responseRun(ws.id, id)).toBeDefined();
        expect(await store.deleteResponse(ws.id, id)).toBe(true);
        expect(await store.lastResponseEvent(id)).toBe(-1);
        const rows = await harness.raw('select count(*) as n from response_runs where response_id = ?', [id]);
        expect(Number(rows[0]!.n)).toBe(0);
      });
    });
  });
}
