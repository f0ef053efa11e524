import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { BeirFormatError, loadBeirDataset } from "../../lib/evaluation/beir.js";
import { renderMarkdownTable } from "../../lib/evaluation/markdown-table.js";
import { evaluateRun, meanOf, ndcgAtK, recallAtK } from "../../lib/evaluation/metrics.js";
import { linearTicks, logTicks, renderLinePlot } from "../../lib/evaluation/svg-plot.js";

const SCIFACT = "/work/shared/datasets/scifact";

describe("ndcgAtK and recallAtK", () => {
  // Graded qrels: d3 is highly relevant, d1 and d6 relevant, d5 judged non-relevant.
  const relevant = new Map([
    ["d1", 1],
    ["d3", 2],
    ["d5", 0],
    ["d6", 1],
  ]);
  const ranked = ["d1", "d2", "d3", "d4", "d5"];

  it("reproduces a hand-computed graded example (trec_eval ndcg_cut: linear gain, log2(rank + 1))", () => {
    // DCG@5  = 1/log2(2) + 2/log2(4)                = 1 + 1                 = 2
    // IDCG@5 = 2/log2(2) + 1/log2(3) + 1/log2(4)    = 2 + 0.6309298 + 0.5   = 3.1309298; 2 / 3.1309298 = 0.638788
    expect(ndcgAtK(ranked, relevant, 5)).toBeCloseTo(2 / (2 + 1 / Math.log2(3) + 0.5), 10);
    expect(ndcgAtK(ranked, relevant, 5)).toBeCloseTo(0.638788, 6);
    // @1: d1 (grade 1) where the ideal has d3 (grade 2).
    expect(ndcgAtK(ranked, relevant, 1)).toBeCloseTo(0.5, 10);
    // @3: DCG = 1 + 2/log2(4) = 2; IDCG@3 is the full ideal above.
    expect(ndcgAtK(ranked, relevant, 3)).toBeCloseTo(0.638788, 6);
    expect(recallAtK(ranked, relevant, 5)).toBeCloseTo(2 / 3, 10);
    expect(recallAtK(ranked, relevant, 1)).toBeCloseTo(1 / 3, 10);
  });

  it("gives 1.0 for a perfect ranking and 0 for an empty or irrelevant one", () => {
    expect(ndcgAtK(["d3", "d1", "d6"], relevant, 10)).toBe(1);
    expect(ndcgAtK(["d3", "d6", "d1", "d2"], relevant, 10)).toBe(1);
    expect(recallAtK(["d3", "d1", "d6"], relevant, 3)).toBe(1);
    expect(ndcgAtK([], relevant, 10)).toBe(0);
    expect(recallAtK([], relevant, 10)).toBe(0);
    expect(ndcgAtK(["d2", "d4", "d5"], relevant, 10)).toBe(0);
    expect(ndcgAtK(["d1"], new Map([["d1", 0]]), 10)).toBe(0);
  });

  it("counts a repeated document once and rejects a cutoff that is not a positive integer", () => {
    expect(ndcgAtK(["d1", "d1", "d3"], relevant, 2)).toBeCloseTo(ndcgAtK(["d1", "d3"], relevant, 2), 12);
    expect(recallAtK(["d1", "d1", "d1"], relevant, 3)).toBeCloseTo(1 / 3, 12);
    expect(() => ndcgAtK(ranked, relevant, 0)).toThrow(RangeError);
    expect(() => recallAtK(ranked, relevant, 2.5)).toThrow(RangeError);
  });

  it("averages over every judged query, a query without results counting as 0", () => {
    const qrels = new Map([
      ["q1", new Map([["a", 1]])],
      ["q2", new Map([["b", 1]])],
      ["q3", new Map([["c", 0]])], // nothing relevant: not a judged query
    ]);
    const run = new Map([
      ["q1", ["a", "x"]],
      ["q3", ["c"]],
      ["unjudged", ["a"]],
    ]);
    const result = evaluateRun(run, qrels, [1, 10]);
    expect(result.queryCount).toBe(2);
    expect(result.queriesWithoutResults).toBe(1);
    expect(result.ndcg[10]).toBeCloseTo(0.5, 12);
    expect(result.recall[1]).toBeCloseTo(0.5, 12);
    expect(result.perQuery.get("q2")).toEqual({ ndcg: { 1: 0, 10: 0 }, recall: { 1: 0, 10: 0 } });
    expect(meanOf([0.25, 0.75, 0.5])).toBeCloseTo(0.5, 12);
    expect(meanOf([])).toBeNaN();
    expect(() => evaluateRun(run, new Map(), [10])).toThrow(/no query with a relevant document/);
  });
});

