/**
 * A rate-limit policy's `workspace_id` condition names workspaces by id, which is what a call's
 * `workspace_id` is: a value or exclusion written as a slug has been stored as the workspace's id since
 * the API converts it, but one stored before never matched a call, and its policy governed nothing. Each
 * such slug of a live workspace of the policy's organisation is written as that workspace's id here.
 * `*`, `…/*` and what names no workspace stay as they are (the API refuses the latter now).
 */
import { sql, type Kysely } from 'kysely';

interface Condition {
  key?: unknown;
  value?: unknown;
  excludes?: unknown;
}

export async function up(db: Kysely<unknown>): Promise<void> {
  const { rows: policies } = await sql<{ id: string; organisation_id: string; conditions: string }>`
    select id, organisation_id, conditions from rate_limit_policies where conditions like ${'%workspace_id%'}
  `.execute(db);
  const slugsByOrganisation = new Map<string, Map<string, string>>();
  const slugsOf = async (organisationId: string): Promise<Map<string, string>> => {
    let slugs = slugsByOrganisation.get(organisationId);
    if (!slugs) {
      const { rows } = await sql<{ id: string; slug: string }>`
        select id, slug from workspaces where organisation_id = ${organisationId} and deleted_at is null
      `.execute(db);
      slugs = new Map(rows.map((w) => [w.slug, w.id]));
      // A value that is a workspace's id stays that id, even were it another's slug.
      for (const { id } of rows) slugs.delete(id);
      slugsByOrganisation.set(organisationId, slugs);
    }
    return slugs;
  };
  for (const policy of policies) {
    let conditions: Condition[];
    try {
      conditions = JSON.parse(policy.conditions) as Condition[];
    } catch {
      continue;
    }
    if (!Array.isArray(conditions)) continue;
    const slugs = await slugsOf(policy.organisation_id);
    let changed = false;
    const idOf = (name: unknown): unknown => {
      const id = typeof name === 'string' ? slugs.get(name) : undefined;
      if (id === undefined) return name;
      changed = true;
      return id;
    };
    const ids = (value: unknown): unknown => (Array.isArray(value) ? value.map(idOf) : idOf(value));
    const converted = conditions.map((condition) =>
      condition?.key !== 'workspace_id'
        ? condition
        : {
            ...condition,
            value: ids(condition.value),
            ...(condition.excludes !== undefined && { excludes: ids(condition.excludes) }),
          },
    );
    if (!changed) continue;
    await sql`update rate_limit_policies set conditions = ${JSON.stringify(converted)} where id = ${policy.id}`.execute(
      db,
    );
  }
}

export async function down(): Promise<void> {
  // A slug written as its workspace's id names the same workspace: nothing to undo.
}
