/**
 * The registry of subgraphs this repository serves. Adding a subgraph: a folder beside this
 * file with its schema.graphql and resolvers, one line here, one entry in supergraph.yaml.
 */
import type { Config } from "../lib/config.js";
import type { Database } from "../lib/database/connect.js";
import type { RequestContext, SubgraphDefinition } from "../lib/graphql/subgraph-server.js";
import type { Logger } from "../lib/logger.js";
import type { Embedder } from "../lib/retrieval/embeddings/embedder.js";
import type { AnswerModel } from "../lib/language-models/language-model.js";
import { conversationsSubgraph } from "./conversations/index.js";
import { externalSearchSubgraph } from "./external-search/index.js";
import { knowledgeBaseSubgraph } from "./knowledge-base/index.js";
import { searchSubgraph } from "./search/index.js";

export interface SubgraphDependencies {
  database: Database;
  config: Config;
  logger: Logger;
  /**
   * One embedder for every subgraph of a process (`npm start` runs them all in one): the local
   * model is loaded once, in one worker pool, and query embeddings are cached once. Each
   * subgraph builds its own from config when it runs alone.
   */
  embedder?: Embedder;
  /** The language model behind the search subgraph's `answer` (extractive answers without one). */
  answerModel?: AnswerModel;
}

export type SubgraphName = keyof Config["subgraphs"];

/** Each subgraph has its own context type; the registry only needs to start them. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnySubgraph = SubgraphDefinition<RequestContext & any>;

export const SUBGRAPHS: Record<SubgraphName, (dependencies: SubgraphDependencies) => AnySubgraph | Promise<AnySubgraph>> = {
  conversations: ({ database }) => conversationsSubgraph(database),
  search: (dependencies) => searchSubgraph(dependencies),
  "knowledge-base": (dependencies) => knowledgeBaseSubgraph(dependencies),
  "external-search": (dependencies) => externalSearchSubgraph(dependencies),
};

export function isSubgraphName(name: string): name is SubgraphName {
  return Object.hasOwn(SUBGRAPHS, name);
}