describe("loadBeirDataset", () => {
  let tmp: string;

  beforeAll(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "beir-test-"));
  });
  afterAll(() => {
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  function writeDataset(name: string, files: Record<string, string>): string {
    const folder = path.join(tmp, name);
    for (const [file, content] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(folder, file)), { recursive: true });
      fs.writeFileSync(path.join(folder, file), content);
    }
    return folder;
  }

  const corpus = ['{"_id":"d1","title":"Alpha","text":"first"}', "", '{"_id":"d2","text":"no title"}', '{"_id":3,"title":"","text":"numeric id"}', ""].join("\n");
  const queries = ['{"_id":"q1","text":"one"}', '{"_id":"q2","text":"two"}', '{"_id":"q3","text":"three"}'].join("\r\n");

  it("loads the real SciFact train split: 5,183 documents, 809 queries, each with a relevant document", async () => {
    const dataset = await loadBeirDataset(SCIFACT);
    expect(dataset.name).toBe("scifact");
    expect(dataset.split).toBe("train");
    expect(dataset.corpus).toHaveLength(5183);
    expect(dataset.queries).toHaveLength(809);
    expect(dataset.qrels.size).toBe(809);
    const documentIds = new Set(dataset.corpus.map((document) => document.id));
    let judgedPairs = 0;
    for (const query of dataset.queries) {
      const judgements = dataset.qrels.get(query.id);
      expect(judgements).toBeDefined();
      const relevant = [...judgements!].filter(([, grade]) => grade > 0);
      expect(relevant.length).toBeGreaterThan(0);
      expect(relevant.some(([documentId]) => documentIds.has(documentId))).toBe(true);
      judgedPairs += judgements!.size;
    }
    expect(judgedPairs).toBe(919);
    expect(dataset.corpus[0]).toMatchObject({ id: "4983", title: expect.stringMatching(/^Microstructural development/) });
    expect(dataset.queries[0]).toEqual({ id: "0", text: "0-dimensional biomaterials lack inductive properties." });
  });

  it("names the available splits when asked for one that does not exist", async () => {
    await expect(loadBeirDataset(SCIFACT, { split: "test" })).rejects.toThrow(/no "test" split .*available splits: train/);
  });

  it("prefers test, then dev, then train; keeps only queries with a relevant document", async () => {
    const folder = writeDataset("tiny", {
      "corpus.jsonl": corpus,
      "queries.jsonl": queries,
      "qrels/train.tsv": "query-id\tcorpus-id\tscore\nq1\td1\t1\n",
      "qrels/dev.tsv": "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t2\nq2\t3\t0\nq3\td1\t0\n",
    });
    const dataset = await loadBeirDataset(folder);
    expect(dataset.split).toBe("dev");
    expect(dataset.corpus).toEqual([
      { id: "d1", title: "Alpha", text: "first" },
      { id: "d2", title: "", text: "no title" },
      { id: "3", title: "", text: "numeric id" },
    ]);
    // q3 is judged only non-relevant, so it cannot score anything but 0: left out.
    expect(dataset.queries.map((query) => query.id)).toEqual(["q1", "q2"]);
    expect(dataset.qrels.get("q2")).toEqual(new Map([["d2", 2], ["3", 0]]));
    expect(dataset.qrels.has("q3")).toBe(false);

    fs.writeFileSync(path.join(folder, "qrels/test.tsv"), "q2\td2\t1\n"); // no header: first row kept
    const test = await loadBeirDataset(folder);
    expect(test.split).toBe("test");
    expect(test.queries.map((query) => query.id)).toEqual(["q2"]);
    expect((await loadBeirDataset(folder, { split: "train" })).queries).toHaveLength(1);
  });

  it("reports malformed lines with file and line number", async () => {
    const badCorpus = writeDataset("bad-corpus", {
      "corpus.jsonl": '{"_id":"d1","text":"ok"}\n\n{"_id":"d2","text":oops}\n',
      "queries.jsonl": queries,
      "qrels/test.tsv": "query-id\tcorpus-id\tscore\nq1\td1\t1\n",
    });
    await expect(loadBeirDataset(badCorpus)).rejects.toThrow(/bad-corpus[\\/]corpus\.jsonl:3: not valid JSON/);

    const missingText = writeDataset("missing-text", {
      "corpus.jsonl": '{"_id":"d1","title":"t"}\n',
      "queries.jsonl": queries,
      "qrels/test.tsv": "query-id\tcorpus-id\tscore\nq1\td1\t1\n",
    });
    await expect(loadBeirDataset(missingText)).rejects.toThrow(/corpus\.jsonl:1: "text" must be a string/);

    const badScore = writeDataset("bad-score", {
      "corpus.jsonl": corpus,
      "queries.jsonl": queries,
      "qrels/test.tsv": "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\trelevant\n",
    });
    await expect(loadBeirDataset(badScore)).rejects.toThrow(/test\.tsv:3: score must be an integer/);

    const duplicate = writeDataset("duplicate", {
      "corpus.jsonl": '{"_id":"d1","text":"a"}\n{"_id":"d1","text":"b"}\n',
      "queries.jsonl": queries,
      "qrels/test.tsv": "q1\td1\t1\n",
    });
    await expect(loadBeirDataset(duplicate)).rejects.toThrow(/corpus\.jsonl:2: duplicate document _id "d1"/);

    const unknownQuery = writeDataset("unknown-query", {
      "corpus.jsonl": corpus,
      "queries.jsonl": queries,
      "qrels/test.tsv": "q1\td1\t1\nq9\td1\t1\n",
    });
    await expect(loadBeirDataset(unknownQuery)).rejects.toThrow(/judges 1 query missing from .*queries\.jsonl: q9/);
  });

  it("says clearly when the folder or one of its files is missing", async () => {
    await expect(loadBeirDataset(path.join(tmp, "nowhere"))).rejects.toThrow(/BEIR dataset folder not found: .*nowhere/);
    const noCorpus = writeDataset("no-corpus", { "queries.jsonl": queries, "qrels/test.tsv": "q1\td1\t1\n" });
    await expect(loadBeirDataset(noCorpus)).rejects.toThrow(/corpus\.jsonl is missing/);
    const noQrels = writeDataset("no-qrels", { "corpus.jsonl": corpus, "queries.jsonl": queries });
    await expect(loadBeirDataset(noQrels)).rejects.toThrow(/qrels\/ folder is missing/);
    const oddSplit = writeDataset("odd-split", { "corpus.jsonl": corpus, "queries.jsonl": queries, "qrels/validation.tsv": "q1\td1\t1\n" });
    await expect(loadBeirDataset(oddSplit)).rejects.toThrow(BeirFormatError);
    await expect(loadBeirDataset(oddSplit)).rejects.toThrow(/available splits: validation/);
    expect((await loadBeirDataset(oddSplit, { split: "validation" })).queries).toHaveLength(1);
  });
});

