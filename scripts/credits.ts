/**
 * `npm run credits -- --org <id> [--budget <credits> | --default]`: an operator's view of one
 * organization's credits, and a way to set its monthly budget without a token (the
 * organization's admins set it with the `setCreditBudget` mutation; both go through
 * CreditLedger.setBudget and its bounds). Without --budget or --default it prints this month's
 * budget, spending and balance.
 */
import { parseArgs } from "node:util";
import { loadConfig } from "../lib/config.js";
import { openDatabase } from "../lib/database/connect.js";
import { migrate } from "../lib/database/migrate.js";
import { runMain } from "../lib/shutdown.js";
import { CreditLedger } from "../subgraphs/external-search/credit-ledger.js";

runMain(async () => {
  const { values } = parseArgs({ options: { org: { type: "string" }, budget: { type: "string" }, default: { type: "boolean", default: false } } });
  if (!values.org) throw new Error("--org <organization id> is required");
  if (values.budget !== undefined && !/^\d{1,10}(?:\.\d{1,3})?$/.test(values.budget)) throw new Error(`--budget must be a number of credits such as 500 or 12.5, got "${values.budget}"`);
  const config = loadConfig();
  const database = await openDatabase(config.database);
  try {
    await migrate(database);
    const ledger = new CreditLedger(database.prisma, config.externalSearch.defaultMonthlyBudget);
    if (values.budget !== undefined) await ledger.setBudget(values.org, Number(values.budget));
    else if (values.default) await ledger.setBudget(values.org, null);
    const now = new Date();
    const report = await ledger.report({ organizationId: values.org, userId: "operator", teamIds: [], role: "admin", userName: null, userEmail: null }, new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)), now);
    process.stdout.write(`${values.org}: budget ${report.monthlyBudget ?? "none (not capped)"}, spent this month ${report.spentThisMonth}, balance ${report.balance ?? "n/a"}\n`);
  } finally {
    await database.close();
  }
});
