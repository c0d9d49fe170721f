/**
 * Finds the service module a configured source or upstream names. Configuration is validated
 * against the same registry (src/config/schema.ts), so a miss here is a wiring bug, not bad input.
 */
import type { ServiceRegistry, UpstreamService } from "./service-contract.ts";

/** The service `owner.service` names; throws when the registry lacks it (misconfiguration). */
export function serviceOfSource(services: ServiceRegistry, owner: { id: string; service: string }): UpstreamService {
  const service = services.get(owner.service);
  if (!service) throw new Error(`"${owner.id}" names service "${owner.service}", which is not registered`);
  return service;
}
