/**
 * One subscriber of the live stream, independent of the transport. It attaches to the live
 * fan-out before it reads the event log, so nothing recorded in between can slip through:
 *   1. attach (live events from now on are held in a backlog);
 *   2. decide the start position: the resume cursor (checked against retention) or the newest
 *      event log position;
 *   3. replay matching events after the cursor from the event log, in pages, pausing while the
 *      consumer's buffer is high;
 *   4. send the backlog, then live events, skipping every position already passed (the backlog
 *      and the event log overlap; positions make the overlap harmless).
 * A consumer whose buffer passes the bound, whose token expires, or that stalls is ended with
 * an error frame and a documented close code; it can resume from its last cursor.
 */

import type { Clock } from "../ops/clock.ts";
import type { Logger } from "../ops/logger.ts";
import type { EventRecord, StoreDriver } from "../store/contract.ts";
import type { StreamGrant } from "./authorize-subscriber.ts";
import { checkResumable, formatCursor } from "./stream-cursor.ts";
import { compileStreamFilter, journalHintOf, type StreamFilter } from "./stream-filter.ts";
import {
  type ClientMessage,
  controlFrame,
  errorFrame,
  eventFrame,
  readyFrame,
  type StreamErrorCode,
} from "./stream-frames.ts";
import type { StreamOptions } from "./stream-options.ts";
import { findScopeViolations } from "./stream-scope.ts";

/** What sessions need from the fan-out. */
export interface LiveStreamHost {
  store: StoreDriver;
  clock: Clock;
  logger: Logger;
  options: StreamOptions;
  /** Ids of the stream destinations the routes send `record` to. */
  streamDestinationsOf(record: EventRecord): readonly string[];
  attach(session: StreamSession): void;
  /** The session's audience changed (subscribe/unsubscribe): file it under its new key. */
  regroup?(session: StreamSession): void;
  /** The event as subscribers get it (enriched when a route asks for it), when enrichment is configured. */
  prepare?(record: EventRecord, destinations: readonly string[]): Promise<EventRecord>;
  /**
   * The event frame for subscribers of `destination`, when a stream destination has a transform
   * (undefined: the transform skipped the event). Without it, frames are `eventFrame(record)`.
   */
  frameOf?(record: EventRecord, destination: string): Promise<string | undefined>;
  detach(session: StreamSession): void;
}

/** What a transport offers a session. */
export interface StreamSink {
  /** Sends a frame; event frames come with their cursor (SSE puts it in `id:`). */
  send(frame: string, cursor?: number): void;
  /** Sends a heartbeat carrying the current resume cursor. */
  heartbeat(cursor: number, now: number): void;
  /** Bytes queued for the consumer and not yet handed to the network. */
  bufferedAmount(): number;
  /** Resolves true once the queue is at most `threshold` bytes, false after `timeoutMs`. */
  waitForDrain(threshold: number, timeoutMs: number): Promise<boolean>;
  /** Ends the connection after a fatal error frame. */
  end(code: StreamErrorCode): void;
  /** Epoch ms since which the consumer has not read anything, when the transport tracks it. */
  stalledSince?(): number | undefined;
  /**
   * Holds frames back until the returned function is called, then hands them to the network
   * together (one write instead of one per frame), when the transport can (undefined: it cannot).
   */
  cork?(): (() => void) | undefined;
}

interface Subscription {
  id: string;
  filter: StreamFilter;
  matches: (record: EventRecord) => boolean;
}

const MAX_TIMER_MS = 2_147_483_647;

/** The key under which sessions that decide every event alike are grouped (see `audienceKey`). */
function audienceKeyOf(grant: StreamGrant, subscriptions: readonly Subscription[]): string {
  return JSON.stringify([[...grant.destinations].sort(), grant.scopeLayers.layers, subscriptions.map((s) => s.filter)]);
}

/** Re-arms (or fires) a session's token expiry; a plain function so no closure is kept per session. */
function armExpiryOf(session: StreamSession): void {
  session.armExpiry();
}

