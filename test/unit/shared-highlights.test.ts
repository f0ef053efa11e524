/**
 * Highlight statements shared across requests (subgraphs/search/highlights.ts): the two searches
 * of a `@defer` operation reach the search subgraph as two requests, each with its own loader,
 * and where their pages hold the same hits they read the passages once. Counted here against a
 * domain whose statement is held open until the test lets it go, so both requests are in flight
 * whatever the machine's speed; another caller, another batch or a failed statement is never
 * shared.
 */
import { describe, expect, it } from "@jest/globals";
import type { HighlightOptions, HighlightPassage } from "../../lib/retrieval/highlights.js";
import type { DomainSearch, EntityRef } from "../../lib/retrieval/search-provider.js";
import type { TenantContext } from "../../lib/tenancy/token.js";
import { createHighlightLoader, createSharedHighlights } from "../../subgraphs/search/highlights.js";

const ada: TenantContext = { organizationId: "org_a", userId: "user_ada", teamIds: [], role: "member", userName: null, userEmail: null };
const grace: TenantContext = { ...ada, userId: "user_grace" };
const refs: EntityRef[] = [
  { typename: "Conversation", id: "c1" },
  { typename: "Conversation", id: "c2" },
];

/** A domain whose highlights statement answers when `release` is called, counting its calls. */
function heldDomain() {
  const calls: string[][] = [];
  const waiting: Array<() => void> = [];
  let fail = false;
  const domain = {
    domain: "conversations",
    providers: [],
    async highlights(tenant: TenantContext, asked: EntityRef[], query: string, options: HighlightOptions) {
      calls.push(asked.map((ref) => ref.id));
      await new Promise<void>((resolve) => waiting.push(resolve));
      if (fail) throw new Error("statement failed");
      return new Map<string, HighlightPassage[]>(asked.map((ref) => [`${ref.typename}:${ref.id}`, [{ text: `${tenant.userId} ${query} ${ref.id} ${options.limit}`, ranges: [], truncatedBefore: false, truncatedAfter: false }]]));
    },
  } as unknown as DomainSearch;
  return {
    domain,
    calls,
    failNext: () => (fail = true),
    async release() {
      // The loaders batch on the next tick: let both reach the domain before it answers.
      await new Promise((resolve) => setImmediate(resolve));
      for (const resolve of waiting.splice(0)) resolve();
    },
  };
}

const ask = (loader: ReturnType<typeof createHighlightLoader>, query: string, batch = refs) => Promise.all(batch.map((ref) => loader.load({ ref, query, limit: 3 })));

describe("highlights shared across requests", () => {
  it("runs one statement for two requests in flight with the same hits, in any order", async () => {
    const held = heldDomain();
    const shared = createSharedHighlights();
    const first = ask(createHighlightLoader([held.domain], ada, shared), "deadlock");
    const second = ask(createHighlightLoader([held.domain], ada, shared), "deadlock", [...refs].reverse());
    await held.release();
    const [a, b] = await Promise.all([first, second]);
    expect(held.calls).toHaveLength(1);
    expect(a.map((passages) => passages[0]!.text)).toEqual(["user_ada deadlock c1 3", "user_ada deadlock c2 3"]);
    expect(b.map((passages) => passages[0]!.text)).toEqual(["user_ada deadlock c2 3", "user_ada deadlock c1 3"]);
  });

  it("never shares between callers, queries or batches, nor after the statement answered", async () => {
    const held = heldDomain();
    const shared = createSharedHighlights();
    const asked = [
      ask(createHighlightLoader([held.domain], ada, shared), "deadlock"),
      ask(createHighlightLoader([held.domain], grace, shared), "deadlock"),
      ask(createHighlightLoader([held.domain], ada, shared), "latency"),
      ask(createHighlightLoader([held.domain], ada, shared), "deadlock", refs.slice(0, 1)),
    ];
    await held.release();
    const answers = await Promise.all(asked);
    expect(held.calls).toHaveLength(4);
    expect(answers[1]!.map((passages) => passages[0]!.text)).toEqual(["user_grace deadlock c1 3", "user_grace deadlock c2 3"]);
    // Answered: the same batch asked again runs again (nothing is kept).
    const again = ask(createHighlightLoader([held.domain], ada, shared), "deadlock");
    await held.release();
    await again;
    expect(held.calls).toHaveLength(5);
  });

  it("gives both requests the failure of a shared statement", async () => {
    const held = heldDomain();
    const shared = createSharedHighlights();
    held.failNext();
    const first = ask(createHighlightLoader([held.domain], ada, shared), "deadlock");
    const second = ask(createHighlightLoader([held.domain], ada, shared), "deadlock");
    await held.release();
    await expect(first).rejects.toThrow(/the conversations highlights could not be read/);
    await expect(second).rejects.toThrow(/the conversations highlights could not be read/);
    expect(held.calls).toHaveLength(1);
  });
});
