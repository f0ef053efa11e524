/**
 * A document's structure as stored beside its text (document_contents.structure): the sections
 * under its headings and, for PDFs, where each page's text is. Extraction knows both; the text
 * alone keeps only Markdown's headings, so without this a PDF's pages and a DOCX's heading
 * styles would be lost by the time the indexer chunks the text.
 *
 *     const structure = storableStructure(extracted.text, extracted);   // bounded, to store
 *     const read = readStructure(row.structure, row.text);             // validated, or null
 *
 * The stored form is bounded in bytes ({@link MAX_STRUCTURE_BYTES}, also a CHECK in the
 * database, which measures PostgreSQL's own text of the jsonb value, not ours: see
 * {@link jsonbTextBytes}): heading titles are clipped, and a document with more headings than fit keeps its
 * first sections and one section without a heading path for the rest. What is read back is
 * checked against the text it describes; anything that does not fit (a hand-edited row, a text
 * re-normalized since) reads as null, and the indexer falls back to recovering structure from
 * the text, as for rows stored before the column existed.
 */
import type { DocumentSection } from "./normalize-text.js";
import type { DocumentPage } from "./pdf-text.js";

export interface DocumentStructure {
  /** The text divided by its headings, in order, covering it. */
  sections: DocumentSection[];
  /** PDFs: each page's text, in order. Other formats: `[]`. */
  pages: DocumentPage[];
}

/** The stored JSON's shape; `version` lets a later layout be told apart. */
interface StoredStructure extends DocumentStructure {
  version: 1;
}

/** Largest stored structure, in bytes of JSON text (the migration's CHECK says the same). */
export const MAX_STRUCTURE_BYTES = 1_000_000;
/** Longest heading title kept, in characters (a "heading" that is a whole paragraph stays bounded). */
export const MAX_HEADING_CHARS = 200;
/** Deepest heading path kept (Word and HTML have six heading levels). */
export const MAX_HEADING_DEPTH = 6;

/**
 * The structure to store for `text`, within {@link MAX_STRUCTURE_BYTES}; null when it says
 * nothing the text does not (one section without headings and no pages).
 */
export function storableStructure(text: string, { sections, pages }: DocumentStructure): StoredStructure | null {
  const keptPages = pages.map(({ pageNumber, start, end }) => ({ pageNumber, start, end }));
  if (keptPages.length === 0 && sections.every((section) => section.headingPath.length === 0)) return null;
  const envelope = jsonbTextBytes({ version: 1, sections: [], pages: keptPages });
  // Pages are bounded by extraction (maxPages); sections are what can grow, so they share what is left.
  let budget = MAX_STRUCTURE_BYTES - envelope - 100;
  if (budget < 0) return null;
  const keptSections: DocumentSection[] = [];
  for (const section of sections) {
    const kept = {
      headingPath: section.headingPath.slice(0, MAX_HEADING_DEPTH).map((title) => (title.length > MAX_HEADING_CHARS ? `${title.slice(0, MAX_HEADING_CHARS - 1)}…` : title)),
      start: section.start,
      end: section.end,
    };
    const cost = jsonbTextBytes(kept) + 2;
    if (cost > budget) {
      // Out of room: the rest of the text is one section whose headings are not known.
      keptSections.push({ headingPath: [], start: section.start, end: sections[sections.length - 1]!.end });
      break;
    }
    budget -= cost;
    keptSections.push(kept);
  }
  const structure: StoredStructure = { version: 1, sections: keptSections, pages: keptPages };
  // Checked whole as well, so that no change to the budgeting above can reach the CHECK (an internal error) again.
  if (jsonbTextBytes(structure) > MAX_STRUCTURE_BYTES) return null;
  return readStructure(structure, text) ? structure : null;
}

/**
 * Bytes of PostgreSQL's text form of `value` as jsonb, which is what the CHECK constraint
 * measures (`octet_length(structure::text)`). It is not JSON.stringify's: jsonb writes `": "`
 * and `", "` between members and elements, so a structure of 200,000 short sections measured
 * with JSON.stringify passed our bound and failed the database's by a fifth.
 */
export function jsonbTextBytes(value: unknown): number {
  if (Array.isArray(value)) return value.reduce<number>((sum, item) => sum + jsonbTextBytes(item), 2) + Math.max(0, value.length - 1) * 2;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value).filter(([, member]) => member !== undefined);
    const members = entries.reduce((sum, [key, member]) => sum + Buffer.byteLength(JSON.stringify(key)) + 2 + jsonbTextBytes(member), 2);
    return members + Math.max(0, entries.length - 1) * 2;
  }
  return Buffer.byteLength(JSON.stringify(value));
}

/** The stored structure of `text`, or null when none is stored or it does not describe this text. */
export function readStructure(stored: unknown, text: string): DocumentStructure | null {
  if (stored === null || typeof stored !== "object") return null;
  const { version, sections, pages } = stored as Partial<StoredStructure>;
  if (version !== 1 || !Array.isArray(sections) || !Array.isArray(pages) || sections.length === 0) return null;
  const within = (start: unknown, end: unknown, from: number) =>
    Number.isInteger(start) && Number.isInteger(end) && (start as number) >= from && (start as number) <= (end as number) && (end as number) <= text.length;
  let cursor = 0;
  for (const section of sections) {
    if (!section || !within(section.start, section.end, cursor) || !Array.isArray(section.headingPath) || !section.headingPath.every((title) => typeof title === "string")) return null;
    cursor = section.end;
  }
  cursor = 0;
  for (const page of pages) {
    if (!page || !Number.isInteger(page.pageNumber) || page.pageNumber < 1 || !within(page.start, page.end, cursor)) return null;
    cursor = page.end;
  }
  return {
    sections: sections.map(({ headingPath, start, end }) => ({ headingPath: [...headingPath], start, end })),
    pages: pages.map(({ pageNumber, start, end }) => ({ pageNumber, start, end })),
  };
}