/**
 * One subscriber's session (see the module comment); create it with `createStreamSession`. A class,
 * not a closure per helper: thousands of idle subscribers each hold one, and every per-session
 * closure costs its own function object (and, under tsx, a kept name) for the connection's life.
 */
export class StreamSession {
  readonly clientId: string;
  private readonly host: LiveStreamHost;
  private readonly grant: StreamGrant;
  private readonly sink: StreamSink;
  /** In subscription order; an array, not a Map: most subscribers hold just `default` for hours. */
  private subscriptions: Subscription[];
  private state: "starting" | "replaying" | "live" | "closed" = "starting";
  private pos = 0;
  private backlog: EventRecord[] = [];
  private expiryTimer: ReturnType<typeof setTimeout> | undefined = undefined;
  /** While corked, queued bytes include a batch not yet offered to the network: judge after. */
  private corked = false;
  private audience: string;

  constructor(host: LiveStreamHost, grant: StreamGrant, sink: StreamSink) {
    this.host = host;
    this.grant = grant;
    this.sink = sink;
    this.clientId = grant.clientId;
    this.subscriptions = [{ id: "default", filter: grant.filter, matches: compileStreamFilter(grant.filter) }];
    this.audience = audienceKeyOf(grant, this.subscriptions);
  }

  /** The subscriptions changed: file the session under its new audience. */
  private syncMatchers(): void {
    this.audience = audienceKeyOf(this.grant, this.subscriptions);
    this.host.regroup?.(this);
  }

  /** The destination this subscriber reads `record` under (routing, scope, filters), or undefined. */
  routedTo(record: EventRecord, destinations: readonly string[]): string | undefined {
    // Plain arrays and loops: this runs once per event per audience (sessions that would decide
    // alike share one evaluation, see `audienceKey`).
    const { grant, subscriptions } = this;
    let routed: string | undefined;
    for (let i = 0; i < destinations.length && routed === undefined; i++) {
      if (grant.destinations.has(destinations[i] as string)) routed = destinations[i];
    }
    if (routed === undefined || !grant.inScope(record)) return undefined;
    for (let i = 0; i < subscriptions.length; i++)
      if ((subscriptions[i] as Subscription).matches(record)) return routed;
    return undefined;
  }

  /** The transport closed: forget the subscriber. */
  dispose(): void {
    this.state = "closed";
    this.backlog = [];
    this.host.detach(this);
    clearTimeout(this.expiryTimer);
  }

  /** Ends the session with a fatal error frame (shutdown, protocol errors). */
  fail(code: StreamErrorCode, message: string, details?: unknown): void {
    if (this.state === "closed") return;
    this.dispose();
    this.host.logger.info("stream subscriber disconnected", {
      client: this.grant.clientId,
      reason: code,
      cursor: formatCursor(this.pos),
    });
    this.sink.send(errorFrame(code, message, true, details));
    this.sink.end(code);
  }

  private checkBuffer(): void {
    const { maxBufferedBytes } = this.host.options;
    if (this.sink.bufferedAmount() > maxBufferedBytes) {
      this.fail("slow_consumer", `more than ${maxBufferedBytes} bytes were waiting for this subscriber`, {
        cursor: formatCursor(this.pos),
      });
    }
  }

  /** Arms the token's expiry (internal; runs again from its own timer). */
  armExpiry() {
    const { grant } = this;
    if (grant.expiresAt === undefined) return;
    const left = grant.expiresAt - this.host.clock.now();
    if (left <= 0) return this.fail("token_expired", "the token has expired");
    this.expiryTimer = setTimeout(armExpiryOf, Math.min(left, MAX_TIMER_MS), this);
  }

