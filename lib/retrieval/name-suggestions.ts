/**
 * The one statement a domain runs to suggest its entities by name as the caller types
 * (`searchSuggestions`): names that start with the prefix, in key order (shorter completions
 * of a common stem first), then, only if those are too few, names with a later word that
 * starts with it, most recently changed first among the first few found. Each domain names its
 * table, columns and who may see a row; the matching is the same for every domain, here.
 *
 * Both parts stop early, whatever the size of the organization: the first reads `limit` entries
 * of the key range in index order (ordering by anything else would read the whole range, 1,667
 * rows for "k" at 10,000 conversations), the second takes the first LATER_WORD_CANDIDATES
 * matches the GIN index yields before ordering them.
 *
 * Matching is literal and index-driven. search_suggestion_key (SQL, migration
 * 20261203130000_search_suggestions) lower-cases and collapses whitespace on both sides, and
 * "starts with p" is the byte-wise range [p, p || U+10FFFF) over an expression index on
 * (organization_id, key COLLATE "C"): no LIKE, so `%`, `_` and `\` are plain characters. A later
 * word is found through a GIN index on the name's 'simple' tsvector (no stemming, no stop words)
 * with a prefix tsquery built by PostgreSQL from the prefix (never parsed from user text), and
 * confirmed literally with strpos, since the tsquery drops punctuation.
 */
import { Prisma } from "../../generated/prisma/client.js";

export interface NameSuggestionSource {
  /** The table, its id, name and last-change columns: constants of the domain, never user input. */
  table: string;
  nameColumn: string;
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
  // The key expression exactly as the domain's index has it, so the range is an index scan.
  const key = Prisma.sql`(search_suggestion_key(${name}) COLLATE "C")`;
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
          AND to_tsvector('simple', ${name}) @@ (
            SELECT CASE WHEN numnode(words) = 0 THEN NULL ELSE (words::text || ':*')::tsquery END
            FROM plainto_tsquery('simple', ${prefix}::text) AS words)
          AND strpos(' ' || search_suggestion_key(${name}), ' ' || search_suggestion_key(${prefix}::text)) > 1
        LIMIT ${limit * LATER_WORD_CANDIDATES}
      ) candidates
      ORDER BY updated_at DESC
      LIMIT ${limit}
    )
    SELECT * FROM starts UNION ALL SELECT * FROM later_words`;
}
