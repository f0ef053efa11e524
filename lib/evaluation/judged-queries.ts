/**
 * Judged queries: questions with the items a person would expect first (demo-judged-queries.json
 * for the demo organization), and whether a search put one of them first. The test of the demo
 * holds the default settings to them; `npm run eval -- --judged` compares the fusion methods.
 *
 * lib/ sits below subgraphs/: the search comes in as a function from the caller.
 */
import fs from "node:fs";
import { besideModule } from "../project-files.js";

export interface JudgedQuery {
  query: string;
  /** Acceptable first hits: `document:<file name>` or `conversation:<title pattern, case-insensitive>`. */
  first: string[];
  why: string;
  /** Set when the default settings get it wrong today: why. */
  miss?: string;
}

/** A hit as the judgement sees it: a document (chunk) by its file name, a conversation by its title. */
export type JudgedItem = { kind: "document"; fileName: string } | { kind: "conversation"; title: string } | { kind: "other" };

export interface JudgedOutcome {
  query: string;
  passed: boolean;
  firstHit: string;
}

/** A question the data holds nothing about: its search should say nothing matched well (SearchResult.weakMatches). */
export interface OutsideQuery {
  query: string;
  why: string;
  /** Set when the default relevance floor calls its matches strong today: why. */
  miss?: string;
}

function readDemoJudgements(): { queries: JudgedQuery[]; outside: OutsideQuery[] } {
  const file = besideModule("./demo-judged-queries.json", import.meta.url);
  return JSON.parse(fs.readFileSync(file, "utf8")) as { queries: JudgedQuery[]; outside: OutsideQuery[] };
}

export function loadDemoJudgedQueries(): JudgedQuery[] {
  return readDemoJudgements().queries;
}

export function loadDemoOutsideQueries(): OutsideQuery[] {
  return readDemoJudgements().outside;
}

export function describeItem(item: JudgedItem | undefined): string {
  if (!item) return "(no hit)";
  return item.kind === "document" ? `document:${item.fileName}` : item.kind === "conversation" ? `conversation "${item.title}"` : "another kind of item";
}

/** Whether `item` is one of what `judged` expects first. */
export function isExpectedFirst(judged: JudgedQuery, item: JudgedItem | undefined): boolean {
  if (!item || item.kind === "other") return false;
  return judged.first.some((expected) => {
    const [kind, ...rest] = expected.split(":");
    const value = rest.join(":");
    if (kind === "document") return item.kind === "document" && item.fileName === value;
    if (kind === "conversation") return item.kind === "conversation" && new RegExp(value, "i").test(item.title);
    throw new Error(`judged query "${judged.query}": "${expected}" is neither document:<file> nor conversation:<pattern>`);
  });
}

/** Asks each query (`firstItem` runs the search and describes its first hit) and judges it. */
export async function judgeFirstHits(queries: readonly JudgedQuery[], firstItem: (query: string) => Promise<JudgedItem | undefined>): Promise<JudgedOutcome[]> {
  const outcomes: JudgedOutcome[] = [];
  for (const judged of queries) {
    const item = await firstItem(judged.query);
    outcomes.push({ query: judged.query, passed: isExpectedFirst(judged, item), firstHit: describeItem(item) });
  }
  return outcomes;
}
