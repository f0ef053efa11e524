/**
 * Streamed search (`@defer`): how soon the first part, the page of the LOCAL providers, reaches
 * a client, against a search that asks only the LOCAL providers and no more. Through the gateway
 * over HTTP, one request at a time, the operations alternating query by query (so drift hits all
 * alike), in one process:
 *
 * - baseline: `search(input: { ..., latency: LOCAL })`, one JSON answer, on the Rust planner
 *   (today's path);
 * - streamed: `fast: search(LOCAL) ... @defer { all: search(every provider) }` as
 *   multipart/mixed through the same gateway: each part an operation of its own on the Rust plan
 *   (gateway/root-defer.ts); the time until its first part is complete, and until its last;
 * - the same two through a gateway configured with the JavaScript planner: the local-only search
 *   on it, and the streamed one on Hive's stitching runtime (unbatched), which is how every
 *   `@defer` ran before root-defer.ts. They say what the JavaScript planner alone costs, and what
 *   the split saves, in the same process.
 *
 * The remote providers are not configured here (they answer SKIPPED at once), so the deferred
 * part costs what the local work of a second search costs: its calls are shared with the first
 * while they run (subgraphs/search/shared-provider-calls.ts). Search result cache off, so every
 * search runs.
 */
import { renderMarkdownTable } from "../../lib/evaluation/markdown-table.js";
import { queryPool } from "../corpus.js";
import { databaseLabel, entryHeading, formatCount, formatMs, formatRatio, renderConditions, type EntryBase, type TargetResult } from "../report.js";
import { baseConditions, type Scenario } from "../scenario.js";
import { benchConfig, benchToken, startBenchGateway, startBenchSubgraphs } from "../stack.js";
import { ratio, summarizeLatencies, type LatencySummary } from "../stats.js";

const PAGE = 20;
const ALPHA = 0.5;
const HITS = `hits { score item { __typename ... on Conversation { id title } } } pageInfo { hasNextPage endCursor }`;
const LOCAL_SEARCH = `query BenchLocalSearch($local: SearchInput!) { fast: search(input: $local) { ${HITS} } }`;
const STREAMED_SEARCH = `query BenchStreamedSearch($local: SearchInput!, $input: SearchInput!) {
  fast: search(input: $local) { ${HITS} }
  ... @defer(label: "all") { all: search(input: $input) { ${HITS} } }
}`;

export interface DeferEntry extends EntryBase {
  searches: number;
  local: LatencySummary;
  firstPart: LatencySummary;
  lastPart: LatencySummary;
  /** The local-only search and the streamed one's first part through a gateway configured with the JavaScript planner (absent in entries measured before it was). */
  jsPlanner?: { local: LatencySummary; firstPart: LatencySummary };
  /** Over the local-only search on the Rust planner: the streamed first part (p50, p99), its last part, and the two JavaScript-planner measurements. */
  ratios: { firstPartP50: number; firstPartP99: number; lastPartP50: number; jsLocalP50?: number; jsFirstPartP50?: number };
  errors: number;
}

/** Milliseconds until the first complete part and until the end, of one streamed request. */
async function timeParts(url: string, token: string, body: string): Promise<{ first: number; last: number; ok: boolean }> {
  const started = performance.now();
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json", accept: "multipart/mixed", authorization: `Bearer ${token}` }, body });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let first = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (value) text += decoder.decode(value, { stream: true });
    // A part is complete when the boundary after it has arrived: the second boundary in the stream.
    if (!first && text.indexOf("\r\n---", 1) > 0) first = performance.now() - started;
    if (done) break;
  }
  return { first, last: performance.now() - started, ok: response.ok && text.includes('"hasNext":false') && !text.includes('"errors"') };
}

