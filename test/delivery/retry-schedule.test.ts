/**
 * The pure parts of the engine: retry delays with jitter and Retry-After, the outcome of one
 * attempt, the breaker's state machine, the rate limiter, the due queue and subject ordering.
 */
import { describe, expect, it } from "vitest";
import { createCircuitBreaker } from "../../src/delivery/circuit-breaker.ts";
import { DEFAULT_RETRY_SCHEDULE_SECONDS, resolveDeliveryPolicy } from "../../src/delivery/delivery-policy.ts";
import { createDueQueue } from "../../src/delivery/due-queue.ts";
import type { DeliveryRecord } from "../../src/delivery/outbox-contract.ts";
import { createRateLimiter } from "../../src/delivery/rate-limiter.ts";
import { applyAttemptResult, MAX_RETRY_AFTER_MS, retryDelayMs } from "../../src/delivery/retry-schedule.ts";
import { createSubjectOrder } from "../../src/delivery/subject-order.ts";
import { parseRetryAfter } from "../../src/http/parse-retry-after.ts";

const policy = resolveDeliveryPolicy({});

const record: DeliveryRecord = {
  eventId: "evt_1",
  destinationId: "a",
  seq: 1,
  receivedAt: 0,
  createdAt: 0,
  updatedAt: 0,
  state: "pending",
  nextAttemptAt: 0,
  failures: 0,
  attempts: [],
};

describe("retry delays", () => {
  it("defaults to about a day: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h", () => {
    expect(DEFAULT_RETRY_SCHEDULE_SECONDS).toEqual([5, 300, 1800, 7200, 18_000, 36_000, 36_000]);
    const total = DEFAULT_RETRY_SCHEDULE_SECONDS.reduce((a, b) => a + b, 0);
    expect(total / 3600).toBeGreaterThan(24);
    expect(total / 3600).toBeLessThan(30);
    expect(DEFAULT_RETRY_SCHEDULE_SECONDS.map((_, i) => retryDelayMs(policy, i + 1, 0.5))).toEqual(
      DEFAULT_RETRY_SCHEDULE_SECONDS.map((s) => s * 1000),
    );
    expect(retryDelayMs(policy, 8, 0.5)).toBeUndefined();
  });

  it("spreads each wait by ± the jitter fraction", () => {
    expect(retryDelayMs(policy, 2, 0)).toBe(240_000);
    expect(retryDelayMs(policy, 2, 0.999_999)).toBe(360_000);
    expect(retryDelayMs({ retrySchedule: [10], jitter: 0 }, 1, 0)).toBe(10_000);
  });

  it("waits at least as long as Retry-After asks, capped at a day", () => {
    expect(retryDelayMs(policy, 1, 0.5, 60_000)).toBe(60_000);
    expect(retryDelayMs(policy, 1, 0.5, 1_000)).toBe(5_000);
    expect(retryDelayMs(policy, 1, 0.5, 10 * MAX_RETRY_AFTER_MS)).toBe(MAX_RETRY_AFTER_MS);
    expect(parseRetryAfter("120", 0)).toBe(120_000);
    expect(parseRetryAfter("Thu, 01 Jan 1970 00:01:00 GMT", 0)).toBe(60_000);
    expect(parseRetryAfter("Thu, 01 Jan 1970 00:01:00 GMT", 120_000)).toBe(0);
    expect(parseRetryAfter("soon", 0)).toBeUndefined();
    expect(parseRetryAfter("-5", 0)).toBeUndefined();
  });
});

