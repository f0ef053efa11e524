/**
 * `npm run eval` end to end on a tiny BEIR data set written here: ingestion, indexing, the
 * search service at two alphas, metrics, and the JSON and SVG it writes.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "@jest/globals";

const root = fs.mkdtempSync(path.join(os.tmpdir(), "eval-smoke-"));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

function writeDataset(folder: string) {
  fs.mkdirSync(path.join(folder, "qrels"), { recursive: true });
  const documents = [
    { _id: "d1", title: "Deadlocks in PostgreSQL", text: "Two transactions that lock rows in opposite order deadlock; lock in a consistent order." },
    { _id: "d2", title: "Lisbon in four days", text: "Alfama, tram 28 and pastéis de nata in Belém." },
    { _id: "d3", title: "Kubernetes autoscaling", text: "A horizontal pod autoscaler flapping between replica counts needs a stabilization window." },
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

describe("npm run eval", () => {
  it("scores a BEIR data set at each alpha and writes JSON and SVG", () => {
    const dataset = path.join(root, "tiny");
    const out = path.join(root, "out");
    writeDataset(dataset);
    const { DATABASE_URL: _ignored, ...env } = process.env;
    const run = spawnSync(process.execPath, ["--import", "tsx", "scripts/eval.ts", dataset, "--alphas", "0,0.5,1", "--out", out], {
      env: { ...env, NODE_OPTIONS: "", EMBEDDER: "hashing", LOG_LEVEL: "warn" },
      encoding: "utf8",
      timeout: 120_000,
    });
    expect(run.stderr).not.toMatch(/Error/);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/keyword only \(BM25\)\s*\|\s*1\.00\s*\|\s*1\.000/);
    const results = JSON.parse(fs.readFileSync(path.join(out, "tiny-test-feature-hashing-256.json"), "utf8"));
    expect(results).toMatchObject({ dataset: "tiny", split: "test", documents: 4, queries: 3, complete: true });
    expect(results.rows.map((row: { alpha: number }) => row.alpha)).toEqual([0, 0.5, 1]);
    for (const row of results.rows) {
      expect(row.ndcgAt10).toBeGreaterThan(0);
      expect(row.ndcgAt10).toBeLessThanOrEqual(1);
      expect(row.failedProviders).toBe(0);
    }
    const svg = fs.readFileSync(path.join(out, "tiny-test-feature-hashing-256.svg"), "utf8");
    expect(svg).toMatch(/<svg[\s\S]*nDCG@10[\s\S]*<\/svg>\s*$/);
  }, 150_000);
});
