/**
 * `npm run eval -- --dataset <name> | --path <BEIR folder> [--as conversations|documents] [--split test] [--alphas 0,0.25,0.5,0.75,1] [--out docs/evaluation]`
 *
 * `--dataset scifact` fetches the BEIR data set of that name into `--datasets-dir`
 * (.data/datasets) the first time (lib/evaluation/beir-download.ts; `--datasets-url` for a
 * mirror); `--path` (or a plain folder argument) reads a data set already in the BEIR layout.
 *
 * Ingests the corpus into a throwaway organization through the product's own indexing code,
 * as conversations (default; providers conversations.*) or as documents (`--as documents`: each
 * BEIR document uploaded as a Markdown file through uploadDocument, indexed by the document
 * indexer, searched with documents.keyword and documents.semantic, a document ranked by its
 * best chunk; results in <dataset>-<split>-documents.{json,svg}),
 * runs every query through the search service at each alpha, and prints nDCG@10 and recall@100
 * (keyword only = alpha 1, semantic only = alpha 0, hybrids between), plus a JSON file and an
 * SVG plot of nDCG@10 against alpha. Runs on an in-memory PGlite unless DATABASE_URL is set (then
 * in a throwaway organization there, deleted afterwards).
 *
 * `--typos <seed>` measures typo tolerance instead (keyword only, conversations): every query
 * misspelled by lib/evaluation/typos.ts with that seed, searched with typoTolerance on and off,
 * and the queries as written, on and off (which must score the same to the last digit: their
 * words are in the corpus, so nothing is expanded). Writes <dataset>-<split>-typos.json.
 *
 * `--answers 1,3,5` measures grounded answers instead (lib/evaluation/answer-evaluation.ts):
 * every query asked as a question of `answer` (extractive: no model), keyword only
 * (conversations.keyword, nothing embedded), with that many passages; prints citation recall@k
 * (share of answers citing a relevant document) and writes <dataset>-<split>-answers.json.
 *
 * `--floor 300 [--seed 7]` measures the relevance floor instead (lib/evaluation/relevance-floor.ts):
 * 300 queries asked of the corpus without their relevant documents, every query of the whole
 * corpus, keyword only; prints, by floor, how often a top hit passes with nothing relevant left
 * (false positives) and how often a relevant top hit falls below (misses). Writes
 * <dataset>-<split>-relevance-floor.json.
 *
 * `--partition conversations=0.4,documents=0.4,knowledge-base=0.2 [--seed 7] [--fusions rrf,relative,distribution]`
 * measures the promise of one search over many sources instead: the corpus split at random
 * (seeded) across conversations, uploaded documents and a platform LOCAL knowledge base of one
 * organization, every query asked of all their providers, beside the same corpus as conversations
 * of one provider, at each alpha (and fusion). Writes <dataset>-<split>-partitioned.json.
 */
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { ConfigError, loadConfig, type Config } from "../lib/config.js";
import { openDatabase, type Database } from "../lib/database/connect.js";
import { migrate } from "../lib/database/migrate.js";
import { loadBeirDataset } from "../lib/evaluation/beir.js";
import { BEIR_DATASETS_URL, DEFAULT_DATASETS_DIRECTORY, fetchBeirDataset } from "../lib/evaluation/beir-download.js";
import { renderMarkdownTable } from "../lib/evaluation/markdown-table.js";
import { DOCUMENT_PROVIDERS, documentStatuses, ingestAsDocuments, mapChunksToDocuments, mapPassagesToDocuments } from "../lib/evaluation/document-evaluation.js";
import { createEvaluationOrganization, evaluateAlpha, indexCorpus, ingestConversations, ingestCorpus, type EvaluateOptions, type EvaluationRow, type IngestedCorpus } from "../lib/evaluation/search-evaluation.js";
import { renderLinePlot } from "../lib/evaluation/svg-plot.js";
import { misspell } from "../lib/evaluation/typos.js";
import { createLogger } from "../lib/logger.js";
import { progressBar } from "../lib/progress.js";
import { runMain } from "../lib/shutdown.js";
import { searchSubgraph } from "../subgraphs/search/index.js";
import { DocumentStore } from "../subgraphs/knowledge-base/document-store.js";
import { uploadDocument } from "../subgraphs/knowledge-base/upload.js";
import { NoResultCache } from "../lib/cache/result-cache.js";
import { evaluateAnswers, type AnswerEvaluationRow, type EvaluatedAnswers } from "../lib/evaluation/answer-evaluation.js";
import { createHighlightLoader } from "../subgraphs/search/highlights.js";
import { comparePartitioned, FUSIONS, ingestPartitioned, parsePartition, type PartitionShare, type PartitionedCorpus, type PartitionedRow } from "../lib/evaluation/partitioned-evaluation.js";
import { floorTable, holdOut, sampleFloor, type RelevanceSearch } from "../lib/evaluation/relevance-floor.js";
import { PlatformKnowledge } from "../subgraphs/knowledge-base/platform-knowledge.js";

