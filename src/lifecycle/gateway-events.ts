/**
 * The gateway's own events (operational events, erasure audit records): CloudEvents with source
 * `/gateway` and service `gateway`, recorded in the event log like a webhook (claim, durable
 * append, hub publish), so routes, the live stream, mail, transforms and the console treat them
 * like any other event (docs/data-lifecycle.md).
 */

import type { CryptoPort } from "../crypto/crypto-port.ts";
import type { GatewayEvent } from "../events/envelope.ts";
import { deriveEventId } from "../events/event-id.ts";
import type { Clock } from "../ops/clock.ts";
import { type EventRecord, type StoreDriver, toDedupeKey } from "../store/contract.ts";
import type { LiveHub } from "../stream/hub-contract.ts";

/** The source id (for routes: `sources: ["gateway"]`) and service of the gateway's own events. */
export const GATEWAY_SOURCE_ID = "gateway";
export const GATEWAY_SERVICE = "gateway";

/** How long the identity of a gateway event is remembered (a retried recording stays one event). */
const DEDUPE_MS = 72 * 3600_000;

export interface GatewayEventDeps {
  store: StoreDriver;
  crypto: CryptoPort;
  clock: Clock;
  /** Notified after each durable append. */
  hub: LiveHub;
}

/**
 * Records a gateway event of `type` with `data`. `identity` makes recording idempotent (the same
 * identity is one event); default a random one. Resolves with the event id once durable; rejects
 * when the store cannot record (callers log and retry later).
 */
export async function recordGatewayEvent(
  deps: GatewayEventDeps,
  type: string,
  data: Record<string, unknown>,
  identity: string = crypto.randomUUID(),
): Promise<{ id: string; inserted: boolean }> {
  const receivedAt = deps.clock.now();
  const id = await deriveEventId(GATEWAY_SOURCE_ID, identity, deps.crypto);
  const time = new Date(receivedAt).toISOString();
  const event: GatewayEvent = {
    specversion: "1.0",
    id,
    source: `/${GATEWAY_SOURCE_ID}`,
    type,
    time,
    datacontenttype: "application/json",
    data,
    service: GATEWAY_SERVICE,
    upstreamid: identity,
    upstreamidkind: "gateway",
    receivedtime: time,
  };
  if (typeof data.destination === "string") event.subject = `destinations/${data.destination}`;
  else if (typeof data.source === "string") event.subject = `sources/${data.source}`;
  const record: EventRecord = {
    id,
    seq: 0,
    sourceId: GATEWAY_SOURCE_ID,
    identity,
    receivedAt,
    event,
    rawBody: JSON.stringify(data),
    rawBodyEncoding: "utf8",
    headers: {},
    marks: [],
  };
  const key = toDedupeKey(GATEWAY_SOURCE_ID, identity);
  const claim = await deps.store.claim(key, 30_000);
  if (claim.status === "duplicate") return { id: claim.id, inserted: false };
  if (claim.status === "in_progress") return { id, inserted: false };
  try {
    const { inserted, seq } = await deps.store.append(record, key, DEDUPE_MS);
    if (inserted) deps.hub.publish({ ...record, seq });
    return { id, inserted };
  } catch (error) {
    await deps.store.release(key).catch(() => {});
    throw error;
  }
}
