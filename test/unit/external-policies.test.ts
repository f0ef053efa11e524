/**
 * The resilience policies around external API calls: breakers per (provider, organization)
 * that count only the vendor's failures, retries honouring Retry-After within the deadline, a
 * bulkhead per provider, and timeouts that abort the work's signal. Where the HTTP path matters,
 * work is boundedFetch against a local node:http server.
 *
 * Every time limit that decides an outcome runs on Jest's fake clock: time moves only when a test
 * says so, while the HTTP round trips stay real, so a loaded machine (a request that takes
 * seconds to arrive) cannot turn a deadline into a per-attempt timeout or a cancel into a
 * timeout. Tests on the real clock only wait for a Retry-After or a backoff, with limits far above
 * any round trip: load can only lengthen a wait, never shorten one.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from "@jest/globals";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { boundedFetch } from "../../lib/external-apis/bounded-fetch.js";
import { ExternalApiError } from "../../lib/external-apis/errors.js";
import { ProviderPolicies, ProviderSkippedError, jitteredBackoff, type ProviderPolicySettings } from "../../lib/external-apis/policies.js";
import { useFakeClock } from "../support/fake-clock.js";

/** A local HTTP server whose answer to each request is chosen by the test, recording when each arrived. */
class ScriptedServer {
  readonly arrivals: number[] = [];
  readonly closedEarly: string[] = [];
  private script: Array<(request: IncomingMessage, response: ServerResponse) => void> = [];
  private server!: Server;
  // Resolved by events, not by polling on a timer: under fake timers a timer never fires.
  private watchers: Array<() => void> = [];
  url = "";

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      this.arrivals.push(Date.now());
      response.on("close", () => {
        if (!response.writableFinished) this.closedEarly.push(request.url ?? "");
        this.notify();
      });
      this.notify();
      const next = this.script.length > 1 ? this.script.shift()! : this.script[0];
      if (next) next(request, response);
      else json(response, 200, { ok: true });
    });
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Answers in order; the last one repeats. */
  answer(...script: Array<(request: IncomingMessage, response: ServerResponse) => void>): void {
    this.script = script;
    this.arrivals.length = 0;
    this.closedEarly.length = 0;
  }

  /** Resolves once a request (since the last answer()) has reached the server. */
  requestArrived(): Promise<void> {
    return this.until(() => this.arrivals.length > 0);
  }

  /** Resolves once a request (since the last answer()) went away unanswered. */
  requestClosedEarly(): Promise<void> {
    return this.until(() => this.closedEarly.length > 0);
  }

  private until(condition: () => boolean): Promise<void> {
    return new Promise((resolve) => {
      const check = () => {
        if (!condition()) return;
        this.watchers = this.watchers.filter((watcher) => watcher !== check);
        resolve();
      };
      this.watchers.push(check);
      check();
    });
  }

  private notify(): void {
    for (const watcher of [...this.watchers]) watcher();
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

function json(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { "content-type": "application/json", ...headers });
  response.end(JSON.stringify(body));
}
const ok = (_request: IncomingMessage, response: ServerResponse) => json(response, 200, { organic: [{ title: "A result" }] });
const rateLimited = (retryAfter: string) => (_request: IncomingMessage, response: ServerResponse) =>
  json(response, 429, { message: "Too many requests" }, { "retry-after": retryAfter });
const failing = (_request: IncomingMessage, response: ServerResponse) => json(response, 500, { message: "internal" });
/** Never answers: the client has to give up. */
const hanging = () => undefined;

const server = new ScriptedServer();
beforeAll(() => server.start());
afterAll(() => server.stop());
afterEach(() => {
  jest.useRealTimers();
});

const advance = (ms: number) => jest.advanceTimersByTimeAsync(ms);

/** Work as a provider client does it: a bounded fetch of the stand-in, its JSON returned. */
function fetchSearch(signal: AbortSignal): Promise<unknown> {
  return boundedFetch(`${server.url}/search`, { method: "POST", body: "{}" }, { provider: "serper", signal }).then((response) => response.json());
}

const fast: Partial<ProviderPolicySettings> = {
  attemptTimeoutMs: 1_000,
  deadlineMs: 3_000,
  maxRetries: 0,
  initialBackoffMs: 5,
  maxBackoffMs: 20,
  minimumAttemptMs: 50,
  failuresToOpen: 3,
  halfOpenAfterMs: 150,
};

/** Limits no round trip reaches, loaded or not, for tests whose outcome is not a timeout. */
const roomy: Partial<ProviderPolicySettings> = { attemptTimeoutMs: 30_000, deadlineMs: 60_000 };