/** A row of a run at given alphas (every run but the partitioned one, whose rows may be at the default). */
type AlphaRow = EvaluationRow & { alpha: number };

runMain(async () => {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      split: { type: "string" },
      as: { type: "string", default: "conversations" },
      alphas: { type: "string", default: "0,0.25,0.5,0.75,1" },
      out: { type: "string", default: "docs/evaluation" },
      "max-queries": { type: "string" },
      dataset: { type: "string" },
      path: { type: "string" },
      "datasets-dir": { type: "string", default: DEFAULT_DATASETS_DIRECTORY },
      "datasets-url": { type: "string", default: BEIR_DATASETS_URL },
      typos: { type: "string" },
      answers: { type: "string" },
      partition: { type: "string" },
      seed: { type: "string", default: "7" },
      fusions: { type: "string" },
      floor: { type: "string" },
    },
  });
  const given = [values.dataset, values.path ?? positionals[0]].filter((value) => value !== undefined);
  if (given.length !== 1) throw new ConfigError("--dataset / --path", "give exactly one: --dataset <name> (e.g. scifact, fetched into .data/datasets) or --path <BEIR folder>");
  const folder = values.dataset
    ? await fetchBeirDataset(values.dataset, { directory: values["datasets-dir"], baseUrl: values["datasets-url"], log: (line) => process.stderr.write(`${line}\n`) })
    : given[0]!;
  const as = values.as;
  if (as !== "conversations" && as !== "documents") throw new ConfigError("--as", `must be conversations or documents, got "${as}"`);
  // "default": no alpha in the search input, as a client that gives none (partitioned runs only).
  const partitionAlphas = values.alphas.split(",").map((alpha) => (alpha.trim() === "default" ? null : Number(alpha)));
  if (partitionAlphas.some((alpha) => alpha !== null && !(alpha >= 0 && alpha <= 1))) throw new ConfigError("--alphas", `must be numbers between 0 and 1 (or "default" with --partition), got "${values.alphas}"`);
  if (partitionAlphas.includes(null) && values.partition === undefined) throw new ConfigError("--alphas", `"default" is for partitioned runs (--partition); give numbers between 0 and 1`);
  const alphas = partitionAlphas.filter((alpha): alpha is number => alpha !== null);

  const partition = values.partition === undefined ? null : parseOption("--partition", () => parsePartition(values.partition!));
  const seed = Number(values.seed);
  if (!Number.isInteger(seed)) throw new ConfigError("--seed", `must be an integer, got "${values.seed}"`);
  const fusions = values.fusions === undefined ? [null] : values.fusions.split(",").map((name) => name.trim());
  for (const fusion of fusions) if (fusion !== null && !(fusion in FUSIONS)) throw new ConfigError("--fusions", `must be among ${Object.keys(FUSIONS).join(", ")}, got "${fusion}"`);
  if (values.fusions !== undefined && !partition) throw new ConfigError("--fusions", "compares fusions in a partitioned run: add --partition");
  if (partition && (values.typos !== undefined || values.answers !== undefined || values.floor !== undefined || values.as !== "conversations")) throw new ConfigError("--partition", "is a run of its own: leave out --as, --typos, --answers and --floor");

  // Provider timeouts are for interactive traffic; an evaluation wants every provider's answer.
  const config = loadConfig({ ...process.env, SEARCH_INDEXER: "false", SEARCH_PROVIDER_TIMEOUT_MS: "60000" });
  const logger = createLogger("eval", config.logLevel);
  const dataset = await loadBeirDataset(path.resolve(folder), values.split ? { split: values.split } : {});
  if (values["max-queries"]) {
    dataset.queries = dataset.queries.slice(0, Number(values["max-queries"]));
    // The metrics average over every judged query in the qrels (one without results scores 0):
    // the judgements of queries left out would count as misses.
    const asked = new Set(dataset.queries.map((query) => query.id));
    dataset.qrels = new Map([...dataset.qrels].filter(([queryId]) => asked.has(queryId)));
  }
  process.stderr.write(`${dataset.name} (${dataset.split}): ${dataset.corpus.length} documents, ${dataset.queries.length} judged queries\n`);

  const database = await openDatabase({ ...config.database, inMemory: !config.database.url });
  const search = await searchSubgraph({ database, config, logger, cache: new NoResultCache() });
  let organizationId: string | null = null;
  try {
    await migrate(database);
    await search.start?.();
    if (partition) {
      await evaluatePartitioned({ database, config, search, dataset, shares: partition, seed, alphas: partitionAlphas, fusions, outDir: path.resolve(values.out) });
      return;
    }
    const ingestBar = progressBar(as === "documents" ? "upload" : "ingest", dataset.corpus.length);
    let corpus: IngestedCorpus;
    let documents: Awaited<ReturnType<typeof ingestAsDocuments>> | null = null;
    if (as === "documents") {
      const store = new DocumentStore(database.prisma);
      documents = await ingestAsDocuments(
        database,
        dataset,
        (tenant, fileName, bytes) => uploadDocument(store, tenant, { fileName, mediaType: "text/markdown", contentBase64: bytes.toString("base64") }, config.knowledgeBase.maxDocumentBytes),
        { onProgress: (done) => ingestBar.update(done) },
      );
      corpus = documents;
      for (const { id, reason } of documents.refused.slice(0, 5)) process.stderr.write(`\n  refused ${id}: ${reason}`);
    } else {
      corpus = await ingestCorpus(database, dataset, (done) => ingestBar.update(done));
    }
    organizationId = corpus.tenant.organizationId;
    ingestBar.finish(`${dataset.corpus.length - (documents?.refused.length ?? 0)} documents${documents?.refused.length ? ` (${documents.refused.length} refused)` : ""}`);

    if (values.typos !== undefined) {
      if (as !== "conversations") throw new ConfigError("--typos", "measures the conversations keyword provider: leave out --as documents");
      await evaluateTypos(search.service, dataset, corpus, Number(values.typos), path.resolve(values.out), database.kind);
      return;
    }

    if (values.floor !== undefined) {
      if (as !== "conversations") throw new ConfigError("--floor", "measures the keyword relevance of conversations: leave out --as documents");
      await evaluateFloor(search.service, database, dataset, corpus, values.floor, seed, path.resolve(values.out));
      return;
    }

    if (values.answers !== undefined) {
      if (as !== "conversations") throw new ConfigError("--answers", "measures answers over conversations: leave out --as documents");
      await evaluateAnswerCitations(search, dataset, corpus, values.answers, path.resolve(values.out), database.kind);
      return;
    }

    const embedBar = progressBar(`index (${search.embedder.model})`, dataset.corpus.length);
    const embedStarted = performance.now();
    await indexCorpus(as === "documents" ? search.domains.documents.indexer : search.indexer, (done) => embedBar.update(done));
    const embedSeconds = (performance.now() - embedStarted) / 1000;
    let chunks: number | null = null;
    if (documents) {
      chunks = await mapChunksToDocuments(database, documents);
      const statuses = await documentStatuses(database, documents);
      embedBar.finish(`${(dataset.corpus.length / embedSeconds).toFixed(1)} documents/s, ${chunks} chunks, ${JSON.stringify(statuses)}`);
    } else {
      embedBar.finish(`${(dataset.corpus.length / embedSeconds).toFixed(1)} documents/s`);
    }
    // A documents run asks only the documents domain, and reads past the first page until 100
    // distinct documents are ranked (several chunks of one document take one place).
    const evaluate: EvaluateOptions = as === "documents" ? { providers: DOCUMENT_PROVIDERS, maxPages: 5 } : {};

    const outDir = path.resolve(values.out);
    fs.mkdirSync(outDir, { recursive: true });
    const base = path.join(outDir, `${dataset.name}-${dataset.split}-${as === "documents" ? "documents" : search.embedder.model.replace(/[^A-Za-z0-9.@-]+/g, "_")}`);
    const rows: AlphaRow[] = [];
    for (const alpha of alphas) {
      const label = alpha === 1 ? "keyword only (BM25)" : alpha === 0 ? `semantic only (${search.embedder.model})` : `hybrid α=${alpha}`;
      const bar = progressBar(label, dataset.queries.length);
      rows.push({ ...(await evaluateAlpha(search.service, dataset, corpus, alpha, label, evaluate)), alpha });
      bar.finish(`nDCG@10 ${rows.at(-1)!.ndcgAt10.toFixed(3)}`);
      // Written after every alpha: a long run that is stopped keeps what it has measured.
      writeResults(base, { dataset, as, chunks, database: database.kind, embedder: search.embedder.model, embedSeconds, rows, complete: rows.length === alphas.length });
    }

    const table = renderMarkdownTable(
      ["run", "alpha", "nDCG@10", "recall@100", "mean latency (ms)", "provider failures"],
      rows.map((row) => [row.label, row.alpha.toFixed(2), row.ndcgAt10.toFixed(3), row.recallAt100.toFixed(3), row.meanLatencyMs.toFixed(1), row.failedProviders]),
    );
    process.stdout.write(`\n${dataset.name} ${dataset.split} as ${as}, ${dataset.queries.length} queries, ${dataset.corpus.length} documents${chunks !== null ? ` (${chunks} chunks)` : ""}, ${database.kind}\n\n${table}\n`);

    process.stderr.write(`\nwrote ${path.relative(process.cwd(), base)}.json and .svg\n`);
  } finally {
    await search.stop?.();
    if (organizationId && database.kind === "postgres") await database.prisma.organization.delete({ where: { id: organizationId } }).catch(() => undefined);
    await database.close();
  }
});

