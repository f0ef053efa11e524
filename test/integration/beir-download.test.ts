/**
 * `npm run eval -- --dataset <name>` fetches a BEIR data set as its authors publish it (one zip
 * per data set). Tested against a local HTTP server of ours that serves zips built here, since
 * the real host cannot be reached from CI: the data set unpacks and loads, a second fetch uses
 * the copy on disk, and hostile archives (entries outside the data set's folder, a size over the
 * bound) or a missing data set fail with a message and leave nothing behind.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import yazl from "yazl";
import { loadBeirDataset } from "../../lib/evaluation/beir.js";
import { DatasetFetchError, fetchBeirDataset } from "../../lib/evaluation/beir-download.js";

function zipOf(files: Record<string, string>): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const [name, text] of Object.entries(files)) zip.addBuffer(Buffer.from(text), name);
  zip.end();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    zip.outputStream.on("data", (chunk: Buffer) => chunks.push(chunk));
    zip.outputStream.on("end", () => resolve(Buffer.concat(chunks)));
    zip.outputStream.on("error", reject);
  });
}

const TINY = {
  "tiny/corpus.jsonl": '{"_id": "d1", "title": "Aspirin", "text": "Aspirin thins blood."}\n{"_id": "d2", "title": "Coffee", "text": "Coffee keeps you awake."}\n',
  "tiny/queries.jsonl": '{"_id": "q1", "text": "does aspirin thin blood"}\n',
  "tiny/qrels/test.tsv": "query-id\tcorpus-id\tscore\nq1\td1\t1\n",
};

const archives = new Map<string, Buffer>();
const requests: string[] = [];
let server: http.Server;
let baseUrl: string;
let directory: string;

beforeAll(async () => {
  archives.set("/tiny.zip", await zipOf(TINY));
  // yazl will not write a ".." path, so the name is patched in place (same length, in both the
  // local header and the central directory): the zip-slip archive a hostile mirror could serve.
  const slip = await zipOf({ "slip/corpus.jsonl": "{}\n", "slip/aa/aa/escaped.txt": "outside" });
  archives.set("/slip.zip", Buffer.from(slip.toString("latin1").replaceAll("slip/aa/aa/", "slip/../../"), "latin1"));
  archives.set("/elsewhere.zip", await zipOf({ "other/corpus.jsonl": "{}\n" }));
  // Random text does not compress: the archive itself is over 100 KB.
  const big = Object.fromEntries(Object.entries(TINY).map(([name, text]) => [name.replace("tiny/", "big/"), text]));
  archives.set("/big.zip", await zipOf({ ...big, "big/padding.txt": randomBytes(150_000).toString("base64") }));
  server = http.createServer((request, response) => {
    requests.push(request.url ?? "");
    const body = archives.get(request.url ?? "");
    if (!body) return void response.writeHead(404).end("not found");
    response.writeHead(200, { "content-type": "application/zip", "content-length": body.length }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  directory = fs.mkdtempSync(path.join(os.tmpdir(), "beir-datasets-"));
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  fs.rmSync(directory, { recursive: true, force: true });
});

/** What the data sets folder holds, partial downloads included. */
const listing = () => fs.readdirSync(directory).sort();

describe("fetchBeirDataset", () => {
  it("fetches, unpacks and loads a data set by name, then reuses it without the network", async () => {
    const folder = await fetchBeirDataset("tiny", { directory, baseUrl });
    expect(folder).toBe(path.join(directory, "tiny"));
    const dataset = await loadBeirDataset(folder);
    expect(dataset.corpus.map((document) => document.id)).toEqual(["d1", "d2"]);
    expect(dataset.queries).toEqual([{ id: "q1", text: "does aspirin thin blood" }]);
    expect(dataset.qrels.get("q1")).toEqual(new Map([["d1", 1]]));
    const before = requests.length;
    expect(await fetchBeirDataset("tiny", { directory, baseUrl })).toBe(folder);
    expect(requests.length).toBe(before);
  });

  it("says when there is no such data set, and leaves nothing behind", async () => {
    await expect(fetchBeirDataset("nosuch", { directory, baseUrl })).rejects.toThrow(/nosuch\.zip answered HTTP 404/);
    expect(listing()).toEqual(["tiny"]);
  });

  it("refuses names that are not data set names before any request", async () => {
    const before = requests.length;
    for (const name of ["../etc", "Tiny", "a/b", "", "x".repeat(65)]) {
      await expect(fetchBeirDataset(name, { directory, baseUrl })).rejects.toThrow(DatasetFetchError);
    }
    expect(requests.length).toBe(before);
  });

  it("refuses an archive with entries outside the data set's folder, writing nothing outside it", async () => {
    await expect(fetchBeirDataset("slip", { directory, baseUrl })).rejects.toThrow(DatasetFetchError);
    expect(fs.existsSync(path.join(directory, "..", "escaped.txt"))).toBe(false);
    expect(fs.existsSync(path.join(os.tmpdir(), "escaped.txt"))).toBe(false);
    await expect(fetchBeirDataset("elsewhere", { directory, baseUrl })).rejects.toThrow(/outside elsewhere\//);
    expect(listing()).toEqual(["tiny"]);
  });

  it("stops at the download and unpacked-size bounds", async () => {
    await expect(fetchBeirDataset("big", { directory, baseUrl, maxDownloadBytes: 1_000 })).rejects.toThrow(/over the 1000-byte limit|more than 1000 bytes/);
    await expect(fetchBeirDataset("big", { directory, baseUrl, maxUnpackedBytes: 150_000 })).rejects.toThrow(/unpacks to more than 150000 bytes/);
    expect(listing()).toEqual(["tiny"]);
    expect(await fetchBeirDataset("big", { directory, baseUrl })).toBe(path.join(directory, "big"));
  });
});
