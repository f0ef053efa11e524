/** What sharding by organization_id (Citus) treats apart: shared by the sharding-readiness tests. */

/**
 * Tables that have organization_id but are meant to be Citus reference tables (copied to every
 * node) rather than sharded: their keys need not include organization_id, and references from
 * tenant tables may name them by id alone. Only small tables whose rows other organizations
 * read belong here.
 */
export const REFERENCE_TABLES: Record<string, string> = {
  // PLATFORM knowledge bases belong to the __platform__ organization and every organization maps
  // capabilities to them and keeps passages from them: those references cross organizations
  // on purpose. A few rows per organization.
  knowledge_bases: "platform knowledge bases are read and referenced by every organization",
};
