/**
 * Every root field of the composed supergraph (Query and Mutation) is nullable, and says so: a
 * subgraph that is down nulls only the fields it owns, because a non-null root field that fails
 * nulls the whole `data` and with it every other subgraph's answer in the same document. Each
 * root field's description names the subgraph whose outage nulls it, as the table in docs/architecture.md (Outages) does.
 *
 * A new non-null root field fails here, naming it; one that truly must stay non-null goes on
 * MAY_BE_NON_NULL with the reason (there is none today).
 */
import fs from "node:fs";
import { describe, expect, it } from "@jest/globals";
import { Kind, parse, type DocumentNode, type FieldDefinitionNode } from "graphql";
import { rootFieldOwners } from "../../gateway/subgraph-outage.js";

const SUPERGRAPH = parse(fs.readFileSync(new URL("../../supergraph.graphql", import.meta.url), "utf8"));

/** Root fields allowed to be non-null, `Type.field` → why. */
const MAY_BE_NON_NULL = new Map<string, string>();

interface RootField {
  coordinate: string;
  definition: FieldDefinitionNode;
  owners: string[];
}

/** The supergraph's client-visible Query and Mutation fields, each with the subgraphs that resolve it. */
function rootFields(document: DocumentNode): RootField[] {
  // The gateway's own reading of the join directives: the one that decides which null field an outage explains.
  const owners = rootFieldOwners(document);
  const fields: RootField[] = [];
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.OBJECT_TYPE_DEFINITION || !["Query", "Mutation"].includes(definition.name.value)) continue;
    for (const field of definition.fields ?? []) {
      if (field.directives?.some((directive) => directive.name.value === "inaccessible")) continue;
      const coordinate = `${definition.name.value}.${field.name.value}`;
      fields.push({ coordinate, definition: field, owners: owners.get(coordinate) ?? [] });
    }
  }
  return fields;
}

describe("root fields of the supergraph", () => {
  const fields = rootFields(SUPERGRAPH);

  it("are found: queries and mutations of every subgraph", () => {
    expect(fields.length).toBeGreaterThan(30);
    expect(new Set(fields.flatMap((field) => field.owners))).toEqual(new Set(["conversations", "knowledge-base", "external-search", "search"]));
  });

  it("are all nullable, so an outage nulls only its own subgraph's fields", () => {
    const nonNull = fields.filter((field) => field.definition.type.kind === Kind.NON_NULL_TYPE && !MAY_BE_NON_NULL.has(field.coordinate));
    expect(nonNull.map((field) => field.coordinate)).toEqual([]);
  });

  it("each have one owning subgraph, named in the description as the service whose outage nulls it", () => {
    const undocumented = fields
      .filter(({ owners, definition }) => owners.length !== 1 || !definition.description?.value.includes(outageSentence(owners[0]!)))
      .map(({ coordinate, owners }) => `${coordinate} (owned by ${owners.join(", ") || "no subgraph named"})`);
    expect(undocumented).toEqual([]);
  });
});

function outageSentence(subgraph: string): string {
  return `Null, with a SUBGRAPH_UNAVAILABLE error, when the ${subgraph} service is down or does not answer in time.`;
}