  private async replay(): Promise<void> {
    const { host, sink, subscriptions } = this;
    const { store, options } = host;
    for (;;) {
      const only = subscriptions.length === 1 ? subscriptions[0] : undefined;
      const page = await store.readAfter(this.pos, options.replayPageSize, only ? journalHintOf(only.filter) : {});
      for (const record of page) {
        if ((this.state as string) === "closed") return;
        if (record.seq <= this.pos) continue;
        this.pos = record.seq;
        const destinations = host.streamDestinationsOf(record);
        const routed = this.routedTo(record, destinations);
        if (routed === undefined) continue;
        const ready = host.prepare ? await host.prepare(record, destinations) : record;
        const frame = host.frameOf ? await host.frameOf(ready, routed) : eventFrame(ready);
        if ((this.state as string) === "closed") return;
        if (frame !== undefined) sink.send(frame, record.seq);
      }
      if (page.length < options.replayPageSize) return;
      if (sink.bufferedAmount() > options.maxBufferedBytes / 2) {
        const drained = await sink.waitForDrain(options.maxBufferedBytes / 4, options.idleTimeoutMs);
        if (!drained)
          return this.fail("slow_consumer", "the subscriber did not read its replay", {
            cursor: formatCursor(this.pos),
          });
      }
    }
  }

  /**
   * `verdict`: what `routedTo` gave when the fan-out already evaluated it for this session's
   * audience (null: not wanted); undefined: evaluate here.
   */
  private deliverLive(
    record: EventRecord,
    destinations: readonly string[],
    frame: (destination: string) => string | undefined,
    verdict?: string | null,
  ): void {
    if (record.seq <= this.pos) return;
    this.pos = record.seq;
    const routed = verdict === undefined ? this.routedTo(record, destinations) : (verdict ?? undefined);
    if (routed === undefined) return;
    const text = frame(routed);
    if (text === undefined) return;
    this.sink.send(text, record.seq);
    if (!this.corked) this.checkBuffer();
  }

  /** Runs the start sequence (see the module comment). */
  async start(): Promise<void> {
    const { host, grant, sink } = this;
    const { store, options, logger } = host;
    host.attach(this);
    if ((this.state as string) === "closed") return;
    this.armExpiry();
    try {
      if (grant.since === undefined) {
        this.pos = await store.lastSeq();
      } else {
        const check = await checkResumable(store, grant.since);
        if (!check.ok) return this.fail(check.code, check.message, check.details);
        this.pos = grant.since;
      }
      if ((this.state as string) === "closed") return;
      sink.send(
        readyFrame({
          cursor: this.pos,
          subscriptions: Object.fromEntries(this.subscriptions.map((s) => [s.id, s.filter])),
          heartbeatMs: options.heartbeatMs,
          expiresAt: grant.expiresAt,
        }),
      );
      this.state = "replaying";
      if (grant.since !== undefined) await this.replay();
    } catch (error) {
      logger.error("stream replay failed", { client: grant.clientId, error: String(error) });
      return this.fail("store_unavailable", "the journal could not be read; retry with the same cursor");
    }
    if ((this.state as string) === "closed") return;
    // Transformed frames are made asynchronously: send what arrived during the replay, and what
    // arrives meanwhile, before going live, so the order holds.
    while (host.frameOf && this.backlog.length > 0) {
      const frameOf = host.frameOf;
      const batch = this.backlog.sort((a, b) => a.seq - b.seq);
      this.backlog = [];
      const frames = await Promise.all(
        batch.map((record) => {
          const routed = this.routedTo(record, host.streamDestinationsOf(record));
          return routed === undefined ? undefined : frameOf(record, routed);
        }),
      );
      if ((this.state as string) === "closed") return;
      for (let i = 0; i < batch.length; i++) {
        const record = batch[i] as EventRecord;
        this.deliverLive(record, host.streamDestinationsOf(record), () => frames[i]);
      }
    }
    const held = this.backlog.sort((a, b) => a.seq - b.seq);
    this.backlog = [];
    this.state = "live";
    for (const record of held) {
      this.deliverLive(record, host.streamDestinationsOf(record), () => eventFrame(record));
      if ((this.state as string) === "closed") return;
    }
  }

