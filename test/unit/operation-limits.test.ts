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
import { buildSchema, getIntrospectionQuery, Kind, parse, print, specifiedRules, validate, visit, type DocumentNode, type FieldNode, type ValidationRule } from "graphql";
import { STANDARD_INTROSPECTION_OPTIONS } from "../support/graphql.js";
import {
  checkDocument,
  checkTokens,
  checkVariables,
  DEFAULT_OPERATION_LIMITS,
  GATEWAY_ADDED_TYPENAMES,
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

/** graphql 16.15's introspection query with every option it has (the experimental one too). */
const FULL_INTROSPECTION = getIntrospectionQuery({ ...STANDARD_INTROSPECTION_OPTIONS, experimentalDirectiveDeprecation: true });

/**
 * What the gateway sends downstream for `document`, as far as `__typename` goes: the response
 * cache's `__responseCacheTypeName: __typename` (@envelop/response-cache's addTypeNameToDocument:
 * every selection set without an unaliased `__typename`) and the planner's `__typename`.
 */
function withGatewayTypenames(document: DocumentNode): DocumentNode {
  const typename = (alias?: string): FieldNode => ({ kind: Kind.FIELD, name: { kind: Kind.NAME, value: "__typename" }, ...(alias ? { alias: { kind: Kind.NAME, value: alias } } : {}) });
  return visit(document, {
    SelectionSet(node) {
      const has = (alias?: string) => node.selections.some((s) => s.kind === Kind.FIELD && s.name.value === "__typename" && s.alias?.value === alias);
      return { ...node, selections: [...node.selections, ...(has() ? [] : [typename("__responseCacheTypeName"), typename()])] };
    },
  });
}

/** Errors of a subgraph's validation (its limits rule first, then graphql-js's own rules). */
function atSubgraph(source: string | DocumentNode): readonly Error[] {
  return validate(schema, typeof source === "string" ? parse(source) : source, [operationLimitsRule(limits), ...specifiedRules]);
}

describe("limits count what the client sent, never what the gateway adds", () => {
  it("admits graphql-js's introspection query with every option, at the gateway and at a subgraph", () => {
    const document = parse(FULL_INTROSPECTION);
    const measures = checkDocument(document, limits, schema);
    expect(measures.aliases).toBe(0);
    expect(() => checkTokens(FULL_INTROSPECTION, limits)).not.toThrow();
    // A subgraph's validation: the limits, and every field of every option exists in graphql 16.15.
    expect(atSubgraph(FULL_INTROSPECTION)).toEqual([]);
    // A subgraph asked through a gateway that added its `__typename` fields (fragments included).
    expect(atSubgraph(withGatewayTypenames(document))).toEqual([]);
    // The gateway answers introspection itself. Counted with the response cache's alias in each of
    // its selection sets, as the gateway used to count it, the same document has 82 aliases (61
    // with GraphiQL's options), none of them the client's.
    expect(checkDocument(withGatewayTypenames(document), { ...limits, maxAliases: Infinity }, schema).aliases).toBeGreaterThan(limits.maxAliases);
  });

  it("a subgraph answers what the gateway admitted: 50 aliased fields with the gateway's __typename in every selection set", () => {
    // The planner inlines fragments, so the gateway's `__typename` fields reach a subgraph in the
    // operation's own selection sets, where they are free.
    const fields = (count: number) =>
      `{ ${Array.from({ length: count }, (_, i) => (i % 2 ? `s${i}: search(input: { query: "q${i}", limit: 2 }) { tookMs hits { score item { ... on Conversation { title } } } }` : `c${i}: conversations(first: 1) { nodes { id title } }`)).join(" ")} }`;
    const admitted = parse(fields(50));
    expect(checkDocument(admitted, limits, schema).aliases).toBe(50);
    const downstream = withGatewayTypenames(admitted);
    expect(print(downstream).match(/__responseCacheTypeName: __typename/g)?.length).toBeGreaterThan(150);
    expect(atSubgraph(downstream)).toEqual([]);
    expect(checkDocument(downstream, limits, schema, null, { freeTypenames: GATEWAY_ADDED_TYPENAMES })).toMatchObject({ aliases: 50, selections: checkDocument(admitted, limits, schema).selections });
    expect((atSubgraph(withGatewayTypenames(parse(fields(51))))[0] as OperationLimitError).extensions).toMatchObject({ limit: "alias", actual: 51 });
  });

  it("still refuses 51 aliases of a real field, at the gateway and at a subgraph, with or without __typename beside them", () => {
    const aliased = `{ ${Array.from({ length: 51 }, (_, i) => `a${i}: conversations(first: 1) { __typename t: __typename totalCount }`).join(" ")} }`;
    expect(limitError(() => checkDocument(parse(aliased), limits, schema)).extensions).toMatchObject({ limit: "alias", max: 50 });
    const errors = atSubgraph(aliased);
    expect(errors[0]).toBeInstanceOf(OperationLimitError);
    expect((errors[0] as OperationLimitError).extensions).toMatchObject({ limit: "alias", actual: 51 });
  });

  it("bounds a flood of aliased __typename: by the alias limit past the free ones, and by tokens before parsing", () => {
    const flood = (count: number) => `{ ${Array.from({ length: count }, (_, i) => `t${i}: __typename`).join(" ")} }`;
    expect(limitError(() => checkDocument(parse(flood(51)), limits, schema)).extensions).toMatchObject({ limit: "alias", actual: 51 });
    // Downstream, two per selection set are the gateway's: 52 pass, 53 do not.
    expect(atSubgraph(flood(52))).toEqual([]);
    expect((atSubgraph(flood(53))[0] as OperationLimitError).extensions).toMatchObject({ limit: "alias", actual: 51 });
    const huge = flood(2_000);
    expect(limitError(() => checkTokens(huge, limits)).extensions.limit).toBe("token");
  });

  it("a subgraph refuses a bomb whose leaves are all free __typename fields: each fragment counts at least one selection", () => {
    for (const bomb of [fragmentBomb(10, 10), fragmentBomb(40, 2)]) {
      const errors = atSubgraph(bomb);
      expect(errors[0]).toBeInstanceOf(OperationLimitError);
    }
    expect(limitError(() => checkDocument(parse(fragmentBomb(10, 10)), limits, schema, null, { freeTypenames: GATEWAY_ADDED_TYPENAMES })).extensions.limit).toBe("selection");
    const spreads = (leaf: string) => `{ ...F0 } ${Array.from({ length: 6 }, (_, i) => `fragment F${i} on Query { ${`...F${i + 1} `.repeat(6)}}`).join(" ")} fragment F6 on Query { ${leaf} }`;
    for (const leaf of ["a: __typename b: __typename", "... on Query { a: __typename b: __typename }", "... on Query { __typename }"]) {
      expect(limitError(() => checkDocument(parse(spreads(leaf)), limits, schema, null, { freeTypenames: GATEWAY_ADDED_TYPENAMES })).extensions.limit).toBe("selection");
    }
    // The count is the gateway's whenever the client's own fragments hold nothing but __typename.
    const own = `{ ...T conversations(first: 1) { nodes { ... on Conversation { __typename } } } } fragment T on Query { __typename }`;
    expect(checkDocument(parse(own), limits, schema, null, { freeTypenames: GATEWAY_ADDED_TYPENAMES }).selections).toBe(checkDocument(parse(own), limits, schema).selections);
  });

  it("counts the planner's own fragments, and the gateway's __typename inside them, as the gateway counted the client's selections", () => {
    // What the Rust planner sent the search subgraph for 50 aliased `search { tookMs hits { score } }`:
    // the repeated selection as a fragment of its own, with the response cache's aliases in it.
    const client = `{ ${Array.from({ length: 25 }, (_, i) => `s${i}: search(input: { query: "q${i}", limit: 1 }) { tookMs hits { score } }`).join(" ")} ${Array.from({ length: 25 }, (_, i) => `c${i}: conversations(first: 1) { totalCount }`).join(" ")} }`;
    const planned = `{ ${Array.from({ length: 25 }, (_, i) => `s${i}: search(input: { query: "q${i}", limit: 1 }) { ...a }`).join(" ")} ${Array.from({ length: 25 }, (_, i) => `c${i}: conversations(first: 1) { ...b }`).join(" ")} __responseCacheTypeName: __typename } fragment a on SearchResult { tookMs hits { score __responseCacheTypeName: __typename } __responseCacheTypeName: __typename } fragment b on ConversationConnection { totalCount __responseCacheTypeName: __typename }`;
    const atGateway = checkDocument(parse(client), limits, schema);
    expect(atGateway.aliases).toBe(50);
    expect(atSubgraph(planned)).toEqual([]);
    expect(checkDocument(parse(planned), limits, schema, null, { freeTypenames: GATEWAY_ADDED_TYPENAMES })).toMatchObject({ aliases: 50, selections: atGateway.selections });
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
