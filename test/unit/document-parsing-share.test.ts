/**
 * Parsing shared fairly between organizations, on the real parser threads: a file that holds
 * its parser until the budget stops it (a DOCX of a million paragraphs, with the ratio bound
 * lifted so it reaches mammoth) delays only its own organization's next file, never another
 * organization's; the stopped thread is replaced and the pool goes on working. Order is asserted,
 * never time: the other organization's upload finishes while the hostile one is still running.
 */
import { afterAll, describe, expect, it } from "@jest/globals";
import { DocumentError, documentParsingShares, extractText } from "../../lib/documents/extract-text.js";
import { closeWorkerPools } from "../../lib/workers/pool.js";
import { docxGuide, manyParagraphsDocx } from "../support/document-fixtures.js";

afterAll(async () => {
  await closeWorkerPools();
});

const utf8 = (text: string) => new TextEncoder().encode(text);
// Lifts the ratio bound so the hostile file reaches the parser; the budget must stop it.
const HOSTILE_LIMITS = { maxCompressionRatio: 100_000, timeoutMs: 5_000 };

/** Settles to what happened, in the order things happened. */
function track(events: string[], label: string, promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => {
      events.push(`${label} done`);
      return value;
    },
    (error: unknown) => {
      events.push(`${label} failed`);
      return error;
    },
  );
}

describe("document parsing shared between organizations", () => {
  it("reads another organization's file while a hostile one holds its parser, then stops the hostile one within its budget", async () => {
    const events: string[] = [];
    const hostile = track(events, "hostile", extractText({ fileName: "words.docx", bytes: manyParagraphsDocx(1_000_000) }, HOSTILE_LIMITS, { organizationId: "org-hostile" }));
    const second = track(events, "hostile's second", extractText({ fileName: "second.md", bytes: utf8("# Second\n\nQueued behind the first.") }, {}, { organizationId: "org-hostile" }));
    const other = track(events, "other", extractText({ fileName: "guide.docx", bytes: await docxGuide() }, {}, { organizationId: "org-other" }));

    const document = (await other) as { text: string };
    expect(document.text).toContain("Download the package.");
    // The other organization was served while the hostile file still held its parser, and the
    // hostile organization's second file still waits behind its first.
    expect(events).toEqual(["other done"]);
    expect(documentParsingShares().waitingCount("org-hostile")).toBe(1);

    const refused = await hostile;
    expect(refused).toBeInstanceOf(DocumentError);
    expect(["EXTRACTION_TIMEOUT", "MEMORY_LIMIT"]).toContain((refused as DocumentError).code);
    expect((refused as DocumentError).message).toMatch(/"words\.docx" (took longer than 5 s|needed more than \d+ MB of memory)/);
    expect(((await second) as { text: string }).text).toBe("# Second\n\nQueued behind the first.");
    expect(events).toEqual(["other done", "hostile failed", "hostile's second done"]);
  });

  it("keeps working after a parser thread was stopped: a DOCX is read again on the replacement", async () => {
    const document = await extractText({ fileName: "guide.docx", bytes: await docxGuide() }, {}, { organizationId: "org-hostile" });
    expect(document.sections.length).toBeGreaterThan(1);
    expect([documentParsingShares().runningCount(), documentParsingShares().waitingCount()]).toEqual([0, 0]);
  });
});