interface Results {
  dataset: { name: string; split: string; corpus: unknown[]; queries: unknown[] };
  as: "conversations" | "documents";
  /** Chunks indexed (documents runs). */
  chunks: number | null;
  database: string;
  embedder: string;
  embedSeconds: number;
  rows: AlphaRow[];
  complete: boolean;
}

function writeResults(base: string, results: Results): void {
  const { dataset, rows, embedder } = results;
  fs.writeFileSync(
    `${base}.json`,
    `${JSON.stringify({ dataset: dataset.name, split: dataset.split, as: results.as, documents: dataset.corpus.length, chunks: results.chunks, queries: dataset.queries.length, database: results.database, embedder, embedSeconds: results.embedSeconds, complete: results.complete, rows }, null, 2)}\n`,
  );
  const sorted = [...rows].sort((a, b) => a.alpha - b.alpha);
  fs.writeFileSync(
    `${base}.svg`,
    renderLinePlot({
      title: `${dataset.name}${results.as === "documents" ? " as documents" : ""}: nDCG@10 against alpha`,
      subtitle: `${dataset.split} split, ${dataset.queries.length} queries; alpha 0 = semantic only (${embedder}), 1 = keyword only (BM25)`,
      xLabel: "alpha (weight of keyword providers)",
      yLabel: "nDCG@10",
      series: [
        { name: "nDCG@10", points: sorted.map((row) => ({ x: row.alpha, y: row.ndcgAt10 })) },
        { name: "recall@100", points: sorted.map((row) => ({ x: row.alpha, y: row.recallAt100 })), dashed: true },
      ],
      referenceLines: dataset.name === "scifact" ? [{ y: 0.665, label: "BM25, BEIR paper (test split) 0.665" }] : [],
      yDomain: [0, 1],
    }),
  );
}