const vendorFailure = () => Promise.reject(new ExternalApiError("UPSTREAM_ERROR", "serper", "is failing (HTTP 500)", undefined, 500));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("circuit breaker per provider and organization", () => {
  it("opens after N vendor failures in a row, skips without calling work, and closes after one successful trial past its cool-down", async () => {
    useFakeClock();
    const policies = new ProviderPolicies({ defaults: { ...fast, halfOpenAfterMs: 30_000 } });
    for (let failure = 1; failure <= 3; failure += 1) {
      const outcome = await policies.settle("serper", "org-a", vendorFailure);
      expect(outcome).toMatchObject({ status: "ERROR", kind: "UPSTREAM_ERROR", attempts: 1 });
    }
    expect(policies.breakerState("serper", "org-a")).toMatchObject({ state: "open", consecutiveFailures: 3 });

    let called = 0;
    const skipped = await policies.settle("serper", "org-a", async () => {
      called += 1;
      return "answer";
    });
    expect(called).toBe(0);
    expect(skipped).toMatchObject({ status: "SKIPPED", skipCause: "BREAKER_OPEN" });
    if (skipped.status !== "SKIPPED") throw new Error("unreachable");
    expect(skipped.reason).toBe("serper skipped for organization org-a: 3 failures in a row (last: UPSTREAM_ERROR); next try in 30 s");
    await expect(policies.execute("serper", "org-a", async () => "answer")).rejects.toBeInstanceOf(ProviderSkippedError);

    await advance(29_999);
    expect(await policies.settle("serper", "org-a", async () => "answer")).toMatchObject({ status: "SKIPPED", skipCause: "BREAKER_OPEN" });
    await advance(1);
    const trial = await policies.settle("serper", "org-a", async () => {
      called += 1;
      return "answer";
    });
    expect(trial).toMatchObject({ status: "OK", value: "answer", attempts: 1 });
    expect(called).toBe(1);
    expect(policies.breakerState("serper", "org-a")).toEqual({ state: "closed", consecutiveFailures: 0 });
  });

  it("reopens when the trial call fails, for another full cool-down", async () => {
    useFakeClock();
    const policies = new ProviderPolicies({ defaults: fast });
    for (let failure = 0; failure < 3; failure += 1) await policies.settle("serper", "org-a", vendorFailure);
    await advance(150);
    expect(await policies.settle("serper", "org-a", vendorFailure)).toMatchObject({ status: "ERROR", attempts: 1 });
    const state = policies.breakerState("serper", "org-a");
    expect(state).toMatchObject({ state: "open", consecutiveFailures: 4 });
    expect(await policies.settle("serper", "org-a", async () => "answer")).toMatchObject({ status: "SKIPPED", skipCause: "BREAKER_OPEN" });
    await advance(149);
    expect(await policies.settle("serper", "org-a", async () => "answer")).toMatchObject({ status: "SKIPPED", skipCause: "BREAKER_OPEN" });
    await advance(1);
    expect(await policies.settle("serper", "org-a", async () => "answer")).toMatchObject({ status: "OK", value: "answer" });
  });

  it("is per organization and per provider: org B and another provider still call", async () => {
    const policies = new ProviderPolicies({ defaults: fast });
    for (let failure = 0; failure < 3; failure += 1) await policies.settle("serper", "org-a", vendorFailure);
    expect(await policies.settle("serper", "org-a", async () => "a")).toMatchObject({ status: "SKIPPED" });
    expect(await policies.settle("serper", "org-b", async () => "b")).toMatchObject({ status: "OK", value: "b" });
    expect(await policies.settle("dataforseo", "org-a", async () => "c")).toMatchObject({ status: "OK", value: "c" });
    expect(policies.breakerState("serper", "org-b").state).toBe("closed");
  });

  it("does not count the caller's configuration: UNAUTHORIZED and BAD_REQUEST never open it", async () => {
    const policies = new ProviderPolicies({ defaults: fast });
    let called = 0;
    for (let call = 0; call < 6; call += 1) {
      const kind = call % 2 === 0 ? "UNAUTHORIZED" : "BAD_REQUEST";
      const outcome = await policies.settle("serper", "org-a", async () => {
        called += 1;
        throw new ExternalApiError(kind, "serper", "refused", undefined, kind === "UNAUTHORIZED" ? 401 : 400);
      });
      expect(outcome).toMatchObject({ status: "ERROR", kind, attempts: 1 });
    }
    expect(called).toBe(6);
    expect(policies.breakerState("serper", "org-a")).toEqual({ state: "closed", consecutiveFailures: 0 });
  });

  it("keeps at most maxBreakers breakers, whatever organization ids arrive", async () => {
    const policies = new ProviderPolicies({ defaults: fast, maxBreakers: 3 });
    for (let organization = 0; organization < 50; organization += 1) await policies.settle("serper", `org-${organization}`, vendorFailure);
    expect(policies.breakerCount).toBe(3);
  });

  it("does not count a call the caller cancelled", async () => {
    // Time stands still: however long the request takes to arrive, the attempt cannot time out first.
    useFakeClock();
    const policies = new ProviderPolicies({ defaults: { ...fast, failuresToOpen: 1 } });
    server.answer(hanging);
    const caller = new AbortController();
    const pending = policies.settle("serper", "org-a", fetchSearch, { signal: caller.signal });
    await server.requestArrived();
    caller.abort();
    expect(await pending).toMatchObject({ status: "CANCELLED" });
    expect(policies.breakerState("serper", "org-a").state).toBe("closed");
  });
});

