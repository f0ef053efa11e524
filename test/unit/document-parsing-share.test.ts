/**
 * Parsing shared fairly between organizations, on the real parser threads: a file that holds
 * its parser until the budget stops it (a DOCX of a million paragraphs, with the ratio bound
 * lifted so it reaches mammoth) delays only its own organization's next file, never another
 * organization's; the stopped thread is replaced and the pool goes on working. Neither time nor
 * the order in which the two organizations' files finish is asserted (under load a cold parser
 * thread can take longer to read a small DOCX than the hostile file's budget): what is asserted is
 * who got a thread, counted at the moment the files were handed in, and the order within the
 * hostile organization, which its one-parse-at-a-time share fixes.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { configureDocumentParsing, DocumentError, documentParsingShares, extractText } from "../../lib/documents/extract-text.js";
import { closeWorkerPools } from "../../lib/workers/pool.js";
import { docxGuide, manyParagraphsDocx } from "../support/document-fixtures.js";

// A file waits for its organization's parser slot at most twice the default budget of wall-clock
// time, then is told to retry (OVERLOADED). The hostile file's budget is CPU time counted from
// when its cold thread has loaded, so on a loaded machine its wall time can pass that wait (CI
// saw the hostile organization's second file refused beside stress-ng): the default budget here,
// which sets the wait, is one that load cannot reach; the hostile file keeps its own 5 s.
// The threads' heap is raised too, so that the hostile file's CPU budget stops it, not its
// memory: this file is about who gets a thread. On Node 24.22.3 a parser thread that reached the
// default 512 MB once took the whole Jest worker down with V8's fatal out-of-memory error instead
// of the worker's ERR_WORKER_OUT_OF_MEMORY (CI, 1 run of several).
beforeAll(() => {
  configureDocumentParsing({ heapMb: 4096, limits: { timeoutMs: 300_000 } });
});

afterAll(async () => {
  await closeWorkerPools();
});

const utf8 = (text: string) => new TextEncoder().encode(text);
// Lifts the ratio bound so the hostile file reaches the parser; the budget must stop it.
const HOSTILE_LIMITS = { maxCompressionRatio: 100_000, timeoutMs: 5_000 };
// The small files' budgets are not what this file tests (document-extraction.test.ts does): each
// may land on a thread that is still starting, which under load can take longer than 8 s.
const SMALL_FILE_LIMITS = { timeoutMs: 300_000 };

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
    const guideBytes = await docxGuide();
    const hostile = track(events, "hostile", extractText({ fileName: "words.docx", bytes: manyParagraphsDocx(1_000_000) }, HOSTILE_LIMITS, { organizationId: "org-hostile" }));
    const second = track(events, "hostile's second", extractText({ fileName: "second.md", bytes: utf8("# Second\n\nQueued behind the first.") }, SMALL_FILE_LIMITS, { organizationId: "org-hostile" }));
    const other = track(events, "other", extractText({ fileName: "guide.docx", bytes: guideBytes }, SMALL_FILE_LIMITS, { organizationId: "org-other" }));

    // extractText hands a file to the fair share before its first await, so these counts are
    // the ones the three calls left: the other organization's file got the second thread at once,
    // beside the hostile file, and the hostile organization's second file waits behind its first.
    const shares = documentParsingShares();
    expect([shares.runningCount("org-hostile"), shares.runningCount("org-other"), shares.runningCount()]).toEqual([1, 1, 2]);
    expect([shares.waitingCount("org-hostile"), shares.waitingCount("org-other")]).toEqual([1, 0]);

    const document = (await other) as { text: string };
    expect(document.text).toContain("Download the package.");

    const refused = await hostile;
    expect(refused).toBeInstanceOf(DocumentError);
    expect(["EXTRACTION_TIMEOUT", "MEMORY_LIMIT"]).toContain((refused as DocumentError).code);
    expect((refused as DocumentError).message).toMatch(/"words\.docx" (took longer than 5 s|needed more than \d+ MB of memory)/);
    expect(((await second) as { text: string }).text).toBe("# Second\n\nQueued behind the first.");
    // Within the hostile organization the order is its share's, not the machine's speed.
    expect(events.filter((event) => event.startsWith("hostile"))).toEqual(["hostile failed", "hostile's second done"]);
    expect(events).toContain("other done");
  });

  it("keeps working after a parser thread was stopped: a DOCX is read again on the replacement", async () => {
    const document = await extractText({ fileName: "guide.docx", bytes: await docxGuide() }, SMALL_FILE_LIMITS, { organizationId: "org-hostile" });
    expect(document.sections.length).toBeGreaterThan(1);
    expect([documentParsingShares().runningCount(), documentParsingShares().waitingCount()]).toEqual([0, 0]);
  });
});
