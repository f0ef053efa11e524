/**
 * The knowledge-base subgraph: owns Document and DocumentChunk (and, next, knowledge bases on
 * local, Bedrock and S3 Vectors backends). Its contract is schema.graphql beside this file;
 * `knowledgeBaseSubgraph(dependencies)` is what `startSubgraph` serves. Its search providers are
 * offered to the unified search through ./search.ts.
 */
import fs from "node:fs";
import { parse } from "graphql";
import type { Config } from "../../lib/config.js";
import type { Database } from "../../lib/database/connect.js";
import type { RequestContext, SubgraphDefinition } from "../../lib/graphql/subgraph-server.js";
import { DocumentStore } from "./document-store.js";
import { createDocumentLoaders, type DocumentLoaders } from "./loaders.js";
import { resolvers, type KnowledgeBaseContext } from "./resolvers.js";

export const SCHEMA_PATH = new URL("./schema.graphql", import.meta.url);

export function knowledgeBaseSubgraph({ database, config }: { database: Database; config: Config }): SubgraphDefinition<KnowledgeBaseContext> {
  const documents = new DocumentStore(database.prisma);
  return {
    name: "knowledge-base",
    typeDefs: parse(fs.readFileSync(SCHEMA_PATH, "utf8")),
    resolvers,
    createContext(base: RequestContext): KnowledgeBaseContext {
      let loaders: DocumentLoaders | null = null;
      return {
        ...base,
        documents,
        maxDocumentBytes: config.knowledgeBase.maxDocumentBytes,
        loaders() {
          loaders ??= createDocumentLoaders(documents, base.requireTenant());
          return loaders;
        },
      };
    },
    async checkHealth() {
      await database.prisma.$queryRaw`SELECT 1`;
    },
  };
}
