/**
 * The operation limits the gateway and every subgraph share: each limit, the hostile documents
 * that took the gateway down (fragment bombs, thousands of aliases), and linear cost of the
 * analysis itself, counted in visited nodes rather than timed.
 */
import fs from "node:fs";
import { describe, expect, it } from "@jest/globals";
import { maxAliasesRule } from "@escape.tech/graphql-armor-max-aliases";
import { maxDepthRule } from "@escape.tech/graphql-armor-max-depth";
import { costLimitRule } from "@escape.tech/graphql-armor-cost-limit";
import { buildSchema, getIntrospectionQuery, parse, specifiedRules, validate, type ValidationRule } from "graphql";
import {
  checkDocument,
  checkTokens,
  checkVariables,
  DEFAULT_OPERATION_LIMITS,
  OperationLimitError,
  operationLimitsRule,
  type OperationLimits,
} from "../../lib/graphql/operation-limits.js";

const schema = buildSchema(fs.readFileSync("supergraph.graphql", "utf8"), { assumeValidSDL: true });
const limits = DEFAULT_OPERATION_LIMITS;

/** `{...F0}` where each of `levels` fragments spreads the next `width` times: `width^levels` fields once expanded. */
export function fragmentBomb(levels: number, width: number): string {
  const fragments = Array.from({ length: levels }, (_, i) => `fragment F${i} on Query { ${`...F${i + 1} `.repeat(width)}}`);
  return `{ ...F0 } ${fragments.join(" ")} fragment F${levels} on Query { __typename }`;
}

function limitError(run: () => unknown): OperationLimitError {
  try {
    run();
  } catch (error) {
    if (error instanceof OperationLimitError) return error;
    throw error;
  }
  throw new Error("expected an OperationLimitError, but the operation was accepted");
}

