/**
 * The search page's state in its URL (search-url.ts): what the page writes, it reads back the
 * same; what a person or a link may put there that the app would not write is dropped, and no
 * URL makes reading it throw.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { facetInputsOf, MAX_FILTER_VALUES, NO_FILTERS, readUrlSearch, saveInputOf, searchInputOf, urlSearchOfSaved, writeUrlSearch, type UrlSearch } from "../src/search/search-url";
import { alphaForMode, modeOfAlpha, SEARCH_MODES } from "../src/search/search-modes";

const read = (query: string) => readUrlSearch(new URLSearchParams(query));

const kind = fc.constantFrom("CONVERSATION", "DOCUMENT_CHUNK", "KNOWLEDGE_BASE_PASSAGE", "WEB_RESULT", "SLACK_MESSAGE", "LINKEDIN_POST" as const);
const value = fc.string({ unit: "grapheme", minLength: 1, maxLength: 30 }).filter((text) => !/[\u0000-\u001f\u007f]/.test(text));
/** Any search the page can make. */
const anySearch = fc.record({
  query: fc.string({ unit: "grapheme", maxLength: 60 }).map((text) => text.trim()),
  alpha: fc.option(fc.integer({ min: 0, max: 20 }).map((step) => step / 20)),
  filters: fc.record({
    kinds: fc.uniqueArray(kind, { maxLength: 5 }),
    providers: fc.uniqueArray(value, { maxLength: 4 }),
    month: fc.option(fc.tuple(fc.integer({ min: 2000, max: 2099 }), fc.integer({ min: 1, max: 12 })).map(([year, month]) => `${year}-${String(month).padStart(2, "0")}`)),
    categories: fc.uniqueArray(value, { maxLength: 4 }),
    knowledgeBases: fc.uniqueArray(value, { maxLength: 4 }),
  }),
  exact: fc.boolean(),
  sort: fc.constantFrom("relevance", "newest" as const),
});

