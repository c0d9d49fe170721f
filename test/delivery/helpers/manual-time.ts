/**
 * A manual clock and scheduler for the delivery engine: time moves only when the test says so,
 * and timers due on the way fire in order, each followed by `settle` (the engine finishing what
 * the timer started). Retry schedules of hours run in milliseconds, with no sleeps.
 */
import type { Scheduler } from "../../../src/delivery/scheduler.ts";

interface Timer {
  at: number;
  order: number;
  run: () => void;
}

export interface ManualTime {
  clock: { now(): number };
  scheduler: Scheduler;
  /** Moves time forward by `ms`, firing due timers in order and settling after each. */
  advance(ms: number): Promise<void>;
  /** Pending timers (for assertions about what is scheduled). */
  pending(): number[];
}

/** Creates manual time starting at `start` (default: now, so signatures stay verifiable). */
export function createManualTime(settle: () => Promise<void>, start = Date.now()): ManualTime {
  let now = start;
  let order = 0;
  const timers: Timer[] = [];
  return {
    clock: { now: () => now },
    scheduler: {
      setTimer(delayMs, run) {
        const timer = { at: now + Math.max(0, delayMs), order: order++, run };
        timers.push(timer);
        return () => {
          const at = timers.indexOf(timer);
          if (at !== -1) timers.splice(at, 1);
        };
      },
    },
    async advance(ms) {
      const target = now + ms;
      await settle();
      for (let guard = 0; guard < 100_000; guard++) {
        timers.sort((a, b) => a.at - b.at || a.order - b.order);
        const next = timers[0];
        if (!next || next.at > target) break;
        timers.shift();
        now = Math.max(now, next.at);
        next.run();
        await settle();
      }
      now = target;
      await settle();
    },
    pending: () => timers.map((t) => t.at - now).sort((a, b) => a - b),
  };
}
