/**
 * Jest's fake clock for the tests whose outcome a time limit decides: timers and Date (and
 * `performance`) move only when the test advances them, while the event loop's own primitives
 * (process.nextTick, microtasks, setImmediate) stay real, so sockets, fetch and promises run as
 * usual. A deadline, a TTL or a backoff then means the same on a loaded machine as on a quiet
 * one. Pair with `jest.useRealTimers()` in an afterEach or a finally.
 */
import { jest } from "@jest/globals";

export function useFakeClock(): void {
  jest.useFakeTimers({ doNotFake: ["nextTick", "queueMicrotask", "setImmediate", "clearImmediate"] });
}
