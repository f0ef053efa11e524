/**
 * Every part of the schema a client sees carries a description: developers explore the graph in
 * Apollo Sandbox and GraphiQL and read them there. Each subgraph's schema.graphql is walked, and
 * so is the composed supergraph.graphql (the composer must keep what the subgraphs say); a missing
 * description fails with its coordinate, e.g. `knowledge-base: KnowledgeBase.createdAt` or
 * `search: Query.search(input:)`, all of them listed at once.
 *
 * Not checked, because no client reads them as part of our graph:
 * - federation plumbing: `_service`, `_entities`, `_Any`, `_Entity`, `_Service`, the `@link`
 *   schema extension, and in the supergraph the composer's own `join__*` and `link__*` definitions;
 * - the key fields of a `resolvable: false` stub entity (the search subgraph's `Conversation { id }`
 *   and its kin): composition takes the description of the subgraph that owns the entity, so the
 *   owner's is the one clients see;
 * - elements marked `@inaccessible` (none today), which the gateway hides from clients.
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "@jest/globals";
import {
  Kind,
  parse,
  type ConstDirectiveNode,
  type DefinitionNode,
  type FieldDefinitionNode,
  type InputValueDefinitionNode,
  type StringValueNode,
} from "graphql";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

const FEDERATION_PLUMBING = new Set(["_service", "_entities", "_Any", "_Entity", "_Service"]);
const COMPOSER_PREFIXES = ["join__", "link__"];

function subgraphSchemas(): { name: string; file: string }[] {
  const subgraphsDir = path.join(ROOT, "subgraphs");
  return fs
    .readdirSync(subgraphsDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && fs.existsSync(path.join(subgraphsDir, entry.name, "schema.graphql")))
    .map((entry) => ({ name: entry.name, file: path.join(subgraphsDir, entry.name, "schema.graphql") }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

function hasText(description: StringValueNode | undefined): boolean {
  return description !== undefined && description.value.trim() !== "";
}

function isInaccessible(directives: readonly ConstDirectiveNode[] | undefined): boolean {
  return (directives ?? []).some((directive) => directive.name.value === "inaccessible");
}

/** The `fields` of each `@key(..., resolvable: false)`, as a set of top-level field names (nested selections are not used here). */
function stubKeyFields(directives: readonly ConstDirectiveNode[] | undefined): Set<string> {
  const names = new Set<string>();
  for (const directive of directives ?? []) {
    if (directive.name.value !== "key") continue;
    const resolvable = directive.arguments?.find((argument) => argument.name.value === "resolvable");
    if (resolvable?.value.kind !== Kind.BOOLEAN || resolvable.value.value) continue;
    const fields = directive.arguments?.find((argument) => argument.name.value === "fields");
    if (fields?.value.kind === Kind.STRING) for (const name of fields.value.value.split(/[\s{}]+/)) if (name) names.add(name);
  }
  return names;
}

/**
 * The coordinates of every client-visible element of `sdl` that has no description. Types
 * declared with `extend type` (none today) are not required to describe themselves again, but
 * the fields they add are.
 */
