/**
 * How every call to an API we do not control is run: ProviderPolicies.execute(provider,
 * organizationId, (signal) => work(signal)) passes the call through, from the outside in,
 *
 *   1. a bulkhead per provider: at most `concurrency` calls in flight and `queue` waiting, so one
 *      slow vendor cannot hold every socket and worker; beyond that the call is skipped. Each
 *      organization gets a share of it: at most `organizationShare` of its calls to a provider
 *      in flight or waiting, so one organization's hanging calls fill its own share and never
 *      the whole bulkhead, and another organization's call still goes out;
 *   2. a circuit breaker per (provider, organization): after `failuresToOpen` calls in a row
 *      that failed through the vendor's fault, the calls of that organization to that provider
 *      are skipped for `halfOpenAfterMs`, then one trial call decides (success closes it);
 *   3. retries of retryable kinds (TIMEOUT, RATE_LIMITED, UPSTREAM_ERROR) with exponential
 *      backoff and jitter, or exactly the vendor's Retry-After when it said one, never waiting
 *      past the call's deadline;
 *   4. a timeout per attempt, inside an overall deadline; both abort the signal given to work,
 *      and the call is cut there even if work ignores its signal.
 *
 * A call fails with ExternalApiError (TIMEOUT for either time limit), ProviderSkippedError (an
 * open breaker or a full bulkhead: nothing was sent) or CallCancelledError (the caller's own
 * signal went away). settle() returns the same as a typed ProviderOutcome, for the reports
 * that show each provider's status next to the results of the others.
 *
 * Bulkheads and breakers are per process, also when several instances run (issue 22), as in
 * Envoy (outlier detection per host, per proxy), Hystrix, resilience4j and Polly:
 * - a bulkhead bounds this process's own sockets, memory and waiting callers; shared, it would be
 *   a distributed semaphore whose slots a killed instance never gives back;
 * - a breaker judges the vendor by what this process sees (its network path, its egress address,
 *   which is what a vendor rate-limits), and keeps working with Redis down: a shared one would
 *   need a fallback for exactly the moments it matters, and a Redis round trip around every call;
 * - the cost of not sharing is bounded: with N instances a failing vendor gets up to
 *   N × `failuresToOpen` failing calls (each with its retries) before every instance's breaker
 *   for that organization is open, then N trial calls per `halfOpenAfterMs` instead of one (4
 *   instances, defaults: 20 failures to open, 4 trials every 30 s per provider and organization).
 * What must hold across instances is shared elsewhere: paid credits in the database
 * (subgraphs/external-search/credit-ledger.ts), cached answers in Redis (lib/cache/result-cache.ts).
 */
import {
  BrokenCircuitError,
  BulkheadRejectedError,
  CircuitState,
  ConsecutiveBreaker,
  DelegateBackoff,
  TaskCancelledError,
  TimeoutStrategy,
  bulkhead,
  circuitBreaker,
  handleWhen,
  retry,
  timeout,
  type BulkheadPolicy,
  type CircuitBreakerPolicy,
  type IRetryBackoffContext,
  type TimeoutPolicy,
} from "cockatiel";
import { LRUCache } from "lru-cache";
import { ExternalApiError, type ExternalFailureKind } from "./errors.js";

export interface ProviderPolicySettings {
  /** Time limit of one attempt, in ms. */
  attemptTimeoutMs: number;
  /** Time limit of the whole call (queueing, every attempt and every wait between them), in ms. */
  deadlineMs: number;
  /** Retries after the first attempt, on retryable kinds only. */
  maxRetries: number;
  /** First backoff between attempts, in ms; it doubles each retry (with jitter) up to maxBackoffMs. */
  initialBackoffMs: number;
  maxBackoffMs: number;
  /** A retry is only worth it with at least this much of the deadline left after its wait, in ms. */
  minimumAttemptMs: number;
  /** Consecutive vendor-fault failures that open an organization's breaker. */
  failuresToOpen: number;
  /** Cool-down of an open breaker before one trial call, in ms. */
  halfOpenAfterMs: number;
  /** Calls in flight at once to this provider, all organizations together. */
  concurrency: number;
  /** Calls that may wait for a slot; more are skipped at once. */
  queue: number;
  /** Calls of one organization in flight or waiting at once, within the above; more of its calls are skipped at once. */
  organizationShare: number;
}

