/**
 * What the live stream uses of the gateway (narrow, so the stream does not depend on the whole
 * gateway context): the event log to replay from, the hub to hear appends on, the routes that
 * decide which stream destinations an event goes to, and client authentication.
 */
import type { ClientAuthenticator } from "../auth/authenticate-client.ts";
import type { GatewayConfig } from "../config/schema.ts";
import type { Enricher } from "../enrich/create-enricher.ts";
import type { BodyReader } from "../http/read-json-body.ts";
import type { Clock } from "../ops/clock.ts";
import type { Logger } from "../ops/logger.ts";
import type { CompiledRoute } from "../routes/match-routes.ts";
import type { EventRecord, StoreDriver } from "../store/contract.ts";
import type { Tracing } from "../tracing/tracing-port.ts";
import type { CreateEventStreamChannel } from "./event-stream-channel.ts";
import type { LiveHub } from "./hub-contract.ts";

export interface StreamDeps {
  config: Pick<GatewayConfig, "destinations" | "auth">;
  routes: readonly CompiledRoute[];
  hub: Pick<LiveHub, "subscribe">;
  store: StoreDriver;
  clock: Clock;
  logger: Logger;
  clients: ClientAuthenticator;
  /** Enriches events for stream destinations whose routes ask for it (src/enrich), when any. */
  enricher?: Pick<Enricher, "wants" | "enrich">;
  /** A span per event fanned out to subscribers (docs/tracing.md), when tracing is on. */
  tracing?: Tracing;
  /** The SSE body channel; default Web streams (src/stream/event-stream-channel.ts). */
  createEventStreamChannel?: CreateEventStreamChannel;
  /**
   * A stream destination's transform (docs/transformations.md), when any stream destination has
   * one: undefined when `destination` has none, null to send nothing, else the frame's event JSON.
   */
  transformEvent?: StreamEventTransform;
  /** The runtime's request body reader (`GatewayContext.readBody`); default the Web-streams one. */
  readBody?: BodyReader;
}

/** See `StreamDeps.transformEvent`. */
export type StreamEventTransform = (
  record: EventRecord,
  destination: string,
) => Promise<{ json: string } | null | undefined>;
