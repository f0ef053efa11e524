/**
 * Two weeks of searches and clicks for the demo organization, so the analytics dashboard of a
 * fresh `npm start` shows a living search box rather than an empty page: the queries of
 * lib/demo-data/search-history.json asked by the demo users (a few people search much more than
 * the others), more on weekdays and in office hours, the ones that find nothing included, and
 * for most searches that found something a hit opened near the top (a conversation whose title
 * shares a word with the query). The same seed always gives the same history, relative to the
 * moment it is seeded. Written as two multi-row INSERTs (the log, then the clicks), through the
 * same tables and triggers as real traffic, so suggestions learn these queries too.
 */
import fs from "node:fs";
import type { Database } from "../lib/database/connect.js";
import { mulberry32 } from "../lib/demo-data/conversations.js";
import { DEMO_ORGANIZATION, DEMO_USERS } from "../lib/demo-data/organization.js";
import { besideModule } from "../lib/project-files.js";

const HISTORY_PATH = besideModule("../lib/demo-data/search-history.json", import.meta.url);
const DAYS = 14;
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

interface HistoryQuery {
  query: string;
  weight: number;
  found: boolean;
  clickRate: number;
}

/** What each search's providers took, roughly, in milliseconds: the spread of a quiet demo. */
const PROVIDER_TIMINGS = [
  { name: "conversations.keyword", base: 9, spread: 14 },
  { name: "documents.keyword", base: 6, spread: 10 },
  { name: "documents.semantic", base: 28, spread: 60 },
] as const;

export interface SearchHistoryResult {
  /** Searches added (0 when the organization already had some). */
  searches: number;
  clicks: number;
}

/**
 * Adds the history when the demo organization has no search logged yet; running it again (or
 * after people searched) changes nothing.
 */
export async function seedDemoSearchHistory(database: Database, options: { seed?: number; now?: Date } = {}): Promise<SearchHistoryResult> {
  const { prisma } = database;
  const org = DEMO_ORGANIZATION.id;
  if ((await prisma.searchQuery.count({ where: { organizationId: org } })) > 0) return { searches: 0, clicks: 0 };
  const conversations = await prisma.conversation.findMany({ where: { organizationId: org }, select: { id: true, title: true }, orderBy: { createdAt: "asc" }, take: 500 });
  const { searches, clicks } = demoSearchHistory(JSON.parse(fs.readFileSync(HISTORY_PATH, "utf8")).queries as HistoryQuery[], conversations, options.seed ?? 42, options.now ?? new Date());
  await prisma.searchQuery.createMany({ data: searches });
  await prisma.searchClick.createMany({ data: clicks });
  return { searches: searches.length, clicks: clicks.length };
}

const words = (text: string) => text.toLowerCase().split(/[^a-z0-9]+/).filter((word) => word.length >= 4);