/**
 * Keyword only (alpha 1): the typo tolerance acts on keyword providers, and the semantic ones
 * would blur what it changes. Prints the table and writes <dataset>-<split>-typos.json.
 */
/**
 * The relevance floor (lib/evaluation/relevance-floor.ts): `count` queries asked of the corpus
 * without their relevant documents (false positives) and every query of the whole corpus
 * (misses), keyword only; prints both rates by floor and writes <dataset>-<split>-relevance-floor.json.
 */
async function evaluateFloor(service: RelevanceSearch, database: Database, dataset: Awaited<ReturnType<typeof loadBeirDataset>>, whole: IngestedCorpus, countText: string, seed: number, outDir: string): Promise<void> {
  const count = Number(countText);
  if (!Number.isInteger(count) || count < 1 || count > dataset.queries.length) throw new ConfigError("--floor", `must be a number of queries from 1 to ${dataset.queries.length}, got "${countText}"`);
  const providers = ["conversations.keyword"];
  const held = holdOut(dataset, count, seed);
  const reduced: IngestedCorpus = { tenant: await createEvaluationOrganization(database, `${dataset.name}-held-out`, `Evaluation (held out): ${dataset.name}`), documentIdOf: new Map() };
  try {
    const ingestBar = progressBar("ingest without the held-out queries' relevant documents", held.corpus.length);
    await ingestConversations(database, reduced, held.corpus, (done) => ingestBar.update(done));
    ingestBar.finish(`${held.corpus.length} documents (${held.removed} removed)`);
    const heldBar = progressBar("held-out queries", held.queries.length);
    const heldOut = await sampleFloor(service, reduced.tenant, held.queries, reduced.documentIdOf, dataset, providers, (done) => heldBar.update(done));
    heldBar.finish("");
    const wholeBar = progressBar("every query, whole corpus", dataset.queries.length);
    const sampled = await sampleFloor(service, whole.tenant, dataset.queries, whole.documentIdOf, dataset, providers, (done) => wholeBar.update(done));
    wholeBar.finish("");
    const floors = Array.from({ length: 15 }, (_, index) => Math.round((0.15 + index * 0.05) * 100) / 100);
    const rows = floorTable(heldOut, sampled, floors);
    const relevantTop = sampled.filter((sample) => sample.topRelevant).length;
    const base = path.join(outDir, `${dataset.name}-${dataset.split}-relevance-floor`);
    fs.mkdirSync(outDir, { recursive: true });
    fs.writeFileSync(
      `${base}.json`,
      `${JSON.stringify({ dataset: dataset.name, split: dataset.split, documents: dataset.corpus.length, seed, heldOutQueries: held.queries.length, removedDocuments: held.removed, queries: sampled.length, relevantTop, database: database.kind, providers, rows, heldOut, whole: sampled }, null, 2)}
`,
    );
    const table = renderMarkdownTable(
      ["floor", "false positives (held-out queries whose top hit passes)", "misses (relevant top hits below it)"],
      rows.map((row) => [row.floor.toFixed(2), row.falsePositives.toFixed(3), row.misses.toFixed(3)]),
    );
    process.stdout.write(
      `
${dataset.name} ${dataset.split}, keyword only: ${held.queries.length} queries (seed ${seed}) asked without their ${held.removed} relevant documents; ` +
        `${sampled.length} queries of the whole corpus, ${relevantTop} with a relevant first hit; ${database.kind}

${table}
`,
    );
    process.stderr.write(`
wrote ${path.relative(process.cwd(), base)}.json
`);
  } finally {
    if (database.kind === "postgres") await database.prisma.organization.delete({ where: { id: reduced.tenant.organizationId } }).catch(() => undefined);
  }
}

