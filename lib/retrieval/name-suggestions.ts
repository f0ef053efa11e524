/**
 * The one statement a domain runs to suggest its entities by name as the caller types
 * (`searchSuggestions`): names that start with the prefix, in key order (shorter completions
 * of a common stem first), then, only if those are too few, names with a later word that
 * starts with it, most recently changed first among the first few found. Each domain names its
 * table, columns and who may see a row; the matching is the same for every domain, here.
 *
 * Matching is literal. The key column is search_suggestion_key(name) (SQL, migration
 * 20261203130000_search_suggestions: lower-cased, whitespace collapsed), stored COLLATE "C" and
 * indexed with the organization; "starts with p" is the byte-wise range [p, p || U+10FFFF) of
 * that index, read in index order for `limit` entries whatever the organization's size. No
 * LIKE: `%`, `_` and `\` are plain characters. A later word is `strpos(' ' || key, ' ' || p)`
 * over the organization's keys, stopped at LATER_WORD_CANDIDATES × limit matches; it scans,
 * because no index condition but a leakproof comparison of a plain column survives row-level
 * security (see the migration).
 */
import { Prisma } from "../../generated/prisma/client.js";

export interface NameSuggestionSource {
  /** The table, its id, name, key and last-change columns: constants of the domain, never user input. */
  table: string;
  nameColumn: string;
  /** The stored search_suggestion_key(name) column, COLLATE "C", indexed after organization_id. */
  keyColumn: string;
  updatedColumn: string;
  /** Who may see a row, beside the organization (row-level security adds that too). */
  visible: Prisma.Sql;
}

export interface NameSuggestionRow {
  id: string;
  text: string;
  at_start: boolean;
  updated_at: Date;
}

/** Later-word matches ordered by recency, per suggestion asked: a bound on the rows read, not a ranking. */
const LATER_WORD_CANDIDATES = 4;

export function nameSuggestionStatement(source: NameSuggestionSource, organizationId: string, prefix: string, limit: number): Prisma.Sql {
  const table = Prisma.raw(source.table);
  const name = Prisma.raw(source.nameColumn);
  const updated = Prisma.raw(source.updatedColumn);
  const key = Prisma.raw(source.keyColumn);
  return Prisma.sql`
    WITH starts AS (
      SELECT id::text AS id, ${name} AS text, true AS at_start, ${updated} AS updated_at
      FROM ${table}
      WHERE organization_id = ${organizationId} AND ${source.visible}
        AND ${key} >= (search_suggestion_key(${prefix}::text) COLLATE "C")
        AND ${key} < ((search_suggestion_key(${prefix}::text) || chr(1114111)) COLLATE "C")
      ORDER BY ${key}
      LIMIT ${limit}
    ), later_words AS (
      SELECT * FROM (
        SELECT id::text AS id, ${name} AS text, false AS at_start, ${updated} AS updated_at
        FROM ${table}
        WHERE organization_id = ${organizationId} AND ${source.visible}
          AND (SELECT count(*) FROM starts) < ${limit}
          AND strpos(' ' || ${key}, ' ' || search_suggestion_key(${prefix}::text)) > 1
        LIMIT ${limit * LATER_WORD_CANDIDATES}
      ) candidates
      ORDER BY updated_at DESC
      LIMIT ${limit}
    )
    SELECT * FROM starts UNION ALL SELECT * FROM later_words`;
}
