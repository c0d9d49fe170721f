/**
 * The delivery engine's scheduler inside a Durable Object (src/delivery/scheduler.ts): timers
 * run from `setTimeout` while the object is in memory, and the object's one alarm is kept at the
 * earliest pending timer, so that an object evicted between attempts is woken in time. When the
 * alarm fires, the object starts its engine again (which re-creates every timer from the outbox)
 * and calls `runDue`.
 */
import type { Scheduler } from "../../src/delivery/scheduler.ts";
import type { DurableObjectStorage } from "./cloudflare-types.ts";

const MAX_TIMER_MS = 2 ** 31 - 1;

export interface AlarmScheduler extends Scheduler {
  /** Runs every timer due at `now` (the alarm fired), then re-arms the alarm. */
  runDue(now: number): void;
  /** Timers pending (tests and health). */
  readonly pending: number;
}

interface Timer {
  due: number;
  run: () => void;
  handle: ReturnType<typeof setTimeout>;
}

/** Creates the scheduler of one object; `now` is the clock (default `Date.now`). */
export function createAlarmScheduler(storage: DurableObjectStorage, now: () => number = Date.now): AlarmScheduler {
  const timers = new Set<Timer>();
  /** The alarm time this scheduler last set (undefined: none or already fired). */
  let armed: number | undefined;

  const arm = () => {
    let earliest = Number.POSITIVE_INFINITY;
    for (const timer of timers) earliest = Math.min(earliest, timer.due);
    if (!Number.isFinite(earliest)) return;
    // Only an earlier time needs a write; a later alarm that finds nothing due re-arms itself.
    if (armed !== undefined && armed <= earliest) return;
    armed = earliest;
    storage.setAlarm(earliest).catch(() => {
      armed = undefined;
    });
  };

  const fire = (timer: Timer) => {
    if (!timers.delete(timer)) return;
    clearTimeout(timer.handle);
    timer.run();
  };

  return {
    setTimer(delayMs, run) {
      const delay = Math.min(Math.max(0, delayMs), MAX_TIMER_MS);
      const timer: Timer = { due: now() + delay, run, handle: undefined as never };
      timer.handle = setTimeout(() => fire(timer), delay);
      timers.add(timer);
      arm();
      return () => {
        clearTimeout(timer.handle);
        timers.delete(timer);
      };
    },
    runDue(at) {
      armed = undefined;
      for (const timer of [...timers]) if (timer.due <= at) fire(timer);
      arm();
    },
    get pending() {
      return timers.size;
    },
  };
}
