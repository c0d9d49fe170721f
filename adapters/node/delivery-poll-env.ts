/**
 * `GATEWAY_DELIVERY_POLL_MS`: the period of the delivery engine's safety-net polls (the route
 * dispatcher's event log poll and, on a shared outbox, the lease poller's claim poll). Deliveries
 * never wait for these polls: every append wakes the dispatcher and every new record goes to its
 * lane at once; the polls only recover a lost wake-up (a failed read, a message another instance
 * lost). Default 1000 ms; tests set an hour to prove nothing depends on them.
 */

export const DELIVERY_POLL_ENV = "GATEWAY_DELIVERY_POLL_MS";
const MIN_MS = 10;
const MAX_MS = 86_400_000;

/** The poll period from the environment, or undefined (the engine's default) when unset or empty. */
export function readDeliveryPollFromEnv(env: Record<string, string | undefined>): number | undefined {
  const value = env[DELIVERY_POLL_ENV];
  if (value === undefined || value === "") return undefined;
  const ms = /^\d{1,12}$/.test(value) ? Number(value) : Number.NaN;
  if (!(ms >= MIN_MS && ms <= MAX_MS)) {
    throw new Error(
      `${DELIVERY_POLL_ENV}: expected whole milliseconds from ${MIN_MS} to ${MAX_MS}, received "${value}"`,
    );
  }
  return ms;
}
