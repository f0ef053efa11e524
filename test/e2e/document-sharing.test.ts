/**
 * Managing a document after upload, through the gateway with its caches on: sharing it with a
 * team or making it private (`setDocumentSharing`: only the owner, only one of the owner's
 * teams, search visibility following at once in keyword and semantic search, never reaching
 * another organization), and an upload of bytes that are already there answering with the
 * earlier copies the caller may see (`sameContent`), over GraphQL and `POST /documents` alike.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { loadConfig } from "../../lib/config.js";
import { silentLogger } from "../../lib/logger.js";
import { startStack, type RunningStack } from "../../app/stack.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { uploadReadyDocument } from "../support/documents.js";
import { errorCodes, graphql } from "../support/graphql.js";
import { TEST_AUTH, tokenFor } from "../support/tenants.js";

let db: TestDatabase;
let stack: RunningStack;
let owner: string;
let teammate: string;
let colleague: string;
let outsider: string;

const HANDOVER = "# Handover\n\n## Pager\n\nThe zeppelin rota hands the pager over on Mondays at nine.\n";

const SEARCH = `query Search($input: SearchInput!) {
  search(input: $input) { hits { item { __typename ... on DocumentChunk { id document { id } } } } }
}`;
const SHARE = `mutation Share($id: ID!, $teamId: ID) { setDocumentSharing(id: $id, teamId: $teamId) { id sharedWithTeamId ownerId } }`;
const UPLOAD = `mutation Upload($input: UploadDocumentInput!) {
  uploadDocument(input: $input) { id contentHash sameContent { id fileName ownerId } }
}`;
const SAME_CONTENT = `query($id: ID!, $first: Int) { document(id: $id) { id sameContent(first: $first) { id } } }`;

/** The documents whose chunks `token`'s caller finds for `query`, keyword only (alpha 1) or meaning only (alpha 0). */
async function documentsFound(token: string, query: string, alpha: number): Promise<Set<string>> {
  const response = await graphql(stack.gateway.url, SEARCH, { input: { query, alpha, limit: 20 } }, { token });
  expect(response.errors).toBeUndefined();
  const hits = response.data!.search.hits as { item: { __typename: string; document?: { id: string } } }[];
  return new Set(hits.filter((hit) => hit.item.__typename === "DocumentChunk").map((hit) => hit.item.document!.id));
}

const share = (token: string, id: string, teamId: string | null) => graphql(stack.gateway.url, SHARE, { id, teamId }, { token });
const upload = (token: string, fileName: string, text: string, extra: Record<string, unknown> = {}) =>
  graphql(stack.gateway.url, UPLOAD, { input: { fileName, contentBase64: Buffer.from(text).toString("base64"), ...extra } }, { token });

beforeAll(async () => {
  db = await createTestDatabase();
  // The gateway's response cache and the search subgraph's result cache stay on (their
  // defaults): a change of sharing must show in the next search even so.
  const config = loadConfig({ GATEWAY_PORT: "0", CONVERSATIONS_PORT: "0", SEARCH_PORT: "0", KNOWLEDGE_BASE_PORT: "0", EXTERNAL_SEARCH_PORT: "0", EMBEDDER: "hashing" });
  stack = await startStack({ config: { ...config, auth: { ...TEST_AUTH, usingDevSecret: false } }, database: db.database, logger: silentLogger, gateway: { runtimeLogLevel: false } });
  owner = await tokenFor("org-share", "olivia", ["sre", "support"]);
  teammate = await tokenFor("org-share", "tom", ["sre"]);
  colleague = await tokenFor("org-share", "carl", ["sales"]);
  // The same team id in another organization is another team.
  outsider = await tokenFor("org-elsewhere", "otto", ["sre"]);
});

afterAll(async () => {
  await stack?.stop();
  await db?.dispose();
});

