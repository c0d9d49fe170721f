/**
 * Counts the engine's background work (routing, attempts, outbox writes) so shutdown can wait
 * for it and tests driven by a manual clock can wait until everything started has finished.
 */

export interface WorkTracker {
  /** Registers a promise; its rejection is reported, never thrown. */
  track(work: Promise<unknown>): void;
  /** Resolves once nothing tracked is running (work started meanwhile is waited for too). */
  idle(): Promise<void>;
}

/** Creates a tracker; `onError` receives rejections of tracked work. */
export function createWorkTracker(onError: (error: unknown) => void): WorkTracker {
  let running = 0;
  let waiters: (() => void)[] = [];
  // Made once per tracker, not per tracked promise (three per delivery attempt).
  const settled = () => {
    running--;
    if (running === 0) {
      const ready = waiters;
      waiters = [];
      for (const resolve of ready) resolve();
    }
  };
  const failed = (error: unknown) => {
    try {
      onError(error);
    } finally {
      settled();
    }
  };
  return {
    track(work) {
      running++;
      work.then(settled, failed);
    },
    async idle() {
      // Loop: finishing work may start more (an outcome write, the next attempt).
      while (running > 0) await new Promise<void>((resolve) => waiters.push(resolve));
    },
  };
}
