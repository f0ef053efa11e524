/**
 * Loads a retrieval test collection in the BEIR layout (Thakur et al. 2021), the format most
 * public search-quality benchmarks ship in:
 *
 *   <folder>/corpus.jsonl        {"_id", "title", "text"} one document a line
 *   <folder>/queries.jsonl       {"_id", "text"} one query a line
 *   <folder>/qrels/<split>.tsv   query-id <TAB> corpus-id <TAB> score, after a header line
 *
 * It follows BEIR's own GenericDataLoader where that matters for comparable numbers (the qrels
 * header is skipped, a repeated judgement keeps the last score, a missing title is ""), and is
 * stricter where BEIR would silently mis-measure (see `queries` below and the duplicate checks).
 */
import fs from "node:fs";
import path from "node:path";
import readline from "node:readline";

export interface BeirDocument {
  id: string;
  title: string;
  text: string;
}

export interface BeirQuery {
  id: string;
  text: string;
}

/** Relevance grades by query id, then document id. 0 means "judged, not relevant". */
export type Qrels = Map<string, Map<string, number>>;

export interface BeirDataset {
  /** The folder's base name, e.g. "scifact". */
  name: string;
  split: string;
  corpus: BeirDocument[];
  /**
   * Only the queries with at least one relevant (grade > 0) document in this split, in
   * queries.jsonl order. queries.jsonl usually holds every split's queries, and BEIR keeps
   * any query that has a judgement; a query judged only non-relevant can score nothing but 0,
   * so keeping it would just dilute the mean.
   */
  queries: BeirQuery[];
  /** The split's judgements for exactly the queries in `queries` (zero grades included). */
  qrels: Qrels;
}

export interface LoadBeirOptions {
  /** qrels/<split>.tsv to evaluate against; defaults to test, else dev, else train. */
  split?: string;
}

export class BeirFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BeirFormatError";
  }
}

const DEFAULT_SPLIT_PREFERENCE = ["test", "dev", "train"] as const;

export async function loadBeirDataset(folder: string, options: LoadBeirOptions = {}): Promise<BeirDataset> {
  const root = path.resolve(folder);
  const stat = await fs.promises.stat(root).catch(() => null);
  if (!stat) throw new BeirFormatError(`BEIR dataset folder not found: ${root}`);
  if (!stat.isDirectory()) throw new BeirFormatError(`BEIR dataset path is not a folder: ${root}`);

  const corpusPath = path.join(root, "corpus.jsonl");
  const queriesPath = path.join(root, "queries.jsonl");
  const qrelsFolder = path.join(root, "qrels");
  // Check the whole layout up front so a wrong folder fails before minutes of corpus parsing.
  for (const required of [corpusPath, queriesPath]) await requireFile(required, root);
  const split = await chooseSplit(qrelsFolder, root, options.split);
  const qrelsPath = path.join(qrelsFolder, `${split}.tsv`);

  const allQrels = await readQrels(qrelsPath);
  const queries: BeirQuery[] = [];
  const qrels: Qrels = new Map();
  const seenQueryIds = new Set<string>();
  await forEachJsonLine(queriesPath, (record, where) => {
    const id = requireId(record, where);
    if (seenQueryIds.has(id)) throw new BeirFormatError(`${where}: duplicate query _id "${id}"`);
    seenQueryIds.add(id);
    const judgements = allQrels.get(id);
    if (!judgements || !hasRelevant(judgements)) return;
    queries.push({ id, text: requireString(record, "text", where) });
    qrels.set(id, judgements);
  });
  // BEIR would raise a KeyError here; a judged query we cannot run means the numbers would not
  // be comparable with published ones, so say which.
  const unknown = [...allQrels.keys()].filter((id) => !seenQueryIds.has(id) && hasRelevant(allQrels.get(id)!));
  if (unknown.length > 0) {
    throw new BeirFormatError(
      `${qrelsPath} judges ${unknown.length} quer${unknown.length === 1 ? "y" : "ies"} missing from ${queriesPath}: ${preview(unknown)}`,
    );
  }

  const corpus: BeirDocument[] = [];
  const seenDocumentIds = new Set<string>();
  await forEachJsonLine(corpusPath, (record, where) => {
    const id = requireId(record, where);
    // Two documents under one id would let a run list "the same" document twice; refuse rather than guess.
    if (seenDocumentIds.has(id)) throw new BeirFormatError(`${where}: duplicate document _id "${id}"`);
    seenDocumentIds.add(id);
    corpus.push({ id, title: optionalString(record, "title", where), text: requireString(record, "text", where) });
  });

  return { name: path.basename(root), split, corpus, queries, qrels };
}

async function requireFile(file: string, root: string): Promise<void> {
  const stat = await fs.promises.stat(file).catch(() => null);
  if (!stat?.isFile()) {
    throw new BeirFormatError(
      `${root} is not a BEIR dataset: ${path.basename(file)} is missing (expected corpus.jsonl, queries.jsonl and qrels/<split>.tsv)`,
    );
  }
}