export const DEFAULT_PROVIDER_POLICY: ProviderPolicySettings = {
  attemptTimeoutMs: 8_000,
  deadlineMs: 20_000,
  maxRetries: 2,
  initialBackoffMs: 250,
  maxBackoffMs: 5_000,
  minimumAttemptMs: 200,
  failuresToOpen: 5,
  halfOpenAfterMs: 30_000,
  concurrency: 8,
  queue: 16,
  organizationShare: 4,
};

export interface ProviderPoliciesOptions {
  /** Settings for every provider not named in `providers`. */
  defaults?: Partial<ProviderPolicySettings>;
  /** Per provider overrides (Perplexity's researched answers take far longer than a SERP). */
  providers?: Record<string, Partial<ProviderPolicySettings>>;
  /**
   * Most (provider, organization) breakers kept. The least recently used is forgotten beyond
   * that (an open one with it, which then starts closed): the memory stays bounded whatever
   * organization ids callers present.
   */
  maxBreakers?: number;
}

/** The failures that are the vendor's doing and so count towards opening a breaker. */
const VENDOR_FAULTS: ReadonlySet<ExternalFailureKind> = new Set(["TIMEOUT", "UPSTREAM_ERROR", "RATE_LIMITED", "BAD_RESPONSE", "TOO_LARGE"]);

/** Whether a failure counts towards an organization's breaker (UNAUTHORIZED and BAD_REQUEST are the caller's configuration). */
export function isVendorFault(error: unknown): boolean {
  return error instanceof ExternalApiError && VENDOR_FAULTS.has(error.kind);
}

export type SkipCause = "BREAKER_OPEN" | "BULKHEAD_FULL";

/** The call was not sent: the provider's breaker for this organization is open, or its bulkhead is full. */
export class ProviderSkippedError extends Error {
  constructor(
    readonly provider: string,
    readonly organizationId: string,
    readonly skipCause: SkipCause,
    /** One line for the provider report, e.g. "serper skipped for organization X: 5 failures in a row; next try in 27 s". */
    readonly reason: string,
    /** When an open breaker lets a trial call through. */
    readonly retryAt?: Date,
  ) {
    super(reason);
    this.name = "ProviderSkippedError";
  }
}

/** The caller's own signal aborted (the request went away): not the vendor's fault, not counted. */
export class CallCancelledError extends Error {
  constructor(readonly provider: string) {
    super(`${provider}: call cancelled by the caller`);
    this.name = "CallCancelledError";
  }
}

/** What one call came to, for a provider's status line. */
export type ProviderOutcome<T> =
  | { status: "OK"; value: T; attempts: number; elapsedMs: number }
  | { status: "SKIPPED"; skipCause: SkipCause; reason: string; retryAt?: Date; attempts: 0; elapsedMs: number }
  | { status: "TIMEOUT"; error: ExternalApiError; message: string; attempts: number; elapsedMs: number }
  | { status: "CANCELLED"; message: string; attempts: number; elapsedMs: number }
  /** `kind` INTERNAL: work threw something that is not an ExternalApiError (a bug of ours). */
  | { status: "ERROR"; kind: ExternalFailureKind | "INTERNAL"; error: Error; message: string; attempts: number; elapsedMs: number };

export interface BreakerSnapshot {
  state: "closed" | "open" | "half-open";
  /** Vendor-fault failures in a row so far. */
  consecutiveFailures: number;
  /** When it last opened, while open or half-open. */
  openedAt?: Date;
  /** When an open breaker lets a trial call through. */
  retryAt?: Date;
}

export interface CallOptions {
  /** The caller's signal (the GraphQL request going away). */
  signal?: AbortSignal;
}

interface OrganizationBreaker {
  policy: CircuitBreakerPolicy;
  counter: ConsecutiveBreaker;
  openedAt?: number;
  lastFailureKind?: ExternalFailureKind;
}

interface ProviderLane {
  settings: ProviderPolicySettings;
  bulkhead: BulkheadPolicy;
  /** Each organization's calls in flight or waiting; an organization is absent when it has none, so the map never outgrows the calls. */
  organizationCalls: Map<string, number>;
  attemptTimeout: TimeoutPolicy;
}

/** One per process: bulkheads and breakers only work when every call to a provider shares them. */
export class ProviderPolicies {
  private readonly lanes = new Map<string, ProviderLane>();
  private readonly breakers: LRUCache<string, OrganizationBreaker>;

  constructor(private readonly options: ProviderPoliciesOptions = {}) {
    this.breakers = new LRUCache({ max: options.maxBreakers ?? 10_000 });
  }

