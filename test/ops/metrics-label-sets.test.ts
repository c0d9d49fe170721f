/**
 * The metrics registry keys a frozen label set by identity (a delivery lane builds its label sets
 * once and freezes them): the series it updates and the text it renders are exactly those of
 * the same labels passed as a fresh object each time, in any key order, escaped alike.
 */
import { describe, expect, it } from "vitest";
import { createMetrics } from "../../src/ops/metrics.ts";

const HELP = {
  demo_total: { type: "counter", help: "Demo counter." },
  demo_seconds: { type: "histogram", help: "Demo histogram." },
} as const;

describe("metrics label sets", () => {
  it("counts a frozen label set and an equal fresh one into one series, rendered identically", () => {
    const frozen = Object.freeze({ destination: 'a"b\\c', outcome: "success" });
    const viaFrozen = createMetrics(HELP);
    const viaFresh = createMetrics(HELP);
    for (let i = 0; i < 3; i++) {
      viaFrozen.inc("demo_total", frozen);
      viaFrozen.observe("demo_seconds", i * 3, frozen);
      viaFresh.inc("demo_total", { outcome: "success", destination: 'a"b\\c' });
      viaFresh.observe("demo_seconds", i * 3, { destination: 'a"b\\c', outcome: "success" });
    }
    // Mixed: the frozen set and a fresh equal one land in the same series.
    viaFrozen.inc("demo_total", { destination: 'a"b\\c', outcome: "success" }, 2);
    viaFresh.inc("demo_total", frozen, 2);
    const text = viaFrozen.render();
    expect(text).toBe(viaFresh.render());
    expect(text).toContain('demo_total{destination="a\\"b\\\\c",outcome="success"} 5');
    expect(text).toContain('demo_seconds_count{destination="a\\"b\\\\c",outcome="success"} 3');
  });

  it("keeps apart frozen label sets that differ, and unfrozen objects changed between updates", () => {
    const metrics = createMetrics(HELP);
    metrics.inc("demo_total", Object.freeze({ outcome: "success" }));
    metrics.inc("demo_total", Object.freeze({ outcome: "failure" }));
    const changing: Record<string, string> = { outcome: "success" };
    metrics.inc("demo_total", changing);
    changing.outcome = "dead";
    metrics.inc("demo_total", changing);
    const text = metrics.render();
    expect(text).toContain('demo_total{outcome="success"} 2');
    expect(text).toContain('demo_total{outcome="failure"} 1');
    expect(text).toContain('demo_total{outcome="dead"} 1');
  });
});
