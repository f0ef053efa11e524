/**
 * The backlog limit on documents waiting to be indexed (issue 41): past
 * DOCUMENT_BACKLOG_PER_ORGANIZATION an organization's uploads are refused, through
 * `POST /documents`, `uploadDocument` and `uploadDocuments` alike, with OVERLOADED, HTTP 429 and
 * `Retry-After`, and nothing is stored; another organization uploads as before, and a place
 * frees as soon as a document leaves the queue. The indexer is off, so the queue holds still.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { BACKLOG_RETRY_AFTER_SECONDS } from "../../subgraphs/knowledge-base/document-store.js";
import { graphql } from "../support/graphql.js";
import { startTestStack, type TestStack } from "../support/stack.js";
import { tokenFor } from "../support/tenants.js";

const BACKLOG = 3;
let test: TestStack;

beforeAll(async () => {
  test = await startTestStack({ DOCUMENT_BACKLOG_PER_ORGANIZATION: String(BACKLOG), SEARCH_INDEXER: "false" });
}, 120_000);

afterAll(async () => test?.stop());

async function postDocument(token: string, fileName: string) {
  const form = new FormData();
  form.append("file", new Blob([`# ${fileName}\n\nA short note.`], { type: "text/markdown" }), fileName);
  const response = await fetch(new URL("/documents", test.stack.gateway.url), { method: "POST", headers: { authorization: `Bearer ${token}` }, body: form });
  const body = (await response.json()) as { errors?: { message: string; extensions: Record<string, unknown> }[] };
  return { status: response.status, retryAfter: response.headers.get("retry-after"), error: body.errors?.[0] ?? null };
}

const UPLOAD_MANY = `mutation($files: [Upload!]!) { uploadDocuments(files: $files) { id } }`;

/** uploadDocuments as a GraphQL multipart request (the spec's operations + map + files). */
async function uploadMany(token: string, names: string[]) {
  const form = new FormData();
  form.append("operations", JSON.stringify({ query: UPLOAD_MANY, variables: { files: names.map(() => null) } }));
  form.append("map", JSON.stringify(Object.fromEntries(names.map((_, index) => [String(index), [`variables.files.${index}`]]))));
  names.forEach((name, index) => form.append(String(index), new Blob([`${name}: a few words.`], { type: "text/plain" }), name));
  const response = await fetch(test.stack.gateway.url, { method: "POST", headers: { authorization: `Bearer ${token}`, "apollo-require-preflight": "true" }, body: form });
  const body = (await response.json()) as { data?: { uploadDocuments: { id: string }[] | null }; errors?: { extensions: Record<string, unknown> }[] };
  return { status: response.status, retryAfter: response.headers.get("retry-after"), body };
}

const stored = async (organizationId: string) =>
  (await test.db.database.prisma.$queryRaw<{ count: number }[]>`SELECT count(*)::int AS count FROM documents WHERE organization_id = ${organizationId}`)[0]!.count;

describe("documents waiting to be indexed, per organization", () => {
  it("refuses an upload past the backlog with OVERLOADED, 429 and Retry-After, storing nothing, on every upload path", async () => {
    const token = await tokenFor("org-backlog", "bea");
    for (let i = 0; i < BACKLOG; i += 1) expect((await postDocument(token, `note-${i}.md`)).status).toBe(200);

    const refused = await postDocument(token, "one-too-many.md");
    expect(refused).toMatchObject({ status: 429, retryAfter: String(BACKLOG_RETRY_AFTER_SECONDS) });
    expect(refused.error!.extensions).toMatchObject({ code: "OVERLOADED", retryable: true, retryAfterSeconds: BACKLOG_RETRY_AFTER_SECONDS });
    expect(refused.error!.message).toMatch(/^Your organization has 3 document\(s\) waiting to be indexed, and at most 3 may wait/);

    const single = await graphql(test.stack.gateway.url, `mutation($input: UploadDocumentInput!) { uploadDocument(input: $input) { id } }`, { input: { fileName: "b.txt", contentBase64: Buffer.from("b").toString("base64") } }, { token });
    expect(single.errors?.[0]?.extensions).toMatchObject({ code: "OVERLOADED", retryAfterSeconds: BACKLOG_RETRY_AFTER_SECONDS });
    expect(await stored("org-backlog")).toBe(BACKLOG);
  });

  it("refuses a batch that would pass it whole, and leaves another organization's uploads alone", async () => {
    const token = await tokenFor("org-batch", "bo");
    expect((await uploadMany(token, ["a.txt", "b.txt"])).body.data?.uploadDocuments).toHaveLength(2);
    const refused = await uploadMany(token, ["c.txt", "d.txt"]);
    expect(refused.status).toBe(429);
    expect(refused.body.errors?.[0]?.extensions).toMatchObject({ code: "OVERLOADED", retryAfterSeconds: BACKLOG_RETRY_AFTER_SECONDS });
    expect(await stored("org-batch")).toBe(2);
    // The organization still has room for one.
    expect((await uploadMany(token, ["c.txt"])).body.data?.uploadDocuments).toHaveLength(1);

    const other = await tokenFor("org-elsewhere", "eli");
    expect((await postDocument(other, "mine.md")).status).toBe(200);
  });

  it("frees a place as soon as a document leaves the queue", async () => {
    const token = await tokenFor("org-frees", "fred");
    for (let i = 0; i < BACKLOG; i += 1) expect((await postDocument(token, `note-${i}.md`)).status).toBe(200);
    expect((await postDocument(token, "waits.md")).status).toBe(429);
    // What the indexer does when it finishes one: its job leaves the queue.
    await test.db.database.prisma.$executeRaw`DELETE FROM document_index_jobs WHERE document_id = (SELECT id FROM documents WHERE organization_id = 'org-frees' ORDER BY created_at LIMIT 1)`;
    expect((await postDocument(token, "now.md")).status).toBe(200);
  });
});
