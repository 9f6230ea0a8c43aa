/** Filters on a metadata column (a JSON object of strings, as text) in both dialects. */
import { sql, type Expression, type SqlBool } from 'kysely';
import type { StoreKind } from '../types.js';

/**
 * Exact key/value match inside the metadata JSON text of `column` (`table.column`). Key and value are
 * bound parameters in both forms, so any characters in them are safe and matched literally.
 */
export function metadataEquals(
  kind: StoreKind,
  column: string,
  key: string,
  value: string,
): Expression<SqlBool> {
  if (kind === 'postgres') {
    return sql<SqlBool>`cast(${sql.ref(column)} as jsonb) @> jsonb_build_object(cast(${key} as text), cast(${value} as text))`;
  }
  return sql<SqlBool>`exists (select 1 from json_each(${sql.ref(column)}) as m where m.key = ${key} and m.type = 'text' and m.value = ${value})`;
}
