/**
 * The delivery engine gives every attempt of one destination the same shutdown signal
 * (src/delivery/destination-lane.ts: one AbortController per lane, not per attempt), so each
 * attempt in flight holds one abort listener on it, up to the destination's `concurrency`
 * (at most 256). Node reports more than 10 listeners on one target as a possible leak; the Node
 * gateway lifts that limit on these signals (`DeliveryEngineOptions.onLaneSignal`). Transports
 * still remove their listener when an attempt ends.
 */
import { setMaxListeners } from "node:events";

/** Lets a lane's signal hold one abort listener per attempt in flight without a leak warning. */
export function allowListenerPerAttempt(signal: AbortSignal): void {
  setMaxListeners(0, signal);
}
