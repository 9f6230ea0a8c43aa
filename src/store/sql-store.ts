/**
 * The Store over Kysely: one class for SQLite and PostgreSQL. Every query on tenant data names the
 * workspace, so a caller holding workspace A's id can never read or change a row of workspace B.
 * Credentials and configs are soft-deleted (logs keep naming them); API keys are deleted outright.
 */
import type { Kysely, Selectable, Transaction } from 'kysely';
import { GatewayError } from '../core/errors.js';
import { apiKeyDisplayPrefix, assertUsableApiKeyValue, generateApiKeyValue } from './api-key-value.js';
import { decryptSecret, encryptSecret, hashApiKeyValue, type StoreKeys } from './crypto.js';
import { isUniqueViolation } from './db-errors.js';
import { newId, newOrganisationId } from './ids.js';
import { getLog, insertLogs, listLogs } from './log-queries.js';
import { runMigrations } from './migrate.js';
import {
  toApiKey,
  toConfig,
  toConfigVersion,
  toCredential,
  toLogRow,
  toNumber,
  toOrganisation,
  toWorkspace,
} from './rows.js';
import type { SqliteLogThread } from './sqlite-log-thread.js';

type LogRow = Record<string, string | number | null>;
import type { ConfigsTable, CredentialsTable, Database } from './schema.js';
import type {
  ApiKey,
  LogQuery,
  LogRecord,
  Organisation,
  Page,
  ProviderCredential,
  Role,
  Store,
  StoredConfig,
  StoredConfigVersion,
  Workspace,
} from './types.js';

type CredentialKind = ProviderCredential['kind'];

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** An id match wins over a slug match, should someone choose another row's id as a slug. */
function preferIdMatch<Row extends { id: string }>(rows: Row[], slugOrId: string): Row | undefined {
  return rows.find((row) => row.id === slugOrId) ?? rows[0];
}

export class SqlStore implements Store {
  readonly kind: 'sqlite' | 'postgres';
  private readonly db: Kysely<Database>;
  private readonly keys: StoreKeys;

  /** SQLite only: log inserts go to a worker thread so they never stall the event loop. */
  private readonly logThread: SqliteLogThread | undefined;

  constructor(
    db: Kysely<Database>,
    kind: 'sqlite' | 'postgres',
    keys: StoreKeys,
    logThread?: SqliteLogThread,
  ) {
    this.db = db;
    this.kind = kind;
    this.keys = keys;
    this.logThread = logThread;
  }

  migrate(): Promise<void> {
    return runMigrations(this.db, this.kind);
  }

  async close(): Promise<void> {
    await this.logThread?.close();
    await this.db.destroy();
  }

  // Organisations and workspaces

  async createOrganisation(input: { name: string }): Promise<Organisation> {
    const organisation: Organisation = {
      id: newOrganisationId(),
      name: input.name,
      created_at: nowSeconds(),
    };
    await this.db.insertInto('organisations').values(organisation).execute();
    return organisation;
  }

  async getOrganisation(id: string): Promise<Organisation | undefined> {
    const row = await this.db.selectFrom('organisations').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toOrganisation(row) : undefined;
  }

  async listOrganisations(): Promise<Organisation[]> {
    const rows = await this.db
      .selectFrom('organisations')
      .selectAll()
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(toOrganisation);
  }

  async createWorkspace(input: { organisation_id: string; name: string; slug: string }): Promise<Workspace> {
    const workspace: Workspace = { id: newId('ws'), ...input, created_at: nowSeconds() };
    await this.insertOrConflict(
      () => this.db.insertInto('workspaces').values(workspace).execute(),
      `A workspace with slug '${input.slug}' already exists`,
    );
    return workspace;
  }

  async getWorkspace(id: string): Promise<Workspace | undefined> {
    const row = await this.db.selectFrom('workspaces').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toWorkspace(row) : undefined;
  }

  async listWorkspaces(organisation_id: string): Promise<Workspace[]> {
    const rows = await this.db
      .selectFrom('workspaces')
      .selectAll()
      .where('organisation_id', '=', organisation_id)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(toWorkspace);
  }

  // API keys