  /** The settings in force for a provider. */
  settingsOf(provider: string): ProviderPolicySettings {
    return this.lane(provider).settings;
  }

  /**
   * Runs work under the provider's policies; resolves to its value or rejects with
   * ExternalApiError, ProviderSkippedError or CallCancelledError.
   */
  async execute<T>(provider: string, organizationId: string, work: (signal: AbortSignal) => Promise<T>, options: CallOptions = {}): Promise<T> {
    return (await this.run(provider, organizationId, work, options)).value;
  }

  /** execute(), with every ending as a ProviderOutcome instead of a rejection. */
  async settle<T>(provider: string, organizationId: string, work: (signal: AbortSignal) => Promise<T>, options: CallOptions = {}): Promise<ProviderOutcome<T>> {
    const started = Date.now();
    const counts = { attempts: 0 };
    try {
      const { value, attempts } = await this.run(provider, organizationId, work, options, counts);
      return { status: "OK", value, attempts, elapsedMs: Date.now() - started };
    } catch (error) {
      const elapsedMs = Date.now() - started;
      const { attempts } = counts;
      if (error instanceof ProviderSkippedError) {
        return { status: "SKIPPED", skipCause: error.skipCause, reason: error.reason, retryAt: error.retryAt, attempts: 0, elapsedMs };
      }
      if (error instanceof CallCancelledError) return { status: "CANCELLED", message: error.message, attempts, elapsedMs };
      if (error instanceof ExternalApiError) {
        if (error.kind === "TIMEOUT") return { status: "TIMEOUT", error, message: error.message, attempts, elapsedMs };
        return { status: "ERROR", kind: error.kind, error, message: error.message, attempts, elapsedMs };
      }
      const internal = error instanceof Error ? error : new Error(String(error));
      return { status: "ERROR", kind: "INTERNAL", error: internal, message: `${provider}: ${internal.message}`, attempts, elapsedMs };
    }
  }

  /** The breaker of one (provider, organization), for tests and metrics; closed when never used. */
  breakerState(provider: string, organizationId: string): BreakerSnapshot {
    const breaker = this.breakers.peek(breakerKey(provider, organizationId));
    if (!breaker) return { state: "closed", consecutiveFailures: 0 };
    const state = breaker.policy.state;
    const consecutiveFailures = breaker.counter.state;
    if (state === CircuitState.Closed || breaker.openedAt === undefined) return { state: "closed", consecutiveFailures };
    const openedAt = new Date(breaker.openedAt);
    if (state === CircuitState.HalfOpen) return { state: "half-open", consecutiveFailures, openedAt };
    return { state: "open", consecutiveFailures, openedAt, retryAt: new Date(breaker.openedAt + this.settingsOf(provider).halfOpenAfterMs) };
  }

  /** Breakers held now (bounded by maxBreakers). */
  get breakerCount(): number {
    return this.breakers.size;
  }

  /** Free slots of a provider's bulkhead, for tests and metrics. */
  bulkheadState(provider: string): { executionSlots: number; queueSlots: number } {
    const { bulkhead } = this.lane(provider);
    return { executionSlots: bulkhead.executionSlots, queueSlots: bulkhead.queueSlots };
  }

