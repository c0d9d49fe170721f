/**
 * Transforms off the main thread on Node (docs/transformations.md "Where transforms run"): a
 * small pool of worker threads (transform-worker.ts), each running one call at a time on its own
 * QuickJS module. A call's deadline is `timeoutMs` + `slackMs` from the moment its worker starts
 * the module's top level, which runs before every call and shares the call's `timeoutMs` with the
 * default export (read from a shared clock, so loading QuickJS and compiling the module are not
 * counted); QuickJS's interrupt
 * ends ordinary loops at `timeoutMs`, and a call still running at the deadline (a built-in that
 * never checks the interrupt, a stuck allocation) is ended here: the worker is terminated and
 * replaced, and the call answers `{ ok: false }`. One worker more than `size` is kept warm as a
 * spare (at most `size` calls run at a time), so the call after a terminated one does not wait
 * for a new worker to start. Memory is bounded per worker: the V8 heap by
 * `resourceLimits`, each transform's QuickJS runtime by its `memoryLimitMb`. The event loop only
 * posts messages and arms a timer; it never waits on a transform. Calls go to workers that have
 * started and warmed up; until then they wait in the queue (a worker's start is not a call's time).
 */
import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import { timeoutMessage } from "../../src/transform/quickjs-sandbox.ts";
import type { TransformCall, TransformExecutor, TransformOutcome } from "../../src/transform/transform-contract.ts";
import type { PoolAnswer, PoolRequest } from "./transform-worker.ts";

export interface TransformPoolOptions {
  /** Worker threads. Default `defaultPoolSize()`. */
  size?: number;
  /** Milliseconds past `timeoutMs` before a call is ended from outside. Default 100. */
  slackMs?: number;
  /** V8 heap limit per worker, MiB. Default 64. */
  heapMb?: number;
  /** Time a ready worker may take to compile a module before the call starts, ms. Default 30 s. */
  startBudgetMs?: number;
  /** Time a new worker may take to start (load its code and QuickJS, warm up), ms. Default 120 s. */
  spawnBudgetMs?: number;
  /**
   * Transform modules each worker runs before its first call (the built-ins, so that their first
   * real call is not their slowest: transform-worker.ts). Default none (a generic warm-up only).
   */
  warmUpSources?: readonly string[];
}

/** The CPU count minus one (the main thread keeps a core), at least 1 and at most 4: 1 on 2 cores. */
export function defaultPoolSize(): number {
  return Math.min(4, Math.max(1, availableParallelism() - 1));
}

interface Pending {
  id: number;
  call: TransformCall;
  resolve: (outcome: TransformOutcome) => void;
}

interface Slot {
  worker: Worker;
  /**
   * Written by the worker: [0] when the call started (its module's top level), the deadline's
   * origin; [1] when its program, the default export, was called (names what overran); 0 otherwise.
   */
  clock: Float64Array;
  /** Module keys this worker was sent the source of. */
  known: Set<string>;
  busy?: { pending: Pending; dispatchedAt: number; timer: ReturnType<typeof setTimeout> };
  /** Set once the worker has loaded and warmed up (its first message); calls go to ready workers only. */
  ready: boolean;
  spawnTimer?: ReturnType<typeof setTimeout>;
  dead: boolean;
}

// Compiled (dist/, bin/compiled-sources.js): the worker's own JavaScript. As TypeScript: an entry
// that loads it, through tsx when this process passes no loader flag on to its workers.
const ENTRY = import.meta.url.endsWith(".js")
  ? new URL("./transform-worker.js", import.meta.url)
  : new URL("./transform-worker-entry.mjs", import.meta.url);

