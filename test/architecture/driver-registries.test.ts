/**
 * Every registered driver runs its contract's conformance suite: for each registry
 * (adapters/<contract>/registry.ts) and each name in it there must be a run file
 * test/drivers/<contract>/<name>.test.ts that calls the contract's `test<Contract>Driver`.
 * Adding a driver without its conformance run fails here.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { hubDrivers } from "../../adapters/hub/registry.ts";
import { outboxDrivers } from "../../adapters/outbox/registry.ts";
import { sinkTransports } from "../../adapters/sink/registry.ts";
import { storeDrivers } from "../../adapters/store/registry.ts";
import { ROOT } from "./import-graph.ts";

const REGISTRIES = [
  { contract: "store", suite: "testStoreDriver", names: Object.keys(storeDrivers) },
  { contract: "outbox", suite: "testOutboxDriver", names: Object.keys(outboxDrivers) },
  { contract: "hub", suite: "testHubDriver", names: Object.keys(hubDrivers) },
  { contract: "sink", suite: "testSinkDriver", names: Object.keys(sinkTransports) },
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

  it.each(REGISTRIES)("every $contract registry entry loads a factory", async ({ contract }) => {
    const registry = { store: storeDrivers, outbox: outboxDrivers, hub: hubDrivers, sink: sinkTransports }[contract];
    for (const load of Object.values(registry ?? {})) expect(typeof (await load())).toBe("function");
  });
});
