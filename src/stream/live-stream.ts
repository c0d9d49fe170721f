/**
 * The live stream's fan-out: one listener on the event hub for the whole gateway. For each
 * recorded event it decides once which stream destinations the routes send it to (live
 * delivery is a destination like the others), serializes the event frame at most once, decides
 * once per audience (sessions with the same destinations, scope and filters) whether it is
 * wanted, and offers it to every attached session, after the webhook's answer went out. Fan-out never
 * awaits a consumer: a slow consumer only grows its own buffer until its session ends it. One
 * timer drives the heartbeats of all sessions.
 */
import { resolveDestinations } from "../routes/match-routes.ts";
import type { EventRecord } from "../store/contract.ts";
import type { StreamDeps } from "./stream-deps.ts";
import { eventFrame } from "./stream-frames.ts";
import { resolveStreamOptions, type StreamOptionsInput } from "./stream-options.ts";
import type { LiveStreamHost, StreamSession } from "./stream-session.ts";
import { traceFanOut } from "./trace-fan-out.ts";

export type { LiveStreamHost } from "./stream-session.ts";

export interface LiveStream extends LiveStreamHost {
  /** Ids of the configured stream destinations. */
  readonly destinationIds: readonly string[];
  /** Sessions currently attached. */
  readonly size: number;
  /** Ends every session with `shutting_down` and stops the heartbeat timer. */
  shutdown(): void;
  /**
   * Takes a reloaded configuration (SIGHUP): the stream destinations, enricher and transforms
   * apply to the next events; attached sessions stay attached. Routes are read from `ctx.routes`.
   */
  reconfigure(next: Pick<StreamDeps, "config" | "enricher" | "transformEvent">): void;
}

