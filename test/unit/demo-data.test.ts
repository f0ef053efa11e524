import { describe, it, expect } from "@jest/globals";
import {
  demoConversations,
  generateDemoConversations,
  type DemoConversation,
  type DemoMessage,
} from "../../lib/demo-data/conversations.js";
import { loadDemoLibrary, renderDemoDocument, renderMarkdown } from "../../lib/demo-data/documents.js";
import { DEMO_TEAMS, DEMO_USERS } from "../../lib/demo-data/organization.js";

const DAY_MS = 86_400_000;
const DEFAULT_NOW = new Date("2026-11-01T12:00:00Z");

// Generated once and shared: the assertions below only read them.
const sample2000 = generateDemoConversations({ count: 2000 });
const sample300 = sample2000.slice(0, 300);

function firstUserMessage(conversation: DemoConversation): string {
  const message = conversation.messages.find((m) => m.role === "user");
  if (message === undefined) throw new Error(`conversation "${conversation.title}" has no user message`);
  return message.content;
}

function duplicateCount(values: readonly string[]): number {
  return values.length - new Set(values).size;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

function allMessages(conversations: readonly DemoConversation[]): DemoMessage[] {
  return conversations.flatMap((c) => c.messages);
}

describe("demo conversation generator", () => {
  describe("determinism", () => {
    it("produces deep-equal output, dates included, for the same options", () => {
      const a = generateDemoConversations({ count: 150, seed: 7, users: 5 });
      const b = generateDemoConversations({ count: 150, seed: 7, users: 5 });
      expect(a).toEqual(b);
      expect(a.map((c) => c.createdAt.getTime())).toEqual(b.map((c) => c.createdAt.getTime()));
    });

    it("uses seed 42 when none is given", () => {
      expect(generateDemoConversations({ count: 40 })).toEqual(generateDemoConversations({ count: 40, seed: 42 }));
    });

    it("produces different conversations for a different seed", () => {
      const a = generateDemoConversations({ count: 100, seed: 1 });
      const b = generateDemoConversations({ count: 100, seed: 2 });
      const sameFirstMessage = a.filter((c, i) => firstUserMessage(c) === firstUserMessage(b[i] as DemoConversation));
      expect(sameFirstMessage.length).toBeLessThan(5);
      expect(a.map((c) => c.topic)).not.toEqual(b.map((c) => c.topic));
    });

    it("keeps a small run a prefix of a larger run with the same seed", () => {
      const small = generateDemoConversations({ count: 25, seed: 11 });
      const large = generateDemoConversations({ count: 400, seed: 11 });
      expect(large.slice(0, 25)).toEqual(small);
    });
  });

  describe("options", () => {
    it("honours count", () => {
      expect(generateDemoConversations({ count: 0 })).toHaveLength(0);
      expect(generateDemoConversations({ count: 1 })).toHaveLength(1);
      expect(generateDemoConversations({ count: 137 })).toHaveLength(137);
      expect(sample2000).toHaveLength(2000);
    });

    it("rejects invalid counts and user numbers", () => {
      expect(() => generateDemoConversations({ count: -1 })).toThrow(RangeError);
      expect(() => generateDemoConversations({ count: 2.5 })).toThrow(RangeError);
      expect(() => generateDemoConversations({ count: 3, users: 0 })).toThrow(RangeError);
      expect(() => generateDemoConversations({ count: 3, now: new Date("not a date") })).toThrow(RangeError);
    });
  });

  describe("owners", () => {
    it("draws ownerIndex from 0..users-1", () => {
      for (const users of [1, 3, 8]) {
        const owners = new Set(generateDemoConversations({ count: 300, users }).map((c) => c.ownerIndex));
        expect([...owners].sort()).toEqual(Array.from({ length: users }, (_, i) => i));
      }
    });

    it("skews ownership so some users have many more conversations", () => {
      const perUser = new Array<number>(8).fill(0);
      for (const c of sample2000) perUser[c.ownerIndex] = (perUser[c.ownerIndex] ?? 0) + 1;
      const busiest = Math.max(...perUser);
      const quietest = Math.min(...perUser);
      expect(quietest).toBeGreaterThan(0);
      expect(busiest).toBeGreaterThan(3 * quietest);
    });
  });

  describe("timestamps", () => {
    it("spreads createdAt over the 180 days before now", () => {
      const now = new Date("2025-03-15T08:30:00Z");
      const outside = generateDemoConversations({ count: 1000, now })
        .map((c) => c.createdAt)
        .filter((at) => !(at instanceof Date) || at > now || at.getTime() < now.getTime() - 180 * DAY_MS);
      expect(outside).toEqual([]);
    });

    it("defaults now to 2026-11-01 and makes recent days denser", () => {
      const ages = sample2000.map((c) => (DEFAULT_NOW.getTime() - c.createdAt.getTime()) / DAY_MS);
      expect(Math.min(...ages)).toBeGreaterThanOrEqual(0);
      expect(Math.max(...ages)).toBeLessThanOrEqual(180);
      const lastMonth = ages.filter((age) => age < 30).length;
      const oldestMonth = ages.filter((age) => age >= 150).length;
      expect(lastMonth).toBeGreaterThan(2 * oldestMonth);
      expect(oldestMonth).toBeGreaterThan(0);
    });
  });

  describe("message structure", () => {
    it("keeps 2–30 messages, mostly 4–12", () => {
      const lengths = sample2000.map((c) => c.messages.length);
      expect(Math.min(...lengths)).toBeGreaterThanOrEqual(2);
      expect(Math.max(...lengths)).toBeLessThanOrEqual(30);
      const typical = lengths.filter((n) => n >= 4 && n <= 12).length;
      expect(typical / lengths.length).toBeGreaterThan(0.6);
      expect(lengths.some((n) => n > 12)).toBe(true);
    });

    it("alternates user and assistant, with system only first and tool only before an assistant turn", () => {
      const misordered = sample2000
        .map((c) => c.messages.map((m) => m.role).join(","))
        .filter((roles) => !/^(system,)?user,(tool,)?assistant(,user,(tool,)?assistant)*$/.test(roles));
      expect(misordered).toEqual([]);
    });

    it("occasionally opens with a system prompt and occasionally includes a JSON tool result", () => {
      const withSystem = sample2000.filter((c) => c.messages[0]?.role === "system");
      const toolMessages = allMessages(sample2000).filter((m) => m.role === "tool");
      expect(withSystem.length).toBeGreaterThan(50);
      expect(withSystem.length).toBeLessThan(600);
      expect(toolMessages.length).toBeGreaterThan(20);
      for (const c of withSystem) expect(c.messages[0]?.content).toMatch(/^You are a /);
      for (const m of toolMessages) expect(() => JSON.parse(m.content)).not.toThrow();
    });

    it("writes longer assistant answers than user questions, within the content limit", () => {
      const messages = allMessages(sample2000);
      const assistant = messages.filter((m) => m.role === "assistant").map((m) => m.content.length);
      const user = messages.filter((m) => m.role === "user").map((m) => m.content.length);
      expect(median(assistant)).toBeGreaterThanOrEqual(300);
      expect(median(assistant)).toBeLessThanOrEqual(2000);
      expect(median(user)).toBeLessThan(median(assistant) / 2);
      const outOfBounds = messages.filter((m) => m.content.trim() === "" || m.content.length > 100_000);
      expect(outOfBounds).toEqual([]);
    });

    it("leaves no unrendered template syntax in titles or messages", () => {
      const unrendered = /\[\[|\{\{[A-Za-z][A-Za-z0-9]*\}\}/;
      expect(sample2000.filter((c) => unrendered.test(c.title)).map((c) => c.title)).toEqual([]);
      const leaks = allMessages(sample2000).filter((m) => unrendered.test(m.content));
      expect(leaks.map((m) => m.content.slice(0, 120))).toEqual([]);
    });
  });

  describe("topics and titles", () => {
    it("covers at least 40 distinct topics in 2,000 conversations", () => {
      const topics = new Set(sample2000.map((c) => c.topic));
      expect(topics.size).toBeGreaterThanOrEqual(40);
      for (const topic of topics) expect(topic).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
      expect(topics).toContain("postgres-deadlock");
      expect(topics).toContain("lisbon-trip");
      expect(topics).toContain("blood-test-results");
    });

    it("gives every conversation a 3–80 character title, rarely repeated", () => {
      const badTitles = sample2000
        .map((c) => c.title)
        .filter((title) => title.length < 3 || title.length > 80 || title !== title.trim());
      expect(badTitles).toEqual([]);
      expect(duplicateCount(sample300.map((c) => c.title))).toBeLessThan(300 * 0.15);
    });

    it("adds a caveat to medical answers", () => {
      const medical = sample2000.filter((c) => c.topic === "blood-test-results");
      expect(medical.length).toBeGreaterThan(0);
      for (const c of medical) {
        const firstAnswer = c.messages.find((m) => m.role === "assistant")?.content ?? "";
        expect(firstAnswer).toMatch(/doctor/i);
      }
    });
  });

  describe("realistic variety", () => {
    it("rarely repeats an opening question among 300 conversations", () => {
      expect(duplicateCount(sample300.map(firstUserMessage))).toBeLessThan(300 * 0.05);
    });

    it("words the same topic differently across conversations", () => {
      const openersByTopic = new Map<string, Set<string>>();
      const countByTopic = new Map<string, number>();
      for (const c of sample2000) {
        const openers = openersByTopic.get(c.topic) ?? new Set<string>();
        openers.add(firstUserMessage(c));
        openersByTopic.set(c.topic, openers);
        countByTopic.set(c.topic, (countByTopic.get(c.topic) ?? 0) + 1);
      }
      for (const [topic, openers] of openersByTopic) {
        const count = countByTopic.get(topic) ?? 0;
        expect(openers.size).toBeGreaterThanOrEqual(Math.min(count, 8));
      }
    });

    it("uses a broad vocabulary", () => {
      const words = new Set<string>();
      for (const m of allMessages(sample300)) {
        for (const word of m.content.toLowerCase().match(/\p{L}[\p{L}'-]*/gu) ?? []) words.add(word);
      }
      expect(words.size).toBeGreaterThan(3000);
    });

    it("includes accented letters, non-Latin scripts and emoji as well-formed Unicode", () => {
      const text = allMessages(sample2000)
        .map((m) => m.content)
        .join("\n");
      expect(text).toMatch(/[àáâãäçèéêëíñóôöúüßøå]/);
      expect(text).toMatch(/\p{Extended_Pictographic}/u);
      expect(text).toMatch(/[\u3040-\u30ff\u4e00-\u9fff]/);
      // encodeURIComponent throws on lone surrogates, i.e. on strings cut through an emoji.
      expect(() => encodeURIComponent(text)).not.toThrow();
    });
  });

  describe("streaming", () => {
    // Not timed (a stopwatch here fails on a loaded machine): a generator that made its 10
    // million up front would not return within the test's limit at all; the next test counts.
    it("is lazy: taking 3 of 10 million gives the first 3 of the list", () => {
      const iterator = demoConversations({ count: 10_000_000 });
      const taken: DemoConversation[] = [];
      for (const conversation of iterator) {
        taken.push(conversation);
        if (taken.length === 3) break;
      }
      expect(taken).toHaveLength(3);
      expect(taken).toEqual(generateDemoConversations({ count: 3 }));
    });

    // Streaming is counted, not timed: a generator of a billion conversations hands out its first
    // ones at once only if it makes each on demand (a timed bound here failed on a loaded machine).
    it("streams: conversations are made one at a time, as they are asked for", () => {
      const conversations = demoConversations({ count: 1_000_000_000, seed: 3 });
      const first = [conversations.next(), conversations.next(), conversations.next()];
      expect(first.map((step) => step.done)).toEqual([false, false, false]);
      expect(first.map((step) => (step.value as { messages: unknown[] }).messages.length).every((length) => length >= 2)).toBe(true);
    });

    // Making 100,000 of them (the benchmark's scale) is in test/integration/demo-data-scale.test.ts:
    // seconds of CPU that the pre-commit loop need not spend.
  });
});

describe("demo documents (documents.json)", () => {
  const { knowledgeBase, documents } = loadDemoLibrary();
  const teamsOf = (userId: string) => DEMO_TEAMS.filter((team) => (team.members as readonly string[]).includes(userId)).map((team) => team.id as string);
  const kind = (document: (typeof documents)[number]) => `${document.fileName.endsWith(".pdf") ? "pdf" : "markdown"}/${document.sharedWithTeam ? "shared" : "private"}`;

  it("are a few dozen, with unique Markdown or PDF file names", () => {
    expect(documents.length).toBeGreaterThanOrEqual(24);
    expect(duplicateCount(documents.map((document) => document.fileName))).toBe(0);
    for (const document of documents) expect(document.fileName).toMatch(/^[a-z0-9-]+\.(md|pdf)$/);
  });

  it("belong to demo users and are shared only with one of their owner's teams", () => {
    const users = new Set<string>(DEMO_USERS.map((user) => user.id));
    for (const document of documents) {
      expect(users).toContain(document.owner);
      if (document.sharedWithTeam !== null) expect(teamsOf(document.owner)).toContain(document.sharedWithTeam);
    }
  });

  it("are about topics the demo conversations talk about", () => {
    const topics = new Set(sample2000.map((conversation) => conversation.topic));
    for (const document of documents) expect(topics).toContain(document.topic);
  });

  it("come in both formats, shared and private, in the handbook and outside it", () => {
    const all = new Set(documents.map(kind));
    expect(all).toEqual(new Set(["markdown/shared", "markdown/private", "pdf/shared", "pdf/private"]));
    const handbook = documents.filter((document) => document.inHandbook);
    expect(new Set(handbook.map((document) => kind(document).split("/")[0]))).toEqual(new Set(["markdown", "pdf"]));
    expect(new Set(handbook.map((document) => kind(document).split("/")[1]))).toEqual(new Set(["shared", "private"]));
    expect(handbook.length).toBeLessThan(documents.length);
    expect(knowledgeBase.name).toBe("Engineering handbook");
  });

  it("render as Markdown with the title and every section heading", () => {
    const markdown = renderMarkdown(documents[0]!);
    expect(markdown.startsWith(`# ${documents[0]!.title}\n`)).toBe(true);
    for (const section of documents[0]!.sections) expect(markdown).toContain(`\n## ${section.heading}\n`);
  });

  it("render as PDFs with the same bytes every time, so their content hash is stable", async () => {
    const pdf = documents.find((document) => document.fileName.endsWith(".pdf"))!;
    const [a, b] = [await renderDemoDocument(pdf), await renderDemoDocument(pdf)];
    expect(a.mediaType).toBe("application/pdf");
    expect(Buffer.from(a.bytes.subarray(0, 5)).toString("latin1")).toBe("%PDF-");
    expect(Buffer.from(a.bytes).equals(Buffer.from(b.bytes))).toBe(true);
  });
});