async function evaluateTypos(service: Parameters<typeof evaluateAlpha>[0], dataset: Awaited<ReturnType<typeof loadBeirDataset>>, corpus: IngestedCorpus, seed: number, outDir: string, databaseKind: string): Promise<void> {
  if (!Number.isInteger(seed)) throw new ConfigError("--typos", "must be an integer seed, e.g. --typos 20");
  const misspelled = new Map(dataset.queries.map((query, index) => [query.id, misspell(query.text, seed * 100_003 + index)]));
  const changed = [...misspelled.values()].filter((query) => query.edits.length > 0).length;
  const typed = (query: { id: string; text: string }) => misspelled.get(query.id)!.text;
  const runs: [string, EvaluateOptions][] = [
    ["as written, typo tolerance off", { typoTolerance: false }],
    ["as written, typo tolerance on", { typoTolerance: true }],
    ["misspelled, typo tolerance off", { typoTolerance: false, queryText: typed }],
    ["misspelled, typo tolerance on", { typoTolerance: true, queryText: typed }],
  ];
  const rows: AlphaRow[] = [];
  for (const [label, options] of runs) {
    const bar = progressBar(label, dataset.queries.length);
    rows.push({ ...(await evaluateAlpha(service, dataset, corpus, 1, label, options)), alpha: 1 });
    bar.finish(`nDCG@10 ${rows.at(-1)!.ndcgAt10.toFixed(3)}`);
  }
  const [writtenOff, writtenOn, typosOff, typosOn] = rows as [EvaluationRow, EvaluationRow, EvaluationRow, EvaluationRow];
  const summary = {
    unchangedToTheLastDigit: writtenOn.ndcgAt10 === writtenOff.ndcgAt10 && writtenOn.recallAt100 === writtenOff.recallAt100,
    misspelledOverWritten: typosOn.ndcgAt10 / writtenOff.ndcgAt10,
    misspelledWithoutToleranceOverWritten: typosOff.ndcgAt10 / writtenOff.ndcgAt10,
  };
  const base = path.join(outDir, `${dataset.name}-${dataset.split}-typos`);
  fs.mkdirSync(outDir, { recursive: true });
  fs.writeFileSync(
    `${base}.json`,
    `${JSON.stringify({ dataset: dataset.name, split: dataset.split, documents: dataset.corpus.length, queries: dataset.queries.length, misspelledQueries: changed, seed, database: databaseKind, summary, rows, examples: [...misspelled.values()].slice(0, 10) }, null, 2)}\n`,
  );
  const table = renderMarkdownTable(
    ["queries", "nDCG@10", "recall@100", "mean latency (ms)"],
    rows.map((row) => [row.label, row.ndcgAt10.toFixed(4), row.recallAt100.toFixed(4), row.meanLatencyMs.toFixed(1)]),
  );
  process.stdout.write(
    `\n${dataset.name} ${dataset.split}, keyword only, ${dataset.queries.length} queries (${changed} misspelled, seed ${seed}), ${databaseKind}\n\n${table}\n\n` +
      `as written, on vs off: ${summary.unchangedToTheLastDigit ? "identical" : "DIFFERENT"} (${writtenOn.ndcgAt10} vs ${writtenOff.ndcgAt10})\n` +
      `misspelled with tolerance / as written: ${summary.misspelledOverWritten.toFixed(3)}; without tolerance: ${summary.misspelledWithoutToleranceOverWritten.toFixed(3)}\n`,
  );
  process.stderr.write(`\nwrote ${path.relative(process.cwd(), base)}.json\n`);
}