async function chooseSplit(qrelsFolder: string, root: string, requested: string | undefined): Promise<string> {
  const entries = await fs.promises.readdir(qrelsFolder, { withFileTypes: true }).catch(() => null);
  if (!entries) throw new BeirFormatError(`${root} is not a BEIR dataset: the qrels/ folder is missing`);
  const available = entries
    .filter((entry) => entry.isFile() && entry.name.endsWith(".tsv"))
    .map((entry) => entry.name.slice(0, -".tsv".length))
    .sort();
  const listing = available.length > 0 ? available.join(", ") : "none";
  if (requested !== undefined) {
    if (!available.includes(requested)) {
      throw new BeirFormatError(`${root} has no "${requested}" split (qrels/${requested}.tsv); available splits: ${listing}`);
    }
    return requested;
  }
  const preferred = DEFAULT_SPLIT_PREFERENCE.find((split) => available.includes(split));
  if (!preferred) {
    throw new BeirFormatError(`${root} has no test, dev or train qrels; available splits: ${listing} (pass one explicitly)`);
  }
  return preferred;
}

async function readQrels(file: string): Promise<Qrels> {
  const qrels: Qrels = new Map();
  await forEachLine(file, (line, lineNumber) => {
    const where = `${file}:${lineNumber}`;
    const columns = line.split("\t").map((column) => column.trim());
    // BEIR skips the first line unconditionally; skipping it only when it is not a judgement
    // also accepts header-less files without losing their first row.
    if (lineNumber === 1 && !isInteger(columns[2])) return;
    if (columns.length < 3) {
      throw new BeirFormatError(`${where}: expected "query-id<TAB>corpus-id<TAB>score", got ${JSON.stringify(line)}`);
    }
    const [queryId, documentId, score] = columns as [string, string, string];
    if (!queryId || !documentId) throw new BeirFormatError(`${where}: empty query-id or corpus-id`);
    if (!isInteger(score)) throw new BeirFormatError(`${where}: score must be an integer, got ${JSON.stringify(score)}`);
    let judgements = qrels.get(queryId);
    if (!judgements) qrels.set(queryId, (judgements = new Map()));
    judgements.set(documentId, Number(score));
  });
  return qrels;
}

/** Streams a file line by line (corpora run to gigabytes), skipping blank lines. */
async function forEachLine(file: string, visit: (line: string, lineNumber: number) => void): Promise<void> {
  const stream = fs.createReadStream(file, { encoding: "utf8" });
  const lines = readline.createInterface({ input: stream, crlfDelay: Infinity });
  let lineNumber = 0;
  try {
    for await (const raw of lines) {
      lineNumber += 1;
      const line = lineNumber === 1 ? raw.replace(/^\uFEFF/, "") : raw;
      if (line.trim() === "") continue;
      visit(line, lineNumber);
    }
  } finally {
    lines.close();
    stream.destroy();
  }
}

async function forEachJsonLine(file: string, visit: (record: Record<string, unknown>, where: string) => void): Promise<void> {
  await forEachLine(file, (line, lineNumber) => {
    const where = `${file}:${lineNumber}`;
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch (error) {
      throw new BeirFormatError(`${where}: not valid JSON (${(error as Error).message})`);
    }
    if (typeof record !== "object" || record === null || Array.isArray(record)) {
      throw new BeirFormatError(`${where}: expected a JSON object`);
    }
    visit(record as Record<string, unknown>, where);
  });
}

function requireId(record: Record<string, unknown>, where: string): string {
  const id = record._id;
  // Some exports write numeric ids; qrels compare them as text, so normalise here.
  if (typeof id === "number" && Number.isFinite(id)) return String(id);
  if (typeof id !== "string" || id === "") throw new BeirFormatError(`${where}: "_id" must be a non-empty string`);
  return id;
}

function requireString(record: Record<string, unknown>, field: string, where: string): string {
  const value = record[field];
  if (typeof value !== "string") throw new BeirFormatError(`${where}: "${field}" must be a string`);
  return value;
}

function optionalString(record: Record<string, unknown>, field: string, where: string): string {
  const value = record[field];
  if (value === undefined || value === null) return "";
  if (typeof value !== "string") throw new BeirFormatError(`${where}: "${field}" must be a string`);
  return value;
}

function hasRelevant(judgements: Map<string, number>): boolean {
  for (const grade of judgements.values()) if (grade > 0) return true;
  return false;
}

function isInteger(value: string | undefined): value is string {
  return value !== undefined && /^[+-]?\d+$/.test(value);
}

function preview(ids: string[]): string {
  const shown = ids.slice(0, 5).join(", ");
  return ids.length > 5 ? `${shown}, … (${ids.length - 5} more)` : shown;
}
