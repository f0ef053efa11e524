/**
 * A caller's deadline that passes when the vendor's stand-in has the request, not on a clock: a
 * call to a stand-in that hangs can then only end through this signal, so a TIMEOUT is the
 * deadline's doing, whatever the machine's load (a stopwatch would time the machine). The
 * reason is the one AbortSignal.timeout gives.
 */
export function deadlineOnceReceived(requests: readonly unknown[]): AbortSignal {
  const deadline = new AbortController();
  const check = () => (requests.length > 0 ? deadline.abort(new DOMException("The call's deadline passed", "TimeoutError")) : setImmediate(check));
  setImmediate(check);
  return deadline.signal;
}
