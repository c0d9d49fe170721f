/**
 * The one way tests build a gateway in this process (no HTTP server): the raw config is resolved
 * as a real one is, the store defaults to the memory driver and the hub is the in-process
 * driver (adapters/hub/in-process.ts). Feature fixtures (test/ingress/gateway-fixtures.ts,
 * test/proxy/proxy-fixtures.ts, test/delivery/helpers/in-process-gateway.ts) add their
 * defaults on top of this; a gateway process is test/helpers/gateway-process.ts.
 */
import { inProcessHub } from "../../adapters/hub/in-process.ts";
import { memoryStore } from "../../adapters/store/memory.ts";
import { resolveConfig } from "../../src/config/resolve-config.ts";
import type { GatewayConfig } from "../../src/config/schema.ts";
import { createGateway, type Gateway, type GatewayOptions } from "../../src/create-gateway.ts";
import { builtinServices, createServiceRegistry } from "../../src/services/registry.ts";
import type { UpstreamService } from "../../src/services/service-contract.ts";

export interface InProcessGatewayOptions extends Partial<Omit<GatewayOptions, "config" | "services">> {
  /** A raw config (resolved with `env`) or an already resolved one. */
  config: Record<string, unknown> | GatewayConfig;
  /** `${VAR}` values for a raw config. Default none. */
  env?: Record<string, string | undefined>;
  /** Upstream services; default the built-in ones. Tests add their own without touching src/. */
  services?: readonly UpstreamService[];
  /** Set when `config` is already resolved. */
  resolved?: boolean;
}

/** Builds (does not start) a gateway around the memory store and the in-process hub. */
export function buildInProcessGateway(options: InProcessGatewayOptions): Gateway {
  const { config, env, services, resolved, ...rest } = options;
  const registry = services && createServiceRegistry(services);
  const gatewayConfig = resolved ? (config as GatewayConfig) : resolveConfig(config, env ?? {}, registry);
  return createGateway({
    // The store indexes the search fields of the gateway's services, as the runtimes wire it.
    store: memoryStore({ services: registry ?? builtinServices }),
    hub: inProcessHub(undefined),
    ...rest,
    config: gatewayConfig,
    ...(registry ? { services: registry } : {}),
  });
}
