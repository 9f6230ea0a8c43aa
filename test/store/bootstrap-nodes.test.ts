/**
 * The first start of several nodes at once on one fresh PostgreSQL schema (replicas started together):
 * one organisation, one default workspace and, without GATEWAY_ADMIN_KEY, one admin key, whichever node
 * makes them; no node fails to start.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { bootstrap } from '../../src/bootstrap.js';
import { openStore } from '../../src/store/index.js';
import type { Store } from '../../src/store/types.js';
import { describeWithPostgres, dropSchema, freshSchemaName, postgresUrl } from '../helpers/postgres.js';

const NODES = 4;

describeWithPostgres('first start of several nodes at once (PostgreSQL)', () => {
  const schema = freshSchemaName('bootstrap_nodes');
  const dataDir = mkdtempSync(join(tmpdir(), 'gateway-bootstrap-'));
  const stores: Store[] = [];
  afterAll(async () => {
    for (const store of stores) await store.close();
    await dropSchema(schema);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('makes one organisation, one workspace and one admin key, whichever node makes them', async () => {
    const masterKey = randomBytes(32);
    for (let i = 0; i < NODES; i++) {
      stores.push(await openStore({ databaseUrl: postgresUrl(), dataDir, masterKey, pgSchema: schema }));
    }
    // The stores are open (migrated): their bootstraps run together.
    const results = await Promise.all(stores.map((store) => bootstrap(store, undefined)));

    const organisations = await stores[0].listOrganisations();
    expect(organisations).toHaveLength(1);
    expect(await stores[0].listWorkspaces(organisations[0].id)).toHaveLength(1);
    expect(new Set(results.map((result) => result.workspace.id)).size).toBe(1);
    expect(results.filter((result) => result.createdKey !== undefined)).toHaveLength(1);
    expect(await stores[0].countApiKeys()).toBe(1);
  });
});
