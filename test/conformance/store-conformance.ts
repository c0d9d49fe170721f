/**
 * The store contract's conformance suite, run against every driver (as unstorage's `testDriver`
 * runs against every storage driver). A driver test file calls
 * `testStoreDriver("memory", ({ now, services }) => memoryStore({ now, services }))`.
 *
 * Time is a clock the suite owns and advances; every driver takes it as `now`, so TTLs and
 * windows are tested at their exact boundaries without sleeping. The services are injected as
 * the composition roots inject them (`StoreWiring`): the external-id queries need them.
 */
import { afterEach, beforeEach, describe } from "vitest";
import { builtinServices } from "../../src/services/registry.ts";
import type { ServiceRegistry } from "../../src/services/service-contract.ts";
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
  /** The upstream services whose search fields the driver indexes (the built-in ones). */
  services: ServiceRegistry;
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
      store = await makeDriver({ now: () => t, services: builtinServices });
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
