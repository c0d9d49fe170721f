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

/** Creates the tracker; it holds one entry per kind of write. */
export function createWriteHealth(): WriteHealth {
  const since = new Map<string, number>();
  return {
    failed(what, at) {
      if (!since.has(what)) since.set(what, at);
    },
    succeeded(what) {
      since.delete(what);
    },
    failing: () => [...since].map(([what, at]) => ({ what, since: at })),
  };
}