describe("hostile documents", () => {
  it("rejects the 40-level fragment bomb after visiting each fragment once", () => {
    const document = parse(fragmentBomb(40, 2));
    const error = limitError(() => checkDocument(document, limits, schema));
    // Too deep (41 levels: every spread counts) long before its 2^40 selections are counted.
    expect(error.extensions).toMatchObject({ code: "OPERATION_LIMIT_EXCEEDED", limit: "depth", max: limits.maxDepth });
    expect(error.message).toContain("depth limit: at most 24");
    // Measured without the limits that stop it early: 2^40 selections, found in 2 visits per fragment.
    const open: OperationLimits = { ...limits, maxDepth: 100, maxSelections: Infinity, maxCost: Infinity, maxAliases: Infinity };
    const measures = checkDocument(document, open, schema);
    expect(measures.selections).toBe(2 ** 40);
    expect(measures.depth).toBe(41);
    expect(measures.visitedNodes).toBeLessThanOrEqual(2 * 41 + 1);
  });

  it("rejects the wide bomb (10 fragments, each spreading the next 10 times) in linear work", () => {
    const document = parse(fragmentBomb(10, 10));
    expect(limitError(() => checkDocument(document, limits, schema)).extensions.limit).toBe("selection");
    const open: OperationLimits = { ...limits, maxSelections: Infinity };
    const measures = checkDocument(document, open, schema);
    expect(measures.selections).toBe(10 ** 10);
    expect(measures.visitedNodes).toBeLessThanOrEqual(10 * 10 + 2);
  });

  it("reports a fragment cycle instead of looping", () => {
    const document = parse(`{ ...A } fragment A on Query { ...B } fragment B on Query { ...A }`);
    expect(limitError(() => checkDocument(document, limits, schema)).message).toMatch(/Fragment "A" spreads itself/);
  });

  it("rejects 10,000 aliases of conversations(first: 1) { totalCount }", () => {
    const query = `{ ${Array.from({ length: 10_000 }, (_, i) => `a${i}: conversations(first: 1) { totalCount }`).join(" ")} }`;
    // More tokens than allowed: refused before it is even parsed.
    expect(limitError(() => checkTokens(query, limits)).extensions.limit).toBe("token");
    const open = { ...limits, maxTokens: Infinity };
    expect(() => checkTokens(query, open)).not.toThrow();
    expect(limitError(() => checkDocument(parse(query), limits, schema)).extensions).toMatchObject({ limit: "alias", max: limits.maxAliases });
  });

  it("prices search and totalCount: 49 searches of 100 hits are too expensive even under the alias limit", () => {
    const counts = `{ ${Array.from({ length: 49 }, (_, i) => `a${i}: conversations(first: 100) { totalCount nodes { id } }`).join(" ")} }`;
    const measures = checkDocument(parse(counts), { ...limits, maxCost: Infinity }, schema);
    expect(measures.cost).toBe(49 * (1 + 10 + 100 * 1));
    const searches = `{ ${Array.from({ length: 49 }, (_, i) => `s${i}: search(input: { query: "x", limit: 100 }) { hits { score item { __typename } } }`).join(" ")} }`;
    const error = limitError(() => checkDocument(parse(searches), limits, schema));
    expect(error.extensions).toMatchObject({ limit: "cost", max: limits.maxCost });
  });

  it("takes list sizes from literals, variables, input objects and schema defaults", () => {
    const open = { ...limits, maxCost: Infinity };
    const cost = (query: string, variables?: Record<string, unknown>) => checkDocument(parse(query), open, schema, variables).cost;
    expect(cost(`{ conversations(first: 7) { nodes { id } } }`)).toBe(1 + 7 * 1);
    expect(cost(`query($n: Int) { conversations(first: $n) { nodes { id } } }`, { n: 30 })).toBe(1 + 30);
    expect(cost(`{ conversations { nodes { id } } }`)).toBe(1 + 20); // first: Int = 20
    expect(cost(`{ search(input: { query: "x", limit: 5 }) { hits { score } } }`)).toBe(500 + 5);
    expect(cost(`query($i: SearchInput!) { search(input: $i) { hits { score } } }`, { i: { query: "x", limit: 50 } })).toBe(500 + 50);
    expect(cost(`{ search(input: { query: "x" }) { hits { score } } }`)).toBe(500 + 20); // limit: Int = 20
  });

  it("rejects 200 nested inline fragments and 5,000 nested fields by depth, without deep recursion", () => {
    const inline = `{ ${"... on Query { ".repeat(200)}__typename${" }".repeat(200)} }`;
    expect(limitError(() => checkDocument(parse(inline), limits, schema)).extensions).toMatchObject({ limit: "depth", max: limits.maxDepth });
    const braces = `{ ${"conversations { nodes { ".repeat(1_250)}id${" } }".repeat(1_250)} }`;
    // Refused while it is being lexed, at the 65th nested bracket, long before its 5,000th token.
    expect(limitError(() => checkTokens(braces, limits)).extensions.limit).toBe("depth");
    // Within the token limit, nesting is refused before graphql-js's recursive parser sees it.
    const nested = `{ ${"a { ".repeat(1_600)}id${" }".repeat(1_600)} }`;
    expect(limitError(() => checkTokens(nested, limits)).extensions.limit).toBe("depth");
    const deepArgument = `{ search(input: { query: "x", providers: ${"[".repeat(2_000)}"a"${"]".repeat(2_000)} }) { tookMs } }`;
    expect(limitError(() => checkTokens(deepArgument, limits)).extensions.limit).toBe("depth");
    // The measure after parsing says depth too (parsed here at a depth the parser survives).
    const shallower = `{ ${"conversations { nodes { ".repeat(20)}id${" } }".repeat(20)} }`;
    expect(limitError(() => checkDocument(parse(shallower), limits, schema)).extensions.limit).toBe("depth");
  });

  it("counts fragment spreads as nesting, so fragments cannot hide depth", () => {
    const chain = Array.from({ length: 30 }, (_, i) => `fragment D${i} on Query { ...D${i + 1} }`).join(" ");
    const document = parse(`{ ...D0 } ${chain} fragment D30 on Query { __typename }`);
    expect(limitError(() => checkDocument(document, limits, schema)).extensions.limit).toBe("depth");
  });

  it("rejects too many directives, counted after fragment expansion", () => {
    const document = parse(`{ ...X ...X } fragment X on Query { ${Array.from({ length: 30 }, (_, i) => `t${i}: __typename @skip(if: false)`).join(" ")} }`);
    expect(limitError(() => checkDocument(document, { ...limits, maxAliases: Infinity }, schema)).extensions).toMatchObject({ limit: "directive", actual: 60 });
  });

  it("bounds variables by depth and size before coercion, iteratively", () => {
    let deep: unknown = "leaf";
    for (let i = 0; i < 100_000; i++) deep = { nested: deep };
    expect(limitError(() => checkVariables({ input: deep }, limits)).extensions.limit).toBe("variable depth");
    const wide = { ids: Array.from({ length: 60_000 }, (_, i) => i) };
    expect(limitError(() => checkVariables(wide, limits)).extensions.limit).toBe("variable size");
    const messages = Array.from({ length: 100 }, () => ({ role: "USER", content: "x".repeat(1_000), tokenCount: 3 }));
    expect(() => checkVariables({ input: { title: "t", messages } }, limits)).not.toThrow();
    const representations = Array.from({ length: 2_000 }, (_, i) => ({ __typename: "Conversation", id: String(i) }));
    expect(() => checkVariables({ representations }, limits)).not.toThrow();
  });
});

