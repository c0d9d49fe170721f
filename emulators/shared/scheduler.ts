/**
 * The emulators' clock and scheduler. Every simulated activity (a participant signing, a candidate
 * answering, a webhook retry) is a task due at an emulated time, so tests never sleep: they move
 * the clock with `advance(ms)` and every task that fell due runs, in order. In a running emulator
 * (`autoRun`) a single timer fires the next due task. Delays of simulated activity are multiplied
 * by `timeScale` (0.01 turns a one-minute webhook retry into 0.6 s); absolute times (token
 * expiry, rate windows) are not scaled.
 */

export interface SchedulerOptions {
  /** Epoch ms of the underlying clock. Default `Date.now`. */
  now?: () => number;
  /** Multiplier for delays passed to `after`. Default 1. */
  timeScale?: number;
  /** Run due tasks on a timer (a running emulator). Default false: tasks run on `advance`/`runDue`. */
  autoRun?: boolean;
  /** Called with a task's error (a task never stops the scheduler). Default: ignored. */
  onError?: (error: unknown, label: string) => void;
}

export interface ScheduledTask {
  label: string;
  dueAt: number;
}

export interface Scheduler {
  /** Emulated epoch ms: the underlying clock plus everything `advance` added. */
  now(): number;
  /** Runs `task` after `delayMs` of emulated time, scaled by `timeScale`. */
  after(delayMs: number, label: string, task: () => unknown): void;
  /** Runs `task` at the emulated epoch ms `dueAt` (not scaled). */
  at(dueAt: number, label: string, task: () => unknown): void;
  /**
   * Moves emulated time forward by `ms`, running every task that falls due on the way at its own
   * time (so a task's follow-up scheduled within the span runs too); returns how many ran.
   */
  advance(ms: number): Promise<number>;
  /** Runs the tasks already due; returns how many ran. */
  runDue(): Promise<number>;
  /** Tasks waiting, earliest first. */
  pending(): ScheduledTask[];
  readonly timeScale: number;
  /** Drops every task and the timer. */
  close(): void;
}

interface Entry extends ScheduledTask {
  seq: number;
  run: () => unknown;
}

/** Bound on tasks run by one `runDue` (a task that keeps rescheduling itself at once cannot spin). */
const MAX_RUN = 10_000;

/** Creates a scheduler; see the module comment. */
export function createScheduler(options: SchedulerOptions = {}): Scheduler {
  const base = options.now ?? Date.now;
  const timeScale = options.timeScale ?? 1;
  let offset = 0;
  let seq = 0;
  let tasks: Entry[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running: Promise<number> | undefined;
  let closed = false;
  const now = () => base() + offset;

  const arm = () => {
    if (!options.autoRun || closed) return;
    if (timer) clearTimeout(timer);
    timer = undefined;
    const next = tasks[0];
    if (!next) return;
    timer = setTimeout(() => void runDue(), Math.max(0, Math.min(next.dueAt - now(), 2 ** 31 - 1)));
    (timer as { unref?: () => void }).unref?.();
  };

  const insert = (entry: Entry) => {
    tasks.push(entry);
    tasks.sort((a, b) => a.dueAt - b.dueAt || a.seq - b.seq);
    arm();
  };

  /** Runs due tasks in order; with `until`, moves the clock to each task's time up to `until`. */
  const drain = async (until?: number) => {
    let ran = 0;
    while (ran < MAX_RUN && !closed) {
      const next = tasks[0];
      const limit = Math.max(now(), until ?? Number.NEGATIVE_INFINITY);
      if (!next || next.dueAt > limit) break;
      if (next.dueAt > now()) offset += next.dueAt - now();
      tasks.shift();
      ran++;
      try {
        await next.run();
      } catch (error) {
        options.onError?.(error, next.label);
      }
    }
    return ran;
  };

  // One drain at a time: tasks of one emulated timeline never interleave.
  const runDue = (until?: number): Promise<number> => {
    const previous = running ?? Promise.resolve(0);
    const current = previous
      .then(() => drain(until))
      .then((ran) => {
        if (until !== undefined && until > now()) offset += until - now();
        return ran;
      })
      .finally(() => {
        if (running === current) running = undefined;
        arm();
      });
    running = current;
    return current;
  };

  return {
    now,
    timeScale,
    after(delayMs, label, run) {
      insert({ label, dueAt: now() + Math.max(0, delayMs) * timeScale, seq: seq++, run });
    },
    at(dueAt, label, run) {
      insert({ label, dueAt, seq: seq++, run });
    },
    advance: (ms) => runDue(now() + Math.max(0, ms)),
    runDue: () => runDue(),
    pending: () => tasks.map(({ label, dueAt }) => ({ label, dueAt })),
    close() {
      closed = true;
      tasks = [];
      if (timer) clearTimeout(timer);
    },
  };
}