/** Creates the pool; workers start on the first call. */
export function createTransformPool(options: TransformPoolOptions = {}): TransformExecutor & {
  /** Workers alive now (tests, metrics). */
  size(): number;
  /** Calls this pool ended from outside (their worker terminated at the deadline) so far (tests, metrics). */
  endedFromOutside(): number;
  /** Starts the workers now rather than on the first call (a gateway with transforms configured). */
  start(): void;
} {
  const size = options.size ?? defaultPoolSize();
  const slackMs = options.slackMs ?? 100;
  const heapMb = options.heapMb ?? 64;
  const startBudgetMs = options.startBudgetMs ?? 30_000;
  const spawnBudgetMs = options.spawnBudgetMs ?? 120_000;
  const slots: Slot[] = [];
  const queue: Pending[] = [];
  let nextId = 1;
  let closed = false;
  let ended = 0;

  const spawn = (): Slot => {
    const shared = new SharedArrayBuffer(16);
    const worker = new Worker(ENTRY, {
      workerData: { clock: shared, warmUpSources: options.warmUpSources ?? [] },
      resourceLimits: { maxOldGenerationSizeMb: heapMb, maxYoungGenerationSizeMb: Math.max(4, heapMb >> 3) },
      stdout: false,
      stderr: false,
    });
    worker.unref();
    const slot: Slot = { worker, clock: new Float64Array(shared), known: new Set(), ready: false, dead: false };
    worker.on("message", (answer: PoolAnswer | { ready: true }) => {
      if ("ready" in answer) {
        slot.ready = true;
        clearTimeout(slot.spawnTimer);
        // The spare: a warm worker that takes over at once when one is ended.
        if (!closed && slots.length < size + 1) spawn();
        pump();
      } else onAnswer(slot, answer);
    });
    worker.on("error", (error) => retire(slot, `the transform's worker failed (${error.message})`));
    worker.on("exit", (code) => retire(slot, `the transform's worker stopped (exit code ${code})`));
    // A worker that cannot start (a broken install, a machine out of memory) fails the waiting
    // calls rather than leaving them queued for ever.
    slot.spawnTimer = setTimeout(() => {
      slot.worker.terminate().catch(() => {});
      retire(slot, `the transform's worker did not start within ${spawnBudgetMs} ms`);
    }, spawnBudgetMs);
    slot.spawnTimer.unref();
    slots.push(slot);
    return slot;
  };

  /** Removes a worker; its call (if any) fails with `why`; queued calls go to the others. */
  const retire = (slot: Slot, why: string) => {
    if (slot.dead) return;
    slot.dead = true;
    clearTimeout(slot.spawnTimer);
    slots.splice(slots.indexOf(slot), 1);
    const busy = slot.busy;
    slot.busy = undefined;
    if (busy) {
      clearTimeout(busy.timer);
      busy.pending.resolve({ ok: false, message: why, logs: [] });
    }
    // Died before it was ready: the calls waiting for it would wait for its successors, which
    // would likely fail the same way. They fail now; the next call tries a new worker.
    if (!slot.ready && !slots.some((s) => s.ready)) {
      for (const pending of queue.splice(0)) pending.resolve({ ok: false, message: why, logs: [] });
    }
    pump();
  };

  const finish = (slot: Slot, outcome: TransformOutcome) => {
    const busy = slot.busy;
    if (!busy) return;
    clearTimeout(busy.timer);
    slot.busy = undefined;
    busy.pending.resolve(outcome);
    pump();
  };

  const onAnswer = (slot: Slot, answer: PoolAnswer) => {
    const busy = slot.busy;
    if (!busy || busy.pending.id !== answer.id) return;
    if ("needSource" in answer) {
      slot.known.delete(busy.pending.call.key);
      send(slot, busy.pending);
      return;
    }
    finish(slot, answer.outcome);
  };

  /** Ends the call from outside: the worker is terminated (and replaced on the next dispatch). */
  const kill = (slot: Slot, message: string) => {
    const busy = slot.busy;
    if (!busy || slot.dead) return;
    slot.busy = undefined;
    slot.dead = true;
    slots.splice(slots.indexOf(slot), 1);
    slot.worker.terminate().catch(() => {});
    ended++;
    busy.pending.resolve({ ok: false, message, logs: [] });
    // A replacement (the spare, if ready, takes the next call meanwhile).
    if (!closed && slots.length < size + 1) spawn();
    pump();
  };

  const watch = (slot: Slot, pending: Pending): ReturnType<typeof setTimeout> => {
    const { timeoutMs } = pending.call.limits;
    const check = () => {
      const busy = slot.busy;
      if (!busy || busy.pending !== pending) return;
      const started = slot.clock[0] as number;
      const now = Date.now();
      if (started === 0) {
        // Not started: QuickJS still loading or the module compiling.
        if (now - busy.dispatchedAt > startBudgetMs) {
          kill(slot, `the transform did not start within ${startBudgetMs} ms`);
        } else busy.timer = setTimeout(check, timeoutMs + slackMs);
        return;
      }
      // One deadline from the start of the module's top level; the message names the part running.
      const due = started + timeoutMs + slackMs;
      if (now >= due) {
        const phase = (slot.clock[1] as number) !== 0 ? "program" : "top level";
        kill(slot, timeoutMessage(phase, pending.call.limits));
      } else busy.timer = setTimeout(check, due - now);
    };
    return setTimeout(check, timeoutMs + slackMs);
  };

  const send = (slot: Slot, pending: Pending) => {
    const { call } = pending;
    const withSource = !slot.known.has(call.key);
    slot.known.add(call.key);
    const request: PoolRequest = {
      id: pending.id,
      call: withSource
        ? call
        : { key: call.key, version: call.version, limits: call.limits, event: call.event, context: call.context },
    };
    slot.worker.postMessage(request);
  };

  const pump = () => {
    while (queue.length > 0 && !closed) {
      // At most `size` calls at a time; one more worker is kept warm as a spare.
      if (slots.filter((s) => s.busy).length >= size) return;
      const slot = slots.find((s) => s.ready && !s.busy && !s.dead);
      if (!slot) {
        if (slots.length < size + 1) spawn();
        return;
      }
      const pending = queue.shift() as Pending;
      slot.busy = { pending, dispatchedAt: Date.now(), timer: undefined as unknown as ReturnType<typeof setTimeout> };
      slot.busy.timer = watch(slot, pending);
      send(slot, pending);
    }
  };

  return {
    run(call) {
      if (closed) return Promise.resolve({ ok: false, message: "the gateway is stopping", logs: [] });
      return new Promise<TransformOutcome>((resolve) => {
        queue.push({ id: nextId++, call, resolve });
        pump();
      });
    },
    size: () => slots.length,
    endedFromOutside: () => ended,
    start() {
      if (!closed && slots.length === 0) spawn();
    },
    close() {
      closed = true;
      for (const pending of queue.splice(0))
        pending.resolve({ ok: false, message: "the gateway is stopping", logs: [] });
      for (const slot of [...slots]) {
        const busy = slot.busy;
        slot.busy = undefined;
        if (busy) {
          clearTimeout(busy.timer);
          busy.pending.resolve({ ok: false, message: "the gateway is stopping", logs: [] });
        }
        slot.dead = true;
        slot.worker.terminate().catch(() => {});
      }
      slots.length = 0;
    },
  };
}