function undescribedElements(sdl: string, options: { skipComposerDefinitions?: boolean } = {}): string[] {
  const missing: string[] = [];
  const skipped = (name: string) =>
    FEDERATION_PLUMBING.has(name) || (options.skipComposerDefinitions === true && COMPOSER_PREFIXES.some((prefix) => name.startsWith(prefix)));

  const checkArguments = (owner: string, args: readonly InputValueDefinitionNode[] | undefined) => {
    for (const argument of args ?? []) {
      if (!isInaccessible(argument.directives) && !hasText(argument.description)) missing.push(`${owner}(${argument.name.value}:)`);
    }
  };
  const checkFields = (typeName: string, fields: readonly FieldDefinitionNode[] | undefined, exempt: Set<string>) => {
    for (const field of fields ?? []) {
      const name = field.name.value;
      if (skipped(name) || isInaccessible(field.directives)) continue;
      const coordinate = `${typeName}.${name}`;
      if (!exempt.has(name) && !hasText(field.description)) missing.push(coordinate);
      checkArguments(coordinate, field.arguments);
    }
  };

  for (const definition of parse(sdl).definitions as readonly DefinitionNode[]) {
    switch (definition.kind) {
      case Kind.OBJECT_TYPE_DEFINITION:
      case Kind.INTERFACE_TYPE_DEFINITION:
      case Kind.OBJECT_TYPE_EXTENSION:
      case Kind.INTERFACE_TYPE_EXTENSION: {
        const typeName = definition.name.value;
        if (skipped(typeName) || isInaccessible(definition.directives)) break;
        const isExtension = definition.kind === Kind.OBJECT_TYPE_EXTENSION || definition.kind === Kind.INTERFACE_TYPE_EXTENSION;
        if (!isExtension && !hasText(definition.description)) missing.push(typeName);
        checkFields(typeName, definition.fields, stubKeyFields(definition.directives));
        break;
      }
      case Kind.ENUM_TYPE_DEFINITION: {
        const typeName = definition.name.value;
        if (skipped(typeName) || isInaccessible(definition.directives)) break;
        if (!hasText(definition.description)) missing.push(typeName);
        for (const value of definition.values ?? []) {
          if (!isInaccessible(value.directives) && !hasText(value.description)) missing.push(`${typeName}.${value.name.value}`);
        }
        break;
      }
      case Kind.INPUT_OBJECT_TYPE_DEFINITION: {
        const typeName = definition.name.value;
        if (skipped(typeName) || isInaccessible(definition.directives)) break;
        if (!hasText(definition.description)) missing.push(typeName);
        for (const field of definition.fields ?? []) {
          if (!isInaccessible(field.directives) && !hasText(field.description)) missing.push(`${typeName}.${field.name.value}`);
        }
        break;
      }
      case Kind.UNION_TYPE_DEFINITION:
      case Kind.SCALAR_TYPE_DEFINITION: {
        const typeName = definition.name.value;
        if (skipped(typeName) || isInaccessible(definition.directives)) break;
        if (!hasText(definition.description)) missing.push(typeName);
        break;
      }
      default:
        // Schema definitions and extensions (`@link`), directive definitions: not client data.
        break;
    }
  }
  return missing;
}

describe("schema descriptions", () => {
  it("finds the subgraph schemas it checks", () => {
    expect(subgraphSchemas().map((schema) => schema.name)).toEqual(expect.arrayContaining(["conversations", "external-search", "knowledge-base", "search"]));
  });

  it.each(subgraphSchemas().map((schema) => [schema.name, schema.file] as const))(
    "the %s subgraph describes every type, field, argument, enum value and input field",
    (name, file) => {
      const missing = undescribedElements(fs.readFileSync(file, "utf8")).map((coordinate) => `${name}: ${coordinate}`);
      expect(missing).toEqual([]);
    },
  );

  it("the composed supergraph.graphql keeps every description", () => {
    const missing = undescribedElements(fs.readFileSync(path.join(ROOT, "supergraph.graphql"), "utf8"), { skipComposerDefinitions: true });
    expect(missing).toEqual([]);
  });

  // The walker itself: each kind of element it must catch, and what it must let through.
  it("reports each kind of undescribed element by its coordinate", () => {
    const sdl = `
      type Query { thing(id: ID!): Thing }
      type Thing { id: ID! }
      interface Named { name: String }
      union Any = Thing
      enum Colour { RED }
      input Filter { colour: Colour }
      scalar Instant
      extend type Thing { size: Int }
    `;
    expect(undescribedElements(sdl)).toEqual([
      "Query",
      "Query.thing",
      "Query.thing(id:)",
      "Thing",
      "Thing.id",
      "Named",
      "Named.name",
      "Any",
      "Colour",
      "Colour.RED",
      "Filter",
      "Filter.colour",
      "Instant",
      "Thing.size",
    ]);
  });

  it("lets through described elements, federation plumbing, stub entities' keys and @inaccessible ones", () => {
    const sdl = `
      extend schema @link(url: "https://specs.apollo.dev/federation/v2.9", import: ["@key", "@inaccessible"])
      "Reads."
      type Query {
        "One thing." thing("Its id." id: ID!): Thing
        _service: _Service!
        _entities(representations: [_Any!]!): [_Entity]!
        "Hidden." hidden: Int @inaccessible
      }
      type _Service { sdl: String }
      scalar _Any
      union _Entity = Thing
      "A thing owned elsewhere."
      type Thing @key(fields: "id", resolvable: false) { id: ID! }
      "Owned here."
      type Owned @key(fields: "id") { id: ID! }
      "Blank descriptions do not count." type Blank { "  " size: Int }
    `;
    expect(undescribedElements(sdl)).toEqual(["Owned.id", "Blank.size"]);
  });
});
