/**
 * The metadata search's case folding on SQLite: SQLite's own lower() for text in ASCII, the JavaScript
 * folding (a function called back from SQLite for each key and value) only for text outside it.
 */
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { UNICODE_LOWER } from '../../src/store/connect.js';
import { metadataContains } from '../../src/store/repositories/metadata-filter.js';

interface Tables {
  logs: { id: string; metadata: string };
}

const METADATA: Record<string, Record<string, string>> = {
  ascii: { Team: 'Alpha-RED', region: 'eu' },
  accented: { team: 'ÉQUIPE' },
  kelvin: { unit: '300\u212A' },
  escaped: { path: 'C:\\Temp', quote: 'say "Hi"', line: 'a\nb' },
  numberless: {},
};

describe('metadataContains on SQLite', () => {
  let database: BetterSqlite3.Database | undefined;
  afterEach(() => database?.close());

  function open() {
    database = new BetterSqlite3(':memory:');
    let calls = 0;
    const lowered: string[] = [];
    // SQLite's own lower(), counted: which texts the search folded.
    database.function('lower', { deterministic: true }, (value: unknown) => {
      lowered.push(String(value));
      return value === null || value === undefined
        ? null
        : String(value).replace(/[A-Z]+/g, (t) => t.toLowerCase());
    });
    database.function(UNICODE_LOWER, { deterministic: true }, (value: unknown) => {
      calls += 1;
      return value === null || value === undefined ? null : String(value).toLowerCase();
    });
    database.exec('create table logs (id text primary key, metadata text)');
    const insert = database.prepare('insert into logs (id, metadata) values (?, ?)');
    for (const [id, metadata] of Object.entries(METADATA)) insert.run(id, JSON.stringify(metadata));
    const db = new Kysely<Tables>({ dialect: new SqliteDialect({ database }) });
    const search = async (text: string) => {
      calls = 0;
      lowered.length = 0;
      const rows = await db
        .selectFrom('logs')
        .select('id')
        .where(metadataContains('sqlite', 'logs.metadata', text))
        .orderBy('id')
        .execute();
      return { ids: rows.map((row) => row.id), calls, lowered: [...lowered] };
    };
    return search;
  }

  it('finds text in any case, outside ASCII too', async () => {
    const search = open();
    expect((await search('alpha-red')).ids).toEqual(['ascii']);
    expect((await search('TEAM')).ids).toEqual(['accented', 'ascii']);
    expect((await search('équipe')).ids).toEqual(['accented']);
    expect((await search('ÉQUIPE')).ids).toEqual(['accented']);
    // The Kelvin sign folds to an ASCII "k", as JavaScript and PostgreSQL fold it.
    expect((await search('300k')).ids).toEqual(['kelvin']);
    expect((await search('%')).ids).toEqual([]);
    // Escaped in the JSON text: found as the value holds them.
    expect((await search('c:\\temp')).ids).toEqual(['escaped']);
    expect((await search('say "hi"')).ids).toEqual(['escaped']);
    expect((await search('a\nb')).ids).toEqual(['escaped']);
    // Across a key and its value in the JSON text, but in neither.
    expect((await search('":"')).ids).toEqual([]);
    expect((await search('region":"eu')).ids).toEqual([]);
  });

  it('parses no metadata whose JSON text cannot hold the text', async () => {
    const search = open();
    const { ids, lowered } = await search('no-such-text');
    expect(ids).toEqual([]);
    // The ASCII record's JSON text was folded whole, and none of its keys or values one by one.
    expect(lowered).toContain(JSON.stringify(METADATA.ascii));
    for (const text of ['Team', 'Alpha-RED', 'region', 'eu']) expect(lowered).not.toContain(text);
  });

  it('calls the JavaScript folding only for text outside ASCII', async () => {
    const search = open();
    // Values outside ASCII: two.
    expect((await search('no-such-text')).calls).toBe(2);
  });
});