describe("one attempt's outcome", () => {
  const attempt = { at: 100, ok: false, status: 503, latencyMs: 3, error: "HTTP 503" };

  it("success delivers, failure schedules the next retry, exhaustion and permanent failures are dead", () => {
    expect(
      applyAttemptResult(record, { ok: true, status: 200 }, { ...attempt, ok: true }, policy, 100, 0.5),
    ).toMatchObject({
      outcome: "delivered",
      record: { state: "delivered", attempts: [{ ok: true }] },
    });
    expect(applyAttemptResult(record, { ok: false, status: 503 }, attempt, policy, 100, 0.5)).toMatchObject({
      outcome: "retry",
      record: { state: "failed-retrying", failures: 1, nextAttemptAt: 5100, lastError: "HTTP 503" },
    });
    const last = { ...record, failures: 7 };
    expect(applyAttemptResult(last, { ok: false }, attempt, policy, 100, 0.5).record.state).toBe("dead");
    expect(applyAttemptResult(record, { ok: false, permanent: true }, attempt, policy, 100, 0.5).outcome).toBe("dead");
    expect(applyAttemptResult(record, { ok: false, disableDestination: true }, attempt, policy, 100, 0.5).outcome).toBe(
      "dead",
    );
  });

  it("keeps at most the last 50 attempts", () => {
    const many = { ...record, attempts: Array.from({ length: 50 }, (_, i) => ({ ...attempt, at: i })) };
    const { record: next } = applyAttemptResult(many, { ok: false }, { ...attempt, at: 999 }, policy, 100, 0.5);
    expect(next.attempts).toHaveLength(50);
    expect(next.attempts[0]?.at).toBe(1);
    expect(next.attempts[49]?.at).toBe(999);
  });
});

describe("circuit breaker", () => {
  it("closed → open after N failures → one half-open probe → closed or open for twice as long", () => {
    const breaker = createCircuitBreaker({ failures: 2, cooldownMs: 1000 });
    breaker.onFailure(0);
    expect(breaker.state).toBe("closed");
    breaker.onFailure(0);
    expect(breaker).toMatchObject({ state: "open", probeAt: 1000 });
    expect(breaker.canAttempt(999)).toBe(false);
    expect(breaker.canAttempt(1000)).toBe(true);
    breaker.onAttempt(1000);
    expect(breaker.state).toBe("half-open");
    expect(breaker.canAttempt(1000)).toBe(false);
    breaker.onFailure(1500);
    expect(breaker).toMatchObject({ state: "open", probeAt: 3500 });
    breaker.onAttempt(3500);
    breaker.onSuccess();
    expect(breaker).toMatchObject({ state: "closed", consecutiveFailures: 0, probeAt: undefined });
  });
});

describe("rate limiter", () => {
  it("allows a second's burst, then one token per 1/rate", () => {
    const limiter = createRateLimiter(2);
    expect([limiter.take(0), limiter.take(0), limiter.take(0)]).toEqual([true, true, false]);
    expect(limiter.nextAt(0)).toBe(500);
    expect(limiter.take(499)).toBe(false);
    expect(limiter.take(500)).toBe(true);
  });
});

describe("due queue and subject order", () => {
  it("pops by due time then journal order, and re-queueing supersedes", () => {
    const due = createDueQueue();
    due.push("c", 10, 3);
    due.push("a", 5, 1);
    due.push("b", 5, 2);
    due.push("a", 20, 1);
    expect([due.pop()?.key, due.pop()?.key, due.pop()?.key, due.pop()]).toEqual(["b", "c", "a", undefined]);
  });

  it("only the oldest not-final record of a subject is a head", () => {
    const order = createSubjectOrder(true);
    const a1 = { eventId: "a1", seq: 1, subject: "s" };
    const a2 = { eventId: "a2", seq: 2, subject: "s" };
    const b1 = { eventId: "b1", seq: 3, subject: "t" };
    const none = { eventId: "n", seq: 4 };
    for (const r of [a2, a1, b1, none]) order.add(r);
    expect([order.isHead(a1), order.isHead(a2), order.isHead(b1), order.isHead(none)]).toEqual([
      true,
      false,
      true,
      true,
    ]);
    order.remove(a1);
    expect(order.isHead(a2)).toBe(true);
    expect(createSubjectOrder(false).isHead(a2)).toBe(true);
  });
});