/**
 * Citation recall@k of extractive answers, keyword only (the bundled embedders' measured
 * default; nothing is embedded). Prints the table and writes <dataset>-<split>-answers.json.
 */
async function evaluateAnswerCitations(search: Awaited<ReturnType<typeof searchSubgraph>>, dataset: Awaited<ReturnType<typeof loadBeirDataset>>, corpus: IngestedCorpus, list: string, outDir: string, databaseKind: string): Promise<void> {
  const ks = list.split(",").map(Number);
  if (ks.length === 0 || ks.some((k) => !Number.isInteger(k) || k < 1 || k > 10)) throw new ConfigError("--answers", `must be passage counts between 1 and 10, e.g. 1,3,5, got "${list}"`);
  const domains = Object.values(search.domains);
  const answers: EvaluatedAnswers = {
    async answer(tenant, input) {
      // One loader per question, as one request has: its highlights are that question's.
      const retrieval = await search.answers.retrieve(tenant, input, createHighlightLoader(domains, tenant));
      const written = await search.answers.write(tenant, retrieval);
      return { passageIds: retrieval.passages.map((passage) => passage.hit.ref.id), citedIds: written.citations.map((citation) => citation.passage.hit.ref.id), text: written.text };
    },
  };
  const rows: AnswerEvaluationRow[] = [];
  for (const k of ks) {
    const bar = progressBar(`answers, ${k} passage${k === 1 ? "" : "s"}`, dataset.queries.length);
    rows.push(await evaluateAnswers(answers, dataset, corpus, k, { alpha: 1, providers: ["conversations.keyword"] }, (done) => bar.update(done)));
    bar.finish(`citation recall@${k} ${rows.at(-1)!.citationRecall.toFixed(3)}`);
  }
  const base = path.join(outDir, `${dataset.name}-${dataset.split}-answers`);
  fs.mkdirSync(outDir, { recursive: true });
  fs.writeFileSync(`${base}.json`, `${JSON.stringify({ dataset: dataset.name, split: dataset.split, documents: dataset.corpus.length, queries: dataset.queries.length, mode: "EXTRACTIVE", providers: ["conversations.keyword"], database: databaseKind, rows }, null, 2)}\n`);
  const table = renderMarkdownTable(
    ["passages (k)", "citation recall@k", "relevant among passages", "answered", "citations per answer", "mean latency (ms)"],
    rows.map((row) => [row.passages, row.citationRecall.toFixed(3), row.passageHitRate.toFixed(3), row.answered.toFixed(3), row.meanCitations.toFixed(2), row.meanLatencyMs.toFixed(1)]),
  );
  process.stdout.write(`\n${dataset.name} ${dataset.split}, extractive answers, keyword only, ${rows[0]?.queries ?? 0} judged queries, ${databaseKind}\n\n${table}\n`);
  process.stderr.write(`\nwrote ${path.relative(process.cwd(), base)}.json\n`);
}

