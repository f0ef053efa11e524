/**
 * `@defer` below the query's root answered with its parent (gateway/nested-defer.ts): which
 * directives are removed (every `@defer` on a fragment inside a field, in inline fragments,
 * fragment spreads and named fragments) and which are kept (on a root type's fragments), and
 * that a document without a nested one is returned as it is.
 */
import { describe, expect, it } from "@jest/globals";
import { buildSchema, parse, print, type DocumentNode } from "graphql";
import { inlineNestedDefer } from "../../gateway/nested-defer.js";

const schema = buildSchema(`
  type Query { search(q: String): Result, other: String }
  type Mutation { touch: Result }
  type Result { hits: [Hit!]!, providers: [String!]! }
  type Hit { score: Float!, item: Item, highlights: [String!] }
  union Item = Conversation | Web
  type Conversation { id: ID!, title: String! }
  type Web { url: String! }
`);

const compact = (document: DocumentNode) => print(document).replace(/\s+/g, " ").trim();

describe("inlineNestedDefer", () => {
  it("removes @defer from fragments inside a field, at any depth, and keeps the fragments' selections", () => {
    const document = parse(`
      query Nested($on: Boolean!) {
        search(q: "x") {
          hits { score ... @defer(label: "h") { highlights } item { ... on Conversation @defer { id ... @defer(if: $on) { title } } } }
          ... @defer { providers }
          ...Providers @defer
        }
      }
      fragment Providers on Result { providers ... on Result @defer { hits { score } } }
    `);
    expect(compact(inlineNestedDefer(document, schema))).toBe(
      compact(parse(`
        query Nested($on: Boolean!) {
          search(q: "x") {
            hits { score ... { highlights } item { ... on Conversation { id ... { title } } } }
            ... { providers }
            ...Providers
          }
        }
        fragment Providers on Result { providers ... on Result { hits { score } } }
      `)),
    );
  });

  it("keeps @defer on fragments of a root type: directly under the root, in a fragment on Query, on a mutation's root", () => {
    const query = parse(`
      query { other ... @defer(label: "all") { search { providers } } ...Root @defer ... on Query @defer { other } }
      fragment Root on Query { ... @defer { search { providers } } }
    `);
    const mutation = parse(`mutation { ... @defer { touch { providers } } }`);
    expect(inlineNestedDefer(query, schema)).toBe(query);
    expect(inlineNestedDefer(mutation, schema)).toBe(mutation);
  });

  it("removes only the nested ones when an operation has both, and leaves other directives alone", () => {
    const document = parse(`query($x: Boolean!) { other ... @defer { search { hits { ... @defer @include(if: $x) { score } } } } }`);
    expect(compact(inlineNestedDefer(document, schema))).toBe(compact(parse(`query($x: Boolean!) { other ... @defer { search { hits { ... @include(if: $x) { score } } } } }`)));
  });

  it("returns the same document when nothing is nested, and the same rewrite for the same document", () => {
    const plain = parse(`{ search { providers } }`);
    expect(inlineNestedDefer(plain, schema)).toBe(plain);
    const nested = parse(`{ search { ... @defer { providers } } }`);
    const once = inlineNestedDefer(nested, schema);
    expect(once).not.toBe(nested);
    expect(inlineNestedDefer(nested, schema)).toBe(once);
    // The parsed document itself is left as it was (Yoga caches and reuses it).
    expect(compact(nested)).toBe("{ search { ... @defer { providers } } }");
  });
});