  /**
   * With `value` given and already stored, the existing key is returned unchanged (whatever its
   * workspace or status): starting the gateway again with the same GATEWAY_ADMIN_KEY, or several
   * nodes starting at once, must not fail.
   */
  async createApiKey(input: {
    organisation_id: string;
    workspace_id: string;
    name: string;
    role: Role;
    expires_at?: number | null;
    metadata?: Record<string, string>;
    value?: string;
  }): Promise<{ key: ApiKey; value: string }> {
    if (input.value !== undefined) assertUsableApiKeyValue(input.value);
    await this.assertWorkspaceOf(input.organisation_id, input.workspace_id);
    const value = input.value ?? generateApiKeyValue();
    const keyHash = hashApiKeyValue(this.keys.apiKeyHash, value);
    const now = nowSeconds();
    const row = {
      id: newId('key'),
      organisation_id: input.organisation_id,
      workspace_id: input.workspace_id,
      name: input.name,
      role: input.role,
      key_hash: keyHash,
      key_prefix: apiKeyDisplayPrefix(value),
      status: 'active',
      created_at: now,
      updated_at: now,
      expires_at: input.expires_at ?? null,
      last_used_at: null,
      metadata: JSON.stringify(input.metadata ?? {}),
    };
    try {
      await this.db.insertInto('api_keys').values(row).execute();
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      const existing = await this.findApiKeyByValue(value);
      if (!existing) throw error;
      return { key: existing, value };
    }
    return { key: toApiKey(row), value };
  }

  async findApiKeyByValue(value: string): Promise<ApiKey | undefined> {
    const row = await this.db
      .selectFrom('api_keys')
      .selectAll()
      .where('key_hash', '=', hashApiKeyValue(this.keys.apiKeyHash, value))
      .executeTakeFirst();
    return row ? toApiKey(row) : undefined;
  }

  async getApiKey(workspace_id: string, id: string): Promise<ApiKey | undefined> {
    const row = await this.db
      .selectFrom('api_keys')
      .selectAll()
      .where('workspace_id', '=', workspace_id)
      .where('id', '=', id)
      .executeTakeFirst();
    return row ? toApiKey(row) : undefined;
  }

  async listApiKeys(workspace_id: string): Promise<ApiKey[]> {
    const rows = await this.db
      .selectFrom('api_keys')
      .selectAll()
      .where('workspace_id', '=', workspace_id)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(toApiKey);
  }

  async updateApiKey(
    workspace_id: string,
    id: string,
    patch: Partial<Pick<ApiKey, 'name' | 'role' | 'status' | 'expires_at' | 'metadata'>>,
  ): Promise<ApiKey | undefined> {
    const row = await this.db
      .updateTable('api_keys')
      .set({
        ...(patch.name !== undefined && { name: patch.name }),
        ...(patch.role !== undefined && { role: patch.role }),
        ...(patch.status !== undefined && { status: patch.status }),
        ...(patch.expires_at !== undefined && { expires_at: patch.expires_at }),
        ...(patch.metadata !== undefined && { metadata: JSON.stringify(patch.metadata) }),
        updated_at: nowSeconds(),
      })
      .where('workspace_id', '=', workspace_id)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
    return row ? toApiKey(row) : undefined;
  }

  async deleteApiKey(workspace_id: string, id: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('api_keys')
      .where('workspace_id', '=', workspace_id)
      .where('id', '=', id)
      .executeTakeFirst();
    return toNumber(result.numDeletedRows) > 0;
  }

  async countApiKeys(): Promise<number> {
    const row = await this.db
      .selectFrom('api_keys')
      .select((eb) => eb.fn.countAll<number | string>().as('count'))
      .executeTakeFirstOrThrow();
    return toNumber(row.count);
  }

  async touchApiKey(id: string, at: number): Promise<void> {
    // Never move last_used_at backwards when touches from several nodes arrive out of order.
    await this.db
      .updateTable('api_keys')
      .set({ last_used_at: at })
      .where('id', '=', id)
      .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', at)]))
      .execute();
  }

  // Provider credentials

  async createCredential(
    input: Pick<
      ProviderCredential,
      'workspace_id' | 'organisation_id' | 'kind' | 'slug' | 'name' | 'provider' | 'secret'
    >,
  ): Promise<ProviderCredential> {
    await this.assertWorkspaceOf(input.organisation_id, input.workspace_id);
    const now = nowSeconds();
    const id = newId(input.kind === 'virtual_key' ? 'vk' : 'prv');
    const row = {
      id,
      organisation_id: input.organisation_id,
      workspace_id: input.workspace_id,
      kind: input.kind,
      slug: input.slug,
      name: input.name,
      provider: input.provider,
      secret_encrypted: this.encryptCredentialSecret(id, input.secret),
      status: 'active',
      created_at: now,
      updated_at: now,
      deleted_at: null,
    };
    await this.insertOrConflict(
      () => this.db.insertInto('credentials').values(row).execute(),
      `A ${input.kind === 'virtual_key' ? 'virtual key' : 'provider'} with slug '${input.slug}' already exists`,
    );
    return toCredential(row, structuredClone(input.secret));
  }

