/**
 * What a config version names now also counts what it asks through the gateway's own routing: the
 * virtual key or stored config its semantic cache embeds through (`cache.embedding`), and the ones its
 * model-judged checks (`default.modelJudge`) ask their judge through. The versions 0026 recorded were read
 * without those, so every config and prompt version (an inline config names them too) is marked unrecorded
 * again: each is read once more and its names recorded, as 0026's were, when something of its workspace
 * is next deleted. Recording adds to what is there, so nothing is missing meanwhile that was found before.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const versions of ['config_versions', 'prompt_versions']) {
    await sql`update ${sql.table(versions)} set references_indexed = 0`.execute(db);
  }
}

export async function down(): Promise<void> {
  // Recorded names stay true of their versions: nothing to undo.
}
