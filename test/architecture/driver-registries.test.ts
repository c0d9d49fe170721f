/**
 * Every registered driver runs its contract's conformance suite: for each registry
 * (adapters/<contract>/registry.ts) and each name in it there must be a run file
 * test/drivers/<contract>/<name>.test.ts that calls the contract's `test<Contract>Driver`.
 * Adding a driver without its conformance run fails here. An alias (an earlier name kept for old
 * configurations, adapters/driver-registry.ts) is no driver: it must name a registered one, whose
 * run covers it, and has no run file of its own.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { resolveDriverName } from "../../adapters/driver-registry.ts";
import { hubDrivers } from "../../adapters/hub/registry.ts";
import { outboxDriverAliases, outboxDrivers } from "../../adapters/outbox/registry.ts";
import { sinkTransports } from "../../adapters/sink/registry.ts";
import { storeDriverAliases, storeDrivers } from "../../adapters/store/registry.ts";
import { StoreConfigSchema } from "../../src/config/schema.ts";
import { ROOT } from "./import-graph.ts";

const REGISTRIES = [
  { contract: "store", suite: "testStoreDriver", names: Object.keys(storeDrivers), aliases: storeDriverAliases },
  { contract: "outbox", suite: "testOutboxDriver", names: Object.keys(outboxDrivers), aliases: outboxDriverAliases },
  { contract: "hub", suite: "testHubDriver", names: Object.keys(hubDrivers), aliases: {} },
  { contract: "sink", suite: "testSinkDriver", names: Object.keys(sinkTransports), aliases: {} },
];

describe("driver registries", () => {
  it.each(REGISTRIES)("every $contract driver has a conformance run", ({ contract, suite, names }) => {
    expect(names.length).toBeGreaterThan(0);
    const missing: string[] = [];
    for (const name of names) {
      const file = join(ROOT, "test/drivers", contract, `${name}.test.ts`);
      if (!existsSync(file) || !readFileSync(file, "utf8").includes(`${suite}(`)) missing.push(`${name} (${file})`);
    }
    expect(missing).toEqual([]);
    // Each suite lives at test/conformance/<contract>-conformance.ts and exports its function.
    const suiteFile = readFileSync(join(ROOT, "test/conformance", `${contract}-conformance.ts`), "utf8");
    expect(suiteFile).toContain(`export function ${suite}(`);
  });

  it.each(REGISTRIES)("every $contract run file belongs to a registered driver", ({ contract, names }) => {
    const runs = readdirSync(join(ROOT, "test/drivers", contract)).map((file) => file.replace(/\.test\.ts$/, ""));
    expect(runs.filter((run) => !names.includes(run))).toEqual([]);
  });

  it.each(REGISTRIES)(
    "every $contract alias names a registered driver and has no run of its own",
    ({ contract, names, aliases }) => {
      for (const [alias, target] of Object.entries(aliases)) {
        expect(names).toContain(target);
        expect(names).not.toContain(alias);
        expect(existsSync(join(ROOT, "test/drivers", contract, `${alias}.test.ts`))).toBe(false);
      }
    },
  );

  it("opens a store and an outbox for every store.driver the configuration accepts", () => {
    const accepted = StoreConfigSchema.options.map((option) => option.entries.driver.literal);
    expect(accepted).toContain("disk");
    const unopened = accepted.filter(
      (driver) =>
        !Object.hasOwn(storeDrivers, resolveDriverName(storeDriverAliases, driver)) ||
        !Object.hasOwn(outboxDrivers, resolveDriverName(outboxDriverAliases, driver)),
    );
    expect(unopened).toEqual([]);
  });

  it.each(REGISTRIES)("every $contract registry entry loads a factory", async ({ contract }) => {
    const registry = { store: storeDrivers, outbox: outboxDrivers, hub: hubDrivers, sink: sinkTransports }[contract];
    for (const load of Object.values(registry ?? {})) expect(typeof (await load())).toBe("function");
  });
});