function parseOption<T>(option: string, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    throw new ConfigError(option, (error as Error).message);
  }
}

/**
 * `--partition`: the corpus split across conversations, uploaded documents and a platform LOCAL
 * knowledge base of one organization (lib/evaluation/partitioned-evaluation.ts), beside the same
 * corpus as conversations of another, at each alpha and fusion. Prints the Markdown table and
 * writes <dataset>-<split>-partitioned.json after every row. The platform knowledge base is seen
 * by every organization of the database: it is removed afterwards, whatever happens.
 */
async function evaluatePartitioned(run: {
  database: Database;
  config: Config;
  search: Awaited<ReturnType<typeof searchSubgraph>>;
  dataset: Awaited<ReturnType<typeof loadBeirDataset>>;
  shares: PartitionShare[];
  seed: number;
  alphas: (number | null)[];
  fusions: (string | null)[];
  outDir: string;
}): Promise<void> {
  const { database, config, search, dataset, shares, seed, alphas, fusions, outDir } = run;
  const started = performance.now();
  const store = new DocumentStore(database.prisma);
  const platform = new PlatformKnowledge(database.prisma, config.knowledgeBase.maxDocumentBytes);
  const maxBytes = config.knowledgeBase.maxDocumentBytes;
  let partitioned: PartitionedCorpus | null = null;
  let oneProvider: IngestedCorpus | null = null;
  try {
    const ingestBar = progressBar("ingest, partitioned", dataset.corpus.length);
    partitioned = await ingestPartitioned(
      database,
      dataset,
      shares,
      seed,
      {
        document: (tenant, fileName, bytes) => uploadDocument(store, tenant, { fileName, mediaType: "text/markdown", contentBase64: bytes.toString("base64") }, maxBytes),
        knowledgeBase: async (name) => {
          const base = await platform.createKnowledgeBase({ name, description: "A share of a BEIR corpus, for `npm run eval -- --partition`; removed when the run ends." });
          return { id: base.id, upload: (_tenant, fileName, bytes) => platform.upload(base.id, { fileName, bytes, mediaType: "text/markdown" }) };
        },
      },
      (done) => ingestBar.update(done),
    );
    const sizes = Object.fromEntries(shares.map(({ partition }) => [partition, [...partitioned!.partitionOf.values()].filter((part) => part === partition).length]));
    ingestBar.finish(`${JSON.stringify(sizes)}${partitioned.refused.length ? `, ${partitioned.refused.length} refused` : ""}`);
    for (const { id, reason } of partitioned.refused.slice(0, 5)) process.stderr.write(`  refused ${id}: ${reason}\n`);
    const oneBar = progressBar("ingest, one provider (conversations)", dataset.corpus.length);
    oneProvider = await ingestCorpus(database, dataset, (done) => oneBar.update(done));
    oneBar.finish(`${dataset.corpus.length} conversations`);

    const indexBar = progressBar(`index (${search.embedder.model})`, 2 * dataset.corpus.length);
    const indexStarted = performance.now();
    const conversationsIndexed = await indexCorpus(search.indexer, (done) => indexBar.update(done));
    await indexCorpus(search.domains.documents.indexer, (done) => indexBar.update(conversationsIndexed + done));
    const indexSeconds = (performance.now() - indexStarted) / 1000;
    const chunks = await mapChunksToDocuments(database, partitioned);
    const sharedTexts = partitioned.knowledgeBaseId ? await mapPassagesToDocuments(database, partitioned, partitioned.knowledgeBaseId) : 0;
    indexBar.finish(`${indexSeconds.toFixed(0)} s, ${chunks} chunks, ${JSON.stringify(await documentStatuses(database, partitioned))}${sharedTexts ? `, ${sharedTexts} chunk texts shared by two documents` : ""}`);

    fs.mkdirSync(outDir, { recursive: true });
    const base = path.join(outDir, `${dataset.name}-${dataset.split}-partitioned`);
    const rows: PartitionedRow[] = [];
    const total = alphas.length * fusions.length;
    const write = () =>
      fs.writeFileSync(
        `${base}.json`,
        `${JSON.stringify({ dataset: dataset.name, split: dataset.split, documents: dataset.corpus.length, queries: dataset.queries.length, seed, partition: Object.fromEntries(shares.map(({ partition, share }) => [partition, { share, documents: sizes[partition] }])), refused: partitioned!.refused.length, chunks, providers: partitioned!.providers, database: database.kind, embedder: search.embedder.model, indexSeconds, seconds: (performance.now() - started) / 1000, complete: rows.length === total, rows }, null, 2)}\n`,
      );
    await comparePartitioned(search.service, dataset, partitioned, oneProvider, { alphas, fusions }, {
      onRow: (row) => {
        rows.push(row);
        process.stderr.write(`${row.partitioned.label}: nDCG@10 ${row.partitioned.ndcgAt10.toFixed(3)} partitioned, ${row.oneProvider.ndcgAt10.toFixed(3)} in one provider\n`);
        // Written after every row: a long run that is stopped keeps what it has measured.
        write();
      },
    });

    const table = renderMarkdownTable(
      ["fusion", "alpha", "nDCG@10 partitioned", "nDCG@10 one provider", "recall@100 partitioned", "recall@100 one provider", "provider failures", "skipped (partitioned)", "mean latency (ms)"],
      rows.map((row) => [row.fusion ?? "default", row.alpha === null ? "default" : row.alpha.toFixed(2), row.partitioned.ndcgAt10.toFixed(3), row.oneProvider.ndcgAt10.toFixed(3), row.partitioned.recallAt100.toFixed(3), row.oneProvider.recallAt100.toFixed(3), row.partitioned.failedProviders + row.oneProvider.failedProviders, row.partitioned.skippedProviders.join(", ") || "none", `${row.partitioned.meanLatencyMs.toFixed(1)} / ${row.oneProvider.meanLatencyMs.toFixed(1)}`]),
    );
    const split = shares.map(({ partition, share }) => `${partition} ${share} (${sizes[partition]})`).join(", ");
    process.stdout.write(`\n${dataset.name} ${dataset.split}, ${dataset.queries.length} queries, ${dataset.corpus.length} documents split ${split}, seed ${seed}, ${database.kind}, ${((performance.now() - started) / 1000).toFixed(0)} s\n\n${table}\n`);
    process.stderr.write(`\nwrote ${path.relative(process.cwd(), base)}.json\n`);
  } finally {
    if (partitioned?.knowledgeBaseId) await platform.removeKnowledgeBase(partitioned.knowledgeBaseId).catch((error) => process.stderr.write(`could not remove platform knowledge base ${partitioned!.knowledgeBaseId}: ${(error as Error).message}\n`));
    if (database.kind === "postgres") {
      for (const corpus of [partitioned, oneProvider]) if (corpus) await database.prisma.organization.delete({ where: { id: corpus.tenant.organizationId } }).catch(() => undefined);
    }
  }
}
