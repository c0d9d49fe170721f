/**
 * The live hub drivers, by the name `hub.driver` takes in the configuration (README,
 * "Architecture"). Each entry loads one driver file that exports one typed `HubFactory`
 * (src/stream/hub-contract.ts); every driver runs test/conformance/hub-conformance.ts from
 * test/drivers/hub/<name>.test.ts. Adding a driver is one line here plus its file.
 */
import type { HubFactory } from "../../src/stream/hub-contract.ts";

// biome-ignore lint/suspicious/noExplicitAny: each driver has its own options type
export const hubDrivers: Record<string, () => Promise<HubFactory<any>>> = {
  "in-process": () => import("./in-process.ts").then((m) => m.inProcessHub),
};
