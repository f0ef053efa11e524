/**
 * The registry of subgraphs this repository serves. Adding a subgraph: a folder beside this
 * file with its schema.graphql and resolvers, one line here, one entry in supergraph.yaml.
 */
import type { Database } from "../lib/database/connect.js";
import type { RequestContext, SubgraphDefinition } from "../lib/graphql/subgraph-server.js";
import { conversationsSubgraph } from "./conversations/index.js";

export const SUBGRAPHS = {
  conversations: conversationsSubgraph,
} satisfies Record<string, (database: Database) => SubgraphDefinition<RequestContext & any>>;

export type SubgraphName = keyof typeof SUBGRAPHS;

export function isSubgraphName(name: string): name is SubgraphName {
  return Object.hasOwn(SUBGRAPHS, name);
}