/** Enough of an XML check for generated SVG: one root, every tag closed in order, no stray '<' or '&'. */
function checkWellFormed(svg: string): void {
  const body = svg.replace(/^<\?xml[^?]*\?>\s*/, "");
  const stack: string[] = [];
  let roots = 0;
  const tag = /<(\/?)([A-Za-z][\w:-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>/g;
  let last = 0;
  for (let match = tag.exec(body); match; match = tag.exec(body)) {
    const between = body.slice(last, match.index);
    expect(between).not.toMatch(/[<>]/);
    expect(between.replace(/&(amp|lt|gt|quot|apos|#\d+|#x[0-9a-f]+);/gi, "")).not.toContain("&");
    last = tag.lastIndex;
    const [, closing, name, , selfClosing] = match;
    if (stack.length === 0 && !closing) roots += 1;
    if (closing) expect(stack.pop()).toBe(name);
    else if (!selfClosing) stack.push(name!);
  }
  expect(body.slice(last).trim()).toBe("");
  expect(stack).toEqual([]);
  expect(roots).toBe(1);
}

describe("renderLinePlot", () => {
  const alphas = [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1];

  it("renders a standalone, well-formed SVG with legend, markers, value labels and escaped text", () => {
    const svg = renderLinePlot({
      title: "nDCG@10 <SciFact> & friends",
      subtitle: `train split "809" queries`,
      xLabel: "α (0 = semantic only … 1 = keyword only)",
      yLabel: "nDCG@10",
      series: [
        { name: "Hybrid (RRF)", points: alphas.map((x) => ({ x, y: 0.64 + 0.3 * x * (1 - x) })) },
        { name: "BM25 published 0.665", points: [{ x: 0, y: 0.665 }, { x: 1, y: 0.665 }], dashed: true },
      ],
      referenceLines: [{ y: 0.741, label: "dense <BGE> 0.741" }],
      xDomain: [0, 1],
    });
    checkWellFormed(svg);
    expect(svg.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg).not.toMatch(/<script|@import|url\(http|href=/i);
    expect(svg).toContain("nDCG@10 &lt;SciFact&gt; &amp; friends");
    expect(svg).toContain("train split &quot;809&quot; queries");
    expect(svg).toContain("dense &lt;BGE&gt; 0.741");
    expect(svg).toContain(">Hybrid (RRF)</text>");
    expect(svg).toContain(">BM25 published 0.665</text>");
    expect(svg).toContain('stroke-dasharray="7 5"');
    expect(svg.match(/<circle /g)?.length).toBe(11 + 1); // markers + the legend swatch of the solid series
    expect(svg).toContain(">0.715</text>"); // the peak, labelled (0.64 + 0.3 · 0.25)
    const xTicks = [...svg.matchAll(/class="tick-label x"[^>]*>([^<]+)</g)].map((match) => match[1]);
    expect(xTicks).toEqual(["0.0", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9", "1.0"]);
  });

  it("puts log-scale ticks at powers of ten and labels them compactly", () => {
    const svg = renderLinePlot({
      title: "Latency against corpus size",
      xLabel: "documents",
      yLabel: "ms",
      xScale: "log",
      series: [{ name: "p95", points: [100, 1_000, 10_000, 100_000, 1_000_000].map((x, i) => ({ x, y: 5 + i * 20 })) }],
    });
    checkWellFormed(svg);
    const xTicks = [...svg.matchAll(/class="tick-label x"[^>]*>([^<]+)</g)].map((match) => match[1]);
    expect(xTicks).toEqual(["100", "1k", "10k", "100k", "1M"]);
    expect(logTicks(1, 1e6)).toEqual([1, 10, 100, 1_000, 10_000, 100_000, 1_000_000]);
    // Under two decades powers of ten alone are too sparse, so 2× and 5× join them.
    expect(logTicks(200, 5_000)).toEqual([200, 500, 1_000, 2_000, 5_000]);
    expect(linearTicks(0, 1, 10)).toEqual([0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1]);
    expect(linearTicks(0.61, 0.74, 6)).toEqual([0.62, 0.64, 0.66, 0.68, 0.7, 0.72, 0.74]);
  });

  it("rejects data a scale cannot draw", () => {
    const base = { title: "t", xLabel: "x", yLabel: "y" };
    expect(() => renderLinePlot({ ...base, xScale: "log", series: [{ name: "s", points: [{ x: 0, y: 1 }] }] })).toThrow(/log scale/);
    expect(() => renderLinePlot({ ...base, series: [{ name: "s", points: [{ x: Number.NaN, y: 1 }] }] })).toThrow(/non-finite/);
    expect(() => renderLinePlot({ ...base, series: [], yDomain: [1, 1] })).toThrow(/yDomain/);
  });
});

describe("renderMarkdownTable", () => {
  it("pads columns, right-aligns numeric ones and escapes pipes", () => {
    const table = renderMarkdownTable(
      ["alpha", "nDCG@10", "note"],
      [
        [0, 0.641, "semantic | only"],
        [0.5, 0.716, "best"],
        [1, 0.682, ""],
      ],
    );
    expect(table).toBe(
      [
        "| alpha | nDCG@10 | note             |",
        "| ----: | ------: | ---------------- |",
        "|     0 |   0.641 | semantic \\| only |",
        "|   0.5 |   0.716 | best             |",
        "|     1 |   0.682 |                  |",
      ].join("\n"),
    );
  });

  it("honours explicit alignment and counts characters, not UTF-16 units", () => {
    const table = renderMarkdownTable(["α", "run"], [["≈1", "x"]], { align: ["center", "right"] });
    expect(table.split("\n")).toEqual(["|  α  | run |", "| :-: | --: |", "| ≈1  |   x |"]);
    expect(() => renderMarkdownTable(["a", "b"], [["only one"]])).toThrow(/row 1 has 1 cells for 2 columns/);
  });
});
