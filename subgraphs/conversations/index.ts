/**
 * The conversations subgraph: owns Conversation and Message. Its contract is schema.graphql
 * beside this file; `conversationsSubgraph(database)` is what `startSubgraph` serves.
 */
import fs from "node:fs";
import { parse } from "graphql";
import { besideModule } from "../../lib/project-files.js";
import type { Database } from "../../lib/database/connect.js";
import type { RequestContext, SubgraphDefinition } from "../../lib/graphql/subgraph-server.js";
import { ConversationStore } from "./conversation-store.js";
import { createConversationLoaders, type ConversationLoaders } from "./loaders.js";
import { resolvers, type ConversationsContext } from "./resolvers.js";

// The domain's one public module: its part in the unified search is offered from here too.
export { conversationSearch, enqueueConversationsMissingVectors, type ConversationSearch, type SearchIndexStatus } from "./search.js";

export const SCHEMA_PATH = besideModule("./schema.graphql", import.meta.url);

export function conversationsSubgraph(database: Database): SubgraphDefinition<ConversationsContext> {
  const store = new ConversationStore(database.prisma);
  return {
    name: "conversations",
    typeDefs: parse(fs.readFileSync(SCHEMA_PATH, "utf8")),
    resolvers,
    createContext(base: RequestContext): ConversationsContext {
      let loaders: ConversationLoaders | null = null;
      return {
        ...base,
        store,
        loaders() {
          loaders ??= createConversationLoaders(store, base.requireTenant());
          return loaders;
        },
      };
    },
    async checkHealth() {
      await database.prisma.$queryRaw`SELECT 1`;
    },
  };
}
