/**
 * `npm run token -- --org <id> --user <id> [--team <id> …] [--role member|admin] [--expires 12h]`:
 * signs a bearer token with JWT_SECRET for local development and scripts. Without flags: the
 * demo user, as a member. `--help` prints the usage.
 */
import { parseArgs } from "node:util";
import { loadConfig } from "../lib/config.js";
import { DEMO_ORGANIZATION, DEMO_USERS } from "../lib/demo-data/organization.js";
import { runMain } from "../lib/shutdown.js";
import { ROLES, type Role } from "../lib/tenancy/roles.js";
import { signToken } from "../lib/tenancy/token.js";

const USAGE = `Usage: npm run token -- [--org <id>] [--user <id>] [--team <id> ...] [--role member|admin] [--expires 12h]
Signs a bearer token with JWT_SECRET (development and scripts). Defaults: the demo organization and user, no teams, role member, 12 hours.
  --role admin   may also change what the whole organization shares: company-wide knowledge bases, capability
                 mappings, the organization's AWS and web API keys, the credit budget and settings, and read its analytics.
  --role member  (the default) may work with their own conversations, documents and saved searches and query what is shared.
`;

runMain(async () => {
  const { values } = parseArgs({
    options: {
      org: { type: "string", default: DEMO_ORGANIZATION.id },
      user: { type: "string", default: DEMO_USERS[0].id },
      team: { type: "string", multiple: true, default: [] },
      role: { type: "string", default: "member" },
      expires: { type: "string", default: "12h" },
      help: { type: "boolean", default: false },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  if (!(ROLES as readonly string[]).includes(values.role)) throw new Error(`--role must be ${ROLES.join(" or ")}, got "${values.role}"`);
  const token = await signToken({ organizationId: values.org, userId: values.user, teamIds: values.team, role: values.role as Role }, loadConfig().auth, values.expires);
  process.stdout.write(`${token}\n`);
});
