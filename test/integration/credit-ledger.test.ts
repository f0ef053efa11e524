/**
 * The credit ledger against a real database: concurrent reservations never spend past the
 * month's budget, settling writes the call and its ledger row together at the real price,
 * releasing forgets a call never sent, and one organization's spending is not another's.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import type { TenantContext } from "../../lib/tenancy/token.js";
import { CreditBudgetSpentError, CreditLedger } from "../../subgraphs/external-search/credit-ledger.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";

const tenant = (organizationId: string): TenantContext => ({ organizationId, userId: "u1", teamIds: [], role: "member" as const, userName: null, userEmail: null });
let db: TestDatabase;
let ledger: CreditLedger;

beforeAll(async () => {
  db = await createTestDatabase();
  ledger = new CreditLedger(db.database.prisma, null);
});
afterAll(async () => db?.dispose());

describe("credit ledger", () => {
  it("lets ten concurrent calls of 3 credits into a budget of 10 only three times", async () => {
    await ledger.setBudget("org-race", 10);
    const outcomes = await Promise.allSettled(Array.from({ length: 10 }, () => ledger.reserve(tenant("org-race"), "SERPER", "serp", "race", 3)));
    expect(outcomes.filter((outcome) => outcome.status === "fulfilled")).toHaveLength(3);
    const refused = outcomes.filter((outcome): outcome is PromiseRejectedResult => outcome.status === "rejected");
    expect(refused.every((outcome) => outcome.reason instanceof CreditBudgetSpentError)).toBe(true);
    expect((refused[0]!.reason as Error).message).toBe("credit budget spent: 9 of 10 credits used this month, and this call would cost 3");
    expect((await ledger.report(tenant("org-race"), new Date(Date.now() - 86_400_000), new Date(Date.now() + 60_000))).spentThisMonth).toBe(9);
  });

  it("settles at the real price, a failure at 0, and releases a call never sent", async () => {
    const org = tenant("org-settle");
    const ok = await ledger.reserve(org, "PERPLEXITY", "research", "q", 6);
    await ledger.settle(org, ok, { status: "OK", results: 4, credits: 7.25, latencyMs: 120, error: null });
    const failed = await ledger.reserve(org, "SERPER", "serp", "q", 3);
    await ledger.settle(org, failed, { status: "ERROR", results: 0, credits: 0, latencyMs: 30, error: "serper: is failing (HTTP 500)" });
    const never = await ledger.reserve(org, "DATAFORSEO", "web_search", "q", 3);
    await ledger.release(org, never);

    const calls = await db.database.prisma.externalCall.findMany({ where: { organizationId: "org-settle" }, include: { ledger: true }, orderBy: { createdAt: "asc" } });
    expect(calls.map((call) => [call.provider, call.status, Number(call.credits), Number(call.ledger!.credits)])).toEqual([
      ["PERPLEXITY", "OK", 7.25, 7.25],
      ["SERPER", "ERROR", 0, 0],
    ]);
    const report = await ledger.report(org, new Date(Date.now() - 86_400_000), new Date(Date.now() + 60_000));
    expect(report.spentThisMonth).toBe(7.25);
    expect(report.usage).toEqual([{ day: new Date().toISOString().slice(0, 10), provider: "PERPLEXITY", calls: 1, credits: 7.25 }]);
    // Another organization sees none of it.
    expect((await ledger.report(tenant("org-elsewhere"), new Date(Date.now() - 86_400_000), new Date(Date.now() + 60_000))).usage).toEqual([]);
  });

  it("without a budget nothing is refused, and the default budget applies to organizations without their own", async () => {
    const capped = new CreditLedger(db.database.prisma, 2);
    await expect(capped.reserve(tenant("org-default"), "SERPER", "serp", "q", 3)).rejects.toBeInstanceOf(CreditBudgetSpentError);
    await capped.setBudget("org-default", 100);
    await expect(capped.reserve(tenant("org-default"), "SERPER", "serp", "q", 3)).resolves.toMatchObject({ estimate: 3 });
    await expect(ledger.reserve(tenant("org-free"), "SERPER", "serp", "q", 1_000_000)).resolves.toMatchObject({ estimate: 1_000_000 });
  });

  it("lets an organization's admin lower the operator's default budget but not raise it; the operator may", async () => {
    const capped = new CreditLedger(db.database.prisma, 100);
    await expect(capped.setBudget("org-admin", 150, "admin")).rejects.toMatchObject({ extensions: { code: "BAD_USER_INPUT", field: "monthlyBudget" } });
    await expect(capped.setBudget("org-admin", 150, "admin")).rejects.toThrow(/at most 100, this deployment's budget per organization \(CREDITS_MONTHLY_BUDGET\)/);
    await capped.setBudget("org-admin", 40, "admin");
    expect((await capped.report(tenant("org-admin"), new Date(Date.now() - 60_000), new Date())).monthlyBudget).toBe(40);
    await capped.setBudget("org-admin", 150, "operator");
    expect((await capped.report(tenant("org-admin"), new Date(Date.now() - 60_000), new Date())).monthlyBudget).toBe(150);
    // Without a default there is no cap to keep: an admin may set any budget the ledger can hold.
    await ledger.setBudget("org-admin-free", 1_000_000, "admin");
    await expect(ledger.setBudget("org-admin-free", 1.0001, "admin")).rejects.toMatchObject({ extensions: { code: "BAD_USER_INPUT" } });
  });
});
