/** The gateway's clock: epoch milliseconds, injectable so tests control time. */

export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
}

/** The runtime's clock (`Date.now`). */
export const systemClock: Clock = { now: () => Date.now() };