  async getCredential(
    workspace_id: string,
    kind: CredentialKind,
    slugOrId: string,
  ): Promise<ProviderCredential | undefined> {
    const row = await this.findCredentialRow(this.db, workspace_id, kind, slugOrId);
    return row ? this.decryptCredential(row) : undefined;
  }

  async listCredentials(workspace_id: string, kind: CredentialKind): Promise<ProviderCredential[]> {
    const rows = await this.db
      .selectFrom('credentials')
      .selectAll()
      .where('workspace_id', '=', workspace_id)
      .where('kind', '=', kind)
      .where('deleted_at', 'is', null)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map((row) => this.decryptCredential(row));
  }

  async updateCredential(
    workspace_id: string,
    kind: CredentialKind,
    slugOrId: string,
    patch: Partial<Pick<ProviderCredential, 'name' | 'provider' | 'secret' | 'status'>>,
  ): Promise<ProviderCredential | undefined> {
    const current = await this.findCredentialRow(this.db, workspace_id, kind, slugOrId);
    if (!current) return undefined;
    const row = await this.db
      .updateTable('credentials')
      .set({
        ...(patch.name !== undefined && { name: patch.name }),
        ...(patch.provider !== undefined && { provider: patch.provider }),
        ...(patch.status !== undefined && { status: patch.status }),
        ...(patch.secret !== undefined && {
          secret_encrypted: this.encryptCredentialSecret(current.id, patch.secret),
        }),
        updated_at: nowSeconds(),
      })
      .where('workspace_id', '=', workspace_id)
      .where('id', '=', current.id)
      .where('deleted_at', 'is', null)
      .returningAll()
      .executeTakeFirst();
    return row ? this.decryptCredential(row) : undefined;
  }

  async deleteCredential(workspace_id: string, kind: CredentialKind, slugOrId: string): Promise<boolean> {
    const current = await this.findCredentialRow(this.db, workspace_id, kind, slugOrId);
    return current ? this.softDelete('credentials', workspace_id, current.id) : false;
  }

  // Stored configs

  async createConfig(
    input: Pick<StoredConfig, 'workspace_id' | 'organisation_id' | 'slug' | 'name' | 'config'>,
  ): Promise<StoredConfig> {
    await this.assertWorkspaceOf(input.organisation_id, input.workspace_id);
    const now = nowSeconds();
    const id = newId('cfg');
    const configText = this.encryptConfig(id, input.config);
    const row = {
      id,
      organisation_id: input.organisation_id,
      workspace_id: input.workspace_id,
      slug: input.slug,
      name: input.name,
      config: configText,
      version: 1,
      status: 'active',
      created_at: now,
      updated_at: now,
      deleted_at: null,
    };
    await this.insertOrConflict(
      () =>
        this.db.transaction().execute(async (trx) => {
          await trx.insertInto('configs').values(row).execute();
          await trx
            .insertInto('config_versions')
            .values({ config_id: row.id, version: 1, config: configText, created_at: now })
            .execute();
        }),
      `A config with slug '${input.slug}' already exists`,
    );
    return toConfig(row, input.config);
  }

  async getConfig(workspace_id: string, slugOrId: string): Promise<StoredConfig | undefined> {
    const row = await this.findConfigRow(this.db, workspace_id, slugOrId);
    return row ? this.decryptConfigRow(row) : undefined;
  }

  async listConfigs(workspace_id: string): Promise<StoredConfig[]> {
    const rows = await this.db
      .selectFrom('configs')
      .selectAll()
      .where('workspace_id', '=', workspace_id)
      .where('deleted_at', 'is', null)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map((row) => this.decryptConfigRow(row));
  }