  /**
   * Sessions with the same key decide every event alike (same routed destinations, scope and
   * filters), so the fan-out evaluates `routedTo` once per key and event.
   */
  get audienceKey(): string {
    return this.audience;
  }

  /** Whether live events go out at once (not held in the start-up backlog, not closed). */
  get live(): boolean {
    return this.state === "live";
  }

  /**
   * A live event from the fan-out; `frame` gives the frame per destination, serialized once for
   * all subscribers; `verdict` is `routedTo`'s answer when the fan-out already evaluated it for
   * this session's audience (null: not wanted).
   */
  offer(
    record: EventRecord,
    destinations: readonly string[],
    frame: (destination: string) => string | undefined,
    verdict?: string | null,
  ) {
    if (this.state === "live") return this.deliverLive(record, destinations, frame, verdict);
    if (this.state === "closed") return;
    this.backlog.push(record);
    if (this.backlog.length > this.host.options.maxReplayBacklog) {
      this.fail("slow_consumer", "too many live events arrived while the replay was running", {
        cursor: formatCursor(this.pos),
      });
    }
  }

  /** Heartbeat tick: a frame with the current cursor, and the stall check. */
  tick(now: number) {
    if (this.state === "closed" || this.state === "starting") return;
    const { idleTimeoutMs } = this.host.options;
    const stalled = this.sink.stalledSince?.();
    if (stalled !== undefined && now - stalled > idleTimeoutMs) {
      return this.fail("idle_timeout", `the subscriber read nothing for ${idleTimeoutMs} ms`);
    }
    this.sink.heartbeat(this.pos, now);
    this.checkBuffer();
  }

  /** A validated client message (WebSocket). */
  handle(message: ClientMessage) {
    if (this.state === "closed") return;
    const { sink, subscriptions } = this;
    const { options } = this.host;
    if (message.type === "ping") return sink.send(controlFrame("pong", { cursor: formatCursor(this.pos) }));
    if (message.type === "unsubscribe") {
      this.subscriptions = subscriptions.filter((s) => s.id !== message.id);
      this.syncMatchers();
      return sink.send(controlFrame("unsubscribed", { id: message.id, cursor: formatCursor(this.pos) }));
    }
    const violations = findScopeViolations(this.grant.scopeLayers.layers, message.filter);
    if (violations.length > 0) {
      return sink.send(
        errorFrame("forbidden", "the requested filters are outside this subscriber's scope", false, {
          id: message.id,
          outsideScope: violations,
        }),
      );
    }
    const existing = subscriptions.findIndex((s) => s.id === message.id);
    if (existing < 0 && subscriptions.length >= options.maxSubscriptions) {
      return sink.send(
        errorFrame("invalid_request", `at most ${options.maxSubscriptions} subscriptions per connection`, false, {
          id: message.id,
        }),
      );
    }
    // Like `Map.set`: a subscription replaced keeps its place.
    const subscription = { id: message.id, filter: message.filter, matches: compileStreamFilter(message.filter) };
    if (existing < 0) subscriptions.push(subscription);
    else subscriptions[existing] = subscription;
    this.syncMatchers();
    sink.send(controlFrame("subscribed", { id: message.id, filter: message.filter, cursor: formatCursor(this.pos) }));
  }

  /** Batches the frames sent until the returned function runs (see `StreamSink.cork`). */
  cork(): (() => void) | undefined {
    const release = this.state === "live" && !this.corked ? this.sink.cork?.() : undefined;
    if (!release) return undefined;
    this.corked = true;
    return () => {
      this.corked = false;
      release();
      if (this.state === "live") this.checkBuffer();
    };
  }
}

/** Creates the session of an authorized subscriber; call `start()` once the transport is open. */
export function createStreamSession(host: LiveStreamHost, grant: StreamGrant, sink: StreamSink): StreamSession {
  return new StreamSession(host, grant, sink);
}
