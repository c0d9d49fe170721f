/**
 * The live hub drivers, by the name `hub.driver` takes in the configuration (README,
 * "Architecture"). Each entry loads one driver that exports one typed `HubFactory`
 * (src/stream/hub-contract.ts); every driver runs test/conformance/hub-conformance.ts from
 * test/drivers/hub/<name>.test.ts. Adding a driver is one line here plus its file (and its
 * options in `HubConfigSchema`, src/config/schema.ts).
 */
import type { HubConfig } from "../../src/config/schema.ts";
import type { HubFactory, LiveHub } from "../../src/stream/hub-contract.ts";
import { type DriverRegistry, loadDriver } from "../driver-registry.ts";

// biome-ignore lint/suspicious/noExplicitAny: each driver has its own options type
export const hubDrivers: DriverRegistry<HubFactory<any>> = {
  "in-process": () => import("./in-process.ts").then((m) => m.inProcessHub),
};

/** Opens the hub the configuration names. */
export async function openConfiguredHub(config: HubConfig): Promise<LiveHub> {
  const { driver, ...options } = config;
  const factory = await loadDriver(hubDrivers, "hub", driver);
  return factory(options);
}
