/**
 * The read session of one GraphQL request: who is calling, and whether the request has written.
 * Replica routing (replica-reads.ts) needs the caller's user for every read, and the read sits
 * several calls below the resolver (a search provider, a DataLoader batch, a vector store that is
 * given only an organization id); carrying it in AsyncLocalStorage keeps every one of those
 * signatures as it is. The subgraph server opens a session per request (lib/graphql/subgraph-server.ts)
 * and names the caller once the token is verified.
 *
 * Work outside any session (the indexer, scripts, tests that call a store directly) has no caller:
 * its reads go to the primary, which is always safe.
 */
import { AsyncLocalStorage } from "node:async_hooks";

export interface ReadCaller {
  organizationId: string;
  userId: string;
}

export interface ReadSession {
  /** Set once the request's token is verified; null for anonymous requests. */
  caller: ReadCaller | null;
  /** True once the request is a mutation: its own reads stay on the primary (read-after-write). */
  writing: boolean;
  /**
   * The primaries (by their Prisma client) a tenant scope ran on during this request: after a
   * mutation, each one's write position is recorded for the caller.
   */
  readonly scopedOn: Set<object>;
  /** Per-request memo of the routing decision, one per replica (one write-position lookup a request). */
  readonly routes: Map<object, Promise<boolean>>;
}

const sessions = new AsyncLocalStorage<ReadSession>();

/** Runs `work` in a fresh read session (one per request); `caller` may be named now or later. */
export function withReadSession<T>(caller: ReadCaller | null, work: (session: ReadSession) => Promise<T>): Promise<T> {
  const session: ReadSession = { caller, writing: false, scopedOn: new Set(), routes: new Map() };
  return sessions.run(session, () => work(session));
}

/** The session of the request this code runs for, if any. */
export function currentReadSession(): ReadSession | undefined {
  return sessions.getStore();
}

/** Notes that a tenant scope ran on this primary (tenant-scope.ts calls it; cheap when no session). */
export function noteScopeOn(primary: object): void {
  sessions.getStore()?.scopedOn.add(primary);
}

/**
 * A write made by a request that is not a mutation (a search storing the web results or
 * knowledge-base passages it retrieved, which the gateway then loads as entities in its next
 * call): the request's later reads stay on the primary and its write position is recorded for
 * the caller when it answers, as for a mutation, so those entity loads find the rows.
 */
export function noteWriteOutsideMutation(): void {
  const session = sessions.getStore();
  if (session) session.writing = true;
}