describe("the search page's URL", () => {
  it("reads the query, alpha and every filter", () => {
    expect(read("q=%20deadlock%20&alpha=0.25&kind=CONVERSATION&kind=DOCUMENT_CHUNK&provider=web.serper&month=2026-10&category=runbooks&kb=kb_1")).toEqual({
      query: "deadlock",
      alpha: 0.25,
      filters: { kinds: ["CONVERSATION", "DOCUMENT_CHUNK"], providers: ["web.serper"], month: "2026-10", categories: ["runbooks"], knowledgeBases: ["kb_1"] },
      exact: false,
      sort: "relevance",
    });
    // Only "1" turns typo tolerance off: anything else a link may carry leaves it on.
    expect(["exact=1", "exact=true", "exact=0", "exact="].map((query) => read(`q=x&${query}`).exact)).toEqual([true, false, false, false]);
  });

  it("round-trips what it writes, for any search the page can make (property)", () => {
    fc.assert(
      fc.property(anySearch, (original) => {
        const url = writeUrlSearch(original as UrlSearch).toString();
        expect(read(url)).toEqual(original);
      }),
      { numRuns: 300 },
    );
  });

  it("leaves out what it does not need: an empty search is an empty URL", () => {
    expect(writeUrlSearch({ query: "", alpha: null, filters: NO_FILTERS, exact: false, sort: "relevance" }).toString()).toBe("");
    expect(read("")).toEqual({ query: "", alpha: null, filters: NO_FILTERS, exact: false, sort: "relevance" });
  });

  it.each(["-0.1", "1.5", "NaN", "Infinity", "1e0", "0x1", " 0.5", "0.5abc", "", "½", "0." + "5".repeat(40)])("ignores alpha=%j", (alpha) => {
    expect(read(`q=x&alpha=${encodeURIComponent(alpha)}`).alpha).toBeNull();
  });

  it("accepts the alphas the slider writes, 0 and 1 included", () => {
    expect([0, 0.05, 0.35, 0.5, 1].map((alpha) => read(`alpha=${alpha}`).alpha)).toEqual([0, 0.05, 0.35, 0.5, 1]);
  });

  it("drops hostile filter values: unknown kinds, bad months, control characters, huge values, repeats and floods", () => {
    const flood = Array.from({ length: 500 }, (_, index) => `provider=p${index}`).join("&");
    const search = read(
      [
        "q=x",
        "kind=<script>",
        "kind=conversation",
        "kind=CONVERSATION",
        "kind=CONVERSATION",
        "kind=__proto__",
        "month=2026-13",
        "month=2026-1",
        `category=${encodeURIComponent("a\u0000b")}`,
        `category=${"c".repeat(10_000)}`,
        "category=",
        "kb=kb_1",
        "kb=kb_1",
        flood,
      ].join("&"),
    );
    expect(search.filters.kinds).toEqual(["CONVERSATION"]);
    expect(search.filters.month).toBeNull();
    expect(search.filters.categories).toEqual([]);
    expect(search.filters.knowledgeBases).toEqual(["kb_1"]);
    expect(search.filters.providers).toHaveLength(MAX_FILTER_VALUES);
    // The month is the first one given when repeated.
    expect(read("month=2026-02&month=2026-03").filters.month).toBe("2026-02");
  });

  it("never throws on any URL (property)", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom("q", "alpha", "kind", "provider", "month", "category", "kb", "other"), fc.string({ unit: "binary", maxLength: 50 }))), (entries) => {
        const params = new URLSearchParams();
        for (const [name, value] of entries) params.append(name, value);
        const search = readUrlSearch(params);
        expect(() => searchInputOf(search)).not.toThrow();
        expect(search.alpha === null || (search.alpha >= 0 && search.alpha <= 1)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it("turns the URL's search into the first page's SearchInput, the month as a UTC range", () => {
    expect(searchInputOf(read("q=deadlock&alpha=0.5&kind=CONVERSATION&provider=web.serper&month=2026-02"))).toEqual({
      query: "deadlock",
      limit: 20,
      alpha: 0.5,
      providers: ["web.serper"],
      filter: { kinds: ["CONVERSATION"], created: { from: "2026-02-01T00:00:00.000Z", to: "2026-02-28T23:59:59.999Z" } },
    });
    expect(searchInputOf(read("q=deadlcok&exact=1"))).toEqual({ query: "deadlcok", limit: 20, typoTolerance: false });
  });
});

describe("a saved search and the search page", () => {
  it("saves the page's search and opens the saved search as the same page, for any search the page can make (property)", () => {
    fc.assert(
      fc.property(anySearch, fc.integer({ min: 0, max: 20 }), (page, step) => {
        // A saved search keeps no order: it opens best first.
        const search = { ...(page as UrlSearch), alpha: page.alpha ?? step / 20, sort: "relevance" as const };
        const input = saveInputOf(search);
        expect(input).not.toHaveProperty("limit");
        // What SavedSearch answers for it (the server's normalization aside: sorting, lowercase sites).
        const saved = { query: input.query, alpha: input.alpha!, providers: input.providers ?? null, typoTolerance: input.typoTolerance ?? true, filter: input.filter ?? null };
        expect(urlSearchOfSaved(saved)).toEqual({ search, unshown: [] });
      }),
      { numRuns: 300 },
    );
  });

  it("opens what the page can show, and names the filter fields it cannot", () => {
    const saved = {
      query: "deadlock",
      alpha: 0.5,
      providers: null,
      typoTolerance: false,
      filter: { kinds: ["CONVERSATION" as const], created: { from: "2026-10-01T00:00:00.000Z", to: "2026-10-15T00:00:00.000Z" }, sites: ["example.com"], owner: null, updated: null },
    };
    const { search, unshown } = urlSearchOfSaved(saved);
    expect(search).toEqual({ query: "deadlock", alpha: 0.5, filters: { ...NO_FILTERS, kinds: ["CONVERSATION"] }, exact: true, sort: "relevance" });
    expect(unshown).toEqual(["created", "sites"]);
    // A whole UTC month, as the month facet sets it, is the page's month, however the server spells the instants.
    const month = urlSearchOfSaved({ ...saved, filter: { created: { from: "2026-10-01T00:00:00Z", to: "2026-10-31T23:59:59.999Z" } } });
    expect(month).toEqual({ search: { ...search, filters: { ...NO_FILTERS, month: "2026-10" } }, unshown: [] });
  });

  it("orders by newest only when asked, and never saves the order", () => {
    const search = read("q=deadlock&sort=newest");
    expect(search.sort).toBe("newest");
    expect(searchInputOf(search).sort).toBe("NEWEST");
    expect(saveInputOf(search)).not.toHaveProperty("sort");
    expect(["sort=oldest", "sort=NEWEST", "sort="].map((query) => read(`q=x&${query}`).sort)).toEqual(["relevance", "relevance", "relevance"]);
  });
});

describe("widening facets (disjunctive within a group, conjunctive across)", () => {
  it("asks nothing more for a search without selections", () => {
    expect(facetInputsOf(read("q=deadlock"))).toEqual({});
  });

  it("counts each group with a selection by the search without that group's selection, every other group kept", () => {
    const inputs = facetInputsOf(read("q=deadlock&kind=CONVERSATION&kind=DOCUMENT_CHUNK&category=runbooks&month=2026-10&sort=newest&exact=1"));
    expect(Object.keys(inputs).sort()).toEqual(["categories", "kinds", "month"]);
    expect(inputs.kinds!.filter).toEqual({ created: { from: "2026-10-01T00:00:00.000Z", to: "2026-10-31T23:59:59.999Z" }, categories: ["runbooks"] });
    expect(inputs.categories!.filter).toEqual({ kinds: ["CONVERSATION", "DOCUMENT_CHUNK"], created: { from: "2026-10-01T00:00:00.000Z", to: "2026-10-31T23:59:59.999Z" } });
    expect(inputs.month!.filter).toEqual({ kinds: ["CONVERSATION", "DOCUMENT_CHUNK"], categories: ["runbooks"] });
    // Counts do not depend on the order, and keep the words as typed.
    for (const input of Object.values(inputs)) {
      expect(input).not.toHaveProperty("sort");
      expect(input.typoTolerance).toBe(false);
      expect(input.query).toBe("deadlock");
    }
  });

  it("drops the providers selection for the source group only", () => {
    const inputs = facetInputsOf(read("q=x&provider=documents.keyword&kind=DOCUMENT_CHUNK"));
    expect(inputs.providers).not.toHaveProperty("providers");
    expect(inputs.providers!.filter).toEqual({ kinds: ["DOCUMENT_CHUNK"] });
    expect(inputs.kinds!.providers).toEqual(["documents.keyword"]);
    expect(inputs.kinds).not.toHaveProperty("filter");
  });
});

describe("search modes in words", () => {
  it("names the three alphas, and nothing else", () => {
    expect(SEARCH_MODES.map((mode) => [mode.label, mode.alpha])).toEqual([["Exact words", 1], ["Balanced", 0.5], ["By meaning", 0]]);
    expect(modeOfAlpha(0.5)?.id).toBe("balanced");
    expect(modeOfAlpha(0.35)).toBeNull();
  });

  it("leaves the alpha to the deployment when the mode chosen is its default", () => {
    expect(alphaForMode(SEARCH_MODES[0]!, 1)).toBeNull();
    expect(alphaForMode(SEARCH_MODES[1]!, 1)).toBe(0.5);
    expect(alphaForMode(SEARCH_MODES[0]!, null)).toBe(1);
  });
});