describe("retries", () => {
  it("waits for a 429's Retry-After and calls again (real HTTP through boundedFetch)", async () => {
    const policies = new ProviderPolicies({ defaults: { ...fast, ...roomy, maxRetries: 2 } });
    server.answer(rateLimited("1"), ok);
    const outcome = await policies.settle("serper", "org-a", fetchSearch);
    expect(outcome).toMatchObject({ status: "OK", value: { organic: [{ title: "A result" }] }, attempts: 2 });
    expect(server.arrivals).toHaveLength(2);
    // The backoff alone would have waited at most 20 ms: the second request came after the vendor's second.
    expect(server.arrivals[1]! - server.arrivals[0]!).toBeGreaterThanOrEqual(950);
  });

  it("fails at once as RATE_LIMITED when Retry-After is past the call's deadline", async () => {
    // On the fake clock nothing that waits on a timer ever ends: a call that slept on the
    // Retry-After (or ran into its 20 s deadline) would never settle; giving up at once does.
    useFakeClock();
    const policies = new ProviderPolicies({ defaults: { ...fast, maxRetries: 3, deadlineMs: 20_000 } });
    server.answer(rateLimited("30"), ok);
    const outcome = await policies.settle("serper", "org-a", fetchSearch);
    expect(outcome).toMatchObject({ status: "ERROR", kind: "RATE_LIMITED", attempts: 1 });
    if (outcome.status !== "ERROR") throw new Error("unreachable");
    expect(outcome.message).toBe("serper: asked us to wait 30 s before trying again (Retry-After), past this call's deadline");
    expect((outcome.error as ExternalApiError).retryAfterMs).toBe(30_000);
    expect(server.arrivals).toHaveLength(1);
  });

  it("retries a 500 with backoff and succeeds; never retries a 400", async () => {
    const policies = new ProviderPolicies({ defaults: { ...fast, ...roomy, maxRetries: 2 } });
    server.answer(failing, failing, ok);
    expect(await policies.settle("serper", "org-a", fetchSearch)).toMatchObject({ status: "OK", attempts: 3 });
    expect(server.arrivals).toHaveLength(3);

    server.answer((_request, response) => json(response, 400, { message: "bad query" }));
    expect(await policies.settle("serper", "org-a", fetchSearch)).toMatchObject({ status: "ERROR", kind: "BAD_REQUEST", attempts: 1 });
    expect(server.arrivals).toHaveLength(1);
  });

  it("counts one failed call (after its retries) as one failure towards the breaker", async () => {
    const policies = new ProviderPolicies({ defaults: { ...fast, ...roomy, maxRetries: 2 } });
    server.answer(failing);
    expect(await policies.settle("serper", "org-a", fetchSearch)).toMatchObject({ status: "ERROR", kind: "UPSTREAM_ERROR", attempts: 3 });
    expect(policies.breakerState("serper", "org-a")).toMatchObject({ state: "closed", consecutiveFailures: 1 });
  });

  it("backs off exponentially with jitter, bounded by maxBackoffMs", () => {
    const settings = { initialBackoffMs: 100, maxBackoffMs: 1_000 };
    expect(jitteredBackoff(1, settings, () => 0)).toBe(50);
    expect(jitteredBackoff(1, settings, () => 1)).toBe(100);
    expect(jitteredBackoff(3, settings, () => 0.5)).toBe(300);
    expect(jitteredBackoff(10, settings, () => 1)).toBe(1_000);
  });
});

