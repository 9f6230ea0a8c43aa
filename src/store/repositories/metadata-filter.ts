/** Filters on a metadata column (a JSON object of strings, as text) in both dialects. */
import { sql, type Expression, type RawBuilder, type SqlBool } from 'kysely';
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

/**
 * Case-insensitive substring search over the keys and values of the metadata JSON text of `column`.
 * `instr` / `strpos` rather than LIKE, so `%` and `_` in the text are matched literally with no escaping.
 */
export function metadataContains(kind: StoreKind, column: string, text: string): Expression<SqlBool> {
  const needle = text.toLowerCase();
  if (kind === 'postgres') {
    return sql<SqlBool>`exists (select 1 from jsonb_each_text(cast(${sql.ref(column)} as jsonb)) as m where strpos(lower(m.key), ${needle}) > 0 or strpos(lower(m.value), ${needle}) > 0)`;
  }
  const json = sql.ref(column);
  return sql<SqlBool>`(${mayContain(json, needle)} and exists (select 1 from json_each(${json}) as m where ${foldedContains(sql.ref('m.key'), needle)} or ${foldedContains(sql.ref('m.value'), needle)}))`;
}

/**
 * Whether a key or value of the metadata JSON text `json` may hold `needle`, read from the text itself, in
 * C, before json_each parses it (most of a search's time). JSON text in ASCII with no escape (no `\`) holds
 * its keys and values as they are, so one that holds the needle puts it in the folded text too; any other
 * text may hold it and is looked at key by key.
 */
function mayContain(json: RawBuilder<unknown>, needle: string): RawBuilder<SqlBool> {
  return sql<SqlBool>`(instr(lower(${json}), ${needle}) > 0 or instr(${json}, ${'\\'}) > 0 or length(cast(${json} as blob)) <> length(${json}))`;
}

/**
 * Whether `needle` (folded already) is in `text` folded as JavaScript folds it. SQLite's lower() folds ASCII
 * letters only, which is the whole folding of text written in ASCII, in C. Text outside ASCII (its UTF-8
 * longer than its count of characters) goes to unicode_lower (connect.ts), a JavaScript function called
 * back from SQLite for each value: "ÉQUIPE" is found by "équipe", the Kelvin sign by "k". Searches scan
 * every record of a workspace, nearly all in ASCII, and the call back cost a quarter of their time.
 */
function foldedContains(text: RawBuilder<unknown>, needle: string): RawBuilder<SqlBool> {
  return sql<SqlBool>`(instr(lower(${text}), ${needle}) > 0 or (length(cast(${text} as blob)) <> length(${text}) and instr(unicode_lower(${text}), ${needle}) > 0))`;
}
