/**
 * The `@defer` and `@stream` our subgraphs would have to carry out, removed before planning
 * (gateway/inline-incremental.ts): which directives are removed (every `@defer` on a fragment
 * inside a field, in inline fragments, fragment spreads and named fragments; `@stream` on a root
 * type's fields) and which are kept (`@defer` on a root type's fragments, `@stream` below the
 * root), and that a document with nothing to remove is returned as it is.
 */
import { describe, expect, it } from "@jest/globals";
import { buildSchema, parse, print, type DocumentNode } from "graphql";
import { inlineIncremental } from "../../gateway/inline-incremental.js";

const schema = buildSchema(`
  type Query { search(q: String): Result, other: String, providers: [String!] }
  type Mutation { touch: Result }
  type Result { hits: [Hit!]!, providers: [String!]! }
  type Hit { score: Float!, item: Item, highlights: [String!] }
  union Item = Conversation | Web
  type Conversation { id: ID!, title: String! }
  type Web { url: String! }
`);

const compact = (document: DocumentNode) => print(document).replace(/\s+/g, " ").trim();

describe("inlineIncremental", () => {
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
    expect(compact(inlineIncremental(document, schema))).toBe(
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
    expect(inlineIncremental(query, schema)).toBe(query);
    expect(inlineIncremental(mutation, schema)).toBe(mutation);
  });

  it("removes only the nested ones when an operation has both, and leaves other directives alone", () => {
    const document = parse(`query($x: Boolean!) { other ... @defer { search { hits { ... @defer @include(if: $x) { score } } } } }`);
    expect(compact(inlineIncremental(document, schema))).toBe(compact(parse(`query($x: Boolean!) { other ... @defer { search { hits { ... @include(if: $x) { score } } } } }`)));
  });

  it("removes @stream from a root type's fields, in fragments on Query too, and keeps it below the root", () => {
    const document = parse(`{ providers @stream(initialCount: 1) search { hits @stream { score } } ...Root } fragment Root on Query { p: providers @stream }`);
    expect(compact(inlineIncremental(document, schema))).toBe(compact(parse(`{ providers search { hits @stream { score } } ...Root } fragment Root on Query { p: providers }`)));
    const below = parse(`{ search { hits @stream { score } } }`);
    expect(inlineIncremental(below, schema)).toBe(below);
  });

  it("returns the same document when nothing is nested, and the same rewrite for the same document", () => {
    const plain = parse(`{ search { providers } }`);
    expect(inlineIncremental(plain, schema)).toBe(plain);
    const nested = parse(`{ search { ... @defer { providers } } }`);
    const once = inlineIncremental(nested, schema);
    expect(once).not.toBe(nested);
    expect(inlineIncremental(nested, schema)).toBe(once);
    // The parsed document itself is left as it was (Yoga caches and reuses it).
    expect(compact(nested)).toBe("{ search { ... @defer { providers } } }");
  });
});