  // Private: the pipeline. `counts` lets settle() report attempts of a call that failed.
  private async run<T>(
    provider: string,
    organizationId: string,
    work: (signal: AbortSignal) => Promise<T>,
    options: CallOptions,
    counts = { attempts: 0 },
  ): Promise<{ value: T; attempts: number }> {
    const lane = this.lane(provider);
    const { settings } = lane;
    const breaker = this.breaker(provider, organizationId);
    // An open breaker skips at once, without waiting in the bulkhead's queue for a slot.
    this.throwIfOpen(provider, organizationId, breaker);
    const release = this.takeOrganizationShare(provider, organizationId, lane);

    const deadline = new AbortController();
    const deadlineAt = Date.now() + settings.deadlineMs;
    const deadlineTimer = setTimeout(() => deadline.abort(), settings.deadlineMs);
    const callSignal = options.signal ? AbortSignal.any([deadline.signal, options.signal]) : deadline.signal;
    const failure = (error: unknown): Error => {
      if (options.signal?.aborted && !deadline.signal.aborted) return new CallCancelledError(provider);
      return asExternalError(error, provider, deadline.signal.aborted ? `did not answer within this call's ${settings.deadlineMs} ms deadline` : `did not answer within ${settings.attemptTimeoutMs} ms`);
    };

    const attempt = async (signal: AbortSignal): Promise<T> => {
      counts.attempts += 1;
      try {
        return await lane.attemptTimeout.execute((_context, attemptSignal) => work(attemptSignal), signal);
      } catch (error) {
        throw failure(error);
      }
    };

    // Per call, because whether a retry still fits depends on this call's deadline.
    let retryAfterPastDeadline: ExternalApiError | undefined;
    const retrying = retry(
      handleWhen((error) => {
        if (!(error instanceof ExternalApiError) || !error.retryable || callSignal.aborted) return false;
        const remaining = deadlineAt - Date.now();
        if ((error.retryAfterMs ?? 0) + settings.minimumAttemptMs > remaining) {
          if (error.retryAfterMs !== undefined) retryAfterPastDeadline = error;
          return false;
        }
        return true;
      }),
      {
        maxAttempts: settings.maxRetries,
        backoff: new DelegateBackoff((context: IRetryBackoffContext<unknown>) => {
          const error = "error" in context.result ? context.result.error : undefined;
          if (error instanceof ExternalApiError && error.retryAfterMs !== undefined) return error.retryAfterMs;
          const room = Math.max(0, deadlineAt - Date.now() - settings.minimumAttemptMs);
          return Math.min(room, jitteredBackoff(context.attempt, settings));
        }),
      },
    );

    let started = false;
    const pipeline: Promise<T> = lane.bulkhead.execute(() => {
      started = true;
      return breaker.policy.execute(async () => {
        try {
          return await retrying.execute(({ signal }) => attempt(signal), callSignal);
        } catch (error) {
          if (retryAfterPastDeadline && error === retryAfterPastDeadline) {
            const seconds = Math.ceil(retryAfterPastDeadline.retryAfterMs! / 1000);
            throw new ExternalApiError(
              retryAfterPastDeadline.kind,
              provider,
              `asked us to wait ${seconds} s before trying again (Retry-After), past this call's deadline`,
              retryAfterPastDeadline.retryAfterMs,
              retryAfterPastDeadline.httpStatus,
            );
          }
          throw error;
        }
      }, callSignal);
    }, callSignal);
    // The share is held until the call has really left the bulkhead, not when its caller stops waiting.
    pipeline.then(release, release);

    try {
      const value = await untilDeadlineWhileQueued(pipeline, callSignal, () => started);
      return { value, attempts: counts.attempts };
    } catch (error) {
      if (error instanceof BulkheadRejectedError) {
        throw new ProviderSkippedError(
          provider,
          organizationId,
          "BULKHEAD_FULL",
          `${provider} skipped for organization ${organizationId}: ${settings.concurrency} calls already in flight and ${settings.queue} waiting`,
        );
      }
      if (error instanceof BrokenCircuitError) this.throwIfOpen(provider, organizationId, breaker, true);
      if (error instanceof ExternalApiError || error instanceof CallCancelledError || error instanceof ProviderSkippedError) throw error;
      if (error instanceof TaskCancelledError || callSignal.aborted) throw failure(error);
      throw error;
    } finally {
      clearTimeout(deadlineTimer);
    }
  }

  // Private: one more call of this organization to this provider, or a skip when its share is
  // taken. Returns what gives the slot back.
  private takeOrganizationShare(provider: string, organizationId: string, lane: ProviderLane): () => void {
    const held = lane.organizationCalls.get(organizationId) ?? 0;
    if (held >= lane.settings.organizationShare) {
      throw new ProviderSkippedError(
        provider,
        organizationId,
        "BULKHEAD_FULL",
        `${provider} skipped for organization ${organizationId}: its share of ${lane.settings.organizationShare} calls is already in flight or waiting`,
      );
    }
    lane.organizationCalls.set(organizationId, held + 1);
    return () => {
      const left = (lane.organizationCalls.get(organizationId) ?? 1) - 1;
      if (left > 0) lane.organizationCalls.set(organizationId, left);
      else lane.organizationCalls.delete(organizationId);
    };
  }

