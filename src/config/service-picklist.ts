/**
 * The `service` field of sources, routes and upstreams: one of the registered service names
 * (src/services/registry.ts), with an error message that lists them (`esign` or `staffing`).
 */
import * as v from "valibot";
import type { ServiceRegistry } from "../services/service-contract.ts";

/** Names as a reader expects them: "`a`", "`a` or `b`", "`a`, `b` or `c`". */
export function listNames(names: readonly string[]): string {
  const quoted = names.map((name) => `\`${name}\``);
  return quoted.length <= 1 ? (quoted[0] ?? "") : `${quoted.slice(0, -1).join(", ")} or ${quoted.at(-1)}`;
}

/** A picklist of the registry's service names. */
export function servicePicklist(services: ServiceRegistry) {
  const names = [...services.keys()];
  return v.picklist(names, listNames(names));
}
