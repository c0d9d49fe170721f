/**
 * The body budget's arithmetic (src/ingress/body-budget.ts): leases take received bytes while they
 * fit, a refused take changes nothing, release gives back exactly what the lease held (once),
 * and the budget is read at every take (a reload changes it for the next chunk). The readers'
 * use of it is tested through real gateway processes (bodies-in-flight.test.ts) and workerd.
 */
import { describe, expect, it } from "vitest";
import { createBodyBudget } from "../../src/ingress/body-budget.ts";
import { readRawBody } from "../../src/ingress/read-raw-body.ts";

describe("body budget", () => {
  it("takes while the bytes fit, refuses past the budget without taking, gives back on release", () => {
    const changes: number[] = [];
    const refusals: [number, number][] = [];
    const budget = createBodyBudget({
      max: () => 100,
      onChange: (delta) => changes.push(delta),
      onRefused: (inFlight, max) => refusals.push([inFlight, max]),
    });
    const a = budget.lease();
    const b = budget.lease();
    expect(a.take(60)).toBe(true);
    expect(b.take(30)).toBe(true);
    expect(b.take(11)).toBe(false);
    expect(budget.inFlight).toBe(90);
    expect(refusals).toEqual([[90, 100]]);
    expect(b.take(10)).toBe(true);
    a.release();
    a.release();
    expect(budget.inFlight).toBe(40);
    // A released lease takes nothing more.
    expect(a.take(1)).toBe(false);
    b.release();
    expect(budget.inFlight).toBe(0);
    expect(changes).toEqual([60, 30, 10, -60, -40]);
  });

  it("reads the budget at every take", () => {
    let max = 50;
    const budget = createBodyBudget({ max: () => max });
    const lease = budget.lease();
    expect(lease.take(40)).toBe(true);
    expect(lease.take(20)).toBe(false);
    max = 60;
    expect(lease.take(20)).toBe(true);
    lease.release();
    expect(budget.inFlight).toBe(0);
  });

  it("readRawBody takes each chunk as it arrives and stops at the first that does not fit", async () => {
    const budget = createBodyBudget({ max: () => 25 });
    const other = budget.lease();
    other.take(10);
    const chunks = [new Uint8Array(8), new Uint8Array(8), new Uint8Array(8)];
    let pulled = 0;
    let cancelled = false;
    const body = new ReadableStream<Uint8Array<ArrayBuffer>>({
      pull(controller) {
        const chunk = chunks[pulled++];
        if (chunk) controller.enqueue(chunk);
        else controller.close();
      },
      cancel() {
        cancelled = true;
      },
    });
    const lease = budget.lease();
    const result = await readRawBody({ headers: new Headers(), body }, 1024, undefined, lease);
    expect(result).toEqual({ ok: false, reason: "over_budget" });
    expect(cancelled).toBe(true);
    // 10 + 8 fit; the second chunk (26) did not: the lease holds the first until released.
    expect(budget.inFlight).toBe(18);
    lease.release();
    expect(budget.inFlight).toBe(10);
  });
});
