/**
 * One destination's delivery lane: its waiting records ordered by due time, its attempts in
 * flight (at most `concurrency`), its circuit breaker, rate limit and optional per-subject
 * ordering. Lanes share nothing, so a slow or failing destination never delays another.
 *
 * Every state change is written to the outbox; the lane's memory is only the schedule of what
 * the outbox already says (on restart the engine rebuilds lanes from `listActive`).
 */
import type { Logger } from "../ops/logger.ts";
import type { Metrics } from "../ops/metrics.ts";
import type { EventRecord, StoreDriver } from "../store/contract.ts";
import type { TraceSpan } from "../tracing/tracing-port.ts";
import { type CircuitBreaker, createCircuitBreaker } from "./circuit-breaker.ts";
import { createGauge } from "./delivery-metrics.ts";
import type { DeliveryPolicy } from "./delivery-policy.ts";
import type { AttemptTracer } from "./delivery-spans.ts";
import { createDueQueue } from "./due-queue.ts";
import type { LaneObserver } from "./lane-observer.ts";
import type { DeliveryRecord, DeliveryState, DestinationState } from "./outbox-contract.ts";
import { createRateLimiter } from "./rate-limiter.ts";
import { applyAttemptResult } from "./retry-schedule.ts";
import { type AttemptOutcome, runAttempt } from "./run-attempt.ts";
import type { Scheduler } from "./scheduler.ts";
import { ERASED_TEXT } from "./scrub-delivery.ts";
import type { Sink } from "./sink-contract.ts";
import { markStage } from "./stage-trace.ts";
import { createSubjectOrder } from "./subject-order.ts";

/**
 * How long an attempt runs before its "delivering" is written (`unwritten` in the lane): longer
 * than a healthy destination takes to answer, short enough that an operator watching a slow
 * attempt sees it as running.
 */
export const DELIVERING_WRITE_DELAY_MS = 200;

export interface LaneDeps {
  sink: Sink;
  policy: DeliveryPolicy;
  store: StoreDriver;
  clock: { now(): number };
  scheduler: Scheduler;
  random: () => number;
  metrics: Metrics;
  logger: Logger;
  /** Persists records (in call order); failures are logged by the caller's wrapper. */
  persist(records: DeliveryRecord[]): Promise<void>;
  persistDestination(state: DestinationState): Promise<void>;
  /** Turns the recorded event into the one delivered (enrichment); default as recorded. */
  prepare?(record: EventRecord, span?: TraceSpan): Promise<EventRecord>;
  /** Starts each attempt's span, when tracing is on (delivery-spans.ts). */
  traceAttempt?: AttemptTracer;
  /** Registers background work so the engine can wait for it (`settled`) and stop cleanly. */
  track(work: Promise<unknown>): void;
  /** Told the lane's shutdown signal, shared by all its attempts (DeliveryEngineOptions.onLaneSignal). */
  onSignal?: (signal: AbortSignal) => void;
  /** Told every attempt's outcome and every disable/resume (operational events). */
  observe?: LaneObserver;
  /**
   * Starts the lane held: it takes records but attempts nothing until `open()` (a reload replacing
   * a destination's lane waits for the old lane's attempts in flight, so subject order holds).
   */
  held?: boolean;
  /**
   * False when `eventId`'s lease may have ended (a shared outbox; lease-poller.ts `leaseHeld`):
   * its attempt waits, `leaseLapsed` is called, and `kick` goes on after the renewal.
   */
  leaseHeld?(eventId: string, now: number): boolean;
  leaseLapsed?(): void;
}

export interface LaneHealth {
  id: string;
  state: "active" | "paused" | "disabled";
  reason?: string;
  breaker: { state: CircuitBreaker["state"]; consecutiveFailures: number; probeAt?: number };
  waiting: number;
  inflight: number;
  lastError?: { at: number; error: string };
  lastSuccessAt?: number;
}

export type DestinationLane = ReturnType<typeof createDestinationLane>;

