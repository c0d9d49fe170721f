/**
 * Whether the gateway can record right now, as its writes have found out (README "Operations"):
 * a journal append or an outbox write that the store refused marks it unable to record until a
 * later write succeeds. `/healthz` answers 503 "cannot record" meanwhile, so a load balancer
 * stops sending webhooks that would only get 503 and an operator is told the disk is full.
 */

export interface WriteHealth {
  /** A write was refused (`what`: `journal`, `outbox`). */
  failed(what: string, at: number): void;
  /** A write of `what` succeeded. */
  succeeded(what: string): void;
  /** The writers currently failing and since when (epoch ms); empty when all is well. */
  failing(): { what: string; since: number }[];
}

/**
 * Creates the tracker; it holds one entry per kind of write. `onChange` hears the transitions:
 * the first refused write (`failing` true) and the write that leaves none failing (false).
 */
export function createWriteHealth(onChange?: (failing: boolean, what: string, at: number) => void): WriteHealth {
  const since = new Map<string, number>();
  return {
    failed(what, at) {
      if (since.has(what)) return;
      since.set(what, at);
      if (since.size === 1) onChange?.(true, what, at);
    },
    succeeded(what) {
      if (!since.delete(what) || since.size > 0) return;
      onChange?.(false, what, Date.now());
    },
    failing: () => [...since].map(([what, at]) => ({ what, since: at })),
  };
}
