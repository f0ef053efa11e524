/**
 * `npm run token -- --org <id> --user <id> [--team <id> …] [--expires 12h]`: signs a bearer
 * token with JWT_SECRET for local development and scripts. Without flags: the demo user.
 */
import { parseArgs } from "node:util";
import { loadConfig } from "../lib/config.js";
import { DEMO_ORGANIZATION, DEMO_USERS } from "../lib/demo-data/organization.js";
import { runMain } from "../lib/shutdown.js";
import { signToken } from "../lib/tenancy/token.js";

runMain(async () => {
  const { values } = parseArgs({
    options: {
      org: { type: "string", default: DEMO_ORGANIZATION.id },
      user: { type: "string", default: DEMO_USERS[0].id },
      team: { type: "string", multiple: true, default: [] },
      expires: { type: "string", default: "12h" },
    },
  });
  const token = await signToken({ organizationId: values.org, userId: values.user, teamIds: values.team }, loadConfig().auth, values.expires);
  process.stdout.write(`${token}\n`);
});