describe("setDocumentSharing", () => {
  let handover: string;

  beforeAll(async () => {
    handover = await uploadReadyDocument(stack.gateway.url, owner, "handover.md", HANDOVER);
  });

  it("starts private: only the owner finds it, by keyword and by meaning", async () => {
    for (const alpha of [1, 0]) {
      expect(await documentsFound(owner, "zeppelin rota pager", alpha)).toContain(handover);
      expect(await documentsFound(teammate, "zeppelin rota pager", alpha)).not.toContain(handover);
      expect(await documentsFound(outsider, "zeppelin rota pager", alpha)).not.toContain(handover);
    }
  });

  it("refuses a team that is not the owner's, a caller who cannot see it, and a malformed id, changing nothing", async () => {
    const notMine = await share(owner, handover, "sales");
    expect(errorCodes(notMine)).toEqual(["BAD_USER_INPUT"]);
    expect(notMine.errors![0]!.message).toMatch(/one of your teams \(sre, support\)/);
    expect(errorCodes(await share(owner, handover, "x".repeat(129)))).toEqual(["BAD_USER_INPUT"]);
    // A private document is, to everyone else, a document that does not exist.
    expect(errorCodes(await share(teammate, handover, "sre"))).toEqual(["NOT_FOUND"]);
    expect(errorCodes(await share(outsider, handover, "sre"))).toEqual(["NOT_FOUND"]);
    expect(errorCodes(await share(owner, "not-a-uuid", "sre"))).toEqual(["BAD_USER_INPUT"]);
    const read = await graphql(stack.gateway.url, `query($id: ID!) { document(id: $id) { sharedWithTeamId } }`, { id: handover }, { token: owner });
    expect(read.data!.document.sharedWithTeamId).toBeNull();
  });

  it("shares it with the owner's team: a teammate finds it at once, a colleague of another team and another organization never do", async () => {
    const shared = await share(owner, handover, "sre");
    expect(shared.errors).toBeUndefined();
    expect(shared.data!.setDocumentSharing).toEqual({ id: handover, sharedWithTeamId: "sre", ownerId: "olivia" });
    // The teammate asked this query before the sharing (the first test): the page the search
    // subgraph cached then is not served again, since a document they may find changed after it.
    for (const alpha of [1, 0]) {
      expect(await documentsFound(teammate, "zeppelin rota pager", alpha)).toContain(handover);
      expect(await documentsFound(colleague, "zeppelin rota pager", alpha)).not.toContain(handover);
      expect(await documentsFound(outsider, "zeppelin rota pager", alpha)).not.toContain(handover);
    }
    const listed = await graphql(stack.gateway.url, `{ documents(first: 20) { nodes { id } } }`, {}, { token: teammate });
    expect(listed.data!.documents.nodes.map((node: { id: string }) => node.id)).toContain(handover);
    const elsewhere = await graphql(stack.gateway.url, `query($id: ID!) { document(id: $id) { id } }`, { id: handover }, { token: outsider });
    expect(elsewhere.data!.document).toBeNull();
  });

  it("lets only the owner change it: a teammate who can read it is FORBIDDEN", async () => {
    const refused = await share(teammate, handover, null);
    expect(errorCodes(refused)).toEqual(["FORBIDDEN"]);
    expect(refused.errors![0]!.message).toMatch(/Only the owner/);
    expect(errorCodes(await share(outsider, handover, null))).toEqual(["NOT_FOUND"]);
  });

  it("names the teams: the caller's own (viewerTeams) and the one a document is shared with, never another organization's name for the same id", async () => {
    for (const [organizationId, name] of [["org-share", "Site reliability"], ["org-elsewhere", "Elsewhere's SRE"]] as const) {
      await db.database.prisma.organization.upsert({ where: { id: organizationId }, create: { id: organizationId }, update: {} });
      await db.database.prisma.team.create({ data: { organizationId, id: "sre", name } });
    }
    const mine = await graphql(stack.gateway.url, `{ viewerTeams { id name } }`, {}, { token: owner });
    expect(mine.errors).toBeUndefined();
    // In the token's order; a team the organization has no record of shows its id.
    expect(mine.data!.viewerTeams).toEqual([
      { id: "sre", name: "Site reliability" },
      { id: "support", name: "support" },
    ]);
    const documentTeam = `query($id: ID!) { document(id: $id) { sharedWithTeamId sharedWithTeam { id name } } }`;
    for (const token of [owner, teammate]) {
      const read = await graphql(stack.gateway.url, documentTeam, { id: handover }, { token });
      expect(read.errors).toBeUndefined();
      expect(read.data!.document).toEqual({ sharedWithTeamId: "sre", sharedWithTeam: { id: "sre", name: "Site reliability" } });
    }
    expect((await graphql(stack.gateway.url, `{ viewerTeams { id name } }`, {}, { token: outsider })).data!.viewerTeams).toEqual([{ id: "sre", name: "Elsewhere's SRE" }]);
    // A forged reference to the team reads only the caller's organization's name.
    const forged = await graphql(stack.gateway.url, `query($representations: [_Any!]!) { _entities(representations: $representations) { ... on Team { id name } } }`, { representations: [{ __typename: "Team", id: "sre" }] }, { token: outsider });
    expect(JSON.stringify(forged)).not.toContain("Site reliability");
    expect(errorCodes(await graphql(stack.gateway.url, `{ viewerTeams { id } }`, {}, {}))).toEqual(["UNAUTHENTICATED"]);
  });

  it("makes it private again: the teammate no longer finds or reads it, even from a page cached while it was shared", async () => {
    const made = await share(owner, handover, null);
    expect(made.errors).toBeUndefined();
    expect(made.data!.setDocumentSharing.sharedWithTeamId).toBeNull();
    // The same query as while it was shared: a cached page's hits are checked again, so removal is at once.
    for (const alpha of [1, 0]) {
      expect(await documentsFound(teammate, "zeppelin rota pager", alpha)).not.toContain(handover);
      expect(await documentsFound(owner, "zeppelin rota pager", alpha)).toContain(handover);
    }
    const read = await graphql(stack.gateway.url, `query($id: ID!) { document(id: $id) { id } }`, { id: handover }, { token: teammate });
    expect(read.data!.document).toBeNull();
  });
});

