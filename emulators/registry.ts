/**
 * The upstream emulators by service name (docs/sandbox-and-emulators.md). The sandbox and `gateway
 * emulate`
 * (adapters/node/) iterate over this map and never name a service; a name is also the source id
 * and upstream id config/default.ts gives that service. Adding an emulator is one folder under
 * emulators/ plus one line here.
 */
import { esignEmulatorEntry } from "./esign/esign-entry.ts";
import type { EmulatorEntry } from "./shared/emulator-contract.ts";
import { staffingEmulatorEntry } from "./staffing/staffing-entry.ts";

export type { EmulatorEntry, EmulatorSetup, ServiceEmulator } from "./shared/emulator-contract.ts";

/** Emulators by the service name of the upstream they emulate. */
export const emulatorRegistry: ReadonlyMap<string, EmulatorEntry> = new Map([
  ["esign", esignEmulatorEntry],
  ["staffing", staffingEmulatorEntry],
]);
