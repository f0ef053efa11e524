/**
 * GraphQL multipart uploads through the gateway (issue 23, item 3): Apollo Client with
 * apollo-upload-client's UploadHttpLink, the real package, sends `uploadDocuments` to the real
 * gateway; the documents are stored, indexed by the real indexer and found by `search` as their
 * owner, never by another organization. Every refusal the gateway owes (no preflight header,
 * malformed `operations`/`map`, a map path that is not an Upload, a missing file, limits) is
 * answered with a code, and leaves nothing stored.
 */
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { ApolloClient, InMemoryCache, gql } from "@apollo/client";
// @ts-expect-error the package ships JavaScript with JSDoc types only, no declaration files.
import UploadHttpLink from "apollo-upload-client/UploadHttpLink.mjs";
import { MAX_UPLOAD_FILES } from "../../lib/graphql/upload.js";
import { maxUploadTotalBytes } from "../../gateway/multipart-request.js";
import { startTestStack, type TestStack } from "../support/stack.js";
import { waitForReadyDocuments } from "../support/documents.js";
import { graphql } from "../support/graphql.js";
import { tokenFor } from "../support/tenants.js";

let test: TestStack;
let owner: string;
let outsider: string;
const url = () => test.stack.gateway.url;

const UPLOAD = `mutation UploadDocuments($files: [Upload!]!, $category: String) {
  uploadDocuments(files: $files, category: $category) { id fileName format mediaType category status sizeBytes }
}`;
const SEARCH = `query Search($query: String!) {
  search(input: { query: $query, alpha: 1, limit: 10 }) {
    hits { item { __typename ... on DocumentChunk { id text document { id fileName } } } }
  }
}`;

beforeAll(async () => {
  test = await startTestStack({ SEARCH_CACHE_TTL_SECONDS: "0", GATEWAY_RESPONSE_CACHE_TTL_SECONDS: "0" });
  owner = await tokenFor("org-uploads", "uma", ["writers"]);
  outsider = await tokenFor("org-elsewhere", "otto", ["writers"]);
});

afterAll(async () => {
  await test?.stop();
});

function apolloClient(token: string, headers: Record<string, string> = { "Apollo-Require-Preflight": "true" }) {
  return new ApolloClient({ link: new UploadHttpLink({ uri: url(), headers: { authorization: `Bearer ${token}`, ...headers } }), cache: new InMemoryCache() });
}

async function documentCount(token: string): Promise<number> {
  const response = await graphql(url(), `{ documents(first: 100) { nodes { id } } }`, {}, { token });
  return response.data!.documents.nodes.length;
}

interface Answer {
  status: number;
  body: { data?: Record<string, any> | null; errors?: { message: string; extensions: Record<string, unknown> }[] };
}

/** A multipart request as the spec lays it out, with the fields in the order given. */
async function send(parts: [string, string | Blob, string?][], headers: Record<string, string> = { "apollo-require-preflight": "true" }, token = owner): Promise<Answer> {
  const form = new FormData();
  for (const [name, value, fileName] of parts) {
    if (typeof value === "string") form.append(name, value);
    else form.append(name, value, fileName);
  }
  const response = await fetch(url(), { method: "POST", headers: { authorization: `Bearer ${token}`, ...headers }, body: form });
  return { status: response.status, body: (await response.json()) as Answer["body"] };
}

const operations = (query: string, variables: Record<string, unknown>) => JSON.stringify({ query, variables });
const markdown = (text: string) => new Blob([text], { type: "text/markdown" });

/**
 * Writes a multipart body piece by piece with no Content-Length (chunked), so only the streamed
 * bytes can tell its size; a number stands for that many filler bytes.
 */
function sendStreamed(pieces: (string | number)[]): Promise<Answer> {
  return new Promise((resolve) => {
    const request = http.request(url(), { method: "POST", headers: { authorization: `Bearer ${owner}`, "apollo-require-preflight": "true", "content-type": "multipart/form-data; boundary=xyz" } }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) as Answer["body"] }));
    });
    // The gateway closes the connection once it has refused: writes after that fail, which is the point.
    request.on("error", () => undefined);
    const filler = Buffer.alloc(64 * 1024, "a");
    const queue = [...pieces];
    let left = 0;
    const writeMore = (): void => {
      while (!request.destroyed) {
        if (left === 0) {
          const next = queue.shift();
          if (next === undefined) return void request.end();
          if (typeof next === "string") {
            if (!request.write(next)) return void request.once("drain", writeMore);
            continue;
          }
          left = next;
        }
        const piece = filler.subarray(0, Math.min(filler.length, left));
        left -= piece.length;
        if (!request.write(piece)) return void request.once("drain", writeMore);
      }
    };
    writeMore();
  });
}

