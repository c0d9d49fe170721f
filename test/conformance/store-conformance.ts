/**
 * The store contract's conformance suite, run against every driver (as unstorage's `testDriver`
 * runs against every storage driver). A driver test file calls
 * `testStoreDriver("memory", ({ now }) => memoryStore({ now }))`.
 *
 * Time is a clock the suite owns and advances; every driver takes it as `now`, so TTLs and
 * windows are tested at their exact boundaries without sleeping.
 */
import { afterEach, beforeEach, describe } from "vitest";
import type { StoreDriver } from "../../src/store/contract.ts";
import { describeAppendConformance } from "../store/conformance-append.ts";
import { describeClaimConformance } from "../store/conformance-claims.ts";
import { describeKvConformance } from "../store/conformance-kv.ts";
import { describeLifecycleConformance } from "../store/conformance-lifecycle.ts";
import { describeQueryConformance } from "../store/conformance-queries.ts";
import { T0 } from "../store/sample-records.ts";

/** What the suite passes to a driver factory. */
export interface DriverEnvironment {
  /** The suite's clock, epoch ms; drivers use it for every TTL and window. */
  now: () => number;
}

export type MakeDriver = (env: DriverEnvironment) => StoreDriver | Promise<StoreDriver>;

/** The driver under test and the suite's clock, fresh for every test. */
export interface StoreHarness {
  readonly store: StoreDriver;
  now(): number;
  /** Moves the clock forward by `ms`. */
  advance(ms: number): void;
}

/** Registers the whole conformance suite for the driver `makeDriver` creates. */
export function testStoreDriver(name: string, makeDriver: MakeDriver): void {
  describe(`store conformance: ${name}`, () => {
    let t = T0;
    let store: StoreDriver | undefined;
    const harness: StoreHarness = {
      get store() {
        if (!store) throw new Error("no driver: used outside a test");
        return store;
      },
      now: () => t,
      advance(ms) {
        t += ms;
      },
    };
    beforeEach(async () => {
      t = T0;
      store = await makeDriver({ now: () => t });
    });
    afterEach(async () => {
      await store?.close();
      store = undefined;
    });

    describeClaimConformance(harness);
    describeAppendConformance(harness);
    describeQueryConformance(harness);
    describeKvConformance(harness);
    describeLifecycleConformance(harness);
  });
}
