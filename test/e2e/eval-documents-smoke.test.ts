/**
 * `npm run eval -- <folder> --as documents` end to end on a tiny BEIR data set written here:
 * every BEIR document uploaded as a Markdown file through uploadDocument, the document indexer
 * drained, the documents providers asked at two alphas, chunk hits scored as their documents,
 * and the JSON and SVG it writes.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "@jest/globals";

const root = fs.mkdtempSync(path.join(os.tmpdir(), "eval-documents-smoke-"));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

function writeDataset(folder: string) {
  fs.mkdirSync(path.join(folder, "qrels"), { recursive: true });
  // d3 is long enough to become several chunks: it must still count once, at its best chunk.
  const autoscaling = Array.from({ length: 60 }, (_, i) => `Paragraph ${i} about cluster capacity planning and node pools.`).join(" ");
  const documents = [
    { _id: "d1", title: "Deadlocks in PostgreSQL", text: "Two transactions that lock rows in opposite order deadlock; lock in a consistent order." },
    { _id: "d2", title: "Lisbon in four days", text: "Alfama, tram 28 and pastéis de nata in Belém." },
    { _id: "d3", title: "Kubernetes autoscaling", text: `${autoscaling} A horizontal pod autoscaler flapping between replica counts needs a stabilization window.` },
    { _id: "d4", title: "Sourdough starter", text: "Feed the starter with equal weights of flour and water every twelve hours." },
  ];
  const queries = [
    { _id: "q1", text: "why do my postgres transactions deadlock?" },
    { _id: "q2", text: "what to eat in Lisbon, pastéis de nata" },
    { _id: "q3", text: "autoscaler keeps flapping replicas" },
  ];
  fs.writeFileSync(path.join(folder, "corpus.jsonl"), documents.map((d) => JSON.stringify(d)).join("\n"));
  fs.writeFileSync(path.join(folder, "queries.jsonl"), queries.map((q) => JSON.stringify(q)).join("\n"));
  fs.writeFileSync(path.join(folder, "qrels", "test.tsv"), "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\nq3\td3\t1\n");
}

describe("npm run eval --as documents", () => {
  it("uploads the corpus as documents, scores chunk hits as their documents and writes <dataset>-<split>-documents.json and .svg", () => {
    const dataset = path.join(root, "tiny");
    const out = path.join(root, "out");
    writeDataset(dataset);
    const { DATABASE_URL: _ignored, ...env } = process.env;
    const run = spawnSync(process.execPath, ["--import", "tsx", "scripts/eval.ts", dataset, "--as", "documents", "--alphas", "0,1", "--out", out], {
      env: { ...env, NODE_OPTIONS: "", EMBEDDER: "hashing", LOG_LEVEL: "warn" },
      encoding: "utf8",
      timeout: 120_000,
    });
    expect(run.stderr).not.toMatch(/Error|refused/);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/as documents/);
    expect(run.stdout).toMatch(/keyword only \(BM25\)\s*\|\s*1\.00\s*\|\s*1\.000/);
    const results = JSON.parse(fs.readFileSync(path.join(out, "tiny-test-documents.json"), "utf8"));
    expect(results).toMatchObject({ dataset: "tiny", split: "test", as: "documents", documents: 4, queries: 3, complete: true, embedder: "feature-hashing-256" });
    expect(results.chunks).toBeGreaterThan(4);
    expect(results.rows.map((row: { alpha: number }) => row.alpha)).toEqual([0, 1]);
    for (const row of results.rows) {
      expect(row.ndcgAt10).toBeGreaterThan(0);
      expect(row.ndcgAt10).toBeLessThanOrEqual(1);
      expect(row.recallAt100).toBe(1);
      expect(row.failedProviders).toBe(0);
    }
    expect(fs.readFileSync(path.join(out, "tiny-test-documents.svg"), "utf8")).toMatch(/<svg[\s\S]*as documents[\s\S]*<\/svg>\s*$/);
  }, 150_000);

  it("refuses an unknown --as with a message naming the choices", () => {
    const run = spawnSync(process.execPath, ["--import", "tsx", "scripts/eval.ts", path.join(root, "tiny"), "--as", "messages"], {
      env: { ...process.env, NODE_OPTIONS: "", EMBEDDER: "hashing", LOG_LEVEL: "warn" },
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(run.status).not.toBe(0);
    expect(run.stderr).toMatch(/--as.*conversations or documents/);
  }, 90_000);
});
