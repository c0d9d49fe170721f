/**
 * Whether the gateway can record right now, as its writes have found out
 * (docs/operations-and-metrics.md#health):
 * an event log append or an outbox write that the store refused marks it unable to record until a
 * later write succeeds. `/healthz` answers 503 "cannot record" meanwhile, so a load balancer
 * stops sending webhooks that would only get 503 and an operator is told the disk is full.
 *
 * A load balancer that drains 503 instances sends no webhook that could find out the disk has
 * space again, so recovery does not wait for traffic: while a kind of write with a probe is
 * failing, the probe (a small write of its own) runs every `probeIntervalMs`, and its first
 * success clears that kind (docs/operations-and-metrics.md#health).
 */

export interface WriteHealth {
  /** A write was refused (`what`: `journal`, `outbox`). */
  failed(what: string, at: number): void;
  /** A write of `what` succeeded. */
  succeeded(what: string): void;
  /** The writers currently failing and since when (epoch ms); empty when all is well. */
  failing(): { what: string; since: number }[];
  /** Stops probing (the gateway closes). */
  stop(): void;
}

/** Options of the tracker. */
export interface WriteHealthOptions {
  /** A harmless write per kind, tried while that kind fails; its success clears the kind. */
  probes?: Record<string, () => Promise<void>>;
  /** Between two probes, ms. Default 1000. */
  probeIntervalMs?: number;
}

/** Default pause between two probes of a failing write, ms. */
export const PROBE_INTERVAL_MS = 1000;

/**
 * Creates the tracker; it holds one entry per kind of write. `onChange` hears the transitions:
 * the first refused write (`failing` true) and the write that leaves none failing (false).
 */
export function createWriteHealth(
  onChange?: (failing: boolean, what: string, at: number) => void,
  options: WriteHealthOptions = {},
): WriteHealth {
  const since = new Map<string, number>();
  const probes = options.probes ?? {};
  const intervalMs = options.probeIntervalMs ?? PROBE_INTERVAL_MS;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;

  const probeSoon = () => {
    if (stopped || timer !== undefined) return;
    if (![...since.keys()].some((what) => probes[what])) return;
    timer = setTimeout(probeNow, intervalMs);
  };
  const probeNow = async () => {
    const probing = [...since.keys()].filter((what) => probes[what]);
    await Promise.all(
      probing.map(async (what) => {
        try {
          await (probes[what] as () => Promise<void>)();
          health.succeeded(what);
        } catch {
          // Still refused: the next probe tries again.
        }
      }),
    );
    timer = undefined;
    probeSoon();
  };

  const health: WriteHealth = {
    failed(what, at) {
      if (since.has(what)) return;
      since.set(what, at);
      if (since.size === 1) onChange?.(true, what, at);
      probeSoon();
    },
    succeeded(what) {
      if (!since.delete(what) || since.size > 0) return;
      onChange?.(false, what, Date.now());
    },
    failing: () => [...since].map(([what, at]) => ({ what, since: at })),
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
  return health;
}
