/**
 * An analytics query on the reader thread calls its stop point for each rollup row it reads, and for each
 * it sums: a GROUP BY sorts the rows read, then sums them in order, in SQLite's C code, a fifth of the
 * query on 300,000 rows, during which a stopped read ran on (556 ms after its last stop point). Told by
 * the statement's program: every loop over sorted rows that sums (AggStep) calls stop_point, and the
 * answers are the same with the calls as without.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SQLITE_FILE } from '../../src/store/connect.js';
import { openStore } from '../../src/store/index.js';
import { analyticsSql } from '../../src/store/repositories/analytics.js';
import { ROLLUP_COLUMNS, ROLLUP_SUM_COLUMNS } from '../../src/store/rollups.js';
import type { Database as Schema } from '../../src/store/schema.js';
import { STOP_POINT } from '../../src/store/sqlite-log-reader.js';
import type { AnalyticsQuery } from '../../src/store/types.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

let file: Database.Database;
let db: Kysely<Schema>;

beforeAll(async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'analytics-stop-points-'));
  await (await openStore({ dataDir, masterKey: randomBytes(32) })).close();
  file = new Database(join(dataDir, SQLITE_FILE));
  file.function(STOP_POINT, { deterministic: false }, () => 1);
  // Hourly and daily rows of 30 `_user` values over three days.
  const sums = ROLLUP_SUM_COLUMNS.map((column) => (column === 'requests' ? 'u.i' : '1')).join(', ');
  for (const [period, count, size] of [
    ['hour', 72, HOUR],
    ['day', 3, DAY],
  ] as const) {
    file
      .prepare(
        `with recursive u(i) as (select 1 union all select i + 1 from u where i < 30),
           b(i) as (select 0 union all select i + 1 from b where i < ? - 1)
         insert into log_rollups (${ROLLUP_COLUMNS.map((c) => `"${c}"`).join(', ')})
         select 'ws', ?, b.i * ?, 'openai', 'gpt-4o', 'key', '', 2, '_user', 'user-' || u.i, ${sums}
         from u, b`,
      )
      .run(count, period, size);
  }
  db = new Kysely<Schema>({ dialect: new SqliteDialect({ database: file }) });
});

afterAll(async () => {
  await db?.destroy();
});

const base = {
  workspace_ids: ['ws'],
  period: 'hour',
  from_ms: 0,
  to_ms: 72 * HOUR,
  filters: {},
} satisfies AnalyticsQuery;

const queries: [string, AnalyticsQuery][] = [
  ['a summary of the top groups', { ...base, group_by: { metadata: '_user' }, group_limit: 5 }],
  [
    'a timeseries of the top groups',
    { ...base, interval_ms: 6 * HOUR, group_by: { metadata: '_user' }, group_limit: 5 },
  ],
  ['a summary of every group', { ...base, group_by: { metadata: '_user' } }],
  ['a timeseries', { ...base, interval_ms: HOUR }],
  [
    'a summary over whole days',
    {
      ...base,
      from_ms: 12 * HOUR,
      to_ms: 60 * HOUR,
      whole_days: { from_ms: DAY, to_ms: 2 * DAY },
      group_by: { metadata: '_user' },
      group_limit: 3,
    },
  ],
];

interface Op {
  addr: number;
  opcode: string;
  p4: string | null;
}

it.each(queries)('calls the stop point for each row it sums (%s)', (_name, query) => {
  const compiled = analyticsSql(query, true).compile(db);
  const parameters = compiled.parameters as unknown[];
  const program = file.prepare(`explain ${compiled.sql}`).all(...parameters) as Op[];
  // The loops over a sorter's rows: from its SorterData to the next SorterNext.
  const loops: Op[][] = [];
  let loop: Op[] | undefined;
  for (const op of program) {
    if (op.opcode === 'SorterData') loop = [];
    else if (op.opcode === 'SorterNext' && loop) {
      loops.push(loop);
      loop = undefined;
    } else loop?.push(op);
  }
  const summing = loops.filter((ops) => ops.some((op) => op.opcode === 'AggStep'));
  expect(summing.length).toBeGreaterThan(0);
  for (const ops of summing) {
    expect(ops.some((op) => op.opcode === 'Function' && op.p4?.startsWith(`${STOP_POINT}(`))).toBe(true);
  }
  // The same answer as without the stop points (the main connection's).
  const plain = analyticsSql(query, false).compile(db);
  expect(file.prepare(compiled.sql).all(...parameters)).toEqual(
    file.prepare(plain.sql).all(...(plain.parameters as unknown[])),
  );
});
