/**
 * `npm run search:reindex [-- --all]`: after changing the embedding model (EMBEDDER,
 * OPENAI_EMBEDDING_MODEL, …), queues every conversation that has no vectors of the configured
 * model yet (or all of them with --all) and embeds them here, with a progress bar. Vectors of
 * the old model are left in place until you delete them: searches never compare across models,
 * so they do no harm, and switching back is instant.
 */
import { parseArgs } from "node:util";
import { loadConfig } from "../lib/config.js";
import { openDatabase } from "../lib/database/connect.js";
import { migrate } from "../lib/database/migrate.js";
import { createLogger } from "../lib/logger.js";
import { progressBar } from "../lib/progress.js";
import { runMain } from "../lib/shutdown.js";
import { searchSubgraph } from "../subgraphs/search/index.js";
import { enqueueMissing } from "../subgraphs/conversations/search/conversation-indexer.js";

runMain(async () => {
  const { values } = parseArgs({ options: { all: { type: "boolean", default: false } } });
  const config = loadConfig({ ...process.env, SEARCH_INDEXER: "false" });
  const logger = createLogger("reindex", config.logLevel);
  const database = await openDatabase(config.database);
  const search = await searchSubgraph({ database, config, logger });
  try {
    await migrate(database);
    await search.start?.();
    const model = search.embedder.model;
    const queued = values.all
      ? await database.prisma.$executeRaw`
          INSERT INTO search_index_jobs (conversation_id, organization_id)
          SELECT id, organization_id FROM conversations WHERE deleted_at IS NULL
          ON CONFLICT (organization_id, conversation_id) DO UPDATE SET run_after = clock_timestamp(), attempts = 0, unfinished_attempts = 0, last_error = NULL`
      : await enqueueMissing(database, model);
    const total = await database.prisma.searchIndexJob.count();
    process.stderr.write(`${model}: queued ${queued} conversation(s); ${total} waiting in all\n`);
    const bar = progressBar(`embedding with ${model}`, total);
    const done = await search.indexer.drain((count) => bar.update(count));
    const failing = await database.prisma.searchIndexJob.count({ where: { lastError: { not: null } } });
    bar.finish(`${done} conversation(s)${failing ? `, ${failing} failing (see searchIndexStatus.lastError)` : ""}`);
  } finally {
    await search.stop?.();
    await database.close();
  }
});
