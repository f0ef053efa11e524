/**
 * Federation is a contract with other people's tools: supergraph.yaml must compose with both
 * Federation v2 composers, The Guild's (which `npm run compose` ships) and Apollo's
 * (`@apollo/composition`, behind Rover, GraphOS and Apollo Router), into the same API schema:
 * types, fields, arguments and their defaults, enums, unions, interfaces, directives and
 * descriptions. Any `@provides`, `@requires`, `@override` or `@shareable` that one composer
 * rejects fails the first test; the mutated schemas below show that it can fail, on the
 * shareability rule the two composers disagree on.
 */
import fs from "node:fs";
import { describe, expect, it } from "@jest/globals";
import { Kind, parse, print, type DocumentNode } from "graphql";
import { loadSubgraphSchemas, type LoadedSubgraph } from "../../lib/composition/compose.js";
import { readSupergraphConfig } from "../../lib/composition/supergraph-config.js";
import { apiSchemaDifference, composeWith, compositionDisagreement, printApiSchema } from "../support/composers.js";

const subgraphs = await loadSubgraphSchemas(readSupergraphConfig("supergraph.yaml", {}));

/**
 * `Type.field` → its `@cost` and `@listSize` applications, arguments sorted by name (the two
 * composers write them in different orders), for every field of the document that has one.
 */
function costDirectives(document: DocumentNode): Map<string, string> {
  const found = new Map<string, string>();
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.OBJECT_TYPE_DEFINITION && definition.kind !== Kind.OBJECT_TYPE_EXTENSION) continue;
    for (const field of definition.fields ?? []) {
      const applied = (field.directives ?? [])
        .filter((directive) => directive.name.value === "cost" || directive.name.value === "listSize")
        .map((directive) => print({ ...directive, arguments: [...(directive.arguments ?? [])].sort((a, b) => a.name.value.localeCompare(b.name.value)) }))
        .sort();
      if (applied.length > 0) found.set(`${definition.name.value}.${field.name.value}`, applied.join(" "));
    }
  }
  return found;
}

function withSchema(name: string, edit: (sdl: string) => string): LoadedSubgraph[] {
  const file = `subgraphs/${name}/schema.graphql`;
  const original = fs.readFileSync(file, "utf8");
  const edited = edit(original);
  expect(edited).not.toBe(original);
  return subgraphs.map((subgraph) => (subgraph.name === name ? { ...subgraph, typeDefs: parse(edited) } : subgraph));
}

describe("supergraph.yaml", () => {
  it("composes with both composers into the same API schema", () => {
    expect(compositionDisagreement(subgraphs)).toBeNull();
  });

  it("gives clients the same API schema as the committed supergraph.graphql", () => {
    const apollo = composeWith("apollo", subgraphs);
    const committed = fs.readFileSync("supergraph.graphql", "utf8");
    const guild = composeWith("guild", subgraphs);
    expect(guild.supergraphSdl!.trim()).toBe(committed.trim());
    const api = printApiSchema(apollo.apiSchema!);
    // Spot checks that the comparison compares what clients see, not an empty schema.
    expect(api).toContain("search(");
    expect(api).toContain("union SearchItem = Conversation | DocumentChunk | KnowledgeBasePassage | LinkedInPost | SlackMessage | WebResult");
    expect(api).toContain('"""Title shown in lists, 1 to 500 characters."""');
    expect(api).not.toMatch(/@join__|@link|_entities|_service/);
  });

  it("keeps the search subgraph's provided title in both supergraphs, and chunk places shared by both owners", () => {
    for (const composer of ["apollo", "guild"] as const) {
      const { supergraphSdl } = composeWith(composer, subgraphs);
      expect(supergraphSdl).toContain(`provides: "... on Conversation { title }"`);
      // Resolved by the knowledge-base and the search subgraph alike: no join__field narrows them.
      expect(supergraphSdl).toMatch(/\n {2}headingPath: \[String!\]!\n/);
    }
  });

  it("carries every subgraph's @cost and @listSize into both supergraphs, the same (what gateways enforce: demand control)", () => {
    const declared = new Map<string, string>();
    for (const subgraph of subgraphs) for (const [field, directives] of costDirectives(subgraph.typeDefs)) declared.set(field, directives);
    expect(declared.get("Query.search")).toBe("@cost(weight: 500)");
    expect(declared.size).toBeGreaterThan(20);
    for (const composer of ["apollo", "guild"] as const) {
      expect([composer, costDirectives(parse(composeWith(composer, subgraphs).supergraphSdl!))]).toEqual([composer, declared]);
    }
  });

  it("composes without the knowledge-base subgraph in both composers, into the same API schema", () => {
    // A platform team may compose conversations and search alone: the chunk places the search
    // subgraph answers must not need their owner present (they were @external once, which made
    // both composers refuse this supergraph).
    const partial = subgraphs.filter((subgraph) => subgraph.name === "conversations" || subgraph.name === "search");
    expect(compositionDisagreement(partial)).toBeNull();
  });
});

describe("the rule the test enforces", () => {
  it("fails when a provided field is not shareable in its owner (Apollo rejects it, The Guild accepts it)", () => {
    const unshareable = withSchema("conversations", (sdl) => sdl.replace("title: String! @shareable", "title: String!"));
    expect(composeWith("guild", unshareable).errors).toEqual([]);
    expect(composeWith("apollo", unshareable).errors.join("\n")).toMatch(/Non-shareable field "Conversation\.title"/);
    expect(compositionDisagreement(unshareable)).toMatch(/^apollo rejects the subgraphs/);
  });

  it("fails when a provided chunk field is not shareable in the knowledge-base subgraph", () => {
    const unshareable = withSchema("knowledge-base", (sdl) => sdl.replace("headingPath: [String!]! @shareable", "headingPath: [String!]!"));
    expect(composeWith("apollo", unshareable).errors.join("\n")).toMatch(/Non-shareable field "DocumentChunk\.headingPath"/);
  });

  it("fails when a value type is resolved by two subgraphs without @shareable", () => {
    const duplicated = withSchema("knowledge-base", (sdl) => sdl.replace(/type PageInfo @shareable \{/, "type PageInfo {"));
    expect(compositionDisagreement(duplicated)).toMatch(/rejects the subgraphs[\s\S]*PageInfo/);
  });

  it("fails when the composers' API schemas differ, and says where", () => {
    const apollo = composeWith("apollo", subgraphs).apiSchema!;
    expect(apiSchemaDifference(composeWith("guild", subgraphs).apiSchema!, apollo)).toBeNull();
    // The same subgraphs with one argument default changed: a difference a client would see.
    const changed = withSchema("conversations", (sdl) => sdl.replace('first: Int = 20', 'first: Int = 25'));
    expect(apiSchemaDifference(composeWith("guild", changed).apiSchema!, apollo)).toMatch(/differ at line \d+: guild ".*first: Int = 25.*", apollo ".*first: Int = 20.*"/);
  });
});
