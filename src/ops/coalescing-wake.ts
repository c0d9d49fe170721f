/**
 * The coalescing wake-up loop, written once for every part that drains a source when told to
 * (the route dispatcher, the lease poller, the shared live hub of src/stream/journal-hub.ts): a
 * wake-up while a drain runs is remembered, not queued, so any number of wake-ups during one drain
 * cost one more drain; a failed drain ends the loop (the next wake-up or poll tries again).
 */

export interface CoalescingWakeOptions {
  /** One drain of the source. */
  drain: () => Promise<void>;
  /** True once the owner has stopped: no drain starts and the loop ends. */
  stopped: () => boolean;
  /** A drain failed; the loop ends until the next wake-up. */
  onError: (error: unknown) => void;
  /** A drain succeeded. */
  onDrained?: () => void;
  /** Given each loop's promise (e.g. a work tracker that shutdown awaits). */
  track?: (loop: Promise<void>) => void;
}

export interface CoalescingWake {
  /** Starts a drain, or asks the running loop for one more. */
  wake(): void;
  /** Resolves when no loop runs. */
  idle(): Promise<void>;
}

/** Creates the loop; nothing runs until the first `wake`. */
export function createCoalescingWake(options: CoalescingWakeOptions): CoalescingWake {
  let running: Promise<void> | undefined;
  let again = false;
  return {
    wake() {
      if (options.stopped()) return;
      if (running) {
        again = true;
        return;
      }
      running = (async () => {
        do {
          again = false;
          try {
            await options.drain();
            options.onDrained?.();
          } catch (error) {
            options.onError(error);
            break;
          }
        } while (again && !options.stopped());
        running = undefined;
      })();
      options.track?.(running);
    },
    idle: async () => {
      await running;
    },
  };
}