/** Creates the fan-out and subscribes it to the gateway's event hub. */
export function createLiveStream(
  ctx: Pick<
    StreamDeps,
    "config" | "routes" | "hub" | "store" | "clock" | "logger" | "enricher" | "transformEvent" | "tracing"
  > & {
    /**
     * Runs the fan-out of the records queued during a turn, after the webhook's answer went out
     * (a runtime that has it: the check phase of the same event-loop turn). Default: a 0 ms timer.
     */
    deferFanOut?: (run: () => void) => void;
  },
  input: StreamOptionsInput = {},
): LiveStream {
  const options = resolveStreamOptions(input);
  const streamIdsOf = (config: StreamDeps["config"]) =>
    config.destinations.filter((d) => d.type === "stream").map((d) => d.id);
  let destinationIds = streamIdsOf(ctx.config);
  let streamIds = new Set(destinationIds);
  const sessions = new Set<StreamSession>();
  // Sessions by audience (routed destinations, scope and filters): one `wants` per group and event.
  const audiences = new Map<string, Set<StreamSession>>();
  const audienceOf = new Map<StreamSession, string>();
  const fileSession = (session: StreamSession) => {
    const key = session.audienceKey;
    const group = audiences.get(key) ?? new Set<StreamSession>();
    audiences.set(key, group);
    group.add(session);
    audienceOf.set(session, key);
  };
  const unfileSession = (session: StreamSession) => {
    const key = audienceOf.get(session);
    if (key === undefined) return;
    audienceOf.delete(session);
    const group = audiences.get(key);
    group?.delete(session);
    if (group?.size === 0) audiences.delete(key);
  };
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  let shuttingDown = false;

  const streamDestinationsOf = (record: EventRecord) =>
    streamIds.size === 0
      ? []
      : resolveDestinations(ctx.routes, record.sourceId, record.event, record.headers).filter((id) =>
          streamIds.has(id),
        );

  const prepareWith = (enricher: StreamDeps["enricher"]) =>
    enricher &&
    ((record: EventRecord, destinations: readonly string[]) =>
      enricher.wants(record, destinations) ? enricher.enrich(record, destinations) : Promise.resolve(record));
  let prepare = prepareWith(ctx.enricher);

  /** A destination's frame of `record`: its transform's payload as the event, or undefined (skipped). */
  const frameWith = (transformEvent: StreamDeps["transformEvent"]) =>
    transformEvent &&
    (async (record: EventRecord, destination: string): Promise<string | undefined> => {
      const transformed = await transformEvent(record, destination);
      if (transformed === undefined) return eventFrame(record);
      return transformed === null ? undefined : eventFrame(record, transformed.json);
    });
  let frameOf = frameWith(ctx.transformEvent);

  const fanOut = (record: EventRecord, framed?: ReadonlyMap<string, string | undefined>) => {
    const destinations = streamDestinationsOf(record);
    let frame: string | undefined;
    const frameOnce = framed
      ? (destination: string) => framed.get(destination)
      : () => {
          frame ??= eventFrame(record);
          return frame;
        };
    for (const group of audiences.values()) {
      let verdict: string | null | undefined;
      for (const session of group) {
        if (!session.live) {
          session.offer(record, destinations, frameOnce);
          continue;
        }
        if (verdict === undefined) verdict = session.routedTo(record, destinations) ?? null;
        session.offer(record, destinations, frameOnce, verdict);
      }
    }
    if (ctx.tracing && record.event.traceparent && sessions.size > 0) {
      traceFanOut(ctx.tracing, record, destinations, sessions.size);
    }
  };

  // The hub calls us inside the webhook's request, before its 202 is written: sending to
  // thousands of sockets there would delay the acknowledgement. Records are queued and fanned
  // out once the answer went out (`deferFanOut`: on Node the check phase of the same turn, else
  // the next timer turn), in event log order.
  let pending: EventRecord[] = [];
  let flushScheduled = false;
  let flushTimer: ReturnType<typeof setTimeout> | undefined;
  const scheduleFlush =
    ctx.deferFanOut ??
    ((run: () => void) => {
      flushTimer = setTimeout(run, 0);
    });
  // With enrichment, a turn's records are enriched together (bounded by the routes' timeouts)
  // and fanned out one turn after another, so event log order holds.
  let enriched = Promise.resolve();
  // With transforms, each record's frames (one per stream destination it goes to) are made
  // before its turn, the same way.
  const framesOf = async (record: EventRecord) => {
    const frames = new Map<string, string | undefined>();
    if (!frameOf) return frames;
    for (const destination of streamDestinationsOf(record)) frames.set(destination, await frameOf(record, destination));
    return frames;
  };
  const flush = () => {
    flushScheduled = false;
    flushTimer = undefined;
    if (shuttingDown) return;
    const records = pending;
    pending = [];
    if (!prepare && !frameOf) return fanOutTurn(records);
    const { prepare: prepareNow, frameOf: frameNow } = { prepare, frameOf };
    enriched = enriched
      .then(async () => {
        const ready = prepareNow
          ? await Promise.all(records.map((record) => prepareNow(record, streamDestinationsOf(record))))
          : records;
        const frames = frameNow ? await Promise.all(ready.map(framesOf)) : undefined;
        if (!shuttingDown) fanOutTurn(ready, frames);
      })
      .catch((error) => ctx.logger.error("live fan-out failed", { error: String(error) }));
  };
  const fanOutTurn = (records: EventRecord[], frames?: ReadonlyMap<string, string | undefined>[]) => {
    if (records.length === 1) return fanOut(records[0] as EventRecord, frames?.[0]);
    // Under load one turn carries several records: each subscriber then gets them in one
    // network write rather than one write per frame (writes dominate the cost of a fan-out).
    const releases: (() => void)[] = [];
    for (const session of sessions) {
      const release = session.cork();
      if (release) releases.push(release);
    }
    for (let i = 0; i < records.length; i++) fanOut(records[i] as EventRecord, frames?.[i]);
    for (const release of releases) release();
  };
  const unsubscribe = ctx.hub.subscribe((record) => {
    if (sessions.size === 0) return;
    pending.push(record);
    if (flushScheduled) return;
    flushScheduled = true;
    scheduleFlush(flush);
  });

  const tick = () => {
    const now = ctx.clock.now();
    for (const session of sessions) session.tick(now);
  };

  return {
    store: ctx.store,
    clock: ctx.clock,
    logger: ctx.logger,
    options,
    get destinationIds() {
      return destinationIds;
    },
    streamDestinationsOf,
    get prepare() {
      return prepare;
    },
    get frameOf() {
      return frameOf;
    },
    reconfigure(next) {
      destinationIds = streamIdsOf(next.config);
      streamIds = new Set(destinationIds);
      prepare = prepareWith(next.enricher);
      frameOf = frameWith(next.transformEvent);
    },
    get size() {
      return sessions.size;
    },
    attach(session) {
      if (shuttingDown) return session.fail("shutting_down", "the gateway is shutting down");
      sessions.add(session);
      fileSession(session);
      if (!heartbeat) {
        heartbeat = setInterval(tick, options.heartbeatMs);
        // The timer must never keep a process alive on its own (tests, shutdown).
        (heartbeat as { unref?: () => void }).unref?.();
      }
    },
    regroup(session) {
      if (!audienceOf.has(session)) return;
      unfileSession(session);
      fileSession(session);
    },
    detach(session) {
      sessions.delete(session);
      unfileSession(session);
      if (sessions.size === 0 && heartbeat) {
        clearInterval(heartbeat);
        heartbeat = undefined;
      }
    },
    shutdown() {
      shuttingDown = true;
      unsubscribe();
      clearTimeout(flushTimer);
      pending = [];
      for (const session of [...sessions]) session.fail("shutting_down", "the gateway is shutting down");
    },
  };
}
