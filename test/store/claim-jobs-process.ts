/**
 * A separate process claiming jobs from a SQLite store until none is left; prints the ids it got as
 * one JSON line. Run by jobs-sqlite-processes.test.ts: several of these on one file are nodes that
 * share nothing but the database.
 */
import { openStore } from '../../src/store/index.js';

const [dataDir, masterKeyHex, kind, owner] = process.argv.slice(2);
const store = await openStore({ dataDir, masterKey: Buffer.from(masterKeyHex, 'hex') });
const claimed: string[] = [];
try {
  for (let idle = 0; idle < 3;) {
    const jobs = await store.jobs.claim({ kinds: [kind], owner, leaseMs: 60_000, limit: 2 });
    claimed.push(...jobs.map((job) => job.id));
    idle = jobs.length === 0 ? idle + 1 : 0;
  }
} finally {
  await store.close();
}
process.stdout.write(`${JSON.stringify(claimed)}\n`);