  // Private: an open breaker whose cool-down has not passed skips the call. `force` when
  // cockatiel itself refused (a trial call in flight failed meanwhile).
  private throwIfOpen(provider: string, organizationId: string, breaker: OrganizationBreaker, force = false): void {
    const state = breaker.policy.state;
    if (!force && state !== CircuitState.Open) return;
    const openedAt = breaker.openedAt ?? Date.now();
    const retryAt = openedAt + this.settingsOf(provider).halfOpenAfterMs;
    if (!force && Date.now() >= retryAt) return;
    const inSeconds = Math.max(0, retryAt - Date.now()) / 1000;
    const wait = inSeconds >= 10 ? `${Math.ceil(inSeconds)} s` : `${inSeconds.toFixed(1)} s`;
    const last = breaker.lastFailureKind ? ` (last: ${breaker.lastFailureKind})` : "";
    throw new ProviderSkippedError(
      provider,
      organizationId,
      "BREAKER_OPEN",
      `${provider} skipped for organization ${organizationId}: ${breaker.counter.state} failures in a row${last}; next try in ${wait}`,
      new Date(retryAt),
    );
  }

  private lane(provider: string): ProviderLane {
    let lane = this.lanes.get(provider);
    if (!lane) {
      const settings = { ...DEFAULT_PROVIDER_POLICY, ...this.options.defaults, ...this.options.providers?.[provider] };
      validate(provider, settings);
      lane = {
        settings,
        bulkhead: bulkhead(settings.concurrency, settings.queue),
        organizationCalls: new Map(),
        // Aggressive: the call is cut at the limit even if work ignores its (aborted) signal.
        attemptTimeout: timeout(settings.attemptTimeoutMs, TimeoutStrategy.Aggressive),
      };
      this.lanes.set(provider, lane);
    }
    return lane;
  }

  private breaker(provider: string, organizationId: string): OrganizationBreaker {
    const key = breakerKey(provider, organizationId);
    let breaker = this.breakers.get(key);
    if (!breaker) {
      const counter = new ConsecutiveBreaker(this.settingsOf(provider).failuresToOpen);
      const policy = circuitBreaker(handleWhen(isVendorFault), { halfOpenAfter: this.settingsOf(provider).halfOpenAfterMs, breaker: counter });
      const created: OrganizationBreaker = { policy, counter };
      policy.onBreak(() => (created.openedAt = Date.now()));
      policy.onFailure(({ reason }) => {
        if ("error" in reason && reason.error instanceof ExternalApiError && isVendorFault(reason.error)) created.lastFailureKind = reason.error.kind;
      });
      breaker = created;
      this.breakers.set(key, breaker);
    }
    return breaker;
  }
}

// Private: the key of a breaker; NUL cannot occur in a provider name.
function breakerKey(provider: string, organizationId: string): string {
  return `${provider}\u0000${organizationId}`;
}

/** "Equal jitter": half the exponential delay fixed, half random, so retries of many callers spread out but never hammer at 0 ms. */
export function jitteredBackoff(retry: number, settings: Pick<ProviderPolicySettings, "initialBackoffMs" | "maxBackoffMs">, random = Math.random): number {
  const ceiling = Math.min(settings.maxBackoffMs, settings.initialBackoffMs * 2 ** Math.max(0, retry - 1));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

// Private: whatever an attempt threw, as the failure vocabulary (cockatiel's timeout error is a TIMEOUT).
function asExternalError(error: unknown, provider: string, timeoutMessage: string): Error {
  if (error instanceof ExternalApiError) {
    // boundedFetch says "did not answer in time" for any abort: say which limit it was.
    return error.kind === "TIMEOUT" && error.httpStatus === undefined ? new ExternalApiError("TIMEOUT", provider, timeoutMessage) : error;
  }
  if (error instanceof TaskCancelledError) return new ExternalApiError("TIMEOUT", provider, timeoutMessage);
  return error instanceof Error ? error : new Error(String(error));
}

// Private: a call waiting in the bulkhead's queue would only notice its deadline once a slot
// frees; reject at the deadline instead. A started call settles by itself (its attempt is cut
// by the same signal), so its breaker has counted the failure before the caller hears of it.
function untilDeadlineWhileQueued<T>(pipeline: Promise<T>, signal: AbortSignal, started: () => boolean): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      if (!started()) reject(new TaskCancelledError("deadline passed while waiting for a free slot"));
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
    pipeline.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

function validate(provider: string, settings: ProviderPolicySettings): void {
  for (const [name, value] of Object.entries(settings)) {
    const minimum = name === "maxRetries" || name === "queue" || name === "minimumAttemptMs" ? 0 : 1;
    if (!Number.isInteger(value) || value < minimum) {
      throw new RangeError(`Resilience setting ${name} for provider ${provider} must be an integer >= ${minimum}, got ${String(value)}`);
    }
  }
}