async function timeLocal(url: string, token: string, body: string): Promise<{ ms: number; ok: boolean }> {
  const started = performance.now();
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${token}` }, body });
  const answer = (await response.json()) as { errors?: unknown };
  return { ms: performance.now() - started, ok: response.ok && !answer.errors };
}

export const deferScenario: Scenario<DeferEntry> = {
  name: "defer",
  title: "Streamed search: first @defer part against a local-only search",
  async run(context) {
    const config = benchConfig({ cacheTtlSeconds: 0 });
    const token = await benchToken(config);
    const queries = queryPool(context.size, 1_000);
    const subgraphs = await startBenchSubgraphs(context.bench.database, config);
    const gateway = await startBenchGateway(subgraphs, { queryPlanner: "rust", deduplicateInflightRequests: false });
    const jsGateway = await startBenchGateway(subgraphs, { queryPlanner: "js", deduplicateInflightRequests: false });
    try {
      const measure = async (count: number, seconds: number) => {
        const local: number[] = [];
        const first: number[] = [];
        const last: number[] = [];
        const jsLocal: number[] = [];
        const jsFirst: number[] = [];
        let errors = 0;
        const deadline = performance.now() + seconds * 1000;
        for (let index = 0; index < count || performance.now() < deadline; index++) {
          if (index >= 20_000) break;
          const query = queries[index % queries.length]!;
          const input = { query, alpha: ALPHA, limit: PAGE };
          const variables = { local: { ...input, latency: "LOCAL" }, input };
          const localBody = JSON.stringify({ query: LOCAL_SEARCH, variables: { local: variables.local } });
          const streamedBody = JSON.stringify({ query: STREAMED_SEARCH, variables });
          const runLocal = (url: string, into: number[]) => async () => {
            const outcome = await timeLocal(url, token, localBody);
            into.push(outcome.ms);
            if (!outcome.ok) errors += 1;
          };
          const runStreamed = (url: string, firsts: number[], lasts: number[] | null) => async () => {
            const outcome = await timeParts(url, token, streamedBody);
            firsts.push(outcome.first);
            lasts?.push(outcome.last);
            if (!outcome.ok) errors += 1;
          };
          const operations = [runLocal(gateway.url, local), runStreamed(gateway.url, first, last), runLocal(jsGateway.url, jsLocal), runStreamed(jsGateway.url, jsFirst, null)];
          // The order flips every query: the later searches of a round may find warmer pages.
          for (const operation of index % 2 === 0 ? operations : operations.reverse()) await operation();
        }
        return { local, first, last, jsLocal, jsFirst, errors };
      };
      await measure(20, 0); // warm-up, discarded
      const measured = await measure(100, context.options.durationSeconds);
      const local = summarizeLatencies(measured.local);
      const firstPart = summarizeLatencies(measured.first);
      const lastPart = summarizeLatencies(measured.last);
      const jsPlanner = { local: summarizeLatencies(measured.jsLocal), firstPart: summarizeLatencies(measured.jsFirst) };
      context.log(`  local-only p50 ${formatMs(local.p50)} p99 ${formatMs(local.p99)}; streamed first part p50 ${formatMs(firstPart.p50)} p99 ${formatMs(firstPart.p99)}, last part p50 ${formatMs(lastPart.p50)}; JavaScript planner: local-only p50 ${formatMs(jsPlanner.local.p50)}, streamed first part p50 ${formatMs(jsPlanner.firstPart.p50)}; errors ${measured.errors}`);
      return {
        database: context.bench.kind,
        size: context.size,
        run: context.run,
        conditions: baseConditions(context, {
          search: `alpha ${ALPHA}, ${PAGE} hits with titles, result cache off, remote providers not configured (SKIPPED)`,
          path: "through the gateway over HTTP, one request at a time, the four operations alternating per query (order flipped every query); local-only on the Rust planner, streamed split into one Rust-planned operation per part; both again through a gateway configured with the JavaScript planner (streamed: stitching runtime, unbatched); in-flight merging off",
        }),
        corpus: context.corpus,
        profiles: [],
        searches: measured.local.length,
        local,
        firstPart,
        lastPart,
        jsPlanner,
        ratios: {
          firstPartP50: ratio(firstPart.p50, local.p50, 2),
          firstPartP99: ratio(firstPart.p99, local.p99, 2),
          lastPartP50: ratio(lastPart.p50, local.p50, 2),
          jsLocalP50: ratio(jsPlanner.local.p50, local.p50, 2),
          jsFirstPartP50: ratio(jsPlanner.firstPart.p50, local.p50, 2),
        },
        errors: measured.errors,
      };
    } finally {
      await gateway.stop();
      await jsGateway.stop();
      await subgraphs.stop();
    }
  },

  renderSection(file) {
    const rows = file.entries.map((entry) => [
      databaseLabel(entry.database),
      formatCount(entry.size),
      `${formatMs(entry.local.p50)} / ${formatMs(entry.local.p99)}`,
      `${formatMs(entry.firstPart.p50)} / ${formatMs(entry.firstPart.p99)}`,
      `${formatMs(entry.lastPart.p50)} / ${formatMs(entry.lastPart.p99)}`,
      `${formatRatio(entry.ratios.firstPartP50)} / ${formatRatio(entry.ratios.firstPartP99)}`,
      entry.jsPlanner ? `${formatMs(entry.jsPlanner.local.p50)} (${formatRatio(entry.ratios.jsLocalP50)})` : "–",
      entry.jsPlanner ? `${formatMs(entry.jsPlanner.firstPart.p50)} (${formatRatio(entry.ratios.jsFirstPartP50)})` : "–",
      String(entry.errors),
    ]);
    const table = renderMarkdownTable(
      ["database", "conversations", "local-only search p50 / p99", "first @defer part p50 / p99", "last part p50 / p99", "first part / local-only p50 / p99", "JS planner: local-only p50 (/ Rust local-only)", "JS planner: first part p50 (/ Rust local-only)", "errors"],
      rows,
    );
    const details = file.entries.map((entry) => [`**${entryHeading(entry)}** — ${entry.searches} searches of each kind.`, "", renderConditions(entry)].join("\n"));
    return [table, "", ...details.flatMap((detail) => [detail, ""])].join("\n");
  },

  targets(file) {
    return file.entries.map((entry): TargetResult => ({
      target: `first @defer part p50 ≤ 1.2× a local-only search (${entryHeading(entry)})`,
      status: entry.ratios.firstPartP50 <= 1.2 ? "met" : "missed",
      measured: formatRatio(entry.ratios.firstPartP50),
      margin: formatRatio(1.2 / entry.ratios.firstPartP50),
    }));
  },
};
