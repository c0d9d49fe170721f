/**
 * The engine's work tracker: `idle` waits for everything tracked, including work started while
 * it waited; a rejection is reported to `onError` once and never thrown; nothing is lost when
 * many promises settle in one turn.
 */
import { describe, expect, it } from "vitest";
import { createWorkTracker } from "../../src/delivery/work-tracker.ts";

function deferred() {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe("work tracker", () => {
  it("waits for tracked work and for work started meanwhile; reports rejections", async () => {
    const errors: unknown[] = [];
    const tracker = createWorkTracker((error) => errors.push(error));
    await tracker.idle(); // nothing tracked: resolves
    const first = deferred();
    const second = deferred();
    tracker.track(first.promise);
    let idle = false;
    const waiting = tracker.idle().then(() => {
      idle = true;
    });
    first.promise.then(() => tracker.track(second.promise));
    first.resolve();
    await first.promise;
    await Promise.resolve();
    expect(idle).toBe(false);
    const failure = new Error("write failed");
    second.reject(failure);
    await waiting;
    expect(idle).toBe(true);
    expect(errors).toEqual([failure]);
  });

  it("counts a thousand promises settled in one turn", async () => {
    const errors: unknown[] = [];
    const tracker = createWorkTracker((error) => errors.push(error));
    const all = Array.from({ length: 1000 }, () => deferred());
    for (const d of all) tracker.track(d.promise);
    for (const [i, d] of all.entries()) {
      if (i % 10 === 0) d.reject(new Error(String(i)));
      else d.resolve();
    }
    await tracker.idle();
    expect(errors).toHaveLength(100);
  });
});