/** Creates the lane of `destinationId`, paused or disabled as its saved state says. */
export function createDestinationLane(destinationId: string, deps: LaneDeps, saved?: DestinationState) {
  const { policy, clock, scheduler } = deps;
  const breaker = createCircuitBreaker({ failures: policy.breakerFailures, cooldownMs: policy.breakerCooldownMs });
  const limiter = policy.rateLimitPerSecond ? createRateLimiter(policy.rateLimitPerSecond) : undefined;
  const due = createDueQueue();
  const order = createSubjectOrder(policy.ordering === "subject");
  const waiting = new Map<string, DeliveryRecord>();
  const inflight = new Set<string>();
  // One controller for the lane: only shutdown aborts attempts, and it aborts all of them.
  const lifetime = new AbortController();
  deps.onSignal?.(lifetime.signal);
  const labels = { destination: destinationId };
  // Label sets built once per lane, not per attempt.
  const attemptLabels = {
    success: { ...labels, outcome: "success" },
    failure: { ...labels, outcome: "failure" },
  };
  const finalLabels = {
    delivered: { ...labels, outcome: "delivered" },
    dead: { ...labels, outcome: "dead" },
    skipped: { ...labels, outcome: "skipped" },
  };
  const backlog = createGauge(deps.metrics, "gateway_delivery_backlog", labels);
  const breakerGauge = createGauge(deps.metrics, "gateway_destination_breaker_open", labels);
  let paused = saved?.paused ?? false;
  let disabled = saved?.disabled ?? false;
  let reason = saved?.reason;
  let stopped = false;
  let held = deps.held ?? false;
  /** Set once retired by a reload: where records that will be retried go (none: they stay in the outbox). */
  let retired: { handOff?: (record: DeliveryRecord) => void } | undefined;
  const idleWaiters: (() => void)[] = [];
  let wake: { at: number; cancel: () => void } | undefined;
  let lastError: LaneHealth["lastError"];
  let lastSuccessAt: number | undefined;

  const holding = () => paused || disabled;
  /** The state a waiting record shows: paused while the lane is, else by its history. */
  const waitingState = (record: DeliveryRecord): DeliveryState =>
    holding() ? "paused" : record.failures > 0 ? "failed-retrying" : "pending";

  const queueIfHead = (record: DeliveryRecord) => {
    if (order.isHead(record)) due.push(record.eventId, record.nextAttemptAt, record.seq);
  };

  const scheduleWake = (at: number) => {
    if (wake && wake.at <= at) return;
    wake?.cancel();
    const cancel = scheduler.setTimer(at - clock.now(), () => {
      wake = undefined;
      pump();
    });
    wake = { at, cancel };
  };

  const pump = () => {
    if (stopped || held || holding()) return;
    const now = clock.now();
    while (inflight.size < policy.concurrency) {
      const top = due.peek();
      if (!top) break;
      const record = waiting.get(top.key);
      if (!record || !order.isHead(record)) {
        due.pop();
        continue;
      }
      if (top.at > now) {
        scheduleWake(top.at);
        break;
      }
      if (deps.leaseHeld && !deps.leaseHeld(record.eventId, now)) {
        deps.leaseLapsed?.();
        break;
      }
      if (!breaker.canAttempt(now)) {
        if (breaker.state === "open") scheduleWake(breaker.probeAt ?? now);
        break;
      }
      if (limiter && !limiter.take(now)) {
        scheduleWake(limiter.nextAt(now));
        break;
      }
      due.pop();
      breaker.onAttempt(now);
      attempt(record, now);
    }
    updateGauges();
  };

  const updateGauges = () => {
    backlog(waiting.size + inflight.size);
    breakerGauge(breaker.state === "closed" ? 0 : 1);
  };

  /**
   * Attempts whose "delivering" is not written yet, in start order. It is written only for an
   * attempt still running `DELIVERING_WRITE_DELAY_MS` after it started: an attempt that ends
   * sooner (nearly all of them) writes its outcome alone, one outbox write per attempt instead of
   * two. Either way a crash in the middle leaves the record due (pending, retrying or
   * delivering), so it is attempted again on restart; only the admin views see "delivering" late.
   * Each "delivering" record's `updatedAt` is its attempt's start.
   */
  const unwritten = new Map<string, DeliveryRecord>();
  let cancelUnwritten: (() => void) | undefined;
  const armUnwritten = () => {
    if (cancelUnwritten) return;
    const first = unwritten.values().next().value;
    if (!first) return;
    cancelUnwritten = scheduler.setTimer(Math.max(0, first.updatedAt + DELIVERING_WRITE_DELAY_MS - clock.now()), () => {
      cancelUnwritten = undefined;
      const now = clock.now();
      const overdue: DeliveryRecord[] = [];
      for (const [key, record] of unwritten) {
        if (record.updatedAt + DELIVERING_WRITE_DELAY_MS > now) break;
        overdue.push(record);
        unwritten.delete(key);
      }
      if (overdue.length > 0) deps.track(deps.persist(overdue));
      armUnwritten();
    });
  };
  /** The attempt of `eventId` ended: its "delivering" needs no write any more. */
  const ended = (eventId: string) => {
    if (!unwritten.delete(eventId) || unwritten.size > 0) return;
    cancelUnwritten?.();
    cancelUnwritten = undefined;
  };

  const attempt = (record: DeliveryRecord, now: number) => {
    markStage("attempt", record.receivedAt);
    waiting.delete(record.eventId);
    inflight.add(record.eventId);
    const delivering: DeliveryRecord = { ...record, state: "delivering", updatedAt: now };
    // Not written now (see `unwritten`), and never awaited: if the process dies first, the
    // record is still due in the outbox and is simply attempted again.
    unwritten.set(record.eventId, delivering);
    armUnwritten();
    deps.track(run(delivering, now));
  };

  const run = async (record: DeliveryRecord, at: number) => {
    const outcome = await runAttempt(deps.store, deps.sink, record.eventId, at, lifetime.signal, deps.prepare, {
      // Attempts so far are the failures since creation or replay: this is number failures + 1.
      attempt: record.failures + 1,
      tracer: deps.traceAttempt,
    });
    inflight.delete(record.eventId);
    ended(record.eventId);
    // An attempt cut short by shutdown is not an outcome: the outbox still says what it said
    // before (or "delivering", when that was written) and the next start attempts it again.
    if (!(stopped && lifetime.signal.aborted)) await finish(record, outcome);
    if (inflight.size === 0) for (const resolve of idleWaiters.splice(0)) resolve();
  };

  const finish = async (
    record: DeliveryRecord,
    { result, attempt: attemptLog, latencyMs, sourceId }: AttemptOutcome,
  ) => {
    const now = clock.now();
    const applied = applyAttemptResult(record, result, attemptLog, policy, now, deps.random());
    let next = applied.record;
    deps.metrics.inc("gateway_delivery_attempts_total", result.ok ? attemptLabels.success : attemptLabels.failure);
    deps.metrics.observe("gateway_delivery_attempt_seconds", latencyMs, labels);
    if (result.ok) {
      breaker.onSuccess();
      lastSuccessAt = now;
    } else {
      lastError = { at: now, error: attemptLog.error as string };
      // A refusal of our own (SSRF guard, bad recipient) says nothing about the destination's health.
      if (!result.permanent) breaker.onFailure(now);
    }
    deps.observe?.({
      kind: "attempt",
      destination: destinationId,
      eventId: record.eventId,
      sourceId,
      ok: result.ok,
      outcome: applied.outcome,
      error: attemptLog.error,
      ...(result.status === undefined ? {} : { status: result.status }),
      breaker: breaker.state,
      at: now,
    });
    if (applied.outcome !== "retry") {
      deps.metrics.inc("gateway_deliveries_total", finalLabels[applied.outcome]);
      order.remove(record);
    } else if (retired) {
      // Retired by a reload: the record waits in the outbox, or in the lane that replaced this one.
      order.remove(record);
      next = { ...next, state: waitingState(next) };
      deps.track(deps.persist([next]));
      retired.handOff?.(next);
      return;
    } else {
      next = { ...next, state: waitingState(next) };
      waiting.set(next.eventId, next);
      queueIfHead(next);
    }
    if (result.disableDestination) await disable(`the destination answered ${result.status ?? 410}: gone`);
    // The slot is free as soon as the outcome is queued for the outbox (writes keep their order);
    // waiting for the sync here would cap a lane at one attempt per fsync and slot.
    deps.track(deps.persist([next]));
    if (applied.outcome !== "retry") {
      const head = order.headOf(record.subject);
      const waitingHead = head && waiting.get(head);
      if (waitingHead) queueIfHead(waitingHead);
    }
    pump();
  };

  /** Re-labels every waiting record (paused or not) and persists the change. */
  const relabelWaiting = async () => {
    const now = clock.now();
    const changed: DeliveryRecord[] = [];
    for (const [key, record] of waiting) {
      const state = waitingState(record);
      if (state === record.state) continue;
      const next = { ...record, state, updatedAt: now };
      waiting.set(key, next);
      changed.push(next);
    }
    if (changed.length > 0) await deps.persist(changed);
  };

  const saveState = () =>
    deps.persistDestination({ id: destinationId, paused, disabled, reason, updatedAt: clock.now() });

  const disable = async (why: string) => {
    disabled = true;
    reason = why;
    wake?.cancel();
    wake = undefined;
    deps.logger.error("destination disabled", { destination: destinationId, reason: why });
    deps.observe?.({ kind: "state", destination: destinationId, state: "disabled", reason: why, at: clock.now() });
    await saveState();
    await relabelWaiting();
  };

  return {
    id: destinationId,
    /** The state a record created now should start in. */
    initialState: (): DeliveryState => (holding() ? "paused" : "pending"),
    /** Takes a new, recovered or replayed record (not terminal) into the schedule. */
    add(record: DeliveryRecord) {
      if (inflight.has(record.eventId)) return;
      // Retired while its own replacement was still held (two reloads in a row): pass it on.
      if (retired) return retired.handOff?.(record);
      waiting.set(record.eventId, record);
      order.add(record);
      queueIfHead(record);
      pump();
    },
    /** Makes a waiting record due now (replay of a delivery that is still retrying). */
    expedite(eventId: string) {
      const record = waiting.get(eventId);
      if (!record) return;
      const now = clock.now();
      const next = { ...record, nextAttemptAt: now, updatedAt: now };
      waiting.set(eventId, next);
      queueIfHead(next);
      deps.track(deps.persist([next]));
      pump();
    },
    /** True while the record is waiting or in flight here. */
    holds: (eventId: string) => waiting.has(eventId) || inflight.has(eventId),
    async pause() {
      paused = true;
      wake?.cancel();
      wake = undefined;
      await saveState();
      await relabelWaiting();
    },
    async resume() {
      if (disabled) deps.observe?.({ kind: "state", destination: destinationId, state: "active", at: clock.now() });
      paused = false;
      disabled = false;
      reason = undefined;
      breaker.reset();
      await saveState();
      await relabelWaiting();
      pump();
    },
    /** Attempts what is due (after a lease renewal let a held-back attempt go). */
    kick: () => pump(),
    /** Event ids waiting or in flight here: the leases a shared outbox renews. */
    heldIds: (): string[] => [...waiting.keys(), ...inflight.keys()],
    /** Drops a waiting record whose lease went to another instance (shared outbox). */
    forget(eventId: string) {
      const record = waiting.get(eventId);
      if (!record) return;
      waiting.delete(eventId);
      order.remove(record);
      const head = order.headOf(record.subject);
      const waitingHead = head && waiting.get(head);
      if (waitingHead) queueIfHead(waitingHead);
      updateGauges();
    },
    /** Takes over a pause, resume or disable made on another instance (shared outbox). */
    async applySaved(state: DestinationState) {
      if (state.paused === paused && state.disabled === disabled) return;
      paused = state.paused;
      disabled = state.disabled;
      reason = state.reason;
      if (!holding()) breaker.reset();
      wake?.cancel();
      wake = undefined;
      await relabelWaiting();
      pump();
    },
    health(): LaneHealth {
      return {
        id: destinationId,
        state: disabled ? "disabled" : paused ? "paused" : "active",
        reason,
        breaker: { state: breaker.state, consecutiveFailures: breaker.consecutiveFailures, probeAt: breaker.probeAt },
        waiting: waiting.size,
        inflight: inflight.size,
        lastError,
        lastSuccessAt,
      };
    },
    /** Lets a lane created `held` start attempting. */
    open() {
      held = false;
      pump();
    },
    /**
     * Retires the lane (its destination was removed or replaced by a reload): nothing more is
     * attempted, attempts in flight finish and record their outcome. Returns the records that were
     * waiting; those an attempt in flight leaves to retry go to `handOff` (none: they stay in
     * the outbox, as the waiting ones do unless the caller hands them on).
     */
    retire(handOff?: (record: DeliveryRecord) => void): DeliveryRecord[] {
      stopped = true;
      retired = { handOff };
      wake?.cancel();
      wake = undefined;
      const left = [...waiting.values()];
      waiting.clear();
      backlog(0);
      breakerGauge(0);
      return left;
    },
    /** Resolves once no attempt of this lane is in flight. */
    idle: (): Promise<void> =>
      inflight.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => idleWaiters.push(resolve)),
    /** Forgets the last error when it is one of `texts` (texts of erased events). */
    forgetError(texts: ReadonlySet<string>) {
      if (lastError && texts.has(lastError.error)) lastError = { at: lastError.at, error: ERASED_TEXT };
    },
    /** Stops scheduling new attempts (shutdown). */
    halt() {
      stopped = true;
      wake?.cancel();
      wake = undefined;
    },
    /** Aborts the attempts in flight; their records stay due in the outbox and are retried on restart. */
    abortInflight() {
      lifetime.abort(new Error("gateway shutting down"));
    },
  };
}
