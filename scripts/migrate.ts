/** `npm run db:migrate`: applies pending migrations to the configured database and exits. */
import { loadConfig } from "../lib/config.js";
import { openDatabase } from "../lib/database/connect.js";
import { migrate } from "../lib/database/migrate.js";
import { runMain } from "../lib/shutdown.js";

runMain(async () => {
  // Migrations run on the primary only: a replica (DATABASE_READ_URL) gets them by WAL, so none is opened.
  const database = await openDatabase({ ...loadConfig().database, replica: null });
  try {
    const result = await migrate(database);
    process.stdout.write(
      `${database.location}: ${result.applied.length} migration(s) applied${result.applied.length ? ` (${result.applied.join(", ")})` : ""}, ` +
        `${result.alreadyApplied} already applied\n`,
    );
  } finally {
    await database.close();
  }
});