describe("uploadDocuments through the gateway, as Apollo Client's upload link sends it", () => {
  it("stores every file, indexes it, and finds it in search for its organization only", async () => {
    const result = await apolloClient(owner).mutate({
      mutation: gql(UPLOAD),
      variables: {
        category: "runbooks",
        files: [
          new File(["# Failover runbook\n\nPromote the standby with pg_ctl promote when the primary is lost."], "failover.md", { type: "text/markdown" }),
          new File(["Quarterly zeppelin maintenance checklist: inspect the helium envelope."], "zeppelin.txt", { type: "text/plain" }),
        ],
      },
    });
    const uploaded = (result.data as { uploadDocuments: Record<string, unknown>[] }).uploadDocuments;
    expect(uploaded.map(({ fileName, format, category, status }) => ({ fileName, format, category, status }))).toEqual([
      { fileName: "failover.md", format: "MARKDOWN", category: "runbooks", status: "PENDING" },
      { fileName: "zeppelin.txt", format: "TEXT", category: "runbooks", status: "PENDING" },
    ]);
    expect(uploaded[1]!.sizeBytes).toBe(Buffer.byteLength("Quarterly zeppelin maintenance checklist: inspect the helium envelope."));
    await waitForReadyDocuments(url(), owner, uploaded.map((document) => document.id as string));

    const mine = await graphql(url(), SEARCH, { query: "zeppelin helium envelope" }, { token: owner });
    const documentsFound = (response: typeof mine) =>
      response.data!.search.hits.filter((hit: { item: { __typename: string } }) => hit.item.__typename === "DocumentChunk").map((hit: { item: { document: { id: string } } }) => hit.item.document.id);
    expect(documentsFound(mine)).toContain(uploaded[1]!.id);

    // Another organization: the same words find none of it, and the id is not found.
    const theirs = await graphql(url(), SEARCH, { query: "zeppelin helium envelope" }, { token: outsider });
    expect(theirs.errors).toBeUndefined();
    expect(documentsFound(theirs)).toEqual([]);
    const byId = await graphql(url(), `query($id: ID!) { document(id: $id) { id } }`, { id: uploaded[1]!.id }, { token: outsider });
    expect(byId.data?.document ?? null).toBeNull();
  }, 120_000);

  it("refuses a multipart request without a preflight header (CSRF), before reading it, and stores nothing", async () => {
    const before = await documentCount(owner);
    const refused = await send([["operations", operations(UPLOAD, { files: [null] })], ["map", JSON.stringify({ 1: ["variables.files.0"] })], ["1", markdown("# Forged"), "forged.md"]], {});
    expect(refused.status).toBe(400);
    expect(refused.body.errors![0]!.extensions.code).toBe("BAD_REQUEST");
    expect(refused.body.errors![0]!.message).toMatch(/Apollo-Require-Preflight/);
    // Apollo Client without the header is refused the same way.
    const error = (await apolloClient(owner, {})
      .mutate({ mutation: gql(UPLOAD), variables: { files: [new File(["# x"], "x.md")] } })
      .then(() => null, (thrown: unknown) => thrown)) as { statusCode?: number; bodyText?: string } | null;
    expect(error?.statusCode).toBe(400);
    expect(error?.bodyText).toMatch(/cross-site request forgery/);
    // X-Apollo-Operation-Name is accepted as the preflight header too.
    const named = await send([["operations", operations(UPLOAD, { files: [null] })], ["map", JSON.stringify({ 1: ["variables.files.0"] })], ["1", markdown("# Named"), "named.md"]], { "x-apollo-operation-name": "UploadDocuments" });
    expect(named.body.data!.uploadDocuments).toHaveLength(1);
    expect(await documentCount(owner)).toBe(before + 1);
  });

  it("answers a CORS preflight that asks for Apollo-Require-Preflight from a listed origin", async () => {
    const preflight = await fetch(url(), { method: "OPTIONS", headers: { origin: "http://localhost:3000", "access-control-request-method": "POST", "access-control-request-headers": "apollo-require-preflight, authorization" } });
    expect(preflight.headers.get("access-control-allow-origin")).toBe("http://localhost:3000");
    expect(preflight.headers.get("access-control-allow-headers")).toMatch(/apollo-require-preflight/i);
  });

  it("refuses malformed operations and map, a path that is not an Upload, and a missing file, with codes, storing nothing", async () => {
    const before = await documentCount(owner);
    const file: [string, Blob, string] = ["1", markdown("# Fine"), "fine.md"];
    const map = JSON.stringify({ 1: ["variables.files.0"] });
    const cases: [string, [string, string | Blob, string?][], RegExp, string?][] = [
      ["operations not JSON", [["operations", "{not json"], ["map", map], file], /`operations` must be a JSON object/],
      ["a batch", [["operations", JSON.stringify([{ query: UPLOAD }])], ["map", map], file], /one operation per request/],
      ["map before operations", [["map", map], ["operations", operations(UPLOAD, { files: [null] })], file], /`map` must be the second field/],
      ["map not an object", [["operations", operations(UPLOAD, { files: [null] })], ["map", "[1]"], file], /`map` must be a JSON object/],
      ["a path to a String", [["operations", operations(UPLOAD, { files: [null], category: null })], ["map", JSON.stringify({ 1: ["variables.category"] })], file], /"variables\.category" is a String, not an Upload/],
      ["a path to no variable", [["operations", operations(UPLOAD, { files: [null] })], ["map", JSON.stringify({ 1: ["variables.nothing"] })], file], /declares no variable \$nothing/],
      ["a path past the list", [["operations", operations(UPLOAD, { files: [null] })], ["map", JSON.stringify({ 1: ["variables.files.3"] })], file], /must be null in `operations.variables`/],
      ["a placeholder that is not null", [["operations", operations(UPLOAD, { files: ["evil"] })], ["map", map], file], /must be null/],
      ["a missing file", [["operations", operations(UPLOAD, { files: [null, null] })], ["map", JSON.stringify({ 1: ["variables.files.0"], 2: ["variables.files.1"] })], file], /file part `2`, but the body has no such file/, "MISSING_FILE"],
      ["an unmapped file", [["operations", operations(UPLOAD, { files: [null] })], ["map", map], file, ["9", markdown("# Stray"), "stray.md"]], /File part `9` is not in `map`/],
      ["a file before map", [["operations", operations(UPLOAD, { files: [null] })], file, ["map", map]], /came before `map`/],
      ["no query text", [["operations", JSON.stringify({ extensions: { persistedQuery: { version: 1, sha256Hash: "ab" } }, variables: { files: [null] } })], ["map", map], file], /`operations.query` must be the operation's text/],
    ];
    for (const [what, parts, message, reason] of cases) {
      const answer = await send(parts);
      expect({ what, status: answer.status }).toEqual({ what, status: 400 });
      expect({ what, code: answer.body.errors?.[0]?.extensions.code }).toEqual({ what, code: "BAD_USER_INPUT" });
      expect({ what, message: answer.body.errors![0]!.message }).toEqual({ what, message: expect.stringMatching(message) });
      if (reason) expect(answer.body.errors![0]!.extensions.reason).toBe(reason);
    }
    // An Upload written into the query is refused by the subgraph's scalar.
    const literal = await graphql(url(), `mutation { uploadDocuments(files: ["x"]) { id } }`, {}, { token: owner });
    expect(literal.data?.uploadDocuments ?? null).toBeNull();
    expect(literal.errors![0]!.message).toMatch(/Upload cannot be written in the query/);
    expect(await documentCount(owner)).toBe(before);
  });

  it("stores none of the files when one of them is bad, naming the bad one", async () => {
    const before = await documentCount(owner);
    const answer = await send([
      ["operations", operations(UPLOAD, { files: [null, null] })],
      ["map", JSON.stringify({ a: ["variables.files.0"], b: ["variables.files.1"] })],
      ["a", markdown("# A good file\n\nWith text."), "good.md"],
      ["b", new Blob(["%PDF-1.7 not really"], { type: "application/pdf" }), "broken.pdf"],
    ]);
    expect(answer.body.errors![0]!.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "files.1", reason: "CORRUPT_FILE" });
    expect(answer.body.data?.uploadDocuments ?? null).toBeNull();
    expect(await documentCount(owner)).toBe(before);
  });

  it("files uploads into a LOCAL knowledge base of the caller's organization only, in one transaction, and answers a retry with the same Idempotency-Key once", async () => {
    const INTO = `mutation Into($files: [Upload!]!, $knowledgeBaseId: ID) { uploadDocuments(files: $files, knowledgeBaseId: $knowledgeBaseId) { id fileName knowledgeBase { id } } }`;
    const admin = await tokenFor("org-uploads", "ada", ["writers"], "admin");
    const created = await graphql(url(), `mutation($input: CreateKnowledgeBaseInput!) { createKnowledgeBase(input: $input) { id } }`, { input: { name: "Runbooks", scope: "COMPANY", backend: "LOCAL" } }, { token: admin });
    expect(created.errors).toBeUndefined();
    const baseId = created.data!.createKnowledgeBase.id as string;
    const parts = (knowledgeBaseId: string): [string, string | Blob, string?][] => [
      ["operations", operations(INTO, { files: [null, null], knowledgeBaseId })],
      ["map", JSON.stringify({ 1: ["variables.files.0"], 2: ["variables.files.1"] })],
      ["1", markdown("# Pager rota\n\nWho carries the pager this week."), "rota.md"],
      ["2", markdown("# Escalation\n\nCall the incident commander."), "escalation.md"],
    ];

    // Another organization's member cannot file into it: NOT_FOUND, as for an id that does not
    // exist, and neither file is kept.
    const outsiderBefore = await documentCount(outsider);
    const theirs = await send(parts(baseId), { "apollo-require-preflight": "true" }, outsider);
    expect(theirs.body.errors![0]!.extensions.code).toBe("NOT_FOUND");
    expect(await documentCount(outsider)).toBe(outsiderBefore);

    const before = await documentCount(owner);
    const keyed = { "apollo-require-preflight": "true", "idempotency-key": "upload-rota-1" };
    const first = await send(parts(baseId), keyed);
    expect(first.body.errors).toBeUndefined();
    const documents = first.body.data!.uploadDocuments as { id: string; fileName: string; knowledgeBase: { id: string } }[];
    expect(documents.map((document) => [document.fileName, document.knowledgeBase.id])).toEqual([["rota.md", baseId], ["escalation.md", baseId]]);
    const retry = await send(parts(baseId), keyed);
    expect((retry.body.data!.uploadDocuments as { id: string }[]).map((document) => document.id)).toEqual(documents.map((document) => document.id));
    expect(await documentCount(owner)).toBe(before + 2);
  });

  it("keeps the limits of POST /documents: file size, file count and the total, counted as the bytes arrive", async () => {
    const before = await documentCount(owner);
    const maxFileBytes = test.config.knowledgeBase.maxDocumentBytes;
    const head = (files: number) =>
      `--xyz\r\nContent-Disposition: form-data; name="operations"\r\n\r\n${operations(UPLOAD, { files: Array(files).fill(null) })}\r\n` +
      `--xyz\r\nContent-Disposition: form-data; name="map"\r\n\r\n${JSON.stringify(Object.fromEntries(Array.from({ length: files }, (_, i) => [String(i), [`variables.files.${i}`]])))}\r\n`;
    const filePart = (name: string) => `--xyz\r\nContent-Disposition: form-data; name="${name}"; filename="${name}.txt"\r\nContent-Type: text/plain\r\n\r\n`;

    // One file a byte over the limit, with no Content-Length: refused as the bytes pass it.
    const oneTooLarge = await sendStreamed([head(1) + filePart("0"), maxFileBytes + 1, "\r\n--xyz--\r\n"]);
    expect(oneTooLarge.status).toBe(413);
    expect(oneTooLarge.body.errors![0]!.extensions).toMatchObject({ code: "BAD_USER_INPUT", reason: "FILE_TOO_LARGE" });

    // Two files each within the limit whose sum passes the total (what one 16 MB JSON request carries in base64).
    const total = maxUploadTotalBytes();
    const each = Math.ceil((total + 1) / 2);
    expect(each).toBeLessThanOrEqual(maxFileBytes);
    const overTotal = await sendStreamed([head(2) + filePart("0"), each, "\r\n" + filePart("1"), each, "\r\n--xyz--\r\n"]);
    expect(overTotal.status).toBe(413);
    expect(overTotal.body.errors![0]!.extensions).toMatchObject({ code: "BAD_USER_INPUT", reason: "UPLOAD_TOO_LARGE" });

    // One file placed at two paths is carried twice: the copies count towards the total.
    const twice = await sendStreamed([
      `--xyz\r\nContent-Disposition: form-data; name="operations"\r\n\r\n${operations(UPLOAD, { files: [null, null] })}\r\n` +
        `--xyz\r\nContent-Disposition: form-data; name="map"\r\n\r\n${JSON.stringify({ 0: ["variables.files.0", "variables.files.1"] })}\r\n` +
        filePart("0"),
      each,
      "\r\n--xyz--\r\n",
    ]);
    expect(twice.status).toBe(413);
    expect(twice.body.errors![0]!.extensions).toMatchObject({ code: "BAD_USER_INPUT", reason: "UPLOAD_TOO_LARGE" });
    const everywhere = await send([
      ["operations", operations(UPLOAD, { files: Array(MAX_UPLOAD_FILES + 1).fill(null) })],
      ["map", JSON.stringify({ 0: Array.from({ length: MAX_UPLOAD_FILES + 1 }, (_, i) => `variables.files.${i}`) })],
      ["0", markdown("# One"), "one.md"],
    ]);
    expect(everywhere.status).toBe(413);
    expect(everywhere.body.errors![0]!.extensions).toMatchObject({ code: "BAD_USER_INPUT", reason: "TOO_MANY_FILES" });

    // A declared Content-Length over what the limits allow: refused before a byte is read.
    const declared = await new Promise<number>((resolve, reject) => {
      const request = http.request(url(), { method: "POST", headers: { authorization: `Bearer ${owner}`, "apollo-require-preflight": "true", "content-type": "multipart/form-data; boundary=xyz", "content-length": String(50 * 1024 * 1024) } }, (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      });
      request.on("error", reject);
      request.write("--xyz\r\n");
    });
    expect(declared).toBe(413);

    // One file more than allowed.
    const tooMany = await send([
      ["operations", operations(UPLOAD, { files: Array(MAX_UPLOAD_FILES + 1).fill(null) })],
      ["map", JSON.stringify(Object.fromEntries(Array.from({ length: MAX_UPLOAD_FILES + 1 }, (_, i) => [String(i), [`variables.files.${i}`]])))],
      ...Array.from({ length: MAX_UPLOAD_FILES + 1 }, (_, i): [string, Blob, string] => [String(i), markdown(`# File ${i}`), `f${i}.md`]),
    ]);
    expect(tooMany.status).toBe(413);
    expect(tooMany.body.errors![0]!.extensions).toMatchObject({ code: "BAD_USER_INPUT", reason: "TOO_MANY_FILES" });

    // `operations` over its own bound.
    const bigOperations = await send([["operations", JSON.stringify({ query: UPLOAD, variables: { files: [null], category: "x".repeat(70 * 1024) } })], ["map", JSON.stringify({ 1: ["variables.files.0"] })], ["1", markdown("# x"), "x.md"]]);
    expect(bigOperations.status).toBe(413);
    expect(bigOperations.body.errors![0]!.extensions).toMatchObject({ code: "BAD_USER_INPUT", reason: "OPERATIONS_TOO_LARGE" });

    // The gateway still serves requests afterwards, and nothing of the refused uploads was stored.
    expect(await documentCount(owner)).toBe(before);
  });

  it("refuses anonymous uploads as the JSON mutation would (UNAUTHENTICATED)", async () => {
    const response = await fetch(url(), {
      method: "POST",
      headers: { "apollo-require-preflight": "true" },
      body: (() => {
        const form = new FormData();
        form.append("operations", operations(UPLOAD, { files: [null] }));
        form.append("map", JSON.stringify({ 1: ["variables.files.0"] }));
        form.append("1", markdown("# anon"), "anon.md");
        return form;
      })(),
    });
    const body = (await response.json()) as Answer["body"];
    expect(body.errors![0]!.extensions.code).toBe("UNAUTHENTICATED");
  });
});
