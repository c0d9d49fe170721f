/**
 * The gateway's own events (operational events, erasure audit records) come from this source id
 * and service (src/lifecycle/gateway-events.ts). Routes match them only when they name the
 * source (`sources: ["gateway"]`), and an event about a destination is never delivered to that
 * destination itself (src/routes/match-routes.ts), so an alert cannot feed on itself.
 */

/** The source id of the gateway's own events (their CloudEvents `source` is `/gateway`). */
export const GATEWAY_SOURCE_ID = "gateway";

/** The service of the gateway's own events. */
export const GATEWAY_SERVICE = "gateway";

/** The destination an event of the gateway is about, if any (`data.destination`). */
export function destinationConcerned(sourceId: string, data: unknown): string | undefined {
  if (sourceId !== GATEWAY_SOURCE_ID || !data || typeof data !== "object") return undefined;
  const destination = (data as { destination?: unknown }).destination;
  return typeof destination === "string" ? destination : undefined;
}
