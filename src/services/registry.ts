/**
 * The upstream services the gateway knows, by the name configuration uses
 * (docs/architecture.md#add-an-upstream-service). Adding a service is one folder under
 * src/services/ plus one line here; a test may pass its own list (createGateway's `services`,
 * resolveConfig's third argument) without touching this file.
 */
import { esignService } from "./esign/esign-service.ts";
import type { ServiceRegistry, UpstreamService } from "./service-contract.ts";
import { staffingService } from "./staffing/staffing-service.ts";

/** Builds a registry from service modules; a repeated name is a bug. */
export function createServiceRegistry(services: readonly UpstreamService[]): ServiceRegistry {
  const registry = new Map<string, UpstreamService>();
  for (const service of services) {
    if (registry.has(service.name)) throw new Error(`service "${service.name}" is registered twice`);
    registry.set(service.name, service);
  }
  return registry;
}

/** The services built into the gateway. */
export const builtinServices: ServiceRegistry = createServiceRegistry([esignService, staffingService]);
