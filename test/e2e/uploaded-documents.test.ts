/**
 * The upload-and-wait every suite uses to put documents in place (test/support/documents.ts),
 * against the real stack and indexer: the upload's options reach the stored document, several
 * uploads are waited for together, and a FAILED document is reported at once with its name and
 * reason instead of after the whole timeout.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { uploadPendingDocument, uploadReadyDocument, waitForReadyDocuments } from "../support/documents.js";
import { graphql } from "../support/graphql.js";
import { startTestStack, type TestStack } from "../support/stack.js";
import { tokenFor } from "../support/tenants.js";

let test: TestStack;
let owner: string;
let outsider: string;
const url = () => test.stack.gateway.url;

const DOCUMENT = `query($id: ID!) { document(id: $id) { fileName status mediaType category sharedWithTeamId knowledgeBase { id } } }`;
const documentAs = async (token: string, id: string) => (await graphql(url(), DOCUMENT, { id }, { token })).data!.document;

beforeAll(async () => {
  test = await startTestStack({ SEARCH_CACHE_TTL_SECONDS: "0", GATEWAY_RESPONSE_CACHE_TTL_SECONDS: "0" });
  owner = await tokenFor("org-uploaded", "uma", ["writers"], "admin");
  outsider = await tokenFor("org-elsewhere", "otto", ["writers"]);
});

afterAll(async () => {
  await test?.stop();
});

describe("uploading documents and waiting until they are READY", () => {
  it("sends the client's media type, category, team and knowledge base, and returns once the document is READY", async () => {
    const knowledgeBase = await graphql(url(), `mutation { createKnowledgeBase(input: { name: "Writers' guides", scope: COMPANY, backend: LOCAL }) { id } }`, {}, { token: owner });
    expect(knowledgeBase.errors).toBeUndefined();
    const knowledgeBaseId = knowledgeBase.data!.createKnowledgeBase.id as string;
    const id = await uploadReadyDocument(url(), owner, "style.md", "# Style guide\n\nWrite short sentences.", { mediaType: "text/markdown", category: "guides", shareWithTeamId: "writers", knowledgeBaseId });
    expect(await documentAs(owner, id)).toEqual({ fileName: "style.md", status: "READY", mediaType: "text/markdown", category: "guides", sharedWithTeamId: "writers", knowledgeBase: { id: knowledgeBaseId } });
  });

  it("waits for several uploads together, bytes as well as text", async () => {
    const ids = [
      await uploadPendingDocument(url(), owner, "one.txt", "The first of two notes."),
      await uploadPendingDocument(url(), owner, "two.txt", new TextEncoder().encode("The second of two notes.")),
    ];
    await waitForReadyDocuments(url(), owner, ids);
    for (const id of ids) expect((await documentAs(owner, id)).status).toBe("READY");
  });

  it("reports a FAILED document at once, with its name and the indexer's reason", async () => {
    const fine = await uploadReadyDocument(url(), owner, "fine.txt", "Some text to index.");
    const failing = await uploadReadyDocument(url(), owner, "flaky.txt", "Text the embedder chokes on.");
    // Recorded as the indexer records a failure (document-indexer.ts): through the gateway only
    // a failing embedder would do it, and every text the upload accepts yields a chunk.
    await test.db.database.prisma.document.updateMany({ where: { id: failing }, data: { status: "FAILED", failureReason: "embedding service answered 503 Slow down" } });
    // "At once" without a stopwatch (one here timed the machine): a wait that ran out its 60 s
    // would reject with "did not reach READY within", never with the document's own failure.
    await expect(waitForReadyDocuments(url(), owner, [fine, failing])).rejects.toThrow(`document flaky.txt (${failing}) FAILED to index: embedding service answered 503 Slow down`);
  });

  it("refuses at once to wait on a document the token cannot see", async () => {
    const id = await uploadPendingDocument(url(), owner, "private.txt", "Only for uma.");
    await expect(waitForReadyDocuments(url(), outsider, [id])).rejects.toThrow(`document ${id} is not visible to this token`);
  });

  it("names the upload that the gateway refused", async () => {
    await expect(uploadPendingDocument(url(), owner, "empty.txt", "")).rejects.toThrow(/uploading empty\.txt failed: .*BAD_USER_INPUT/);
  });
});
