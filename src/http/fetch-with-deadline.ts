/**
 * One `fetch` with a deadline and the caller's abort signal, the way every outbound call of a
 * sink makes it (the `http` transport on Workers, the `http-email` mail transport): the deadline
 * and the caller's signal both abort the request, and the outcome says which one did, so each
 * caller maps it to its own failure names. Never rejects.
 */

export type DeadlineFetchOutcome =
  | { ok: true; response: Response }
  /** `timeout`: no answer within the deadline; `aborted`: the caller's signal; `error`: the network. */
  | { ok: false; failure: "timeout" | "aborted" | "error"; error?: unknown };

/** Fetches `url` with `init`, aborted after `timeoutMs` or when `signal` aborts. */
export async function fetchWithDeadline(
  url: string,
  init: Omit<RequestInit, "signal">,
  { signal, timeoutMs }: { signal: AbortSignal; timeoutMs: number },
): Promise<DeadlineFetchOutcome> {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  const onAbort = () => controller.abort();
  if (signal.aborted) controller.abort();
  else signal.addEventListener("abort", onAbort, { once: true });
  try {
    return { ok: true, response: await fetch(url, { ...init, signal: controller.signal }) };
  } catch (error) {
    if (timedOut) return { ok: false, failure: "timeout" };
    if (signal.aborted) return { ok: false, failure: "aborted" };
    return { ok: false, failure: "error", error };
  } finally {
    clearTimeout(timer);
    signal.removeEventListener("abort", onAbort);
  }
}
