/**
 * Builds the gateway: an h3 app with every route of the public surface, wired to a store driver
 * and the runtime's crypto, clock and logger. Runtime adapters (`adapters/node`,
 * `adapters/cloudflare`) call this and serve `gateway.app`.
 *
 * Three files do the work, by what they do: src/build-gateway-context.ts wires the parts and
 * the context, src/gateway-routes.ts is the route table, src/gateway-lifecycle.ts starts,
 * reloads and stops.
 */
import { buildGatewayContext } from "./build-gateway-context.ts";
import { createGatewayLifecycle } from "./gateway-lifecycle.ts";
import type { Gateway, GatewayOptions } from "./gateway-options.ts";
import { createGatewayApp } from "./gateway-routes.ts";
import { createWebhookEntry } from "./gateway-webhook-entry.ts";

export type { Gateway, GatewayOptions, ReloadOutcome } from "./gateway-options.ts";

/** Creates the gateway app around a store driver. */
export function createGateway(options: GatewayOptions): Gateway {
  const parts = buildGatewayContext(options);
  const app = createGatewayApp(parts, options);
  return {
    app,
    ctx: parts.ctx,
    live: parts.live,
    fetch: async (request) => app.fetch(request),
    // The traced route keeps the Fetch Request (its span reads it): no fast path while tracing.
    receiveWebhook: parts.ctx.tracing ? undefined : createWebhookEntry(parts.ctx),
    ...createGatewayLifecycle(parts, options),
  };
}