describe("uploading bytes that are already there", () => {
  const GUIDE = "# Expense guide\n\nReceipts over fifty euros need a scan.\n";

  it("answers the second upload with the first, and the first with the second", async () => {
    const first = await upload(owner, "expenses.md", GUIDE);
    expect(first.errors).toBeUndefined();
    expect(first.data!.uploadDocument.sameContent).toEqual([]);
    const second = await upload(owner, "expenses (1).md", GUIDE);
    expect(second.errors).toBeUndefined();
    expect(second.data!.uploadDocument.contentHash).toBe(first.data!.uploadDocument.contentHash);
    expect(second.data!.uploadDocument.sameContent).toEqual([{ id: first.data!.uploadDocument.id, fileName: "expenses.md", ownerId: "olivia" }]);
    const read = await graphql(stack.gateway.url, SAME_CONTENT, { id: first.data!.uploadDocument.id, first: 5 }, { token: owner });
    expect(read.data!.document.sameContent).toEqual([{ id: second.data!.uploadDocument.id }]);
    expect(errorCodes(await graphql(stack.gateway.url, SAME_CONTENT, { id: first.data!.uploadDocument.id, first: 21 }, { token: owner }))).toEqual(["BAD_USER_INPUT"]);
  });

  it("never names a colleague's private copy or another organization's, and names a copy once it is shared with the caller", async () => {
    const text = "# Offsite agenda\n\nBoat trip on Thursday, dinner at eight.\n";
    const mine = await upload(owner, "agenda.md", text);
    const theirs = await upload(teammate, "agenda.md", text);
    expect(theirs.data!.uploadDocument.sameContent).toEqual([]);
    const outside = await upload(outsider, "agenda.md", text);
    expect(outside.data!.uploadDocument.sameContent).toEqual([]);
    // The owner never sees the teammate's private copy either.
    const ownerView = await graphql(stack.gateway.url, SAME_CONTENT, { id: mine.data!.uploadDocument.id }, { token: owner });
    expect(ownerView.data!.document.sameContent).toEqual([]);

    await share(owner, mine.data!.uploadDocument.id, "sre");
    const again = await graphql(stack.gateway.url, SAME_CONTENT, { id: theirs.data!.uploadDocument.id }, { token: teammate });
    expect(again.data!.document.sameContent).toEqual([{ id: mine.data!.uploadDocument.id }]);
    const stillOutside = await graphql(stack.gateway.url, SAME_CONTENT, { id: outside.data!.uploadDocument.id }, { token: outsider });
    expect(stillOutside.data!.document.sameContent).toEqual([]);
  });

  it("answers for a whole page of documents at once, newest first, at most `first` each", async () => {
    const text = "# Fire drill\n\nMeet at the car park by the north gate.\n";
    const ids: string[] = [];
    for (const name of ["drill-1.md", "drill-2.md", "drill-3.md"]) ids.push((await upload(owner, name, text)).data!.uploadDocument.id);
    const page = await graphql(stack.gateway.url, `{ documents(first: 20) { nodes { id sameContent(first: 1) { id } all: sameContent(first: 20) { id } } } }`, {}, { token: owner });
    expect(page.errors).toBeUndefined();
    const byId = new Map(page.data!.documents.nodes.map((node: { id: string; sameContent: { id: string }[]; all: { id: string }[] }) => [node.id, node]));
    expect(byId.get(ids[0])).toMatchObject({ sameContent: [{ id: ids[2] }], all: [{ id: ids[2] }, { id: ids[1] }] });
    expect(byId.get(ids[2])).toMatchObject({ sameContent: [{ id: ids[1] }], all: [{ id: ids[1] }, { id: ids[0] }] });
  });

  it("answers POST /documents with the same earlier copies", async () => {
    const text = "# Travel policy\n\nBook trains for trips under four hours.\n";
    const first = await upload(owner, "travel.md", text);
    const form = new FormData();
    form.set("file", new Blob([text], { type: "text/markdown" }), "travel-again.md");
    const response = await fetch(stack.gateway.url.replace("/graphql", "/documents"), { method: "POST", headers: { authorization: `Bearer ${owner}` }, body: form });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { data: { uploadDocument: { fileName: string; sameContent: { id: string; fileName: string }[] } } };
    expect(body.data.uploadDocument.fileName).toBe("travel-again.md");
    expect(body.data.uploadDocument.sameContent.map((document) => document.id)).toEqual([first.data!.uploadDocument.id]);
  });
});
