/**
 * A batch's rollup rows: one per period, bucket, dimensions and metadata pair, with the sums of its
 * records, in key order (nodes adding to the same rows lock them in one order).
 */
import { describe, expect, it } from 'vitest';
import { ROLLUP_COLUMNS, rollupValues } from '../../src/store/rollups.js';
import type { LogRecord } from '../../src/store/types.js';

const HOUR = Date.UTC(2026, 10, 26, 10);

function record(over: Partial<LogRecord>): LogRecord {
  return {
    created_at_ms: HOUR,
    workspace_id: 'ws_1',
    provider: 'openai',
    model: 'gpt-4o',
    api_key_id: 'key_1',
    prompt_id: null,
    status: 200,
    is_attempt: false,
    latency_ms: 40,
    prompt_tokens: 10,
    completion_tokens: 5,
    cost: 0.5,
    metadata: {},
    ...over,
  } as LogRecord;
}

const column = (row: unknown[], name: string) => row[ROLLUP_COLUMNS.indexOf(name as never)];

describe('rollupValues', () => {
  it('sums records into one row per period, bucket, dimensions and metadata pair, sorted by key', () => {
    const rows = rollupValues(
      [
        record({ created_at_ms: HOUR + 5 * 60_000, metadata: { team: 'red' } }),
        record({ created_at_ms: HOUR + 65_000, metadata: { team: 'blue' } }),
        record({ created_at_ms: HOUR + 70_000, status: 502, cost: null, metadata: { team: 'red' } }),
        record({ model: 'gpt-4o-mini', created_at_ms: HOUR + 70_000 }),
        record({ is_attempt: true }),
        record({ workspace_id: null }),
      ],
      ['team'],
    );
    const keyOf = (row: unknown[]) =>
      [
        column(row, 'period'),
        column(row, 'bucket_ms'),
        column(row, 'model'),
        column(row, 'status_class'),
        column(row, 'meta_key'),
        column(row, 'meta_value'),
      ].join(' ');
    const keys = rows.map(keyOf);
    // 3 periods × (gpt-4o 2xx at minute 1 and 5, gpt-4o 5xx at minute 1, gpt-4o-mini at minute 1): the
    // minute rows apart, the hour and day rows merged across minutes; each with its metadata rows.
    const minute1 = HOUR + 60_000;
    const minute5 = HOUR + 5 * 60_000;
    const day = Date.UTC(2026, 10, 26);
    // The hour's and the day's rows: one bucket each, every dimension and metadata pair of the batch.
    const merged = (period: string, bucket: number) => [
      `${period} ${bucket} gpt-4o 2  `,
      `${period} ${bucket} gpt-4o 2 team blue`,
      `${period} ${bucket} gpt-4o 2 team red`,
      `${period} ${bucket} gpt-4o 5  `,
      `${period} ${bucket} gpt-4o 5 team red`,
      `${period} ${bucket} gpt-4o-mini 2  `,
    ];
    expect(keys).toEqual([
      ...merged('day', day),
      ...merged('hour', HOUR),
      `minute ${minute1} gpt-4o 2  `,
      `minute ${minute1} gpt-4o 2 team blue`,
      `minute ${minute1} gpt-4o 5  `,
      `minute ${minute1} gpt-4o 5 team red`,
      `minute ${minute1} gpt-4o-mini 2  `,
      `minute ${minute5} gpt-4o 2  `,
      `minute ${minute5} gpt-4o 2 team red`,
    ]);
    const hour2xx = rows.find((row) => keyOf(row) === `hour ${HOUR} gpt-4o 2  `)!;
    expect(column(hour2xx, 'requests')).toBe(2);
    expect(column(hour2xx, 'errors')).toBe(0);
    expect(column(hour2xx, 'prompt_tokens')).toBe(20);
    expect(column(hour2xx, 'cost')).toBe(1);
    expect(column(hour2xx, 'priced')).toBe(2);
    expect(column(hour2xx, 'latency_ms_sum')).toBe(80);
    const day5xx = rows.find((row) => keyOf(row) === `day ${day} gpt-4o 5  `)!;
    expect(column(day5xx, 'requests')).toBe(1);
    expect(column(day5xx, 'errors')).toBe(1);
    expect(column(day5xx, 'priced')).toBe(0);
  });
});
