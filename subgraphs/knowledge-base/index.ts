/**
 * The knowledge-base subgraph: owns Document, DocumentChunk, KnowledgeBase (on local, Bedrock
 * and S3 Vectors backends) and KnowledgeBasePassage (what search retrieved from the remote ones). Its contract is schema.graphql beside this file;
 * `knowledgeBaseSubgraph(dependencies)` is what `startSubgraph` serves. Its search providers are
 * offered to the unified search through ./search.ts.
 */
import fs from "node:fs";
import { parse } from "graphql";
import type { Config } from "../../lib/config.js";
import { besideModule } from "../../lib/project-files.js";
import type { Database } from "../../lib/database/connect.js";
import type { RequestContext, SubgraphDefinition } from "../../lib/graphql/subgraph-server.js";
import { silentLogger, type Logger } from "../../lib/logger.js";
import type { Embedder } from "../../lib/retrieval/embeddings/embedder.js";
import { resolveDefaultAlpha } from "../../lib/retrieval/embeddings/default-alpha.js";
import { createEmbedder } from "../../lib/retrieval/embeddings/index.js";
import { createVectorStore } from "../../lib/retrieval/vector-stores/index.js";
import { DocumentPassages } from "./document-passages.js";
import { DocumentStore } from "./document-store.js";
import { createKnowledgeBaseLoaders, type KnowledgeBaseLoaders } from "./knowledge-base-resolvers.js";
import { KnowledgeBaseStore } from "./knowledge-base-store.js";
import { KnowledgeQueries } from "./knowledge-queries.js";
import { configureDocumentParsing } from "../../lib/documents/extract-text.js";
import { KnowledgeQueryLog } from "./knowledge-query-log.js";
import { OrganizationSettingsStore } from "./organization-settings.js";
import { PassageStore } from "./passage-store.js";
import { remoteKnowledgeBasesFrom } from "./remote-knowledge-bases.js";
import { createDocumentLoaders, type DocumentLoaders } from "./loaders.js";
import { resolvers, type KnowledgeBaseContext } from "./resolvers.js";
import { documentSearch } from "./search.js";

// The domain's one public module: its part in the unified search and its ingestion entry point are offered from here too.
export { documentSearch, knowledgeBaseSearch, type ChunkPlace, type DocumentSearch, type KnowledgeBaseSearch } from "./search.js";
export { DocumentIngestion } from "./ingestion.js";
// The platform operator's command (scripts/platform-kb.ts) curates the platform's LOCAL knowledge bases through this.
export { PlatformKnowledge, type PlatformFile, type PlatformKnowledgeBaseListing } from "./platform-knowledge.js";

export const SCHEMA_PATH = besideModule("./schema.graphql", import.meta.url);

export interface KnowledgeBaseSubgraph extends SubgraphDefinition<KnowledgeBaseContext> {
  /** The knowledge query log (tests flush it). */
  knowledgeQueryLog: KnowledgeQueryLog;
}

export function knowledgeBaseSubgraph({ database, config, logger = silentLogger, embedder: sharedEmbedder }: { database: Database; config: Config; logger?: Logger; embedder?: Embedder | undefined }): KnowledgeBaseSubgraph {
  const documents = new DocumentStore(database.prisma, { backlogPerOrganization: config.knowledgeBase.backlogPerOrganization });
  const knowledgeBases = new KnowledgeBaseStore(database.prisma);
  const { maxUnpackedBytes, maxCompressionRatio, timeoutMs, ...parsing } = config.knowledgeBase.parsing;
  configureDocumentParsing({ ...parsing, limits: { maxBytes: config.knowledgeBase.maxDocumentBytes, maxUnpackedBytes, maxCompressionRatio, timeoutMs } });
  // Knowledge queries rank documents with the documents domain's own providers; the indexer
  // that search.ts also builds is never started here (the search subgraph runs it).
  const embedder = sharedEmbedder ?? createEmbedder(config.search, database);
  const vectorStore = createVectorStore(config.search, database);
  const { providers: documentProviders } = documentSearch({ database, embedder, vectorStore, logger: logger.child("knowledge-queries") });
  const log = new KnowledgeQueryLog(database, logger.child("knowledge-query-log"));
  const { remote, close: closeRemote } = remoteKnowledgeBasesFrom(config, knowledgeBases, embedder, logger.child("knowledge-queries"));
  const documentPassages = new DocumentPassages({ documents, providers: documentProviders, timeoutMs: config.search.providerTimeoutMs, defaultAlpha: resolveDefaultAlpha(embedder, config.search.defaultAlpha).alpha });
  const knowledge = new KnowledgeQueries({ knowledgeBases, documents: documentPassages, remote, log });
  const passages = new PassageStore(database.prisma);
  const organizationSettings = new OrganizationSettingsStore(database.prisma);
  return {
    name: "knowledge-base",
    typeDefs: parse(fs.readFileSync(SCHEMA_PATH, "utf8")),
    resolvers,
    createContext(base: RequestContext): KnowledgeBaseContext {
      let loaders: DocumentLoaders | null = null;
      let knowledgeBaseLoaders: KnowledgeBaseLoaders | null = null;
      return {
        ...base,
        documents,
        prisma: database.prisma,
        knowledgeBases,
        knowledge,
        organizationSettings,
        keyring: config.secrets.keyring,
        knowledgeBaseLoaders() {
          knowledgeBaseLoaders ??= createKnowledgeBaseLoaders(knowledgeBases, passages, base.requireTenant());
          return knowledgeBaseLoaders;
        },
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
    async stop() {
      await log.flush();
      closeRemote();
      await vectorStore.close?.();
    },
    knowledgeQueryLog: log,
  };
}