  /** Every `config` given makes a new version, even one equal to the current config. */
  async updateConfig(
    workspace_id: string,
    slugOrId: string,
    patch: Partial<Pick<StoredConfig, 'name' | 'config' | 'status'>>,
  ): Promise<StoredConfig | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const current = await this.findConfigRow(trx, workspace_id, slugOrId);
      if (!current) return undefined;
      const now = nowSeconds();
      const configText =
        patch.config !== undefined ? this.encryptConfig(current.id, patch.config) : undefined;
      // Incrementing in the UPDATE (not from the value read above) keeps two concurrent updates
      // from claiming the same version number.
      const row = await trx
        .updateTable('configs')
        .set((eb) => ({
          ...(patch.name !== undefined && { name: patch.name }),
          ...(patch.status !== undefined && { status: patch.status }),
          ...(configText !== undefined && { config: configText, version: eb('version', '+', 1) }),
          updated_at: now,
        }))
        .where('workspace_id', '=', workspace_id)
        .where('id', '=', current.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      if (configText !== undefined) {
        await trx
          .insertInto('config_versions')
          .values({ config_id: row.id, version: row.version, config: configText, created_at: now })
          .execute();
      }
      return this.decryptConfigRow(row);
    });
  }

  /** Oldest first. */
  async listConfigVersions(workspace_id: string, slugOrId: string): Promise<StoredConfigVersion[]> {
    const config = await this.findConfigRow(this.db, workspace_id, slugOrId);
    if (!config) return [];
    const rows = await this.db
      .selectFrom('config_versions')
      .selectAll()
      .where('config_id', '=', config.id)
      .orderBy('version')
      .execute();
    return rows.map((row) => toConfigVersion(row, this.decryptConfig(row.config_id, row.config)));
  }

  async deleteConfig(workspace_id: string, slugOrId: string): Promise<boolean> {
    const current = await this.findConfigRow(this.db, workspace_id, slugOrId);
    return current ? this.softDelete('configs', workspace_id, current.id) : false;
  }

  // Logs

  insertLogs(records: LogRecord[]): Promise<void> {
    if (this.logThread) return this.logThread.insert(records.map((record) => toLogRow(record) as LogRow));
    return insertLogs(this.db, records);
  }

  getLog(workspace_id: string, id: string): Promise<LogRecord | undefined> {
    return getLog(this.db, workspace_id, id);
  }

  listLogs(query: LogQuery): Promise<Page<LogRecord>> {
    return listLogs(this.db, this.kind, query);
  }

  // Helpers

  private async assertWorkspaceOf(organisationId: string, workspaceId: string): Promise<void> {
    const row = await this.db
      .selectFrom('workspaces')
      .select('id')
      .where('id', '=', workspaceId)
      .where('organisation_id', '=', organisationId)
      .executeTakeFirst();
    if (!row) {
      throw new GatewayError(
        'not_found',
        `Workspace ${workspaceId} does not exist in organisation ${organisationId}`,
      );
    }
  }

  private async insertOrConflict(insert: () => Promise<unknown>, message: string): Promise<void> {
    try {
      await insert();
    } catch (error) {
      if (isUniqueViolation(error)) throw new GatewayError('conflict', message, { cause: error });
      throw error;
    }
  }

  /** Credentials and configs stay as rows once deleted: logs keep naming them. */
  private async softDelete(
    table: 'credentials' | 'configs',
    workspaceId: string,
    id: string,
  ): Promise<boolean> {
    const result = await this.db
      .updateTable(table)
      .set({ deleted_at: nowSeconds() })
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return toNumber(result.numUpdatedRows) > 0;
  }

  private async findCredentialRow(
    db: Kysely<Database> | Transaction<Database>,
    workspaceId: string,
    kind: CredentialKind,
    slugOrId: string,
  ): Promise<Selectable<CredentialsTable> | undefined> {
    const rows = await db
      .selectFrom('credentials')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('kind', '=', kind)
      .where('deleted_at', 'is', null)
      .where((eb) => eb.or([eb('id', '=', slugOrId), eb('slug', '=', slugOrId)]))
      .limit(2)
      .execute();
    return preferIdMatch(rows, slugOrId);
  }

  private async findConfigRow(
    db: Kysely<Database> | Transaction<Database>,
    workspaceId: string,
    slugOrId: string,
  ): Promise<Selectable<ConfigsTable> | undefined> {
    const rows = await db
      .selectFrom('configs')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('deleted_at', 'is', null)
      .where((eb) => eb.or([eb('id', '=', slugOrId), eb('slug', '=', slugOrId)]))
      .limit(2)
      .execute();
    return preferIdMatch(rows, slugOrId);
  }

  /** Stored configs may carry provider credentials: they are encrypted at rest like credentials are. */
  private encryptConfig(id: string, config: Record<string, unknown>): string {
    return encryptSecret(this.keys.encryption, JSON.stringify(config), id);
  }

  private decryptConfig(id: string, text: string): Record<string, unknown> {
    return JSON.parse(decryptSecret(this.keys.encryption, text, id)) as Record<string, unknown>;
  }

  private decryptConfigRow(row: Selectable<ConfigsTable>): StoredConfig {
    return toConfig(row, this.decryptConfig(row.id, row.config));
  }

  private encryptCredentialSecret(id: string, secret: ProviderCredential['secret']): string {
    return encryptSecret(this.keys.encryption, JSON.stringify(secret), id);
  }

  private decryptCredential(row: Selectable<CredentialsTable>): ProviderCredential {
    const secret = JSON.parse(
      decryptSecret(this.keys.encryption, row.secret_encrypted, row.id),
    ) as ProviderCredential['secret'];
    return toCredential(row, secret);
  }
}
