/**
 * The gateway response cache's store (gateway/response-cache.ts): one entry per cached answer,
 * whatever the answer holds. Mesh's store it replaced wrote two more keys per entity of every
 * answer (41 entries for a page of 20 hits), so its 10,000-entry bound held about 240 answers.
 */
import { describe, expect, it } from "@jest/globals";
import { ResponseStore } from "../../gateway/response-cache.js";

const page = { data: { search: { hits: Array.from({ length: 20 }, (_, i) => ({ item: { __typename: "Conversation", id: `c${i}` } })) } } };
const entities = page.data.search.hits.map((hit) => ({ typename: "Conversation", id: hit.item.id }));

describe("ResponseStore", () => {
  it("keeps one entry per answer, not one per entity", () => {
    const store = new ResponseStore();
    store.set("answer-1", page, entities, 10_000);
    store.set("answer-2", page, entities, 10_000);
    expect(store.size).toBe(2);
    expect(store.get("answer-1")).toBe(page);
  });

  it("honours the TTL the plugin computed, and stores nothing for a TTL of 0", async () => {
    const store = new ResponseStore();
    store.set("never", page, entities, 0);
    store.set("brief", page, entities, 20);
    expect(store.get("never")).toBeUndefined();
    expect(store.get("brief")).toBe(page);
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(store.get("brief")).toBeUndefined();
  });

  it("never stores or serves the empty key, which requests that must not use the cache get", () => {
    const store = new ResponseStore();
    store.set("", page, entities, 10_000);
    expect(store.size).toBe(0);
    expect(store.get("")).toBeUndefined();
  });

  it("is emptied by clear(), and entity invalidation (off in this gateway) removes nothing", () => {
    const store = new ResponseStore();
    store.set("answer", page, entities, 10_000);
    store.invalidate();
    expect(store.size).toBe(1);
    store.clear();
    expect(store.size).toBe(0);
  });
});