describe("timeouts and the bulkhead", () => {
  it("cuts a hung call at the per-attempt timeout and aborts its signal (real HTTP)", async () => {
    useFakeClock();
    const policies = new ProviderPolicies({ defaults: { ...fast, attemptTimeoutMs: 150 } });
    server.answer(hanging);
    let given: AbortSignal | undefined;
    let settled = false;
    const pending = policies.settle("serper", "org-a", (signal) => {
      given = signal;
      return fetchSearch(signal);
    });
    void pending.then(() => (settled = true));
    await server.requestArrived();
    await advance(149);
    expect(settled).toBe(false);
    expect(given?.aborted).toBe(false);
    await advance(1);
    const outcome = await pending;
    expect(outcome).toMatchObject({ status: "TIMEOUT", attempts: 1 });
    if (outcome.status !== "TIMEOUT") throw new Error("unreachable");
    expect(outcome.message).toBe("serper: did not answer within 150 ms");
    expect(outcome.error.kind).toBe("TIMEOUT");
    expect(given?.aborted).toBe(true);
    // The abort reached the socket: the server saw the request go away unanswered.
    await server.requestClosedEarly();
    expect(server.closedEarly).toEqual(["/search"]);
    expect(policies.breakerState("serper", "org-a").consecutiveFailures).toBe(1);
  });

  it("cuts work that ignores its signal, too", async () => {
    useFakeClock();
    const policies = new ProviderPolicies({ defaults: { ...fast, attemptTimeoutMs: 100 } });
    const pending = policies.settle("serper", "org-a", () => new Promise<never>(() => undefined));
    await advance(100);
    const outcome = await pending;
    expect(outcome).toMatchObject({ status: "TIMEOUT", attempts: 1 });
    if (outcome.status !== "TIMEOUT") throw new Error("unreachable");
    expect(outcome.message).toBe("serper: did not answer within 100 ms");
  });

  it("stops retrying at the overall deadline", async () => {
    // On the fake clock: the first attempt times out at 200 ms with 100 ms of the deadline left,
    // enough for a second (minimumAttemptMs 50) after a backoff of at most 5 ms; the deadline cuts
    // that one at 300 ms, before its own 200 ms are up, and leaves no room for a third. On a
    // real clock a loaded machine moves these instants, and with them the outcome.
    useFakeClock();
    const policies = new ProviderPolicies({ defaults: { ...fast, attemptTimeoutMs: 200, deadlineMs: 300, maxRetries: 5 } });
    server.answer(hanging);
    const pending = policies.settle("serper", "org-a", fetchSearch);
    await advance(200);
    await advance(100);
    const outcome = await pending;
    expect(outcome.status).toBe("TIMEOUT");
    expect(outcome.attempts).toBe(2);
    if (outcome.status !== "TIMEOUT") throw new Error("unreachable");
    expect(outcome.message).toBe("serper: did not answer within this call's 300 ms deadline");
  });

  it("rejects calls beyond its capacity and queue while a slow call holds it, without calling their work", async () => {
    const policies = new ProviderPolicies({ defaults: { ...fast, concurrency: 1, queue: 1 } });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let calls = 0;
    const slow = async () => {
      calls += 1;
      await held;
      return "slow";
    };
    const first = policies.settle("serper", "org-a", slow);
    const queued = policies.settle("serper", "org-b", slow);
    await sleep(10);
    expect(policies.bulkheadState("serper")).toEqual({ executionSlots: 0, queueSlots: 0 });
    const rejected = await policies.settle("serper", "org-c", slow);
    expect(rejected).toMatchObject({ status: "SKIPPED", skipCause: "BULKHEAD_FULL" });
    if (rejected.status !== "SKIPPED") throw new Error("unreachable");
    expect(rejected.reason).toBe("serper skipped for organization org-c: 1 calls already in flight and 1 waiting");
    // Another provider has its own bulkhead.
    expect(await policies.settle("dataforseo", "org-c", async () => "other")).toMatchObject({ status: "OK" });
    release();
    expect(await first).toMatchObject({ status: "OK", value: "slow" });
    expect(await queued).toMatchObject({ status: "OK", value: "slow" });
    expect(calls).toBe(2);
    expect(policies.bulkheadState("serper")).toEqual({ executionSlots: 1, queueSlots: 1 });
  });

  it("refuses settings that cannot work, naming them", () => {
    const policies = new ProviderPolicies({ providers: { serper: { concurrency: 0 } } });
    expect(() => policies.settingsOf("serper")).toThrow("Resilience setting concurrency for provider serper must be an integer >= 1, got 0");
  });
});
