/**
 * Credits: what paid provider calls cost each organization, against a monthly budget.
 *
 * Every call is reserved before it is sent and settled after, each in one transaction that
 * writes the call's record (external_calls) and its ledger row (credit_ledger) together, so the
 * two never disagree. The reservation runs under a transaction-scoped advisory lock per
 * organization and charges the estimate only if it fits in what is left of the month, so
 * concurrent calls cannot together spend past the budget by more than one call's estimate
 * beyond it (Perplexity's token price is known only after the call; it is settled exactly).
 * A failed call is settled at 0: vendors do not charge for them and neither do we. A call that
 * was never sent (breaker open, bulkhead full) is released: its rows are removed.
 */
import type { PrismaClient } from "../../generated/prisma/client.js";
import type { ExternalProvider } from "../../generated/prisma/enums.js";
import { withTenantScope } from "../../lib/database/tenant-scope.js";
import { badUserInput } from "../../lib/graphql/errors.js";
import type { TenantContext } from "../../lib/tenancy/token.js";

export type { ExternalProvider };

/** The budget of this UTC month would be overrun: the call must not be sent. */
export class CreditBudgetSpentError extends Error {
  constructor(
    readonly spent: number,
    readonly budget: number,
    readonly estimate: number,
  ) {
    super(`credit budget spent: ${formatCredits(spent)} of ${formatCredits(budget)} credits used this month, and this call would cost ${formatCredits(estimate)}`);
    this.name = "CreditBudgetSpentError";
  }
}

export interface Reservation {
  callId: string;
  estimate: number;
}

export interface CallSettlement {
  status: "OK" | "TIMEOUT" | "ERROR";
  results: number;
  /** What it really cost (0 for failures). */
  credits: number;
  latencyMs: number;
  error: string | null;
}

export interface CreditUsageRow {
  day: string;
  provider: ExternalProvider;
  calls: number;
  credits: number;
}

export interface CreditReportData {
  monthlyBudget: number | null;
  spentThisMonth: number;
  balance: number | null;
  usage: CreditUsageRow[];
}

/** Budgets stop below 10^10 credits: the column holds 14 digits, 3 of them decimals, and no real budget comes near. */
const MAX_BUDGET = 10_000_000_000;

export function formatCredits(value: number): string {
  return Number(value.toFixed(3)).toString();
}

/** Credits rounded as the ledger stores them (3 decimals). */
export function roundCredits(value: number): number {
  return Math.round(value * 1000) / 1000;
}

export class CreditLedger {
  constructor(
    private readonly prisma: PrismaClient,
    /** The budget of organizations without their own (credit_budgets); null: no cap. */
    private readonly defaultMonthlyBudget: number | null,
  ) {}