describe("legitimate operations pass", () => {
  it("admits every example query of the README and of docs/", () => {
    // The reference moved from the README to docs/ (issue 38): its examples must still pass.
    const pages = ["README.md", ...fs.readdirSync("docs").filter((name) => name.endsWith(".md")).map((name) => `docs/${name}`)];
    const blocks = pages.flatMap((page) => [...fs.readFileSync(page, "utf8").matchAll(/```graphql\n([\s\S]*?)```/g)].map((match) => match[1]!));
    expect(blocks.length).toBeGreaterThanOrEqual(10);
    for (const block of blocks) {
      expect(() => checkTokens(block, limits)).not.toThrow();
      expect(() => checkDocument(parse(block), limits, schema)).not.toThrow();
    }
  });

  it("admits GraphiQL's introspection query, the largest page of pages, and the planner's _entities fetches", () => {
    expect(() => checkDocument(parse(getIntrospectionQuery({ descriptions: true, inputValueDeprecation: true })), limits, schema)).not.toThrow();
    const largest = `{ conversations(first: 100) { totalCount edges { cursor node { id title messages(first: 100) { edges { cursor node { content role } } } } } } }`;
    expect(() => checkDocument(parse(largest), limits, schema)).not.toThrow();
    const entities = `query($representations: [_Any!]!) { _entities(representations: $representations) { ... on Conversation { id title updatedAt messageCount } } }`;
    const representations = Array.from({ length: 100 }, (_, i) => ({ __typename: "Conversation", id: String(i) }));
    expect(checkDocument(parse(entities), limits, null, { representations }).cost).toBe(1 + 100 * 0);
  });
});

describe("as a validation rule (subgraphs)", () => {
  it("reports the limit before graphql-js's own rules walk the bomb", () => {
    const errors = validate(schema, parse(fragmentBomb(40, 2)), [operationLimitsRule(limits), ...specifiedRules]);
    expect(errors[0]).toBeInstanceOf(OperationLimitError);
  });
});

/**
 * Why our own analysis (see lib/graphql/operation-limits.ts): graphql-armor's rules memoize per
 * fragment (linear: each fragment is looked up a bounded number of times) and count the expanded
 * document, but none counts selections and cost-limit cannot see list sizes given as variables.
 */
describe("graphql-armor's rules, checked against the bombs", () => {
  function lookups(rule: ValidationRule, source: string): number {
    let count = 0;
    const counting: ValidationRule = (context) => {
      const getFragment = context.getFragment.bind(context);
      context.getFragment = (name) => {
        count += 1;
        return getFragment(name);
      };
      return rule(context);
    };
    validate(schema, parse(source), [counting]);
    return count;
  }

  it("max-depth and max-aliases look each fragment up once on the 40-level and the wide bomb", () => {
    for (const source of [fragmentBomb(40, 2), fragmentBomb(10, 10)]) {
      expect(lookups(maxDepthRule({ n: 24, propagateOnRejection: false }), source)).toBeLessThanOrEqual(41);
      expect(lookups(maxAliasesRule({ n: 50, propagateOnRejection: false }), source)).toBeLessThanOrEqual(41);
    }
  });

  it("cost-limit prices `first` given as a variable as if it were 1", () => {
    let seen = -1;
    const source = `query($n: Int) { conversations(first: $n) { nodes { id title } } }`;
    validate(schema, parse(source), [costLimitRule({ maxCost: 1, propagateOnRejection: false, onReject: [(_c, error) => void (seen = Number(/found (\S+)\./.exec(error.message)?.[1]))] })]);
    const ours = checkDocument(parse(source), { ...limits, maxCost: Infinity }, schema, { n: 100 }).cost;
    expect(ours).toBe(1 + 100);
    expect(seen).toBeLessThan(20);
  });
});
