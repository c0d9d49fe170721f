/**
 * The engine's only way to wait: a scheduler that runs a callback later. The system one uses
 * `setTimeout`; tests inject a manual one that fires timers as they move their clock, so retry
 * schedules, breakers and dead letters are tested without sleeping.
 */

export interface Scheduler {
  /** Runs `run` after `delayMs`; returns the function that cancels it. */
  setTimer(delayMs: number, run: () => void): () => void;
}

/** setTimeout cannot wait longer than this; longer waits wake early and re-check. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export const systemScheduler: Scheduler = {
  setTimer(delayMs, run) {
    const timer = setTimeout(run, Math.min(Math.max(0, delayMs), MAX_TIMER_MS));
    return () => clearTimeout(timer);
  },
};