/** The rows, without touching the database (deterministic for `seed` and `now`). */
export function demoSearchHistory(queries: HistoryQuery[], conversations: { id: string; title: string }[], seed: number, now: Date) {
  const rng = mulberry32(seed);
  const totalWeight = queries.reduce((sum, entry) => sum + entry.weight, 0);
  const pickQuery = () => {
    let left = rng() * totalWeight;
    for (const entry of queries) if ((left -= entry.weight) < 0) return entry;
    return queries.at(-1)!;
  };
  // The first users search most (Zipf-like), as in the conversations the demo seeds.
  const userWeights = DEMO_USERS.map((_, index) => 1 / (index + 1));
  const userTotal = userWeights.reduce((sum, weight) => sum + weight, 0);
  const pickUser = () => {
    let left = rng() * userTotal;
    for (const [index, weight] of userWeights.entries()) if ((left -= weight) < 0) return DEMO_USERS[index]!.id;
    return DEMO_USERS[0].id;
  };
  const matching = new Map(queries.map((entry) => {
    const queryWords = new Set(words(entry.query));
    const found = conversations.filter((conversation) => words(conversation.title).some((word) => queryWords.has(word)));
    return [entry.query, found.length > 0 ? found : conversations] as const;
  }));

  const searches: SearchRow[] = [];
  const clicks: ClickRow[] = [];
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  for (let day = DAYS - 1; day >= 0; day--) {
    const start = today - day * DAY_MS;
    const weekday = new Date(start).getUTCDay() % 6 !== 0;
    const count = Math.round((weekday ? 34 : 9) * (0.75 + rng() * 0.5));
    for (let index = 0; index < count; index++) {
      // Office hours (07:00 to 19:00 UTC), never in the future.
      const at = new Date(start + 7 * HOUR_MS + Math.floor(rng() * 12 * HOUR_MS));
      if (at.getTime() > now.getTime() - 60_000) continue;
      const entry = pickQuery();
      const cacheHit = rng() < 0.15;
      const providers = PROVIDER_TIMINGS.map((provider) => {
        const tookMs = cacheHit ? 0 : Math.round(provider.base + provider.spread * rng() ** 3 * 4);
        const returned = entry.found ? 1 + Math.floor(rng() * 20) : 0;
        return { name: provider.name, status: "OK", tookMs, returned, error: null };
      });
      const results = entry.found ? Math.min(20, Math.max(...providers.map((provider) => provider.returned)) + Math.floor(rng() * 8)) : 0;
      const id = randomUUIDFrom(rng);
      const userId = pickUser();
      searches.push({
        id,
        organizationId: DEMO_ORGANIZATION.id,
        userId,
        query: entry.query,
        alpha: 1,
        providers,
        results,
        topScore: results > 0 ? Math.round(rng() * 1000) / 1000 : null,
        cacheHit,
        tookMs: cacheHit ? 1 + Math.floor(rng() * 3) : Math.max(...providers.map((provider) => provider.tookMs)) + 4 + Math.floor(rng() * 10),
        pageOffset: 0,
        latency: null,
        createdAt: at,
      });
      if (results === 0 || rng() >= entry.clickRate) continue;
      // Most people open the first hit or one just below it; now and then a second one too.
      const opened = rng() < 0.2 ? 2 : 1;
      const candidates = matching.get(entry.query)!;
      const taken = new Set<string>();
      let position = 0;
      for (let click = 0; click < opened && candidates.length > 0; click++) {
        // A second hit opened sits below the first: people read down the list.
        position = Math.min(results, position + 1 + Math.floor(rng() ** 3.5 * Math.min(results, 10)));
        const item = candidates[Math.floor(rng() * candidates.length)]!;
        if (taken.has(item.id) || (click > 0 && position === clicks.at(-1)!.position)) continue;
        taken.add(item.id);
        clicks.push({
          organizationId: DEMO_ORGANIZATION.id,
          searchId: id,
          itemKind: "CONVERSATION",
          itemId: item.id,
          position,
          userId,
          searchedAt: at,
          // Seconds after the search; a second hit after the first.
          createdAt: new Date(at.getTime() + 3_000 + click * 30_000 + Math.floor(rng() * 25_000)),
        });
      }
    }
  }
  return { searches, clicks };
}

interface SearchRow {
  id: string;
  organizationId: string;
  userId: string;
  query: string;
  alpha: number;
  providers: { name: string; status: string; tookMs: number; returned: number; error: null }[];
  results: number;
  topScore: number | null;
  cacheHit: boolean;
  tookMs: number;
  pageOffset: number;
  latency: null;
  createdAt: Date;
}

interface ClickRow {
  organizationId: string;
  searchId: string;
  itemKind: string;
  itemId: string;
  position: number;
  userId: string;
  searchedAt: Date;
  createdAt: Date;
}

/** A version 4 UUID from the seeded generator, so the same seed gives the same ids. */
function randomUUIDFrom(rng: () => number): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(rng() * 16).toString(16));
  hex[12] = "4";
  hex[16] = ((Number.parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  const text = hex.join("");
  return `${text.slice(0, 8)}-${text.slice(8, 12)}-${text.slice(12, 16)}-${text.slice(16, 20)}-${text.slice(20)}`;
}
