/** `npm run db:seed [-- --conversations 300]`: migrates, then seeds the demo organization if it is empty. */
import { parseArgs } from "node:util";
import { seedDemoOrganization } from "../app/demo-seed.js";
import { loadConfig } from "../lib/config.js";
import { openDatabase } from "../lib/database/connect.js";
import { migrate } from "../lib/database/migrate.js";
import { DEMO_ORGANIZATION } from "../lib/demo-data/organization.js";
import { runMain } from "../lib/shutdown.js";

runMain(async () => {
  const { values } = parseArgs({ options: { conversations: { type: "string", default: "300" } } });
  const database = await openDatabase(loadConfig().database);
  try {
    await migrate(database);
    const result = await seedDemoOrganization(database, { conversations: Number(values.conversations) });
    process.stdout.write(
      result.seeded
        ? `Seeded ${DEMO_ORGANIZATION.id}: ${result.conversations} conversations, ${result.messages} messages, ${result.documents} documents\n`
        : `${DEMO_ORGANIZATION.id} already has ${result.conversations} conversations and ${result.documents} documents: nothing to do\n`,
    );
  } finally {
    await database.close();
  }
});