  /**
   * Charges `estimate` for a call about to be sent, or throws CreditBudgetSpentError when the
   * month's budget cannot take it. One transaction: lock, budget, spent, call row, ledger row.
   */
  async reserve(tenant: TenantContext, provider: ExternalProvider, operation: string, query: string, estimate: number): Promise<Reservation> {
    const organizationId = tenant.organizationId;
    return withTenantScope(this.prisma, organizationId, async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`credits:${organizationId}`}, 0))`;
      const budget = await this.budgetIn(tx, organizationId);
      if (budget !== null) {
        const spent = await this.spentIn(tx, organizationId);
        if (spent + estimate > budget + 1e-9) throw new CreditBudgetSpentError(spent, budget, estimate);
      }
      const call = await tx.externalCall.create({
        data: { organizationId, userId: tenant.userId, provider, operation, query: query.slice(0, 400), credits: roundCredits(estimate) },
        select: { id: true },
      });
      await tx.creditLedgerEntry.create({ data: { organizationId, callId: call.id, provider, credits: roundCredits(estimate) } });
      return { callId: call.id, estimate };
    });
  }

  /** Records how the call went and what it really cost, the call and its ledger row together. */
  async settle(tenant: TenantContext, reservation: Reservation, settlement: CallSettlement): Promise<void> {
    const credits = roundCredits(Math.max(0, settlement.credits));
    await withTenantScope(this.prisma, tenant.organizationId, async (tx) => {
      await tx.externalCall.update({
        where: { organizationId_id: { organizationId: tenant.organizationId, id: reservation.callId } },
        data: { status: settlement.status, results: settlement.results, credits, latencyMs: Math.round(settlement.latencyMs), error: settlement.error?.slice(0, 500) ?? null },
      });
      await tx.creditLedgerEntry.update({ where: { organizationId_callId: { organizationId: tenant.organizationId, callId: reservation.callId } }, data: { credits } });
    });
  }

  /** Forgets a reservation whose call was never sent (its ledger row goes with it). */
  async release(tenant: TenantContext, reservation: Reservation): Promise<void> {
    await withTenantScope(this.prisma, tenant.organizationId, (tx) => tx.externalCall.deleteMany({ where: { id: reservation.callId, organizationId: tenant.organizationId } }));
  }

  /** This month's budget and balance, and spending by UTC day and provider in [from, to). */
  async report(tenant: TenantContext, from: Date, to: Date): Promise<CreditReportData> {
    const organizationId = tenant.organizationId;
    return withTenantScope(this.prisma, organizationId, async (tx) => {
      const budget = await this.budgetIn(tx, organizationId);
      const spent = await this.spentIn(tx, organizationId);
      const rows = await tx.$queryRaw<{ day: string; provider: ExternalProvider; calls: bigint; credits: string }[]>`
        SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, provider, count(*) FILTER (WHERE credits > 0) AS calls, sum(credits)::text AS credits
        FROM credit_ledger
        WHERE organization_id = ${organizationId} AND created_at >= ${from} AND created_at < ${to}
        GROUP BY 1, 2
        HAVING sum(credits) > 0
        ORDER BY 1, 2`;
      return {
        monthlyBudget: budget,
        spentThisMonth: spent,
        balance: budget === null ? null : roundCredits(Math.max(0, budget - spent)),
        usage: rows.map((row) => ({ day: row.day, provider: row.provider, calls: Number(row.calls), credits: Number(row.credits) })),
      };
    });
  }

  /**
   * Sets an organization's own monthly budget (its admins: `setCreditBudget`; operators:
   * `npm run credits -- --budget`); null returns it to the default. BAD_USER_INPUT unless it is
   * a number of credits the ledger can hold exactly: finite, at least 0, below 10^10, at most 3
   * decimals. An admin may not set more than the operator's default budget when there is one:
   * that default is the operator's cap on what an organization spends of the platform's keys,
   * and only the operator lifts it.
   */
  async setBudget(organizationId: string, monthlyCredits: number | null, setBy: "operator" | "admin" = "operator"): Promise<void> {
    if (monthlyCredits !== null && !(Number.isFinite(monthlyCredits) && monthlyCredits >= 0 && monthlyCredits < MAX_BUDGET && roundCredits(monthlyCredits) === monthlyCredits)) {
      throw badUserInput("monthlyBudget", `must be a number of credits from 0 to ${MAX_BUDGET - 0.001} with at most 3 decimals, or null for the deployment's default (got ${monthlyCredits}).`);
    }
    if (setBy === "admin" && monthlyCredits !== null && this.defaultMonthlyBudget !== null && monthlyCredits > this.defaultMonthlyBudget) {
      throw badUserInput("monthlyBudget", `must be at most ${formatCredits(this.defaultMonthlyBudget)}, this deployment's budget per organization (CREDITS_MONTHLY_BUDGET); its operator can set a larger one (got ${monthlyCredits}).`);
    }
    await withTenantScope(this.prisma, organizationId, async (tx) => {
      if (monthlyCredits === null) await tx.creditBudget.deleteMany({ where: { organizationId } });
      else await tx.creditBudget.upsert({ where: { organizationId }, create: { organizationId, monthlyCredits }, update: { monthlyCredits } });
    });
  }

  // Private: the organization's budget this month (its own, or the default).
  private async budgetIn(tx: Pick<PrismaClient, "creditBudget">, organizationId: string): Promise<number | null> {
    const own = await tx.creditBudget.findUnique({ where: { organizationId }, select: { monthlyCredits: true } });
    return own ? Number(own.monthlyCredits) : this.defaultMonthlyBudget;
  }

  // Private: credits charged since the start of this UTC month (reservations in flight included).
  private async spentIn(tx: Pick<PrismaClient, "$queryRaw">, organizationId: string): Promise<number> {
    const [row] = await tx.$queryRaw<{ spent: string | null }[]>`
      SELECT sum(credits)::text AS spent FROM credit_ledger
      WHERE organization_id = ${organizationId} AND created_at >= date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'`;
    return Number(row?.spent ?? 0);
  }
}
