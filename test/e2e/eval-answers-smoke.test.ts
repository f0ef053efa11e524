/**
 * `npm run eval -- --answers` end to end on a tiny BEIR data set written here: ingestion, the
 * answer pipeline (search, highlights, extractive answer) per query, citation recall@k, and the
 * JSON it writes. The data set is built so the figure is known: two queries whose relevant
 * document is the only one with their words (cited), one whose relevant document shares none
 * of its words while a distractor does (not cited).
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "@jest/globals";

const root = fs.mkdtempSync(path.join(os.tmpdir(), "eval-answers-smoke-"));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

function writeDataset(folder: string) {
  fs.mkdirSync(path.join(folder, "qrels"), { recursive: true });
  const documents = [
    { _id: "d1", title: "Deadlocks in PostgreSQL", text: "Two transactions that lock rows in opposite order deadlock. Lock rows in a consistent order." },
    { _id: "d2", title: "Lisbon in four days", text: "Alfama, tram 28 and pastéis de nata in Belém." },
    { _id: "d3", title: "Kubernetes autoscaling", text: "A horizontal pod autoscaler flapping between replica counts needs a stabilization window." },
    { _id: "d4", title: "Sourdough starter", text: "Feed the starter with flour and water every twelve hours." },
  ];
  const queries = [
    { _id: "q1", text: "why do postgres transactions deadlock?" },
    { _id: "q2", text: "autoscaler flapping replicas" },
    // Judged relevant: d2, which shares no word with it; d4 does.
    { _id: "q3", text: "how often to feed a sourdough starter" },
  ];
  fs.writeFileSync(path.join(folder, "corpus.jsonl"), documents.map((d) => JSON.stringify(d)).join("\n"));
  fs.writeFileSync(path.join(folder, "queries.jsonl"), queries.map((q) => JSON.stringify(q)).join("\n"));
  fs.writeFileSync(path.join(folder, "qrels", "test.tsv"), "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td3\t1\nq3\td2\t1\n");
}

describe("npm run eval -- --answers", () => {
  it("measures citation recall@k of extractive answers and writes JSON", () => {
    const dataset = path.join(root, "tiny");
    const out = path.join(root, "out");
    writeDataset(dataset);
    const { DATABASE_URL: _ignored, ...env } = process.env;
    const run = spawnSync(process.execPath, ["--import", "tsx", "scripts/eval.ts", dataset, "--answers", "1,3", "--out", out], {
      env: { ...env, NODE_OPTIONS: "", EMBEDDER: "hashing", LOG_LEVEL: "warn" },
      encoding: "utf8",
      timeout: 120_000,
    });
    expect(run.stderr).not.toMatch(/Error/);
    expect(run.status).toBe(0);
    const results = JSON.parse(fs.readFileSync(path.join(out, "tiny-test-answers.json"), "utf8"));
    expect(results).toMatchObject({ dataset: "tiny", split: "test", documents: 4, queries: 3, mode: "EXTRACTIVE" });
    expect(results.rows.map((row: { passages: number }) => row.passages)).toEqual([1, 3]);
    for (const row of results.rows) {
      expect(row.queries).toBe(3);
      expect(row.citationRecall).toBeCloseTo(2 / 3, 10);
      expect(row.citationRecall).toBeLessThanOrEqual(row.passageHitRate);
      expect(row.answered).toBe(1);
    }
    expect(run.stdout).toMatch(/citation recall@k/);
  }, 150_000);
});
