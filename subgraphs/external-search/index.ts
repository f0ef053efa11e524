/**
 * The external-search subgraph: owns WebResult, SlackMessage, LinkedInOrganization and
 * LinkedInPost, and the operations over paid, rate-limited APIs: `webSearch` (Serper,
 * DataForSEO), `discoverQuestions` (Serper's people also ask and related searches), `research`
 * (Perplexity), `slackSearch` (the organization's Slack) and `linkedInOrganization` /
 * `linkedInPosts` (the organization's LinkedIn page, providers/linkedin.ts),
 * with credits, budgets and dry runs (`credits`, `externalProviders`). Its contract is
 * schema.graphql beside this file; its part in the unified search is ./search.ts.
 */
import fs from "node:fs";
import { parse } from "graphql";
import type { Config } from "../../lib/config.js";
import { besideModule } from "../../lib/project-files.js";
import type { Database } from "../../lib/database/connect.js";
import type { RequestContext, SubgraphDefinition } from "../../lib/graphql/subgraph-server.js";
import { silentLogger, type Logger } from "../../lib/logger.js";
import type DataLoader from "dataloader";
import { createResultLoader, resolvers, type ExternalSearchContext } from "./resolvers.js";
import type { StoredResult } from "./result-store.js";
import { createExternalSearchRuntime, type ExternalSearchRuntime } from "./runtime.js";

// The domain's one public module: its part in the unified search is offered from here too.
export { externalSearch, type ExternalSearchDomain } from "./search.js";

export const SCHEMA_PATH = besideModule("./schema.graphql", import.meta.url);

export interface ExternalSearchSubgraph extends SubgraphDefinition<ExternalSearchContext> {
  runtime: ExternalSearchRuntime;
}

export function externalSearchSubgraph({ database, config, logger = silentLogger }: { database: Database; config: Config; logger?: Logger }): ExternalSearchSubgraph {
  const runtime = createExternalSearchRuntime({ database, config, logger });
  return {
    name: "external-search",
    typeDefs: parse(fs.readFileSync(SCHEMA_PATH, "utf8")),
    resolvers,
    runtime,
    createContext(base: RequestContext): ExternalSearchContext {
      let loader: DataLoader<string, StoredResult | null> | null = null;
      return {
        ...base,
        service: runtime.service,
        credentials: runtime.credentials,
        ledger: runtime.ledger,
        policies: runtime.policies,
        canStoreSecrets: config.secrets.keyring !== null,
        resultById() {
          loader ??= createResultLoader(runtime.results, base.requireTenant());
          return loader;
        },
      };
    },
    async checkHealth() {
      await database.prisma.$queryRaw`SELECT 1`;
    },
    async stop() {
      await runtime.close();
    },
  };
}
