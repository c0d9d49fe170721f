/**
 * The delivery engine hands every attempt of one destination the same shutdown signal
 * (src/delivery/destination-lane.ts: one AbortController per lane, not per attempt), so each
 * attempt in flight holds one abort listener on it: up to the destination's `concurrency`.
 * Node reports more than 10 listeners on one target as a possible leak; the transports that
 * listen lift that limit once per signal. Listeners are still removed after every attempt.
 */
import { setMaxListeners } from "node:events";

const lifted = new WeakSet<AbortSignal>();

/** Lets `signal` hold as many abort listeners as attempts are in flight, without a leak warning. */
export function allowListenerPerAttempt(signal: AbortSignal): void {
  if (lifted.has(signal)) return;
  lifted.add(signal);
  setMaxListeners(0, signal);
}
